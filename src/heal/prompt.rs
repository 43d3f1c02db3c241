//! What the model is asked. A stable prefix (the rules, the edit format with two examples, the
//! project's files) that is byte-identical on every attempt, so providers' prompt caches hold
//! it; and each attempt's message: the issue, the failures grouped by where they happen, the
//! code they run through, the change so far and one line per earlier attempt. Paths are the
//! project's own, timings are taken out (a prompt that differs only in them would not be
//! cached, and says nothing), secrets are withheld. About 12k tokens at most.

use std::collections::BTreeMap;

use regex::Regex;

use super::tree::Tree;
use super::Context;
use crate::run_document::TestFailure;
use crate::testmap::{imports, is_test_file, same_stem};

/// The prompt's size at most, in characters (about 4 a token).
pub(crate) const MAX_CHARS: usize = 48_000;
/// Files listed in the project summary at most.
const LISTED_FILES: usize = 200;
/// A file shown whole up to this many lines; a longer one around its frames.
const WHOLE_FILE_LINES: usize = 400;
/// Failure groups shown at most.
const GROUPS: usize = 3;

const RULES: &str = "You repair a software project so that its failing tests pass. You are \
shown the failing tests, their output and the code they run. Change the project's code, not its \
tests: test files are read-only and edits to them are refused. Make the smallest change that \
fixes the cause; do not reformat or rename what you do not need to. Your reply is run: every \
edit is applied and the whole test suite is run again, and a change that breaks a passing test \
is undone.

Reply with one or more SEARCH/REPLACE blocks and nothing else but a short sentence of \
explanation. Each block is: the file's path on a line of its own, a fence, `<<<<<<< SEARCH`, \
the exact lines of the file to replace (copied character for character, white space included, \
enough lines to be unique), `=======`, the lines to put there, `>>>>>>> REPLACE`, the closing \
fence. To create a file, leave the SEARCH part empty. Use several small blocks rather than one \
big one. Where the edit_file and write_file tools are offered, you may call them instead: every \
call of a reply is applied before the tests run.

Example 1 (a wrong comparison):

shop/pricing.py
```python
<<<<<<< SEARCH
    if quantity > 10:
        return 10
=======
    if quantity >= 10:
        return 10
>>>>>>> REPLACE
```

Example 2 (two changes in two files):

src/range.js
```js
<<<<<<< SEARCH
  for (let i = start; i <= end; i++) {
=======
  for (let i = start; i < end; i++) {
>>>>>>> REPLACE
```

src/index.js
```js
<<<<<<< SEARCH
export { range } from './range.js';
=======
export { range } from './range.js';
export { clamp } from './clamp.js';
>>>>>>> REPLACE
```
";

/// The stable prefix: the rules, the format and the project's files.
pub(crate) fn system(files: &[String]) -> String {
    let mut out = String::from(RULES);
    out.push_str(&file_list(files));
    out
}

/// The project's files, listed (the first `LISTED_FILES`).
pub(crate) fn file_list(files: &[String]) -> String {
    let mut out = String::from("\nThe project's files");
    if files.len() > LISTED_FILES {
        out.push_str(&format!(" (the first {LISTED_FILES} of {})", files.len()));
    }
    out.push_str(":\n");
    for file in files.iter().take(LISTED_FILES) {
        out.push_str(file);
        out.push('\n');
    }
    out
}

/// A failure group: one kind at one innermost frame, with the tests that share it.
pub(crate) struct Group<'a> {
    pub tests: Vec<&'a TestFailure>,
}

/// The failures grouped by (kind, innermost frame), in the order they were first seen.
pub(crate) fn groups(failures: &[TestFailure]) -> Vec<Group<'_>> {
    let mut order: Vec<(Option<&str>, Option<&str>, Option<u32>)> = Vec::new();
    let mut by_key: BTreeMap<usize, Vec<&TestFailure>> = BTreeMap::new();
    for failure in failures {
        let key = (
            failure.kind.as_deref(),
            failure.file.as_deref(),
            failure.line,
        );
        let index = order.iter().position(|k| *k == key).unwrap_or_else(|| {
            order.push(key);
            order.len() - 1
        });
        by_key.entry(index).or_default().push(failure);
    }
    by_key.into_values().map(|tests| Group { tests }).collect()
}

