//! The edits a model asks for, read from its text, and applied to a workspace one file at a
//! time: a file's blocks all apply or none does. Read are SEARCH/REPLACE blocks, each after the
//! line that names its file (Aider's format, which models write best and the prompt asks for);
//! the `*** Begin Patch` envelope (Codex's `apply_patch`); unified-diff hunks, whose line
//! numbers are not trusted; and, in a reply with none of those, whole files in a fence after
//! their path. Each becomes a search-and-replace, matched by `matching`. What did not apply is
//! said exactly, with the lines that came closest, for the model's next attempt.

use std::collections::{BTreeMap, BTreeSet};

use super::matching;
use super::tree::Tree;
use crate::run_document::Applied;
use crate::testmap::is_test_file;
use crate::tools::edit_file::{self, closest_lines, Mismatch};

/// One block as the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    pub path: String,
    pub search: String,
    pub replace: String,
    pub kind: EditKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EditKind {
    /// `search` found once (by the cascade in `matching`) and replaced; an empty `search`
    /// creates the file.
    Once,
    /// Every exact occurrence of `search` replaced (`edit_file`'s `replace_all`).
    Every,
    /// `replace` is the whole file.
    WholeFile,
}

/// The blocks found in a reply, and what could not be read as one.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Parsed {
    pub edits: Vec<Edit>,
    pub problems: Vec<String>,
}

fn marker(line: &str, symbol: char, word: &str) -> bool {
    let line = line.trim_end();
    let rest = line.trim_start_matches(symbol);
    (5..=9).contains(&(line.len() - rest.len())) && rest.trim() == word
}

/// The edits in `text`, in every format read.
pub(crate) fn parse(text: &str) -> Parsed {
    let lines: Vec<&str> = text.lines().collect();
    let mut parsed = search_replace_blocks(&lines);
    let patches = patch_envelopes(&lines);
    let diffs = unified_diffs(&lines);
    for other in [patches, diffs] {
        parsed.edits.extend(other.edits);
        parsed.problems.extend(other.problems);
    }
    if parsed.edits.is_empty() && parsed.problems.is_empty() {
        parsed.edits = whole_files(&lines);
    }
    parsed
}

/// SEARCH/REPLACE blocks.
fn search_replace_blocks(lines: &[&str]) -> Parsed {
    let mut parsed = Parsed::default();
    let mut last_path: Option<String> = None;
    let mut at = 0;
    while at < lines.len() {
        if !marker(lines[at], '<', "SEARCH") {
            at += 1;
            continue;
        }
        let number = parsed.edits.len() + parsed.problems.len() + 1;
        let path = path_above(&lines[..at]).or_else(|| last_path.clone());
        let divider = (at + 1..lines.len()).find(|&i| marker(lines[i], '=', ""));
        let end =
            divider.and_then(|d| (d + 1..lines.len()).find(|&i| marker(lines[i], '>', "REPLACE")));
        let (Some(divider), Some(end)) = (divider, end) else {
            parsed.problems.push(format!(
                "block {number} is not closed (`=======` and `>>>>>>> REPLACE` must follow `<<<<<<< SEARCH`); it was not applied"
            ));
            break;
        };
        let joined = |range: std::ops::Range<usize>| {
            let mut text = lines[range].join("\n");
            if !text.is_empty() {
                text.push('\n');
            }
            text
        };
        match path {
            Some(path) => {
                parsed.edits.push(Edit {
                    path: path.clone(),
                    search: joined(at + 1..divider),
                    replace: joined(divider + 1..end),
                    kind: EditKind::Once,
                });
                last_path = Some(path);
            }
            None => parsed.problems.push(format!(
                "block {number} names no file: put the file's path on the line before ```"
            )),
        }
        at = end + 1;
    }
    parsed
}

