//! Python's unittest, from its verbose text output (`python -m unittest -v`), read as a stream.
//! Ids are dotted (`tests.test_x.Case.test_y`), as unittest takes them back.
//!
//! Exit codes: 0 passed (also when no test ran, up to Python 3.11), 1 failures or errors (a test
//! module that cannot be imported is an error), 5 no tests (Python 3.12+).

use std::io::BufRead;
use std::path::Path;

use super::frames::project_relative;
use super::report::{for_each_line, Parsed, Progress, MAX_DETAILS};
use crate::run_document::{Counts, TestFailure};

/// Reads unittest's output (its stderr, where it reports).
pub(crate) fn parse_log<R: BufRead>(input: R, root: Option<&Path>) -> Result<Parsed, String> {
    let mut log = Log {
        root,
        ..Log::default()
    };
    for_each_line(input, |line| log.line(line))?;
    Ok(log.finish())
}

/// What the log said so far.
#[derive(Default)]
struct Log<'a> {
    parsed: Parsed,
    /// The failure whose report is being read.
    current: Option<TestFailure>,
    in_traceback: bool,
    /// Whether the exception line after the latest frames was read (see `traceback_line`).
    exception_read: bool,
    /// The `Ran N tests` line's count.
    ran: Option<u64>,
    /// Test modules that could not be imported: the build, for our purposes, failed.
    unimportable: Vec<String>,
    counts: Counts,
    /// What the `test (id) ... result` lines said, for a run stopped before its summary.
    progress: VerboseLines,
    root: Option<&'a Path>,
}

impl Log<'_> {
    fn line(&mut self, line: &str) {
        if self.current.is_none() && self.progress.line(line) {
            return;
        }
        // Python 3.11+ fails the run for a test expected to fail that passed: listed as such.
        if let Some(title) = line.strip_prefix("UNEXPECTED SUCCESS: ") {
            finish(&mut self.parsed, self.current.take());
            self.parsed.push_failure(TestFailure {
                id: test_id(title),
                kind: Some("unexpected_success".into()),
                message: "expected to fail (expectedFailure), but passed".into(),
                ..TestFailure::default()
            });
            return;
        }
        let header = line
            .strip_prefix("FAIL: ")
            .map(|r| (false, r))
            .or_else(|| line.strip_prefix("ERROR: ").map(|r| (true, r)));
        if let Some((is_error, title)) = header {
            finish(&mut self.parsed, self.current.take());
            if is_error && title.contains("unittest.loader._FailedTest") {
                self.parsed.build_failed = true;
                self.unimportable.push(test_id(title));
            }
            self.current = Some(TestFailure {
                id: test_id(title),
                ..TestFailure::default()
            });
            self.in_traceback = false;
            self.exception_read = false;
            return;
        }
        if line.starts_with("======") {
            finish(&mut self.parsed, self.current.take());
            return;
        }
        if line.starts_with("------") {
            self.in_traceback = self.current.is_some() && !self.in_traceback;
            if !self.in_traceback {
                finish(&mut self.parsed, self.current.take());
            }
            return;
        }
        if let Some(rest) = line.strip_prefix("Ran ") {
            self.ran = rest.split_whitespace().next().and_then(|n| n.parse().ok());
            return;
        }
        if let Some(rest) = line
            .strip_prefix("FAILED (")
            .or_else(|| line.strip_prefix("OK ("))
        {
            self.final_counts(rest);
            return;
        }
        if self.in_traceback {
            self.traceback_line(line);
        }
    }

    /// The last line's counts: `failures=1, errors=2, skipped=3)`.
    fn final_counts(&mut self, rest: &str) {
        for part in rest.trim_end_matches(')').split(", ") {
            let (what, n) = part.split_once('=').unwrap_or((part, "0"));
            let n: u64 = n.parse().unwrap_or(0);
            match what {
                "failures" => self.counts.failed += n,
                "errors" => self.counts.errors += n,
                "skipped" => self.counts.skipped += n,
                "expected failures" => self.counts.xfailed += n,
                "unexpected successes" => self.counts.xpassed += n,
                _ => {}
            }
        }
    }

    /// A line of the current failure's traceback: a frame, the exception, or its message.
    fn traceback_line(&mut self, line: &str) {
        let Some(failure) = self.current.as_mut() else {
            return;
        };
        if failure.details.len() < MAX_DETAILS * 2 {
            failure.details.push_str(line);
            failure.details.push('\n');
        }
        if let Some((file, number)) = frame(line, self.root) {
            failure.file = Some(file);
            failure.line = Some(number);
            self.exception_read = false;
        } else if !self.exception_read
            && !line.starts_with(' ')
            && !line.is_empty()
            && !line.starts_with("Traceback")
        {
            // The first line after the frames is the exception, `Kind: message`; what
            // follows it (assertEqual's diff) is its message's continuation.
            let (kind, message) = line.split_once(": ").unwrap_or((line, ""));
            let is_name = kind.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && kind
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
            if is_name {
                failure.kind = Some(kind.to_string());
                failure.message = message.to_string();
                self.exception_read = true;
            }
        }
    }

    /// The last failure, the counts (from the summary, else the per-test lines) and the
    /// import error that failed the build.
    fn finish(mut self) -> Parsed {
        let mut parsed = self.parsed;
        finish(&mut parsed, self.current);
        if let Some(ran) = self.ran {
            let counts = &mut self.counts;
            counts.passed = ran.saturating_sub(
                counts.failed + counts.errors + counts.skipped + counts.xfailed + counts.xpassed,
            );
        } else if let Some(finished) = self.progress.progress.finish(&mut parsed, "unittest") {
            // Stopped before the report: what the per-test lines said.
            self.counts = finished;
        } else {
            self.counts.failed = parsed.failures.len() as u64;
        }
        parsed.counts = self.counts;
        if parsed.build_failed {
            parsed.build_error = parsed
                .failures
                .iter()
                .find(|f| self.unimportable.contains(&f.id))
                .map(|f| {
                    format!(
                        "cannot import {}: {}: {}",
                        f.id,
                        f.kind.as_deref().unwrap_or("error"),
                        f.message
                    )
                });
        }
        parsed
    }
}

