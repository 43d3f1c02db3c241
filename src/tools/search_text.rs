//! `search_text`: lines matching a pattern across the workspace's files, .gitignore-aware.

use std::io::{BufRead, BufReader};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Context;
use crate::workspace::jail::{self, tool_error, ToolError};

pub const DESCRIPTION: &str = "Search the workspace's text files for a regular expression (or, with fixed_string, \
a literal string), skipping what .gitignore ignores. Returns each matching line with its file and line number, and \
context_lines lines around it. Narrow with path (a directory or file) and glob (e.g. `*.py`).";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// A regular expression (Rust syntax), or a literal with fixed_string.
    pub pattern: String,
    /// Treat the pattern as a literal string.
    #[serde(default)]
    pub fixed_string: bool,
    /// Directory or file to search (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
    /// Search only paths matching this glob, e.g. `**/*.py`.
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
    pub max_results: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Match {
    pub path: String,
    pub line: usize,
    pub text: String,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub matches: Vec<Match>,
    /// More matches exist than were returned.
    pub truncated: bool,
    pub files_searched: usize,
}

pub fn call(context: &Context, input: Input) -> Result<Output, ToolError> {
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
    drop(jail::open(&confined, libc::O_RDONLY, 0)?);
    let glob = match &input.glob {
        Some(glob) => Some(
            globset::Glob::new(glob)
                .map_err(|err| tool_error(format!("glob {glob:?}: {err}")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let context_lines = input.context_lines.unwrap_or(0).min(20);
    let max = input.max_results.unwrap_or(100).max(1);
    let mut matches = Vec::new();
    let mut files_searched = 0;
    let mut truncated = false;
    let walker = ignore::WalkBuilder::new(confined.display())
        .hidden(false)
        .follow_links(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    'files: for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(confined.root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        if glob
            .as_ref()
            .is_some_and(|g| !g.is_match(&relative) && !g.is_match(entry.file_name()))
        {
            continue;
        }
        // Opened beneath the root again: the walk's path may have been swapped for a symlink.
        let Ok(file) = context
            .roots
            .confine(&relative)
            .and_then(|c| jail::open(&c, libc::O_RDONLY, 0))
        else {
            continue;
        };
        files_searched += 1;
        let mut lines: Vec<String> = Vec::new();
        let mut reader = BufReader::new(file);
        let mut raw = Vec::new();
        while reader.read_until(b'\n', &mut raw).unwrap_or(0) > 0 {
            if raw.contains(&0) {
                continue 'files; // binary
            }
            lines.push(
                String::from_utf8_lossy(&raw)
                    .trim_end_matches(['\n', '\r'])
                    .to_string(),
            );
            raw.clear();
        }
        for (index, line) in lines.iter().enumerate() {
            if !regex.is_match(line) {
                continue;
            }
            if matches.len() == max {
                truncated = true;
                break 'files;
            }
            let before = lines[index.saturating_sub(context_lines)..index].to_vec();
            let after = lines[index + 1..(index + 1 + context_lines).min(lines.len())].to_vec();
            matches.push(Match {
                path: relative.clone(),
                line: index + 1,
                text: line.clone(),
                before,
                after,
            });
        }
    }
    Ok(Output {
        matches,
        truncated,
        files_searched,
    })
}
