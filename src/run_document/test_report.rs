//! The run document's `tests`: what a test run found, as `run-tests` writes it and the MCP tool
//! `run_tests` returns it (its schema leaves `sandbox` out).
//!
//! ```json
//! {"framework": "pytest", "command": ["python3", "-m", "pytest", "..."], "outcome": "tests_failed",
//!  "exit_code": 1, "counts": {"passed": 5, "failed": 4, "errors": 1, "skipped": 1},
//!  "failures": [{"id": "tests/test_ops.py::test_mean", "file": "tests/test_ops.py", "line": 11,
//!                "kind": "AssertionError", "message": "assert 3.0 == 4", "details": "..."}],
//!  "duration_ms": 840, "output_tail": "...", "sandbox": {...}}
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sandbox::result::SandboxResult;

/// The runners `run-tests` knows, by their `--framework` names.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Framework {
    Pytest,
    Unittest,
    Cargo,
    Nextest,
    Go,
    Node,
    Jest,
    Vitest,
    Junit,
    Make,
}

impl Framework {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Framework::Pytest => "pytest",
            Framework::Unittest => "unittest",
            Framework::Cargo => "cargo",
            Framework::Junit => "junit",
            Framework::Make => "make",
            Framework::Go => "go",
            Framework::Nextest => "nextest",
            Framework::Node => "node",
            Framework::Jest => "jest",
            Framework::Vitest => "vitest",
        }
    }
}

/// How the run went, as one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    Passed,
    TestsFailed,
    BuildFailed,
    NoTests,
    Timeout,
    Error,
}

impl Outcome {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::TestsFailed => "tests_failed",
            Outcome::BuildFailed => "build_failed",
            Outcome::NoTests => "no_tests",
            Outcome::Timeout => "timeout",
            Outcome::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub(crate) struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
    /// Expected to fail, and failed (pytest's xfailed, unittest's expected failures).
    pub xfailed: u64,
    /// Expected to fail, and passed (pytest's xpassed, unittest's unexpected successes).
    pub xpassed: u64,
}

impl Counts {
    pub(crate) fn total(&self) -> u64 {
        self.passed + self.failed + self.errors + self.skipped + self.xfailed + self.xpassed
    }
}

/// One failed or erroring test.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub(crate) struct TestFailure {
    /// An id the runner accepts back (`run-tests --tests ID`).
    pub id: String,
    /// The innermost frame inside the project (not the standard library or dependencies).
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The exception, assertion or panic kind.
    pub kind: Option<String>,
    /// One line.
    pub message: String,
    /// Traceback or panic text, capped.
    pub details: String,
}

/// What a test run found: how it went, the counts and each failure.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TestReport {
    pub framework: Framework,
    /// What chose the framework: the project file that names it ("tox.ini runs python -m
    /// unittest"), or "given with --framework".
    #[serde(default)]
    pub framework_reason: String,
    #[serde(default)]
    pub command: Vec<String>,
    pub outcome: Outcome,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub counts: Counts,
    #[serde(default)]
    pub failures: Vec<TestFailure>,
    /// Failures counted but not listed (over the cap).
    #[serde(default)]
    pub failures_omitted: u64,
    /// The tests that were running when the run was stopped (a timeout): pytest's, unittest's
    /// and Go's, whose output names a test as it starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub running: Vec<String>,
    /// Why the run is an `error`, in the runner's own words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What to do about the `reason`, when something fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// What stopped the build or collection, when the outcome is `build_failed`.
    #[serde(default)]
    pub build_error: Option<String>,
    #[serde(default)]
    pub duration_ms: u64,
    /// The last lines of the runner's output.
    #[serde(default)]
    pub output_tail: String,
    /// The sandbox result of the run (its output is in `output_tail`); null for `--parse`.
    #[serde(default)]
    #[schemars(skip)]
    pub sandbox: Option<SandboxResult>,
}
