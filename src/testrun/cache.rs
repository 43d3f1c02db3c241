//! Toolchain caches that outlive a sandboxed run: one directory per workspace and toolchain,
//! under the user's cache directory (`$XDG_CACHE_HOME/autocoder/run-tests/NAME-HASH/TOOL`).
//! The sandbox's home is thrown away after each run, and with it Go's build cache; a run that
//! heal repeats a hundred times would compile everything each time. Per workspace, so one
//! project's poisoned cache cannot change another's results; in a place no host tool reads.
//!
//! Only caches keyed by content are kept: Go's build and module caches, jest's transform cache.
//! Not Python's bytecode: it is checked against the source's mtime in seconds and its size, so
//! an edit of the same size within the second (what heal makes) would run the old code.

use std::path::{Path, PathBuf};

use crate::run_document::Framework;

/// The cache directory for `framework` runs in the workspace `root`, made if need be; `None`
/// when the framework keeps no cache worth keeping, or there is no cache directory to use
/// (said once, the run goes on without).
pub fn dir_for(framework: Framework, root: &Path) -> Option<PathBuf> {
    let tool = match framework {
        Framework::Go => "go",
        Framework::Jest => "jest",
        _ => return None,
    };
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|home| home.is_absolute())
                .map(|home| home.join(".cache"))
        })?;
    let name = root
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = base
        .join("autocoder/run-tests")
        .join(format!(
            "{name}-{:016x}",
            fnv1a(root.as_os_str().as_encoded_bytes())
        ))
        .join(tool);
    match make_private_dir(&dir) {
        Ok(dir) => Some(dir),
        Err(err) => {
            crate::log::warn(
                "run-tests",
                &format!(
                    "cannot keep {tool}'s cache in {}: {err}; this run starts without one",
                    dir.display()
                ),
            );
            None
        }
    }
}

/// The runner's flags that send its cache to `dir`, to put after the runner's name.
pub fn args(framework: Framework, dir: &Path) -> Vec<String> {
    match framework {
        Framework::Jest => vec!["--cacheDirectory".into(), dir.display().to_string()],
        _ => Vec::new(),
    }
}

/// The variables that send the toolchain's cache to `dir`.
pub fn env(framework: Framework, dir: &Path) -> Vec<String> {
    match framework {
        Framework::Go => vec![
            format!("GOCACHE={}", dir.join("build").display()),
            format!("GOMODCACHE={}", dir.join("mod").display()),
        ],
        _ => Vec::new(),
    }
}

/// `dir` and its missing parents, readable by the user alone; `dir` as the sandbox will mount
/// it (no link on the way).
fn make_private_dir(dir: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let dir = dir.canonicalize()?;
    // A directory someone else made there is not ours to hand to the sandbox.
    // SAFETY: geteuid has no preconditions.
    if std::fs::metadata(&dir)?.uid() != unsafe { libc::geteuid() } {
        return Err(std::io::Error::other("it belongs to another user"));
    }
    Ok(dir)
}

/// FNV-1a, 64 bits: a name for the workspace's path that stays the same across builds.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
