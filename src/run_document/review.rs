//! The run document's `review`: what a change touches and what could go wrong, with evidence.
//! review writes it whole; open-pr reads its verdict, risks and Markdown, and `review --post`
//! and the run report read the rest. A review says its verdict; every other field may be
//! missing (a section trimmed with `jq` still reads) and keys it does not know are kept.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Review {
    pub verdict: Verdict,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub files: Vec<FileShown>,
    #[serde(default)]
    pub risks: Vec<Risk>,
    #[serde(default)]
    pub test_mapping: TestMapping,
    #[serde(default)]
    pub context: Vec<Snippet>,
    /// A model's findings (`--llm`), each citing the context's evidence.
    #[serde(default)]
    pub findings: Vec<Risk>,
    /// What came of asking the model (`--llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelReview>,
    /// The review posted on the pull request (`--post`): its address and comments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted: Option<Value>,
    /// A change a bot made is always for a person to review too.
    #[serde(default = "required")]
    pub human_review_required: bool,
    /// The review as Markdown, which open-pr puts in the pull request's body.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub markdown: String,
    /// What else the section holds, kept as it is.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

fn required() -> bool {
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Pass,
    NeedsAttention,
    Block,
}

impl Verdict {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::NeedsAttention => "needs_attention",
            Verdict::Block => "block",
        }
    }
}

/// How grave a risk is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    Low,
    Medium,
    High,
}

impl Severity {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
}

/// What a rule (or the model) found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Risk {
    /// The rule's id (`secret-added`, ...), or `model` for a model's finding.
    pub rule: String,
    pub severity: Severity,
    #[serde(default)]
    pub path: String,
    /// In the new file (for what was removed, the line before it there).
    #[serde(default)]
    pub line: Option<u32>,
    /// The snippet of `context` that shows it.
    #[serde(default)]
    pub evidence_id: String,
    #[serde(default)]
    pub message: String,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FileStatus {
    Added,
    Deleted,
    Modified,
    Renamed,
    Copied,
}

impl FileStatus {
    pub(crate) fn name(self) -> &'static str {
        match self {
            FileStatus::Added => "added",
            FileStatus::Deleted => "deleted",
            FileStatus::Modified => "modified",
            FileStatus::Renamed => "renamed",
            FileStatus::Copied => "copied",
        }
    }
}

/// A changed file, as the review lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FileShown {
    pub path: String,
    pub status: FileStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    #[serde(default)]
    pub added: usize,
    #[serde(default)]
    pub removed: usize,
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    /// Not tracked by git yet: open-pr commits it only when named with --add.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untracked: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct TestMapping {
    /// Changed source file → the test files that reach it.
    pub covered: BTreeMap<String, Vec<String>>,
    /// Changed source files no test reaches.
    pub untested: Vec<String>,
}

/// A piece of the change or its surroundings, citable by its id.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Snippet {
    pub evidence_id: String,
    pub path: String,
    /// `hunk` (a changed part), `function` (the whole function a hunk changed, as it is now) or
    /// `test` (a test that reaches a changed file).
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
    pub text: String,
}

/// What came of asking a model to review (`--llm`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ModelReview {
    pub model: String,
    /// Findings left out: no valid evidence id, a line outside its snippet, no known severity,
    /// said twice, or past the first 50.
    pub dropped: usize,
    /// Why there are no model findings, when the answer could not be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
