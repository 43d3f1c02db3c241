//! `edit_file`: an exact string replaced in a file; never a guess. No match is an error with
//! the closest lines as a hint, several matches without `replace_all` an error listing them;
//! line endings and the file's mode are kept; the write is atomic; the result is the diff.

use std::io::Read;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{tool_error, Context, ToolError};
use crate::text::{json_len, json_prefix, RESULT_BUDGET};
use crate::workspace::jail;
use crate::workspace::write::{exclusive, write_atomically};

pub(crate) const DESCRIPTION: &str = "Replace an exact string in a file of the workspace. old_string must match the file's \
text exactly (whitespace and indentation included) and, unless replace_all is set, exactly once: include enough \
surrounding lines to make it unique. If it does not match, the error shows the closest lines. Line endings (CRLF or \
LF, per line) and the file's mode are kept; a hard-linked file becomes a file of its own. Returns the unified diff; \
dry_run shows it without writing.";

/// How long the diff of an edit may take (after that it is coarser, not wrong).
const DIFF_TIME: Duration = Duration::from_secs(1);

/// Files larger than this are not edited here (the whole file is held, twice).
const MAX_BYTES: u64 = 16 << 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// Path relative to the workspace root (or absolute inside it).
    pub path: String,
    /// The exact text to replace.
    pub old_string: String,
    /// The replacement.
    pub new_string: String,
    /// Replace every occurrence (otherwise exactly one must exist).
    #[serde(default)]
    pub replace_all: bool,
    /// Show the diff without writing.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Output {
    /// As the other tools name it: relative in the first root, absolute in the others.
    pub path: String,
    pub replacements: usize,
    /// Unified diff of the change.
    pub diff: String,
    pub written: bool,
}

/// What no edit can be: an empty `old_string`, or one the same as `new_string`.
pub(crate) fn check(input: &Input) -> Result<(), ToolError> {
    if input.old_string.is_empty() {
        return Err(tool_error(
            "old_string is empty; use write_file to create a file",
        ));
    }
    if input.old_string == input.new_string {
        return Err(tool_error(
            "old_string and new_string are the same; nothing to change",
        ));
    }
    Ok(())
}

pub(crate) fn call(context: &Context, input: Input) -> Result<Output, ToolError> {
    check(&input)?;
    let confined = context
        .roots
        .confine_file(&input.path)?
        .writable_by_tools()?;
    let editing = exclusive();
    let file = jail::open(&confined, libc::O_RDONLY, 0)?;
    let meta = file
        .metadata()
        .map_err(|err| tool_error(format!("{}: {err}", input.path)))?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Err(tool_error(format!(
            "{} is not a regular text file of at most 16 MiB; edit it with run_command",
            input.path
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|err| tool_error(format!("{}: {err}", input.path)))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| tool_error(format!("{} is not UTF-8 text", input.path)))?;
    let (updated, replaced) = match replace(
        &text,
        &input.old_string,
        &input.new_string,
        input.replace_all,
    ) {
        Ok(done) => done,
        Err(mismatch) => {
            // The hint takes a while: other writes need not wait for it.
            drop(editing);
            return Err(tool_error(match mismatch {
                Mismatch::NotFound => no_match_hint(&input.path, &text, &input.old_string),
                Mismatch::Ambiguous { count, lines } => {
                    let more = if count > 20 { ", ..." } else { "" };
                    let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
                    format!(
                        "old_string occurs {count} times in {} (lines {}{more}); include more surrounding lines to pick one, or set replace_all",
                        input.path,
                        lines.join(", ")
                    )
                }
            }));
        }
    };
    if let Some(refused) = crate::secrets::writes_stand_in(&input.path, &text, &updated) {
        return Err(tool_error(refused));
    }
    if !input.dry_run {
        write_atomically(&confined, updated.as_bytes(), false)?;
    }
    drop(editing);
    let relative = confined.relative.display().to_string();
    // Diffing is bounded in time: a file of many short identical lines made it quadratic.
    let diff = similar::TextDiff::configure()
        .timeout(DIFF_TIME)
        .diff_lines(&text, &updated)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{relative}"), &format!("b/{relative}"))
        .to_string();
    let diff = if json_len(&diff) > RESULT_BUDGET {
        format!(
            "{}\n[... diff cut, {} bytes in all; read_file shows the file as it is now]",
            json_prefix(&diff, RESULT_BUDGET),
            diff.len()
        )
    } else {
        diff
    };
    Ok(Output {
        path: confined.shown(&confined.relative),
        replacements: replaced,
        diff,
        written: !input.dry_run,
    })
}

/// Why `replace` changed nothing.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Mismatch {
    /// `old` is not in the text.
    NotFound,
    /// `old` is there `count` times (and `all` was not asked for), on these lines (the first
    /// 20 occurrences' lines, each once).
    Ambiguous { count: usize, lines: Vec<usize> },
}