/// This attempt's message.
pub(crate) fn message(attempt: &Context, tree: &Tree, budget: usize) -> String {
    let mut out = String::new();
    if let Some(issue) = attempt.issue {
        out.push_str("## The issue\n");
        out.push_str(issue.title.trim());
        out.push('\n');
        if !issue.body.trim().is_empty() {
            out.push_str(crate::text::cut(issue.body.trim(), 3000));
            out.push('\n');
        }
        out.push('\n');
    }
    let groups = groups(attempt.failures);
    if let Some(error) = attempt.build_error {
        out.push_str("## The project does not build\n");
        out.push_str(&crate::text::tail(error, 4000));
        out.push_str("\n\n");
    }
    if !groups.is_empty() {
        out.push_str(&format!(
            "## Failing tests ({} in {} group{})\n",
            attempt.failures.len(),
            groups.len(),
            if groups.len() == 1 { "" } else { "s" }
        ));
    }
    for group in groups.iter().take(GROUPS) {
        out.push_str(&group_section(group));
    }
    if groups.len() > GROUPS {
        out.push_str(&format!(
            "\n({} more groups not shown)\n",
            groups.len() - GROUPS
        ));
    }
    let tail = message_tail(attempt);
    let code_budget = budget.saturating_sub(out.len() + tail.len() + 200);
    out.push_str(&code(attempt, tree, code_budget));
    out.push_str(&tail);
    out
}

/// One group of failures: its kind and place, up to five of its tests, the first one's
/// details.
fn group_section(group: &Group<'_>) -> String {
    let mut out = String::new();
    let first = group.tests[0];
    let place = match (&first.file, first.line) {
        (Some(file), Some(line)) => format!(" at {file}:{line}"),
        _ => String::new(),
    };
    out.push_str(&format!(
        "\n### {}{place}\n",
        first.kind.as_deref().unwrap_or("failure")
    ));
    for test in group.tests.iter().take(5) {
        out.push_str(&format!("- {}: {}\n", test.id, test.message));
    }
    if group.tests.len() > 5 {
        out.push_str(&format!("- and {} more\n", group.tests.len() - 5));
    }
    if !first.details.trim().is_empty() {
        out.push_str("```\n");
        out.push_str(&without_timings(crate::text::cut(
            first.details.trim(),
            2500,
        )));
        out.push_str("\n```\n");
    }
    out
}

/// What ends the message: the change so far, the earlier attempts, what the last reply's
/// blocks got, and what to reply.
fn message_tail(attempt: &Context) -> String {
    let mut tail = String::new();
    if !attempt.diff.is_empty() {
        tail.push_str(
            "\n## The change so far (already applied; your blocks apply on top of it)\n```diff\n",
        );
        tail.push_str(crate::text::cut(attempt.diff, 8000));
        tail.push_str("```\n");
    }
    if !attempt.history.is_empty() {
        tail.push_str("\n## Earlier attempts\n");
        for line in attempt.history {
            tail.push_str(line);
            tail.push('\n');
        }
    }
    if !attempt.feedback.is_empty() {
        tail.push_str("\n## What your last reply's blocks got\n");
        tail.push_str(crate::text::cut(attempt.feedback, 6000));
        tail.push('\n');
    }
    tail.push_str("\nReply with SEARCH/REPLACE blocks that make the failing tests pass.\n");
    tail
}

/// The code the failures run through, within `budget` characters: the project's own files named
/// in their frames and the files their tests import (whole when short, else around the frames),
/// then the failing tests' files.
fn code(attempt: &Context, tree: &Tree, budget: usize) -> String {
    let files = context_files(attempt, tree);
    let mut out = String::from("\n## The code\n");
    for (path, lines) in files {
        let Ok(Some(text)) = tree.read(&path) else {
            continue;
        };
        let shown = shown_part(&text, &lines);
        let fence = if shown.contains("```") { "````" } else { "```" };
        let block = format!(
            "\n{path}\n{fence}\n{shown}{}{fence}\n",
            if shown.ends_with('\n') { "" } else { "\n" }
        );
        if out.len() + block.len() > budget {
            out.push_str(&format!(
                "\n({path} and other files left out for length; they are in the list above)\n"
            ));
            break;
        }
        out.push_str(&block);
    }
    out
}

