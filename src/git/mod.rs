//! Git, in one room: the git CLI driven safely on the user's repository (`cli`), commits made
//! from a private index (`commit`), the git reader that answers the git tools from inside the
//! sandbox (`reader`) with gix (`status`, `diff`), and the diff model with git's patch writer
//! (`patch`).

pub(crate) mod cli;
pub(crate) mod commit;
pub(crate) mod diff;
pub(crate) mod patch;
pub(crate) mod reader;
pub(crate) mod status;

use std::path::PathBuf;

/// A fresh path in the temporary directory for one of this run's private files (an index, a
/// repository for the network steps); whoever makes it there removes it.
pub(crate) fn private_temp_path(kind: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!("autocoder-{kind}-{}-{nanos}", std::process::id()))
}
