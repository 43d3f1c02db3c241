//! `autocoder review`: a change in, risks with evidence out (`review`), as the run document's
//! `review` or rendered for a pull request, GitHub code scanning or reviewdog.

use std::io::Read;
use std::path::Path;

use crate::cli::{FailOn, GlobalArgs, ReviewArgs, ReviewFormat};
use crate::error::Failure;
use crate::forge::github::{Api, GitHub};
use crate::git::cli::Git;
use crate::llm::{Model, ModelFlags, Session};
use crate::output::write_json;
use crate::review::diff::{self, FileChange, Hunk, Kind, Line, Status};
use crate::review::rules::Severity;
use crate::review::{self, render};
use crate::run_document::RunDocument;
use crate::secrets::Secrets;

/// An untracked file's text reviewed at most (git diffs a tracked file whole).
const MAX_UNTRACKED: u64 = 16 << 20;

pub fn run(args: ReviewArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    let diff_from_stdin = args.diff.as_deref() == Some(Path::new("-"));
    let mut document = if diff_from_stdin {
        RunDocument::default()
    } else {
        RunDocument::from_stdin("review")?
    };
    let workspace = document.workspace(args.workspace.as_deref())?;
    let workspace = workspace.canonicalize().map_err(|err| {
        Failure::usage(format!("workspace {}: {err}", workspace.display()))
            .with_hint("give the project's directory with --workspace")
    })?;
    let session = match args.llm {
        true => Some(model_session(&args, &workspace)?),
        false => None,
    };
    // Known before anything is done: a review GitHub would refuse is not sent at all.
    if args.post && Api::choose(args.api_url.as_deref(), None)?.token.is_none() {
        return Err(
            Failure::usage("--post needs a GitHub token, and none is set").with_hint(
                "set GITHUB_TOKEN (or GH_TOKEN) to a token that may write pull requests",
            ),
        );
    }
    let files = change(&args, &document, &workspace, diff_from_stdin)?;
    let anchors = diff::new_side_lines(&files);
    let mut review = review::review(&workspace, files, args.budget);
    // Nothing changed: nothing for the model to judge.
    if let Some(session) = session.as_ref().filter(|_| !review.files.is_empty()) {
        let (findings, outcome) = review::model::ask(session, &review)?;
        if let Some(error) = &outcome.error {
            crate::log::warn("review", error);
        }
        review = review.with_model(findings, outcome);
    }
    // A review not posted is still written, with why: nothing found is lost.
    let mut post_failed = None;
    if args.post {
        review.posted = Some(match post(&args, &document, &review, &anchors) {
            Ok(posted) => posted,
            Err(failure) if failure.kind == crate::error::Kind::External => {
                let posted = serde_json::json!({"error": format!("{:#}", failure.error)});
                post_failed = Some(failure);
                posted
            }
            Err(failure) => return Err(failure),
        });
    }
    let worst = review.risks.iter().map(|r| r.severity).max();
    let fails = match (args.fail_on, worst) {
        (FailOn::Never, _) | (_, None) => false,
        (threshold, Some(worst)) => worst >= threshold.severity(),
    };
    crate::log::info(
        "review",
        &format!("{}: {}", review.verdict.name(), review.summary),
    );
    review.markdown = render::markdown(&review);
    match args.format {
        ReviewFormat::Json => {
            if !document.has("workspace") || args.workspace.is_some() {
                document.set_workspace(&workspace);
            }
            document.set_review(&review);
            write_json(std::io::stdout(), document.as_value(), global.pretty)?;
        }
        ReviewFormat::Markdown => print(&review.markdown)?,
        ReviewFormat::Sarif => {
            write_json(std::io::stdout(), &render::sarif(&review), global.pretty)?
        }
        ReviewFormat::Rdjsonl => print(&render::rdjsonl(&review))?,
    }
    if let Some(failure) = post_failed {
        crate::log::error(
            "review",
            &format!("{:#}", failure.error),
            failure.hint.as_deref(),
        );
        return Ok(3);
    }
    Ok(if fails { 1 } else { 0 })
}

