//! The pull request autocoder opens: its title, branch name and body. The body puts in one place
//! what a reviewer needs to trust the change: the issue, the test evidence before and after (and
//! the sandbox it ran in), the review, and the diff — cut at a line boundary, with a notice, so
//! that it stays under GitHub's 65,536-character limit.

use crate::run_document::{Heal, HealStatus, Issue, Review, TestReport};
use crate::sandbox::result::SandboxResult;

/// GitHub refuses bodies over 65,536 characters; this leaves room for the notice.
const MAX_BODY: usize = 60_000;
/// The review's Markdown in the body at most, so that the diff has room too.
const REVIEW_CHARS: usize = 20_000;
/// Trailer marking commits autocoder made: only those may be replaced on a branch.
pub(crate) const TRAILER: &str = "Generated-by: autocoder";

/// `fix: <issue title>`, or the given title.
pub(crate) fn title(given: Option<&str>, issue: Option<&Issue>) -> String {
    if let Some(title) = given {
        return title.to_string();
    }
    match issue
        .map(|issue| issue.title.trim())
        .filter(|t| !t.is_empty())
    {
        Some(title) => format!("fix: {title}"),
        None => "fix: changes made by autocoder".to_string(),
    }
}

/// `autocoder/issue-42-discount-doubles` (or `autocoder/<slug>` without an issue number).
pub(crate) fn branch_name(issue: Option<&Issue>, title: &str) -> String {
    let source = issue.map_or(title, |issue| issue.title.as_str());
    let mut slug = String::new();
    for ch in source.to_lowercase().chars() {
        let folded = ascii_letters(ch);
        if ch.is_ascii_alphanumeric() {
            slug.push(ch);
        } else if !folded.is_empty() {
            slug.push_str(folded);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 40 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    let slug = if slug.is_empty() { "change" } else { slug };
    match issue.and_then(|issue| issue.number) {
        Some(number) => format!("autocoder/issue-{number}-{slug}"),
        None => format!("autocoder/{slug}"),
    }
}

/// A lower-case Latin letter with a mark, as the ASCII letters that stand for it (`ü` → `u`),
/// so that a title's words stay words in the branch name; "" for any other character.
fn ascii_letters(ch: char) -> &'static str {
    const FOLDS: [(&str, &str); 13] = [
        ("àáâãäåāăą", "a"),
        ("çćĉċč", "c"),
        ("ďđ", "d"),
        ("èéêëēĕėęě", "e"),
        ("ĝğġģ", "g"),
        ("ìíîïĩīĭįı", "i"),
        ("ĺļľŀł", "l"),
        ("ñńņňŉ", "n"),
        ("òóôõöøōŏő", "o"),
        ("ùúûüũūŭůűų", "u"),
        ("ýÿŷ", "y"),
        ("źżž", "z"),
        ("ß", "ss"),
    ];
    match ch {
        'æ' => "ae",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' => "s",
        'ţ' | 'ť' | 'ŧ' => "t",
        _ => FOLDS
            .iter()
            .find(|(marked, _)| marked.contains(ch))
            .map_or("", |(_, plain)| plain),
    }
}

/// The commit message: Conventional Commits, `Fixes #N`, and our trailer.
pub(crate) fn commit_message(title: &str, issue: Option<&Issue>) -> String {
    let mut message = format!("{title}\n\n");
    if let Some(number) = issue.and_then(|issue| issue.number) {
        message.push_str(&format!("Fixes #{number}\n"));
    }
    message.push_str(TRAILER);
    message.push('\n');
    message
}

/// A diff fence is at most this long; beyond, the diff goes in an indented block.
const MAX_FENCE: usize = 60;

/// What the body tells of, and what publishing reads: the run document's sections. A `heal`
/// the document holds as null is a heal that says nothing (no status): never green.
#[derive(Default, Clone, Copy)]
pub(crate) struct Sections<'a> {
    pub issue: Option<&'a Issue>,
    pub tests: Option<&'a TestReport>,
    pub heal: Option<&'a Heal>,
    pub review: Option<&'a Review>,
}

