//! `review`: what a change touches and what could go wrong, with evidence. The change is read
//! as a diff (`diff`), the deterministic rules look at it (`rules`), each changed source file is
//! mapped to the tests that reach it (`testmap`), and the context a reviewer (person or model)
//! needs is ranked within a budget, each snippet with an evidence id that the risks cite.
//! Renderers turn the same review into Markdown, SARIF 2.1.0 or reviewdog's diagnostics.

pub(crate) mod change;
pub(crate) mod model;
pub(crate) mod render;
pub(crate) mod rules;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use self::change::Change;
use crate::error::Failure;
use crate::git::patch::{self, FileDiff, Hunk, LineKind};
use crate::llm::{Model, Session};
use crate::run_document::{
    FileShown, FileStatus, Review, Risk, Severity, Snippet, TestMapping, Verdict,
};
use crate::secrets::Secrets;
use crate::testmap::{imports, is_test_file, project_files, same_stem};
use crate::workspace::runs_outside::RunsOutside;

/// A review waits less for its model than a repair: CI is waiting on it.
const MODEL_CALL: Duration = Duration::from_secs(120);

/// A change to review.
pub(crate) struct ReviewRequest<'a> {
    /// The project (canonical).
    pub workspace: PathBuf,
    pub change: Change,
    /// The context's size at most, in characters.
    pub budget: usize,
    /// The model asked for findings beyond the rules (`--llm`), as `session` gives it.
    pub model: Option<&'a Session>,
}

/// The session `model` is asked in, withholding the secrets of `workspace` and the model's own.
pub(crate) fn session(model: Model, workspace: &Path) -> Result<Session, Failure> {
    let secrets = Secrets::collect(&model.secrets(), &[], workspace);
    Session::new(model, MODEL_CALL).map(|session| session.withholding(secrets))
}

/// A review, and the lines of the change's new side a comment can be placed on (GitHub's
/// review comments are refused elsewhere).
pub(crate) struct Reviewed {
    pub review: Review,
    pub commentable: BTreeMap<String, BTreeSet<u32>>,
}

/// Reads the change and reviews it: the rules, then the model's findings when one is asked,
/// then the Markdown.
pub(crate) fn run(request: &ReviewRequest) -> Result<Reviewed, Failure> {
    let files = change::read(&request.workspace, &request.change)?;
    let commentable = patch::new_side_lines(&files);
    let mut review = review(&request.workspace, files, request.budget);
    // Nothing changed: nothing for the model to judge.
    if let Some(session) = request.model.filter(|_| !review.files.is_empty()) {
        let (findings, outcome) = model::ask(session, &review)?;
        if let Some(error) = &outcome.error {
            crate::log::warn("review", error);
        }
        review = review.with_model(findings, outcome);
    }
    review.markdown = render::markdown(&review);
    Ok(Reviewed {
        review,
        commentable,
    })
}