/// The `*** Begin Patch` envelope: `*** Update File: P` with `@@` sections of ` `, `-` and `+`
/// lines, `*** Add File: P` with `+` lines; a file is not deleted.
fn patch_envelopes(lines: &[&str]) -> Parsed {
    let mut parsed = Parsed::default();
    let mut path: Option<(String, bool)> = None;
    let mut hunk: Vec<&str> = Vec::new();
    let flush = |path: &Option<(String, bool)>, hunk: &mut Vec<&str>, parsed: &mut Parsed| {
        if let Some((path, added)) = path {
            if !hunk.is_empty() || *added {
                parsed.edits.push(hunk_edit(path, hunk, *added));
            }
        }
        hunk.clear();
    };
    let mut inside = false;
    for line in lines {
        let trimmed = line.trim_end();
        if trimmed == "*** Begin Patch" {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if trimmed == "*** End Patch" {
            flush(&path, &mut hunk, &mut parsed);
            path = None;
            inside = false;
        } else if let Some(p) = trimmed.strip_prefix("*** Update File:") {
            flush(&path, &mut hunk, &mut parsed);
            path = Some((p.trim().to_string(), false));
        } else if let Some(p) = trimmed.strip_prefix("*** Add File:") {
            flush(&path, &mut hunk, &mut parsed);
            path = Some((p.trim().to_string(), true));
        } else if let Some(p) = trimmed.strip_prefix("*** Delete File:") {
            flush(&path, &mut hunk, &mut parsed);
            path = None;
            parsed.problems.push(format!(
                "{} was not deleted: heal does not delete files; change their code instead",
                p.trim()
            ));
        } else if trimmed.starts_with("@@") || trimmed == "*** End of File" {
            flush(&path, &mut hunk, &mut parsed);
        } else if path.is_some() {
            hunk.push(line);
        }
    }
    if inside {
        flush(&path, &mut hunk, &mut parsed);
    }
    parsed
}

/// Unified-diff hunks after `--- A` and `+++ B` lines (`a/` and `b/` taken off; `/dev/null` on
/// the old side makes a new file); the `@@` line numbers are not used.
fn unified_diffs(lines: &[&str]) -> Parsed {
    let mut parsed = Parsed::default();
    let mut at = 0;
    while at + 1 < lines.len() {
        let (Some(old), Some(new)) = (
            lines[at].strip_prefix("--- "),
            lines[at + 1].strip_prefix("+++ "),
        ) else {
            at += 1;
            continue;
        };
        let side = |name: &str| {
            let name = name.split('\t').next().unwrap_or(name).trim();
            name.strip_prefix("a/")
                .or_else(|| name.strip_prefix("b/"))
                .unwrap_or(name)
                .to_string()
        };
        let added = old.trim() == "/dev/null";
        let path = side(new);
        at += 2;
        let mut hunk: Vec<&str> = Vec::new();
        while at < lines.len() {
            let line = lines[at];
            if line.starts_with("@@") {
                if !hunk.is_empty() {
                    parsed.edits.push(hunk_edit(&path, &hunk, added));
                    hunk.clear();
                }
            } else if line.starts_with([' ', '-', '+'])
                && !(line.starts_with("--- ")
                    && lines
                        .get(at + 1)
                        .is_some_and(|next| next.starts_with("+++ ")))
            {
                hunk.push(line);
            } else if line.is_empty() {
                // An empty context line, its space lost on the way.
                hunk.push(" ");
            } else if !line.starts_with('\\') {
                break;
            }
            at += 1;
        }
        while hunk.last() == Some(&" ") {
            hunk.pop();
        }
        if !hunk.is_empty() || added {
            parsed.edits.push(hunk_edit(&path, &hunk, added));
        }
    }
    parsed
}

/// A hunk of ` `, `-` and `+` lines as a search (context and removed lines) and its replacement
/// (context and added lines).
fn hunk_edit(path: &str, hunk: &[&str], added: bool) -> Edit {
    let (mut search, mut replace) = (String::new(), String::new());
    for line in hunk {
        let (mark, rest) = match line.chars().next() {
            Some(mark @ (' ' | '-' | '+')) => (mark, &line[1..]),
            // A context line whose leading space was lost.
            _ => (' ', *line),
        };
        let text = format!("{rest}\n");
        match mark {
            '-' => search.push_str(&text),
            '+' => replace.push_str(&text),
            _ => {
                search.push_str(&text);
                replace.push_str(&text);
            }
        }
    }
    if added {
        search.clear();
    }
    Edit {
        path: path.to_string(),
        search,
        replace,
        kind: EditKind::Once,
    }
}

/// Whole files: a fence right after a line that names a path, its content the file's.
fn whole_files(lines: &[&str]) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let opens = lines[at].trim_start().starts_with("```");
        let path = (opens && at > 0)
            .then(|| path_above(&lines[at - 1..at]))
            .flatten();
        let Some(path) = path.filter(|p| p.contains('.') || p.contains('/')) else {
            at += 1;
            continue;
        };
        let Some(close) = (at + 1..lines.len()).find(|&i| lines[i].trim() == "```") else {
            break;
        };
        let mut content = lines[at + 1..close].join("\n");
        content.push('\n');
        edits.push(Edit {
            path,
            search: String::new(),
            replace: content,
            kind: EditKind::WholeFile,
        });
        at = close + 1;
    }
    edits
}

