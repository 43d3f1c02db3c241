//! `node --test` with the TAP reporter (`--test-reporter=tap`; Node 23+ no longer picks TAP by
//! itself when stdout is not a terminal), read as a stream. Ids are the names of the enclosing
//! suites and the test, joined with ` > `.
//!
//! Exit codes: 0 passed (also when no test ran), 1 failures (a test file that cannot load is a
//! failure too).

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use super::frames::{path_of_url, project_relative};
use super::report::{for_each_line, Parsed, MAX_DETAILS};
use crate::run_document::{Counts, TestFailure};

/// A `not ok` test whose YAML block is being read.
struct Pending {
    failure: TestFailure,
    /// Indentation of the block's keys.
    indent: usize,
    /// The key whose `|-` block the following lines belong to.
    block_key: Option<String>,
    is_suite: bool,
    error: String,
    stack: String,
    /// What the test file printed before its result (`# ` lines): a file that could not load
    /// shows its error there.
    printed: Vec<String>,
    /// `failureType: 'testCodeFailure'`: the failure is the test's own code (or file) failing.
    test_code_failure: bool,
    /// `failureType: 'hookFailed'`: a `before`/`after` hook threw; its tests were cancelled,
    /// and this (often a suite's) failure is the one that says why.
    hook_failed: bool,
    /// The file that defines the test (its `location`), as node gave it.
    defined_in: Option<String>,
}

pub(crate) fn parse_log<R: BufRead>(input: R, root: Option<&Path>) -> Result<Parsed, String> {
    let mut log = Log {
        root,
        ..Log::default()
    };
    for_each_line(input, |line| log.line(line))?;
    Ok(log.finish())
}

/// The project file that defines each failed test of a `node --test` log, by id: ids do not
/// name their file, and the file of a failure's innermost frame may be the code under test.
pub(crate) fn failed_tests_files(log: &str, root: &Path) -> BTreeMap<String, String> {
    let mut reader = Log {
        root: Some(root),
        ..Log::default()
    };
    for line in log.lines() {
        reader.line(line);
    }
    reader.end_pending();
    reader.defined_in
}

/// What the log said so far.
#[derive(Default)]
struct Log<'a> {
    parsed: Parsed,
    /// Names of the subtests we are inside, by depth: at the end, those that had not ended.
    names: Vec<String>,
    /// For each of them, whether a result came from inside it: then it is a suite, not a test.
    holds_results: Vec<bool>,
    /// The tests' results as they came, for a run stopped before node's own summary.
    seen: Counts,
    pending: Option<Pending>,
    /// Node's own summary (`# pass 3`).
    summary: Counts,
    saw_summary: bool,
    /// What the test file printed since the last result (`# ` lines).
    printed: Vec<String>,
    files_not_loaded: usize,
    /// The file that defines each failed test, by id.
    defined_in: BTreeMap<String, String>,
    root: Option<&'a Path>,
}

