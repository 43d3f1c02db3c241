//! What changed in a repository, as `git diff --no-ext-diff --no-textconv
//! --ignore-submodules=dirty --submodule=short` shows it: per-file counts and the patch, read
//! with gix in the git reader (`reader`), which runs in the sandbox.
//!
//! Both sides become index states and gix compares those, tracking renames: a tree (the base,
//! or HEAD for staged changes), the index, or the working tree, which is the index with the
//! files gix's status finds changed read from disk (through the repository's filters, as git
//! reads them) into objects held in memory. Each change becomes the diff model (`patch`), with
//! git's default function context in its hunks, following the settings that change `git diff`'s
//! text: diff.algorithm, diff.context, diff.noprefix, diff.mnemonicPrefix and core.quotePath.

use gix::bstr::{BStr, BString, ByteSlice};
use gix::diff::blob::{Algorithm, Diff, InternedInput};
use gix::index::entry::Mode;
use gix::objs::tree::EntryKind;
use gix::ObjectId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::patch::{self, FileDiff, Hunk, LineKind};
use crate::run_document::FileStatus;
use crate::text::{Budget, RESULT_BUDGET};
/// The diff text kept; beyond it, the counts still cover every file.
const MAX_DIFF: usize = 32 << 10;

/// What to compare.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DiffRequest {
    /// Compare the index (what is staged) instead of the working tree.
    #[serde(default)]
    pub staged: bool,
    /// Compare against this commit, branch or tag instead of the index (or HEAD when staged).
    #[serde(default)]
    pub base: Option<String>,
    /// Only these files or directories, relative to the workspace root.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Lines of context around each change (default: the repository's diff.context, else 3).
    #[serde(default)]
    pub context_lines: Option<u32>,
    /// Only the per-file counts, no diff text.
    #[serde(default)]
    pub stat_only: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FileStat {
    pub path: String,
    /// The path it was renamed from.
    pub orig_path: Option<String>,
    /// Lines added; none for a binary file.
    pub added: Option<u64>,
    /// Lines deleted; none for a binary file.
    pub deleted: Option<u64>,
}

/// What changed: per-file counts, and the patch.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Changes {
    pub files: Vec<FileStat>,
    /// Changed files left out of `files` (past about 8 KB of counts, 32 KB with stat_only):
    /// ask for fewer paths to see them.
    pub files_omitted: usize,
    /// The unified diff (empty with stat_only).
    pub diff: String,
    /// The diff was cut at about 32 KB: ask for fewer paths to see the rest.
    pub truncated: bool,
}

fn failed(err: &dyn std::fmt::Display) -> String {
    format!("git diff failed: {err}")
}

/// One side of a changed file.
struct Side {
    path: BString,
    mode: Mode,
    id: ObjectId,
}

/// A changed file; a side is missing for an added or deleted one.
struct Change {
    old: Option<Side>,
    new: Option<Side>,
}

/// The diff `input` asks for, of `repo`.
pub(crate) fn diff(repo: &gix::Repository, input: DiffRequest) -> Result<Changes, String> {
    // Working-tree files are hashed into objects; those stay in memory, never in the repository.
    let repo = repo.clone().with_object_memory();
    let index = if repo.index_path().exists() {
        repo.open_index().map_err(|err| failed(&err))?
    } else {
        gix::index::File::from_state(
            gix::index::State::new(repo.object_hash()),
            repo.index_path(),
        )
    };
    let base_tree = match (&input.base, input.staged) {
        (Some(base), _) => Some(tree_of(&repo, base)?),
        (None, true) => Some(
            repo.head_tree_id_or_empty()
                .map_err(|err| failed(&err))?
                .detach(),
        ),
        (None, false) => None,
    };
    let old = old_side(&repo, &index, base_tree)?;
    // git lists the paths with unresolved conflicts and shows no diff for them, except against
    // a tree with the working tree, where the file on disk is compared.
    let conflicted = unmerged_paths(&index, &input.paths);
    let against_disk = input.base.is_some() && !input.staged;
    let new = if input.staged {
        (*index).clone()
    } else {
        let from_disk: &[BString] = if against_disk { &conflicted } else { &[] };
        working_tree(&repo, &index, &input.paths, from_disk)?
    };
    let unmerged = if against_disk { Vec::new() } else { conflicted };
    let mut changes = compare(&repo, &old, &new, &input.paths)?;
    changes.sort_by(|a, b| shown_path(a).cmp(shown_path(b)));

    let format = Format::of(
        &repo,
        input.context_lines,
        base_tree.is_some(),
        input.staged,
    );
    let mut cache = repo
        .diff_resource_cache(
            gix::diff::blob::pipeline::Mode::ToGit,
            gix::diff::blob::pipeline::WorktreeRoots::default(),
        )
        .map_err(|err| failed(&err))?;
    let mut files = Vec::new();
    let mut patch = String::new();
    let mut unmerged = unmerged.into_iter().peekable();
    for change in &changes {
        while let Some(path) = unmerged.next_if(|path| path.as_bstr() < shown_path(change)) {
            list_unmerged(path, &format, input.stat_only, &mut files, &mut patch);
        }
        let diffs = file_diffs(&repo, &mut cache, change, &format)?;
        cache.clear_resource_cache_keep_allocation();
        if !input.stat_only && patch.len() <= MAX_DIFF {
            for diff in &diffs {
                patch::write(diff, &format.patch, &mut patch);
            }
        }
        files.push(stat_of(&diffs));
    }
    for path in unmerged {
        list_unmerged(path, &format, input.stat_only, &mut files, &mut patch);
    }
    Ok(within_budget(files, patch, input.stat_only))
}

