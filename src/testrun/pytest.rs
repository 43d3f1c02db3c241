//! pytest: ids as pytest takes them back (`tests/test_x.py::TestGroup::test_y[param]`), from its
//! JUnit report when we ran it, or from its text log (`--parse`), read as a stream.
//!
//! Exit codes: 0 passed, 1 tests failed, 2 interrupted (a collection error), 3 internal error,
//! 4 usage error, 5 no tests collected.

use std::io::BufRead;
use std::path::Path;

use super::frames::project_relative;
use super::junit::{self, Case};
use super::report::{for_each_line, Parsed, Progress, MAX_DETAILS, MAX_FAILURES};
use crate::run_document::{Counts, TestFailure};

/// Reads pytest's JUnit report (written with `-o junit_family=xunit1`, which adds file and line).
pub(crate) fn from_junit<R: BufRead>(input: R, root: Option<&Path>) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    junit::read_cases(input, |case| {
        // A collection error is a test case named after the module, with no class.
        let collection_error = case.classname.is_empty() && case.status == junit::CaseStatus::Error;
        if collection_error {
            parsed.build_failed = true;
            parsed
                .build_error
                .get_or_insert_with(|| crate::text::one_line(&case.text, 300));
        }
        junit::count_case(&mut parsed, &case, || failure_from_case(&case, root))
    })?;
    Ok(parsed)
}

fn failure_from_case(case: &Case, root: Option<&Path>) -> TestFailure {
    if let Some(error) = syntax_error(&case.text, root) {
        return TestFailure {
            id: case_id(case),
            file: Some(error.file),
            line: Some(error.line),
            kind: Some(error.kind),
            message: error.message,
            details: case.text.clone(),
        };
    }
    let location = innermost_location(case.text.lines(), root);
    let file = location
        .as_ref()
        .map(|l| l.0.clone())
        .or_else(|| case.file.clone());
    let line = location.as_ref().map(|l| l.1).or(case.line);
    let kind = location.and_then(|l| l.2).or_else(|| case.kind.clone());
    let message = if case.message.is_empty() {
        error_line(&case.text).unwrap_or_default()
    } else {
        case.message.clone()
    };
    TestFailure {
        id: case_id(case),
        file,
        line,
        kind,
        message,
        details: case.text.clone(),
    }
}

/// The pytest node id of a JUnit test case.
fn case_id(case: &Case) -> String {
    if case.classname.is_empty() {
        // Collection errors: the name is the module, dotted.
        return case
            .file
            .clone()
            .unwrap_or_else(|| format!("{}.py", case.name.replace('.', "/")));
    }
    let file = case
        .file
        .clone()
        .unwrap_or_else(|| guess_file(&case.classname));
    let module = file.trim_end_matches(".py").replace('/', ".");
    let classes = case
        .classname
        .strip_prefix(&module)
        .unwrap_or("")
        .trim_start_matches('.');
    let mut id = file;
    for class in classes.split('.').filter(|c| !c.is_empty()) {
        id.push_str("::");
        id.push_str(class);
    }
    id.push_str("::");
    id.push_str(&case.name);
    id
}

/// Without a `file` attribute: module parts until the first capitalised one (a class).
fn guess_file(classname: &str) -> String {
    let parts: Vec<&str> = classname
        .split('.')
        .take_while(|p| !p.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect();
    format!("{}.py", parts.join("/"))
}

/// The last `path:line: Kind` line of a pytest traceback whose path is in the project.
fn innermost_location<'a>(
    lines: impl Iterator<Item = &'a str>,
    root: Option<&Path>,
) -> Option<(String, u32, Option<String>)> {
    lines.filter_map(|line| location_line(line, root)).last()
}

/// Parses `path/to/file.py:12: Kind` (the kind may be empty) when the path is in the project.
fn location_line(line: &str, root: Option<&Path>) -> Option<(String, u32, Option<String>)> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let (path, rest) = line.split_once(".py:")?;
    let (number, kind) = rest.split_once(':')?;
    let number: u32 = number.parse().ok()?;
    let file = project_relative(&format!("{path}.py"), root)?;
    // `path:12: Kind` ends a traceback; `path:12: in function` is a frame on the way.
    let kind = kind.trim();
    let is_kind = !kind.is_empty() && !kind.contains(char::is_whitespace);
    Some((file, number, is_kind.then(|| kind.to_string())))
}

