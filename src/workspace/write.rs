//! Atomic writes beneath a root: content replaced in one step, through a temporary file renamed
//! over the target, every step relative to a directory opened beneath the root (never through a
//! symlink), keeping the file's mode and, where it may, its owner. The file tools and heal write
//! through here.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};

use super::jail::{self, Confined};
use super::{path_error, PathError};

/// Held while a file is written (and, for an edit, from reading it to writing it):
/// concurrent calls would otherwise each succeed and all but the last be lost.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static WRITES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    WRITES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Replaces the file's content (keeping its mode); returns whether it was created.
pub fn write_atomically(
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
    // SAFETY: fstatat on a directory we hold, not following a final symlink.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    let exists = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    } == 0;
    if exists && stat.st_mode & libc::S_IFMT == libc::S_IFLNK {
        return Err(path_error(format!(
            "{} is a symlink; write to the file it points to",
            shown.display()
        )));
    }
    if exists && stat.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(path_error(format!(
            "{} is not a regular file",
            shown.display()
        )));
    }
    // Replacing the file needs only the directory's permission: the file's own is asked too,
    // as writing it in place would (a read-only file stays so).
    if exists {
        writable(dir.as_raw_fd(), &c_name).map_err(|err| {
            path_error(format!(
                "{}: cannot write: {err}; it stays as it is",
                shown.display()
            ))
        })?;
    }
    // Setuid and setgid bits are not carried over: a file the sandbox left could become a
    // setuid program with whatever content is written now.
    let mode = if exists { stat.st_mode & 0o1777 } else { 0o644 };
    // Unique to this write (calls run concurrently, on the same file too) and short (the
    // target's name may already be near the 255-byte limit).
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let temp = CString::new(format!(
        ".autocoder-{}-{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ))
    .expect("no NUL");
    // SAFETY: creating a new file relative to a directory we hold.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            temp.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode,
        )
    };
    if fd < 0 {
        return Err(path_error(format!(
            "{}: cannot write: {}",
            shown.display(),
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: the kernel just gave us this descriptor.
    let mut file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let written = file
        .write_all(content)
        .and_then(|()| {
            // A file replaced keeps its owner and group where we may give them (as root, a
            // user's file stays theirs; an ordinary user may still give it its group), at best:
            // where we may not, or the owner has no id here (a user namespace), the new file is
            // ours, as git's would be.
            if exists {
                // SAFETY: fchown on our own descriptor; -1 leaves the owner as it is.
                unsafe {
                    if libc::fchown(file.as_raw_fd(), stat.st_uid, stat.st_gid) != 0 {
                        libc::fchown(file.as_raw_fd(), u32::MAX, stat.st_gid);
                    }
                }
            }
            // The umask may have narrowed the mode at creation (and a change of owner clears
            // the set-id bits, which are not kept anyway).
            // SAFETY: fchmod on our own descriptor.
            if unsafe { libc::fchmod(file.as_raw_fd(), mode) } == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        })
        .and_then(|()| file.sync_all());
    // SAFETY: rename within the directory we hold.
    let renamed = written.and_then(|()| {
        if unsafe {
            libc::renameat(
                dir.as_raw_fd(),
                temp.as_ptr(),
                dir.as_raw_fd(),
                c_name.as_ptr(),
            )
        } == 0
        {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    });
    if let Err(err) = renamed {
        // SAFETY: removing our own temporary file.
        unsafe { libc::unlinkat(dir.as_raw_fd(), temp.as_ptr(), 0) };
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
fn writable(dir: RawFd, name: &CString) -> std::io::Result<()> {
    // SAFETY: access checks on a name in a directory we hold.
    let asked = unsafe {
        libc::syscall(
            libc::SYS_faccessat2,
            dir,
            name.as_ptr(),
            libc::W_OK,
            libc::AT_EACCESS | libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if asked == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    if !matches!(err.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) {
        return Err(err);
    }
    // SAFETY: as above.
    if unsafe { libc::syscall(libc::SYS_faccessat, dir, name.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Creates the directories of `relative` one by one beneath the root, never through a symlink.
fn make_dirs(
    root_fd: i32,
    relative: &std::path::Path,
    shown: &std::path::Path,
) -> Result<File, PathError> {
    // SAFETY: duplicating the root's descriptor to walk down from it.
    let mut current =
        File::from(unsafe { OwnedFd::from_raw_fd(libc::fcntl(root_fd, libc::F_DUPFD_CLOEXEC, 0)) });
    for part in relative.components() {
        let c_part = CString::new(part.as_os_str().as_bytes())
            .map_err(|_| path_error("the path contains a NUL byte"))?;
        // SAFETY: mkdirat/openat relative to a directory we hold; O_NOFOLLOW refuses a symlink.
        unsafe {
            if libc::mkdirat(current.as_raw_fd(), c_part.as_ptr(), 0o755) != 0
                && std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
            {
                return Err(path_error(format!(
                    "{}: cannot create {}: {}",
                    shown.display(),
                    part.as_os_str().to_string_lossy(),
                    std::io::Error::last_os_error()
                )));
            }
            let fd = libc::openat(
                current.as_raw_fd(),
                c_part.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            );
            if fd < 0 {
                let err = std::io::Error::last_os_error();
                let part = part.as_os_str().to_string_lossy();
                return Err(path_error(match err.raw_os_error() {
                    Some(libc::ENOTDIR | libc::ELOOP) => format!(
                        "{}: {part} is not a directory inside the root",
                        shown.display()
                    ),
                    _ => format!("{}: cannot open {part}: {err}", shown.display()),
                }));
            }
            current = File::from(OwnedFd::from_raw_fd(fd));
        }
    }
    Ok(current)
}
