//! `cargo test` (libtest's human format, the only stable one), read as a stream; several test
//! binaries' results add up. Ids are the test paths libtest prints (`tests::adds`), which
//! `cargo test -- --exact ID` takes back.
//!
//! Exit codes: 0 passed, 101 for a failed test *and* for a compile error, so the output decides:
//! `error: could not compile` means the build failed.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use super::frames::project_relative;
use super::report::{for_each_line, Parsed, MAX_DETAILS};
use crate::run_document::TestFailure;

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
    /// Failures as listed by `test NAME ... FAILED`, then filled from `---- NAME stdout ----`.
    failed: Vec<TestFailure>,
    /// Where each failed test is in `failed`, for its `---- NAME stdout ----` block.
    failed_at: HashMap<String, usize>,
    /// The failure whose block is being read.
    current: Option<usize>,
    awaiting_panic_message: bool,
    /// The first compile error and where it points.
    first_error: Option<(String, Option<(String, u32)>)>,
    root: Option<&'a Path>,
}

impl Log<'_> {
    fn line(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("test ") {
            if self.test_line(rest) {
                self.current = None;
                return;
            }
        }
        if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|r| r.strip_suffix(" stdout ----"))
        {
            self.current = self.failed_at.get(name).copied();
            self.awaiting_panic_message = false;
            return;
        }
        if line.starts_with("failures:")
            || line.starts_with("test result:")
            || is_running_line(line)
        {
            self.current = None;
            return;
        }
        if let Some(index) = self.current {
            self.block_line(index, line);
            return;
        }
        // After `error: test failed`, cargo says how the test binary ended:
        // `process didn't exit successfully: `...` (signal: 6, SIGABRT: process abort signal)`.
        if line.contains("process didn't exit successfully") && line.contains("(signal: ") {
            self.parsed.crashed = true;
        }
        // Compile errors: `error[E0425]: ...` then `  --> src/lib.rs:5:9`.
        if line.starts_with("error[")
            || (line.starts_with("error: ") && !line.starts_with("error: test failed"))
        {
            if line.starts_with("error: could not compile") {
                self.parsed.build_failed = true;
            } else if self.first_error.is_none() && !line.starts_with("error: aborting") {
                self.first_error = Some((line.to_string(), None));
            }
            return;
        }
        if let (Some(arrow), Some((_, location @ None))) = (
            line.trim_start().strip_prefix("--> "),
            self.first_error.as_mut(),
        ) {
            *location = source_location(arrow)
                .and_then(|(f, n)| Some((project_relative(&f, self.root)?, n)));
        }
    }

    /// A `test NAME ...` line (after `test `): a test started or ended. False for one that is
    /// neither (a test's own output).
    fn test_line(&mut self, rest: &str) -> bool {
        let parsed = &mut self.parsed;
        // Tests that have started and not ended: libtest names one after a minute
        // (`test NAME has been running for over 60 seconds`), and, with one thread, a
        // test's line waits for its result (`test NAME ... `).
        let started = rest
            .strip_suffix(" has been running for over 60 seconds")
            .or_else(|| rest.trim_end().strip_suffix(" ..."));
        if let Some(name) = started {
            let name = name.strip_suffix(" - should panic").unwrap_or(name);
            if !parsed.running.iter().any(|running| running == name) {
                parsed.running.push(name.to_string());
            }
            return true;
        }
        let Some((name, status)) = rest.rsplit_once(" ... ") else {
            return false;
        };
        // `#[should_panic]` tests are listed as `NAME - should panic`; their id (and their
        // `---- NAME stdout ----` block) is the name alone.
        let name = name.strip_suffix(" - should panic").unwrap_or(name);
        parsed.running.retain(|running| running != name);
        match status.trim() {
            "ok" => parsed.counts.passed += 1,
            "ignored" => parsed.counts.skipped += 1,
            s if s.starts_with("ignored,") => parsed.counts.skipped += 1,
            "FAILED" => {
                parsed.counts.failed += 1;
                // The latest: each test binary's blocks follow its own listing.
                self.failed_at.insert(name.to_string(), self.failed.len());
                self.failed.push(TestFailure {
                    id: name.to_string(),
                    kind: Some("panic".into()),
                    ..TestFailure::default()
                });
            }
            _ => {}
        }
        true
    }

    /// A line of the `---- NAME stdout ----` block of the failure at `index`.
    fn block_line(&mut self, index: usize, line: &str) {
        let failure = &mut self.failed[index];
        if failure.details.len() < MAX_DETAILS * 2 {
            failure.details.push_str(line);
            failure.details.push('\n');
        }
        if let Some(panic) = panic_line(line) {
            if let Some((file, number)) = panic
                .location
                .and_then(|(f, n)| Some((project_relative(&f, self.root)?, n)))
            {
                failure.file = Some(file);
                failure.line = Some(number);
            }
            match panic.message {
                Some(message) => failure.message = message,
                None => self.awaiting_panic_message = true,
            }
        } else if self.awaiting_panic_message && !line.trim().is_empty() {
            failure.message = line.trim().to_string();
            self.awaiting_panic_message = false;
        }
    }

    /// The failures, placed in their sources (a doctest's in its file), and the compile error
    /// that failed the build.
    fn finish(self) -> Parsed {
        let mut parsed = self.parsed;
        for mut failure in self.failed {
            let reported = failure.file.as_deref().zip(failure.line);
            if let Some((file, line)) =
                super::doctest::source_location(&failure.id, reported, self.root)
            {
                failure.file = Some(file);
                failure.line = Some(line);
            }
            parsed.push_failure(failure);
        }
        if parsed.build_failed {
            if let Some((message, location)) = self.first_error {
                parsed.build_error = Some(message.clone());
                parsed.push_failure(TestFailure {
                    id: "build".into(),
                    file: location.as_ref().map(|l| l.0.clone()),
                    line: location.map(|l| l.1),
                    kind: Some("compile_error".into()),
                    message,
                    details: String::new(),
                });
            }
        }
        parsed
    }
}

