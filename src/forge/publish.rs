//! Publishing a repair: the change committed (`git::commit`), pushed to a branch and opened (or
//! updated) as a pull request.
//!
//! The commit holds exactly heal's diff, or without a heal result the tracked changes in the
//! workspace. It is pushed with `git push` from a private repository that borrows the
//! workspace's objects, so nothing the sandbox wrote into the workspace's git config (URL
//! rewrites, proxies, TLS settings, programs) steers the network steps; the token is handed over
//! by a credential helper through the environment (never in argv, a URL or `.git/config`) and
//! only to the forge's host over https; never over commits autocoder did not make. A retry after
//! a network failure looks for the pull request first, so there is never a second one.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::error::Failure;
use crate::forge::github::{self, Api, GitHub, NetworkError};
use crate::forge::issue_ref::{valid_name, IssueRef};
use crate::forge::pull_request::{self, Sections};
use crate::git::cli::Git;
use crate::git::commit::{commit, stage, Change, Commit, LeftOut};
use crate::git::private_temp_path;
use crate::review::rules;
use crate::run_document::{HealStatus, Issue, PullRequest, Verdict};

/// What to publish, and where.
pub(crate) struct Options {
    /// The project: the repository's clone, or a directory in it.
    pub workspace: PathBuf,
    /// The GitHub repository (OWNER/NAME); else the issue's.
    pub repo: Option<String>,
    /// The remote pushed to.
    pub remote: String,
    /// The branch merged into; else the repository's default branch.
    pub base: Option<String>,
    /// The branch pushed; else `autocoder/issue-N-title`.
    pub branch: Option<String>,
    pub title: Option<String>,
    /// Files also committed: untracked ones, or ones that look like credentials.
    pub add: Vec<String>,
    pub draft: bool,
    /// Do everything local and say what request would be sent.
    pub dry_run: bool,
    pub api_url: Option<String>,
}

/// How publishing ended, short of an error.
pub(crate) enum Outcome {
    /// Nothing was pushed, for this reason (heal not green, nothing to commit).
    Refused(String),
    /// The run document's `pr`.
    Opened(PullRequest),
}

/// Commits the change the sections describe (heal's diff, else the workspace's tracked
/// changes), pushes it and opens or updates the pull request.
/// Long: publishing's steps in order, sharing their names; the dry run stops after the commit.
pub(crate) fn open_pull_request(
    sections: &Sections,
    options: &Options,
) -> Result<Outcome, Failure> {
    // A project in a subdirectory of its repository: the commit is made in the repository,
    // with the change in that subdirectory.
    let (top, under) = Git::top_of(&options.workspace)?;
    Git::check_confined(&top)?;
    let git = Git::open(&top)?;
    if let Some(reason) = refusal(sections, options.draft) {
        return Ok(Outcome::Refused(reason));
    }
    let issue = sections.issue;
    let remote = options.remote.clone();
    let remote_url = git.config(&format!("remote.{remote}.url")).ok_or_else(|| {
        Failure::usage(format!("the repository has no remote `{remote}`"))
            .with_hint("add it (git remote add ...), or name another with --remote")
    })?;
    let target = Target::of(options, issue)?;
    let title = pull_request::title(options.title.as_deref(), issue);
    let branch = options
        .branch
        .clone()
        .unwrap_or_else(|| pull_request::branch_name(issue, &title));
    git.run(&["check-ref-format", "--branch", &branch], &[], None)
        .map_err(|_| Failure::usage(format!("`{branch}` is not a valid branch name")))?;
    let commit = match commit_change(&git, sections, options, &under, &title)? {
        Ok(commit) => commit,
        Err(reason) => return Ok(Outcome::Refused(reason)),
    };
    let body = pull_request::body(sections, &commit.diff);
    let api = Api::choose(options.api_url.as_deref(), target.api_url.as_deref())?;
    let request = |base: &str| {
        json!({"title": title, "head": branch, "base": base, "body": body,
               "draft": options.draft, "maintainer_can_modify": true})
    };
    if options.dry_run {
        git.run(
            &[
                "update-ref",
                &format!("refs/autocoder/dry-run/{branch}"),
                &commit.id,
            ],
            &[],
            None,
        )?;
        let base = options
            .base
            .clone()
            .unwrap_or_else(|| remote_default_branch(&git, &remote));
        let url = format!(
            "{}/repos/{}/{}/pulls",
            api.url.trim_end_matches('/'),
            target.owner,
            target.name
        );
        return Ok(Outcome::Opened(PullRequest {
            request: Some(json!({"method": "POST", "url": url, "body": request(&base)})),
            branch,
            base,
            commit: commit.id,
            draft: options.draft,
            dry_run: true,
            ..PullRequest::default()
        }));
    }
    let (owner, name) = (target.owner.as_str(), target.name.as_str());
    let forge_host = git_host(&api.url);
    let client = GitHub::new(&api);
    let base = match &options.base {
        Some(base) => base.clone(),
        None => client
            .repository(owner, name)?
            .get("default_branch")
            .and_then(Value::as_str)
            .unwrap_or("main")
            .to_string(),
    };
    git.run(&["check-ref-format", "--branch", &base], &[], None)
        .map_err(|_| Failure::usage(format!("`{base}` is not a valid branch name")))?;
    let url = push_url(&remote_url, forge_host, owner, name);
    crate::log::note(
        "open-pr",
        &format!(
            "pushing commit {} to {branch} at {url}, for {base}",
            commit.id
        ),
    );
    let branches = Branches {
        head: &branch,
        base: &base,
    };
    let token = api.token.as_deref();
    push(
        &git, &remote, &url, forge_host, &branches, &commit.id, token,
    )?;
    crate::log::note(
        "open-pr",
        &format!("opening (or updating) the pull request in {owner}/{name}"),
    );
    let (pull, created) = create_or_update(&client, owner, name, &branch, &request(&base))?;
    Ok(Outcome::Opened(PullRequest {
        number: pull.get("number").and_then(Value::as_u64),
        url: pull
            .get("html_url")
            .and_then(Value::as_str)
            .map(String::from),
        branch,
        base,
        commit: commit.id,
        created: Some(created),
        updated: Some(!created),
        draft: pull
            .get("draft")
            .and_then(Value::as_bool)
            .unwrap_or(options.draft),
        ..PullRequest::default()
    }))
}