/// A file that did not compile, as Python shows it in a traceback's `E` lines:
/// `File "path", line N`, the code and a caret, then `SyntaxError: message`.
struct SyntaxFault {
    file: String,
    line: u32,
    kind: String,
    message: String,
}

fn syntax_error(text: &str, root: Option<&Path>) -> Option<SyntaxFault> {
    let mut errors = text
        .lines()
        .filter_map(|line| line.strip_prefix("E "))
        .map(str::trim);
    let (file, line) = errors.find_map(|line| {
        let rest = line.strip_prefix("File \"")?;
        let (path, rest) = rest.split_once("\", line ")?;
        let number: u32 = rest
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        Some((project_relative(path, root)?, number))
    })?;
    let (kind, message) = errors.find_map(|line| {
        let (kind, message) = line.split_once(": ")?;
        let is_kind = kind.ends_with("Error") && kind.chars().all(|c| c.is_ascii_alphanumeric());
        is_kind.then(|| (kind.to_string(), message.to_string()))
    })?;
    Some(SyntaxFault {
        file,
        line,
        kind,
        message,
    })
}

/// A conftest.py that did not load (pytest exits 4 before collecting, on stderr):
/// `ImportError while loading conftest '/abs/tests/conftest.py'.`, the frames, `E   Kind: msg`.
/// It is the project's code that failed to build, as a test file that does not import is.
pub(crate) fn conftest_error(stderr: &str, root: Option<&Path>) -> Option<TestFailure> {
    let start = stderr.find("ImportError while loading conftest '")?;
    let text = &stderr[start..];
    let path = text.split('\'').nth(1)?;
    let file = project_relative(path, root).unwrap_or_else(|| path.to_string());
    let location = innermost_location(text.lines(), root);
    let error = error_line(text).unwrap_or_else(|| "cannot load the conftest".into());
    let kind = message_kind(&error);
    Some(TestFailure {
        id: file.clone(),
        file: Some(location.as_ref().map_or(file, |l| l.0.clone())),
        line: location.as_ref().map(|l| l.1),
        kind,
        message: error,
        details: text.to_string(),
    })
}

/// `ValueError: bad` → `ValueError` (none when what precedes the colon is not one word).
fn message_kind(message: &str) -> Option<String> {
    message
        .split_once(':')
        .map(|(kind, _)| kind.to_string())
        .filter(|kind| !kind.contains(' '))
}

/// The first `E   ...` line of a pytest failure: the error as pytest shows it.
fn error_line(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("E ").map(|m| m.trim().to_string()))
}

/// What a block says went wrong: its `E` line or, for a file that cannot be collected and that
/// pytest explains in its own words (a fixture called directly), the first line.
fn block_message(block: &Block) -> Option<String> {
    error_line(&block.text).or_else(|| {
        let first = block.text.lines().map(str::trim).find(|l| !l.is_empty());
        first
            .filter(|_| block.title.starts_with("ERROR collecting "))
            .map(str::to_string)
    })
}

/// Where the text parser is in pytest's output.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Section {
    #[default]
    Other,
    Failures,
    Summary,
}

/// A `____ title ____` block of the FAILURES or ERRORS section.
struct Block {
    title: String,
    text: String,
    location: Option<(String, u32, Option<String>)>,
    /// From the ERRORS section (setup, teardown, collection), not FAILURES.
    is_error: bool,
}

/// Reads pytest's text output as a stream: memory stays bounded whatever the log's size.
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
    section: Section,
    blocks: Vec<Block>,
    /// The short summary's lines: (is an error, id, subtest label, message).
    summary: Vec<(bool, String, String, String)>,
    summary_omitted: u64,
    final_counts: Option<Counts>,
    /// Whether the current block is kept (blocks past the cap are not).
    collecting: bool,
    in_errors: bool,
    /// What `-v`'s `id RESULT [ n%]` lines said, for a run stopped before its report.
    progress: Progress,
    root: Option<&'a Path>,
}