pub(super) struct Panic {
    pub location: Option<(String, u32)>,
    /// On the same line in older Rust (`panicked at 'msg', src/x.rs:1:2`); on the next line now.
    pub message: Option<String>,
}

/// `thread 'name' (1234) panicked at src/lib.rs:10:5:` (Rust 1.73+, the thread id since 1.9x) or
/// `thread 'name' panicked at 'message', src/lib.rs:10:5`.
pub(super) fn panic_line(line: &str) -> Option<Panic> {
    let rest = line.strip_prefix("thread '")?;
    let (_, rest) = rest.split_once(" panicked at ")?;
    if let Some(quoted) = rest.strip_prefix('\'') {
        let (message, location) = quoted.rsplit_once("', ")?;
        return Some(Panic {
            location: source_location(location),
            message: Some(message.to_string()),
        });
    }
    Some(Panic {
        location: source_location(rest.trim_end_matches(':')),
        message: None,
    })
}

/// `src/lib.rs:10:5` → (`src/lib.rs`, 10).
fn source_location(text: &str) -> Option<(String, u32)> {
    let mut parts = text.trim().rsplitn(3, ':');
    let _column = parts.next()?;
    let line = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    Some((file.to_string(), line))
}

/// libtest's `running 3 tests` (not a test's own output that starts with "running").
fn is_running_line(line: &str) -> bool {
    line.strip_prefix("running ")
        .and_then(|rest| {
            rest.strip_suffix(" tests")
                .or_else(|| rest.strip_suffix(" test"))
        })
        .is_some_and(|count| !count.is_empty() && count.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_cut_by_a_timeout_names_the_tests_still_running() {
        let log = "running 4 tests
test slow::one has been running for over 60 seconds
test slow::two has been running for over 60 seconds
test fast ... ok
test slow::one ... ok
test wrong ... FAILED
test single ... ";
        let parsed = parse_log(log.as_bytes(), None).unwrap();
        assert_eq!((parsed.counts.passed, parsed.counts.failed), (2, 1));
        assert_eq!(parsed.running, ["slow::two", "single"]);
    }

    #[test]
    fn a_test_binary_killed_by_a_signal_is_a_crash() {
        // A real `cargo test 2>&1`: one test passed, the other aborted the binary.
        let log = "   Compiling crashy v0.1.0 (/tmp/crashy)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.23s
     Running unittests src/lib.rs (target/debug/deps/crashy-3a07317488e3f687)

running 2 tests
test tests::adds ... ok
error: test failed, to rerun pass `--lib`

Caused by:
  process didn't exit successfully: `/tmp/crashy/target/debug/deps/crashy-3a07317488e3f687` (signal: 6, SIGABRT: process abort signal)
";
        let parsed = parse_log(log.as_bytes(), None).unwrap();
        assert!(parsed.crashed);
        assert_eq!(parsed.counts.failed, 0);
        let finished = parse_log(
            "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed\n".as_bytes(),
            None,
        )
        .unwrap();
        assert!(!finished.crashed);
    }

    #[test]
    fn should_panic_ids_and_output_that_says_running() {
        let log = "running 2 tests
test tests::boom - should panic ... FAILED
test tests::migrates ... FAILED

failures:

---- tests::boom stdout ----
note: test did not panic as expected at src/lib.rs:9:5
---- tests::migrates stdout ----
running migrations

thread 'tests::migrates' (7) panicked at src/lib.rs:20:9:
schema mismatch

failures:
    tests::boom
    tests::migrates

test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out
";
        let parsed = parse_log(log.as_bytes(), None).unwrap();
        let failures: Vec<_> = parsed
            .failures
            .iter()
            .map(|f| (f.id.as_str(), f.line, f.message.as_str()))
            .collect();
        assert_eq!(failures[0].0, "tests::boom");
        assert_eq!(
            failures[1],
            ("tests::migrates", Some(20), "schema mismatch")
        );
    }

    #[test]
    fn panic_lines_old_and_new() {
        let new = panic_line("thread 'tests::fails' (12345) panicked at src/lib.rs:10:5:").unwrap();
        assert_eq!(new.location, Some(("src/lib.rs".into(), 10)));
        assert_eq!(new.message, None);
        let old = panic_line("thread 'main' panicked at 'boom, really', src/main.rs:3:9").unwrap();
        assert_eq!(old.location, Some(("src/main.rs".into(), 3)));
        assert_eq!(old.message.as_deref(), Some("boom, really"));
    }
}