/// The file a block is for: the nearest line above it that is not a fence and looks like a
/// path (bold, backticks, `#` and a trailing colon taken off).
fn path_above(lines: &[&str]) -> Option<String> {
    for line in lines.iter().rev().take(3) {
        let line = line.trim();
        if line.is_empty() || line.starts_with("```") {
            continue;
        }
        let path = line
            .trim_start_matches('#')
            .trim()
            .trim_matches(|c| c == '*' || c == '`')
            .trim_end_matches(':')
            .trim();
        let path = path.strip_prefix("File:").unwrap_or(path).trim();
        return (!path.is_empty()
            && !path.contains(char::is_whitespace)
            && !marker(line, '>', "REPLACE"))
        .then(|| path.to_string());
    }
    None
}

/// What may be changed.
#[derive(Debug, Default)]
pub(crate) struct Rules {
    pub allow_test_edits: bool,
    /// The files the failing tests are in, whatever their names: tests too.
    pub test_files: BTreeSet<String>,
}

/// `path` as one spelling (`./a//b` is `a/b`), or why it is refused.
fn normalized(path: &str) -> Result<String, String> {
    let shown = crate::text::sanitize_for_terminal(path);
    if path.starts_with('/') || path.starts_with('~') || path.contains("://") {
        return Err(format!(
            "{shown} is not a path in the project: give the path from the project's root"
        ));
    }
    let invisible = |c: char| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
    };
    if path.chars().any(invisible) || path.contains('\\') {
        return Err(format!(
            "{shown}: the path holds a control character, a backslash or an invisible one; give a plain path"
        ));
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "{shown}: `..` may not be in a path; give it from the project's root"
                ))
            }
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(format!("`{shown}` names no file"));
    }
    Ok(parts.join("/"))
}

/// Why `path` may not be changed (its spelling, or what the file is), if it may not.
pub(crate) fn refusal(tree: &Tree, path: &str, rules: &Rules) -> Option<String> {
    match normalized(path) {
        Ok(path) => forbidden(tree, &path, rules),
        Err(reason) => Some(reason),
    }
}

/// Why `path` may not be changed, if it may not.
fn forbidden(tree: &Tree, path: &str, rules: &Rules) -> Option<String> {
    if let Some(refused) = tree.refusal(path) {
        return Some(refused);
    }
    if crate::secrets::is_credential_file(path) {
        return Some(format!(
            "{path} looks like it holds credentials: heal does not read or change it"
        ));
    }
    if !rules.allow_test_edits && (is_test_file(path) || rules.test_files.contains(path)) {
        return Some(format!(
            "{path} is a test file and tests are read-only (fix the code, not the test)"
        ));
    }
    if tree.through_link(path) {
        return Some(format!(
            "{path} leads through a symbolic link: edit the file by its own path"
        ));
    }
    None
}

/// Applies `edits` to `tree`, each file's blocks together, as `rules` allow; what became of
/// each, in their order.
pub(crate) fn apply(tree: &mut Tree, edits: &[Edit], rules: &Rules) -> Vec<Applied> {
    let mut by_file: BTreeMap<String, Vec<(usize, &Edit)>> = BTreeMap::new();
    let mut outcomes: Vec<Option<Applied>> = vec![None; edits.len()];
    for (index, edit) in edits.iter().enumerate() {
        match normalized(&edit.path) {
            Ok(path) => by_file.entry(path).or_default().push((index, edit)),
            Err(reason) => {
                outcomes[index] = Some(Applied {
                    path: crate::text::sanitize_for_terminal(&edit.path),
                    applied: false,
                    matched: None,
                    reason: Some(reason),
                })
            }
        }
    }
    for (path, blocks) in &by_file {
        let path = path.as_str();
        let refused = |reason: String| Applied {
            path: path.to_string(),
            applied: false,
            matched: None,
            reason: Some(reason),
        };
        let mut refuse_all = |reason: &str| {
            for (index, _) in blocks {
                outcomes[*index] = Some(refused(reason.to_string()));
            }
        };
        if let Some(reason) = forbidden(tree, path, rules) {
            refuse_all(&reason);
            continue;
        }
        let current = match tree.read(path) {
            Ok(current) => current,
            Err(err) => {
                refuse_all(&err);
                continue;
            }
        };
        let mut text = current.clone().unwrap_or_default();
        let mut results = Vec::new();
        let mut failed = false;
        for (_, edit) in blocks.iter() {
            let result = apply_one(path, edit, current.as_deref(), &mut text);
            failed |= result.is_err();
            results.push(result);
        }
        if !failed {
            if let Err(err) = tree.write(path, &text) {
                failed = true;
                results = results.into_iter().map(|_| Err(err.clone())).collect();
            }
        }
        for ((index, _), result) in blocks.iter().zip(results) {
            outcomes[*index] = Some(match result {
                Ok(how) if !failed => Applied {
                    path: path.to_string(),
                    applied: true,
                    matched: Some(how.to_string()),
                    reason: None,
                },
                Ok(_) => refused(format!(
                    "not applied: another block for {path} did not match, and a file's blocks apply together; send it again with the fixed one"
                )),
                Err(reason) => refused(reason),
            });
        }
    }
    // A reason may name the copy (a refused absolute path): the model knows only the project.
    let mut outcomes: Vec<Applied> = outcomes.into_iter().flatten().collect();
    for outcome in &mut outcomes {
        if let Some(reason) = &mut outcome.reason {
            *reason = tree.without_copy_path(reason);
        }
    }
    outcomes
}

