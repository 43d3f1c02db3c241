//! `autocoder sandbox --result FILE`: the file the result document goes to, opened before the
//! command runs (a path that cannot be written fails the call before the command has had its
//! effects) and, when it lies where the command could write, checked after: the result goes
//! through the descriptor opened before (never through a link put there since), over anything
//! written to it meanwhile; where it would go without --result if the file was replaced.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::Failure;
use crate::sandbox::policy::{resolve_without_writable_links, SandboxPolicy};

/// The --result file, and the path to check it is still there, when the sandbox could have
/// replaced it.
pub(crate) struct ResultFile {
    file: File,
    watched: Option<PathBuf>,
}

impl ResultFile {
    /// The --result file, opened (not emptied yet) before the command runs, and, when it lies
    /// where the sandbox can write, its path (the command could replace the file meanwhile).
    /// There the file must be a regular one reached through no link (one a previous run put
    /// there would have root create, write or empty any file, and a FIFO would hang us); links
    /// elsewhere are followed (`/dev/stdout` is one).
    pub(crate) fn open(path: &Path, policy: &SandboxPolicy) -> Result<ResultFile, Failure> {
        use std::os::unix::fs::OpenOptionsExt;
        let refused = |err: String| {
            Failure::usage(format!("cannot write --result {}: {err}", path.display()))
                .with_hint("give a plain file in an existing, writable directory")
        };
        let absolute = std::path::absolute(path).map_err(|err| refused(err.to_string()))?;
        let writable: Vec<_> = std::iter::once(policy.workspace.clone())
            .chain(policy.read_write.iter().cloned())
            .collect();
        let resolved = resolve_without_writable_links(&absolute, &writable).map_err(|link| {
            refused(format!(
                "it goes through {}, a link where the sandbox can write",
                link.display()
            ))
        })?;
        if !writable.iter().any(|dir| resolved.starts_with(dir)) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&absolute)
                .map_err(|err| refused(err.to_string()))?;
            return Ok(ResultFile {
                file,
                watched: None,
            });
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&resolved)
            .map_err(|err| match err.raw_os_error() {
                Some(libc::ELOOP) => {
                    refused("it is a link, in a place the sandbox can write".into())
                }
                // A FIFO without a reader.
                Some(libc::ENXIO) => {
                    refused("not a regular file, in a place the sandbox can write".into())
                }
                _ => refused(err.to_string()),
            })?;
        if !file.metadata().is_ok_and(|meta| meta.is_file()) {
            return Err(refused(
                "not a regular file, in a place the sandbox can write".into(),
            ));
        }
        Ok(ResultFile {
            file,
            watched: Some(resolved),
        })
    }

    /// The file to write the result to, emptied; none when the command replaced it (the result
    /// then goes where it would without --result, said).
    pub(crate) fn into_unchanged(self) -> Option<File> {
        let ResultFile { file, watched } = self;
        let Some(watched) = watched else {
            // The user's own file (or a device, or /dev/stdout): emptied if it is a file.
            if file.metadata().is_ok_and(|meta| meta.is_file()) {
                let _ = file.set_len(0);
            }
            return Some(file);
        };
        let same = file
            .metadata()
            .ok()
            .zip(std::fs::symlink_metadata(&watched).ok())
            .is_some_and(|(ours, now)| (ours.dev(), ours.ino()) == (now.dev(), now.ino()));
        if !same {
            crate::log::warn(
                "sandbox",
                &format!(
                    "--result {} was replaced while the command ran; the result goes where it \
                     would without --result",
                    watched.display()
                ),
            );
        }
        // What the command wrote there is replaced by the result alone.
        (same && file.set_len(0).is_ok()).then_some(file)
    }
}
