//! `cargo nextest run`, read as a stream: its libtest-compatible JSON events (`--message-format
//! libtest-json-plus`, behind `NEXTEST_EXPERIMENTAL_LIBTEST_JSON=1`), what we run it with; or,
//! in a saved log without them, its human output (`FAIL [ 0.1s] (2/5) crate tests::x` and the
//! test's output under it), what a CI log holds. Ids are the test paths (`tests::adds`), as with
//! `cargo test`; compile errors come from cargo and are read as `cargo test`'s are.
//!
//! Exit codes: 0 passed, 100 tests failed, 101 build failed, 4 no tests.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

use super::frames::project_relative;
use super::libtest::{panic_line, Panic};
use super::report::{for_each_line, strip_ansi, Parsed, MAX_DETAILS};
use crate::run_document::TestFailure;

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    event: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    stdout: Option<String>,
}

pub(crate) fn parse_log<R: BufRead>(input: R, root: Option<&Path>) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    let mut events_seen = false;
    let mut human = Human::default();
    for_each_line(input, |line| {
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            human.line(line);
            return;
        };
        if event.kind != "test" {
            return;
        }
        events_seen = true;
        // `crate::binary$tests::name`: the test's own path is what filters take back.
        let id = event
            .name
            .rsplit_once('$')
            .map_or(event.name.as_str(), |(_, name)| name)
            .to_string();
        match event.event.as_str() {
            "ok" => parsed.counts.passed += 1,
            "ignored" => parsed.counts.skipped += 1,
            "failed" | "timeout" => {
                parsed.counts.failed += 1;
                let output = strip_ansi(event.stdout.as_deref().unwrap_or("")).into_owned();
                parsed.push_failure(failure(id, output, event.event == "timeout", root));
            }
            _ => {}
        }
    })?;
    if events_seen {
        return Ok(parsed);
    }
    Ok(human.finish(root))
}

/// A failed test from what it printed: where and why it panicked.
fn failure(id: String, output: String, timed_out: bool, root: Option<&Path>) -> TestFailure {
    let mut failure = TestFailure {
        id,
        kind: Some(if timed_out { "timeout" } else { "panic" }.into()),
        ..TestFailure::default()
    };
    let mut lines = output.lines();
    while let Some(line) = lines.next() {
        if let Some(Panic { location, message }) = panic_line(line) {
            if let Some((file, number)) =
                location.and_then(|(f, n)| Some((project_relative(&f, root)?, n)))
            {
                failure.file = Some(file);
                failure.line = Some(number);
            }
            failure.message = message
                .or_else(|| lines.next().map(|l| l.trim().to_string()))
                .unwrap_or_default();
            break;
        }
    }
    failure.details = output;
    failure
}

/// nextest's human output: a status line as each test ends, the output of one that failed
/// under it (`  stdout ───`, then its lines indented by four), and after `Summary [` the counts
/// and the failures again.
#[derive(Default)]
struct Human {
    /// Each test's last status (a retried test ends with its last try) and what it printed.
    tests: Vec<(String, Status, String)>,
    /// Where each test is in `tests`.
    index: std::collections::HashMap<String, usize>,
    /// The test whose output the lines are.
    in_output: Option<usize>,
    summary_skipped: Option<u64>,
    summary_seen: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Status {
    Passed,
    Failed,
    TimedOut,
    Skipped,
}

impl Human {
    fn line(&mut self, line: &str) {
        let trimmed = line.trim_start();
        if trimmed.starts_with("Summary [") {
            self.summary_seen = true;
            self.summary_skipped = summary_skipped(trimmed);
            self.in_output = None;
            return;
        }
        if trimmed.starts_with('─') {
            self.in_output = None;
            return;
        }
        if let Some((status, id)) = status_line(trimmed) {
            self.in_output = None;
            // After the summary, the failures are listed again.
            if self.summary_seen {
                return;
            }
            let at = *self.index.entry(id.to_string()).or_insert_with(|| {
                self.tests.push((id.to_string(), status, String::new()));
                self.tests.len() - 1
            });
            self.tests[at].1 = status;
            self.tests[at].2.clear();
            if matches!(status, Status::Failed | Status::TimedOut) {
                self.in_output = Some(at);
            }
            return;
        }
        let Some(at) = self.in_output else {
            return;
        };
        if trimmed.starts_with("stdout ───") || trimmed.starts_with("stderr ───") {
            return;
        }
        let output = &mut self.tests[at].2;
        if output.len() < MAX_DETAILS * 2 {
            output.push_str(line.strip_prefix("    ").unwrap_or(line));
            output.push('\n');
        }
    }