impl FailOn {
    fn severity(self) -> Severity {
        match self {
            FailOn::High | FailOn::Never => Severity::High,
            FailOn::Medium => Severity::Medium,
            FailOn::Low => Severity::Low,
        }
    }
}

/// Posts `review` on the pull request `--pr` or the document's `pr` names, in the repository
/// `--repo`, the document's `repo` or its pull request's address names; what was posted.
fn post(
    args: &ReviewArgs,
    document: &RunDocument,
    review: &review::Review,
    anchors: &std::collections::BTreeMap<String, std::collections::BTreeSet<u32>>,
) -> Result<serde_json::Value, Failure> {
    let pr = document.pr()?;
    if args.pr.is_none() && pr.as_ref().is_some_and(|pr| pr.dry_run) {
        return Err(Failure::usage(
            "the document's pull request is open-pr's dry run: there is none to post on",
        )
        .with_hint("open it (open-pr without --dry-run), or give --pr N"));
    }
    let number = args
        .pr
        .or_else(|| pr.as_ref().and_then(|pr| pr.number))
        .ok_or_else(|| {
            Failure::usage("--post needs a pull request, and none is named")
                .with_hint("give --pr N, or pipe in the document open-pr wrote")
        })?;
    // https://HOST/OWNER/NAME/pull/N
    let from_url = pr
        .as_ref()
        .and_then(|pr| pr.url.as_deref())
        .and_then(|url| {
            let parts: Vec<&str> = url.split('/').collect();
            (parts.len() >= 7 && parts[5] == "pull").then(|| format!("{}/{}", parts[3], parts[4]))
        });
    let repo = match &args.repo {
        Some(repo) => Some(repo.clone()),
        None => document.repo()?.or(from_url),
    }
    .ok_or_else(|| {
        Failure::usage("cannot tell which GitHub repository the pull request is in")
            .with_hint("give --repo OWNER/NAME")
    })?;
    // GitHub's own characters only: the names go into the request's path.
    let part = |text: &str| {
        !text.is_empty()
            && text != "."
            && text != ".."
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    let (owner, name) = repo
        .split_once('/')
        .filter(|(owner, name)| part(owner) && part(name))
        .ok_or_else(|| {
            Failure::usage(format!(
                "`{}` is not OWNER/NAME",
                crate::text::sanitize_for_terminal(&repo)
            ))
            .with_hint("give --repo OWNER/NAME")
        })?;
    let github = GitHub::new(&Api::choose(args.api_url.as_deref(), None)?);
    let (mut request, comments) = render::github_review(review, anchors);
    // On the commit open-pr pushed, so that the lines are those of the change reviewed.
    if let Some(commit) = pr
        .as_ref()
        .map(|pr| pr.commit.as_str())
        .filter(|c| !c.is_empty())
    {
        if args.pr.is_none() {
            request["commit_id"] = commit.into();
        }
    }
    let answer = github.create_review(owner, name, number, &request)?;
    crate::log::info(
        "review",
        &format!(
            "posted on {owner}/{name}#{number} with {comments} comment{}",
            if comments == 1 { "" } else { "s" }
        ),
    );
    Ok(
        serde_json::json!({"pull_request": number, "repo": repo, "id": answer["id"],
                          "url": answer["html_url"], "comments": comments}),
    )
}

/// The model `--llm` asks, as `heal` finds it (flags, then the environment).
fn model_session(args: &ReviewArgs, workspace: &Path) -> Result<Session, Failure> {
    let flags = ModelFlags {
        provider: args.provider,
        model: args.model.clone(),
        base_url: args.base_url.clone(),
    };
    let model = Model::configured(&flags, |name| std::env::var(name).ok())?.ok_or_else(|| {
        Failure::usage("--llm needs a model, and none is configured").with_hint(
            "name one: --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b, or \
             AUTOCODER_MODEL / AUTOCODER_BASE_URL; a key alone is not enough",
        )
    })?;
    let secrets = Secrets::collect(&model.secrets(), &[], workspace);
    // A review waits less than a repair: CI is waiting on it.
    Ok(Session::new(model, std::time::Duration::from_secs(120))?.withholding(secrets))
}

fn print(text: &str) -> Result<(), Failure> {
    use std::io::Write;
    match std::io::stdout().write_all(text.as_bytes()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::external(format!("cannot write the review: {err}")))
        }
        _ => Ok(()),
    }
}

