//! Walking a directory inside a root, for `list_files` and `search_text`, in a way the commands
//! running in the sandbox at the same time cannot lead outside it: every directory is opened
//! beneath its parent's descriptor, one name at a time, with no symbolic link followed, and read
//! through that descriptor. (A walk by path name, as the `ignore` crate does, follows a directory
//! swapped for a link between the check and the read.) Ignore files (`.gitignore`, `.ignore`,
//! `.git/info/exclude`) are read the same way and only when they are regular files, cut at
//! 1 MiB: a FIFO or a link to `/dev/zero` in their place must not hang the server; the ones
//! above the root (up to the repository's top) and the user's global excludes are read by path.
//! `.git` itself is never entered. Entries come in name order, each directory followed by its
//! contents; a walk is bounded in depth and in the ignore patterns it holds.

use std::cell::Cell;
use std::ffi::CString;
use std::fs::File;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

use super::jail::{self, Confined};
use super::{path_error, PathError};
use crate::sys::openat2;
use nix::fcntl::ResolveFlag;

/// An ignore file read at most this far, and its patterns taken at most this many: an ignore
/// file made to be huge (80,000 patterns) costs seconds and hundreds of MB to compile.
const MAX_IGNORE_FILE: u64 = 1 << 20;
const MAX_PATTERNS: usize = 5_000;
/// An ignore pattern is at most this long.
const MAX_PATTERN_BYTES: usize = 4096;
/// And at most this many held at once in a walk (each directory's compiled rules are held while
/// its contents are walked: 60 nested files of 5,000 patterns took 2.7 GB). A directory's
/// patterns are given back when the walk leaves it.
const MAX_WALK_PATTERNS: usize = 20_000;
/// Directories deeper than this below the start are not entered (a chain of thousands would
/// hold as many descriptors).
const MAX_DEPTH: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// An entry the walk found.
#[derive(Debug)]
pub(crate) struct Found {
    /// Relative to the root.
    pub relative: PathBuf,
    pub kind: Kind,
    pub size: u64,
}

/// How a walk ended.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// Directories below the depth cap (MAX_DEPTH) were left out: the walk is not complete.
    pub capped: bool,
}

/// Walks the directory `start` (inside its root), calling `visit` for each entry no ignore file
/// excludes, until `visit` breaks. `max_depth` 1 visits the start's own entries only.
/// Directories that cannot be read (permissions) are skipped, as `find` and git do.
/// Long: one loop over a stack of open directories; each check on an entry continues the same loop.
pub(crate) fn walk(
    start: &Confined,
    max_depth: Option<usize>,
    visit: &mut dyn FnMut(&Found) -> ControlFlow<()>,
) -> Result<Walked, PathError> {
    let mut walked = Walked::default();
    let start_dir = OwnedFd::from(jail::open(start, libc::O_RDONLY | libc::O_DIRECTORY, 0)?);
    let rules = Rc::new(start_rules(start).enter(&start.display(), start_dir.as_fd()));
    // The directories being listed, outermost first: the descriptors open at once follow the
    // depth of the walk, not its width.
    let mut stack = vec![Listing::read(
        start,
        start_dir,
        start.relative.clone(),
        rules,
    )?];
    loop {
        let depth = stack.len();
        let Some(listing) = stack.last_mut() else {
            return Ok(walked);
        };
        let Some((name, meta)) = listing.entries.next() else {
            stack.pop();
            continue;
        };
        if name == ".git" {
            continue;
        }
        let path = listing.relative.join(&name);
        let file_type = meta.file_type();
        let kind = if file_type.is_symlink() {
            Kind::Symlink
        } else if file_type.is_dir() {
            Kind::Dir
        } else if file_type.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        if listing
            .rules
            .ignore(&start.root.join(&path), kind == Kind::Dir)
        {
            continue;
        }
        let found = Found {
            relative: path.clone(),
            kind,
            size: meta.len(),
        };
        if visit(&found).is_break() {
            return Ok(walked);
        }
        if kind != Kind::Dir || max_depth.is_some_and(|max| depth >= max) {
            continue;
        }
        if depth >= MAX_DEPTH {
            walked.capped = true;
            continue;
        }
        let dir = match open_beneath(listing.dir.as_fd(), Path::new(&name), libc::O_DIRECTORY) {
            Ok(dir) => dir,
            // Swapped for a link, or gone, since it was listed; or not ours to read.
            Err(err)
                if matches!(
                    err.raw_os_error(),
                    Some(
                        libc::ELOOP
                            | libc::ENOENT
                            | libc::ENOTDIR
                            | libc::EXDEV
                            | libc::EACCES
                            | libc::EPERM
                            | libc::EAGAIN
                    )
                ) =>
            {
                continue
            }
            Err(err) => {
                return Err(path_error(format!(
                    "{}: {err}",
                    start.root.join(&path).display()
                )))
            }
        };
        let rules = Rc::new(listing.rules.enter(&start.root.join(&path), dir.as_fd()));
        if let Ok(listing) = Listing::read(start, dir, path, rules) {
            stack.push(listing);
        }
    }
}

