//! The run document's `pr`: the pull request open-pr opened or updated, or with `--dry-run` the
//! request it would have sent.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct PullRequest {
    /// Nothing was pushed: the commit and the request are what would have been.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub branch: String,
    pub base: String,
    /// The commit pushed (or, dry, kept in refs/autocoder/dry-run/BRANCH).
    pub commit: String,
    /// Created now, rather than updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<bool>,
    #[serde(default)]
    pub draft: bool,
    /// With --dry-run: the request that would have been sent (method, url, body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
}