/// The verbose lines unittest writes as each test ends (`test_y (m.Case.test_y) ... ok`), or
/// starts: the line is written in two halves, so a test still running is one without its result.
#[derive(Default)]
struct VerboseLines {
    progress: Progress,
    /// The line before, which names the test when a docstring takes the result's line.
    previous: String,
}

impl VerboseLines {
    /// Whether `line` was one of them.
    fn line(&mut self, line: &str) -> bool {
        let previous = std::mem::replace(&mut self.previous, line.to_string());
        let line = line.trim_end();
        let (id, result) = match line.rsplit_once(" ...") {
            Some((title, result)) => {
                // A docstring's first line takes the title's place: the title is the line before.
                let title = if is_title(title) { title } else { &previous };
                if !is_title(title) {
                    return false;
                }
                (test_id(title), result.trim())
            }
            // What a test wrote to stderr came after its title: the result is on a line of its
            // own.
            None => match (self.progress.running(), result_kind(line)) {
                (Some(running), Some(_)) => (running.to_string(), line),
                _ => return false,
            },
        };
        let counts = &mut self.progress.counts;
        match result_kind(result) {
            Some("ok") => counts.passed += 1,
            Some("FAIL") => counts.failed += 1,
            Some("ERROR") => counts.errors += 1,
            Some("skipped") => counts.skipped += 1,
            Some("expected") => counts.xfailed += 1,
            Some(_) => counts.xpassed += 1,
            // Not ended yet, or it wrote to stderr before its result.
            None => {
                self.progress.started(id);
                return true;
            }
        }
        self.progress.ended(id, matches!(result, "FAIL" | "ERROR"));
        true
    }
}

/// The result a verbose line ends a test with, by its first word.
fn result_kind(result: &str) -> Option<&'static str> {
    match result.split_whitespace().next()? {
        "ok" => Some("ok"),
        "FAIL" => Some("FAIL"),
        "ERROR" => Some("ERROR"),
        "skipped" => Some("skipped"),
        "expected" if result.starts_with("expected failure") => Some("expected"),
        "unexpected" if result.starts_with("unexpected success") => Some("unexpected"),
        _ => None,
    }
}

/// `test_y (tests.test_x.Case.test_y)`: a name and a dotted path, unlike a docstring.
fn is_title(title: &str) -> bool {
    let Some((name, rest)) = title.split_once(" (") else {
        return false;
    };
    let Some(path) = rest.strip_suffix(')') else {
        return false;
    };
    let word =
        |text: &str| !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_');
    word(name) && path.contains('.') && path.split('.').all(word)
}

