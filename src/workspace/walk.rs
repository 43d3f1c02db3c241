//! Walking a directory inside a root, for `list_files` and `search_text`, in a way the commands
//! running in the sandbox at the same time cannot lead outside it: every directory is opened
//! beneath its parent's descriptor, one name at a time, with no symbolic link followed, and read
//! through that descriptor. (A walk by path name, as the `ignore` crate does, follows a directory
//! swapped for a link between the check and the read.) Ignore files (`.gitignore`, `.ignore`,
//! `.git/info/exclude`) are read the same way and only when they are regular files, cut at
//! 1 MiB: a FIFO or a link to `/dev/zero` in their place must not hang the server. `.git` itself
//! is never entered. Entries come in name order, each directory before its contents.

use std::ffi::CString;
use std::fs::File;
use std::io::Read;
use std::ops::ControlFlow;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

use super::jail::{self, tool_error, Confined, ToolError};
use crate::sandbox::native::sys::{openat2, RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS};

/// An ignore file read at most this far.
const MAX_IGNORE_FILE: u64 = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// An entry the walk found.
#[derive(Debug)]
pub struct Found {
    /// Relative to the root.
    pub relative: PathBuf,
    pub kind: Kind,
    pub size: u64,
}

/// Walks the directory `start` (inside its root), calling `visit` for each entry no ignore file
/// excludes, until `visit` breaks. `max_depth` 1 visits the start's own entries only.
pub fn walk(
    start: &Confined,
    max_depth: Option<usize>,
    visit: &mut dyn FnMut(&Found) -> ControlFlow<()>,
) -> Result<(), ToolError> {
    let start_dir = jail::open(start, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    let mut ignores = ancestor_ignores(start);
    ignores.extend(ignore_file(
        start.root,
        &start.relative,
        start_dir.as_raw_fd(),
    ));
    // Depth-first: (directory, its path relative to the root, its depth, ignores in force).
    let mut pending = vec![(OwnedFd::from(start_dir), start.relative.clone(), 0, ignores)];
    while let Some((dir, relative, depth, ignores)) = pending.pop() {
        let mut entries = read_entries(dir.as_raw_fd()).map_err(|err| {
            tool_error(format!("{}: {err}", start.root.join(&relative).display()))
        })?;
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut below = Vec::new();
        for (name, meta) in entries {
            if name == ".git" {
                continue;
            }
            let path = relative.join(&name);
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
            if is_ignored(&ignores, &start.root.join(&path), kind == Kind::Dir) {
                continue;
            }
            let found = Found {
                relative: path.clone(),
                kind,
                size: meta.len(),
            };
            if visit(&found).is_break() {
                return Ok(());
            }
            if kind == Kind::Dir && max_depth.is_none_or(|max| depth + 1 < max) {
                let Ok(child) = open_beneath(dir.as_raw_fd(), Path::new(&name), libc::O_DIRECTORY)
                else {
                    continue; // swapped for a link, or gone
                };
                let mut inner = ignores.clone();
                inner.extend(ignore_file(start.root, &path, child.as_raw_fd()));
                below.push((child, path, depth + 1, inner));
            }
        }
        // Reversed, so that the stack yields them in name order.
        pending.extend(below.into_iter().rev());
    }
    Ok(())
}

/// Whether the innermost ignore file with an opinion on `path` ignores it.
fn is_ignored(ignores: &[Gitignore], path: &Path, is_dir: bool) -> bool {
    for ignore in ignores.iter().rev() {
        match ignore.matched(path, is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    false
}

/// The ignore files that apply from above the start: `.git/info/exclude` at the root and those
/// of the root and the directories down to the start's parent.
fn ancestor_ignores(start: &Confined) -> Vec<Gitignore> {
    let mut ignores = Vec::new();
    let mut builder = GitignoreBuilder::new(start.root);
    if add_lines(&mut builder, start.root_fd, Path::new(".git/info/exclude")) {
        ignores.extend(builder.build().ok());
    }
    let mut relative = PathBuf::new();
    for part in start.relative.iter() {
        let dir = Confined {
            root: start.root,
            root_fd: start.root_fd,
            relative: relative.clone(),
        };
        if let Ok(dir_file) = jail::open(&dir, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
            ignores.extend(ignore_file(start.root, &relative, dir_file.as_raw_fd()));
        }
        relative.push(part);
    }
    ignores
}

/// The patterns of the directory's `.gitignore` and `.ignore` (which wins), if it has any.
fn ignore_file(root: &Path, relative: &Path, dir: RawFd) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(root.join(relative));
    let gitignore = add_lines(&mut builder, dir, Path::new(".gitignore"));
    let ignore = add_lines(&mut builder, dir, Path::new(".ignore"));
    (gitignore || ignore)
        .then(|| builder.build().ok())
        .flatten()
}

/// Adds the lines of the regular file at `path` beneath `dir`; whether there was one.
fn add_lines(builder: &mut GitignoreBuilder, dir: RawFd, path: &Path) -> bool {
    let Ok(fd) = open_beneath(dir, path, 0) else {
        return false;
    };
    let file = File::from(fd);
    if !file.metadata().is_ok_and(|meta| meta.is_file()) {
        return false;
    }
    let mut bytes = Vec::new();
    if file.take(MAX_IGNORE_FILE).read_to_end(&mut bytes).is_err() {
        return false;
    }
    for line in String::from_utf8_lossy(&bytes).lines() {
        let _ = builder.add_line(None, line);
    }
    true
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
fn open_beneath(dir: RawFd, path: &Path, flags: i32) -> std::io::Result<OwnedFd> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    openat2(
        dir,
        &c_path,
        flags | libc::O_RDONLY | libc::O_NONBLOCK,
        0,
        RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
    )
    .map_err(std::io::Error::from_raw_os_error)
}