/// The change to review, from the first that applies: --diff, --base (the working tree against
/// it), the document's heal.diff, the working tree against HEAD. A working tree's untracked files
/// (not ignored) are in it, marked.
fn change(
    args: &ReviewArgs,
    document: &RunDocument,
    workspace: &Path,
    diff_from_stdin: bool,
) -> Result<Vec<FileChange>, Failure> {
    let read = |text: &str, what: &str| {
        let started = std::time::Instant::now();
        let files = diff::parse(text).map_err(|err| {
            Failure::usage(format!("{what} is not a diff that can be read: {err}"))
                .with_hint("give a unified diff (git diff, diff -u)")
        })?;
        let took = started.elapsed();
        if files.is_empty() && !text.trim().is_empty() {
            return Err(Failure::usage(format!(
                "{what} holds no diff ({} bytes, no `diff --git` or `---`/`+++` file in them)",
                text.len()
            ))
            .with_hint("give a unified diff (git diff, diff -u); an empty one reviews nothing"));
        }
        // As `git apply` does: a diff does not name files outside the project.
        if let Some(path) = files
            .iter()
            .flat_map(|f| [&f.old_path, &f.new_path])
            .flatten()
            .find(|path| {
                Path::new(path.as_str())
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
            })
        {
            return Err(Failure::usage(format!(
                "{what} names {}, outside the project",
                crate::text::sanitize_for_terminal(path)
            ))
            .with_hint("give a diff whose paths are relative to the project, without `..`"));
        }
        crate::log::note(
            "review",
            &format!(
                "read {} files from {what} ({} bytes) in {} µs",
                files.len(),
                text.len(),
                took.as_micros()
            ),
        );
        Ok(files)
    };
    if let Some(path) = &args.diff {
        // Names and content need not be UTF-8: such bytes are shown replaced, and counted.
        let bytes = if diff_from_stdin {
            let mut bytes = Vec::new();
            std::io::stdin().read_to_end(&mut bytes).map_err(|err| {
                Failure::usage(format!("--diff -: {err}")).with_hint("pipe a unified diff in")
            })?;
            bytes
        } else {
            std::fs::read(path).map_err(|err| {
                Failure::usage(format!("--diff {}: {err}", path.display()))
                    .with_hint("give a file holding a unified diff, or - for stdin")
            })?
        };
        let text = String::from_utf8_lossy(&bytes);
        return read(&text, "--diff");
    }
    if args.base.is_none() {
        if let Some(diff) = document
            .heal()?
            .and_then(|heal| heal.diff)
            .filter(|d| !d.trim().is_empty())
        {
            return read(&diff, "the document's heal.diff");
        }
    }
    // A project in a subdirectory of its repository: git runs there, and names paths from it.
    let (found_top, _) = Git::top_of(workspace)?;
    Git::check_confined(&found_top)?;
    let git = Git::open(workspace)?;
    // A core.worktree the config names would have git read another directory's files.
    let top = git.run(&["rev-parse", "--show-toplevel"], &[], None)?;
    // (git's answer has a path that is not UTF-8 with its bytes replaced.)
    let same = Path::new(&top).canonicalize().ok() == Some(found_top.clone())
        || (top.contains('\u{FFFD}') && found_top.to_string_lossy() == top);
    if !same {
        return Err(Failure::usage(format!(
            "the repository at {} has its working tree at {top} (core.worktree): refused",
            found_top.display()
        ))
        .with_hint("review the working tree itself: run review there, or give --diff"));
    }
    let base = match &args.base {
        Some(base) => git
            .run(
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{base}^{{commit}}"),
                ],
                &[],
                None,
            )
            .map_err(|_| {
                Failure::usage(format!(
                    "--base {base}: no such commit in {}",
                    workspace.display()
                ))
                .with_hint("give a branch, tag or commit (git log shows them)")
            })?,
        // A repository without a commit yet: against the empty tree.
        None => git
            .run(&["rev-parse", "--verify", "--quiet", "HEAD"], &[], None)
            .unwrap_or_else(|_| "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into()),
    };
    // Prefixes as git's defaults, whatever the repository's config says.
    let diff = |extra: &[&str]| {
        let mut args = vec![
            "-c",
            "diff.noprefix=false",
            "-c",
            "diff.mnemonicPrefix=false",
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            "-M",
            "--relative",
        ];
        args.extend(extra);
        git.run(&args, &[], None)
    };
    let mut files = read(&diff(&[&base, "--"])?, "git diff")?;
    // A file the attributes call binary (`-diff`) that holds text: its lines are reviewed too.
    for file in files
        .iter_mut()
        .filter(|f| f.binary && f.status != Status::Deleted)
    {
        let path = file.path().to_string();
        let text = crate::workspace::read_regular_file(&workspace.join(&path), MAX_UNTRACKED);
        if text.is_some_and(|t| !t.contains('\0')) {
            if let Some(again) = read(&diff(&["--text", &base, "--", &path])?, "git diff")?.pop() {
                *file = again;
            }
        }
    }
    let untracked = git.run(
        &["ls-files", "--others", "--exclude-standard", "-z"],
        &[],
        None,
    )?;
    for path in untracked.split('\0').filter(|p| !p.is_empty()) {
        files.push(untracked_file(workspace, path));
    }
    Ok(files)
}