/// Why nothing may be pushed, from what heal and the review said: a heal not green or a
/// blocking review (unless `draft`), a secret the review found (whatever the flags).
fn refusal(sections: &Sections, draft: bool) -> Option<String> {
    // A heal that says nothing (null, or no status) is not green either.
    let heal_status = sections.heal.and_then(|heal| heal.status);
    if sections.heal.is_some() && heal_status != Some(HealStatus::Green) && !draft {
        return Some(format!(
            "heal is {}, not green: nothing was pushed (pass --draft to open a draft pull request anyway)",
            heal_status.map_or("unknown", HealStatus::name)
        ));
    }
    let review = sections.review?;
    if review
        .risks
        .iter()
        .any(|risk| risk.rule == rules::SECRET_ADDED)
    {
        return Some(
            "the review found a secret in this change: nothing was committed or pushed, with --draft or without (see review.risks; take it out, rotate it, and run the review again)".into(),
        );
    }
    (review.verdict == Verdict::Block && !draft).then(|| {
        "the review blocks this change: nothing was pushed (see review.risks; pass --draft to open a draft pull request anyway)".into()
    })
}

/// The GitHub repository the pull request goes to, and the API the issue's address implies for
/// it (GitHub Enterprise Server when that address is on another host).
struct Target {
    owner: String,
    name: String,
    api_url: Option<String>,
}

impl Target {
    /// `--repo`, else the issue's own address (written by fetch-issue before anything ran in a
    /// sandbox); never the workspace's remote, which sandboxed code can point anywhere.
    fn of(options: &Options, issue: Option<&Issue>) -> Result<Target, Failure> {
        let issue_repo = issue
            .and_then(|issue| issue.url.as_deref())
            .and_then(|url| match IssueRef::parse(url).ok()? {
                IssueRef::GitHub {
                    owner,
                    repo,
                    api_url,
                    ..
                } => Some((owner, repo, api_url)),
                _ => None,
            });
        let repo = options
            .repo
            .clone()
            .or_else(|| {
                let (owner, repo, _) = issue_repo.as_ref()?;
                Some(format!("{owner}/{repo}"))
            })
            .ok_or_else(|| {
                Failure::usage("cannot tell which GitHub repository to open the pull request in")
                    .with_hint(
                        "pass --repo OWNER/NAME (the workspace's remote is not used for this: \
                         sandboxed code could have changed it)",
                    )
            })?;
        let (owner, name) = repo
            .split_once('/')
            .filter(|(o, n)| valid_name(o) && valid_name(n))
            .ok_or_else(|| Failure::usage(format!("`{repo}` is not OWNER/NAME")))?;
        // The issue's forge is the pull request's when the repository is the issue's.
        let api_url = issue_repo
            .filter(|(issue_owner, issue_name, _)| issue_owner == owner && issue_name == name)
            .and_then(|(_, _, api_url)| api_url);
        Ok(Target {
            owner: owner.to_string(),
            name: name.to_string(),
            api_url,
        })
    }
}

