//! What `fetch-issue REF` names: a GitHub issue (`owner/repo#42`, an issue or pull request URL,
//! `42` or `#42` in the workspace's `origin` repository), a local Markdown or JSON file, or
//! Markdown on stdin (`-`).

use std::path::{Path, PathBuf};

use crate::error::Failure;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IssueRef {
    GitHub {
        owner: String,
        repo: String,
        number: u64,
        /// The API base a URL on another host implies (GitHub Enterprise Server).
        api_url: Option<String>,
    },
    /// `42` or `#42`: the repository comes from the workspace's `origin` remote.
    Number(u64),
    Markdown(PathBuf),
    Json(PathBuf),
    Stdin,
}

impl IssueRef {
    pub(crate) fn parse(text: &str) -> Result<IssueRef, Failure> {
        let text = text.trim();
        let invalid = || {
            Failure::usage(format!("`{text}` is not an issue reference"))
                .with_hint("use owner/repo#42, an issue URL, 42 (in a clone of the repository), a .md or .json file, or - for Markdown on stdin")
        };
        if text == "-" {
            return Ok(IssueRef::Stdin);
        }
        if let Ok(number) = text.trim_start_matches('#').parse::<u64>() {
            return if number > 0 {
                Ok(IssueRef::Number(number))
            } else {
                Err(invalid())
            };
        }
        if let Some(rest) = text
            .strip_prefix("https://")
            .or_else(|| text.strip_prefix("http://"))
        {
            return parse_url(rest).ok_or_else(invalid);
        }
        let path = Path::new(text);
        match path.extension().and_then(|e| e.to_str()) {
            Some("md" | "markdown") => return Ok(IssueRef::Markdown(path.to_path_buf())),
            Some("json") => return Ok(IssueRef::Json(path.to_path_buf())),
            _ => {}
        }
        let (repo, number) = text.split_once('#').ok_or_else(invalid)?;
        let (owner, name) = repo.split_once('/').ok_or_else(invalid)?;
        let number: u64 = number.parse().map_err(|_| invalid())?;
        if !valid_name(owner) || !valid_name(name) || number == 0 {
            return Err(invalid());
        }
        Ok(IssueRef::GitHub {
            owner: owner.into(),
            repo: name.into(),
            number,
            api_url: None,
        })
    }
}

/// `github.com/o/r/issues/42` (or `/pull/42`, or another host: GitHub Enterprise Server).
fn parse_url(rest: &str) -> Option<IssueRef> {
    let rest = rest.split(['?', '#']).next()?;
    let mut parts = rest.trim_end_matches('/').split('/');
    let host = parts.next()?;
    let owner = parts.next()?;
    let repo = parts.next()?;
    let kind = parts.next()?;
    let number: u64 = parts.next()?.parse().ok()?;
    if parts.next().is_some()
        || host.contains('@')
        || !matches!(kind, "issues" | "pull" | "pulls")
        || !valid_name(owner)
        || !valid_name(repo)
    {
        return None;
    }
    let on_github = ["github.com", "www.github.com"]
        .iter()
        .any(|name| host.eq_ignore_ascii_case(name));
    let api_url = (!on_github).then(|| format!("https://{host}/api/v3"));
    Some(IssueRef::GitHub {
        owner: owner.into(),
        repo: repo.into(),
        number,
        api_url,
    })
}

/// GitHub owner and repository names: letters, digits, `-`, `_`, `.`, not `.` or `..`.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// `(host, owner, repo)` from a remote URL (`https://github.com/o/r.git`,
/// `git@github.com:o/r.git`, `ssh://git@host:22/o/r`).
pub(crate) fn repo_from_remote(url: &str) -> Option<(String, String, String)> {
    let url = url.trim().trim_end_matches('/').trim_end_matches(".git");
    let (authority, path) = if let Some((_, rest)) = url.split_once("://") {
        rest.split_once('/')?
    } else {
        url.split_once(':')?
    };
    // Credentials first (`user:token@`, which must never be shown), then a port (`host:22`).
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = host.split(':').next()?;
    let mut parts = path.rsplitn(3, '/');
    let repo = parts.next()?;
    let owner = parts.next()?;
    (!host.is_empty() && valid_name(owner) && valid_name(repo))
        .then(|| (host.to_string(), owner.to_string(), repo.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn github(owner: &str, repo: &str, number: u64, api: Option<&str>) -> IssueRef {
        IssueRef::GitHub {
            owner: owner.into(),
            repo: repo.into(),
            number,
            api_url: api.map(String::from),
        }
    }

    #[test]
    fn references() {
        assert_eq!(
            IssueRef::parse("acme/shop#42").unwrap(),
            github("acme", "shop", 42, None)
        );
        assert_eq!(
            IssueRef::parse("https://github.com/acme/shop/issues/42").unwrap(),
            github("acme", "shop", 42, None)
        );
        assert_eq!(
            IssueRef::parse("https://github.com/acme/shop/pull/7/").unwrap(),
            github("acme", "shop", 7, None)
        );
        assert_eq!(
            IssueRef::parse("https://git.corp.example/acme/shop/issues/3").unwrap(),
            github("acme", "shop", 3, Some("https://git.corp.example/api/v3"))
        );
        assert_eq!(IssueRef::parse("#12").unwrap(), IssueRef::Number(12));
        assert_eq!(IssueRef::parse("12").unwrap(), IssueRef::Number(12));
        assert_eq!(
            IssueRef::parse("bug.md").unwrap(),
            IssueRef::Markdown("bug.md".into())
        );
        assert_eq!(IssueRef::parse("-").unwrap(), IssueRef::Stdin);
        for bad in [
            "",
            "acme",
            "acme/shop",
            "acme/shop#x",
            "acme/shop#0",
            "../x#1",
            "https://github.com/acme/shop/wiki/1",
            "https://ghp_SECRET@evil.example/acme/shop/issues/1",
            "0",
        ] {
            assert!(IssueRef::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn remotes() {
        for url in [
            "https://github.com/acme/shop.git",
            "git@github.com:acme/shop.git",
            "ssh://git@github.com/acme/shop",
            "https://github.com/acme/shop/",
        ] {
            assert_eq!(
                repo_from_remote(url),
                Some(("github.com".into(), "acme".into(), "shop".into())),
                "{url}"
            );
        }
        for (url, host) in [
            ("https://gitlab.com/acme/shop.git", "gitlab.com"),
            (
                "ssh://git@ghe.corp.example:2222/acme/shop.git",
                "ghe.corp.example",
            ),
            ("git@ghe.corp.example:acme/shop", "ghe.corp.example"),
            (
                "https://ghp_SECRET:x-oauth-basic@github.com/acme/shop.git",
                "github.com",
            ),
            (
                "https://x-access-token:ghp_SECRET@github.com:443/acme/shop",
                "github.com",
            ),
        ] {
            assert_eq!(
                repo_from_remote(url).map(|(host, ..)| host).as_deref(),
                Some(host),
                "{url}"
            );
        }
        assert_eq!(repo_from_remote("/local/path"), None);
    }
}