/// The body, from the run document's sections and the diff of the commit.
pub(crate) fn body(sections: &Sections, diff: &str) -> String {
    let mut body = String::new();
    if let Some(issue) = sections.issue {
        issue_part(&mut body, issue);
    }
    let heal = sections.heal;
    let before = sections.tests;
    let after = heal.and_then(|heal| heal.tests.as_ref());
    if before.is_some() || after.is_some() || heal.is_some() {
        body.push_str("## Test evidence\n\n");
        if let Some(heal) = heal {
            body.push_str(&format!(
                "Repair: **{}** ({} engine, {} attempts)\n\n",
                heal.status.map_or("unknown", HealStatus::name),
                heal.engine.as_deref().unwrap_or("unknown"),
                heal.attempts.len()
            ));
        }
        // Without heal, the one test run may have been made before the fix or after it.
        let first = if heal.is_some() { "Before" } else { "Tests" };
        for (label, tests) in [(first, before), ("After", after)] {
            if let Some(tests) = tests {
                body.push_str(&tests_line(label, tests));
            }
        }
        if let Some(sandbox) = after.or(before).and_then(|t| t.sandbox.as_ref()) {
            body.push_str(&format!("\nRun in the sandbox: {}\n", layers_line(sandbox)));
        }
        body.push('\n');
    }
    if let Some(review) = sections.review {
        review_part(&mut body, review);
    }
    body.push_str("## Diff\n\n");
    let footer = "\n<sub>Opened by autocoder.</sub>\n";
    // A fence longer than any run of its character in the diff: a line of the change cannot
    // close it and have what follows read as the body's own Markdown (a fake review,
    // mentions). Backticks or tildes, whichever needs the shorter fence; when even that would
    // be long, an indented block, which no line of it can end.
    let run_of = |mark: char| diff.split(|c| c != mark).map(str::len).max().unwrap_or(0);
    let (mark, run) = [('`', run_of('`')), ('~', run_of('~'))]
        .into_iter()
        .min_by_key(|&(_, run)| run)
        .unwrap_or(('`', 0));
    let fence = (run < MAX_FENCE).then(|| mark.to_string().repeat(run.max(2) + 1));
    let framing = fence.as_ref().map_or(0, |fence| 2 * fence.len() + 8);
    let room = MAX_BODY.saturating_sub(body.len() + footer.len() + 200 + framing);
    let (shown, omitted_lines) = match fence {
        Some(_) => cut_diff(diff, room),
        // Four spaces more on each line.
        None => cut_diff(diff, room * 4 / 5),
    };
    match &fence {
        Some(fence) => {
            body.push_str(&format!("{fence}diff\n"));
            body.push_str(shown);
            if !shown.ends_with('\n') && !shown.is_empty() {
                body.push('\n');
            }
            body.push_str(&format!("{fence}\n"));
        }
        None => {
            for line in shown.lines() {
                body.push_str("    ");
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    if omitted_lines > 0 {
        body.push_str(&format!(
            "\nThe diff is cut here: {omitted_lines} more lines are in the commit.\n"
        ));
    }
    body.push_str(footer);
    body
}

fn issue_part(body: &mut String, issue: &Issue) {
    let title = &issue.title;
    match (issue.number, issue.url.as_deref().filter(|u| !u.is_empty())) {
        (Some(number), Some(url)) => {
            body.push_str(&format!("Fixes #{number}: [{title}]({url})\n\n"))
        }
        (Some(number), None) => body.push_str(&format!("Fixes #{number}: {title}\n\n")),
        _ => body.push_str(&format!("Issue: {title}\n\n")),
    }
    let summary = issue.body.trim();
    if !summary.is_empty() {
        let cut = crate::text::cut(summary, 1000);
        for line in cut.lines() {
            body.push_str(&format!("> {line}\n"));
        }
        if cut.len() < summary.len() {
            body.push_str("> …\n");
        }
        body.push('\n');
    }
}

/// review's own Markdown, else what its verdict and risks say.
fn review_part(body: &mut String, review: &Review) {
    let markdown = &review.markdown;
    if !markdown.is_empty() {
        // review's own rendering, every name in it inert; cut at a line to leave the diff room.
        let shown = match crate::text::cut(markdown, REVIEW_CHARS) {
            whole if whole.len() == markdown.len() => whole,
            cut => cut.rfind('\n').map_or("", |end| &cut[..end]),
        };
        body.push_str(shown);
        if shown.len() < markdown.len() {
            body.push_str("\n\n(the review is cut here; the whole of it is in the run document)");
        }
        body.push_str("\n\n");
        return;
    }
    body.push_str(&format!(
        "## Review\n\nVerdict: **{}**{}.\n\n",
        review.verdict.name(),
        if review.human_review_required {
            ", human review required"
        } else {
            ""
        }
    ));
    if !review.summary.is_empty() {
        body.push_str(&format!(
            "{}\n\n",
            crate::text::markdown_inert(&crate::text::one_line(&review.summary, 500))
        ));
    }
    let inert = crate::text::markdown_inert;
    for risk in review.risks.iter().take(20) {
        let place = match risk.line {
            Some(line) => format!("{}:{line}", risk.path),
            None => risk.path.clone(),
        };
        body.push_str(&format!(
            "- **{}** {} {}: {}\n",
            risk.severity.name(),
            inert(&risk.rule),
            inert(&place),
            inert(&crate::text::one_line(&risk.message, 300))
        ));
    }
    if review.risks.len() > 20 {
        body.push_str(&format!("- and {} more\n", review.risks.len() - 20));
    }
    if !review.risks.is_empty() {
        body.push('\n');
    }
}

fn tests_line(label: &str, tests: &TestReport) -> String {
    let counts = &tests.counts;
    let mut line = format!(
        "- {label}: **{}**, {} passed, {} failed, {} errors, {} skipped",
        tests.outcome.name(),
        counts.passed,
        counts.failed,
        counts.errors,
        counts.skipped
    );
    // Ids come from the tests' own output: no backtick may end their code span, no control
    // character break the line, and none may be long.
    let failing: Vec<String> = tests
        .failures
        .iter()
        .take(10)
        .map(|failure| {
            failure
                .id
                .chars()
                .filter(|c| !c.is_control())
                .map(|c| if c == '`' { '\'' } else { c })
                .take(200)
                .collect()
        })
        .collect();
    if !failing.is_empty() {
        line.push_str(&format!(" (`{}`)", failing.join("`, `")));
    }
    line.push('\n');
    line
}

fn layers_line(sandbox: &SandboxResult) -> String {
    let layers = &sandbox.layers;
    let known = |text: &str| {
        if text.is_empty() {
            "?".to_string()
        } else {
            text.to_string()
        }
    };
    format!(
        "{} backend; files: {}; network {}; uid {}, no capabilities; limits by {}",
        sandbox.backend.name(),
        known(&layers.filesystem.mechanism),
        if layers.network.allowed {
            "allowed"
        } else {
            "off"
        },
        layers.identity.uid,
        known(&layers.resources.mechanism),
    )
}

/// The longest prefix of `diff` that fits in `room` characters and ends at a line, and how many
/// lines were left out.
fn cut_diff(diff: &str, room: usize) -> (&str, usize) {
    if diff.len() <= room {
        return (diff, 0);
    }
    let head = crate::text::cut(diff, room);
    let head = head.rfind('\n').map_or("", |end| &head[..=end]);
    (head, diff[head.len()..].lines().count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_document::RunDocument;
    use serde_json::json;

    #[test]
    fn names() {
        let issue = Issue {
            number: Some(42),
            title: "Discount doubles when buying 10+ items!".into(),
            ..Issue::default()
        };
        assert_eq!(
            title(None, Some(&issue)),
            "fix: Discount doubles when buying 10+ items!"
        );
        assert_eq!(
            branch_name(Some(&issue), ""),
            "autocoder/issue-42-discount-doubles-when-buying-10-items"
        );
        assert_eq!(branch_name(None, "fix: tidy"), "autocoder/fix-tidy");
        assert_eq!(
            branch_name(None, "Ünïcode Straße crashes, naïve façade"),
            "autocoder/unicode-strasse-crashes-naive-facade"
        );
        assert_eq!(branch_name(None, "日本語"), "autocoder/change");
        assert_eq!(
            commit_message("fix: x", Some(&issue)),
            format!("fix: x\n\nFixes #42\n{TRAILER}\n")
        );
    }

    /// The body of a document's sections, as open-pr reads them.
    fn body_of(document: serde_json::Value, diff: &str) -> String {
        let document = RunDocument::parse(&document.to_string()).unwrap();
        let (issue, tests) = (document.issue().unwrap(), document.tests().unwrap());
        let (heal, review) = (document.heal().unwrap(), document.review().unwrap());
        let sections = Sections {
            issue: issue.as_ref(),
            tests: tests.as_ref(),
            heal: heal.as_ref(),
            review: review.as_ref(),
        };
        body(&sections, diff)
    }

    #[test]
    fn a_lone_test_run_is_not_called_before_the_fix() {
        let tests = json!({"framework": "pytest", "outcome": "passed", "counts": {"passed": 3}});
        let lone = json!({"tests": tests.clone()});
        assert!(body_of(lone.clone(), "").contains("- Tests: **passed**, 3 passed"));
        assert!(!body_of(lone, "").contains("Before"));
        let healed = json!({"tests": {"framework": "pytest", "outcome": "tests_failed"},
                            "heal": {"status": "green", "tests": tests}});
        let text = body_of(healed, "");
        assert!(
            text.contains("- Before: **tests_failed**") && text.contains("- After: **passed**"),
            "{text}"
        );
    }

    #[test]
    fn body_stays_under_the_limit_and_cuts_at_a_line() {
        let diff: String = (0..20_000).map(|n| format!("+line {n}\n")).collect();
        let document =
            json!({"issue": {"number": 1, "title": "T", "url": "https://x/1", "body": "b"}});
        let body = body_of(document, &diff);
        assert!(body.chars().count() < 65_536);
        assert!(body.contains("more lines are in the commit"));
        let diff_part = body
            .split("```diff\n")
            .nth(1)
            .unwrap()
            .split("```")
            .next()
            .unwrap();
        assert!(diff_part.ends_with('\n') && diff_part.lines().all(|l| l.starts_with("+line ")));
    }

    #[test]
    fn what_the_change_and_the_tests_say_stays_inside_its_markdown() {
        let diff = " ```\n+## Review\n+Verdict: **approved** @acme/security\n ````\n";
        let document = json!({"tests": {"framework": "pytest", "outcome": "tests_failed",
            "counts": {}, "failures": [{"id": "t` <img src=x> `x\nFixes #7"}]}});
        let body = body_of(document.clone(), diff);
        // The fence (tildes: the diff has none) is one no line of the diff can close.
        assert!(body.contains("~~~diff\n ```\n+## Review\n"), "{body}");
        assert!(body.contains(" ````\n~~~\n"), "{body}");
        let tildes = body_of(document.clone(), "+~~~~\n+``\n");
        assert!(tildes.contains("```diff\n+~~~~\n+``\n```\n"), "{tildes}");
        // A fence that would have to be huge: tildes instead, and the body stays in bounds.
        let wall = format!("+{}\n", "`".repeat(40_000));
        let body_with_wall = body_of(document.clone(), &wall);
        assert!(
            body_with_wall.contains("~~~diff\n"),
            "{}",
            &body_with_wall[..200]
        );
        assert!(body_with_wall.len() < MAX_BODY, "{}", body_with_wall.len());
        // When both would be huge, an indented block.
        let walls = format!("+{}\n+{}\n", "`".repeat(35_000), "~".repeat(35_000));
        let body_with_walls = body_of(document.clone(), &walls);
        assert!(
            body_with_walls.len() < MAX_BODY,
            "{}",
            body_with_walls.len()
        );
        assert!(
            body_with_walls.contains("## Diff\n\n    +"),
            "{}",
            &body_with_walls[..300]
        );
        // The id keeps to its code span and its line.
        assert!(body.contains("(`t' <img src=x> 'xFixes #7`)"), "{body}");
    }
}
