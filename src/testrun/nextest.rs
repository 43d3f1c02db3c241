//! `cargo nextest run` with libtest-compatible JSON events (`--message-format
//! libtest-json-plus`, behind `NEXTEST_EXPERIMENTAL_LIBTEST_JSON=1`), read as a stream. Ids are
//! the test paths (`tests::adds`), as with `cargo test`; compile errors come from cargo on
//! stderr and are read as `cargo test`'s are.
//!
//! Exit codes: 0 passed, 100 tests failed, 101 build failed, 4 no tests.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

use super::frames::project_relative;
use super::libtest::{panic_line, Panic};
use super::report::{for_each_line, strip_ansi, Parsed};
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

pub fn parse_log<R: BufRead>(input: R, root: Option<&Path>) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    for_each_line(input, |line| {
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            return;
        };
        if event.kind != "test" {
            return;
        }
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
                let mut failure = TestFailure {
                    id,
                    kind: Some("panic".into()),
                    details: output.clone(),
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
                if event.event == "timeout" {
                    failure.kind = Some("timeout".into());
                }
                parsed.push_failure(failure);
            }
            _ => {}
        }
    })?;
    Ok(parsed)
}

/// The skipped count in nextest's summary line on stderr
/// (`Summary [   0.019s] 5 tests run: 2 passed, 3 failed, 1 skipped`).
pub fn summary_skipped(stderr: &str) -> Option<u64> {
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
    fn the_summary_counts_the_skipped() {
        let stderr = "     Summary [   0.019s] 5 tests run: 2 passed, 3 failed, 1 skipped\n";
        assert_eq!(super::summary_skipped(stderr), Some(1));
        assert_eq!(
            super::summary_skipped("Summary [ 1s] 2 tests run: 2 passed\n"),
            None
        );
    }
}
