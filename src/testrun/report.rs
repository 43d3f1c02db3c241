//! What the runner parsers find (`Parsed`), capped as a report holds it, and the helpers they
//! share for reading a runner's output; the report itself is the run document's `tests`
//! (`run_document::TestReport`).

use crate::run_document::{Counts, Framework, Outcome, TestFailure, TestReport};
use crate::text::{cut, one_line};

/// What a parser found in a runner's output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Parsed {
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
    /// Tests that had started and not finished where the output ends (a run stopped by its
    /// timeout).
    pub running: Vec<String>,
}

/// What a runner's per-test lines said (`-v`), for a run stopped before its own report: the
/// tests that ended, and the one that had started and not ended.
#[derive(Default)]
pub(crate) struct Progress {
    pub counts: Counts,
    seen: bool,
    failed: Vec<String>,
    running: Option<String>,
}

impl Progress {
    pub(crate) fn started(&mut self, id: String) {
        self.running = Some(id);
        self.seen = true;
    }

    /// The test that started last and has not ended.
    pub(crate) fn running(&self) -> Option<&str> {
        self.running.as_deref()
    }

    /// A test ended (its counts are the caller's to add); a failed one is listed by name.
    pub(crate) fn ended(&mut self, id: String, failed: bool) {
        // A test that fails and then errors in its teardown is one failure.
        if failed && self.failed.last() != Some(&id) {
            self.failed.push(id);
        }
        self.running = None;
        self.seen = true;
    }

    /// For a run without its report: the counts, with the failures not listed yet added by
    /// name and the test left running; `None` when no per-test line was seen.
    pub(crate) fn finish(self, parsed: &mut Parsed, runner: &str) -> Option<Counts> {
        if !self.seen {
            return None;
        }
        for id in self.failed {
            if !parsed.failures.iter().any(|listed| listed.id == id) {
                parsed.push_failure(TestFailure {
                    id,
                    message: format!("failed; the run stopped before {runner} said why"),
                    ..TestFailure::default()
                });
            }
        }
        parsed.running.extend(self.running);
        Some(self.counts)
    }
}

/// At most this many failures are listed; the rest are counted.
pub(crate) const MAX_FAILURES: usize = 200;
/// `details` is cut to this many bytes (at a line boundary).
pub(crate) const MAX_DETAILS: usize = 4000;
/// `message` is cut to this many bytes.
pub(crate) const MAX_MESSAGE: usize = 300;
/// A failure's id and file are cut at this many bytes.
pub(crate) const MAX_ID: usize = 1000;

impl Parsed {
    /// Adds a failure, respecting the cap.
    pub(crate) fn push_failure(&mut self, mut failure: TestFailure) {
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

impl TestReport {
    /// A report of what `parsed` found; `build_error` is kept only for a build failure.
    pub(crate) fn new(
        framework: Framework,
        command: Vec<String>,
        outcome: Outcome,
        parsed: Parsed,
    ) -> TestReport {
        TestReport {
            framework,
            framework_reason: String::new(),
            reason: None,
            hint: None,
            command,
            outcome,
            exit_code: None,
            counts: parsed.counts,
            failures: parsed.failures,
            failures_omitted: parsed.failures_omitted,
            running: parsed.running,
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
pub(crate) fn cap_details(text: &str) -> String {
    let text = text.trim_end();
    if text.len() <= MAX_DETAILS {
        return text.to_string();
    }
    let head = cut(text, MAX_DETAILS);
    let head = head.rfind('\n').map_or(head, |end| &head[..end]);
    format!("{head}\n[... {} more bytes]", text.len() - head.len())
}

/// Calls `each` with every line of a runner's output, as a stream (bounded memory whatever its
/// size): invalid UTF-8 replaced, colour codes removed, no line end.
pub(crate) fn for_each_line<R: std::io::BufRead>(
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
pub(crate) fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
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
    }
}
