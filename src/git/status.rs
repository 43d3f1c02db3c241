//! The status of a repository as `git status --porcelain=v2 --untracked-files=all
//! --ignore-submodules=dirty` reports it: the branch, HEAD, the upstream and how far apart they
//! are, and each changed file with what changed in the index and in the working tree. Read with
//! gix, in the git reader (`reader`), which runs in the sandbox.

use std::collections::BTreeMap;

use gix::bstr::BString;
use gix::status::index_worktree::Item as WorktreeItem;
use gix::status::plumbing::index_as_worktree::{Change as WorktreeChange, EntryStatus};
use schemars::JsonSchema;
use serde::Serialize;

use crate::text::{Budget, RESULT_BUDGET};

/// Files listed at most; the rest are counted.
const MAX_FILES: usize = 1000;

#[derive(Debug, Default, Serialize, JsonSchema)]
pub(crate) struct Change {
    pub path: String,
    /// What changed in the index, if anything.
    pub staged: Option<&'static str>,
    /// What changed in the working tree, if anything.
    pub unstaged: Option<&'static str>,
    /// The path it was renamed or copied from.
    pub orig_path: Option<String>,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub(crate) struct Status {
    /// The branch checked out; none when HEAD is detached.
    pub branch: Option<String>,
    /// The commit HEAD is at; none before the first commit.
    pub head: Option<String>,
    pub upstream: Option<String>,
    pub ahead: Option<u64>,
    pub behind: Option<u64>,
    /// Nothing staged, changed or untracked.
    pub clean: bool,
    pub files: Vec<Change>,
    /// Changed files not listed (beyond the first 1000, or about 32 KB of them).
    pub omitted: usize,
}

fn failed(err: &dyn std::fmt::Display) -> String {
    format!("git status failed: {err}")
}

/// The status of `repo`: where HEAD is, then what changed,
/// tracked files in path order and then the untracked ones.
pub(crate) fn status(repo: &gix::Repository) -> Result<Status, String> {
    let mut output = Status::default();
    branch(repo, &mut output)?;
    let (tracked, mut untracked) = changes(repo)?;
    untracked.sort();
    let untracked = untracked.into_iter().map(|path| {
        (
            path,
            Change {
                unstaged: Some("untracked"),
                ..Change::default()
            },
        )
    });
    let mut budget = Budget::new(RESULT_BUDGET);
    for (path, mut change) in tracked.into_iter().chain(untracked) {
        change.path = path.to_string();
        if output.omitted == 0 && output.files.len() < MAX_FILES && budget.take(&change) {
            output.files.push(change);
        } else {
            output.omitted += 1;
        }
    }
    output.clean = output.files.is_empty();
    Ok(output)
}

/// The branch, the commit HEAD is at, and the upstream with how far apart they are.
fn branch(repo: &gix::Repository, output: &mut Status) -> Result<(), String> {
    let head_id = repo.head_id().ok().map(gix::Id::detach);
    output.head = head_id.map(|id| id.to_string());
    let head_name = repo.head_name().map_err(|err| failed(&err))?;
    if let Some(name) = head_name {
        output.branch = Some(name.shorten().to_string());
        let tracking = repo
            .branch_remote_tracking_ref_name(name.as_ref(), gix::remote::Direction::Fetch)
            .and_then(Result::ok);
        if let Some(tracking) = tracking {
            output.upstream = Some(tracking.shorten().to_string());
            let upstream_id = repo
                .try_find_reference(tracking.as_ref())
                .ok()
                .flatten()
                .and_then(|mut reference| reference.peel_to_id().ok())
                .map(gix::Id::detach);
            if let (Some(head), Some(upstream)) = (head_id, upstream_id) {
                let count = |from, hidden| -> Result<u64, String> {
                    let walk = repo
                        .rev_walk([from])
                        .with_hidden([hidden])
                        .all()
                        .map_err(|err| failed(&err))?;
                    let mut commits = 0;
                    for commit in walk {
                        commit.map_err(|err| failed(&err))?;
                        commits += 1;
                    }
                    Ok(commits)
                };
                output.ahead = Some(count(head, upstream)?);
                output.behind = Some(count(upstream, head)?);
            }
        }
    }
    Ok(())
}

/// The tracked files that changed, with what changed in the index and in the working tree, and
/// the untracked files.
/// Long: one pass over gix's status items, each kind of change a branch of the same match.
fn changes(repo: &gix::Repository) -> Result<(BTreeMap<BString, Change>, Vec<BString>), String> {
    let mut status = repo
        .status(gix::progress::Discard)
        .map_err(|err| failed(&err))?
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_submodules(super::reader::submodules(repo));
    // gix reads `diff.renames` but passes over `status.renames`, which comes first.
    if repo.config_snapshot().boolean("status.renames") == Some(false) {
        status = status.tree_index_track_renames(gix::status::tree_index::TrackRenames::Disabled);
    }
    // Read afresh, as git does: the repository's cached index goes by the file's time, which
    // the workspace's code can set back.
    if repo.index_path().exists() {
        let index = repo.open_index().map_err(|err| failed(&err))?;
        status = status.index(gix::worktree::IndexPersistedOrInMemory::InMemory(index));
    }
    let changes = status.into_iter(None).map_err(|err| failed(&err))?;
    let mut tracked: BTreeMap<BString, Change> = BTreeMap::new();
    let mut untracked = Vec::new();
    for item in changes {
        let (path, staged, unstaged, orig_path) = match item.map_err(|err| failed(&err))? {
            gix::status::Item::IndexWorktree(WorktreeItem::Modification {
                rela_path,
                status,
                ..
            }) => {
                let unstaged = match status {
                    EntryStatus::Conflict { .. } => {
                        let change = tracked.entry(rela_path).or_default();
                        (change.staged, change.unstaged) = (Some("unmerged"), Some("unmerged"));
                        continue;
                    }
                    EntryStatus::NeedsUpdate(_) => continue,
                    EntryStatus::IntentToAdd => "added",
                    EntryStatus::Change(WorktreeChange::Removed) => "deleted",
                    EntryStatus::Change(WorktreeChange::Type { .. }) => "type_changed",
                    EntryStatus::Change(
                        WorktreeChange::Modification { .. }
                        | WorktreeChange::SubmoduleModification(_),
                    ) => "modified",
                };
                (rela_path, None, Some(unstaged), None)
            }
            gix::status::Item::IndexWorktree(
                WorktreeItem::DirectoryContents { entry, .. }
                | WorktreeItem::Rewrite {
                    dirwalk_entry: entry,
                    ..
                },
            ) => {
                if entry.status == gix::dir::entry::Status::Untracked {
                    // A directory listed whole (a repository of its own) ends in `/`, as git
                    // shows it.
                    let mut path = entry.rela_path;
                    if matches!(
                        entry.disk_kind,
                        Some(gix::dir::entry::Kind::Directory | gix::dir::entry::Kind::Repository)
                    ) {
                        path.push(b'/');
                    }
                    untracked.push(path);
                }
                continue;
            }
            gix::status::Item::TreeIndex(change) => {
                use gix::diff::index::ChangeRef;
                match change {
                    ChangeRef::Addition { location, .. } => {
                        (location.into_owned(), Some("added"), None, None)
                    }
                    ChangeRef::Deletion { location, .. } => {
                        (location.into_owned(), Some("deleted"), None, None)
                    }
                    ChangeRef::Modification {
                        location,
                        previous_entry_mode,
                        entry_mode,
                        ..
                    } => {
                        const TYPE_BITS: u32 = 0o170000;
                        let kind_changed =
                            previous_entry_mode.bits() & TYPE_BITS != entry_mode.bits() & TYPE_BITS;
                        let staged = if kind_changed {
                            "type_changed"
                        } else {
                            "modified"
                        };
                        (location.into_owned(), Some(staged), None, None)
                    }
                    ChangeRef::Rewrite {
                        source_location,
                        location,
                        copy,
                        ..
                    } => {
                        let staged = if copy { "copied" } else { "renamed" };
                        let from = source_location.to_string();
                        (location.into_owned(), Some(staged), None, Some(from))
                    }
                }
            }
        };
        let change = tracked.entry(path).or_default();
        if change.staged == Some("unmerged") {
            continue;
        }
        change.staged = staged.or(change.staged);
        change.unstaged = unstaged.or(change.unstaged);
        change.orig_path = orig_path.or(change.orig_path.take());
    }
    Ok((tracked, untracked))
}