impl Log<'_> {
    fn line(&mut self, line: &str) {
        if (line.starts_with("===") || line.starts_with("___")) && self.banner(line) {
            return;
        }
        match self.section {
            Section::Failures => {
                if let Some(block) = self.blocks.last_mut().filter(|_| self.collecting) {
                    if block.text.len() < MAX_DETAILS * 2 {
                        block.text.push_str(line);
                        block.text.push('\n');
                    }
                    if let Some(location) = location_line(line, self.root) {
                        block.location = Some(location);
                    }
                }
            }
            Section::Summary | Section::Other
                if !line.starts_with(char::is_whitespace) && parse_counts(line).is_some() =>
            {
                // `-q` ends with the counts on a line of their own.
                self.final_counts = parse_counts(line);
            }
            Section::Summary => self.summary_line(line),
            Section::Other => progress_line(&mut self.progress, line),
        }
    }

    /// A `=== title ===` line (a section, or the final counts) or a `___ title ___` one (a
    /// block of the FAILURES or ERRORS section); false for a line that is neither.
    fn banner(&mut self, line: &str) -> bool {
        if let Some(title) = banner_title(line, '=') {
            self.in_errors = title == "ERRORS";
            self.section = match title {
                "FAILURES" | "ERRORS" => Section::Failures,
                "short test summary info" => Section::Summary,
                _ => Section::Other,
            };
            if let Some(counts) = parse_counts(title) {
                self.final_counts = Some(counts);
            }
            return true;
        }
        if self.section != Section::Failures {
            return false;
        }
        let Some(title) = banner_title(line, '_') else {
            return false;
        };
        // Blocks past the cap are skipped, not run into the last one kept.
        self.collecting = self.blocks.len() < MAX_FAILURES;
        if self.collecting {
            self.blocks.push(Block {
                title: title.to_string(),
                text: String::new(),
                location: None,
                is_error: self.in_errors,
            });
        }
        true
    }

    /// A line of the short test summary: `FAILED id - message` (pytest 3's `FAIL id`), `ERROR
    /// id`, a subtest's.
    fn summary_line(&mut self, line: &str) {
        // pytest before 4 writes `FAIL path::test`, with no message.
        let failed = line
            .strip_prefix("FAILED ")
            .or_else(|| line.strip_prefix("FAIL "));
        let (is_error, label, rest) = if let Some(rest) = failed {
            (false, "", rest)
        } else if let Some(rest) = line.strip_prefix("ERROR ") {
            (true, "", rest)
        } else if let Some(rest) = line.strip_prefix("SUBFAILED") {
            // A failed subtest: `SUBFAILED[msg] (i=1) path::test - message`.
            let (label, rest) = subtest_label(rest);
            (false, label, rest)
        } else {
            return;
        };
        let (id, message) = summary_id_and_message(rest);
        if self.summary.len() < MAX_FAILURES {
            self.summary.push((
                is_error,
                id.to_string(),
                label.to_string(),
                message.to_string(),
            ));
        } else {
            self.summary_omitted += 1;
        }
    }

    /// The failures (the summary's lines with their blocks, or the blocks alone) and the
    /// counts.
    fn finish(self) -> Parsed {
        let root = self.root;
        let mut parsed = Parsed::default();
        let mut listed = 0u64;
        let mut collection_error = false;
        if self.summary.is_empty() {
            // No summary (-rN, or a log cut short): the blocks are all there is.
            for block in self.blocks {
                collection_error |= block.title.starts_with("ERROR collecting ");
                let id = block_key(&block.title).to_string();
                listed += 1;
                let message = block_message(&block).unwrap_or_default();
                push(&mut parsed, id, message, Some(&block), root);
            }
        } else {
            let mut used = vec![false; self.blocks.len()];
            for (is_error, id, label, message) in self.summary {
                let mut key = id_key(&id);
                if !label.is_empty() {
                    // A subtest's block: `T.test_sub (i=1)`.
                    key = format!("{key} {label}");
                }
                let block = matching_block(&self.blocks, &mut used, &key, &id, is_error);
                let message = if message.is_empty() {
                    block.and_then(block_message).unwrap_or_default()
                } else {
                    message
                };
                // The subtest is named in the message: its test's id is what pytest takes back.
                let message = if label.is_empty() {
                    message
                } else {
                    format!("{message} [subtest {label}]")
                };
                if is_error && !id.contains("::") {
                    collection_error = true;
                    let said = match block.and_then(|b| syntax_error(&b.text, root)) {
                        Some(error) => format!("{}:{}: {}", error.file, error.line, error.message),
                        None => message.clone(),
                    };
                    parsed
                        .build_error
                        .get_or_insert_with(|| format!("{id}: {said}"));
                }
                listed += 1;
                push(&mut parsed, id, message, block, root);
            }
        }
        parsed.failures_omitted += self.summary_omitted;
        // Without the final counts (a run stopped, a log cut short): the per-test lines' counts.
        parsed.counts = match self.final_counts {
            Some(counts) => counts,
            None => self
                .progress
                .finish(&mut parsed, "pytest")
                .unwrap_or(Counts {
                    failed: listed + self.summary_omitted,
                    ..Counts::default()
                }),
        };
        // A file that cannot be collected stops the run (nothing ran: the build failed),
        // unless it went on without it (`--continue-on-collection-errors`): then the file is
        // one more failure among the results.
        let counts = &parsed.counts;
        parsed.build_failed = collection_error && counts.total() == counts.errors;
        if !parsed.build_failed {
            parsed.build_error = None;
        }
        parsed
    }
}

