//! `search_text`: lines matching a pattern across the workspace's files, .gitignore-aware.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::ops::ControlFlow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{glob_matcher, tool_error, Call, Context, ToolError};
use crate::text::{Budget, RESULT_BUDGET};
use crate::workspace::jail::{self, Confined};
use crate::workspace::walk::{self, Kind};

pub(crate) const DESCRIPTION: &str = "Search the workspace's text files for a regular expression (or, with fixed_string, \
a literal string), skipping what .gitignore ignores. Returns each matching line with its file and line number, and \
context_lines lines around it. Narrow with path (a directory or file) and glob (e.g. `*.py`).";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// A regular expression (Rust syntax), or a literal with fixed_string.
    pub pattern: String,
    /// Treat the pattern as a literal string.
    #[serde(default)]
    pub fixed_string: bool,
    /// Directory or file to search (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
    /// Search only files whose path or name matches this glob, e.g. `*.py` or `src/**/*.py`.
    #[serde(default)]
    pub glob: Option<String>,
    /// Match case (default true).
    #[serde(default)]
    pub case_sensitive: Option<bool>,
    /// Lines of context before and after each match (default 0).
    #[serde(default)]
    pub context_lines: Option<usize>,
    /// At most this many matches (default 100).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_results: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Match {
    pub path: String,
    pub line: usize,
    pub text: String,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Output {
    pub matches: Vec<Match>,
    /// More matches exist than were returned (max_results, or about 32 KB of lines): narrow
    /// with path or glob, or raise max_results.
    pub truncated: bool,
    pub files_searched: usize,
}

pub(crate) fn call(context: &Context, call: &Call, input: Input) -> Result<Output, ToolError> {
    let source = if input.fixed_string {
        regex::escape(&input.pattern)
    } else {
        input.pattern.clone()
    };
    let regex = regex::RegexBuilder::new(&source)
        .case_insensitive(!input.case_sensitive.unwrap_or(true))
        .size_limit(1 << 20)
        .build()
        .map_err(|err| tool_error(format!("pattern {:?}: {err}", input.pattern)))?;
    let confined = context
        .roots
        .confine(input.path.as_deref().unwrap_or("."))?;
    let start = jail::open(&confined, libc::O_RDONLY, 0)?;
    let start_meta = start
        .metadata()
        .map_err(|err| tool_error(format!("{}: {err}", confined.display().display())))?;
    let start_is_dir = start_meta.is_dir();
    if !start_is_dir && !start_meta.is_file() {
        return Err(tool_error(format!(
            "{} is not a regular file (a FIFO, socket or device); not searched",
            confined.display().display()
        )));
    }
    if !start_is_dir && start_meta.len() > MAX_FILE_BYTES {
        return Err(tool_error(format!(
            "{} is {} bytes, more than search_text reads (16 MiB); use run_command with grep",
            confined.display().display(),
            start_meta.len()
        )));
    }
    drop(start);
    let glob = glob_matcher(input.glob.as_deref())?;
    let mut search = Search::new(
        regex,
        input.context_lines.unwrap_or(0).min(20),
        input.max_results.unwrap_or(100).max(1),
        RESULT_BUDGET,
    );
    if !start_is_dir {
        let _ = search.file(&confined);
    } else {
        let walked = walk::walk(&confined, None, &mut |found| {
            // A call the client gave up on stops searching (its answer is never sent).
            if call.is_cancelled() {
                return ControlFlow::Break(());
            }
            if found.kind != Kind::File || found.size > MAX_FILE_BYTES {
                return ControlFlow::Continue(());
            }
            if glob
                .as_ref()
                .is_some_and(|glob| !super::glob_matches(glob, &found.relative))
            {
                return ControlFlow::Continue(());
            }
            // In the walk's own root (there may be several).
            search.file(&confined.beside(found.relative.clone()))
        })?;
        search.truncated |= walked.capped;
    }
    let Search {
        matches,
        files_searched,
        truncated,
        ..
    } = search;
    Ok(Output {
        matches,
        truncated,
        files_searched,
    })
}

