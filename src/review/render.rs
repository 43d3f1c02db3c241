//! The review in the formats reviewers' tools read: Markdown (a pull request's body), SARIF
//! 2.1.0 (GitHub code scanning) and reviewdog's diagnostics, one JSON object per line
//! (rdjsonl). Positions are 1-based lines; a risk without a line is placed at line 1 (SARIF
//! needs a region) or on the file alone (rdjsonl).

use serde_json::{json, Value};

use crate::text::markdown_inert as inert;

use super::rules::RULES;
use super::Review;
use crate::run_document::{Risk, Severity};

/// Markdown for a pull request's body or a terminal.
pub(crate) fn markdown(review: &Review) -> String {
    let mut out = format!(
        "## Review: **{}**\n\n{}.\n\n",
        review.verdict.name(),
        review.summary
    );
    if !review.risks.is_empty() || !review.findings.is_empty() {
        out.push_str("| severity | rule | where | what |\n|---|---|---|---|\n");
        for risk in review.risks.iter().chain(&review.findings) {
            let place = match risk.line {
                Some(line) => format!("{}:{line}", inert(&risk.path)),
                None => inert(&risk.path),
            };
            out.push_str(&format!(
                "| {} | {} | {place} | {} |\n",
                risk.severity.name(),
                risk.rule,
                inert(&risk.message)
            ));
        }
        out.push('\n');
    }
    out.push_str("Files:\n\n");
    for file in &review.files {
        let mut note = String::new();
        if file.untracked {
            note.push_str(", untracked");
        }
        if file.binary {
            note.push_str(", binary");
        }
        out.push_str(&format!(
            "- {} ({}, +{} -{}{note})\n",
            inert(&file.path),
            file.status.name(),
            file.added,
            file.removed
        ));
    }
    if !review.test_mapping.covered.is_empty() || !review.test_mapping.untested.is_empty() {
        out.push_str("\nTests:\n\n");
        for (file, tests) in &review.test_mapping.covered {
            let tests: Vec<String> = tests.iter().map(|t| inert(t)).collect();
            out.push_str(&format!("- {}: {}\n", inert(file), tests.join(", ")));
        }
        for file in &review.test_mapping.untested {
            out.push_str(&format!("- {}: no test reaches it\n", inert(file)));
        }
    }
    if review.human_review_required {
        out.push_str("\n_A person must review this change before it is merged._\n");
    }
    out
}

/// A risk's severity for tools that gate on it: a model's finding is at most medium there, as
/// it never blocks a change alone.
fn shown_severity(risk: &Risk) -> Severity {
    match risk.rule.as_str() {
        "model" => risk.severity.min(Severity::Medium),
        _ => risk.severity,
    }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// SARIF 2.1.0, one run, the rules that exist and the results found.
pub(crate) fn sarif(review: &Review) -> Value {
    let mut rules: Vec<Value> = RULES
        .iter()
        .map(|rule| {
            json!({"id": rule.id, "shortDescription": {"text": rule.summary},
                   "defaultConfiguration": {"level": level(rule.severity)}})
        })
        .collect();
    if !review.findings.is_empty() {
        rules.push(json!({"id": "model", "shortDescription": {"text":
            "A model's finding, citing the change's evidence (not checked by a rule)"},
            "defaultConfiguration": {"level": "note"}}));
    }
    let results: Vec<Value> = review
        .risks
        .iter()
        .chain(&review.findings)
        .map(|risk| {
            let fingerprint = format!(
                "{:016x}",
                crate::text::fnv1a(format!("{}:{}:{}", risk.rule, risk.path, risk.message).bytes())
            );
            json!({
                "ruleId": risk.rule,
                "level": level(shown_severity(risk)),
                // Shown to people (code scanning's alerts): controls made visible.
                "message": {"text": crate::text::sanitize_for_terminal(&risk.message)},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": uri(&risk.path)},
                    "region": {"startLine": risk.line.unwrap_or(1)}
                }}],
                "partialFingerprints": {"autocoderRisk/v1": fingerprint}
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "autocoder", "version": env!("CARGO_PKG_VERSION"),
                                "informationUri": "https://github.com/autocoder/autocoder",
                                "rules": rules}},
            "results": results
        }]
    })
}

/// A posted review's comments at most, and its body's size (GitHub refuses one over 65,536).
const MAX_COMMENTS: usize = 50;
const MAX_BODY: usize = 60_000;

/// A GitHub pull request review (`POST .../pulls/N/reviews`): the Markdown as its body, and a
/// comment for each risk and finding on a line the diff shows (`anchors`, from
/// `diff::new_side_lines`); the others stay in the body's table, whose note says how many. With
/// the number of comments.
pub(crate) fn github_review(
    review: &Review,
    anchors: &std::collections::BTreeMap<String, std::collections::BTreeSet<u32>>,
) -> (Value, usize) {
    let anchored = |risk: &Risk| {
        risk.line.is_some_and(|line| {
            anchors
                .get(&risk.path)
                .is_some_and(|lines| lines.contains(&line))
        })
    };
    let all: Vec<&Risk> = review.risks.iter().chain(&review.findings).collect();
    let comments: Vec<Value> = all
        .iter()
        .filter(|risk| anchored(risk))
        .take(MAX_COMMENTS)
        .map(|risk| {
            json!({"path": risk.path, "line": risk.line, "side": "RIGHT",
                   "body": format!("**{}** `{}`: {}", risk.severity.name(), risk.rule, inert(&risk.message))})
        })
        .collect();
    let mut body = markdown(review);
    if body.len() > MAX_BODY {
        body = format!(
            "{}\n\n[... the review is cut at {MAX_BODY} of {} characters: the whole of it is in the run document]\n",
            crate::text::cut(&body, MAX_BODY),
            body.len()
        );
    }
    let elsewhere = all.len() - comments.len();
    if elsewhere > 0 {
        body.push_str(&format!(
            "\n{elsewhere} of the risks above {} on no line of the diff (or past the first {MAX_COMMENTS}), so {} only here.\n",
            if elsewhere == 1 { "is" } else { "are" },
            if elsewhere == 1 { "it is" } else { "they are" }
        ));
    }
    let count = comments.len();
    (
        json!({"event": "COMMENT", "body": body, "comments": comments}),
        count,
    )
}

/// reviewdog's diagnostics, one per line.
pub(crate) fn rdjsonl(review: &Review) -> String {
    let mut out = String::new();
    for risk in review.risks.iter().chain(&review.findings) {
        let severity = match shown_severity(risk) {
            Severity::High => "ERROR",
            Severity::Medium => "WARNING",
            Severity::Low => "INFO",
        };
        let mut location = json!({"path": risk.path});
        if let Some(line) = risk.line {
            location["range"] = json!({"start": {"line": line}});
        }
        let diagnostic = json!({
            "message": crate::text::sanitize_for_terminal(&risk.message),
            "location": location,
            "severity": severity,
            "source": {"name": "autocoder"},
            "code": {"value": risk.rule},
            "original_output": risk.evidence_id,
        });
        out.push_str(&diagnostic.to_string());
        out.push('\n');
    }
    out
}

/// A relative path as an RFC 3986 URI reference: every byte but the unreserved ones and `/`
/// percent-encoded.
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for &byte in path.as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