/// The lines `-v` writes for each test: its id as it starts, its result as it ends
/// (`tests/test_x.py::test_y PASSED    [ 50%]`); a test still running is an id alone. With
/// `-s`, what the test prints comes between the two, and the result may start a line.
fn progress_line(progress: &mut Progress, line: &str) {
    const RESULTS: [&str; 6] = ["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS"];
    if line.starts_with(char::is_whitespace) {
        return;
    }
    let line = match line.trim_end().strip_suffix(']') {
        Some(rest) if rest.ends_with('%') => rest.rsplit_once(" [").map_or(line, |(l, _)| l),
        _ => line,
    };
    let line = line.trim_end();
    let result_of = |text: &str| {
        text.split_whitespace()
            .find_map(|word| RESULTS.into_iter().find(|result| *result == word))
    };
    let (id, result) = if line.contains("::") && !line[..line.find("::").unwrap()].contains(' ') {
        let id = id_part(line);
        (id.to_string(), result_of(&line[id.len()..]))
    } else if let (Some(running), Some(result)) = (
        progress.running(),
        RESULTS
            .into_iter()
            .find(|result| line.split(' ').next() == Some(*result)),
    ) {
        (running.to_string(), Some(result))
    } else {
        return;
    };
    let Some(result) = result else {
        progress.started(id);
        return;
    };
    let counts = &mut progress.counts;
    match result {
        "PASSED" => counts.passed += 1,
        "FAILED" => counts.failed += 1,
        "ERROR" => counts.errors += 1,
        "SKIPPED" => counts.skipped += 1,
        "XFAIL" => counts.xfailed += 1,
        _ => counts.xpassed += 1,
    }
    progress.ended(id, matches!(result, "FAILED" | "ERROR"));
}

/// A test id at the start of `line`: up to the first space outside its parameters' brackets
/// (`test_p[odd id] PASSED`).
fn id_part(line: &str) -> &str {
    let mut depth = 0usize;
    for (at, c) in line.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 => return &line[..at],
            _ => {}
        }
    }
    line
}

/// `path::test[params] - message`: the id ends at the first ` - `, unless that falls inside the
/// parameters' brackets (`test_eq[x - y]`), where it ends at the bracket.
fn summary_id_and_message(rest: &str) -> (&str, &str) {
    let bracketed_end = rest
        .find('[')
        .filter(|&open| !rest[..open].contains(" - "))
        .and_then(|open| {
            rest[open..]
                .find("] - ")
                .map(|close| open + close + 1)
                .or_else(|| rest.ends_with(']').then_some(rest.len()))
        });
    match bracketed_end {
        Some(end) => (&rest[..end], rest[end..].strip_prefix(" - ").unwrap_or("")),
        None => rest.split_once(" - ").unwrap_or((rest, "")),
    }
}

