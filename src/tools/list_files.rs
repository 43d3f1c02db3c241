//! `list_files`: the files of a directory, .gitignore-aware, without `.git`.

use std::ops::ControlFlow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{glob_matcher, Call, Context};
use crate::workspace::jail::ToolError;
use crate::workspace::walk::{self, Kind};

pub const DESCRIPTION: &str = "List the files and directories under a directory of the workspace (default: its root), \
skipping what .gitignore ignores and the .git directory. Set recursive to walk subdirectories; glob (e.g. `**/*.py`) \
filters by path. Paths are relative to the workspace root.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Directory to list (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
    /// Walk subdirectories too.
    #[serde(default)]
    pub recursive: bool,
    /// Keep only paths matching this glob, e.g. `**/*.rs`.
    #[serde(default)]
    pub glob: Option<String>,
    /// At most this many entries (default 1000).
    #[serde(default)]
    pub max_entries: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Entry {
    pub path: String,
    /// `file`, `dir` or `symlink`.
    pub kind: &'static str,
    pub size: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub entries: Vec<Entry>,
    /// More entries exist than were listed.
    pub truncated: bool,
}

pub fn call(context: &Context, call: &Call, input: Input) -> Result<Output, ToolError> {
    let confined = context
        .roots
        .confine(input.path.as_deref().unwrap_or("."))?;
    let glob = glob_matcher(input.glob.as_deref())?;
    let max = input.max_entries.unwrap_or(1000).max(1);
    let mut entries = Vec::new();
    let mut truncated = false;
    let depth = (!input.recursive).then_some(1);
    let walked = walk::walk(&confined, depth, &mut |found| {
        // A call the client gave up on stops walking (its answer is never sent).
        if call.is_cancelled() {
            return ControlFlow::Break(());
        }
        let relative = found.relative.to_string_lossy();
        if glob
            .as_ref()
            .is_some_and(|g| !g.is_match(relative.as_ref()))
        {
            return ControlFlow::Continue(());
        }
        if entries.len() == max {
            truncated = true;
            return ControlFlow::Break(());
        }
        entries.push(Entry {
            path: relative.into_owned(),
            kind: match found.kind {
                Kind::Symlink => "symlink",
                Kind::Dir => "dir",
                Kind::File | Kind::Other => "file",
            },
            size: found.size,
        });
        ControlFlow::Continue(())
    })?;
    truncated |= walked.capped;
    Ok(Output { entries, truncated })
}
