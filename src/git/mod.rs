//! Git, in one room: the git CLI driven safely on the user's repository (`cli`), commits made
//! from a private index (`commit`), the git reader that answers the git tools from inside the
//! sandbox (`reader`) with gix (`status`, `diff`), and the diff model with git's patch writer
//! (`patch`).

pub mod cli;
pub mod commit;
pub mod diff;
pub mod patch;
pub mod reader;
pub mod status;