fn finish(parsed: &mut Parsed, failure: Option<TestFailure>) {
    if let Some(mut failure) = failure {
        if failure.message.is_empty() {
            failure.message = failure
                .details
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
        }
        parsed.push_failure(failure);
    }
}

/// `test_y (tests.test_x.Case.test_y)` (3.11+) or `test_y (tests.test_x.Case)` → dotted id; a
/// module that failed to import (`tests.test_x (unittest.loader._FailedTest...)`) → the module.
fn test_id(title: &str) -> String {
    let Some((method, rest)) = title.split_once(" (") else {
        return title.trim().to_string();
    };
    if rest.starts_with("unittest.loader._FailedTest") {
        return method.to_string();
    }
    let inside = rest.split(')').next().unwrap_or("");
    if inside.ends_with(&format!(".{method}")) {
        inside.to_string()
    } else {
        format!("{inside}.{method}")
    }
}

/// `  File "path", line N, in func` → (path in the project, N).
fn frame(line: &str, root: Option<&Path>) -> Option<(String, u32)> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (path, rest) = rest.split_once("\", line ")?;
    let number = rest.split(',').next()?.trim().parse().ok()?;
    Some((project_relative(path, root)?, number))
}

/// The dotted name unittest selects a test by, which coverage.py's contexts name it by too: a
/// pytest id (`tests/test_x.py::T::test_y[1]`, as an issue or another run names it) becomes
/// `tests.test_x.T.test_y`, its parametrization dropped; a dotted name is kept.
pub(crate) fn dotted(id: &str) -> String {
    let id = id.split('[').next().unwrap_or(id);
    id.replace(".py::", "::")
        .replace("::", ".")
        .replace('/', ".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_ids_become_the_dotted_names_unittest_takes() {
        assert_eq!(
            dotted("tests/test_cart.py::TestCart::test_total[2-3]"),
            "tests.test_cart.TestCart.test_total"
        );
        assert_eq!(
            dotted("test_cart.TestCart.test_total"),
            "test_cart.TestCart.test_total"
        );
        assert_eq!(
            dotted("tests/test_x.py::T::test_y"),
            "tests.test_x.T.test_y"
        );
        assert_eq!(dotted("test_x.py::T::test_y[1-2]"), "test_x.T.test_y");
        assert_eq!(dotted("tests.test_x.T.test_y"), "tests.test_x.T.test_y");
    }

    #[test]
    fn the_exception_line_not_the_diff_under_it() {
        // A real `python3 -m unittest -v` log of assertEqual on two lists.
        let log = "test_lists (test_u.T.test_lists) ... FAIL

======================================================================
FAIL: test_lists (test_u.T.test_lists)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/p/test_u.py\", line 4, in test_lists
    self.assertEqual([1, 2], [1, 3])
AssertionError: Lists differ: [1, 2] != [1, 3]

First differing element 1:
2
3

- [1, 2]
?     ^

+ [1, 3]
?     ^


----------------------------------------------------------------------
Ran 1 test in 0.001s

FAILED (failures=1)
";
        let parsed = parse_log(log.as_bytes(), Some(Path::new("/p"))).unwrap();
        let failure = &parsed.failures[0];
        assert_eq!(
            (
                failure.kind.as_deref(),
                failure.message.as_str(),
                failure.line
            ),
            (
                Some("AssertionError"),
                "Lists differ: [1, 2] != [1, 3]",
                Some(4)
            )
        );
    }

    #[test]
    fn a_verbose_log_cut_by_a_timeout() {
        let log = "test_a (m.T.test_a)
Checks (with care). ... ok
test_b (m.T.test_b) ... noise on stderr
FAIL
test_c (m.T.test_c) ... skipped 'later'
test_d (m.T.test_d)
Hangs (forever). ... ";
        let parsed = parse_log(log.as_bytes(), None).unwrap();
        let c = &parsed.counts;
        assert_eq!((c.passed, c.failed, c.skipped), (1, 1, 1));
        assert_eq!(parsed.failures[0].id, "m.T.test_b");
        assert_eq!(parsed.running, ["m.T.test_d"]);
    }

    #[test]
    fn ids() {
        assert_eq!(
            test_id("test_y (tests.test_x.Case.test_y)"),
            "tests.test_x.Case.test_y"
        );
        assert_eq!(
            test_id("test_y (tests.test_x.Case)"),
            "tests.test_x.Case.test_y"
        );
        assert_eq!(
            test_id("test_y (tests.test_x.Case.test_y) [with x=1]"),
            "tests.test_x.Case.test_y"
        );
    }
}