/// What the diff is against: the tree `base_tree` (as an index), else the index.
fn old_side(
    repo: &gix::Repository,
    index: &gix::index::State,
    base_tree: Option<ObjectId>,
) -> Result<gix::index::State, String> {
    Ok(match base_tree {
        Some(tree) => repo
            .index_from_tree(&tree)
            .map_err(|err| failed(&err))?
            .into(),
        // Against the index: a file only intended to be added is not in it yet, and one with
        // unresolved conflicts has no one version in it.
        None => {
            let mut state = index.clone();
            state.remove_entries(|_, _, entry| {
                entry
                    .flags
                    .contains(gix::index::entry::Flags::INTENT_TO_ADD)
                    || entry.stage() != gix::index::entry::Stage::Unconflicted
            });
            state
        }
    })
}

/// The files' counts and the patch, each cut to its part of the result's budget.
fn within_budget(mut files: Vec<FileStat>, patch: String, stat_only: bool) -> Changes {
    // The counts are kept within the result's budget too (beside the diff, a quarter of it).
    let mut budget = Budget::new(if stat_only {
        RESULT_BUDGET
    } else {
        RESULT_BUDGET / 4
    });
    let listed = files.iter().take_while(|file| budget.take(file)).count();
    let files_omitted = files.len() - listed;
    files.truncate(listed);
    // Measured as JSON: a control character in a line takes six bytes there.
    let truncated = crate::text::json_len(&patch) > MAX_DIFF;
    let diff = if truncated {
        let cut = crate::text::json_prefix(&patch, MAX_DIFF);
        format!(
            "{cut}\n[... diff cut at {MAX_DIFF} bytes: ask for fewer paths, fewer context_lines, \
             or stat_only for the counts]"
        )
    } else {
        patch
    };
    Changes {
        files,
        files_omitted,
        diff,
        truncated,
    }
}

/// Lists a path with unresolved conflicts as git does, without a diff.
fn list_unmerged(
    path: BString,
    format: &Format,
    stat_only: bool,
    files: &mut Vec<FileStat>,
    patch: &mut String,
) {
    if !stat_only && patch.len() <= MAX_DIFF {
        patch.push_str(&format!(
            "* Unmerged path {}\n",
            format.patch.quoted("", &path)
        ));
    }
    files.push(FileStat {
        path: path.to_string(),
        orig_path: None,
        added: Some(0),
        deleted: Some(0),
    });
}

/// The tree of the commit (or tag, or tree) `base` names.
fn tree_of(repo: &gix::Repository, base: &str) -> Result<ObjectId, String> {
    let unknown = |err: &dyn std::fmt::Display| {
        format!("base {base:?} is not a revision here ({err}); give a commit, branch or tag")
    };
    let object = repo
        .rev_parse_single(base)
        .map_err(|err| unknown(&err))?
        .object()
        .map_err(|err| unknown(&err))?;
    let tree = object.peel_to_tree().map_err(|err| unknown(&err))?;
    Ok(tree.id)
}

/// The paths among `paths` with unresolved conflicts in `index`.
fn unmerged_paths(index: &gix::index::State, paths: &[String]) -> Vec<BString> {
    let mut unmerged: Vec<BString> = Vec::new();
    for entry in index.entries() {
        let path = entry.path(index);
        if entry.stage() != gix::index::entry::Stage::Unconflicted
            && selected(path, paths)
            && unmerged.last().map(AsRef::as_ref) != Some(path)
        {
            unmerged.push(path.to_owned());
        }
    }
    unmerged
}