/// The block a summary line stands for. Titles name only the test (`test_zero`), so the same
/// title can come from two files, and a test that failed and then erred in teardown has a
/// block in each section: the block of the same section that shows the test's file wins, and
/// each block serves once while another will do.
fn matching_block<'a>(
    blocks: &'a [Block],
    used: &mut [bool],
    key: &str,
    id: &str,
    is_error: bool,
) -> Option<&'a Block> {
    let file = id.split("::").next().filter(|file| file.ends_with(".py"));
    let shows_file =
        |block: &Block| file.is_some_and(|file| block.text.contains(&format!("{file}:")));
    let best = blocks
        .iter()
        .enumerate()
        .filter(|(_, block)| block_key(&block.title) == key)
        .max_by_key(|&(index, block)| {
            (
                !used[index],
                block.is_error == is_error,
                shows_file(block),
                std::cmp::Reverse(index),
            )
        })
        .map(|(index, _)| index)?;
    used[best] = true;
    Some(&blocks[best])
}

fn push(
    parsed: &mut Parsed,
    id: String,
    message: String,
    block: Option<&Block>,
    root: Option<&Path>,
) {
    if let Some(error) = block.and_then(|b| syntax_error(&b.text, root)) {
        parsed.push_failure(TestFailure {
            id,
            file: Some(error.file),
            line: Some(error.line),
            kind: Some(error.kind),
            message: error.message,
            details: block.map(|b| b.text.clone()).unwrap_or_default(),
        });
        return;
    }
    let location = block.and_then(|b| b.location.clone());
    let file = location.as_ref().map(|l| l.0.clone()).or_else(|| {
        id.split("::")
            .next()
            .filter(|f| f.ends_with(".py"))
            .map(String::from)
    });
    parsed.push_failure(TestFailure {
        id,
        file,
        line: location.as_ref().map(|l| l.1),
        kind: location
            .and_then(|l| l.2)
            .or_else(|| message_kind(&message)),
        message,
        details: block.map(|b| b.text.clone()).unwrap_or_default(),
    });
}

/// `==== title ====` → `title` (`fill` is the banner character).
fn banner_title(line: &str, fill: char) -> Option<&str> {
    let inner = line.trim_start_matches(fill).trim_end_matches(fill);
    // `_ _ _ _` separates frames inside a failure; it is not a title.
    let titled = inner.chars().any(|c| c != fill && c != ' ');
    (titled && inner.len() < line.len() && line.ends_with(fill) && inner.starts_with(' '))
        .then(|| inner.trim())
}

/// The block title for a summary id: `tests/x.py::Class::test[p]` → `Class.test[p]`.
fn id_key(id: &str) -> String {
    match id.split_once("::") {
        Some((_, rest)) => rest.replace("::", "."),
        None => id.to_string(),
    }
}

/// What a block title names: `ERROR at setup of test_x` → `test_x`.
fn block_key(title: &str) -> &str {
    for prefix in [
        "ERROR at setup of ",
        "ERROR at teardown of ",
        "ERROR collecting ",
    ] {
        if let Some(rest) = title.strip_prefix(prefix) {
            return rest;
        }
    }
    title
}

/// A subtest's label at the start of `rest` (`[msg] (i=1) path::test - ...` → `[msg] (i=1)`),
/// and what follows it.
fn subtest_label(rest: &str) -> (&str, &str) {
    let mut end = 0;
    let bytes = rest.as_bytes();
    while let Some(&open) = bytes.get(end) {
        let close = match open {
            b'(' => b')',
            b'[' => b']',
            b' ' if matches!(bytes.get(end + 1), Some(b'(' | b'[')) => {
                end += 1;
                continue;
            }
            _ => break,
        };
        let mut depth = 0;
        let Some(length) = rest[end..].bytes().position(|byte| {
            if byte == open {
                depth += 1;
            } else if byte == close {
                depth -= 1;
            }
            depth == 0
        }) else {
            break;
        };
        end += length + 1;
    }
    (&rest[..end], rest[end..].trim_start())
}

