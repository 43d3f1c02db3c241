//! `git_status`: the workspace's branch and what changed (`git::status`), as the root's git
//! reader, in the sandbox, reads them.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{Call, Context, ToolError};

pub(crate) const DESCRIPTION: &str = "Show the workspace's git status: the branch, the commit HEAD is at, the upstream and how \
far ahead and behind it is, and each changed file with what changed in the index (staged) and in the working tree \
(unstaged): modified, added, deleted, renamed, copied, type_changed, unmerged or untracked. Paths are relative to the \
workspace root.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {}

/// What `git_status` returns.
pub(crate) type Output = crate::git::status::Status;

/// The status, as the root's git reader reads it.
pub(crate) fn call(context: &Context, call: &Call, _input: Input) -> Result<Value, ToolError> {
    crate::git::reader::ask(
        &context.roots,
        &|| call.is_cancelled(),
        "status",
        &Value::Null,
    )
    .map_err(ToolError)
}