/// A directory being listed: its descriptor, the entries still to visit (in name order), and
/// the rules in force in it.
struct Listing {
    dir: OwnedFd,
    relative: PathBuf,
    entries: std::vec::IntoIter<(std::ffi::OsString, std::fs::Metadata)>,
    rules: Rc<Rules>,
}

impl Listing {
    fn read(
        start: &Confined,
        dir: OwnedFd,
        relative: PathBuf,
        rules: Rc<Rules>,
    ) -> Result<Listing, PathError> {
        let mut entries = read_entries(dir.as_raw_fd()).map_err(|err| {
            path_error(format!("{}: {err}", start.root.join(&relative).display()))
        })?;
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Listing {
            dir,
            relative,
            entries: entries.into_iter(),
            rules,
        })
    }
}

/// The ignore rules in force in a directory, as git and ripgrep weigh them: a `.ignore` pattern
/// wins over a `.gitignore` one, and within each kind the innermost directory's; then the
/// repository's `info/exclude`, then the user's global excludes.
struct Rules {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    outer: Option<Rc<Rules>>,
    excludes: Rc<Vec<Gitignore>>,
    /// Patterns the walk may still take.
    budget: Rc<Cell<usize>>,
}

impl Drop for Rules {
    fn drop(&mut self) {
        let given_back: usize = [&self.ignore, &self.gitignore]
            .into_iter()
            .flatten()
            .map(held)
            .sum();
        self.budget.set(self.budget.get() + given_back);
    }
}

impl Rules {
    /// The rules inside `dir` (open at `fd`, at `path`): these, and its own ignore files.
    fn enter(self: &Rc<Rules>, path: &Path, fd: BorrowedFd<'_>) -> Rules {
        let budget = &self.budget;
        Rules {
            ignore: patterns(path, budget, |b| {
                add_lines(b, fd, Path::new(".ignore"), budget)
            }),
            gitignore: patterns(path, budget, |b| {
                add_lines(b, fd, Path::new(".gitignore"), budget)
            }),
            outer: Some(self.clone()),
            excludes: self.excludes.clone(),
            budget: budget.clone(),
        }
    }

    fn ignore(&self, path: &Path, is_dir: bool) -> bool {
        let chain = || std::iter::successors(Some(self), |rules| rules.outer.as_deref());
        let kinds = [
            chain()
                .filter_map(|r| r.ignore.as_ref())
                .collect::<Vec<_>>(),
            chain().filter_map(|r| r.gitignore.as_ref()).collect(),
            self.excludes.iter().collect(),
        ];
        for matchers in kinds {
            for matcher in matchers {
                match matcher.matched(path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
        }
        false
    }
}

/// The rules in force where the walk starts: from the top of the git repository the root lies
/// in (its ignore files above the root, and its `info/exclude`), the user's global excludes,
/// and the directories from the root down to the start's parent.
fn start_rules(start: &Confined) -> Rc<Rules> {
    // Above the root: the user's own directories, read by path, regular files only.
    let top = start
        .root
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok());
    let budget = Rc::new(Cell::new(MAX_WALK_PATTERNS));
    let mut excludes = Vec::new();
    if let Some(top) = top {
        let exclude = if top == start.root {
            patterns(top, &budget, |b| {
                add_lines(b, start.root_fd, Path::new(".git/info/exclude"), &budget)
            })
        } else {
            patterns(top, &budget, |b| {
                add_host_lines(b, &top.join(".git/info/exclude"), &budget)
            })
        };
        excludes.extend(exclude);
    }
    let global = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".config")))
        .map(|config| config.join("git/ignore"));
    if let Some(global) = global {
        excludes.extend(patterns(top.unwrap_or(start.root), &budget, |b| {
            add_host_lines(b, &global, &budget)
        }));
    }
    let mut rules = Rc::new(Rules {
        ignore: None,
        gitignore: None,
        outer: None,
        excludes: Rc::new(excludes),
        budget: budget.clone(),
    });
    if let Some(top) = top {
        let above: Vec<&Path> = start
            .root
            .ancestors()
            .skip(1)
            .take_while(|dir| dir.starts_with(top))
            .collect();
        for dir in above.into_iter().rev() {
            rules = Rc::new(Rules {
                ignore: patterns(dir, &budget, |b| {
                    add_host_lines(b, &dir.join(".ignore"), &budget)
                }),
                gitignore: patterns(dir, &budget, |b| {
                    add_host_lines(b, &dir.join(".gitignore"), &budget)
                }),
                outer: Some(rules.clone()),
                excludes: rules.excludes.clone(),
                budget: budget.clone(),
            });
        }
    }
    // From the root down to the start's parent, beneath the root.
    let mut relative = PathBuf::new();
    for part in start.relative.iter() {
        let dir = start.beside(relative.clone());
        if let Ok(dir_file) = jail::open(&dir, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
            rules = Rc::new(rules.enter(&dir.display(), dir_file.as_fd()));
        }
        relative.push(part);
    }
    rules
}

