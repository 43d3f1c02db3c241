//! `git_diff`: what changed, as a unified diff and per-file counts, from one `git diff` run
//! (`--numstat -p`) in the sandbox (`tools::git`), without external diffs or textconv.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{git, Call, Context};
use crate::workspace::jail::{tool_error, ToolError};

pub const DESCRIPTION: &str = "Show changes in the workspace as a unified diff with per-file added and deleted line \
counts: by default the working tree against the index (unstaged changes); staged for the index against HEAD; base (a \
commit, branch or tag) for the working tree against it, or with staged the index against it. Limit it to paths; set \
stat_only for the counts alone. Untracked files are not in a diff: git_status lists them.";

/// The diff text kept; beyond it, the counts still cover every file.
const MAX_DIFF: usize = 32 << 10;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Compare the index (what is staged) instead of the working tree.
    #[serde(default)]
    pub staged: bool,
    /// Compare against this commit, branch or tag instead of the index (or HEAD when staged).
    #[serde(default)]
    pub base: Option<String>,
    /// Only these files or directories, relative to the workspace root.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Lines of context around each change (default 3).
    #[serde(default)]
    pub context_lines: Option<u32>,
    /// Only the per-file counts, no diff text.
    #[serde(default)]
    pub stat_only: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileStat {
    pub path: String,
    /// The path it was renamed from.
    pub orig_path: Option<String>,
    /// Lines added; none for a binary file.
    pub added: Option<u64>,
    /// Lines deleted; none for a binary file.
    pub deleted: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub files: Vec<FileStat>,
    /// The unified diff (empty with stat_only).
    pub diff: String,
    /// The diff was cut at about 32 KB: ask for fewer paths to see the rest.
    pub truncated: bool,
}

pub fn call(context: &Context, call: &Call, input: Input) -> Result<Output, ToolError> {
    let root = context.roots.confine(".")?.display();
    let mut args = vec![
        "diff".to_string(),
        "--no-ext-diff".into(),
        "--no-textconv".into(),
        "--no-color".into(),
        "--ignore-submodules=dirty".into(),
        "--submodule=short".into(),
        "--numstat".into(),
        "-z".into(),
    ];
    if !input.stat_only {
        args.push("-p".into());
        args.push(format!("-U{}", input.context_lines.unwrap_or(3).min(1000)));
    }
    if input.staged {
        args.push("--cached".into());
    }
    args.push("--end-of-options".into());
    if let Some(base) = &input.base {
        if base.starts_with('-') || base.is_empty() || base.contains('\0') {
            return Err(tool_error(format!(
                "base {base:?} is not a revision; give a commit, branch or tag"
            )));
        }
        args.push(base.clone());
    }
    args.push("--".into());
    for path in &input.paths {
        let confined = context.roots.confine(path)?;
        if confined.root != root.as_path() {
            return Err(tool_error(format!(
                "{path} is in another root; git_diff works in {}",
                root.display()
            )));
        }
        let relative = confined.relative.to_string_lossy();
        args.push(if relative.is_empty() {
            ".".into()
        } else {
            relative.into_owned()
        });
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let listing = git::run(context, call, &args)?;
    Ok(parse(&listing))
}

/// `--numstat -z` records, then (after an empty record) the patch.
fn parse(listing: &str) -> Output {
    let (stats, patch) = listing.split_once("\0\0").unwrap_or((listing, ""));
    let mut files = Vec::new();
    let mut records = stats.split('\0');
    while let Some(record) = records.next() {
        let mut fields = record.splitn(3, '\t');
        let (Some(added), Some(deleted), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        // A rename leaves the path empty; the old and new paths follow as records of their own.
        let (path, orig_path) = if path.is_empty() {
            let orig = records.next().unwrap_or_default().to_string();
            (records.next().unwrap_or_default().to_string(), Some(orig))
        } else {
            (path.to_string(), None)
        };
        files.push(FileStat {
            path,
            orig_path,
            added: added.parse().ok(),
            deleted: deleted.parse().ok(),
        });
    }
    let truncated = patch.len() > MAX_DIFF;
    let diff = if truncated {
        let cut = crate::testrun::report::cut(patch, MAX_DIFF);
        format!(
            "{cut}\n[... diff cut at {MAX_DIFF} of {} bytes: ask for fewer paths]",
            patch.len()
        )
    } else {
        patch.to_string()
    };
    Output {
        files,
        diff,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_then_patch() {
        let listing = "1\t0\tf1\0-\t-\tlogo.png\0\
2\t1\t\0old name\0new name\0\0diff --git a/f1 b/f1\n+change";
        let output = parse(listing);
        let shown: Vec<_> = output
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.orig_path.as_deref(), f.added, f.deleted))
            .collect();
        assert_eq!(
            shown,
            [
                ("f1", None, Some(1), Some(0)),
                ("logo.png", None, None, None),
                ("new name", Some("old name"), Some(2), Some(1)),
            ]
        );
        assert_eq!(output.diff, "diff --git a/f1 b/f1\n+change");
        assert!(!output.truncated);
    }
}
