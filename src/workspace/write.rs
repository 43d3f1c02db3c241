//! Atomic writes beneath a root: content replaced in one step, through a temporary file renamed
//! over the target, every step relative to a directory opened beneath the root (never through a
//! symlink), keeping the file's mode and, where it may, its owner. The file tools and heal write
//! through here.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{FileStat, Mode, SFlag};
use nix::unistd::{AccessFlags, Gid, Uid};

use super::jail::{self, Confined};
use super::{path_error, PathError};

/// Held while a file is written (and, for an edit, from reading it to writing it):
/// concurrent calls would otherwise each succeed and all but the last be lost.
pub(crate) fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static WRITES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    WRITES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Replaces the file's content (keeping its mode); returns whether it was created.
/// Long: checks and syscalls on one directory fd, in this order on purpose (see each comment).
pub(crate) fn write_atomically(
    confined: &Confined,
    content: &[u8],
    create_dirs: bool,
) -> Result<bool, PathError> {
    let shown = confined.display();
    let name = confined
        .relative
        .file_name()
        .ok_or_else(|| path_error(format!("{}: not a file path", shown.display())))?;
    let parent_relative = confined
        .relative
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let parent = confined.beside(parent_relative.clone());
    let dir = match jail::open(&parent, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
        Ok(dir) => dir,
        Err(_) if create_dirs => make_dirs(confined.root_fd, &parent_relative, &shown)?,
        Err(err) => return Err(path_error(format!("{err} (set create_dirs to create it)"))),
    };
    let c_name =
        CString::new(name.as_bytes()).map_err(|_| path_error("the path contains a NUL byte"))?;
    let existing: Option<FileStat> =
        nix::sys::stat::fstatat(&dir, c_name.as_c_str(), AtFlags::AT_SYMLINK_NOFOLLOW).ok();
    let exists = existing.is_some();
    let kind = existing.as_ref().map(crate::sys::file_kind);
    if kind == Some(SFlag::S_IFLNK) {
        return Err(path_error(format!(
            "{} is a symlink; write to the file it points to",
            shown.display()
        )));
    }
    if kind.is_some_and(|kind| kind != SFlag::S_IFREG) {
        return Err(path_error(format!(
            "{} is not a regular file",
            shown.display()
        )));
    }
    // Replacing the file needs only the directory's permission: the file's own is asked too,
    // as writing it in place would (a read-only file stays so).
    if exists {
        writable(dir.as_fd(), &c_name).map_err(|err| {
            path_error(format!(
                "{}: cannot write: {err}; it stays as it is",
                shown.display()
            ))
        })?;
    }
    // Setuid and setgid bits are not carried over: a file the sandbox left could become a
    // setuid program with whatever content is written now.
    let mode = existing
        .as_ref()
        .map_or(0o644, |stat| stat.st_mode & 0o1777);
    // Unique to this write (calls run concurrently, on the same file too) and short (the
    // target's name may already be near the 255-byte limit).
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let temp = CString::new(format!(
        ".autocoder-{}-{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ))
    .expect("no NUL");
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW;
    let created = nix::fcntl::openat(
        &dir,
        temp.as_c_str(),
        flags | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(mode),
    );
    let mut file = File::from(created.map_err(|errno| {
        path_error(format!(
            "{}: cannot write: {}",
            shown.display(),
            std::io::Error::from(errno)
        ))
    })?);
    let written = file
        .write_all(content)
        .and_then(|()| {
            // A file replaced keeps its owner and group where we may give them (as root, a
            // user's file stays theirs; an ordinary user may still give it its group), at best:
            // where we may not, or the owner has no id here (a user namespace), the new file is
            // ours, as git's would be.
            if let Some(stat) = &existing {
                let (uid, gid) = (Uid::from_raw(stat.st_uid), Gid::from_raw(stat.st_gid));
                if nix::unistd::fchown(&file, Some(uid), Some(gid)).is_err() {
                    let _ = nix::unistd::fchown(&file, None, Some(gid));
                }
            }
            // The umask may have narrowed the mode at creation (and a change of owner clears
            // the set-id bits, which are not kept anyway).
            nix::sys::stat::fchmod(&file, Mode::from_bits_truncate(mode)).map_err(Into::into)
        })
        .and_then(|()| file.sync_all());
    let renamed = written.and_then(|()| {
        nix::fcntl::renameat(&dir, temp.as_c_str(), &dir, c_name.as_c_str()).map_err(Into::into)
    });
    if let Err(err) = renamed {
        let _ = nix::unistd::unlinkat(
            &dir,
            temp.as_c_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
        return Err(path_error(format!(
            "{}: cannot write: {err}",
            shown.display()
        )));
    }
    Ok(!exists)
}

/// Whether we may write the file `name` in `dir` (known not to be a symlink), by its own
/// permissions. faccessat2 (Linux 5.8) asks with our effective ids; where it is missing or a
/// container's seccomp profile refuses it, faccessat asks with our real ids, the same unless
/// we run set-id.
fn writable(dir: BorrowedFd, name: &CStr) -> std::io::Result<()> {
    let flags = AtFlags::AT_EACCESS | AtFlags::AT_SYMLINK_NOFOLLOW;
    match nix::unistd::faccessat(dir, name, AccessFlags::W_OK, flags) {
        // The system call itself: libc's faccessat tries faccessat2 first whatever the flags.
        // SAFETY: an access check of a NUL-terminated name in a directory we hold.
        Err(Errno::ENOSYS | Errno::EPERM) => Errno::result(unsafe {
            libc::syscall(
                libc::SYS_faccessat,
                dir.as_raw_fd(),
                name.as_ptr(),
                libc::W_OK,
            )
        })
        .map(drop),
        asked => asked,
    }
    .map_err(Into::into)
}

/// Creates the directories of `relative` one by one beneath the root, never through a symlink.
fn make_dirs(
    root_fd: BorrowedFd,
    relative: &std::path::Path,
    shown: &std::path::Path,
) -> Result<File, PathError> {
    let mut current = File::from(
        nix::unistd::dup(root_fd)
            .map_err(|errno| path_error(format!("{}: {errno}", shown.display())))?,
    );
    for part in relative.components() {
        let c_part = CString::new(part.as_os_str().as_bytes())
            .map_err(|_| path_error("the path contains a NUL byte"))?;
        let part = part.as_os_str().to_string_lossy();
        match nix::sys::stat::mkdirat(&current, c_part.as_c_str(), Mode::from_bits_truncate(0o755))
        {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(errno) => {
                return Err(path_error(format!(
                    "{}: cannot create {part}: {}",
                    shown.display(),
                    std::io::Error::from(errno)
                )))
            }
        }
        // O_NOFOLLOW refuses a symlink.
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let opened = nix::fcntl::openat(&current, c_part.as_c_str(), flags, Mode::empty());
        current = File::from(opened.map_err(|errno| {
            path_error(match errno {
                Errno::ENOTDIR | Errno::ELOOP => format!(
                    "{}: {part} is not a directory inside the root",
                    shown.display()
                ),
                _ => format!(
                    "{}: cannot open {part}: {}",
                    shown.display(),
                    std::io::Error::from(errno)
                ),
            })
        })?);
    }
    Ok(current)
}

/// Opens the file at `path` to write a result (a patch, a trace), made mode 600 where missing:
/// never through a symbolic link in `within` (the workspace, which sandboxed code writes), nor
/// at one. A path inside `within` is walked from it a directory at a time, each opened without
/// following a link (missing ones made, mode 700); elsewhere, the directory the user named is
/// taken as named. `fresh`: only a file that did not exist; otherwise one is emptied. A FIFO or
/// other file that is not regular is refused, never waited on.
pub(crate) fn create_output(path: &Path, within: &Path, fresh: bool) -> std::io::Result<File> {
    let absolute = lexically_absolute(path)?;
    let name = absolute
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file's path"))?;
    let parent = absolute.parent().unwrap_or(Path::new("/"));
    let open_dir = |dir: &Path| -> std::io::Result<File> {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(dir)
    };
    let dir = match parent.strip_prefix(within) {
        Ok(below) => {
            let root = open_dir(within)?;
            make_dirs(root.as_fd(), below, &absolute).map_err(|err| match err.0.contains("not a directory inside") {
                true => std::io::Error::other(format!(
                    "{} goes through a symbolic link (or a file) in {}, where sandboxed code writes; remove it or give another path",
                    absolute.display(),
                    within.display()
                )),
                false => std::io::Error::other(err.0),
            })?
        }
        Err(_) => {
            std::fs::create_dir_all(parent)?;
            open_dir(parent)?
        }
    };
    let c_name = CString::new(name.as_bytes())
        .map_err(|_| std::io::Error::other("the path contains a NUL byte"))?;
    let mut flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    flags |= match fresh {
        true => OFlag::O_EXCL,
        false => OFlag::O_TRUNC,
    };
    let file = nix::fcntl::openat(
        &dir,
        c_name.as_c_str(),
        flags,
        Mode::from_bits_truncate(0o600),
    )
    .map(File::from)
    .map_err(|errno| match errno {
        Errno::ELOOP => std::io::Error::other(format!(
            "{} is a symbolic link; remove it or give another path",
            absolute.display()
        )),
        Errno::ENXIO => {
            std::io::Error::other(format!("{} is not a regular file", absolute.display()))
        }
        other => other.into(),
    })?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            absolute.display()
        )));
    }
    Ok(file)
}

/// `path` from the current directory, with `.` and `..` taken out by name (not through links).
fn lexically_absolute(path: &Path) -> std::io::Result<PathBuf> {
    let mut resolved = PathBuf::new();
    for component in std::path::absolute(path)?.components() {
        match component {
            std::path::Component::ParentDir => {
                resolved.pop();
            }
            std::path::Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    Ok(resolved)
}
