//! Jest's `--json` report, which Vitest's `--reporter=json` imitates: one JSON document with a
//! result per test file and per test. Ids are the test file (relative to the project), the
//! enclosing `describe` titles and the test title, joined with ` > `.
//!
//! Exit codes (both): 0 passed, 1 failures or no tests found. A test file that cannot be loaded
//! has no test results, only a message.

use std::path::Path;

use serde::Deserialize;

use super::frames::{path_of_url, project_relative};
use super::report::{strip_ansi, Parsed};
use crate::run_document::TestFailure;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    #[serde(default)]
    test_results: Vec<FileResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
}

/// One test's result (also the reporter's events, `jest_events`, whose start has no status).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Assertion {
    #[serde(default)]
    ancestor_titles: Vec<String>,
    title: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    failure_messages: Vec<String>,
    #[serde(default)]
    location: Option<Location>,
}

#[derive(Deserialize)]
struct Location {
    line: u32,
}

/// Reads the report out of the runner's stdout (the JSON document starts its last `{` line,
/// after anything the tests printed; vitest may end the line with "JSON report written to …").
pub(crate) fn parse(stdout: &str, root: Option<&Path>) -> Result<Parsed, String> {
    let json = stdout
        .lines()
        .rev()
        .find(|line| line.trim_start().starts_with('{'))
        .unwrap_or("");
    let report: Report = serde_json::Deserializer::from_str(json)
        .into_iter()
        .next()
        .unwrap_or_else(|| serde_json::from_str(""))
        .map_err(|err| format!("no JSON report in the output ({err})"))?;
    let mut parsed = Parsed::default();
    let mut unloadable = 0;
    for file in &report.test_results {
        let relative = project_relative(&file.name, root).unwrap_or_else(|| file.name.clone());
        if file.assertion_results.is_empty() && file.status == "failed" {
            // The file did not load (a syntax error, a missing module).
            unloadable += 1;
            parsed.counts.errors += 1;
            let message = file
                .message
                .as_deref()
                .map(|m| strip_ansi(m).into_owned())
                .unwrap_or_default();
            let first = message
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('●'))
                .unwrap_or("")
                .to_string();
            parsed.push_failure(TestFailure {
                id: relative.clone(),
                file: Some(relative.clone()),
                line: None,
                kind: Some("load_error".into()),
                message: first,
                details: message,
            });
            continue;
        }
        for test in &file.assertion_results {
            count(&mut parsed, &relative, test, root);
        }
    }
    if unloadable > 0 && unloadable == report.test_results.len() {
        parsed.build_failed = true;
        parsed.build_error = parsed
            .failures
            .first()
            .map(|f| format!("{}: {}", f.id, f.message));
    }
    Ok(parsed)
}

/// Counts a test of `file` (relative to the project) that ended, and lists it when it failed.
pub(super) fn count(parsed: &mut Parsed, file: &str, test: &Assertion, root: Option<&Path>) {
    match test.status.as_str() {
        "passed" => parsed.counts.passed += 1,
        "failed" => {
            parsed.counts.failed += 1;
            parsed.push_failure(failure(file, test, root));
        }
        _ => parsed.counts.skipped += 1,
    }
}

/// A test's id: its file, the enclosing `describe` titles and its own, joined with ` > `.
pub(super) fn id(file: &str, test: &Assertion) -> String {
    let mut id = vec![file];
    id.extend(test.ancestor_titles.iter().map(String::as_str));
    id.push(&test.title);
    id.join(" > ")
}

fn failure(file: &str, test: &Assertion, root: Option<&Path>) -> TestFailure {
    let text = strip_ansi(&test.failure_messages.join("\n")).into_owned();
    // The message is everything before the stack, on one line: a ZodError's is a JSON list over
    // many lines, whose first line is only `[`.
    let before_stack: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with("at "))
        .filter(|line| !line.is_empty())
        .collect();
    let whole = before_stack.join(" ");
    let (kind, mut message) = match whole.split_once(": ") {
        Some((kind, rest)) if !kind.contains(' ') => (Some(kind.to_string()), rest.to_string()),
        _ => (None, whole.clone()),
    };
    // Jest's matchers put the values on lines of their own: those come after, as below.
    if let Some(end) = message
        .find(" Expected")
        .or_else(|| message.find(" Received"))
    {
        message.truncate(end);
    }
    // Jest's matchers say what differed on their own lines.
    let values: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("Expected") || l.starts_with("Received"))
        .take(2)
        .collect();
    if !values.is_empty() {
        message = format!("{message} ({})", values.join(", "));
    }
    // The innermost frame inside the project: the first `at ... (path:line:col)` that is.
    let frame = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("at "))
        .find_map(|frame| {
            let inner = frame
                .rsplit_once('(')
                .map_or(frame, |(_, rest)| rest.trim_end_matches(')'));
            let inner = path_of_url(inner);
            let mut parts = inner.rsplitn(3, ':');
            let _column = parts.next()?;
            let line: u32 = parts.next()?.parse().ok()?;
            Some((project_relative(parts.next()?, root)?, line))
        });
    let (file_path, line) = match frame {
        Some((path, line)) => (Some(path), Some(line)),
        None => (
            Some(file.to_string()),
            test.location.as_ref().map(|l| l.line),
        ),
    };
    TestFailure {
        id: id(file, test),
        file: file_path,
        line,
        kind,
        message,
        details: text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_over_many_lines_is_summed_up_on_one() {
        let zod = "ZodError: [\n  {\n    \"code\": \"invalid_type\",\n    \"expected\": \"string\",\n    \"received\": \"number\",\n    \"path\": [\"name\"]\n  }\n]\n    at Object.parse (file:///p/src/schema.js:12:9)\n    at file:///p/test/schema.test.js:5:3";
        let report = serde_json::json!({"testResults": [{"name": "/p/test/schema.test.js", "status": "failed",
            "assertionResults": [{"ancestorTitles": ["schema"], "title": "rejects numbers", "status": "failed",
                                  "failureMessages": [zod]}]}]});
        let parsed = parse(&report.to_string(), Some(Path::new("/p"))).unwrap();
        let failure = &parsed.failures[0];
        assert_eq!(failure.kind.as_deref(), Some("ZodError"));
        assert!(
            failure
                .message
                .starts_with(r#"[ { "code": "invalid_type", "expected": "string""#),
            "{}",
            failure.message
        );
        assert!(
            failure.details.contains("\"path\": [\"name\"]"),
            "{}",
            failure.details
        );
        assert_eq!(
            (failure.file.as_deref(), failure.line),
            (Some("src/schema.js"), Some(12))
        );
        let jest = "Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 3\nReceived: 2\n    at Object.<anonymous> (/p/test/a.test.js:4:17)";
        let report = serde_json::json!({"testResults": [{"name": "/p/test/a.test.js", "status": "failed",
            "assertionResults": [{"title": "adds", "status": "failed", "failureMessages": [jest]}]}]});
        let parsed = parse(&report.to_string(), Some(Path::new("/p"))).unwrap();
        assert_eq!(
            parsed.failures[0].message,
            "expect(received).toBe(expected) // Object.is equality (Expected: 3, Received: 2)"
        );
    }
}