/// Whether `path` is one of `paths` or inside one (all of them when none are given).
fn selected(path: &BStr, paths: &[String]) -> bool {
    paths.is_empty()
        || paths.iter().any(|wanted| {
            wanted.is_empty()
                || path == wanted.as_bytes()
                || path
                    .strip_prefix(wanted.as_bytes())
                    .is_some_and(|rest| rest.starts_with(b"/"))
        })
}

/// The working tree as an index: `index` with each file gix's status finds changed read from
/// disk (through the repository's filters, as `git add` would) into an in-memory object, and
/// each one gone removed. Files only intended to be added count with what they hold. Of the
/// files with unresolved conflicts, those in `from_disk` count with what is on disk, the
/// others are left out.
fn working_tree(
    repo: &gix::Repository,
    index: &gix::index::File,
    paths: &[String],
    from_disk: &[BString],
) -> Result<gix::index::State, String> {
    use gix::index::entry::{Flags, Stage};
    use gix::status::index_worktree::Item;
    use gix::status::plumbing::index_as_worktree::{Change as WorktreeChange, EntryStatus};

    let mut reader = WorktreeReader::new(repo)?;
    let mut state = (**index).clone();
    let status = repo
        .status(gix::progress::Discard)
        .map_err(|err| failed(&err))?
        .untracked_files(gix::status::UntrackedFiles::None)
        .index_worktree_submodules(super::reader::submodules(repo))
        .index(gix::worktree::IndexPersistedOrInMemory::InMemory(
            index.clone(),
        ));
    let patterns = paths.iter().map(|path| literal_pattern(path));
    let items = status
        .into_index_worktree_iter(patterns)
        .map_err(|err| failed(&err))?;
    let mut gone = Vec::new();
    for item in items {
        let Item::Modification {
            entry_index,
            rela_path,
            status,
            ..
        } = item.map_err(|err| failed(&err))?
        else {
            continue;
        };
        let entry = &mut state.entries_mut()[entry_index];
        match status {
            EntryStatus::Conflict { .. } | EntryStatus::NeedsUpdate(_) => {}
            EntryStatus::Change(WorktreeChange::Removed) => gone.push(entry_index),
            EntryStatus::Change(WorktreeChange::SubmoduleModification(submodule)) => {
                if let Some(head) = submodule.checked_out_head_id {
                    entry.id = head;
                }
            }
            EntryStatus::IntentToAdd
            | EntryStatus::Change(
                WorktreeChange::Modification { .. } | WorktreeChange::Type { .. },
            ) => match reader.read(rela_path.as_ref(), entry.mode, index)? {
                Some((mode, id)) => {
                    entry.id = id;
                    entry.mode = mode;
                    entry.flags.remove(Flags::INTENT_TO_ADD);
                }
                None => gone.push(entry_index),
            },
        }
    }
    // The status comes from threads, in no set order.
    gone.sort_unstable();
    state.remove_entries(|at, _, entry| {
        entry.stage() != Stage::Unconflicted || gone.binary_search(&at).is_ok()
    });
    for path in from_disk {
        if let Some((mode, id)) = reader.read(path.as_ref(), Mode::FILE, index)? {
            let stat = gix::index::entry::Stat::default();
            state.dangerously_push_entry(stat, id, Flags::empty(), mode, path.as_ref());
        }
    }
    state.sort_entries();
    Ok(state)
}

/// Reads working-tree files into objects in memory.
struct WorktreeReader<'repo> {
    repo: &'repo gix::Repository,
    workdir: std::path::PathBuf,
    filters: gix::filter::Pipeline<'repo>,
    /// core.fileMode: whether the executable bit on disk counts.
    file_mode: bool,
}

impl<'repo> WorktreeReader<'repo> {
    fn new(repo: &'repo gix::Repository) -> Result<Self, String> {
        let workdir = repo
            .workdir()
            .ok_or_else(|| String::from("the repository has no working tree"))?
            .to_path_buf();
        let (filters, _) = repo.filter_pipeline(None).map_err(|err| failed(&err))?;
        let file_mode = repo
            .config_snapshot()
            .boolean("core.fileMode")
            .unwrap_or(true);
        Ok(WorktreeReader {
            repo,
            workdir,
            filters,
            file_mode,
        })
    }

