//! Toolchain caches that outlive a sandboxed run: one directory per workspace and toolchain,
//! under the user's cache directory (`$XDG_CACHE_HOME/autocoder/run-tests/NAME-HASH/TOOL`),
//! keyed by the user's workspace (heal's copies use their workspace's), never read by the
//! host's own tools. The sandbox's home is thrown away after each run, and with it Go's build
//! cache; a run that heal repeats a hundred times would compile everything each time.
//!
//! A result must never depend on what an earlier sandboxed run left in a cache:
//!
//! - Go's build and module caches and jest's cache are written by the runs, and keyed by
//!   content: an entry is found only for the very inputs (every source file's hash, the
//!   compiler, the flags) it was made from, so what a run forged there is never taken for code
//!   changed since.
//! - Python's bytecode (`PYTHONPYCACHEPREFIX`) is checked against its source's modification
//!   time and size only, or (hash-based, "unchecked") not at all: a run could leave bytecode
//!   that a later run would take for the user's fixed code. So the cache is read-only to the
//!   runs: autocoder alone writes it, with links to the bytecode the interpreter's own
//!   directories hold (its standard library, its packages), which the sandbox can only read
//!   (seeded from what the interpreter says its search path is, taken only inside those
//!   directories, never the home nor one holding it). The project's own modules are compiled
//!   afresh by every run, and in heal's copies nothing is cached: bytecode is read where it
//!   lies (the copy keeps each file's time), never written.
//! - cargo's home, with the network on, would hold crates whose sources a build script could
//!   change for every later run: a run with the network gets a cargo home of its own, gone
//!   when it ends (without the network the host's registry is read, read-only).
//!
//! The whole cache directory is bounded (`AUTOCODER_CACHE_MAX`, 2 GiB by default): checked at
//! most every ten minutes, the workspaces least recently run are removed until it fits, never
//! one a run is using. `rm -rf ~/.cache/autocoder` clears it.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::run_document::Framework;

/// Where the run-tests caches live, below the user's cache directory.
const BELOW: &str = "autocoder/run-tests";

/// The cache's bound when `AUTOCODER_CACHE_MAX` does not say.
const DEFAULT_MAX: u64 = 2 << 30;

/// How often the bound is checked at most (a walk of every cache).
const TRIM_EVERY: Duration = Duration::from_secs(600);

/// A cache a run uses, held (shared) until it ends: the trim removes no workspace's caches a
/// run holds.
pub(crate) struct Cache {
    pub dir: PathBuf,
    /// Whether the runs may write it (Python's is autocoder's alone).
    pub writable: bool,
    _held: nix::fcntl::Flock<std::fs::File>,
}

/// The cache for `framework` runs in the workspace `root` (with the network on or off: Go
/// replays a test's result from its cache, and one that passed with the network must run again
/// without), made if need be; `in_copy`: the run is in heal's copy of `root`. `None` when the
/// framework keeps no cache worth keeping here, or when none can be kept: no cache directory is
/// set (no `XDG_CACHE_HOME`, no `HOME`), or the one set is not this user's to use (said; the run
/// goes on without).
pub(crate) fn dir_for(
    framework: Framework,
    root: &Path,
    in_copy: bool,
    network: bool,
) -> Option<Cache> {
    let (tool, writable) = match (framework, network) {
        (Framework::Go, false) => ("go", true),
        (Framework::Go, true) => ("go-network", true),
        (Framework::Jest, _) => ("jest", true),
        (Framework::Pytest | Framework::Unittest, _) if !in_copy => ("bytecode", false),
        _ => return None,
    };
    let name = root
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let workspace = Path::new(BELOW).join(format!(
        "{name}-{:016x}",
        crate::text::fnv1a(root.as_os_str().as_encoded_bytes().iter().copied())
    ));
    let made = private_dir(&workspace.join(tool)).and_then(|dir| {
        let workspace_dir = dir.parent().unwrap_or(&dir).to_path_buf();
        let held = hold(&workspace_dir, false)?;
        // Its last use, for the trim: the directory's own time.
        let now = nix::sys::time::TimeSpec::UTIME_NOW;
        let _ = nix::sys::stat::futimens(held.as_fd(), &now, &now);
        // A read-only mount is not id-mapped: the sandbox uid a root run gets must be let in
        // (its parents stay private to this user).
        if !writable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        }
        Ok(Cache {
            dir,
            writable,
            _held: held,
        })
    });
    match made {
        Ok(cache) => {
            trim(&cache.dir);
            Some(cache)
        }
        Err(err) => {
            crate::log::warn(
                "run-tests",
                &format!("cannot keep {tool}'s cache: {err}; this run starts without one"),
            );
            None
        }
    }
}