/// Applies one block to `text`, the file's content so far (`current`: as it was, None when it
/// does not exist): how it matched, or why not.
fn apply_one(
    path: &str,
    edit: &Edit,
    current: Option<&str>,
    text: &mut String,
) -> Result<&'static str, String> {
    let before = match edit.kind {
        EditKind::WholeFile => text.as_str(),
        _ => edit.search.as_str(),
    };
    if let Some(reason) = crate::secrets::writes_stand_in(path, before, &edit.replace) {
        Err(reason)
    } else if edit.kind == EditKind::WholeFile {
        match current.map_or(Ok(()), |old| whole_file_fits(path, old, &edit.replace)) {
            Ok(()) => {
                *text = in_line_endings_of(current, &edit.replace);
                Ok(if current.is_some() {
                    "whole_file"
                } else {
                    "new_file"
                })
            }
            Err(reason) => Err(reason),
        }
    } else if edit.search.trim().is_empty() {
        if current.is_none() || text.trim().is_empty() {
            *text = edit.replace.clone();
            Ok("new_file")
        } else {
            Err(format!(
                "the SEARCH part is empty but {path} exists: quote the lines to replace"
            ))
        }
    } else if current.is_none() {
        Err(format!(
            "{path} does not exist (to create it, leave the SEARCH part empty)"
        ))
    } else if edit.kind == EditKind::Every {
        match edit_file::replace(text, &edit.search, &edit.replace, true) {
            Ok((updated, _)) => {
                *text = updated;
                Ok("exact")
            }
            Err(mismatch) => Err(mismatch_reason(path, text, &edit.search, mismatch)),
        }
    } else {
        match matching::replace_once(text, &edit.search, &edit.replace) {
            Ok((updated, how)) => {
                *text = updated;
                Ok(how.name())
            }
            Err(mismatch) => Err(mismatch_reason(path, text, &edit.search, mismatch)),
        }
    }
}

/// Whether `new` can be the whole of a file that held `old`: not a snippet that leaves most of
/// it out, nor one that says it elides the rest (a new comment "# rest of the file unchanged",
/// a new line that is only `...`), nor one that drops a function or class the file defined.
fn whole_file_fits(path: &str, old: &str, new: &str) -> Result<(), String> {
    let lines = |text: &str| text.lines().filter(|l| !l.trim().is_empty()).count();
    let old_lines: BTreeSet<&str> = old.lines().map(str::trim).collect();
    let elides = new
        .lines()
        .map(str::trim)
        .filter(|line| !old_lines.contains(line))
        .any(|line| {
            let lower = line.to_ascii_lowercase();
            let comment = ["#", "//", "/*", "*", "<!--", "--"]
                .iter()
                .any(|c| lower.starts_with(c));
            let said = [
                "rest of",
                "unchanged",
                "remaining",
                "existing code",
                "omitted",
                "same as before",
                "as before",
            ]
            .iter()
            .any(|w| lower.contains(w));
            matches!(line, "..." | "…") || (comment && said)
        });
    if elides || lines(new) * 2 < lines(old) {
        return Err(format!(
            "the whole {path} was sent, but it leaves out most of the file (or says it elides it): send SEARCH/REPLACE blocks for the lines to change"
        ));
    }
    let kept = definitions(new);
    let dropped: Vec<&str> = definitions(old)
        .into_iter()
        .filter(|name| !kept.contains(name))
        .collect();
    if !dropped.is_empty() {
        return Err(format!(
            "the whole {path} was sent, but it leaves out {}: send SEARCH/REPLACE blocks for the lines to change (or the whole file, every definition in it)",
            dropped.join(", ")
        ));
    }
    Ok(())
}