    /// The mode and object of the file at `rela_path` (whose mode in the index is `was`), or
    /// none when it is gone or a directory now.
    fn read(
        &mut self,
        rela_path: &BStr,
        was: Mode,
        index: &gix::index::State,
    ) -> Result<Option<(Mode, ObjectId)>, String> {
        use std::os::unix::ffi::OsStringExt;
        use std::os::unix::fs::PermissionsExt;
        let on_disk = self.workdir.join(unix_path(rela_path));
        let Ok(meta) = std::fs::symlink_metadata(&on_disk) else {
            return Ok(None);
        };
        let (mode, content) = if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&on_disk).map_err(|err| failed(&err))?;
            (Mode::SYMLINK, target.into_os_string().into_vec())
        } else if meta.is_file() {
            let executable = if self.file_mode {
                meta.permissions().mode() & 0o100 != 0
            } else {
                was == Mode::FILE_EXECUTABLE
            };
            let mode = if executable {
                Mode::FILE_EXECUTABLE
            } else {
                Mode::FILE
            };
            (mode, self.content(&on_disk, rela_path, index)?)
        } else {
            return Ok(None);
        };
        let id = self.repo.write_blob(&content).map_err(|err| failed(&err))?;
        Ok(Some((mode, id.detach())))
    }

    /// A file's content as git stores it: through the clean filter and line-ending
    /// conversion its attributes name.
    fn content(
        &mut self,
        on_disk: &std::path::Path,
        rela_path: &BStr,
        index: &gix::index::State,
    ) -> Result<Vec<u8>, String> {
        use gix::filter::plumbing::pipeline::convert::ToGitOutcome;
        use std::io::Read;
        let file = std::fs::File::open(on_disk).map_err(|err| failed(&err))?;
        let mut content = Vec::new();
        match self
            .filters
            .convert_to_git(file, unix_path(rela_path), index)
            .map_err(|err| failed(&err))?
        {
            ToGitOutcome::Unchanged(mut file) => file.read_to_end(&mut content),
            ToGitOutcome::Process(mut filtered) => filtered.read_to_end(&mut content),
            ToGitOutcome::Buffer(buffer) => {
                content.extend_from_slice(buffer);
                Ok(0)
            }
        }
        .map_err(|err| failed(&err))?;
        Ok(content)
    }
}

fn unix_path(path: &BStr) -> &std::path::Path {
    use std::os::unix::ffi::OsStrExt;
    std::path::Path::new(std::ffi::OsStr::from_bytes(path))
}

/// A pathspec for exactly `path` (a file, or everything under a directory): paths are taken
/// literally, as the git CLI took them with GIT_LITERAL_PATHSPECS.
fn literal_pattern(path: &str) -> BString {
    if path.is_empty() {
        ":(literal).".into()
    } else {
        format!(":(literal){path}").into()
    }
}

/// What changed from `old` to `new`, limited to `paths`, with renames (from config, on by
/// default as in git; against the index, a file intended to be added can be one).
/// Long: gix's rewrite settings, then one match over its four kinds of change, each destructured whole.
fn compare(
    repo: &gix::Repository,
    old: &gix::index::State,
    new: &gix::index::State,
    paths: &[String],
) -> Result<Vec<Change>, String> {
    use gix::diff::index::ChangeRef;
    let (rewrites, configured) = gix::diff::new_rewrites(repo.config_snapshot().plumbing(), true)
        .map_err(|err| failed(&err))?;
    let rewrites = if configured {
        rewrites
    } else {
        Some(gix::diff::Rewrites::default())
    };
    // Copies (diff.renames=copies) are not looked for: gix takes a modified source's change for
    // the copy's and drops it, where git shows both.
    let rewrites = rewrites.map(|rewrites| gix::diff::Rewrites {
        copies: None,
        ..rewrites
    });
    let mut cache = repo
        .diff_resource_cache_for_tree_diff()
        .map_err(|err| failed(&err))?;
    let (mut search, _) = repo
        .pathspec(
            true,
            paths.iter().map(|path| literal_pattern(path)),
            false,
            new,
            gix::worktree::stack::state::attributes::Source::IdMapping,
        )
        .map_err(|err| failed(&err))?
        .into_parts();
    let side = |path: &BStr, mode: Mode, id: &gix::oid| Side {
        path: path.to_owned(),
        mode,
        id: id.to_owned(),
    };
    let mut changes = Vec::new();
    gix::diff::index(
        old,
        new,
        |change| {
            changes.push(match change {
                ChangeRef::Addition {
                    location,
                    entry_mode,
                    id,
                    ..
                } => Change {
                    old: None,
                    new: Some(side(&location, entry_mode, &id)),
                },
                ChangeRef::Deletion {
                    location,
                    entry_mode,
                    id,
                    ..
                } => Change {
                    old: Some(side(&location, entry_mode, &id)),
                    new: None,
                },
                ChangeRef::Modification {
                    location,
                    previous_entry_mode,
                    previous_id,
                    entry_mode,
                    id,
                    ..
                } => Change {
                    old: Some(side(&location, previous_entry_mode, &previous_id)),
                    new: Some(side(&location, entry_mode, &id)),
                },
                ChangeRef::Rewrite {
                    source_location,
                    source_entry_mode,
                    source_id,
                    location,
                    entry_mode,
                    id,
                    ..
                } => Change {
                    old: Some(side(&source_location, source_entry_mode, &source_id)),
                    new: Some(side(&location, entry_mode, &id)),
                },
            });
            Ok(std::ops::ControlFlow::Continue(()))
        },
        rewrites.map(|rewrites| gix::diff::index::RewriteOptions {
            resource_cache: &mut cache,
            find: repo,
            rewrites,
        }),
        &mut search,
        &mut |_, _, _, _| false,
    )
    .map_err(|err| failed(&err))?;
    Ok(changes)
}

