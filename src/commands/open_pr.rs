//! `autocoder open-pr`: the repair as a branch, a commit and a pull request.
//!
//! The commit is made from a private index (the user's checkout, index and working tree are left
//! as they are) and holds exactly heal's diff, or without a heal result the tracked changes in
//! the workspace, never files that look like credentials. It is pushed with `git push` from a
//! private repository that borrows the workspace's objects, so nothing the sandbox wrote into the
//! workspace's git config (URL rewrites, proxies, TLS settings, programs) steers the network
//! steps; the token is handed over by a credential helper through the environment (never in
//! argv, a URL or `.git/config`) and only to the forge's host over https; never over commits
//! autocoder did not make. The pull request is created,
//! or updated when one already exists for the branch; a retry after a network failure looks for
//! it first, so there is never a second one.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::cli::{GlobalArgs, OpenPrArgs};
use crate::doc::RunDocument;
use crate::error::Failure;
use crate::forge::git::{looks_like_secret, Git};
use crate::forge::github::{self, Api, GitHub, NetworkError};
use crate::forge::issue_ref::{valid_name, IssueRef};
use crate::forge::pull_request;
use crate::output::write_json;

pub fn run(args: OpenPrArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    let (mut document, empty_pipe) = RunDocument::from_stdin_or_empty_pipe()?;
    if empty_pipe {
        return Err(Failure::usage(
            "stdin is a pipe that gave nothing: the command before open-pr failed; nothing was pushed",
        )
        .with_hint("fix what the previous stage reported, or run open-pr with no stdin (< /dev/null) to commit the workspace's changes"));
    }
    let workspace = document.workspace(args.workspace.as_deref())?;
    Git::check_confined(&workspace)?;
    let git = Git::open(&workspace)?;
    let issue = document.get("issue").cloned();
    let heal = document.get("heal").cloned();

    let heal_status = heal
        .as_ref()
        .and_then(|h| h.get("status"))
        .and_then(Value::as_str);
    if heal.is_some() && heal_status != Some("green") && !args.draft {
        crate::commands::refusal(
            "open-pr",
            &format!("heal is {}, not green: nothing was pushed (pass --draft to open a draft pull request anyway)", heal_status.unwrap_or("unknown")),
        );
        write_json(std::io::stdout(), document.as_value(), global.pretty)?;
        return Ok(1);
    }

    // The repository (and, on GitHub Enterprise Server, the API) the issue's address names.
    let issue_repo = issue
        .as_ref()
        .and_then(|issue| issue.get("url")?.as_str())
        .and_then(|url| match IssueRef::parse(url).ok()? {
            IssueRef::GitHub {
                owner,
                repo,
                api_url,
                ..
            } => Some((owner, repo, api_url)),
            _ => None,
        });
    let remote = args.remote.clone();
    let remote_url = git.config(&format!("remote.{remote}.url")).ok_or_else(|| {
        Failure::usage(format!("the repository has no remote `{remote}`"))
            .with_hint("add it (git remote add ...), or name another with --remote")
    })?;
    let repo = args
        .repo
        .clone()
        .or_else(|| {
            document
                .get("repo")
                .and_then(Value::as_str)
                .map(String::from)
        })
        .or_else(|| {
            // The issue's own address, written by fetch-issue before anything ran in a sandbox;
            // never the workspace's remote, which sandboxed code can point anywhere. Its host
            // then names the API too.
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

    let title = pull_request::title(args.title.as_deref(), issue.as_ref());
    let branch = args
        .branch
        .clone()
        .unwrap_or_else(|| pull_request::branch_name(issue.as_ref(), &title));
    git.run(&["check-ref-format", "--branch", &branch], &[], None)
        .map_err(|_| Failure::usage(format!("`{branch}` is not a valid branch name")))?;

    let (commit, diff) = make_commit(&git, heal.as_ref(), &args.add, &title, issue.as_ref())?;
    let Some(commit) = commit else {
        crate::commands::refusal("open-pr", "there is nothing to commit: no change from HEAD");
        write_json(std::io::stdout(), document.as_value(), global.pretty)?;
        return Ok(1);
    };
    let body = pull_request::body(document.as_value(), &diff);

    // The issue's forge (GitHub Enterprise Server when its address is on another host) is the
    // pull request's, when the repository is the issue's.
    let issue_api = issue_repo
        .as_ref()
        .filter(|(owner, name, _)| format!("{owner}/{name}") == repo)
        .and_then(|(_, _, api_url)| api_url.as_deref());
    let api = Api::choose(args.api_url.as_deref(), issue_api)?;
    if args.dry_run {
        git.run(
            &[
                "update-ref",
                &format!("refs/autocoder/dry-run/{branch}"),
                &commit,
            ],
            &[],
            None,
        )?;
        let base = args
            .base
            .clone()
            .unwrap_or_else(|| remote_default_branch(&git, &remote));
        let request = json!({"title": title, "head": branch, "base": base, "body": body, "draft": args.draft, "maintainer_can_modify": true});
        document.set(
            "pr",
            json!({"dry_run": true, "branch": branch, "base": base, "commit": commit, "draft": args.draft,
                   "request": {"method": "POST", "url": format!("{}/repos/{owner}/{name}/pulls", api.url.trim_end_matches('/')), "body": request}}),
        );
        write_json(std::io::stdout(), document.as_value(), global.pretty)?;
        return Ok(0);
    }

    let forge_host = git_host(&api.url);
    let client = GitHub::new(&api);
    let base = match &args.base {
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
    crate::commands::note(
        "open-pr",
        &format!("pushing commit {commit} to {branch} at {url}, for {base}"),
    );
    push(
        &git,
        &remote,
        &url,
        forge_host,
        &Branches {
            head: &branch,
            base: &base,
        },
        &commit,
        api.token.as_deref(),
    )?;
    let request = json!({"title": title, "head": branch, "base": base, "body": body, "draft": args.draft, "maintainer_can_modify": true});
    crate::commands::note(
        "open-pr",
        &format!("opening (or updating) the pull request in {owner}/{name}"),
    );
    let (pull, created) = create_or_update(&client, owner, name, &branch, &request)?;
    document.set(
        "pr",
        json!({
            "number": pull.get("number").and_then(Value::as_u64),
            "url": pull.get("html_url").and_then(Value::as_str),
            "branch": branch,
            "base": base,
            "commit": commit,
            "created": created,
            "updated": !created,
            "draft": pull.get("draft").and_then(Value::as_bool).unwrap_or(args.draft),
        }),
    );
    write_json(std::io::stdout(), document.as_value(), global.pretty)?;
    Ok(0)
}

/// The commit (None when there is nothing to commit) and its diff, made from a private index:
/// heal's diff, or the tracked changes; plus the files `named` with --add.
fn make_commit(
    git: &Git,
    heal: Option<&Value>,
    named: &[String],
    title: &str,
    issue: Option<&Value>,
) -> Result<(Option<String>, String), Failure> {
    let head = git
        .run(&["rev-parse", "--verify", "HEAD"], &[], None)
        .map_err(|_| {
            Failure::usage("the repository has no commit yet")
                .with_hint("a pull request needs a commit to branch from")
        })?;
    let index = PrivateIndex::new()?;
    let env = [("GIT_INDEX_FILE", index.path_str())];
    git.run(&["read-tree", "HEAD"], &env, None)?;
    match heal
        .and_then(|h| h.get("diff"))
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
    {
        Some(diff) => {
            git.run(
                &["apply", "--cached", "--whitespace=nowarn", "-"],
                &env,
                Some(diff),
            )
            .map_err(|err| {
                Failure::usage(format!(
                    "heal's diff does not apply to HEAD: {:#}",
                    err.error
                ))
                .with_hint("run open-pr on the commit heal started from")
            })?;
        }
        None => {
            // What the user staged but git does not track yet is not a tracked change: said,
            // not silently left out.
            let new_in_index = git.run(
                &["diff", "--cached", "--name-only", "--diff-filter=A", "HEAD"],
                &[],
                None,
            )?;
            for path in new_in_index
                .lines()
                .filter(|p| !named.iter().any(|n| n == p))
            {
                crate::commands::warn(
                    "open-pr",
                    &format!("{path} is new (staged, not tracked): left out of the commit; name it with --add {path}"),
                );
            }
            git.stage_tracked_changes(&env)?;
            let staged = git.run(&["diff", "--cached", "--name-only", "HEAD"], &env, None)?;
            for path in staged
                .lines()
                .filter(|p| looks_like_secret(p) && !named.iter().any(|n| n == p))
            {
                crate::commands::warn(
                    "open-pr",
                    &format!("{path} looks like it holds credentials: left out of the commit"),
                );
                git.unstage(path, &env)?;
            }
        }
    }
    for path in named {
        git.stage_file(path, &env)?;
    }
    let tree = git.run(&["write-tree"], &env, None)?;
    let head_tree = git.run(&["rev-parse", "HEAD^{tree}"], &[], None)?;
    if tree == head_tree {
        return Ok((None, String::new()));
    }
    let (name, email) = author(git)?;
    let identity = [
        ("GIT_AUTHOR_NAME", name.as_str()),
        ("GIT_AUTHOR_EMAIL", email.as_str()),
        ("GIT_COMMITTER_NAME", name.as_str()),
        ("GIT_COMMITTER_EMAIL", email.as_str()),
    ];
    let message = pull_request::commit_message(title, issue);
    let commit = git.run(
        &["commit-tree", &tree, "-p", &head, "-F", "-"],
        &identity,
        Some(&message),
    )?;
    let diff = git.run(
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            &head,
            &commit,
        ],
        &[],
        None,
    )?;
    Ok((Some(commit), diff))
}

/// `AUTOCODER_AUTHOR` ("Name <email>"), else user.name and user.email from the user's own git
/// config (the repository's is the sandbox's to write: it could sign the commit as anyone).
fn author(git: &Git) -> Result<(String, String), Failure> {
    if let Ok(author) = std::env::var("AUTOCODER_AUTHOR") {
        if let Some((name, rest)) = author.split_once('<') {
            let email = rest.trim_end().trim_end_matches('>');
            if !name.trim().is_empty() && email.contains('@') {
                return Ok((name.trim().to_string(), email.to_string()));
            }
        }
        return Err(Failure::usage(format!(
            "AUTOCODER_AUTHOR={author:?} is not `Name <email>`"
        )));
    }
    match (git.user_config("user.name"), git.user_config("user.email")) {
        (Some(name), Some(email)) => Ok((name, email)),
        _ => Err(Failure::usage("who is the commit's author? your git config has no user.name and user.email (the repository's own is not used: sandboxed code can write it)")
            .with_hint("set them (git config --global user.name ...; git config --global user.email ...) or AUTOCODER_AUTHOR='Name <email>'")),
    }
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

/// Pushes `commit` to `branch` on the remote, replacing only a commit autocoder made there.
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
    let parent = format!("{commit}^");
    if git
        .run(
            &["merge-base", "--is-ancestor", &parent, "FETCH_HEAD"],
            &[],
            None,
        )
        .is_err()
    {
        return Err(Failure::usage(format!(
            "HEAD has commits that are not on {base} at the forge: the pull request would carry \
             them along with the fix; nothing was pushed"
        ))
        .with_hint(format!(
            "push them yourself first, or run open-pr on a checkout of {base} (--base names another branch)"
        )));
    }
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

/// A fresh path in the temporary directory for one of this run's private files.
fn private_temp_path(kind: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!("autocoder-{kind}-{}-{nanos}", std::process::id()))
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

/// An index file of our own, removed when done.
struct PrivateIndex {
    path: PathBuf,
}

impl PrivateIndex {
    fn new() -> Result<PrivateIndex, Failure> {
        Ok(PrivateIndex {
            path: private_temp_path("index"),
        })
    }

    fn path_str(&self) -> &str {
        self.path.to_str().unwrap_or("")
    }
}

impl Drop for PrivateIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(Path::new(&format!("{}.lock", self.path.display())));
    }
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