/// An untracked file as an added one; one larger than MAX_UNTRACKED counts as binary (it is
/// said as one that cannot be reviewed as text, never reviewed in part).
fn untracked_file(workspace: &Path, path: &str) -> FileChange {
    let on_disk = on_disk(workspace, path);
    let metadata = std::fs::symlink_metadata(&on_disk);
    let is_link = metadata.as_ref().is_ok_and(|m| m.file_type().is_symlink());
    let too_large = metadata.is_ok_and(|m| m.len() > MAX_UNTRACKED);
    let text = crate::workspace::read_regular_file(&on_disk, MAX_UNTRACKED);
    let binary = !is_link && (too_large || text.as_deref().is_none_or(|t| t.contains('\0')));
    let lines = match &text {
        Some(text) if !binary => text
            .lines()
            .enumerate()
            .map(|(at, line)| Line {
                kind: Kind::Added,
                text: line.to_string(),
                old: None,
                new: Some(at as u32 + 1),
            })
            .collect(),
        _ => Vec::new(),
    };
    FileChange {
        old_path: None,
        new_path: Some(path.to_string()),
        status: Status::Added,
        binary,
        old_mode: None,
        new_mode: None,
        hunks: if lines.is_empty() {
            Vec::new()
        } else {
            vec![Hunk {
                old_start: 0,
                new_start: 1,
                lines,
            }]
        },
        untracked: true,
    }
}

/// Where `path`, as git listed it, is: a name that is not UTF-8 reached git's listing with its
/// bytes replaced (U+FFFD), so such a component is found among its directory's entries.
fn on_disk(workspace: &Path, path: &str) -> std::path::PathBuf {
    let mut at = workspace.to_path_buf();
    for part in path.split('/') {
        let found = part
            .contains('\u{FFFD}')
            .then(|| std::fs::read_dir(&at).ok())
            .flatten()
            .and_then(|entries| {
                entries
                    .flatten()
                    .map(|entry| entry.file_name())
                    .find(|name| name.to_string_lossy() == part)
            });
        match found {
            Some(name) => at.push(name),
            None => at.push(part),
        }
    }
    at
}
