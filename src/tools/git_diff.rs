//! `git_diff`: what changed in the workspace (`git::diff`), as git's unified diff and per-file
//! counts, read by the root's git reader in the sandbox.

use serde_json::Value;

use super::{tool_error, Call, Context, ToolError};

pub(crate) const DESCRIPTION: &str = "Show changes in the workspace as a unified diff with per-file added and deleted line \
counts: by default the working tree against the index (unstaged changes); staged for the index against HEAD; base (a \
commit, branch or tag) for the working tree against it, or with staged the index against it. Limit it to paths; set \
stat_only for the counts alone. Untracked files are not in a diff: git_status lists them.";

/// What `git_diff` takes.
pub(crate) type Input = crate::git::diff::DiffRequest;
/// What `git_diff` returns.
pub(crate) type Output = crate::git::diff::Changes;

/// Checks the request here (paths confined to the root) and has the root's git reader answer.
pub(crate) fn call(context: &Context, call: &Call, input: Input) -> Result<Value, ToolError> {
    let root = context.roots.confine(".")?.display();
    if let Some(base) = &input.base {
        if base.starts_with('-') || base.is_empty() || base.contains('\0') {
            return Err(tool_error(format!(
                "base {base:?} is not a revision; give a commit, branch or tag"
            )));
        }
    }
    let mut paths = Vec::new();
    for path in &input.paths {
        let confined = context.roots.confine(path)?;
        if confined.root != root.as_path() {
            return Err(tool_error(format!(
                "{path} is in another root; git_diff works in {}",
                root.display()
            )));
        }
        let relative = confined.relative.to_str().ok_or_else(|| {
            tool_error(format!("{path} is not UTF-8; git_diff takes UTF-8 paths"))
        })?;
        paths.push(relative.to_string());
    }
    // The root itself (".") names every file, as no paths do.
    if paths.iter().any(String::is_empty) {
        paths.clear();
    }
    let request = Input { paths, ..input };
    let arguments = serde_json::to_value(&request).expect("serializable");
    crate::git::reader::ask(&context.roots, &|| call.is_cancelled(), "diff", &arguments)
        .map_err(ToolError)
}
