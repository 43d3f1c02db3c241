//! Toolchain caches that outlive a sandboxed run: one directory per workspace and toolchain,
//! under the user's cache directory (`$XDG_CACHE_HOME/autocoder/run-tests/NAME-HASH/TOOL`).
//! The sandbox's home is thrown away after each run, and with it Go's build cache; a run that
//! heal repeats a hundred times would compile everything each time. Per workspace, so one
//! project's poisoned cache cannot change another's results; in a place no host tool reads.
//!
//! Only caches keyed by content are kept: Go's build and module caches, jest's cache (its
//! transforms, by content).
//! Not Python's bytecode: it is checked against the source's mtime in seconds and its size, so
//! an edit of the same size within the second (what heal makes) would run the old code.

use std::path::{Path, PathBuf};

use crate::run_document::Framework;

/// The cache directory for `framework` runs in the workspace `root` (with the network on or
/// off: Go replays a test's result from its cache, and one that passed with the network must
/// run again without), made if need be; `None` when the framework keeps no cache worth
/// keeping, or when none can be kept: no cache directory is set (no `XDG_CACHE_HOME`, no
/// `HOME`), or the one set is not this user's to use (said; the run goes on without).
pub fn dir_for(framework: Framework, root: &Path, network: bool) -> Option<PathBuf> {
    let tool = match (framework, network) {
        (Framework::Go, false) => "go",
        (Framework::Go, true) => "go-network",
        (Framework::Jest, _) => "jest",
        _ => return None,
    };
    let name = root
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let below = Path::new("autocoder/run-tests")
        .join(format!(
            "{name}-{:016x}",
            crate::text::fnv1a(root.as_os_str().as_encoded_bytes().iter().copied())
        ))
        .join(tool);
    match private_dir(&below) {
        Ok(dir) => Some(dir),
        Err(err) => {
            crate::log::warn(
                "run-tests",
                &format!("cannot keep {tool}'s cache: {err}; this run starts without one"),
            );
            None
        }
    }
}

/// `below` the user's cache directory (`$XDG_CACHE_HOME`, else `~/.cache`), made where missing,
/// readable by this user alone; the path the sandbox mounts.
pub fn private_dir(below: &Path) -> std::io::Result<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|home| home.is_absolute())
                .map(|home| home.join(".cache"))
        })
        .ok_or_else(|| std::io::Error::other("no cache directory: set HOME or XDG_CACHE_HOME"))?;
    make_private_dir(&base, below).map_err(|err| {
        std::io::Error::new(err.kind(), format!("{}: {err}", base.join(below).display()))
    })
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

/// `base/below`, made where missing, readable by this user alone, and the path the sandbox
/// mounts. `base` and each directory below it must be a directory of this user's, not a link:
/// one another user owns or could swap (root running with a user's `HOME`) would let the
/// sandboxed tests write where that user chose, and leave that user files it cannot remove.
fn make_private_dir(base: &Path, below: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let euid = nix::unistd::geteuid().as_raw();
    let ours = |dir: &Path| -> std::io::Result<()> {
        let meta = std::fs::symlink_metadata(dir)?;
        if meta.file_type().is_symlink() {
            return Err(std::io::Error::other(format!(
                "{} is a link",
                dir.display()
            )));
        }
        if !meta.is_dir() {
            return Err(std::io::Error::other(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        if meta.uid() != euid {
            return Err(std::io::Error::other(format!(
                "{} belongs to uid {}, not to this user (uid {euid})",
                dir.display(),
                meta.uid()
            )));
        }
        Ok(())
    };
    let make = |dir: &Path| match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => Err(err),
        _ => ours(dir),
    };
    if std::fs::symlink_metadata(base).is_err() {
        // A cache directory made in someone else's directory would be theirs to swap.
        ours(base.parent().unwrap_or(base))?;
    }
    make(base)?;
    let mut dir = base.to_path_buf();
    for part in below.components() {
        dir.push(part);
        make(&dir)?;
    }
    // The sandbox opens the path again, refusing links on the way: the base's own are resolved.
    Ok(base.canonicalize()?.join(below))
}