/// The path a change is listed under: git orders them by it.
fn shown_path(change: &Change) -> &BStr {
    change
        .new
        .as_ref()
        .or(change.old.as_ref())
        .map(|side| side.path.as_ref())
        .expect("a change has a side")
}

const TYPE_BITS: u32 = 0o170000;

/// The model of `change`: one file diff, or two for a file that changed kind (a file become a
/// link), which git shows deleted, then added.
fn file_diffs(
    repo: &gix::Repository,
    cache: &mut gix::diff::blob::Platform,
    change: &Change,
    format: &Format,
) -> Result<Vec<FileDiff>, String> {
    let (Some(old), Some(new)) = (&change.old, &change.new) else {
        return Ok(vec![file_diff(repo, cache, change, format)?]);
    };
    if old.mode.bits() & TYPE_BITS == new.mode.bits() & TYPE_BITS {
        return Ok(vec![file_diff(repo, cache, change, format)?]);
    }
    let side = |side: &Side| Side {
        path: side.path.clone(),
        mode: side.mode,
        id: side.id,
    };
    let removal = Change {
        old: Some(side(old)),
        new: None,
    };
    let addition = Change {
        old: None,
        new: Some(side(new)),
    };
    let removed = file_diff(repo, cache, &removal, format)?;
    cache.clear_resource_cache_keep_allocation();
    Ok(vec![removed, file_diff(repo, cache, &addition, format)?])
}

/// The counts of a change's file diffs, listed under the first one's path.
fn stat_of(diffs: &[FileDiff]) -> FileStat {
    let first = &diffs[0];
    let path = |side: Option<&patch::Side>| side.map(|side| side.path.to_str_lossy().into_owned());
    let new_path = first.path().into_owned();
    let old_path = path(first.old.as_ref()).filter(|old| *old != new_path);
    let counts = diffs
        .iter()
        .map(FileDiff::counts)
        .try_fold((0, 0), |(added, deleted), counts| {
            counts.map(|(more_added, more_deleted)| (added + more_added, deleted + more_deleted))
        });
    FileStat {
        path: new_path,
        orig_path: old_path,
        added: counts.map(|(added, _)| added),
        deleted: counts.map(|(_, deleted)| deleted),
    }
}

/// The diff model of one change.
fn file_diff(
    repo: &gix::Repository,
    cache: &mut gix::diff::blob::Platform,
    change: &Change,
    format: &Format,
) -> Result<FileDiff, String> {
    let (old, new) = (change.old.as_ref(), change.new.as_ref());
    let either = new.or(old).expect("a change has a side");
    let (old_path, new_path): (&BStr, &BStr) = (
        old.map_or(either.path.as_ref(), |side| side.path.as_ref()),
        new.map_or(either.path.as_ref(), |side| side.path.as_ref()),
    );
    let (sides, algorithm) = contents(repo, cache, change)?;
    let null = ObjectId::null(repo.object_hash());
    let similarity = if old_path != new_path {
        Some(match (&sides[0], &sides[1]) {
            _ if old.map(|side| side.id) == new.map(|side| side.id) => 100,
            (Some(before), Some(after)) => similarity(before, after, true),
            _ => similarity(&blob(repo, old)?, &blob(repo, new)?, false),
        })
    } else {
        None
    };
    let (old_id, new_id) = (
        old.map_or(null, |side| side.id),
        new.map_or(null, |side| side.id),
    );
    let index = (old_id != new_id).then(|| {
        (
            abbreviated(repo, old_id, format.short_length),
            abbreviated(repo, new_id, format.short_length),
        )
    });
    let hunks = match (&sides[0], &sides[1]) {
        (Some(before), Some(after)) => Some(hunks(before, after, algorithm, format.context)),
        _ => None,
    };
    let model = |side: &Side| patch::Side {
        path: side.path.to_vec(),
        mode: Some(side.mode.bits()),
    };
    Ok(FileDiff {
        old: old.map(model),
        new: new.map(model),
        status: status(old.is_some(), new.is_some(), old_path != new_path),
        similarity,
        index,
        hunks,
        untracked: false,
    })
}

