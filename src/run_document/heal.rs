//! The run document's `heal`: what a repair (or a task) came to. heal writes it whole; the
//! stages after it (open-pr, review) and a batch driver read it as this type. Every field has a
//! default, so that a section a person trimmed with `jq` still reads; its status stays unknown
//! (None) when it says none.
//!
//! ```json
//! {"mode": "repair", "status": "green", "engine": "mutate", "model": null,
//!  "reason": "every failing test passes", "attempts": [{"number": 1, "engine": "mutate",
//!  "change": "`a - b` → `a + b` at calc.py:2", "edits": [{"path": "calc.py", "applied": true}],
//!  "outcome": "passed", ...}], "candidates_tried": 12, "flaky": [], "failing_before": ["..."],
//!  "diff": "diff --git ...", "files_changed": ["calc.py"], "applied": true,
//!  "tokens": {"in": 0, "out": 0}, "tests": {...}}
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::test_report::{Counts, Outcome, TestReport};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Heal {
    pub mode: HealMode,
    pub status: Option<HealStatus>,
    /// The engine whose change was kept (none when nothing was).
    pub engine: Option<String>,
    pub model: Option<HealModel>,
    /// Why it ended.
    pub reason: String,
    /// A model's attempts, and the offline engine's candidates that were kept.
    pub attempts: Vec<Attempt>,
    /// The offline engine's candidates tested.
    pub candidates_tried: u64,
    /// The offline engine's plausible patches, the best (the one kept) first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plausible: Vec<Plausible>,
    /// Tests whose outcome changed between two runs of the same code: left out of the green and
    /// regression decisions.
    pub flaky: Vec<String>,
    /// The tests that failed before heal started.
    pub failing_before: Vec<String>,
    /// The unified diff of the final change, against the state heal started from.
    pub diff: String,
    pub files_changed: Vec<String>,
    /// Whether the change was written to the workspace (only a green one is).
    pub applied: bool,
    /// Where the change was written as a patch, when it was not applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_file: Option<String>,
    pub tokens: Tokens,
    /// What ended it early: the model or the environment failing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<HealError>,
    /// The last full run of the tests, on the change kept.
    pub tests: Option<TestReport>,
    /// Task mode: the model's account of what it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// Task mode: each tool call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<TaskStep>,
    /// What else the section holds (a user's or a later version's keys), kept as it is.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// What heal was asked: to make failing tests pass, or to carry out a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HealMode {
    #[default]
    Repair,
    Task,
}

/// How a repair ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HealStatus {
    /// Every test passes.
    Green,
    /// Some still fail.
    Red,
    /// Nothing was changed.
    NoChange,
    /// A limit (attempts, tokens, time) ended it first.
    BudgetExhausted,
}

impl HealStatus {
    pub(crate) fn name(self) -> &'static str {
        match self {
            HealStatus::Green => "green",
            HealStatus::Red => "red",
            HealStatus::NoChange => "no_change",
            HealStatus::BudgetExhausted => "budget_exhausted",
        }
    }
}

/// The model a repair asked, as shown (its URL without a password).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct HealModel {
    pub provider: String,
    pub name: String,
    pub base_url: String,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Tokens {
    #[serde(rename = "in")]
    pub input: u64,
    #[serde(rename = "out")]
    pub output: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct HealError {
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// One attempt: what was asked for, what applied, how the tests went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Attempt {
    pub number: u32,
    pub engine: String,
    /// What the change is (the offline engine's: "`q > 50` → `q >= 50` at shop/pricing.py:13").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    pub edits: Vec<Applied>,
    /// What in the reply could not be read as an edit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// The reply was cut off at the token limit.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut_off: bool,
    /// The tests' outcome: of the failing tests alone when those still failed, else of all.
    pub outcome: Option<Outcome>,
    pub counts: Option<Counts>,
    /// Whether the whole suite ran (not only the tests that failed before).
    pub whole_suite: bool,
    pub still_failing: Vec<String>,
    /// Tests that passed before and failed after this change.
    pub regressions: Vec<String>,
    /// Whether the change stays (a change that breaks a passing test is undone).
    pub kept: bool,
    pub tokens: Tokens,
    pub model_seconds: f64,
    pub test_seconds: f64,
    /// The failing tests ran warm: in a process forked from a worker that had imported the
    /// runner and the project's dependencies, not a fresh one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub warm: bool,
    /// A search's candidate's tier and place, for ranking plausible patches (not written).
    #[serde(skip)]
    pub rank: Option<(u8, usize)>,
}

/// What became of one edit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Applied {
    pub path: String,
    pub applied: bool,
    /// How the SEARCH text was found (`exact`, `indentation`, ...) or `new_file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    /// Why it was not applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A change that made every failing test pass and broke none: one of a search's plausible
/// patches, ranked by tier, size and suspiciousness.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Plausible {
    pub change: String,
    /// How likely its kind of change is to be the fix: 1 first.
    pub tier: u8,
    /// The diff's lines added and removed.
    pub lines: usize,
    /// Candidates tried when it was found.
    pub found_after: u64,
    pub diff: String,
}

/// The model's own account of what it did, marked as such.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Summary {
    pub by: String,
    pub text: String,
}

/// One tool call of a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct TaskStep {
    /// The model's reply it was in.
    pub step: u32,
    pub tool: String,
    /// The arguments, long strings cut.
    pub arguments: Value,
    pub result_chars: usize,
    pub is_error: bool,
    pub seconds: f64,
}
