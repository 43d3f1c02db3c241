//! Where issues come from and pull requests go: GitHub's REST API (`github`), issue references
//! (`issue_ref`) and fetching what they name (`fetch`), issues written as local Markdown or JSON
//! (each becomes the run document's `issue`), the pull request a repair becomes
//! (`pull_request` writes it, `publish` opens it), and a review posted on one (`review_post`).

pub(crate) mod fetch;
pub(crate) mod github;
pub(crate) mod issue_ref;
pub(crate) mod publish;
pub(crate) mod pull_request;
pub(crate) mod review_post;

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::error::Failure;
use crate::run_document::{Comment, Issue};

/// The default API, when neither `--api-url` nor `GITHUB_API_URL` says otherwise.
pub(crate) const GITHUB_API: &str = "https://api.github.com";

/// A GitHub issue and its comments (as the REST API gives them) in the run document's shape.
pub(crate) fn issue_from_github(repo: &str, issue: &Value, comments: &[Value]) -> Issue {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let login = |v: &Value| {
        v.get("user")
            .and_then(|u| u.get("login"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let labels: Vec<String> = issue
        .get("labels")
        .and_then(Value::as_array)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|l| {
                    l.as_str()
                        .map(String::from)
                        .or_else(|| l.get("name").and_then(Value::as_str).map(String::from))
                })
                .collect()
        })
        .unwrap_or_default();
    Issue {
        source: "github".into(),
        repo: Some(repo.to_string()),
        number: issue.get("number").and_then(Value::as_u64),
        url: Some(text(issue, "html_url")),
        title: text(issue, "title"),
        body: text(issue, "body"),
        labels,
        state: Some(text(issue, "state")),
        author: Some(login(issue)),
        pull_request: Some(issue.get("pull_request").is_some_and(|p| !p.is_null())),
        comments: comments
            .iter()
            .map(|c| Comment {
                author: login(c),
                body: text(c, "body"),
                created_at: text(c, "created_at"),
                ..Comment::default()
            })
            .collect(),
        ..Issue::default()
    }
}

/// An issue written in Markdown: the title from front matter (`title:`) or the first heading,
/// the rest as the body.
pub(crate) fn issue_from_markdown(text: &str, path: Option<&Path>) -> Result<Issue, Failure> {
    let mut title = None;
    let mut labels: Vec<String> = Vec::new();
    let mut body = text;
    if let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    {
        if let Some(end) = rest.find("\n---") {
            for line in rest[..end].lines() {
                if let Some((key, value)) = line.split_once(':') {
                    let value = value.trim().trim_matches(['"', '\'']);
                    match key.trim() {
                        "title" => title = Some(value.to_string()),
                        "labels" => {
                            labels = value
                                .trim_matches(['[', ']'])
                                .split(',')
                                .map(|l| l.trim().trim_matches(['"', '\'']).to_string())
                                .filter(|l| !l.is_empty())
                                .collect()
                        }
                        _ => {}
                    }
                }
            }
            body = rest[end + 4..].trim_start_matches(['\r', '\n']);
        }
    }
    let mut lines: Vec<&str> = body.lines().collect();
    if title.is_none() {
        // The first heading, of any level (`# Title`, `## Title`, ...).
        let heading = |line: &str| {
            let text = line.trim_start_matches('#');
            let level = line.len() - text.len();
            ((1..=6).contains(&level) && text.starts_with(' ')).then(|| text.trim().to_string())
        };
        if let Some(index) = lines.iter().position(|l| heading(l).is_some()) {
            title = heading(lines[index]);
            lines.remove(index);
        }
    }
    let title = title.filter(|t| !t.is_empty()).ok_or_else(|| {
        Failure::usage("the Markdown issue has no title")
            .with_hint("start it with a `# Title` line or front matter with `title:`")
    })?;
    Ok(Issue {
        source: "markdown".into(),
        path: path.map(|p| p.display().to_string()),
        title,
        body: lines.join("\n").trim().to_string(),
        labels,
        ..Issue::default()
    })
}

/// An issue in JSON: a run document (its `issue`), or an issue object (ours or GitHub's).
pub(crate) fn issue_from_json(text: &str) -> Result<Issue, Failure> {
    let value: Value = serde_json::from_str(text)
        .map_err(|err| Failure::usage(format!("the issue file is not JSON: {err}")))?;
    let not_an_issue = |err: serde_json::Error| {
        Failure::usage(format!("the JSON issue cannot be read: {err}"))
            .with_hint("give an issue object with title and body, or a run document with `issue`")
    };
    if let Some(issue) = value.get("issue").filter(|i| i.is_object()) {
        return Issue::deserialize(issue).map_err(not_an_issue);
    }
    if value.get("title").and_then(Value::as_str).is_none() {
        return Err(Failure::usage("the JSON issue has no `title`").with_hint(
            "give an issue object with title and body, or a run document with `issue`",
        ));
    }
    // The repository an issue's own address names.
    let repo_of_url = |value: &Value| {
        let url = value
            .get("html_url")
            .or_else(|| value.get("url"))?
            .as_str()?;
        match issue_ref::IssueRef::parse(url).ok()? {
            issue_ref::IssueRef::GitHub { owner, repo, .. } => Some(format!("{owner}/{repo}")),
            _ => None,
        }
    };
    if value.get("user").is_some() || value.get("html_url").is_some() {
        // GitHub's own shape (saved from the API or `gh api`).
        let repo = value
            .get("repository_url")
            .and_then(Value::as_str)
            .and_then(|u| {
                let mut parts = u.rsplitn(3, '/');
                let name = parts.next()?;
                let owner = parts.next()?;
                Some(format!("{owner}/{name}"))
            })
            .or_else(|| repo_of_url(&value));
        return Ok(issue_from_github(
            repo.as_deref().unwrap_or(""),
            &value,
            &[],
        ));
    }
    let mut value = value;
    from_gh_json(&mut value);
    let mut issue = Issue::deserialize(&value).map_err(not_an_issue)?;
    issue.source = "json".into();
    if issue.repo.is_none() {
        issue.repo = repo_of_url(&value);
    }
    Ok(issue)
}