/// Files larger than this are not searched (a sparse file could be gigabytes of nothing).
const MAX_FILE_BYTES: u64 = 16 << 20;
/// A matched line is shown cut to this many characters, a line around it to CONTEXT_CHARS.
const MAX_LINE_CHARS: usize = 1_000;
const CONTEXT_CHARS: usize = 200;

/// A matched line as shown: when long, the part around the match (at byte `at`), with marks.
fn cut_around(text: &str, at: usize) -> String {
    if text.chars().count() <= MAX_LINE_CHARS {
        return text.to_string();
    }
    let start = text[..at]
        .char_indices()
        .rev()
        .nth(MAX_LINE_CHARS / 2 - 1)
        .map_or(0, |(i, _)| i);
    let window = cut_line(&text[start..], MAX_LINE_CHARS);
    if start > 0 {
        format!("[{start} bytes before] …{window}")
    } else {
        window
    }
}

/// A line as shown: cut at `max` characters, with a mark (a minified file's line can be
/// megabytes).
fn cut_line(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}… [line cut at {max} characters]", &text[..cut]),
        None => text.to_string(),
    }
}

/// A search in progress: what it looks for and what it found so far.
struct Search {
    regex: regex::Regex,
    context_lines: usize,
    max: usize,
    matches: Vec<Match>,
    files_searched: usize,
    truncated: bool,
    /// Room left in the result.
    budget: Budget,
}

impl Search {
    /// A search for `regex`, showing `context_lines` around each match, keeping at most `max`
    /// matches and `budget` bytes of them as JSON.
    fn new(regex: regex::Regex, context_lines: usize, max: usize, budget: usize) -> Search {
        Search {
            regex,
            context_lines,
            max,
            matches: Vec::new(),
            files_searched: 0,
            truncated: false,
            budget: Budget::new(budget),
        }
    }

    /// Searches one file (skipping binary ones); breaks when the results are full.
    fn file(&mut self, at: &Confined) -> ControlFlow<()> {
        // Opened beneath the root again, by the kernel: nothing on the way may lead out.
        let Ok(file) = jail::open(at, libc::O_RDONLY, 0) else {
            return ControlFlow::Continue(());
        };
        if !file
            .metadata()
            .is_ok_and(|meta| meta.is_file() && meta.len() <= MAX_FILE_BYTES)
        {
            return ControlFlow::Continue(());
        }
        self.files_searched += 1;
        let path = at.shown(&at.relative);
        self.lines(BufReader::new(file.take(MAX_FILE_BYTES)), &path)
    }

    /// Searches the lines of the file `path` that `reader` gives; breaks when the results are
    /// full. Streamed: only the lines before the next match (as shown) and the matches waiting
    /// for the lines after them are kept, so that a big file of short lines takes little
    /// memory. A file is binary when it holds a NUL byte: what it added is then taken back.
    fn lines(&mut self, mut reader: impl BufRead, path: &str) -> ControlFlow<()> {
        let before_file = (self.matches.len(), self.budget.clone(), self.truncated);
        let mut raw = Vec::new();
        let mut before: VecDeque<String> = VecDeque::with_capacity(self.context_lines);
        let mut waiting: VecDeque<Match> = VecDeque::new();
        let mut number = 0;
        let mut flow = ControlFlow::Continue(());
        while flow.is_continue() && reader.read_until(b'\n', &mut raw).unwrap_or(0) > 0 {
            if raw.contains(&0) {
                return self.take_back(before_file);
            }
            number += 1;
            let line = String::from_utf8_lossy(&raw);
            let line = line.trim_end_matches(['\n', '\r']);
            for waiting in &mut waiting {
                waiting.after.push(cut_line(line, CONTEXT_CHARS));
            }
            if let Some(found) = self.regex.find(line) {
                waiting.push_back(Match {
                    path: path.to_string(),
                    line: number,
                    text: cut_around(line, found.start()),
                    before: before.iter().cloned().collect(),
                    after: Vec::new(),
                });
            }
            while flow.is_continue()
                && waiting
                    .front()
                    .is_some_and(|waiting| waiting.after.len() == self.context_lines)
            {
                flow = self.keep(waiting.pop_front().unwrap());
            }
            if self.context_lines > 0 {
                if before.len() == self.context_lines {
                    before.pop_front();
                }
                before.push_back(cut_line(line, CONTEXT_CHARS));
            }
            raw.clear();
        }
        for done in waiting {
            if flow.is_continue() {
                flow = self.keep(done);
            }
        }
        // The result is full; the rest of the file is read only to know it is text.
        while flow.is_break() {
            match reader.fill_buf() {
                Ok([]) | Err(_) => break,
                Ok(chunk) if chunk.contains(&0) => return self.take_back(before_file),
                Ok(chunk) => {
                    let length = chunk.len();
                    reader.consume(length);
                }
            }
        }
        flow
    }