/// The change committed (heal's diff, else the tracked changes under `under`), or why not:
/// nothing to commit, or a secret in it.
fn commit_change(
    git: &Git,
    sections: &Sections,
    options: &Options,
    under: &str,
    title: &str,
) -> Result<Result<Commit, String>, Failure> {
    let change = match sections
        .heal
        .map(|heal| heal.diff.as_str())
        .filter(|d| !d.trim().is_empty())
    {
        Some(diff) => Change::Diff {
            diff,
            whose: "heal's diff",
        },
        None => Change::TrackedFiles,
    };
    let Some(staged) = stage(git, change, under, &options.add)? else {
        return Ok(Err("there is nothing to commit: no change from HEAD".into()));
    };
    // Looked at again here: the review may not have run, or may have seen another change.
    if let Some(found) = secret_in(&staged.diff) {
        return Ok(Err(format!(
            "{found}: nothing was committed or pushed, with --draft or without (take it out, rotate it, and try again)"
        )));
    }
    let message = pull_request::commit_message(title, sections.issue);
    let commit = commit(git, staged, &message)?;
    for file in &commit.left_out {
        let warning = match file {
            LeftOut::NewInIndex(path) => format!(
                "{path} is new (staged, not tracked): left out of the commit; name it with --add {path}"
            ),
            LeftOut::Secret(path) => {
                format!("{path} looks like it holds credentials: left out of the commit")
            }
        };
        crate::log::warn("open-pr", &warning);
    }
    Ok(Ok(commit))
}

/// The host git reaches the forge at, from the API's address: github.com for api.github.com, the
/// same host for GitHub Enterprise Server (https://HOST/api/v3).
fn git_host(api: &str) -> &str {
    let rest = api.split_once("://").map_or(api, |(_, rest)| rest);
    match rest.split('/').next().unwrap_or(rest) {
        "api.github.com" => "github.com",
        host => host,
    }
}

/// Where the branch is pushed: the pull request's repository on the forge itself, over ssh when
/// the remote is reached over ssh, else https. Never the remote's own URL: the workspace's config
/// is the sandbox's to write, and a URL it chose (a local path with hooks of its own, another
/// host) would run programs on the host or carry the code off the machine.
fn push_url(remote_url: &str, forge_host: &str, owner: &str, name: &str) -> String {
    let ssh_user = if let Some(rest) = remote_url.strip_prefix("ssh://") {
        rest.split_once('@').map(|(user, _)| user)
    } else if !remote_url.contains("://") {
        remote_url
            .split_once(':')
            .and_then(|(login, _)| login.split_once('@'))
            .map(|(user, _)| user)
    } else {
        None
    };
    match ssh_user.filter(|user| valid_ssh_user(user)) {
        Some(user) => format!("ssh://{user}@{forge_host}/{owner}/{name}.git"),
        None => format!("https://{forge_host}/{owner}/{name}.git"),
    }
}

fn valid_ssh_user(user: &str) -> bool {
    user.starts_with(|c: char| c.is_ascii_alphanumeric())
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The pull request's branch, and the branch it goes into.
struct Branches<'a> {
    head: &'a str,
    base: &'a str,
}

/// Whether `commit`'s parent is on `base` as fetched into FETCH_HEAD: else the commits between
/// would go along with the fix, unseen in the body's diff.
fn parent_on_base(git: &Git, commit: &str, base: &str) -> Result<(), Failure> {
    let parent = format!("{commit}^");
    match git.run(
        &["merge-base", "--is-ancestor", &parent, "FETCH_HEAD"],
        &[],
        None,
    ) {
        Ok(_) => Ok(()),
        Err(_) => Err(Failure::usage(format!(
            "HEAD has commits that are not on {base} at the forge: the pull request would carry \
             them along with the fix; nothing was pushed"
        ))
        .with_hint(format!(
            "push them yourself first, or run open-pr on a checkout of {base} (--base names another branch)"
        ))),
    }
}