/// Reviews `files` (the change) of the project at `workspace`, with at most `budget` characters
/// of context.
/// `3 files changed (+10 -2); 2 risks (1 high, 1 medium): test-weakened, auth-crypto`.
fn summary_line(files: &[FileDiff], risks: &[Risk]) -> String {
    let (added, removed) = files
        .iter()
        .fold((0, 0), |(a, r), f| (a + f.added(), r + f.removed()));
    let mut summary = format!(
        "{} file{} changed (+{added} -{removed})",
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    if risks.is_empty() {
        summary.push_str("; no risk found");
    } else {
        let mut by_rule: Vec<&str> = risks.iter().map(|r| r.rule.as_str()).collect();
        by_rule.dedup();
        summary.push_str(&format!(
            "; {} risk{} ({}): {}",
            risks.len(),
            if risks.len() == 1 { "" } else { "s" },
            [Severity::High, Severity::Medium, Severity::Low]
                .iter()
                .filter_map(|s| {
                    let n = risks.iter().filter(|r| r.severity == *s).count();
                    (n > 0).then(|| format!("{n} {}", s.name()))
                })
                .collect::<Vec<_>>()
                .join(", "),
            by_rule.join(", ")
        ));
    }
    summary
}

fn review(workspace: &Path, files: Vec<FileDiff>, budget: usize) -> Review {
    let project = project_files(workspace, 50_000);
    let test_mapping = map_tests(workspace, &files, &project);
    let mut risks = rules::check(
        &files,
        &test_mapping.untested,
        &test_modules(workspace, &files),
        &RunsOutside::of(workspace),
    );
    let context = rank_context(workspace, &files, &project, &test_mapping, budget);
    for risk in &mut risks {
        risk.evidence_id = evidence_for(&context, &risk.path, risk.line);
    }
    risks.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.path.cmp(&b.path))
            .then(a.line.cmp(&b.line))
    });
    let verdict = match risks.iter().map(|r| r.severity).max() {
        Some(Severity::High) => Verdict::Block,
        Some(_) => Verdict::NeedsAttention,
        None => Verdict::Pass,
    };
    let summary = summary_line(&files, &risks);
    let files_shown = files
        .iter()
        .map(|f| FileShown {
            path: f.path().to_string(),
            status: f.status,
            old_path: (f.status == FileStatus::Renamed || f.status == FileStatus::Copied)
                .then(|| f.old_path().map(Cow::into_owned))
                .flatten(),
            added: f.added(),
            removed: f.removed(),
            language: language(&f.path()).map(str::to_string),
            binary: f.is_binary(),
            untracked: f.untracked,
        })
        .collect();
    Review {
        verdict,
        summary,
        files: files_shown,
        risks,
        test_mapping,
        context,
        findings: Vec::new(),
        model: None,
        posted: None,
        human_review_required: true,
        markdown: String::new(),
        other: Default::default(),
    }
}

impl Review {
    /// The review with a model's findings (`model::ask`): said in the summary; they make a
    /// passing change one that needs attention, but never block it alone.
    pub(crate) fn with_model(
        mut self,
        findings: Vec<Risk>,
        outcome: crate::run_document::ModelReview,
    ) -> Review {
        self.summary.push_str(&match &outcome.error {
            Some(_) => "; the model's answer could not be used".to_string(),
            None => format!(
                "; the model: {} finding{}{}",
                findings.len(),
                if findings.len() == 1 { "" } else { "s" },
                match outcome.dropped {
                    0 => String::new(),
                    n => format!(" ({n} without valid evidence dropped)"),
                }
            ),
        });
        if !findings.is_empty() && self.verdict == Verdict::Pass {
            self.verdict = Verdict::NeedsAttention;
        }
        self.findings = findings;
        self.model = Some(outcome);
        self
    }
}

/// Where each changed Rust source file's own tests module starts (its `#[cfg(test)]` line), as
/// the workspace holds it.
fn test_modules(workspace: &Path, files: &[FileDiff]) -> BTreeMap<String, u32> {
    files
        .iter()
        .filter(|file| {
            let path: &str = &file.path();
            path.ends_with(".rs")
                && !is_test_file(path)
                && !path.starts_with('/')
                && !path.split('/').any(|part| part == "..")
        })
        .filter_map(|file| {
            let text =
                crate::workspace::read_regular_file(&workspace.join(&*file.path()), 4 << 20)?;
            let line = text
                .lines()
                .position(|line| line.trim() == "#[cfg(test)]")?;
            Some((file.path().to_string(), line as u32 + 1))
        })
        .collect()
}

/// The language of a source file, by its name.
fn language(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.').map(|(_, e)| e)?;
    Some(match extension {
        "py" => "python",
        "js" | "mjs" | "cjs" | "jsx" => "javascript",
        "ts" | "tsx" | "mts" | "cts" => "typescript",
        "rs" => "rust",
        "go" => "go",
        "java" => "java",
        "rb" => "ruby",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" => "c++",
        "sh" => "shell",
        _ => return None,
    })
}