/// `new` in the line endings of `old`, the file it replaces whole: a CRLF file stays CRLF
/// (a model writes `\n`).
fn in_line_endings_of(old: Option<&str>, new: &str) -> String {
    let crlf =
        old.is_some_and(|old| old.contains("\r\n") && !old.replace("\r\n", "").contains('\n'));
    match crlf && !new.contains('\r') {
        true => new.replace('\n', "\r\n"),
        false => new.to_string(),
    }
}

/// The names of the functions and classes `text` defines at the start of a line (`def`,
/// `class`, `fn`, `function`, `func`, after `pub`, `async`, `export`).
fn definitions(text: &str) -> BTreeSet<&str> {
    text.lines()
        .filter_map(|line| {
            let mut rest = line.trim_start();
            for prefix in [
                "pub(crate) ",
                "pub ",
                "export default ",
                "export ",
                "async ",
            ] {
                rest = rest.strip_prefix(prefix).unwrap_or(rest);
            }
            let rest = ["def ", "class ", "fn ", "function ", "func "]
                .iter()
                .find_map(|keyword| rest.strip_prefix(keyword))?;
            let name_end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (name_end > 0).then(|| &rest[..name_end])
        })
        .collect()
}

/// Why a SEARCH text was not taken, with where it was seen or what came closest.
fn mismatch_reason(path: &str, text: &str, search: &str, mismatch: Mismatch) -> String {
    match mismatch {
        Mismatch::Ambiguous { count, lines } => format!(
            "the SEARCH text is in {path} {count} times (lines {}): add lines around it to make it unique",
            lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
        ),
        Mismatch::NotFound => {
            let closest = closest_lines(text, search);
            let mut reason = format!("the SEARCH text is not in {path}");
            if closest.is_empty() {
                reason.push_str("; copy the lines exactly as the file has them");
            } else {
                reason.push_str("; the closest lines are:");
                for (line, content) in closest {
                    reason.push_str(&format!("\n{line}\t{content}"));
                }
            }
            reason
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_read_with_the_path_above_their_fence() {
        let reply = "Fix the bound.\n\nshop/pricing.py\n```python\n<<<<<<< SEARCH\n    if q > 50:\n=======\n    if q >= 50:\n>>>>>>> REPLACE\n```\n\n**`shop/other.py`**\n```\n<<<<<<< SEARCH\na\n=======\n>>>>>>> REPLACE\n```\n";
        let parsed = parse(reply);
        assert_eq!(parsed.problems, Vec::<String>::new());
        assert_eq!(
            parsed.edits,
            vec![
                Edit {
                    path: "shop/pricing.py".into(),
                    search: "    if q > 50:\n".into(),
                    replace: "    if q >= 50:\n".into(),
                    kind: EditKind::Once,
                },
                Edit {
                    path: "shop/other.py".into(),
                    search: "a\n".into(),
                    replace: "".into(),
                    kind: EditKind::Once,
                },
            ]
        );
    }

    #[test]
    fn a_second_block_without_a_path_is_for_the_file_before_and_a_cut_block_is_said() {
        let reply =
            "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nz\n=======\n";
        let parsed = parse(reply);
        assert_eq!(parsed.edits.len(), 1);
        assert_eq!(parsed.problems.len(), 1);
        assert!(parsed.problems[0].contains("block 2 is not closed"));
        let parsed = parse("```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```");
        assert!(parsed.problems[0].contains("names no file"));
    }

    fn edit(path: &str, search: &str, replace: &str) -> Edit {
        Edit {
            path: path.into(),
            search: search.into(),
            replace: replace.into(),
            kind: EditKind::Once,
        }
    }

    #[test]
    fn paths_from_elsewhere_are_refused_and_others_spelled_one_way() {
        for path in [
            "/etc/passwd",
            "~/evil.txt",
            "~user/x",
            "file:///etc/x",
            "a/../b",
            "",
        ] {
            assert!(normalized(path).is_err(), "{path}");
        }
        assert_eq!(
            normalized("./shop//pricing.py"),
            Ok("shop/pricing.py".into())
        );
    }

    #[test]
    fn codex_patch_envelopes_become_one_edit_per_section() {
        let reply = "*** Begin Patch\n*** Update File: shop/pricing.py\n@@ def bulk_discount(quantity: int) -> int:\n     \"\"\"Percent off.\"\"\"\n-    if quantity > 50:\n+    if quantity >= 50:\n         return 20\n@@\n-    if quantity > 10:\n+    if quantity >= 10:\n*** Add File: shop/new.py\n+X = 1\n*** Delete File: old.py\n*** End Patch\n";
        let parsed = parse(reply);
        assert_eq!(
            parsed.edits,
            vec![
                edit(
                    "shop/pricing.py",
                    "    \"\"\"Percent off.\"\"\"\n    if quantity > 50:\n        return 20\n",
                    "    \"\"\"Percent off.\"\"\"\n    if quantity >= 50:\n        return 20\n"
                ),
                edit(
                    "shop/pricing.py",
                    "    if quantity > 10:\n",
                    "    if quantity >= 10:\n"
                ),
                edit("shop/new.py", "", "X = 1\n"),
            ]
        );
        assert!(parsed.problems[0].contains("old.py was not deleted"));
    }

    #[test]
    fn unified_diff_hunks_are_read_without_their_line_numbers() {
        let reply = "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -99,3 +99,3 @@ func Max(a, b int) int {\n \tif a < b {\n-\t\treturn a\n+\t\treturn b\n \t}\n\n--- /dev/null\n+++ b/extra.go\n@@ -0,0 +1 @@\n+package calc\n```\n";
        let parsed = parse(reply);
        assert_eq!(
            parsed.edits,
            vec![
                edit(
                    "calc.go",
                    "\tif a < b {\n\t\treturn a\n\t}\n",
                    "\tif a < b {\n\t\treturn b\n\t}\n"
                ),
                edit("extra.go", "", "package calc\n"),
            ]
        );
    }

    #[test]
    fn a_whole_file_keeps_the_crlf_line_endings_of_the_file_it_replaces() {
        assert_eq!(
            in_line_endings_of(Some("a\r\nb\r\n"), "a\nc\n"),
            "a\r\nc\r\n"
        );
        assert_eq!(in_line_endings_of(Some("a\nb\r\n"), "a\nc\n"), "a\nc\n");
        assert_eq!(in_line_endings_of(None, "a\n"), "a\n");
    }

    #[test]
    fn a_whole_file_that_elides_or_drops_a_definition_is_refused() {
        let helpers: String = (0..30)
            .map(|n| format!("def helper{n}(x):\n    return x + {n}\n\n"))
            .collect();
        let old = format!("def is_adult(age):\n    return age > 18\n\n{helpers}");
        let fixed = old.replace("age > 18", "age >= 18");
        assert_eq!(whole_file_fits("mod.py", &old, &fixed), Ok(()));
        let cut = fixed.split("def helper20").next().unwrap();
        for ending in ["# rest of the file unchanged\n", "...\n", ""] {
            let err = whole_file_fits("mod.py", &old, &format!("{cut}{ending}")).unwrap_err();
            assert!(err.contains("leaves out"), "{ending:?}: {err}");
        }
        let err = whole_file_fits("mod.py", &old, cut).unwrap_err();
        assert!(err.contains("helper20, helper21"), "{err}");
        // A comment or an ellipsis the file had already is not an elision.
        let with_comment = format!("# the rest of the checks come later\n{old}");
        let fixed = with_comment.replace("age > 18", "age >= 18");
        assert_eq!(whole_file_fits("mod.py", &with_comment, &fixed), Ok(()));
    }

    #[test]
    fn a_reply_with_no_other_edit_may_give_whole_files() {
        let parsed = parse("Here it is.\n\nsrc/a.py\n```python\nx = 1\n```\n");
        assert_eq!(
            parsed.edits,
            vec![Edit {
                path: "src/a.py".into(),
                search: String::new(),
                replace: "x = 1\n".into(),
                kind: EditKind::WholeFile,
            }]
        );
        // A fence with a block in it is not a whole file.
        let parsed = parse("a.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n");
        assert_eq!(parsed.edits[0].kind, EditKind::Once);
        // Nor is a snippet after prose.
        assert!(parse("Change it like this:\n```python\nx = 1\n```\n")
            .edits
            .is_empty());
    }
}