/// Pushes `commit` to `branch` on the remote, replacing only a commit autocoder made there.
/// Long: the network steps run in this order on purpose (see each comment): base checked, then push.
fn push(
    git: &Git,
    remote: &str,
    remote_url: &str,
    forge_host: &str,
    branches: &Branches,
    commit: &str,
    token: Option<&str>,
) -> Result<(), Failure> {
    let branch = branches.head;
    // The workspace's config is the sandbox's to write: the network steps run in a private
    // repository that borrows its objects, against the remote's URL itself.
    let workspace = git;
    let private_dir = PrivateRepo::new();
    let git = &Git::private_bare(&private_dir.path, workspace)?;
    // And the token goes only to the forge's own host, over https.
    let helper = "credential.helper=!f() { test \"$1\" = get || return 0; h=; p=; \
while IFS= read -r line; do case \"$line\" in \"host=$AUTOCODER_GIT_HOST\") h=1;; protocol=https) p=1;; esac; done; \
test \"$h$p\" = 11 && echo username=x-access-token && echo \"password=$AUTOCODER_GIT_TOKEN\"; }; f";
    let https = remote_url.starts_with("https://");
    let config: Vec<&str> = if https && token.is_some() {
        vec![helper]
    } else {
        Vec::new()
    };
    // The programs git starts for the remote are named on the command line: in the repository's
    // config they are multi-valued, and its first value would win over `-c`.
    let env: Vec<(&str, &str)> = token
        .filter(|_| https)
        .map(|t| {
            vec![
                ("AUTOCODER_GIT_TOKEN", t),
                ("AUTOCODER_GIT_HOST", forge_host),
            ]
        })
        .unwrap_or_default();
    // The pull request carries the fix alone: the commit's parent (the workspace's HEAD) must
    // be on the base branch at the forge already. Sandboxed code can commit in the workspace,
    // and its commits would otherwise be pushed along, unseen in the body's diff.
    let base = branches.base;
    // Into the private repository's FETCH_HEAD.
    let fetch = |reference: &str| {
        git.run_configured(
            &config,
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--upload-pack=git-upload-pack",
                "--end-of-options",
                remote_url,
                reference,
            ],
            &env,
        )
    };
    fetch(&format!("refs/heads/{base}")).map_err(|err| {
        Failure::external(format!(
            "cannot fetch {base} from {remote_url}: {:#}",
            err.error
        ))
        .with_hint("check --base, and that the token may read the repository")
    })?;
    parent_on_base(git, commit, base)?;
    let reference = format!("refs/heads/{branch}");
    let existing = git.run_configured(
        &config,
        &[
            "ls-remote",
            "--upload-pack=git-upload-pack",
            "--heads",
            "--end-of-options",
            remote_url,
            &reference,
        ],
        &env,
    )?;
    let existing = existing.split_whitespace().next().map(String::from);
    let mut args = vec![
        "push".to_string(),
        "--quiet".into(),
        "--porcelain".into(),
        "--receive-pack=git-receive-pack".into(),
    ];
    if let Some(old) = &existing {
        if old == commit {
            return Ok(());
        }
        // Replace the branch only if its tip is one of ours.
        fetch(&reference)?;
        let message = git.run(&["log", "-1", "--format=%B", old], &[], None)?;
        if !message.contains(pull_request::TRAILER) {
            return Err(Failure::external(format!("branch {branch} on {remote} has commits autocoder did not make: not pushing over them"))
                .with_hint("choose another branch with --branch"));
        }
        args.push(format!("--force-with-lease={reference}:{old}"));
    }
    args.extend([
        "--end-of-options".to_string(),
        remote_url.to_string(),
        format!("{commit}:{reference}"),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    git.run_configured(&config, &args, &env).map_err(|err| {
        Failure::external(format!("cannot push {branch}: {:#}", err.error))
            .with_hint("check that the token (GITHUB_TOKEN or GH_TOKEN; GH_ENTERPRISE_TOKEN for an API implied by the issue's address) may push to the repository")
    })?;
    // A local branch too, for the user to look at; it is never checked out.
    workspace.run(&["update-ref", &reference, commit], &[], None)?;
    Ok(())
}

/// Creates the pull request, or updates the open one for this branch. Returns it and whether
/// it was created.
fn create_or_update(
    client: &GitHub,
    owner: &str,
    repo: &str,
    branch: &str,
    request: &Value,
) -> Result<(Value, bool), Failure> {
    let update = |number: u64| {
        let changes =
            json!({"title": request["title"], "body": request["body"], "base": request["base"]});
        client
            .update_pull(owner, repo, number, &changes)
            .map(|pull| (pull, false))
    };
    let existing_number = |pull: &Value| pull.get("number").and_then(Value::as_u64);
    for attempt in 0..2 {
        match client.create_pull(owner, repo, request) {
            Ok(response) if response.status == 201 || response.status == 200 => {
                return Ok((response.body, true))
            }
            Ok(response) => {
                let message = github::api_message(&response.body);
                if message.contains("already exists") {
                    let pull = client.pull_for_head(owner, repo, branch)?.ok_or_else(|| {
                        Failure::external(format!(
                            "GitHub says a pull request for {branch} exists, but none is open"
                        ))
                    })?;
                    let number = existing_number(&pull).ok_or_else(|| {
                        Failure::external("GitHub listed a pull request without a number")
                    })?;
                    return update(number);
                }
                return Err(Failure::external(format!(
                    "GitHub refused the pull request (422): {message}"
                )));
            }
            // The POST may have been carried out: look before trying again.
            Err(failure)
                if attempt == 0 && failure.error.downcast_ref::<NetworkError>().is_some() =>
            {
                if let Some(number) = client
                    .pull_for_head(owner, repo, branch)?
                    .as_ref()
                    .and_then(existing_number)
                {
                    return update(number);
                }
            }
            Err(failure) => return Err(failure),
        }
    }
    Err(Failure::external(
        "cannot create the pull request: GitHub did not answer",
    ))
}

/// The remote's default branch as the clone knows it (`refs/remotes/REMOTE/HEAD`), else main.
fn remote_default_branch(git: &Git, remote: &str) -> String {
    git.run(
        &[
            "symbolic-ref",
            "--quiet",
            "--short",
            &format!("refs/remotes/{remote}/HEAD"),
        ],
        &[],
        None,
    )
    .ok()
    .and_then(|head| head.strip_prefix(&format!("{remote}/")).map(String::from))
    .unwrap_or_else(|| "main".to_string())
}

/// Where the private repository for the network steps goes; removed when done.
struct PrivateRepo {
    path: PathBuf,
}

impl PrivateRepo {
    fn new() -> PrivateRepo {
        PrivateRepo {
            path: private_temp_path("push"),
        }
    }
}

impl Drop for PrivateRepo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The first secret the change `diff` adds, said without its value: by the review's own rules.
fn secret_in(diff: &str) -> Option<String> {
    let files = match crate::git::patch::parse(diff) {
        Ok(files) => files,
        Err(err) => {
            return Some(format!(
                "the change could not be checked for secrets ({err})"
            ))
        }
    };
    crate::review::rules::secrets_added_in(&files)
        .into_iter()
        .next()
        .map(|risk| format!("the change holds a secret ({})", risk.message))
}

#[cfg(test)]
mod tests {
    use super::{git_host, push_url};

    #[test]
    fn the_push_goes_to_the_forge_over_the_remote_s_transport() {
        for (remote, expected) in [
            (
                "https://github.com/acme/shop.git",
                "https://github.com/acme/shop.git",
            ),
            (
                "git@github.com:acme/shop.git",
                "ssh://git@github.com/acme/shop.git",
            ),
            (
                "ssh://git@github.com/acme/shop",
                "ssh://git@github.com/acme/shop.git",
            ),
            ("/tmp/evil.git", "https://github.com/acme/shop.git"),
            ("ext::sh -c evil", "https://github.com/acme/shop.git"),
            ("-u@evil:x", "https://github.com/acme/shop.git"),
        ] {
            assert_eq!(
                push_url(remote, "github.com", "acme", "shop"),
                expected,
                "{remote}"
            );
        }
    }

    #[test]
    fn the_forge_host_comes_from_the_api_address() {
        assert_eq!(git_host("https://api.github.com"), "github.com");
        assert_eq!(git_host("https://api.github.com/"), "github.com");
        assert_eq!(
            git_host("https://git.example.com/api/v3"),
            "git.example.com"
        );
        assert_eq!(git_host("http://127.0.0.1:8080"), "127.0.0.1:8080");
    }
}
