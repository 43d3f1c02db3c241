//! `autocoder fetch-issue REF`: the issue a repair starts from, as the run document's `issue`.

use std::io::Read;
use std::path::PathBuf;

use crate::cli::{FetchIssueArgs, GlobalArgs};
use crate::error::Failure;
use crate::forge;
use crate::forge::github::{Api, GitHub};
use crate::forge::issue_ref::{repo_from_remote, IssueRef};
use crate::git::cli::{output_within, Waited};
use crate::output::write_json;
use crate::run_document::{Issue, RunDocument};

pub fn run(args: FetchIssueArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    let reference = IssueRef::parse(&args.reference)?;
    // With `-` stdin holds the issue; otherwise it may hold the run document so far.
    let mut document = if reference == IssueRef::Stdin {
        RunDocument::default()
    } else {
        RunDocument::from_stdin("fetch-issue")?
    };
    let workspace = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok());
    let read = |path: &PathBuf| {
        std::fs::read_to_string(path)
            .map_err(|err| Failure::usage(format!("cannot read {}: {err}", path.display())))
    };
    let (issue, repo) = match reference {
        IssueRef::Stdin => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|err| Failure::usage(format!("cannot read stdin: {err}")))?;
            (forge::issue_from_markdown(&text, None)?, None)
        }
        IssueRef::Markdown(path) => (
            forge::issue_from_markdown(&read(&path)?, Some(&path))?,
            None,
        ),
        IssueRef::Json(path) => (forge::issue_from_json(&read(&path)?)?, None),
        IssueRef::Number(number) => {
            let (owner, repo) = origin_repo(&args)?;
            (
                fetch(&args, &owner, &repo, number, None)?,
                Some(format!("{owner}/{repo}")),
            )
        }
        IssueRef::GitHub {
            owner,
            repo,
            number,
            api_url,
        } => (
            fetch(&args, &owner, &repo, number, api_url.as_deref())?,
            Some(format!("{owner}/{repo}")),
        ),
    };
    if let Some(repo) = &repo {
        document.set_repo(repo);
    }
    if !document.has("workspace") {
        // The top of the clone we are in, as git finds it from a subdirectory.
        let top = workspace.and_then(|dir| {
            dir.ancestors()
                .find(|dir| dir.join(".git").exists())
                .map(PathBuf::from)
        });
        if let Some(workspace) = top {
            document.set_workspace(&workspace);
        }
    }
    document.set_issue(&issue);
    write_json(std::io::stdout(), document.as_value(), global.pretty)?;
    Ok(0)
}

fn fetch(
    args: &FetchIssueArgs,
    owner: &str,
    repo: &str,
    number: u64,
    implied_api: Option<&str>,
) -> Result<Issue, Failure> {
    let client = GitHub::new(&Api::choose(args.api_url.as_deref(), implied_api)?);
    let issue = client.issue(owner, repo, number)?;
    let comments = if args.no_comments {
        Vec::new()
    } else {
        client.comments(owner, repo, number)?
    };
    Ok(forge::issue_from_github(
        &format!("{owner}/{repo}"),
        &issue,
        &comments,
    ))
}

/// `owner/repo` from the `origin` remote of the repository we are in, when it is on github.com
/// or the API is named: another host's issue 42 is not github.com's.
fn origin_repo(args: &FetchIssueArgs) -> Result<(String, String), Failure> {
    // Sandboxed code may have written .git: no includes, and no waiting on a FIFO there.
    let mut command = std::process::Command::new("git");
    command.args(["config", "--no-includes", "--get", "remote.origin.url"]);
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
    let api_named = args.api_url.is_some()
        || std::env::var("GITHUB_API_URL").is_ok_and(|url| !url.trim().is_empty());
    if !host.eq_ignore_ascii_case("github.com") && !api_named {
        return Err(Failure::usage(format!(
            "the `origin` remote is on {host}, not github.com: its issue {} is not github.com's",
            args.reference.trim()
        ))
        .with_hint(format!(
            "give the issue's address (https://{host}/{owner}/{repo}/issues/N) for GitHub Enterprise Server, or the API with --api-url"
        )));
    }
    Ok((owner, repo))
}