impl Log<'_> {
    fn line(&mut self, line: &str) {
        let indent = line.len() - line.trim_start().len();
        let text = line.trim_start();

        if let Some(current) = self.pending.as_mut() {
            if indent == current.indent && text == "..." {
                self.end_pending();
                return;
            }
            if indent >= current.indent && text != "---" {
                read_yaml_line(current, indent, text);
                return;
            }
            if text == "---" {
                return;
            }
            self.end_pending();
        }
        let depth = indent / 4;
        if let Some(name) = text.strip_prefix("# Subtest: ") {
            self.names.truncate(depth);
            self.names
                .push(crate::text::cut(&unescape(name), super::report::MAX_ID).to_string());
            self.holds_results.truncate(depth);
            self.holds_results.push(false);
            return;
        }
        let result = text
            .strip_prefix("not ok ")
            .map(|rest| (false, rest))
            .or_else(|| text.strip_prefix("ok ").map(|rest| (true, rest)));
        if let Some((ok, rest)) = result {
            self.count_result(depth, ok, rest);
        }
        if let Some(rest) = text.strip_prefix("not ok ") {
            self.not_ok(indent, depth, rest);
            return;
        }
        if text.starts_with("ok ") {
            self.printed.clear();
        }
        if let Some(rest) = text.strip_prefix("# ") {
            self.comment(rest);
        }
    }

    /// The `not ok` whose block was being read, recorded.
    fn end_pending(&mut self) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        let file = pending.defined_in.as_deref().filter(|_| !pending.is_suite);
        if let Some(file) = file.and_then(|file| project_relative(file, self.root)) {
            self.defined_in.insert(pending.failure.id.clone(), file);
        }
        self.files_not_loaded += finish(&mut self.parsed, pending, self.root);
    }

    /// An `ok` or `not ok` line at `depth`, counted when it is a test's (not a suite's).
    fn count_result(&mut self, depth: usize, ok: bool, rest: &str) {
        if !self.holds_results.get(depth).copied().unwrap_or(false) {
            let directive = rest.split_once(" # ").map(|(_, d)| d.to_ascii_uppercase());
            match directive.as_deref() {
                Some(d) if d.starts_with("SKIP") || d.starts_with("TODO") => self.seen.skipped += 1,
                _ if ok => self.seen.passed += 1,
                _ => self.seen.failed += 1,
            }
        }
        if let Some(parent) = depth
            .checked_sub(1)
            .and_then(|d| self.holds_results.get_mut(d))
        {
            *parent = true;
        }
        self.names.truncate(depth);
        self.holds_results.truncate(depth);
    }

    /// A `not ok` line: its YAML block is read next.
    fn not_ok(&mut self, indent: usize, depth: usize, rest: &str) {
        let name = rest.split_once(" - ").map_or(rest, |(_, name)| name);
        let name = name.split(" # ").next().unwrap_or(name);
        let mut path: Vec<String> = self.names.iter().take(depth).cloned().collect();
        path.push(unescape(name));
        self.pending = Some(Pending {
            failure: TestFailure {
                id: path.join(" > "),
                ..TestFailure::default()
            },
            indent: indent + 2,
            block_key: None,
            is_suite: false,
            error: String::new(),
            stack: String::new(),
            printed: std::mem::take(&mut self.printed),
            test_code_failure: false,
            hook_failed: false,
            defined_in: None,
        });
    }

    /// A `# ` line: node's summary (`# pass 3`), or what a test file printed.
    fn comment(&mut self, rest: &str) {
        let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
        let Ok(n) = value.trim().parse::<u64>() else {
            if self.printed.len() < 50 {
                self.printed.push(rest.to_string());
            }
            return;
        };
        self.saw_summary |= matches!(key, "tests" | "pass" | "fail");
        match key {
            "pass" => self.summary.passed += n,
            "fail" | "cancelled" => self.summary.failed += n,
            "skipped" | "todo" => self.summary.skipped += n,
            _ => {}
        }
    }

    /// The last failure, the counts (node's summary, else what was seen) and whether the
    /// suite built at all.
    fn finish(mut self) -> Parsed {
        self.end_pending();
        let mut parsed = self.parsed;
        let files_not_loaded = self.files_not_loaded;
        if self.saw_summary {
            parsed.counts = self.summary;
        } else {
            // Stopped before its summary (a timeout): what ended, and what had started and not.
            parsed.counts = self.seen;
            if !self.names.is_empty() {
                parsed.running.push(self.names.join(" > "));
            }
        }
        // No test file loaded: the suite did not build, as with jest.
        if files_not_loaded > 0
            && parsed.counts.passed == 0
            && files_not_loaded == parsed.failures.len()
        {
            parsed.build_failed = true;
            parsed.build_error = parsed.failures.first().map(|f| {
                format!(
                    "{}: {}: {}",
                    f.file.as_deref().unwrap_or(&f.id),
                    f.kind.as_deref().unwrap_or(""),
                    f.message
                )
            });
        }
        parsed
    }
}

