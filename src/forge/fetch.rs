//! An issue fetched by its reference (`fetch-issue`, and the MCP tool of the same name): from
//! GitHub or GitHub Enterprise Server (a bare number: the `origin` remote's repository), or read
//! from a Markdown or JSON file.

use std::path::PathBuf;

use crate::error::Failure;
use crate::forge::github::{Api, GitHub};
use crate::forge::issue_ref::{repo_from_remote, IssueRef};
use crate::git::cli::{output_within, Waited};
use crate::run_document::Issue;

/// An issue to fetch.
pub(crate) struct FetchRequest {
    pub reference: IssueRef,
    /// The reference as given, for errors.
    pub given: String,
    /// The GitHub API [default: GITHUB_API_URL, else the one the issue's address implies].
    pub api_url: Option<String>,
    /// Whether its comments are fetched too.
    pub comments: bool,
    /// Where a bare number's repository is found (its `origin` remote), and relative files.
    pub directory: PathBuf,
}

/// The issue, and the GitHub repository it is in (OWNER/NAME) when it came from one.
pub(crate) struct Fetched {
    pub issue: Issue,
    pub repo: Option<String>,
}

/// Fetches the issue `request` names. An issue on stdin (`-`) is the caller's to read.
pub(crate) fn fetch_issue(request: &FetchRequest) -> Result<Fetched, Failure> {
    let read = |path: &PathBuf| {
        std::fs::read_to_string(request.directory.join(path))
            .map_err(|err| Failure::usage(format!("cannot read {}: {err}", path.display())))
    };
    Ok(match &request.reference {
        IssueRef::Stdin => {
            return Err(Failure::usage("`-` names stdin, which is not read here")
                .with_hint("give the issue's reference (OWNER/NAME#N, a URL, a file)"))
        }
        IssueRef::Markdown(path) => Fetched {
            issue: super::issue_from_markdown(&read(path)?, Some(path))?,
            repo: None,
        },
        IssueRef::Json(path) => Fetched {
            issue: super::issue_from_json(&read(path)?)?,
            repo: None,
        },
        IssueRef::Number(number) => {
            let (owner, repo) = origin_repo(request)?;
            Fetched {
                issue: from_github(request, &owner, &repo, *number, None)?,
                repo: Some(format!("{owner}/{repo}")),
            }
        }
        IssueRef::GitHub {
            owner,
            repo,
            number,
            api_url,
        } => Fetched {
            issue: from_github(request, owner, repo, *number, api_url.as_deref())?,
            repo: Some(format!("{owner}/{repo}")),
        },
    })
}

fn from_github(
    request: &FetchRequest,
    owner: &str,
    repo: &str,
    number: u64,
    implied_api: Option<&str>,
) -> Result<Issue, Failure> {
    let client = GitHub::new(&Api::choose(request.api_url.as_deref(), implied_api)?);
    let issue = client.issue(owner, repo, number)?;
    let comments = match request.comments {
        true => client.comments(owner, repo, number)?,
        false => Vec::new(),
    };
    Ok(super::issue_from_github(
        &format!("{owner}/{repo}"),
        &issue,
        &comments,
    ))
}

/// `owner/repo` from the `origin` remote of the repository `request.directory` is in, when it
/// is on github.com or the API is named: another host's issue 42 is not github.com's.
fn origin_repo(request: &FetchRequest) -> Result<(String, String), Failure> {
    // Sandboxed code may have written .git: no includes, and no waiting on a FIFO there.
    let mut command = std::process::Command::new("git");
    command
        .args(["config", "--no-includes", "--get", "remote.origin.url"])
        .current_dir(&request.directory);
    let output = output_within(command, None, std::time::Duration::from_secs(10)).map_err(
        |err| match err {
            Waited::Spawn(err) => Failure::external(format!("cannot run git: {err}"))
                .with_hint("install git, or give owner/repo#N"),
            Waited::TimedOut => Failure::external("git config did not answer within 10 s")
                .with_hint("check .git/config, or give owner/repo#N"),
        },
    )?;
    let url = String::from_utf8_lossy(&output.stdout);
    let (host, owner, repo) = repo_from_remote(&url).ok_or_else(|| {
        Failure::usage(
            "cannot tell which repository the issue number is in: no GitHub `origin` remote here",
        )
        .with_hint("run it in a clone of the repository, or give owner/repo#N")
    })?;
    let api_named = request.api_url.is_some()
        || std::env::var("GITHUB_API_URL").is_ok_and(|url| !url.trim().is_empty());
    if !host.eq_ignore_ascii_case("github.com") && !api_named {
        return Err(Failure::usage(format!(
            "the `origin` remote is on {host}, not github.com: its issue {} is not github.com's",
            request.given.trim()
        ))
        .with_hint(format!(
            "give the issue's address (https://{host}/{owner}/{repo}/issues/N) for GitHub Enterprise Server, or the API with --api-url"
        )));
    }
    Ok((owner, repo))
}