/// The old and new side's content; None for a binary one.
type Sides = [Option<Vec<u8>>; 2];

/// Each side's content, or None for a binary one (a submodule shows as its commit), and the
/// algorithm diff.algorithm (or the file's diff driver) names, Myers as in git otherwise.
fn contents(
    repo: &gix::Repository,
    cache: &mut gix::diff::blob::Platform,
    change: &Change,
) -> Result<(Sides, Algorithm), String> {
    use gix::diff::blob::platform::prepare_diff::Operation;
    use gix::diff::blob::platform::resource::Data;
    use gix::diff::blob::ResourceKind;

    let (old, new) = (change.old.as_ref(), change.new.as_ref());
    let either = new.or(old).expect("a change has a side");
    let null = ObjectId::null(repo.object_hash());
    let submodule = |side: Option<&Side>| {
        side.map(|side| format!("Subproject commit {}\n", side.id).into_bytes())
    };
    if either.mode == Mode::COMMIT || old.is_some_and(|side| side.mode == Mode::COMMIT) {
        let sides = [
            Some(submodule(old).unwrap_or_default()),
            Some(submodule(new).unwrap_or_default()),
        ];
        return Ok((sides, Algorithm::Myers));
    }
    for (side, kind) in [
        (old, ResourceKind::OldOrSource),
        (new, ResourceKind::NewOrDestination),
    ] {
        let (id, mode) = side.map_or((null, either.mode), |side| (side.id, side.mode));
        let entry_kind = mode
            .to_tree_entry_mode()
            .map_or(EntryKind::Blob, |mode| mode.kind());
        cache
            .set_resource(id, entry_kind, either.path.as_ref(), kind, repo)
            .map_err(|err| failed(&err))?;
    }
    let prepared = cache.prepare_diff().map_err(|err| failed(&err))?;
    let binary = matches!(prepared.operation, Operation::SourceOrDestinationIsBinary);
    let algorithm = match prepared.operation {
        Operation::InternalDiff { algorithm } => algorithm,
        _ => Algorithm::Myers,
    };
    let sides = [prepared.old, prepared.new].map(|resource| match resource.data {
        _ if binary => None,
        Data::Missing => Some(Vec::new()),
        Data::Buffer { buf, .. } => Some(buf.to_vec()),
        Data::Binary { .. } => None,
    });
    Ok((sides, algorithm))
}

/// What happened to a file with these sides (git's diff shows no copies).
fn status(old: bool, new: bool, moved: bool) -> FileStatus {
    match (old, new) {
        (false, _) => FileStatus::Added,
        (_, false) => FileStatus::Deleted,
        _ if moved => FileStatus::Renamed,
        _ => FileStatus::Modified,
    }
}

/// The raw content of a side's blob (empty for a missing side).
fn blob(repo: &gix::Repository, side: Option<&Side>) -> Result<Vec<u8>, String> {
    match side {
        Some(side) => Ok(repo
            .find_object(side.id)
            .map_err(|err| failed(&err))?
            .detach()
            .data),
        None => Ok(Vec::new()),
    }
}

/// How long git's shortest ids are in this repository: as long as HEAD's shortened, as git
/// grows them with the number of objects (7 before the first commit).
fn short_length(repo: &gix::Repository) -> usize {
    repo.head_id()
        .ok()
        .and_then(|id| id.shorten().ok())
        .map_or(7, |prefix| prefix.hex_len())
}

/// `id` as short as git shows it: shortened in the object database, or, for the working
/// tree's objects (held in memory, unknown to it) and the null id, `length` long.
fn abbreviated(repo: &gix::Repository, id: ObjectId, length: usize) -> String {
    use gix::prelude::ObjectIdExt;
    match id.attach(repo).shorten() {
        Ok(prefix) if !id.is_null() => prefix.to_string(),
        _ => id.to_hex_with_len(length).to_string(),
    }
}

/// How the diff is made and written: what the call asked for, and the repository's settings
/// that change `git diff`'s text.
struct Format {
    /// Lines of context around changes.
    context: u32,
    /// The length of abbreviated ids (see `short_length`).
    short_length: usize,
    patch: patch::Format,
}