/// The files to show, each with the lines its frames point at: source files first.
fn context_files(attempt: &Context, tree: &Tree) -> Vec<(String, Vec<usize>)> {
    let known: std::collections::HashSet<&str> = attempt.files.iter().map(String::as_str).collect();
    let mut found: Vec<(String, Vec<usize>)> = Vec::new();
    let add = |path: &str, line: Option<usize>, found: &mut Vec<(String, Vec<usize>)>| {
        if !known.contains(path) || crate::secrets::is_credential_file(path) {
            return;
        }
        match found.iter_mut().find(|(p, _)| p == path) {
            Some((_, lines)) => lines.extend(line),
            None => found.push((path.to_string(), line.into_iter().collect())),
        }
    };
    let frame = Regex::new(r#"([A-Za-z0-9_./-]+\.[A-Za-z]{1,5})"?(?:, line |:)(\d+)"#).unwrap();
    let texts = attempt
        .failures
        .iter()
        .map(|f| f.details.as_str())
        .chain(attempt.build_error);
    for text in texts {
        for capture in frame.captures_iter(text) {
            let path = capture[1].trim_start_matches("./");
            let path = attempt
                .files
                .iter()
                .find(|known| path == known.as_str() || path.ends_with(&format!("/{known}")))
                .cloned();
            if let Some(path) = path {
                add(&path, capture[2].parse().ok(), &mut found);
            }
        }
    }
    for failure in attempt.failures {
        if let Some(file) = &failure.file {
            add(file, failure.line.map(|l| l as usize), &mut found);
        }
        let test_file = failure.id.split("::").next().unwrap_or("");
        add(test_file, None, &mut found);
    }
    let tests: Vec<String> = found
        .iter()
        .filter(|(p, _)| is_test_file(p))
        .map(|(p, _)| p.clone())
        .collect();
    for test in &tests {
        if let Ok(Some(text)) = tree.read(test) {
            for imported in imports(test, &text, attempt.files) {
                add(&imported, None, &mut found);
            }
        }
        for source in same_stem(test, attempt.files) {
            add(&source, None, &mut found);
        }
    }
    found.sort_by_key(|(path, _)| is_test_file(path));
    found
}

/// The text of a file to show: whole when short, else the regions around `lines` (or its start).
fn shown_part(text: &str, lines: &[usize]) -> String {
    let all: Vec<&str> = text.split_inclusive('\n').collect();
    if all.len() <= WHOLE_FILE_LINES {
        return text.to_string();
    }
    let mut wanted: Vec<(usize, usize)> = if lines.is_empty() {
        vec![(0, 120.min(all.len()))]
    } else {
        lines
            .iter()
            .map(|&line| {
                let at = line.saturating_sub(1).min(all.len() - 1);
                let start = (at.saturating_sub(60)..=at)
                    .rev()
                    .find(|&i| starts_a_definition(all[i]))
                    .unwrap_or(at.saturating_sub(20));
                (start, (at + 30).min(all.len()))
            })
            .collect()
    };
    wanted.sort_unstable();
    let mut out = String::new();
    let mut shown_to = 0;
    for (start, end) in wanted {
        let start = start.max(shown_to);
        if start >= end {
            continue;
        }
        if start > shown_to {
            out.push_str("...\n");
        }
        out.push_str(&all[start..end].concat());
        shown_to = end;
    }
    if shown_to < all.len() {
        out.push_str("...\n");
    }
    out
}

fn starts_a_definition(line: &str) -> bool {
    let line = line.trim_start();
    [
        "def ",
        "async def ",
        "class ",
        "fn ",
        "pub fn ",
        "pub(crate) fn ",
        "func ",
        "function ",
        "export function ",
        "impl ",
    ]
    .iter()
    .any(|start| line.starts_with(start))
}

/// Test output without durations: "in 0.03s", "(12 ms)", "0.004s".
pub(crate) fn without_timings(text: &str) -> String {
    let timing = Regex::new(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b").unwrap();
    timing.replace_all(text, "<time>").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_grouped_by_kind_and_innermost_frame() {
        let failure = |id: &str, kind: &str, line: u32| TestFailure {
            id: id.into(),
            file: Some("shop/pricing.py".into()),
            line: Some(line),
            kind: Some(kind.into()),
            ..Default::default()
        };
        let failures = [
            failure("a", "AssertionError", 8),
            failure("b", "ValueError", 8),
            failure("c", "AssertionError", 8),
        ];
        let groups = groups(&failures);
        assert_eq!(groups.len(), 2);
        assert_eq!(
            groups[0]
                .tests
                .iter()
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>(),
            ["a", "c"]
        );
    }

    #[test]
    fn timings_are_taken_out() {
        assert_eq!(
            without_timings("1 failed in 0.03s (12 ms)"),
            "1 failed in <time> (<time>)"
        );
    }

    #[test]
    fn a_long_file_is_shown_around_its_frames_from_the_definition() {
        let mut text = String::new();
        for i in 1..=1000 {
            text.push_str(&if i == 500 {
                "def target():\n".to_string()
            } else {
                format!("x{i} = {i}\n")
            });
        }
        let shown = shown_part(&text, &[510]);
        assert!(shown.starts_with("...\ndef target():\n"));
        assert!(shown.contains("x539 = 539\n") && !shown.contains("x540 = 540\n"));
    }
}
