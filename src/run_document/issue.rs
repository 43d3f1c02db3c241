//! The run document's `issue`: what fetch-issue found (on GitHub, in a Markdown or JSON file),
//! in one shape whatever the source. Fields it does not know (a JSON issue's own, or what a user
//! added with jq) are kept as they are.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Issue {
    /// Where it came from: `github`, `markdown` or `json`.
    #[serde(default)]
    pub source: String,
    /// The GitHub repository, OWNER/NAME.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The file it was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub title: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Whether it is a pull request (GitHub lists them as issues too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<bool>,
    #[serde(default)]
    pub comments: Vec<Comment>,
    /// Everything else the issue holds, kept as it is.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Comment {
    #[serde(default)]
    pub author: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub created_at: String,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}