/// `4 failed, 5 passed, 1 skipped, 1 error in 0.04s` → counts.
fn parse_counts(title: &str) -> Option<Counts> {
    let (numbers, time) = title.rsplit_once(" in ")?;
    if !time.trim().starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut counts = Counts::default();
    // At least one word pytest counts with: "3 workers in 2 pools" is no summary.
    let mut known = false;
    for part in numbers.split(", ") {
        let (n, what) = part.trim().split_once(' ')?;
        let n: u64 = n.parse().ok()?;
        known |= match what {
            "passed" => {
                counts.passed += n;
                true
            }
            "xpassed" => {
                counts.xpassed += n;
                true
            }
            "xfailed" => {
                counts.xfailed += n;
                true
            }
            "failed" => {
                counts.failed += n;
                true
            }
            "error" | "errors" => {
                counts.errors += n;
                true
            }
            "skipped" | "deselected" => {
                counts.skipped += n;
                true
            }
            _ => false,
        };
    }
    known.then_some(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verbose_log_cut_by_a_timeout() {
        let log = "collecting ... collected 6 items\n\n\
t.py::test_a PASSED                                       [ 16%]\n\
t.py::test_p[odd id with spaces] FAILED                   [ 33%]\n\
t.py::test_s SKIPPED (no reason)                          [ 50%]\n\
t.py::test_x XFAIL (known)                                [ 66%]\n\
t.py::test_t PASSED                                       [ 83%]\n\
t.py::test_t ERROR                                        [ 83%]\n\
t.py::test_hangs ";
        let parsed = parse_log(log.as_bytes(), None).unwrap();
        assert_eq!(
            (
                parsed.counts.passed,
                parsed.counts.failed,
                parsed.counts.errors,
                parsed.counts.skipped,
                parsed.counts.xfailed
            ),
            (2, 1, 1, 1, 1)
        );
        let ids: Vec<&str> = parsed.failures.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["t.py::test_p[odd id with spaces]", "t.py::test_t"]);
        assert_eq!(parsed.running, ["t.py::test_hangs"]);
        // Result words inside the parameters, and (`-s`) what the tests printed.
        let log = "t.py::test_p[x FAILED y] PASSED                [ 33%]\n\
t.py::test_q[q PASSED r] FAILED                                    [ 66%]\n\
t.py::test_printing hello\n\
PASSED\n\
t.py::test_hang hanging";
        let parsed = parse_log(log.as_bytes(), None).unwrap();
        assert_eq!((parsed.counts.passed, parsed.counts.failed), (2, 1));
        assert_eq!(parsed.failures[0].id, "t.py::test_q[q PASSED r]");
        assert_eq!(parsed.running, ["t.py::test_hang"]);
    }

    #[test]
    fn counts_line() {
        let counts =
            parse_counts("4 failed, 5 passed, 1 skipped, 1 error, 2 warnings in 0.04s").unwrap();
        assert_eq!(
            counts,
            Counts {
                passed: 5,
                failed: 4,
                errors: 1,
                skipped: 1,
                ..Counts::default()
            }
        );
        // As pytest keeps them apart: never skips.
        let expected = parse_counts("1 skipped, 1 xfailed, 2 xpassed in 0.01s").unwrap();
        assert_eq!(
            (
                expected.skipped,
                expected.xfailed,
                expected.xpassed,
                expected.passed
            ),
            (1, 1, 2, 0)
        );
        assert_eq!(parse_counts("no tests ran in 0.01s"), None);
        assert_eq!(parse_counts("3 workers in 2 pools"), None);
        assert_eq!(
            parse_counts("2 subtests passed, 1 passed in 0.1s").map(|c| c.passed),
            Some(1)
        );
        assert_eq!(parse_counts("FAILURES"), None);
    }

    #[test]
    fn ids_from_junit_cases() {
        let case = |classname: &str, name: &str| Case {
            classname: classname.into(),
            name: name.into(),
            file: Some("tests/test_ops.py".into()),
            line: None,
            status: junit::CaseStatus::Failed,
            message: String::new(),
            kind: None,
            text: String::new(),
        };
        assert_eq!(
            case_id(&case("tests.test_ops", "test_a[x y::z]")),
            "tests/test_ops.py::test_a[x y::z]"
        );
        assert_eq!(
            case_id(&case("tests.test_ops.TestG", "test_b")),
            "tests/test_ops.py::TestG::test_b"
        );
        assert_eq!(guess_file("tests.test_ops.TestG"), "tests/test_ops.py");
    }

    #[test]
    fn subtest_labels() {
        assert_eq!(
            subtest_label("(i=1) t.py::T::test - boom"),
            ("(i=1)", "t.py::T::test - boom")
        );
        assert_eq!(
            subtest_label("[case (x)] (i=(1, 2)) t.py::test - boom"),
            ("[case (x)] (i=(1, 2))", "t.py::test - boom")
        );
        assert_eq!(subtest_label(" t.py::test"), ("", "t.py::test"));
        assert_eq!(
            subtest_label("(unclosed t.py::test"),
            ("", "(unclosed t.py::test")
        );
    }

    #[test]
    fn summary_ids_keep_their_parameters() {
        for (line, id, message) in [
            (
                "t.py::test_a - assert 1 == 2",
                "t.py::test_a",
                "assert 1 == 2",
            ),
            (
                "t.py::test_eq[x y-x - y] - AssertionError: 'x y' != 'x - y'",
                "t.py::test_eq[x y-x - y]",
                "AssertionError: 'x y' != 'x - y'",
            ),
            ("t.py::test_eq[a - b]", "t.py::test_eq[a - b]", ""),
            (
                "t.py::test_b - assert [1] == [2]",
                "t.py::test_b",
                "assert [1] == [2]",
            ),
            ("t.py::test_c", "t.py::test_c", ""),
        ] {
            assert_eq!(summary_id_and_message(line), (id, message), "{line}");
        }
    }

    #[test]
    /// Long: one scenario, its steps and assertions together.
    fn blocks_go_to_their_own_test_when_titles_repeat() {
        // Two files with a test_zero, and a test that failed and then erred in teardown (its
        // ERRORS block comes first). A real pytest 9 log.
        let log = "\
==================================== ERRORS ====================================
________________________ ERROR at teardown of test_both ________________________

    @pytest.fixture
    def broken():
        yield 1
>       raise RuntimeError(\"teardown broke\")
E       RuntimeError: teardown broke

tests/test_ops.py:10: RuntimeError
=================================== FAILURES ===================================
__________________________________ test_zero ___________________________________

    def test_zero():
>       raise ValueError(\"bad value\")
E       ValueError: bad value

tests/sub/test_same.py:2: ValueError
__________________________________ test_zero ___________________________________

    def test_zero():
>       1 / 0
E       ZeroDivisionError: division by zero

tests/test_ops.py:2: ZeroDivisionError
__________________________________ test_both ___________________________________

broken = 1

    def test_both(broken):
>       assert broken == 2
E       assert 1 == 2

tests/test_ops.py:13: AssertionError
=========================== short test summary info ============================
FAILED tests/sub/test_same.py::test_zero - ValueError: bad value
FAILED tests/test_ops.py::test_zero - ZeroDivisionError: division by zero
FAILED tests/test_ops.py::test_both - assert 1 == 2
ERROR tests/test_ops.py::test_both - RuntimeError: teardown broke
========================== 3 failed, 1 error in 0.03s ==========================
";
        let parsed = parse_log(log.as_bytes(), None).unwrap();
        let failures: Vec<_> = parsed
            .failures
            .iter()
            .map(|f| {
                (
                    f.id.as_str(),
                    f.file.as_deref().unwrap_or(""),
                    f.line,
                    f.kind.as_deref().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            failures,
            [
                (
                    "tests/sub/test_same.py::test_zero",
                    "tests/sub/test_same.py",
                    Some(2),
                    "ValueError"
                ),
                (
                    "tests/test_ops.py::test_zero",
                    "tests/test_ops.py",
                    Some(2),
                    "ZeroDivisionError"
                ),
                (
                    "tests/test_ops.py::test_both",
                    "tests/test_ops.py",
                    Some(13),
                    "AssertionError"
                ),
                (
                    "tests/test_ops.py::test_both",
                    "tests/test_ops.py",
                    Some(10),
                    "RuntimeError"
                ),
            ]
        );
    }

    #[test]
    fn subtests_and_quiet_counts_from_the_log() {
        let log = "\
=================================== FAILURES ===================================
_______________________________ T.test_sub (i=1) _______________________________
t.py:6: AssertionError
=========================== short test summary info ============================
FAILED t.py::T::test_plain - AssertionError: 1 != 2
SUBFAILED(i=1) t.py::T::test_sub - AssertionError: 1 != 0
2 failed, 2 passed in 0.02s
";
        let parsed = parse_log(log.as_bytes(), None).unwrap();
        assert_eq!((parsed.counts.failed, parsed.counts.passed), (2, 2));
        let failures: Vec<_> = parsed
            .failures
            .iter()
            .map(|f| (f.id.as_str(), f.message.as_str(), f.line))
            .collect();
        assert_eq!(
            failures,
            [
                ("t.py::T::test_plain", "1 != 2", None),
                ("t.py::T::test_sub", "1 != 0 [subtest (i=1)]", Some(6)),
            ]
        );
    }

    #[test]
    fn a_file_that_does_not_compile() {
        let log = "\
==================================== ERRORS ====================================
________________________ ERROR collecting test_bad.py _________________________
/usr/lib/python3/ast.py:50: in parse
    return compile(source, filename, mode, flags,
E     File \"/src/shop/test_bad.py\", line 3
E       def test_a(:
E                  ^
E   SyntaxError: invalid syntax
=========================== short test summary info ============================
ERROR test_bad.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.19s ===============================
";
        let parsed = parse_log(log.as_bytes(), Some(Path::new("/src/shop"))).unwrap();
        assert!(parsed.build_failed);
        assert_eq!(
            parsed.build_error.as_deref(),
            Some("test_bad.py: test_bad.py:3: invalid syntax")
        );
        let failure = &parsed.failures[0];
        assert_eq!(
            (
                failure.file.as_deref(),
                failure.line,
                failure.kind.as_deref(),
                failure.message.as_str()
            ),
            (
                Some("test_bad.py"),
                Some(3),
                Some("SyntaxError"),
                "invalid syntax"
            )
        );
    }

    #[test]
    fn a_file_that_cannot_be_collected_is_one_failure_when_the_run_went_on_without_it() {
        // pytest 5.4's output with --continue-on-collection-errors (thefuck's tests).
        let log = "\
==================================== ERRORS ====================================
__________________ ERROR collecting tests/rules/test_touch.py __________________
Fixture \"stderr\" called directly. Fixtures are not meant to be called directly,
but are created automatically when test functions request them as parameters.
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert 1 == 2
E       assert 1 == 2

tests/test_add.py:2: AssertionError
=========================== short test summary info ============================
FAILED tests/test_add.py::test_add - assert 1 == 2
ERROR tests/rules/test_touch.py
============= 1 failed, 1029 passed, 58 skipped, 1 error in 4.92s ==============
";
        let parsed = parse_log(log.as_bytes(), None).unwrap();
        assert!(!parsed.build_failed);
        assert_eq!(parsed.build_error, None);
        let failures: Vec<_> = parsed
            .failures
            .iter()
            .map(|f| (f.id.as_str(), f.message.as_str()))
            .collect();
        assert_eq!(
            failures,
            [
                ("tests/test_add.py::test_add", "assert 1 == 2"),
                (
                    "tests/rules/test_touch.py",
                    "Fixture \"stderr\" called directly. Fixtures are not meant to be called directly,"
                ),
            ]
        );
        assert_eq!((parsed.counts.passed, parsed.counts.errors), (1029, 1));
    }

    #[test]
    fn banners() {
        assert_eq!(banner_title("===== FAILURES =====", '='), Some("FAILURES"));
        assert_eq!(
            banner_title("____ TestGroup.test_x ____", '_'),
            Some("TestGroup.test_x")
        );
        assert_eq!(banner_title("_ _ _ _ _", '_'), None);
        assert_eq!(banner_title("=====", '='), None);
    }
}