fn read_yaml_line(pending: &mut Pending, indent: usize, text: &str) {
    if indent > pending.indent {
        let target = match pending.block_key.as_deref() {
            Some("error") => &mut pending.error,
            Some("stack") => &mut pending.stack,
            _ => return,
        };
        if target.len() < MAX_DETAILS {
            target.push_str(text);
            target.push('\n');
        }
        return;
    }
    let Some((key, value)) = text.split_once(':') else {
        return;
    };
    let value = unquote(value.trim());
    pending.block_key = None;
    match key {
        "type" => pending.is_suite = value == "suite",
        "failureType" if value == "subtestsFailed" => pending.is_suite = true,
        "failureType" if value == "hookFailed" => pending.hook_failed = true,
        "failureType" => pending.test_code_failure = value == "testCodeFailure",
        "name" => pending.failure.kind = Some(value.to_string()),
        "code" if pending.failure.kind.is_none() => pending.failure.kind = Some(value.to_string()),
        "location" => {
            if let Some((file, line)) = location(value) {
                pending.defined_in = Some(file.clone());
                pending.failure.file.get_or_insert(file);
                pending.failure.line.get_or_insert(line);
            }
        }
        "error" | "stack" if value == "|-" || value == "|" => {
            pending.block_key = Some(key.to_string())
        }
        "error" => pending.error = format!("{value}\n"),
        _ => {}
    }
}

/// Records a finished `not ok` (suites that failed only through their tests are not tests);
/// returns 1 for a test file that could not load.
fn finish(parsed: &mut Parsed, mut pending: Pending, root: Option<&Path>) -> usize {
    if pending.is_suite && !pending.hook_failed {
        return 0;
    }
    if pending.hook_failed {
        pending.failure.kind = Some("hook_failed".into());
    }
    // A file that could not load is a top-level result named after the file, and what it
    // printed starts with that file's error location.
    if pending.failure.kind.as_deref() == Some("ERR_TEST_FAILURE") && pending.test_code_failure {
        if let Some(fault) = load_error(&pending.printed, &pending.failure.id, root) {
            pending.failure.file = Some(fault.0);
            pending.failure.line = Some(fault.1);
            pending.failure.kind = Some(fault.2);
            pending.failure.message = fault.3;
            pending.failure.details = pending.printed.join("\n");
            parsed.push_failure(pending.failure);
            return 1;
        }
    }
    // The innermost frame inside the project is the first one of the stack that is.
    if let Some((file, line)) = pending
        .stack
        .lines()
        .find_map(|frame| stack_frame(frame, root))
    {
        pending.failure.file = Some(file);
        pending.failure.line = Some(line);
    } else if let Some(file) = pending.failure.file.take() {
        pending.failure.file = project_relative(&file, root);
    }
    // Node's assertion errors put the point on the line after a heading ending in ':'.
    let mut lines = pending
        .error
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    pending.failure.message = match (first.ends_with(':'), lines.next()) {
        (true, Some(next)) => format!("{first} {next}"),
        _ => first.to_string(),
    };
    pending.failure.details = format!("{}{}", pending.error, pending.stack);
    parsed.push_failure(pending.failure);
    0
}

/// A test file `name` that could not load, from what Node printed: `/path/x.test.js:1`, the
/// code, a caret, then `SyntaxError: message` → (project path, line, kind, message).
fn load_error(
    printed: &[String],
    name: &str,
    root: Option<&Path>,
) -> Option<(String, u32, String, String)> {
    // `/path/x.test.js:1`, or `file:///path/x.test.mjs:1` for an ES module.
    let (file, line) = printed.iter().find_map(|line| {
        let (file, number) = line.trim().rsplit_once(':')?;
        let file = path_of_url(file);
        (file == name).then_some(())?;
        Some((project_relative(&file, root)?, number.parse().ok()?))
    })?;
    let (kind, message) = printed.iter().find_map(|line| {
        let (kind, message) = line.split_once(": ")?;
        let is_kind = kind.ends_with("Error") && kind.chars().all(|c| c.is_ascii_alphanumeric());
        is_kind.then(|| (kind.to_string(), message.to_string()))
    })?;
    Some((file, line, kind, message))
}

