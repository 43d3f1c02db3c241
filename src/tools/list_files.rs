//! `list_files`: the files of a directory, .gitignore-aware, without `.git`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Context;
use crate::workspace::jail::{self, tool_error, ToolError};

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

pub fn call(context: &Context, input: Input) -> Result<Output, ToolError> {
    let confined = context
        .roots
        .confine(input.path.as_deref().unwrap_or("."))?;
    // The kernel checks the directory is inside the root; the walk below does not follow links.
    let dir = jail::open(&confined, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    drop(dir);
    let start = confined.display();
    let mut walker = ignore::WalkBuilder::new(&start);
    walker
        .hidden(false)
        .follow_links(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git");
    if !input.recursive {
        walker.max_depth(Some(1));
    }
    let glob = match &input.glob {
        Some(glob) => Some(
            globset::Glob::new(glob)
                .map_err(|err| tool_error(format!("glob {glob:?}: {err}")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let max = input.max_entries.unwrap_or(1000).max(1);
    let mut entries = Vec::new();
    let mut truncated = false;
    for entry in walker.build().flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(confined.root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        if glob.as_ref().is_some_and(|g| !g.is_match(&relative)) {
            continue;
        }
        if entries.len() == max {
            truncated = true;
            break;
        }
        let file_type = entry.file_type();
        let kind = match file_type {
            Some(t) if t.is_symlink() => "symlink",
            Some(t) if t.is_dir() => "dir",
            _ => "file",
        };
        let size = entry.path().symlink_metadata().map_or(0, |m| m.len());
        entries.push(Entry {
            path: relative,
            kind,
            size,
        });
    }
    Ok(Output { entries, truncated })
}
