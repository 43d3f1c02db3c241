//! The workspace as the tools and heal see it: paths confined to its roots (`jail`), walks of its
//! directories that stay inside them (`walk`), atomic writes (`write`), and reading the small
//! files sandboxed code may have put in place (configuration, ignore files) without following
//! links or waiting on FIFOs.

pub mod jail;
pub mod walk;
pub mod write;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What is wrong with a path, or with what was done at it, worded for whoever gave it (a user
/// or a model): `src/x.py: no such file or directory`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError(pub String);

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub fn path_error(message: impl Into<String>) -> PathError {
    PathError(message.into())
}

/// What a directory (canonical) is, when it holds too much to hand to a command or a model: `/`,
/// the machine's own directories (the system's files anywhere in them), or the home directory
/// or one holding it. Projects under `/usr/src`, `/opt`, `/srv` or `/var/lib` stay allowed.
pub fn too_wide(dir: &Path) -> Option<&'static str> {
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
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .and_then(|home| PathBuf::from(home).canonicalize().ok());
    if SYSTEM_TREES.iter().any(|tree| dir.starts_with(tree))
        || HOLDERS.iter().any(|holder| dir == Path::new(holder))
    {
        Some("the machine's own")
    } else if home.is_some_and(|home| home.starts_with(dir)) {
        Some("the home directory, or one that holds it")
    } else {
        None
    }
}

/// The text of the file at `path` when it is a regular file (not a link, which could lead to a
/// host file, nor a FIFO or device that never ends), cut at `max` bytes: for files sandboxed
/// code may have put in place.
pub fn read_regular_file(path: &Path, max: u64) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    read_regular(file, max)
}

/// The text of an open file when it is a regular one, cut at `max` bytes.
pub fn read_regular(file: File, max: u64) -> Option<String> {
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

    #[test]
    fn directories_too_wide_to_hand_over() {
        for wide in [
            "/",
            "/etc",
            "/etc/ssh",
            "/usr/lib/x",
            "/lib/x",
            "/proc/1",
            "/sys/kernel",
            "/dev/shm",
            "/run/secrets",
            "/usr",
            "/var",
            "/var/lib",
            "/opt",
            "/home",
            "/usr/local/bin/x",
        ] {
            assert!(too_wide(Path::new(wide)).is_some(), "{wide}");
        }
        for project in [
            "/usr/src/app",
            "/usr/library",
            "/var/lib/jenkins/workspace/x",
            "/opt/app",
            "/srv/site",
            "/home/someone/project",
            "/tmp/ws",
            "/app",
            "/etcetera",
        ] {
            assert_eq!(too_wide(Path::new(project)), None, "{project}");
        }
    }
}