/// Each changed source file's tests: test files named for it, test files that import it, a Go
/// package's `_test.go` files, a Rust file's own `#[cfg(test)]` module.
fn map_tests(root: &Path, files: &[FileDiff], project: &[String]) -> TestMapping {
    let tests: Vec<&String> = project.iter().filter(|p| is_test_file(p)).collect();
    // What each test imports, read once.
    let imported: Vec<(&String, Vec<String>)> = tests
        .iter()
        .map(|test| {
            let text =
                crate::workspace::read_regular_file(&root.join(test), 1 << 20).unwrap_or_default();
            let mut reached = imports(test, &text, project);
            reached.extend(same_stem(test, project));
            (*test, reached)
        })
        .collect();
    let mut mapping = TestMapping::default();
    for file in files.iter().filter(|f| f.status != FileStatus::Deleted) {
        let path: &str = &file.path();
        let Some(lang) = language(path) else { continue };
        if is_test_file(path) {
            continue;
        }
        let mut covering: Vec<String> = imported
            .iter()
            .filter(|(_, reached)| reached.iter().any(|r| r == path))
            .map(|(test, _)| test.to_string())
            .collect();
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        if lang == "go" {
            covering.extend(
                tests
                    .iter()
                    .filter(|t| {
                        t.ends_with("_test.go") && t.rsplit_once('/').map_or("", |(d, _)| d) == dir
                    })
                    .map(|t| t.to_string()),
            );
        }
        if lang == "rust" {
            let text =
                crate::workspace::read_regular_file(&root.join(path), 4 << 20).unwrap_or_default();
            if text.contains("#[cfg(test)]") || text.contains("#[test]") {
                covering.push(path.to_string());
            }
        }
        covering.sort();
        covering.dedup();
        if covering.is_empty() {
            mapping.untested.push(path.to_string());
        } else {
            mapping.covered.insert(path.to_string(), covering);
        }
    }
    mapping
}

/// The context: every changed hunk first (in the order of the diff), then the functions they
/// changed, whole, then the places that call those functions, then the first lines of the tests
/// that reach changed files, while `budget` characters last.
/// Long: four kinds of evidence in rank order, sharing one budget and one numbering through `push`.
fn rank_context(
    root: &Path,
    files: &[FileDiff],
    project: &[String],
    mapping: &TestMapping,
    budget: usize,
) -> Vec<Snippet> {
    let mut snippets = Vec::new();
    let mut used = 0;
    // One snippet takes a quarter of the budget at most, so that one large hunk leaves room
    // for the evidence of the others; one that does not fit is left out, the rest still tried.
    let most = budget / 4;
    // `numbers`: the line of the new file each of the text's lines shows (a removed line, the
    // one before it), so that a cut snippet's range holds only the lines it still shows.
    let mut push = |mut snippet: Snippet, numbers: Vec<u32>, snippets: &mut Vec<Snippet>| {
        if snippet.text.len() > most {
            let cut = crate::text::cut(&snippet.text, most.saturating_sub(40)).to_string();
            let shown = cut.matches('\n').count();
            snippet.end_line = numbers[..shown.min(numbers.len())]
                .iter()
                .copied()
                .max()
                .unwrap_or(snippet.start_line)
                .max(snippet.start_line);
            snippet.text = format!(
                "{cut}\n[... cut: {} bytes in all; lines {}-{} shown]\n",
                snippet.text.len(),
                snippet.start_line,
                snippet.end_line
            );
        }
        if used + snippet.text.len() <= budget {
            used += snippet.text.len();
            snippets.push(snippet);
        }
    };
    let mut number = 0;
    for file in files {
        for hunk in file.hunks.iter().flatten() {
            number += 1;
            let (snippet, numbers) = hunk_snippet(file, hunk, format!("E{number}"));
            push(snippet, numbers, &mut snippets);
        }
    }
    let changed = changed_functions(root, files);
    let callers = callers_of(root, project, &changed);
    let functions = changed.into_iter().filter(|f| !f.in_a_hunk);
    for (kind, shown) in [("function", functions.collect()), ("caller", callers)] {
        for Shown {
            path, first, text, ..
        } in shown
        {
            let text = crate::secrets::scan::redact(&text);
            let last = first + text.lines().count().max(1) as u32 - 1;
            number += 1;
            let snippet = Snippet {
                evidence_id: format!("E{number}"),
                path,
                kind: kind.into(),
                start_line: first,
                end_line: last,
                text,
            };
            push(snippet, (first..=last).collect(), &mut snippets);
        }
    }
    let tests: Vec<&String> = {
        let mut all: Vec<&String> = mapping.covered.values().flatten().collect();
        all.sort();
        all.dedup();
        all
    };
    for test in tests {
        let Some(text) = crate::workspace::read_regular_file(&root.join(test), 1 << 20) else {
            continue;
        };
        let head: String = text.lines().take(60).map(|l| format!("{l}\n")).collect();
        let head = crate::secrets::scan::redact(&head);
        number += 1;
        let lines = head.lines().count() as u32;
        let snippet = Snippet {
            evidence_id: format!("E{number}"),
            path: test.clone(),
            kind: "test".into(),
            start_line: 1,
            end_line: lines.max(1),
            text: head,
        };
        push(snippet, (1..=lines.max(1)).collect(), &mut snippets);
    }
    snippets
}

