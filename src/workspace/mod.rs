//! The workspace as the tools and heal see it: paths confined to its roots (`jail`), walks of its
//! directories that stay inside them (`walk`), atomic writes (`write`), and reading the small
//! files sandboxed code may have put in place (configuration, ignore files) without following
//! links or waiting on FIFOs.

pub mod jail;
pub mod walk;
pub mod write;

use std::fs::File;
use std::io::Read;
use std::path::Path;

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