/// `Name (/path/file.js:12:14)` or `/path/file.js:12:14` → (project path, 12).
fn stack_frame(frame: &str, root: Option<&Path>) -> Option<(String, u32)> {
    let inner = frame
        .rsplit_once('(')
        .map_or(frame, |(_, rest)| rest.trim_end_matches(')'));
    let (file, line) = location(&path_of_url(inner))?;
    Some((project_relative(&file, root)?, line))
}

/// `/path/file.js:12:14` → (`/path/file.js`, 12).
fn location(text: &str) -> Option<(String, u32)> {
    let mut parts = text.rsplitn(3, ':');
    let _column = parts.next()?;
    let line = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    (!file.starts_with("node:")).then(|| (file.to_string(), line))
}

/// A test name as TAP writes it (`\#` for `#`, `\\` for `\`, `\n` for a newline) back to the
/// name the test was given, which is what node's --test-name-pattern matches.
fn unescape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn unquote(value: &str) -> &str {
    value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Node 20's TAP of a run its timeout stopped: no summary, a suite still open.
    #[test]
    fn a_log_cut_by_a_timeout_counts_what_ended_and_names_what_ran() {
        let log = [
            "TAP version 13",
            "# Subtest: fast one",
            "ok 1 - fast one",
            "  ---",
            "  duration_ms: 2.3",
            "  ...",
            "# Subtest: fails",
            "not ok 2 - fails",
            "  ---",
            "  failureType: 'testCodeFailure'",
            "  error: '1 == 2'",
            "  ...",
            "# Subtest: later",
            "ok 3 - later # SKIP",
            "# Subtest: suite",
            "    # Subtest: inner ok",
            "    ok 1 - inner ok",
            "      ---",
            "      duration_ms: 0.4",
            "      ...",
            "    # Subtest: inner suite",
            "        # Subtest: deep",
            "        ok 1 - deep",
            "        1..1",
            "    ok 2 - inner suite",
            "      ---",
            "      type: 'suite'",
            "      ...",
        ]
        .join("\n");
        let parsed = parse_log(log.as_bytes(), None).unwrap();
        assert_eq!(
            (
                parsed.counts.passed,
                parsed.counts.failed,
                parsed.counts.skipped
            ),
            (3, 1, 1)
        );
        assert_eq!(parsed.failures[0].id, "fails");
        assert_eq!(parsed.running, ["suite"]);
    }
    /// Node 20's TAP of failed tests, one in a suite: each one's `location` is the file that
    /// defines it, though the innermost frame of one is the code under test; a suite is not a
    /// test, and a file outside the project is not the project's.
    #[test]
    fn the_failed_tests_files_are_their_locations_inside_the_project() {
        let log = [
            "TAP version 13",
            "# Subtest: adds",
            "not ok 1 - adds",
            "  ---",
            "  location: '/p/test/add.test.js:3:1'",
            "  failureType: 'testCodeFailure'",
            "  error: 'boom'",
            "  stack: |-",
            "    add (/p/calc.js:1:30)",
            "    TestContext.<anonymous> (/p/test/add.test.js:3:29)",
            "  ...",
            "# Subtest: group",
            "    # Subtest: deep # 2",
            "    not ok 1 - deep \\# 2",
            "      ---",
            "      location: '/p/test/b c.test.mjs:4:3'",
            "      ...",
            "not ok 2 - group",
            "  ---",
            "  location: '/p/test/b c.test.mjs:2:1'",
            "  type: 'suite'",
            "  ...",
            "# Subtest: outside",
            "not ok 3 - outside",
            "  ---",
            "  location: '/elsewhere/x.test.js:1:1'",
            "  ...",
        ]
        .join("\n");
        let files = failed_tests_files(&log, Path::new("/p"));
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            files,
            [
                ("adds", "test/add.test.js"),
                ("group > deep # 2", "test/b c.test.mjs"),
            ]
        );
        let parsed = parse_log(log.as_bytes(), Some(Path::new("/p"))).unwrap();
        assert_eq!(parsed.failures[0].file.as_deref(), Some("calc.js"));
    }
}