/// A hunk of `file` as evidence: its lines marked as a diff shows them (none of a credential
/// file's), and the new file's line each one shows (a removed line: the one before it).
fn hunk_snippet(file: &FileDiff, hunk: &Hunk, evidence_id: String) -> (Snippet, Vec<u32>) {
    let mut text = String::new();
    for line in &hunk.lines {
        let mark = match line.kind {
            LineKind::Added => '+',
            LineKind::Removed => '-',
            LineKind::Context => ' ',
        };
        text.push(mark);
        text.push_str(&line.text);
        text.push('\n');
    }
    let text = if crate::secrets::is_credential_file(&file.path()) {
        "[withheld: a credential file]\n".to_string()
    } else {
        crate::secrets::scan::redact(&text)
    };
    // The new file's lines: a hunk that only removes shows the line where it did.
    let mut numbers = Vec::new();
    let mut last = hunk.new_start;
    for line in &hunk.lines {
        last = line.new.unwrap_or(last);
        numbers.push(last);
    }
    let new_lines = || hunk.lines.iter().filter_map(|l| l.new);
    let snippet = Snippet {
        evidence_id,
        path: file.path().to_string(),
        kind: "hunk".into(),
        start_line: new_lines().min().unwrap_or(hunk.new_start),
        end_line: new_lines().max().unwrap_or(hunk.new_start),
        text,
    };
    (snippet, numbers)
}

/// The functions the hunks of `files` add or change lines in, whole, as the workspace at `root`
/// holds them: (path, first line, text), once each, in the order of the diff. Only where the
/// workspace holds the change (its added lines where the diff puts them): a diff given with
/// `--diff` may be of another tree. One a hunk shows whole already is marked so.
fn changed_functions(root: &Path, files: &[FileDiff]) -> Vec<Shown> {
    let mut found = Vec::new();
    for file in files {
        let path: &str = &file.path();
        let Some(lang) = crate::syntax::Lang::of(path) else {
            continue;
        };
        if file.new.is_none() || crate::secrets::is_credential_file(path) {
            continue;
        }
        let Some(text) = crate::workspace::read_regular_file(&root.join(path), 1 << 20) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        let holds = |number: u32, wanted: &str| {
            lines
                .get(number as usize - 1)
                .is_some_and(|line| *line == wanted)
        };
        // Parsed, and its functions found, once a hunk is known to be in the file.
        let mut parsed = None;
        for hunk in file.hunks.iter().flatten() {
            let added: Vec<(u32, &str)> = hunk
                .lines
                .iter()
                .filter(|line| line.kind == LineKind::Added)
                .filter_map(|line| Some((line.new?, line.text.as_str())))
                .collect();
            if !added
                .iter()
                .all(|(number, text)| *number >= 1 && holds(*number, text))
            {
                continue;
            }
            let shown = hunk.lines.iter().filter_map(|line| line.new);
            let (low, high) = (shown.clone().min(), shown.max());
            let touched = added.first().map_or(hunk.new_start, |(number, _)| *number) as usize;
            let Some(tree) = parsed
                .get_or_insert_with(|| crate::syntax::parse(lang, &text))
                .as_ref()
            else {
                break;
            };
            let Some(function) = crate::syntax::innermost_function(lang, tree, touched) else {
                continue;
            };
            let first = function.start_position().row + 1;
            let last = function.end_position().row + 1;
            if found
                .iter()
                .any(|s: &Shown| s.path == path && s.first as usize == first)
            {
                continue;
            }
            found.push(Shown {
                path: path.to_string(),
                first: first as u32,
                last: last as u32,
                text: lines_of(&lines, first, last),
                name: function
                    .child_by_field_name("name")
                    .map(|name| text[name.byte_range()].to_string()),
                in_a_hunk: low
                    .zip(high)
                    .is_some_and(|(low, high)| low as usize <= first && last <= high as usize),
            });
        }
    }
    found
}