/// The directory `dir` (never through a link) locked: shared by the runs using it, exclusive
/// for the trim, which takes it only when no run holds it.
fn hold(dir: &Path, exclusive: bool) -> std::io::Result<nix::fcntl::Flock<std::fs::File>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir)?;
    let how = match exclusive {
        true => nix::fcntl::FlockArg::LockExclusiveNonblock,
        false => nix::fcntl::FlockArg::LockShared,
    };
    nix::fcntl::Flock::lock(file, how).map_err(|(_, errno)| errno.into())
}

/// The bound `AUTOCODER_CACHE_MAX` sets (`500M`, `2G`), else 2 GiB.
fn bound() -> u64 {
    std::env::var("AUTOCODER_CACHE_MAX")
        .ok()
        .and_then(|max| crate::sandbox::policy::parse_size(max.trim()).ok())
        .unwrap_or(DEFAULT_MAX)
}

/// Keeps the caches under their bound, at most every `TRIM_EVERY`: the workspaces whose caches
/// were used longest ago go first, whole, but never one a run holds. `using` is a cache of the
/// run about to start.
fn trim(using: &Path) {
    let Some(base) = using.parent().and_then(Path::parent) else {
        return;
    };
    let stamp = base.join(".trimmed");
    let due = std::fs::symlink_metadata(&stamp)
        .and_then(|meta| meta.modified())
        .map_or(true, |at| {
            SystemTime::now().duration_since(at).unwrap_or_default() >= TRIM_EVERY
        });
    if due {
        let _ = std::fs::write(&stamp, "");
        evict(base, bound(), using);
    }
}

/// Removes the workspaces' caches below `base` least recently used first until they take
/// `max` bytes at most, but for those a run holds and the one `using` is in.
fn evict(base: &Path, max: u64, using: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let mut workspaces: Vec<(SystemTime, u64, PathBuf)> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| {
            let used = entry
                .metadata()
                .and_then(|meta| meta.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (used, size_of(&entry.path()), entry.path())
        })
        .collect();
    let mut total: u64 = workspaces.iter().map(|(_, size, _)| size).sum();
    workspaces.sort();
    for (_, size, dir) in workspaces {
        if total <= max {
            break;
        }
        if using.starts_with(&dir) {
            continue;
        }
        if let Ok(_held) = hold(&dir, true) {
            if remove_tree(&dir).is_ok() {
                total = total.saturating_sub(size);
            }
        }
    }
}

/// The bytes the files below `dir` take, links not followed.
fn size_of(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => size_of(&entry.path()),
            _ => entry.metadata().map_or(0, |meta| meta.blocks() * 512),
        })
        .sum()
}

/// Removes `dir` and what is below it, making read-only directories (Go's modules) writable
/// first; links are removed, never followed.
fn remove_tree(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for entry in std::fs::read_dir(dir)?.flatten() {
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            let _ = std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o700));
            remove_tree(&entry.path())?;
        }
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    std::fs::remove_dir_all(dir)
}

/// `below` the user's cache directory (`$XDG_CACHE_HOME`, else `~/.cache`), made where missing,
/// readable by this user alone; the path the sandbox mounts.
pub(crate) fn private_dir(below: &Path) -> std::io::Result<PathBuf> {
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
pub(crate) fn args(framework: Framework, dir: &Path) -> Vec<String> {
    match framework {
        Framework::Jest => vec!["--cacheDirectory".into(), dir.display().to_string()],
        _ => Vec::new(),
    }
}

/// The variables that send the toolchain's cache to `dir`.
pub(crate) fn env(framework: Framework, dir: &Path) -> Vec<String> {
    match framework {
        Framework::Go => vec![
            format!("GOCACHE={}", dir.join("build").display()),
            format!("GOMODCACHE={}", dir.join("mod").display()),
        ],
        // Read, never written: the runs may not write the cache, nor bytecode anywhere else.
        Framework::Pytest | Framework::Unittest => vec![
            format!("PYTHONPYCACHEPREFIX={}", dir.display()),
            "PYTHONDONTWRITEBYTECODE=1".into(),
        ],
        _ => Vec::new(),
    }
}

/// The file that says a bytecode cache was seeded.
const SEEDED: &str = ".seeded";

/// Whether the bytecode cache `dir` is yet to be seeded (see `seed_python`).
pub(crate) fn needs_seed(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(SEEDED)).is_err()
}