/// `gh issue view --json ...`'s shape made ours: its author (and its comments') are objects
/// with a `login`, its labels objects with a `name`, a comment's time is `createdAt`.
fn from_gh_json(issue: &mut Value) {
    fn login(person: &mut Value) {
        if let Some(login) = person.get("login").and_then(Value::as_str) {
            *person = Value::String(login.to_string());
        }
    }
    if let Some(author) = issue.get_mut("author") {
        login(author);
    }
    if let Some(labels) = issue.get_mut("labels").and_then(Value::as_array_mut) {
        for label in labels {
            if let Some(name) = label.get("name").and_then(Value::as_str) {
                *label = Value::String(name.to_string());
            }
        }
    }
    if let Some(comments) = issue.get_mut("comments").and_then(Value::as_array_mut) {
        for comment in comments.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(author) = comment.get_mut("author") {
                login(author);
            }
            if let Some(created) = comment.remove("createdAt") {
                comment.entry("created_at").or_insert(created);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_with_heading_or_front_matter() {
        let issue = issue_from_markdown("Intro\n# Prices are wrong\nThe discount doubles.\n", None)
            .unwrap();
        assert_eq!(issue.title, "Prices are wrong");
        assert_eq!(issue.body, "Intro\nThe discount doubles.");
        let issue = issue_from_markdown(
            "---\ntitle: \"Crash on empty cart\"\nlabels: [bug, p1]\n---\n# Steps\n1. open\n",
            None,
        )
        .unwrap();
        assert_eq!(issue.title, "Crash on empty cart");
        assert_eq!(issue.labels, ["bug", "p1"]);
        assert_eq!(issue.body, "# Steps\n1. open");
        assert!(issue_from_markdown("no title here", None).is_err());
    }

    #[test]
    fn json_shapes() {
        let ours = issue_from_json(r#"{"title": "T", "body": "B", "priority": 1}"#).unwrap();
        assert_eq!(
            (ours.title.as_str(), ours.source.as_str(), ours.labels.len()),
            ("T", "json", 0)
        );
        assert_eq!(ours.other["priority"], 1);
        let doc = issue_from_json(r#"{"autocoder": 1, "issue": {"title": "From doc"}}"#).unwrap();
        assert_eq!(doc.title, "From doc");
        let github = issue_from_json(r#"{"title": "G", "number": 4, "user": {"login": "ann"}, "labels": [{"name": "bug"}], "repository_url": "https://api.github.com/repos/acme/shop"}"#).unwrap();
        assert_eq!(
            (github.author.as_deref(), github.repo.as_deref()),
            (Some("ann"), Some("acme/shop"))
        );
        assert_eq!(github.labels, ["bug"]);
        assert!(issue_from_json(r#"{"body": "no title"}"#).is_err());
        assert!(issue_from_json(r#"{"title": "T", "labels": "bug"}"#).is_err());
        // As `gh issue view 42 --json title,body,labels,author,url,number,state,comments` saves it.
        let gh = issue_from_json(
            r#"{"author": {"id": "U1", "is_bot": false, "login": "ann", "name": "Ann"},
                "body": "It doubles.", "labels": [{"id": "L1", "name": "bug", "color": "d73a4a"}],
                "number": 42, "state": "OPEN", "title": "Discount doubles",
                "url": "https://github.com/acme/shop/issues/42",
                "comments": [{"author": {"login": "bob"}, "body": "Same here.",
                              "createdAt": "2026-11-30T10:00:00Z", "url": "https://x"}]}"#,
        )
        .unwrap();
        assert_eq!(
            (
                gh.author.as_deref(),
                gh.labels.as_slice(),
                gh.repo.as_deref(),
                gh.number
            ),
            (
                Some("ann"),
                &["bug".to_string()][..],
                Some("acme/shop"),
                Some(42)
            )
        );
        assert_eq!(
            (
                gh.comments[0].author.as_str(),
                gh.comments[0].created_at.as_str()
            ),
            ("bob", "2026-11-30T10:00:00Z")
        );
    }
}