/// Lines of a file to show in the context.
struct Shown {
    path: String,
    first: u32,
    last: u32,
    text: String,
    /// The function's name, for a function.
    name: Option<String>,
    /// Shown whole by a hunk already (looked at for its callers only).
    in_a_hunk: bool,
}

/// Lines `first..=last` (1-based) of `lines`, each ended by a newline.
fn lines_of(lines: &[&str], first: usize, last: usize) -> String {
    lines[first - 1..last.min(lines.len())]
        .iter()
        .map(|line| format!("{line}\n"))
        .collect()
}

/// Where the project's other code calls the `changed` functions: for each name, the first
/// `PER_FUNCTION` calls outside the function itself, each as the function around it (or a few
/// lines where it is in none), in files of the same language that are not tests (the tests come
/// next). Each file is read once, at most `MOST_FILES` of them; the callers of the first
/// `MOST_FUNCTIONS` functions only (more would not fit in the context).
fn callers_of(root: &Path, project: &[String], changed: &[Shown]) -> Vec<Shown> {
    use crate::syntax::Lang;
    const PER_FUNCTION: usize = 3;
    const MOST_FILES: usize = 5_000;
    const MOST_FUNCTIONS: usize = 20;
    // Each name with its language, its function and how many calls were found.
    let mut wanted: Vec<(&str, Lang, &Shown, usize)> = changed
        .iter()
        .filter_map(|shown| {
            let name = shown.name.as_deref().filter(|name| name.len() >= 3)?;
            Some((name, Lang::of(&shown.path)?, shown, 0))
        })
        .take(MOST_FUNCTIONS)
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let names: Vec<String> = wanted
        .iter()
        .map(|(name, ..)| regex::escape(name))
        .collect();
    let call = regex::Regex::new(&format!(r"\b({})\s*\(", names.join("|"))).expect("escaped");
    let mut found: Vec<Shown> = Vec::new();
    for path in project.iter().filter(|p| !is_test_file(p)).take(MOST_FILES) {
        let Some(lang) = Lang::of(path) else {
            continue;
        };
        if wanted.iter().all(|w| w.1 != lang || w.3 >= PER_FUNCTION) {
            continue;
        }
        let Some(text) = crate::workspace::read_regular_file(&root.join(path), 1 << 20) else {
            continue;
        };
        if !call.is_match(&text) {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        let tree = crate::syntax::parse(lang, &text);
        for (at, line) in lines.iter().enumerate() {
            let number = at + 1;
            for called in call.captures_iter(line) {
                let Some(entry) = wanted
                    .iter_mut()
                    .find(|w| w.0 == &called[1] && w.1 == lang && w.3 < PER_FUNCTION)
                else {
                    continue;
                };
                let inside = |s: &Shown| {
                    s.path == *path && (s.first as usize..=s.last as usize).contains(&number)
                };
                // In a changed function (its definition, a recursion) or in one shown already.
                if changed.iter().any(inside) || found.iter().any(inside) {
                    continue;
                }
                let (first, last) = tree
                    .as_ref()
                    .and_then(|tree| crate::syntax::enclosing_function(lang, tree, number))
                    .unwrap_or((
                        number.saturating_sub(3).max(1),
                        (number + 3).min(lines.len()),
                    ));
                entry.3 += 1;
                found.push(Shown {
                    path: path.clone(),
                    first: first as u32,
                    last: last as u32,
                    text: lines_of(&lines, first, last),
                    name: None,
                    in_a_hunk: false,
                });
            }
        }
    }
    found
}

/// The snippet that shows `path` at `line` (or its first), if the budget kept one.
fn evidence_for(context: &[Snippet], path: &str, line: Option<u32>) -> String {
    let of_file = || {
        context
            .iter()
            .filter(|s| s.path == path && s.kind == "hunk")
    };
    line.and_then(|line| of_file().find(|s| (s.start_line..=s.end_line).contains(&line)))
        .or_else(|| of_file().next())
        .map(|s| s.evidence_id.clone())
        .unwrap_or_default()
}
