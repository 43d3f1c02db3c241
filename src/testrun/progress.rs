//! A live count of the tests a run has done, read from the runner's output as it comes: each
//! runner writes a line as a test ends (pytest's and unittest's `-v`, libtest's and nextest's
//! results, go's `pass` events, node's TAP `ok`, our jest and vitest reporter's `end`). For a
//! person watching a long run (`heal`'s live line); the report is still read from the whole
//! output at the end.

use std::sync::{Arc, Mutex};

use super::jest_events;
use crate::run_document::Framework;
use crate::sandbox::policy::OutputWatcher;

/// The longest line looked at: a longer one is no test's result line.
const MAX_LINE: usize = 4096;

/// A watcher of a `framework` run's output that tells `done` each new count of ended tests.
pub(super) fn watcher(
    framework: Framework,
    done: Arc<dyn Fn(usize) + Send + Sync>,
) -> OutputWatcher {
    // The line begun on each stream (stdout, stderr), and the count.
    let state = Mutex::new(([Vec::new(), Vec::new()], 0));
    OutputWatcher(Arc::new(move |stream, bytes| {
        let Ok(mut state) = state.lock() else {
            return;
        };
        let (lines, count) = &mut *state;
        let before = *count;
        let line = &mut lines[stream.min(1)];
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            if line.len() < MAX_LINE {
                line.extend_from_slice(&piece[..piece.len().min(MAX_LINE - line.len())]);
            }
            if piece.ends_with(b"\n") {
                if ends_a_test(framework, &String::from_utf8_lossy(line)) {
                    *count += 1;
                }
                line.clear();
            }
        }
        if *count != before {
            done(*count);
        }
    }))
}

/// Whether `line` is the one `framework` writes as a test ends.
fn ends_a_test(framework: Framework, line: &str) -> bool {
    let line = line.trim_end();
    let trimmed = line.trim_start();
    match framework {
        Framework::Pytest => {
            // `a.py::t PASSED  [ 50%]`; not the summary's `FAILED a.py::t - why`.
            let status = line
                .rsplit_once(" [")
                .map_or(line, |(before, _)| before)
                .trim_end();
            line.contains("::")
                && ["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS"]
                    .iter()
                    .any(|word| status.ends_with(&format!(" {word}")) && !line.starts_with(word))
        }
        Framework::Unittest => {
            line.contains(" ... ")
                && ([
                    "ok",
                    "FAIL",
                    "ERROR",
                    "expected failure",
                    "unexpected success",
                ]
                .iter()
                .any(|end| line.ends_with(end))
                    || line.contains(" ... skipped"))
        }
        Framework::Cargo => trimmed.starts_with("test ") && line.contains(" ... "),
        Framework::Nextest => ["PASS [", "FAIL [", "SKIP"]
            .iter()
            .any(|start| trimmed.starts_with(start)),
        Framework::Go => {
            line.contains("\"Test\":")
                && ["pass", "fail", "skip"]
                    .iter()
                    .any(|action| line.contains(&format!("\"Action\":\"{action}\"")))
        }
        Framework::Node => {
            let rest = trimmed
                .strip_prefix("ok ")
                .or_else(|| trimmed.strip_prefix("not ok "));
            rest.is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        }
        Framework::Jest | Framework::Vitest => line
            .strip_prefix(jest_events::MARK)
            .is_some_and(|event| event.contains("\"event\":\"end\"")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What each runner writes, and how many tests it says ended.
    #[test]
    fn each_runners_lines_of_an_ended_test_are_counted() {
        let cases: &[(Framework, &str, usize)] = &[
            (
                Framework::Pytest,
                "collected 3 items\n\ntests/test_a.py::test_one PASSED      [ 33%]\n\
                 tests/test_a.py::test_two[1-2] FAILED   [ 66%]\ntests/test_a.py::test_three SKIPPED (why) [100%]\n\
                 =========== short test summary info ==========\nFAILED tests/test_a.py::test_two[1-2] - assert 1 == 2\n",
                2,
            ),
            (
                Framework::Unittest,
                "test_a (tests.T.test_a) ... ok\ntest_b (tests.T.test_b) ... FAIL\n\
                 test_c (tests.T.test_c) ... skipped 'later'\nRan 3 tests in 0.001s\n",
                3,
            ),
            (
                Framework::Cargo,
                "running 2 tests\ntest tests::adds ... ok\ntest tests::subtracts ... FAILED\n\
                 test result: FAILED. 1 passed; 1 failed\n",
                2,
            ),
            (
                Framework::Go,
                "{\"Action\":\"run\",\"Package\":\"m\",\"Test\":\"TestA\"}\n\
                 {\"Action\":\"pass\",\"Package\":\"m\",\"Test\":\"TestA\",\"Elapsed\":0}\n\
                 {\"Action\":\"pass\",\"Package\":\"m\",\"Elapsed\":0.1}\n",
                1,
            ),
            (
                Framework::Node,
                "TAP version 13\n# Subtest: adds\nok 1 - adds\n  ---\n    duration_ms: 1\n  ...\n\
                 not ok 2 - subtracts\n1..2\n# pass 1\n",
                2,
            ),
            (
                Framework::Jest,
                "##autocoder-test {\"event\":\"start\",\"title\":\"a\"}\n\
                 ##autocoder-test {\"event\":\"end\",\"title\":\"a\",\"status\":\"passed\"}\n",
                1,
            ),
        ];
        for (framework, output, expected) in cases {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let told = seen.clone();
            let watcher = watcher(
                *framework,
                Arc::new(move |count| told.lock().unwrap().push(count)),
            );
            // In pieces that cut lines, as pipes deliver them.
            for piece in output.as_bytes().chunks(7) {
                (watcher.0)(0, piece);
            }
            let seen = seen.lock().unwrap();
            assert_eq!(
                seen.last().copied().unwrap_or(0),
                *expected,
                "{framework:?}"
            );
            assert!(
                seen.windows(2).all(|w| w[0] < w[1]),
                "{framework:?}: {seen:?}"
            );
        }
    }
}