impl Format {
    /// The format for a diff from a tree (`from_tree`) or the index, to the index (`to_index`)
    /// or the working tree, with `context` lines (when the call gives a number).
    fn of(repo: &gix::Repository, context: Option<u32>, from_tree: bool, to_index: bool) -> Format {
        let config = repo.config_snapshot();
        let configured_context = config
            .integer("diff.context")
            .and_then(|lines| u32::try_from(lines).ok());
        let context = context.or(configured_context).unwrap_or(3).min(1000);
        let setting = |key: &str| config.boolean(key).unwrap_or(false);
        let prefixes = if setting("diff.noprefix") {
            ("", "")
        } else if setting("diff.mnemonicPrefix") {
            (
                if from_tree { "c/" } else { "i/" },
                if to_index { "i/" } else { "w/" },
            )
        } else {
            ("a/", "b/")
        };
        Format {
            context,
            short_length: short_length(repo),
            patch: patch::Format {
                quote_non_ascii: config.boolean("core.quotePath").unwrap_or(true),
                prefixes,
            },
        }
    }
}

/// The patch `git diff` writes for the file at `path` changed from `before` to `after` (None: it
/// does not exist), made without a repository: heal's change, which `git apply` takes back.
pub(crate) fn text_patch(
    path: &str,
    before: Option<&[u8]>,
    after: Option<&[u8]>,
    mode: u32,
) -> String {
    let side = |content: Option<&[u8]>| {
        content.map(|_| patch::Side {
            path: path.as_bytes().to_vec(),
            mode: Some(mode),
        })
    };
    let file = FileDiff {
        old: side(before),
        new: side(after),
        status: status(before.is_some(), after.is_some(), false),
        similarity: None,
        index: None,
        hunks: Some(hunks(
            before.unwrap_or_default(),
            after.unwrap_or_default(),
            Algorithm::Myers,
            3,
        )),
        untracked: false,
    };
    let mut out = String::new();
    patch::write(&file, &patch::Format::default(), &mut out);
    out
}

/// The hunks that turn `before` into `after`, as git makes them: `algorithm` with the indent
/// heuristic, `context` lines around changes, changes closer than twice that joined, and the
/// nearest line above that starts with a letter, `_` or `$` as the function.
fn hunks<'a>(before: &'a [u8], after: &'a [u8], algorithm: Algorithm, context: u32) -> Vec<Hunk> {
    let input = InternedInput::new(
        gix::diff::blob::sources::byte_lines(before),
        gix::diff::blob::sources::byte_lines(after),
    );
    let mut diff = Diff::compute(algorithm, &input);
    diff.postprocess_lines(&input);
    let old: Vec<&[u8]> = gix::diff::blob::sources::byte_lines(before).collect();
    let new: Vec<&[u8]> = gix::diff::blob::sources::byte_lines(after).collect();
    let changes: Vec<_> = diff.hunks().collect();
    let mut hunks = Vec::new();
    let mut function = String::new();
    // Where the search for a function line stopped last: it never goes back past it.
    let mut searched_to: i64 = -1;
    let mut at = 0;
    while at < changes.len() {
        let mut end = at;
        while end + 1 < changes.len()
            && changes[end + 1].before.start - changes[end].before.end <= 2 * context
        {
            end += 1;
        }
        let (first, last) = (&changes[at], &changes[end]);
        let old_start = first.before.start.saturating_sub(context);
        let lead = first.before.start - old_start;
        let new_start = first.after.start - lead;
        let trail = (last.before.end + context).min(old.len() as u32) - last.before.end;
        let old_end = last.before.end + trail;
        let new_end = last.after.end + trail;

        let mut line = i64::from(old_start) - 1;
        while line > searched_to {
            if let Some(found) = function_line(old[line as usize]) {
                function = found;
                break;
            }
            line -= 1;
        }
        searched_to = i64::from(old_start) - 1;
        let mut lines: Vec<(LineKind, &[u8])> = Vec::new();
        let mut push =
            |kind, text: &[&'a [u8]]| lines.extend(text.iter().map(|text| (kind, *text)));
        let span = |range: std::ops::Range<u32>| range.start as usize..range.end as usize;
        let mut old_at = old_start;
        for change in &changes[at..=end] {
            push(LineKind::Context, &old[span(old_at..change.before.start)]);
            push(LineKind::Removed, &old[span(change.before.clone())]);
            push(LineKind::Added, &new[span(change.after.clone())]);
            old_at = change.before.end;
        }
        push(LineKind::Context, &old[span(old_at..old_end)]);
        at = end + 1;
        let starts = (
            shown_start(old_start, old_end),
            shown_start(new_start, new_end),
        );
        hunks.push(Hunk::numbered(starts, function.clone(), lines));
    }
    hunks
}

