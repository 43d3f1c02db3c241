//! `write_file`: a file's whole content written atomically (`workspace::write`), its missing
//! parent directories made beneath the root.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Context, ToolError};
use crate::workspace::write::{exclusive, write_atomically};

pub(crate) const DESCRIPTION: &str = "Write a file in the workspace, creating it or replacing its whole content. Prefer \
edit_file for changes to an existing file. Missing parent directories are created (inside the workspace only; set \
create_dirs to false to refuse instead). The write is atomic: readers see the old content or the new, never a mix.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// Path relative to the workspace root (or absolute inside it).
    pub path: String,
    /// The complete new content.
    pub content: String,
    /// Create missing parent directories (default true; false refuses a path whose directory
    /// does not exist).
    #[serde(default = "yes")]
    pub create_dirs: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Output {
    /// As the other tools name it: relative in the first root, absolute in the others.
    pub path: String,
    pub bytes: usize,
    /// The file did not exist before.
    pub created: bool,
}

fn yes() -> bool {
    true
}

pub(crate) fn call(context: &Context, input: Input) -> Result<Output, ToolError> {
    let confined = context
        .roots
        .confine_file(&input.path)?
        .writable_by_tools()?;
    let _writing = exclusive();
    // What the file holds now, to tell whether the stand-in for a secret is written anew.
    let before = crate::workspace::jail::open(&confined, libc::O_RDONLY, 0)
        .ok()
        .and_then(|file| crate::workspace::read_regular(file, 16 << 20))
        .unwrap_or_default();
    if let Some(refused) = crate::secrets::writes_stand_in(&input.path, &before, &input.content) {
        return Err(super::tool_error(refused));
    }
    let created = write_atomically(&confined, input.content.as_bytes(), input.create_dirs)?;
    Ok(Output {
        path: confined.shown(&confined.relative),
        bytes: input.content.len(),
        created,
    })
}