/// A matcher rooted at `dir` from the lines `add` gives it, if it gave any; the patterns it
/// keeps are charged to the walk's `budget` (and given back when its `Rules` are dropped).
fn patterns(
    dir: &Path,
    budget: &Cell<usize>,
    add: impl FnOnce(&mut GitignoreBuilder) -> bool,
) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    if !add(&mut builder) {
        return None;
    }
    let matcher = builder.build().ok()?;
    budget.set(budget.get().saturating_sub(held(&matcher)));
    Some(matcher)
}

/// The patterns a matcher holds.
fn held(matcher: &Gitignore) -> usize {
    (matcher.num_ignores() + matcher.num_whitelists()) as usize
}

/// Adds the lines of the regular file at `path` beneath `dir`; whether there was one.
fn add_lines(
    builder: &mut GitignoreBuilder,
    dir: BorrowedFd<'_>,
    path: &Path,
    budget: &Cell<usize>,
) -> bool {
    match open_beneath(dir, path, 0) {
        Ok(fd) => add_file(builder, File::from(fd), budget),
        Err(_) => false,
    }
}

/// Adds the lines of a file of the user's own, outside the roots (still not a FIFO or device).
fn add_host_lines(builder: &mut GitignoreBuilder, path: &Path, budget: &Cell<usize>) -> bool {
    let text = super::read_regular_file(path, MAX_IGNORE_FILE);
    text.inspect(|text| add_text(builder, text, budget))
        .is_some()
}

/// Adds a file's lines, as many as the file's and the walk's budgets allow.
fn add_file(builder: &mut GitignoreBuilder, file: File, budget: &Cell<usize>) -> bool {
    let text = super::read_regular(file, MAX_IGNORE_FILE);
    text.inspect(|text| add_text(builder, text, budget))
        .is_some()
}

fn add_text(builder: &mut GitignoreBuilder, text: &str, budget: &Cell<usize>) {
    // At most as many lines as the budget has patterns left (`patterns` charges the ones the
    // matcher keeps); lines longer than any real pattern are left out (1 MiB ones took
    // gigabytes to compile).
    for line in text
        .lines()
        .filter(|line| line.len() <= MAX_PATTERN_BYTES)
        .take(MAX_PATTERNS.min(budget.get()))
    {
        let _ = builder.add_line(None, line);
    }
}

/// The names in the directory open at `dir`, with their metadata (links not followed).
fn read_entries(dir: RawFd) -> std::io::Result<Vec<(std::ffi::OsString, std::fs::Metadata)>> {
    // The directory is read through its descriptor (the magic link resolves to it, not to a
    // name), and each entry is looked at relative to it.
    Ok(std::fs::read_dir(format!("/proc/self/fd/{dir}"))?
        .flatten()
        .filter_map(|entry| Some((entry.file_name(), entry.metadata().ok()?)))
        .collect())
}

/// Opens `path` beneath `dir` with no symbolic link (nor `..` out) anywhere on the way, without
/// blocking on a FIFO.
fn open_beneath(dir: BorrowedFd<'_>, path: &Path, flags: i32) -> std::io::Result<OwnedFd> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    openat2(
        dir,
        &c_path,
        flags | libc::O_RDONLY | libc::O_NONBLOCK,
        0,
        ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS,
    )
    .map_err(std::io::Error::from_raw_os_error)
}