/// Seeds the bytecode cache `dir` with links to the bytecode the interpreter came with: for each
/// of its `search_path` directories that lies inside one of the `trusted` directories (what the
/// sandbox can only read, and the interpreter's own virtualenv) and is neither the home nor one
/// holding it, each `D/__pycache__/NAME.TAG.pyc` gets the link `dir/D/NAME.TAG.pyc`, where
/// Python looks with the prefix set (`tag` is the interpreter's cache tag). The search path is
/// what a program in the sandbox said: it chooses no place outside those. By descriptors, links
/// in the cache never followed; at most `MOST_SEEDED` directories looked at and links made
/// together.
pub(crate) fn seed_python(dir: &Path, tag: &str, search_path: &[PathBuf], trusted: &[PathBuf]) {
    const MOST_SEEDED: usize = 200_000;
    let Some(cache) = open_cache(dir) else {
        return;
    };
    let suffix = format!(".{tag}.pyc");
    let mut budget = MOST_SEEDED;
    let home = crate::sandbox::native::view::home();
    for entry in search_path {
        // As it really is: `..` and links resolved, never taken by name.
        let Ok(entry) = entry.canonicalize() else {
            continue;
        };
        let inside = trusted.iter().any(|dir| entry.starts_with(dir));
        let private = home.as_ref().is_some_and(|home| home.starts_with(&entry));
        if !inside || private || entry.starts_with(dir) {
            continue;
        }
        seed_below(cache.as_fd(), &entry, &suffix, &mut budget);
    }
    mark_seeded(cache.as_fd());
}

/// Marks the bytecode cache `dir` as seeded with nothing: an interpreter that could not say
/// where it finds modules is not asked again each run.
pub(crate) fn skip_seed(dir: &Path) {
    if let Some(cache) = open_cache(dir) {
        mark_seeded(cache.as_fd());
    }
}

fn mark_seeded(cache: BorrowedFd<'_>) {
    let flags = nix::fcntl::OFlag::O_CREAT
        | nix::fcntl::OFlag::O_WRONLY
        | nix::fcntl::OFlag::O_NOFOLLOW
        | nix::fcntl::OFlag::O_CLOEXEC;
    let mode = nix::sys::stat::Mode::from_bits_truncate(0o600);
    let _ = nix::fcntl::openat(cache, SEEDED, flags, mode);
}

/// The links for the sources' directory `sources` and those below it, made under `cache`.
fn seed_below(cache: BorrowedFd<'_>, sources: &Path, suffix: &str, budget: &mut usize) {
    let Ok(entries) = std::fs::read_dir(sources) else {
        return;
    };
    *budget = budget.saturating_sub(1);
    let mut below = Vec::new();
    let mut bytecode = Vec::new();
    for entry in entries.flatten() {
        // Directories only, links to them not followed (a package tree can hold a loop).
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        if entry.file_name() == "__pycache__" {
            let Ok(cached) = std::fs::read_dir(entry.path()) else {
                continue;
            };
            bytecode.extend(
                cached
                    .flatten()
                    .map(|file| file.file_name())
                    .filter(|name| name.as_bytes().ends_with(suffix.as_bytes())),
            );
        } else {
            below.push(entry.path());
        }
    }
    if !bytecode.is_empty() {
        if let Some(mirror) = mirror_dir(cache, sources) {
            for name in bytecode {
                if *budget == 0 {
                    return;
                }
                *budget -= 1;
                let target = sources.join("__pycache__").join(&name);
                // One already there (Python's, or a link) stays.
                let _ = nix::unistd::symlinkat(target.as_path(), mirror.as_fd(), name.as_os_str());
            }
        }
    }
    for dir in below {
        if *budget == 0 {
            return;
        }
        seed_below(cache, &dir, suffix, budget);
    }
}

