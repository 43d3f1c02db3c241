//! `list_files`: the files of a directory, .gitignore-aware, without `.git`.

use std::ops::ControlFlow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{glob_matcher, Call, Context, ToolError};
use crate::text::{Budget, RESULT_BUDGET};
use crate::workspace::walk::{self, Kind};

pub(crate) const DESCRIPTION: &str = "List the files and directories under a directory of the workspace (default: its root), \
skipping what .gitignore ignores and the .git directory. Set recursive to walk subdirectories; glob (e.g. `*.py`) \
filters by path or file name. Paths are relative to the workspace root.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// Directory to list (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
    /// Walk subdirectories too.
    #[serde(default)]
    pub recursive: bool,
    /// Keep only files whose path or name matches this glob, e.g. `*.rs` or `src/**/*.rs`.
    #[serde(default)]
    pub glob: Option<String>,
    /// At most this many entries (default 1000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_entries: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Entry {
    pub path: String,
    /// `file`, `dir`, `symlink` or `other` (a FIFO, socket or device).
    pub kind: &'static str,
    pub size: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Output {
    pub entries: Vec<Entry>,
    /// More entries exist than were listed (max_entries, or about 32 KB of them): narrow with
    /// path or glob.
    pub truncated: bool,
}

pub(crate) fn call(context: &Context, call: &Call, input: Input) -> Result<Output, ToolError> {
    let confined = context
        .roots
        .confine(input.path.as_deref().unwrap_or("."))?;
    let glob = glob_matcher(input.glob.as_deref())?;
    let max = input.max_entries.unwrap_or(1000).max(1);
    let mut entries = Vec::new();
    let mut truncated = false;
    let mut budget = Budget::new(RESULT_BUDGET);
    let depth = (!input.recursive).then_some(1);
    let walked = walk::walk(&confined, depth, &mut |found| {
        // A call the client gave up on stops walking (its answer is never sent).
        if call.is_cancelled() {
            return ControlFlow::Break(());
        }
        if glob
            .as_ref()
            .is_some_and(|glob| !super::glob_matches(glob, &found.relative))
        {
            return ControlFlow::Continue(());
        }
        let entry = Entry {
            path: confined.shown(&found.relative),
            kind: match found.kind {
                Kind::Symlink => "symlink",
                Kind::Dir => "dir",
                Kind::File => "file",
                Kind::Other => "other",
            },
            size: found.size,
        };
        if entries.len() == max || !budget.take(&entry) {
            truncated = true;
            return ControlFlow::Break(());
        }
        entries.push(entry);
        ControlFlow::Continue(())
    })?;
    truncated |= walked.capped;
    Ok(Output { entries, truncated })
}