    /// Forgets what a binary file added to the result, and goes on with the next file.
    fn take_back(
        &mut self,
        (matches, budget, truncated): (usize, Budget, bool),
    ) -> ControlFlow<()> {
        self.matches.truncate(matches);
        self.budget = budget;
        self.truncated = truncated;
        ControlFlow::Continue(())
    }

    /// Adds a match to the result; breaks when it does not fit (max_results, or the budget).
    fn keep(&mut self, found: Match) -> ControlFlow<()> {
        // The first match is shown whatever its size.
        if self.matches.len() == self.max || (!self.budget.take(&found) && !self.matches.is_empty())
        {
            self.truncated = true;
            return ControlFlow::Break(());
        }
        self.matches.push(found);
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(pattern: &str, context_lines: usize, max: usize) -> Search {
        Search::new(
            regex::Regex::new(pattern).unwrap(),
            context_lines,
            max,
            RESULT_BUDGET,
        )
    }

    fn found(search: &Search) -> Vec<(usize, &str, Vec<&str>, Vec<&str>)> {
        search
            .matches
            .iter()
            .map(|m| {
                let before = m.before.iter().map(String::as_str).collect();
                let after = m.after.iter().map(String::as_str).collect();
                (m.line, m.text.as_str(), before, after)
            })
            .collect()
    }

    #[test]
    fn matches_come_with_the_lines_around_them() {
        let mut search = search("x", 1, 10);
        let text = "a\nx1\nb\nc\nx2\r\n";
        assert!(search.lines(text.as_bytes(), "f.txt").is_continue());
        assert_eq!(
            found(&search),
            vec![
                (2, "x1", vec!["a"], vec!["b"]),
                (5, "x2", vec!["c"], vec![]),
            ]
        );
        assert!(search.matches.iter().all(|m| m.path == "f.txt"));
    }

    #[test]
    fn a_full_result_stops_the_search_and_says_so() {
        let mut search = search("x", 0, 2);
        assert!(search.lines("x\nx\nx\n".as_bytes(), "f").is_break());
        assert_eq!(search.matches.len(), 2);
        assert!(search.truncated);
    }

    #[test]
    fn a_binary_file_s_matches_are_taken_back_wherever_its_nul_is() {
        let mut search = search("x", 0, 10);
        assert!(search.lines("x\n".as_bytes(), "text").is_continue());
        let late_nul = format!("x\n{}\0\n", "y\n".repeat(10_000));
        assert!(search.lines(late_nul.as_bytes(), "binary").is_continue());
        assert_eq!(found(&search).len(), 1);
        assert_eq!(search.matches[0].path, "text");
    }

    #[test]
    fn long_lines_are_cut_around_the_match() {
        let mut search = search("needle", 0, 10);
        let line = format!("{}needle{}", "a".repeat(5_000), "b".repeat(5_000));
        assert!(search.lines(line.as_bytes(), "min.js").is_continue());
        let shown = &search.matches[0].text;
        assert!(
            shown.contains("needle") && shown.starts_with("[4500 bytes before]"),
            "{shown}"
        );
        assert!(shown.chars().count() < 1_100, "{}", shown.len());
    }
}