/// `text` with `old` replaced by `new`: its one occurrence, or with `all` every one; and how
/// many were replaced. A replacement's line endings follow the line it goes in (`\n` in `new`
/// becomes `\r\n` there), and `old` written with `\n` matches CRLF lines too.
pub(crate) fn replace(
    text: &str,
    old: &str,
    new: &str,
    all: bool,
) -> Result<(String, usize), Mismatch> {
    let found = find(text, old);
    match found.len() {
        0 => return Err(Mismatch::NotFound),
        count if count > 1 && !all => {
            // Line numbers in one pass over the text.
            let mut lines = Vec::new();
            let (mut line, mut counted) = (1, 0);
            for &(at, _) in found.iter().take(20) {
                line += text[counted..at].matches('\n').count();
                counted = at;
                lines.push(line);
            }
            lines.dedup();
            return Err(Mismatch::Ambiguous { count, lines });
        }
        _ => {}
    }
    let found = apart(found);
    let replaced = if all { found.len() } else { 1 };
    let mut updated = String::with_capacity(text.len());
    let mut copied = 0;
    for &(at, length) in &found[..replaced] {
        updated.push_str(&text[copied..at]);
        if ends_in_crlf(text, at) {
            updated.push_str(&with_crlf(new));
        } else {
            updated.push_str(new);
        }
        copied = at + length;
    }
    updated.push_str(&text[copied..]);
    Ok((updated, replaced))
}

/// Where `wanted` occurs in `text`: (position, length matched), in order. The model writes
/// `\n`: in a file with CRLF lines it is looked for with both endings, so that a file mixing
/// them finds every occurrence. Occurrences that overlap one found are not all listed (that
/// search would grow with the square of the text), but one found alone is checked for a second
/// that overlaps it, which makes it not unique: `}\n}` is twice in `}\n}\n}`.
fn find(text: &str, wanted: &str) -> Vec<(usize, usize)> {
    let mut variants = vec![wanted.to_string()];
    if wanted.contains('\n') && !wanted.contains('\r') && text.contains("\r\n") {
        variants.push(with_crlf(wanted));
    }
    let mut found: Vec<(usize, usize)> = variants
        .iter()
        .flat_map(|variant| text.match_indices(variant.as_str()))
        .map(|(at, matched)| (at, matched.len()))
        .collect();
    found.sort_unstable();
    if let [(at, length)] = found[..] {
        let next = at + text[at..].chars().next().map_or(1, char::len_utf8);
        if let Some(second) = text[next..].find(&text[at..at + length]) {
            found.push((next + second, length));
        }
    }
    found
}

/// The occurrences `replace_all` replaces: each one that begins after the one before ends.
fn apart(mut found: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut end = 0;
    found.retain(|&(at, length)| {
        let apart = at >= end;
        if apart {
            end = at + length;
        }
        apart
    });
    found
}

/// Whether the line at byte `at` ends with CRLF (the last line, without an ending: whether the
/// line before it does). A replacement's line endings follow the line it is put in.
fn ends_in_crlf(text: &str, at: usize) -> bool {
    match text[at..].find('\n') {
        Some(newline) => text[..at + newline].ends_with('\r'),
        None => text[..at]
            .rfind('\n')
            .is_some_and(|newline| text[..newline].ends_with('\r')),
    }
}

