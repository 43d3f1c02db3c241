//! The workspace as the tools and heal see it: paths confined to its roots (`jail`), walks of its
//! directories that stay inside them (`walk`), atomic writes (`write`), the files that run
//! outside the sandbox (`runs_outside`), and reading the small
//! files sandboxed code may have put in place (configuration, ignore files) without following
//! links or waiting on FIFOs.

pub(crate) mod jail;
pub(crate) mod runs_outside;
pub(crate) mod walk;
pub(crate) mod write;

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// What is wrong with a path, or with what was done at it, worded for whoever gave it (a user
/// or a model): `src/x.py: no such file or directory`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathError(pub String);

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub(crate) fn path_error(message: impl Into<String>) -> PathError {
    PathError(message.into())
}

/// The machine's own directories: nothing in them may be handed over.
const SYSTEM_TREES: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/proc",
    "/run",
    "/sbin",
    "/sys",
    "/usr/bin",
    "/usr/include",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/sbin",
    "/usr/share",
    "/usr/local/bin",
    "/usr/local/lib",
    "/usr/local/sbin",
    "/var/lib/apt",
    "/var/lib/dpkg",
];

/// Directories that hold the machine's own or everyone's: they may not be handed over
/// themselves, but projects inside them may. With `SYSTEM_TREES` they hold every directory
/// above one of them, so a directory holding a forbidden one is itself one of these.
const HOLDERS: &[&str] = &[
    "/",
    "/home",
    "/media",
    "/mnt",
    "/opt",
    "/root",
    "/srv",
    "/usr",
    "/usr/local",
    "/var",
    "/var/cache",
    "/var/lib",
    "/var/log",
];

/// What the file or directory open at `target` is, when it holds too much to hand to a command
/// or a model: `/`, the machine's own directories (the system's files anywhere in them), or the
/// home directory or one holding it. Projects under `/usr/src`, `/opt`, `/srv` or `/var/lib`
/// stay allowed. Judged by the filesystem objects (device and inode), not names: a bind mount
/// of `/` (or of the home) elsewhere is `/` (or the home), and is refused.
pub(crate) fn too_wide(target: BorrowedFd) -> Option<&'static str> {
    let meta = metadata(target)?;
    let target_id = (meta.dev(), meta.ino());
    let is = |path: &str| open_dir(Path::new(path)).and_then(|dir| identity(dir.as_fd()));
    // What `target` lies in: itself and each directory above it (a file's from its parent).
    let start = if meta.is_dir() {
        target.try_clone_to_owned().ok()
    } else {
        let own = std::fs::read_link(format!("/proc/self/fd/{}", target.as_raw_fd())).ok()?;
        open_dir(own.parent()?)
    };
    let above = start.map(ancestry).unwrap_or_default();
    let system = SYSTEM_TREES.iter().filter_map(|tree| is(tree));
    if system.clone().any(|tree| above.contains(&tree))
        || HOLDERS
            .iter()
            .filter_map(|dir| is(dir))
            .any(|dir| dir == target_id)
    {
        return Some("the machine's own");
    }
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .and_then(|home| open_dir(Path::new(&home)));
    if home.is_some_and(|home| ancestry(home).contains(&target_id)) {
        return Some("the home directory, or one that holds it");
    }
    None
}

fn metadata(fd: BorrowedFd) -> Option<std::fs::Metadata> {
    File::from(fd.try_clone_to_owned().ok()?).metadata().ok()
}

/// The device and inode of what `fd` is open at.
fn identity(fd: BorrowedFd) -> Option<(u64, u64)> {
    metadata(fd).map(|meta| (meta.dev(), meta.ino()))
}

/// The directory at `path`, as an `O_PATH` descriptor.
fn open_dir(path: &Path) -> Option<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
        .open(path)
        .ok()
        .map(OwnedFd::from)
}

/// The identities of `dir` and every directory above it, by `..` up to the root.
fn ancestry(dir: OwnedFd) -> Vec<(u64, u64)> {
    let mut seen = Vec::new();
    let mut current = dir;
    while let Some(id) = identity(current.as_fd()) {
        if seen.last() == Some(&id) || seen.len() > 256 {
            break;
        }
        seen.push(id);
        use nix::fcntl::OFlag;
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        match nix::fcntl::openat(&current, c"..", flags, nix::sys::stat::Mode::empty()) {
            Ok(parent) => current = parent,
            Err(_) => break,
        }
    }
    seen
}

/// The text of the file at `path` when it is a regular file (not a link, which could lead to a
/// host file, nor a FIFO or device that never ends), cut at `max` bytes: for files sandboxed
/// code may have put in place.
pub(crate) fn read_regular_file(path: &Path, max: u64) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    read_regular(file, max)
}

/// The text of an open file when it is a regular one, cut at `max` bytes.
pub(crate) fn read_regular(file: File, max: u64) -> Option<String> {
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(path: &str) -> Option<&'static str> {
        let dir = open_dir(Path::new(path)).unwrap_or_else(|| panic!("{path} is not here"));
        too_wide(dir.as_fd())
    }

    #[test]
    fn directories_too_wide_to_hand_over() {
        for wide in [
            "/",
            "/etc",
            "/usr",
            "/usr/lib",
            "/proc/1",
            "/sys/kernel",
            "/dev",
            "/var",
            "/var/lib",
            "/opt",
        ] {
            assert!(judged(wide).is_some(), "{wide}");
        }
        let project = std::env::temp_dir().join(format!("autocoder-wide-{}", std::process::id()));
        std::fs::create_dir_all(project.join("src")).unwrap();
        assert_eq!(judged(project.to_str().unwrap()), None);
        assert_eq!(judged(project.join("src").to_str().unwrap()), None);
        assert_eq!(judged("/usr/src"), None);
        std::fs::remove_dir_all(&project).unwrap();
    }

    #[test]
    fn forbidden_directories_hold_only_forbidden_ones() {
        for dir in SYSTEM_TREES.iter().chain(HOLDERS) {
            for above in Path::new(dir).ancestors().skip(1) {
                let above = above.to_str().unwrap();
                assert!(
                    HOLDERS.contains(&above),
                    "{above}, above {dir}, is not a holder"
                );
            }
        }
    }
}