    fn finish(self, root: Option<&Path>) -> Parsed {
        let mut parsed = Parsed::default();
        for (id, status, output) in self.tests {
            match status {
                Status::Passed => parsed.counts.passed += 1,
                Status::Skipped => parsed.counts.skipped += 1,
                Status::Failed | Status::TimedOut => {
                    parsed.counts.failed += 1;
                    let timed_out = status == Status::TimedOut;
                    parsed.push_failure(failure(id, output, timed_out, root));
                }
            }
        }
        // Skipped tests have no line of their own unless asked for.
        if let Some(skipped) = self.summary_skipped {
            parsed.counts.skipped = parsed.counts.skipped.max(skipped);
        }
        parsed
    }
}

/// `FAIL [   0.148s] (2/5) crate::binary tests::name` (the count is new in 0.9.8x; a retry
/// starts `TRY 2 FAIL`): the status and the test's path.
fn status_line(line: &str) -> Option<(Status, &str)> {
    let line = match line.strip_prefix("TRY ") {
        Some(rest) => rest.split_once(' ')?.1,
        None => line,
    };
    let (word, rest) = line.split_once(' ')?;
    let status = match word {
        "PASS" | "LEAK" | "FLAKY" => Status::Passed,
        "FAIL" | "LEAK-FAIL" | "ABORT" => Status::Failed,
        "TIMEOUT" => Status::TimedOut,
        "SKIP" => Status::Skipped,
        _ if word.starts_with("SIG") => Status::Failed,
        _ => return None,
    };
    let rest = rest.trim_start().strip_prefix('[')?;
    let (_, rest) = rest.split_once("] ")?;
    let rest = match rest.strip_prefix('(') {
        Some(counted) => counted.split_once(") ")?.1,
        None => rest,
    };
    let (_binary, id) = rest.trim().split_once(' ')?;
    Some((status, id))
}

/// The skipped count in nextest's summary line on stderr
/// (`Summary [   0.019s] 5 tests run: 2 passed, 3 failed, 1 skipped`).
pub(crate) fn summary_skipped(stderr: &str) -> Option<u64> {
    let summary = stderr
        .lines()
        .rev()
        .find(|line| line.trim_start().starts_with("Summary ["))?;
    summary
        .split(", ")
        .find_map(|part| part.trim().strip_suffix(" skipped"))
        .and_then(|count| count.rsplit(' ').next()?.parse().ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn status_lines_old_and_new() {
        use super::{status_line, Status};
        let cases = [
            (
                "PASS [   0.009s] (1/5) cargo-sample tests::adds",
                Some((Status::Passed, "tests::adds")),
            ),
            (
                "FAIL [   0.1s] cargo-sample::integration it_max",
                Some((Status::Failed, "it_max")),
            ),
            (
                "TRY 2 FAIL [   0.1s] (3/9) c tests::flaky",
                Some((Status::Failed, "tests::flaky")),
            ),
            (
                "SIGSEGV [   0.1s] c tests::crash",
                Some((Status::Failed, "tests::crash")),
            ),
            (
                "TIMEOUT [  60.0s] c tests::slow",
                Some((Status::TimedOut, "tests::slow")),
            ),
            ("SLOW [> 60.0s] c tests::slow", None),
            ("Starting 5 tests across 2 binaries", None),
        ];
        for (line, expected) in cases {
            assert!(status_line(line) == expected, "{line}");
        }
    }

    #[test]
    fn the_summary_counts_the_skipped() {
        let stderr = "     Summary [   0.019s] 5 tests run: 2 passed, 3 failed, 1 skipped\n";
        assert_eq!(super::summary_skipped(stderr), Some(1));
        assert_eq!(
            super::summary_skipped("Summary [ 1s] 2 tests run: 2 passed\n"),
            None
        );
    }
}