/// `text` with each bare `\n` made `\r\n` (one written with `\r` already is left as it is).
fn with_crlf(text: &str) -> String {
    if text.contains('\r') {
        return text.to_string();
    }
    text.replace('\n', "\r\n")
}

/// "No match", with the file's lines most like old_string's first line.
fn no_match_hint(path: &str, text: &str, old: &str) -> String {
    let closest = closest_lines(text, old);
    let mut message = format!("old_string was not found in {path}");
    if closest.is_empty() {
        message.push_str("; read the file again with read_file and copy the text exactly");
    } else {
        message.push_str("; the closest lines are:");
        for (line, content) in closest {
            message.push_str(&format!("\n{line}\t{content}"));
        }
        message.push_str("\ncopy the text exactly, whitespace included");
    }
    message
}

/// The three lines of `text` most like `wanted`'s first line that is not blank (numbered from
/// 1), of those alike by more than half: the first 10,000 lines, each compared on its first 500
/// characters within a second, as comparing is quadratic in their length.
pub(crate) fn closest_lines<'a>(text: &'a str, wanted: &str) -> Vec<(usize, &'a str)> {
    fn head(line: &str) -> &str {
        let line = line.trim();
        &line[..line
            .char_indices()
            .nth(500)
            .map_or(line.len(), |(at, _)| at)]
    }
    let wanted = head(wanted.lines().find(|l| !l.trim().is_empty()).unwrap_or(""));
    // A second in all: past it, the lines seen so far are ranked.
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    let mut scored: Vec<(f32, usize, &str)> = text
        .lines()
        .take(10_000)
        .enumerate()
        .take_while(|_| std::time::Instant::now() < deadline)
        .map(|(index, line)| {
            let ratio = similar::TextDiff::configure()
                .deadline(deadline)
                .diff_chars(wanted, head(line))
                .ratio();
            (ratio, index + 1, line)
        })
        .filter(|(score, _, _)| *score > 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored
        .into_iter()
        .take(3)
        .map(|(_, line, content)| (line, content))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_occurrence_is_replaced_and_several_are_refused_with_their_lines() {
        assert_eq!(
            replace("a = 1\nb = 2\n", "b = 2", "b = 3", false),
            Ok(("a = 1\nb = 3\n".into(), 1))
        );
        assert_eq!(replace("x\n", "y", "z", false), Err(Mismatch::NotFound));
        assert_eq!(
            replace("x\ny\nx x\n", "x", "z", false),
            Err(Mismatch::Ambiguous {
                count: 3,
                lines: vec![1, 3]
            })
        );
        assert_eq!(
            replace("x\ny\nx x\n", "x", "z", true),
            Ok(("z\ny\nz z\n".into(), 3))
        );
    }

    #[test]
    fn overlapping_occurrences_are_not_unique() {
        // `}\n}` is twice in `}\n}\n}`, the two sharing a brace.
        assert!(matches!(
            replace("}\n}\n}", "}\n}", "]", false),
            Err(Mismatch::Ambiguous { count: 2, .. })
        ));
        // replace_all takes those that do not overlap the one before.
        assert_eq!(replace("aaa", "aa", "b", true), Ok(("ba".into(), 1)));
    }

    #[test]
    fn line_endings_follow_the_line_replaced() {
        let text = "one\r\ntwo\r\nthree\nfour\n";
        assert_eq!(
            replace(text, "one\ntwo", "1\n2", false),
            Ok(("1\r\n2\r\nthree\nfour\n".into(), 1))
        );
        assert_eq!(
            replace(text, "three\nfour", "3\n4", false),
            Ok(("one\r\ntwo\r\n3\n4\n".into(), 1))
        );
    }

    #[test]
    fn a_text_of_one_repeated_character_is_searched_in_linear_time() {
        let text = "a".repeat(200_000);
        let old = "a".repeat(150_000);
        assert!(matches!(
            replace(&text, &old, "b", false),
            Err(Mismatch::Ambiguous { .. })
        ));
    }
}
