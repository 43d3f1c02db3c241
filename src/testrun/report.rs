//! The test report: what `run-tests` adds to the run document as `tests`.
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

use crate::sandbox::outcome::SandboxResult;
use crate::text::{cut, one_line};

/// The runners `run-tests` knows, by their `--framework` names.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Framework {
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
    pub fn name(self) -> &'static str {
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
pub enum Outcome {
    Passed,
    TestsFailed,
    BuildFailed,
    NoTests,
    Timeout,
    Error,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
}

impl Counts {
    pub fn total(&self) -> u64 {
        self.passed + self.failed + self.errors + self.skipped
    }
}

/// One failed or erroring test.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct TestFailure {
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

/// What a parser found in a runner's output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub counts: Counts,
    pub failures: Vec<TestFailure>,
    /// The run did not get as far as running tests (collection, import or compile error).
    pub build_failed: bool,
    /// What the build error said, when `build_failed`.
    pub build_error: Option<String>,
    /// Failures beyond the cap, counted but not listed.
    pub failures_omitted: u64,
    /// The run did not finish, whatever the tests before said: a test binary was killed by a
    /// signal (a stack overflow, an abort), or the runner stopped before it wrote its report.
    pub crashed: bool,
}

/// At most this many failures are listed; the rest are counted.
pub const MAX_FAILURES: usize = 200;
/// `details` is cut to this many bytes (at a line boundary).
pub const MAX_DETAILS: usize = 4000;
/// `message` is cut to this many bytes.
pub const MAX_MESSAGE: usize = 300;
/// A failure's id and file are cut at this many bytes.
pub const MAX_ID: usize = 1000;

impl Parsed {
    /// Adds a failure, respecting the cap.
    pub fn push_failure(&mut self, mut failure: TestFailure) {
        if self.failures.len() >= MAX_FAILURES {
            self.failures_omitted += 1;
            return;
        }
        // What the tests printed decides these: none may be huge (a 1 MB suite name made
        // every id 1 MB).
        failure.id = cut(&failure.id, MAX_ID).to_string();
        if let Some(file) = &mut failure.file {
            *file = cut(file, MAX_ID).to_string();
        }
        if let Some(kind) = &mut failure.kind {
            *kind = cut(kind, MAX_MESSAGE).to_string();
        }
        failure.message = one_line(&failure.message, MAX_MESSAGE);
        // The kind has a field of its own: `ValueError: bad` says `bad`.
        if let Some(kind) = &failure.kind {
            if let Some(rest) = failure
                .message
                .strip_prefix(kind.as_str())
                .and_then(|r| r.strip_prefix(": "))
            {
                failure.message = rest.to_string();
            }
        }
        failure.details = cap_details(&failure.details);
        self.failures.push(failure);
    }
}

/// What a test run found: how it went, the counts and each failure.
// Its schema is the MCP tool `run_tests`'s output, which leaves `sandbox` out.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TestReport {
    pub framework: Framework,
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

impl TestReport {
    /// A report of what `parsed` found; `build_error` is kept only for a build failure.
    pub fn new(
        framework: Framework,
        command: Vec<String>,
        outcome: Outcome,
        parsed: Parsed,
    ) -> TestReport {
        TestReport {
            framework,
            command,
            outcome,
            exit_code: None,
            counts: parsed.counts,
            failures: parsed.failures,
            failures_omitted: parsed.failures_omitted,
            build_error: parsed
                .build_error
                .filter(|_| outcome == Outcome::BuildFailed),
            duration_ms: 0,
            output_tail: String::new(),
            sandbox: None,
        }
    }
}

/// `text` cut to `MAX_DETAILS` bytes at a line boundary, with a note of what was cut.
pub fn cap_details(text: &str) -> String {
    let text = text.trim_end();
    if text.len() <= MAX_DETAILS {
        return text.to_string();
    }
    let head = cut(text, MAX_DETAILS);
    let head = head.rfind('\n').map_or(head, |end| &head[..end]);
    format!("{head}\n[... {} more bytes]", text.len() - head.len())
}

/// The last `max` bytes of `text`, starting at a line boundary when there is one.
pub fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let rest = &text[start..];
    rest.find('\n')
        .map_or(rest, |nl| &rest[nl + 1..])
        .to_string()
}

/// Calls `each` with every line of a runner's output, as a stream (bounded memory whatever its
/// size): invalid UTF-8 replaced, colour codes removed, no line end.
pub fn for_each_line<R: std::io::BufRead>(
    mut input: R,
    mut each: impl FnMut(&str),
) -> Result<(), String> {
    let mut raw = Vec::new();
    loop {
        raw.clear();
        if input
            .read_until(b'\n', &mut raw)
            .map_err(|err| format!("cannot read the log: {err}"))?
            == 0
        {
            return Ok(());
        }
        let decoded = String::from_utf8_lossy(&raw);
        each(&strip_ansi(decoded.trim_end_matches(['\n', '\r'])));
    }
}

/// Removes ANSI escape sequences (colour, cursor movement) from runner output.
pub fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\x1b') {
        return line.into();
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '\x1b' {
            out.push(ch);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates, then one final byte in @..~.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colour() {
        assert_eq!(strip_ansi("\x1b[31mFAILED\x1b[0m x"), "FAILED x");
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn caps_at_line_boundaries() {
        let long = "line\n".repeat(2000);
        let capped = cap_details(&long);
        assert!(capped.len() < MAX_DETAILS + 40);
        assert!(capped.ends_with("more bytes]"));
        assert_eq!(tail("a\nb\nc\n", 3), "c\n");
    }
}
