//! What heal writes: the document's `heal` (each attempt, the diff, the final test run) and the
//! `--events` file, one JSON line per step. Neither holds a prompt's text, only its hash.

use std::io::Write;
use std::time::Instant;

use serde::Serialize;
use serde_json::{json, Value};

use super::edits::Applied;
use crate::llm::Session;
use crate::run_document::{Counts, HealStatus, Outcome, TestReport};
use crate::secrets::Secrets;

/// The document's `heal`.
#[derive(Debug, Serialize)]
pub struct HealReport {
    pub mode: &'static str,
    pub status: HealStatus,
    /// The engine whose change was kept (none when nothing was).
    pub engine: Option<&'static str>,
    pub model: Option<ModelShown>,
    /// Why it ended.
    pub reason: String,
    /// A model's attempts, and the offline engine's candidates that were kept.
    pub attempts: Vec<AttemptRecord>,
    /// The offline engine's candidates tested.
    pub candidates_tried: u64,
    /// The offline engine's plausible patches, the best (the one kept) first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plausible: Vec<PlausibleShown>,
    /// Tests whose outcome changed between two runs of the same code: left out of the green and
    /// regression decisions.
    pub flaky: Vec<String>,
    /// The tests that failed before heal started.
    pub failing_before: Vec<String>,
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
    pub error: Option<ErrorShown>,
    /// The last full run of the tests, on the change kept.
    pub tests: Option<TestReport>,
    /// Task mode: the model's account of what it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<super::task::Summary>,
    /// Task mode: each tool call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<super::task::StepRecord>,
}

impl HealReport {
    /// A report of `mode` ("repair", "task") with nothing found yet, for `session`'s model.
    pub fn new(mode: &'static str, session: Option<&Session>) -> HealReport {
        HealReport {
            mode,
            status: HealStatus::NoChange,
            engine: None,
            model: session.map(|session| {
                let model = session.model();
                ModelShown {
                    provider: model.provider.name(),
                    name: model.name.clone().unwrap_or_default(),
                    base_url: crate::http::without_userinfo(&model.base_url),
                }
            }),
            reason: String::new(),
            attempts: Vec::new(),
            candidates_tried: 0,
            plausible: Vec::new(),
            flaky: Vec::new(),
            failing_before: Vec::new(),
            diff: String::new(),
            files_changed: Vec::new(),
            applied: false,
            patch_file: None,
            tokens: Tokens::default(),
            error: None,
            tests: None,
            summary: None,
            steps: Vec::new(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct ModelShown {
    pub provider: &'static str,
    pub name: String,
    pub base_url: String,
}

#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct Tokens {
    #[serde(rename = "in")]
    pub input: u64,
    #[serde(rename = "out")]
    pub output: u64,
}

#[derive(Debug, Serialize)]
pub struct ErrorShown {
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// One attempt: what was asked for, what applied, how the tests went.
#[derive(Debug, Serialize)]
pub struct AttemptRecord {
    pub number: u32,
    pub engine: &'static str,
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
    /// A search's candidate's tier and place, for ranking plausible patches.
    #[serde(skip)]
    pub rank: Option<(u8, usize)>,
}

/// A change that made every failing test pass and broke none: one of a search's plausible
/// patches, ranked by tier, size and suspiciousness.
#[derive(Debug, Serialize)]
pub struct PlausibleShown {
    pub change: String,
    /// How likely its kind of change is to be the fix: 1 first.
    pub tier: u8,
    /// The diff's lines added and removed.
    pub lines: usize,
    /// Candidates tried when it was found.
    pub found_after: u64,
    pub diff: String,
}

/// The `--events` file: one JSON object per line, each with the milliseconds since heal began,
/// and none with a secret (however spelled) in it.
pub struct Events {
    out: Option<std::fs::File>,
    started: Instant,
    secrets: Secrets,
}

impl Events {
    pub fn new(out: Option<std::fs::File>, secrets: Secrets) -> Events {
        Events {
            out,
            started: Instant::now(),
            secrets,
        }
    }

    /// When heal began, which every event's milliseconds count from.
    pub fn origin(&self) -> Instant {
        self.started
    }

    pub fn emit(&mut self, event: &str, mut fields: Value) {
        let Some(out) = &mut self.out else {
            return;
        };
        let mut line = json!({"event": event, "ms": self.started.elapsed().as_millis() as u64});
        if let (Some(line), Some(fields)) = (line.as_object_mut(), fields.as_object_mut()) {
            line.append(fields);
        }
        self.secrets.withhold_json(&mut line);
        // An events file that cannot be written must not end the repair.
        let _ = writeln!(out, "{line}");
    }
}

/// A short, stable hash of a prompt (FNV-1a, 64 bits): equal prompts have equal hashes.
pub fn prompt_hash(system: &str, user: &str) -> String {
    let bytes = system.bytes().chain([0]).chain(user.bytes());
    format!("{:016x}", crate::text::fnv1a(bytes))
}