/// Where a range of lines starts as a hunk header shows it: 1-based, or the line before an empty
/// range.
fn shown_start(start: u32, end: u32) -> u32 {
    if end == start {
        start
    } else {
        start + 1
    }
}

/// git's default function line: one that starts with a letter, `_` or `$`, cut to 80 bytes and
/// without trailing white space (git's: space, tab, CR and LF).
fn function_line(line: &[u8]) -> Option<String> {
    let first = *line.first()?;
    if !(first.is_ascii_alphabetic() || first == b'_' || first == b'$') {
        return None;
    }
    let line = &line[..line.len().min(80)];
    let end = line
        .iter()
        .rposition(|byte| !matches!(byte, b' ' | b'\t' | b'\r' | b'\n'))
        .map_or(0, |at| at + 1);
    Some(String::from_utf8_lossy(&line[..end]).into_owned())
}

/// How much of `after` comes from `before`, in percent, as git's rename detection scores it
/// (`diffcore-delta`): both are cut into chunks at each newline or every 64 bytes, and the
/// bytes of `before`'s chunks found again in `after` are counted against the larger size.
fn similarity(before: &[u8], after: &[u8], text: bool) -> u32 {
    const BASE: u32 = 107_927;
    let chunks = |data: &[u8]| {
        let mut counts = std::collections::BTreeMap::<u32, u64>::new();
        let (mut accum1, mut accum2, mut length) = (0u32, 0u32, 0u64);
        for (at, &byte) in data.iter().enumerate() {
            // A CR before an LF is not counted in text.
            if text && byte == b'\r' && data.get(at + 1) == Some(&b'\n') {
                continue;
            }
            let old = accum1;
            accum1 = (accum1 << 7) ^ (accum2 >> 25);
            accum2 = (accum2 << 7) ^ (old >> 25);
            accum1 = accum1.wrapping_add(u32::from(byte));
            length += 1;
            if length < 64 && byte != b'\n' {
                continue;
            }
            let hash = accum1.wrapping_add(accum2.wrapping_mul(0x61)) % BASE;
            *counts.entry(hash).or_default() += length;
            (accum1, accum2, length) = (0, 0, 0);
        }
        if length > 0 {
            let hash = accum1.wrapping_add(accum2.wrapping_mul(0x61)) % BASE;
            *counts.entry(hash).or_default() += length;
        }
        counts
    };
    let larger = before.len().max(after.len()) as u64;
    if after.is_empty() || larger == 0 {
        return 0;
    }
    let found = chunks(after);
    let copied: u64 = chunks(before)
        .iter()
        .map(|(hash, count)| (*count).min(found.get(hash).copied().unwrap_or(0)))
        .sum();
    // git scores out of 60000 and shows the score in percent, rounding down both times.
    let score = copied * 60_000 / larger;
    (score * 100 / 60_000) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunks_of(before: &str, after: &str, context: u32) -> String {
        let mut out = String::new();
        for hunk in hunks(
            before.as_bytes(),
            after.as_bytes(),
            Algorithm::Myers,
            context,
        ) {
            patch::write_hunk(&hunk, &mut out);
        }
        out
    }

    #[test]
    fn hunk_headers_count_lines_as_git_does() {
        assert_eq!(hunks_of("", "one\n", 3), "@@ -0,0 +1 @@\n+one\n");
        assert_eq!(hunks_of("a\nb\n", "a\n", 3), "@@ -1,2 +1 @@\n a\n-b\n");
        assert_eq!(
            hunks_of("a\n", "a", 3),
            "@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n"
        );
        let before = "fn main() {\n 1\n 2\n 3\n 4\n 5\n 6\n 7\n}\n";
        let after = "fn main() {\n 1\n 2\n 3\n 4\n 5\n six\n 7\n}\n";
        assert_eq!(
            hunks_of(before, after, 1),
            "@@ -6,3 +6,3 @@ fn main() {\n  5\n- 6\n+ six\n  7\n"
        );
    }

    #[test]
    fn similarity_is_scored_as_git_scores_it() {
        assert_eq!(similarity(b"same\n", b"same\n", true), 100);
        assert_eq!(similarity(b"a\nb\nc\nd\n", b"a\nb\nc\nX\n", true), 75);
        assert_eq!(similarity(b"a\n", b"", true), 0);
    }
}
