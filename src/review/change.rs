//! The change a review reads: a unified diff given as text, or a repository's working tree
//! against a commit, its untracked (not ignored) files as added ones, marked.

use std::path::{Path, PathBuf};

use crate::error::Failure;
use crate::git::cli::Git;
use crate::git::patch::{self, FileDiff, Hunk, LineKind};
use crate::run_document::FileStatus;

/// An untracked file's text reviewed at most (git diffs a tracked file whole).
const MAX_UNTRACKED: u64 = 16 << 20;

/// Where a review's change comes from.
pub(crate) enum Change {
    /// A unified diff's text, and where it came from ("--diff", "the document's heal.diff"),
    /// for errors.
    Diff { text: String, from: String },
    /// The working tree against `base` (a branch, tag or commit), else against HEAD.
    WorkingTree { base: Option<String> },
}

impl Change {
    /// The change to review, from the first that applies: a diff given (`diff`), the working
    /// tree against `base`, heal's change (`heal_diff`), the working tree against HEAD.
    pub(crate) fn first_of(
        diff: Option<String>,
        base: Option<String>,
        heal_diff: Option<String>,
    ) -> Change {
        match (diff, base, heal_diff) {
            (Some(text), _, _) => Change::Diff {
                text,
                from: "--diff".into(),
            },
            (None, None, Some(text)) if !text.trim().is_empty() => Change::Diff {
                text,
                from: "the document's heal.diff".into(),
            },
            (None, base, _) => Change::WorkingTree { base },
        }
    }
}

/// The files `change` changes in the project at `workspace`.
pub(crate) fn read(workspace: &Path, change: &Change) -> Result<Vec<FileDiff>, Failure> {
    match change {
        Change::Diff { text, from } => parse(text, from),
        Change::WorkingTree { base } => working_tree(workspace, base.as_deref()),
    }
}

/// `text` as the files of a unified diff; `what` names where it came from in errors.
fn parse(text: &str, what: &str) -> Result<Vec<FileDiff>, Failure> {
    let started = std::time::Instant::now();
    let files = patch::parse(text).map_err(|err| {
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
        .flat_map(|f| [f.old_path(), f.new_path()])
        .flatten()
        .find(|path| {
            Path::new(path.as_ref())
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        })
    {
        return Err(Failure::usage(format!(
            "{what} names {}, outside the project",
            crate::text::sanitize_for_terminal(&path)
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
}

/// git in `workspace`, a project in a subdirectory of its repository too (git runs there, and
/// names paths from it); refused when the repository's working tree is elsewhere.
fn confined_git(workspace: &Path) -> Result<Git, Failure> {
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
    Ok(git)
}

/// The working tree of the repository `workspace` is in (or its directory in it), untracked
/// files included, against `base` (a commit), else against HEAD.
fn working_tree(workspace: &Path, base: Option<&str>) -> Result<Vec<FileDiff>, Failure> {
    let git = confined_git(workspace)?;
    let base = match base {
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
    let mut files = parse(&diff(&[&base, "--"])?, "git diff")?;
    // A file the attributes call binary (`-diff`) that holds text: its lines are reviewed too.
    for file in files
        .iter_mut()
        .filter(|f| f.is_binary() && f.status != FileStatus::Deleted)
    {
        let path = file.path().to_string();
        let text = crate::workspace::read_regular_file(&workspace.join(&path), MAX_UNTRACKED);
        if text.is_some_and(|t| !t.contains('\0')) {
            if let Some(again) = parse(&diff(&["--text", &base, "--", &path])?, "git diff")?.pop() {
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
fn untracked_file(workspace: &Path, path: &str) -> FileDiff {
    let on_disk = on_disk(workspace, path);
    let metadata = std::fs::symlink_metadata(&on_disk);
    let is_link = metadata.as_ref().is_ok_and(|m| m.file_type().is_symlink());
    let too_large = metadata.is_ok_and(|m| m.len() > MAX_UNTRACKED);
    let text = crate::workspace::read_regular_file(&on_disk, MAX_UNTRACKED);
    let binary = !is_link && (too_large || text.as_deref().is_none_or(|t| t.contains('\0')));
    let hunks = match &text {
        _ if binary => None,
        Some(text) if !text.is_empty() => {
            let lines = text
                .split_inclusive('\n')
                .map(|line| (LineKind::Added, line.as_bytes()));
            Some(vec![Hunk::numbered((0, 1), String::new(), lines)])
        }
        _ => Some(Vec::new()),
    };
    FileDiff {
        old: None,
        new: Some(patch::Side {
            path: path.as_bytes().to_vec(),
            mode: None,
        }),
        status: FileStatus::Added,
        similarity: None,
        index: None,
        hunks,
        untracked: true,
    }
}

/// Where `path`, as git listed it, is: a name that is not UTF-8 reached git's listing with its
/// bytes replaced (U+FFFD), so such a component is found among its directory's entries.
fn on_disk(workspace: &Path, path: &str) -> PathBuf {
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

#[cfg(test)]
mod tests {
    use super::Change;

    fn described(change: Change) -> String {
        match change {
            Change::Diff { text, from } => format!("{from}: {text}"),
            Change::WorkingTree { base } => format!("working tree against {base:?}"),
        }
    }

    #[test]
    fn a_diff_given_comes_first_then_base_then_heals_change_then_head() {
        let some = |text: &str| Some(text.to_string());
        let cases = [
            ((some("d"), some("main"), some("h")), "--diff: d"),
            (
                (None, some("main"), some("h")),
                "working tree against Some(\"main\")",
            ),
            ((None, None, some("h")), "the document's heal.diff: h"),
            ((None, None, some(" \n")), "working tree against None"),
            ((None, None, None), "working tree against None"),
        ];
        for ((diff, base, heal), expected) in cases {
            assert_eq!(described(Change::first_of(diff, base, heal)), expected);
        }
    }
}