/// The directory that mirrors `sources` under `cache`, made where missing, each step opened
/// without following a link.
fn mirror_dir(cache: BorrowedFd<'_>, sources: &Path) -> Option<OwnedFd> {
    let mut dir = crate::sys::open_dir(cache, c".").ok()?;
    for part in sources.components().skip(1) {
        if !matches!(part, std::path::Component::Normal(_)) {
            return None;
        }
        let name = std::ffi::CString::new(part.as_os_str().as_bytes()).ok()?;
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o755);
        let _ = nix::sys::stat::mkdirat(dir.as_fd(), name.as_c_str(), mode);
        dir = crate::sys::open_dir(dir.as_fd(), &name).ok()?;
    }
    Some(dir)
}

/// The cache directory `dir`, open to read, not through a link.
fn open_cache(dir: &Path) -> Option<OwnedFd> {
    let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // A path descriptor, then the directory itself.
    let held = crate::sys::open_path_no_symlinks(&path).ok()?;
    crate::sys::open_dir(held.as_fd(), c".").ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_links_the_interpreters_bytecode_only_inside_trusted_directories() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        for dir in ["lib/json", "elsewhere"] {
            let cached = root.join(dir).join("__pycache__");
            std::fs::create_dir_all(&cached).unwrap();
            std::fs::write(cached.join("m.cpython-311.pyc"), "").unwrap();
            std::fs::write(cached.join("m.cpython-310.pyc"), "").unwrap();
        }
        let cache = tempfile::tempdir().unwrap();
        let mirror = |dir: &str| cache.path().join(root.join(dir).strip_prefix("/").unwrap());
        // A link the sandboxed runs could have put where a mirrored directory goes.
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(mirror("lib")).unwrap();
        std::os::unix::fs::symlink(outside.path(), mirror("lib/x")).unwrap();
        assert!(needs_seed(cache.path()));

        let said = [
            root.join("lib"),
            root.join("elsewhere"),
            root.join("lib/../elsewhere"),
            "/".into(),
            "".into(),
        ];
        seed_python(cache.path(), "cpython-311", &said, &[root.join("lib")]);

        assert!(!needs_seed(cache.path()));
        let link = mirror("lib/json/m.cpython-311.pyc");
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            root.join("lib/json/__pycache__/m.cpython-311.pyc")
        );
        assert!(!mirror("lib/json/m.cpython-310.pyc").exists());
        assert!(
            !mirror("elsewhere").exists(),
            "seeded outside what is trusted"
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn past_the_bound_the_least_recently_used_workspaces_go_but_none_in_use() {
        let base = tempfile::tempdir().unwrap();
        let workspace = |name: &str, bytes: usize, age: u64| {
            let dir = base.path().join(name);
            std::fs::create_dir_all(dir.join("go/build")).unwrap();
            std::fs::write(dir.join("go/build/x"), vec![1u8; bytes]).unwrap();
            // Go's modules are read-only.
            std::fs::create_dir_all(dir.join("go/mod/m")).unwrap();
            std::fs::set_permissions(
                dir.join("go/mod/m"),
                std::os::unix::fs::PermissionsExt::from_mode(0o555),
            )
            .unwrap();
            let then = SystemTime::now() - Duration::from_secs(age);
            std::fs::File::open(&dir)
                .unwrap()
                .set_modified(then)
                .unwrap();
            dir
        };
        let oldest = workspace("oldest-1", 300_000, 3000);
        let held = workspace("held-2", 300_000, 2000);
        let older = workspace("older-3", 300_000, 1000);
        let newer = workspace("newer-4", 300_000, 10);
        let using = workspace("using-5", 300_000, 5000);
        let _run = hold(&held, false).unwrap();
        evict(base.path(), 950_000, &using.join("go"));
        assert!(!oldest.exists() && !older.exists());
        assert!(held.exists(), "a cache a run holds went");
        assert!(using.exists() && newer.exists());
    }
}
