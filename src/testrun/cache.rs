//! Toolchain caches that outlive a sandboxed run: one directory per workspace and toolchain,
//! under the user's cache directory (`$XDG_CACHE_HOME/autocoder/run-tests/NAME-HASH/TOOL`).
//! The sandbox's home is thrown away after each run, and with it Go's build cache; a run that
//! heal repeats a hundred times would compile everything each time. Per workspace, so one
//! project's poisoned cache cannot change another's results; in a place no host tool reads.
//!
//! Caches keyed by content are kept as they are: Go's build and module caches, jest's cache (its
//! transforms, by content), and with the network on a cargo home (the crates and checkouts cargo
//! downloads: the host's registry is read-only inside, and its `config.toml` never shown).
//! Python's bytecode (Python's and pytest's, `PYTHONPYCACHEPREFIX`) is checked against its
//! source's mtime in seconds and size only, so an edit of the same size within the second (what
//! heal makes) would run the old code: before each run, bytecode written in the second its
//! source was changed is removed (as git treats a "racy" index entry), and so is the bytecode
//! of sources that are gone (heal's copies). With a prefix Python reads no
//! `__pycache__`, so a new cache is first seeded with links to the bytecode the interpreter's
//! own directories hold (its standard library, its packages): else a first run would compile
//! all of them again.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
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
        (Framework::Pytest | Framework::Unittest, _) => "python",
        (Framework::Cargo | Framework::Nextest, true) => "cargo-network",
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
        Framework::Pytest | Framework::Unittest => {
            vec![format!("PYTHONPYCACHEPREFIX={}", dir.display())]
        }
        Framework::Cargo | Framework::Nextest => vec![format!("CARGO_HOME={}", dir.display())],
        _ => Vec::new(),
    }
}

/// The file that says a bytecode cache was seeded.
const SEEDED: &str = ".seeded";

/// Whether the bytecode cache `dir` is yet to be seeded (see `seed_python`).
pub fn needs_seed(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(SEEDED)).is_err()
}

/// Seeds the bytecode cache `dir` with links to the bytecode the interpreter came with: for each
/// of its `search_path` directories (none that is the workspace `root` or holds it), each
/// `D/__pycache__/NAME.TAG.pyc` gets the link `dir/D/NAME.TAG.pyc`, where Python looks with the
/// prefix set (`tag` is the interpreter's cache tag). By descriptors, links in the cache never
/// followed; at most `MOST_SEEDED` directories looked at and links made together (the search
/// path is what a program in the sandbox said).
pub fn seed_python(dir: &Path, tag: &str, search_path: &[PathBuf], root: &Path) {
    const MOST_SEEDED: usize = 200_000;
    let Some(cache) = open_cache(dir) else {
        return;
    };
    let suffix = format!(".{tag}.pyc");
    let mut budget = MOST_SEEDED;
    for entry in search_path {
        if !entry.is_absolute() || root.starts_with(entry) || entry.starts_with(dir) {
            continue;
        }
        seed_below(cache.as_fd(), entry, &suffix, &mut budget);
    }
    mark_seeded(cache.as_fd());
}

/// Marks the bytecode cache `dir` as seeded with nothing: an interpreter that could not say
/// where it finds modules is not asked again each run.
pub fn skip_seed(dir: &Path) {
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

/// Readies the cache `dir` for a `framework` run: Python's bytecode that could be taken for a
/// later version of its source is removed. What cannot be removed stays (Python then compiles
/// that source again, or fails to write its bytecode, and goes on).
pub fn prepare(framework: Framework, dir: &Path) {
    if !matches!(framework, Framework::Pytest | Framework::Unittest) {
        return;
    }
    if let Some(cache) = open_cache(dir) {
        tidy_bytecode(cache.as_fd(), Path::new("/"));
    }
}

/// Below the directory `cache` of the bytecode tree, which mirrors the sources' directory
/// `sources`: removes what mirrors no directory any more and bytecode that is racy. By
/// descriptors, links never followed: the sandboxed runs write this tree.
fn tidy_bytecode(cache: BorrowedFd<'_>, sources: &Path) {
    use nix::dir::Type;
    let Ok(mut entries) = nix::unistd::dup(cache).and_then(nix::dir::Dir::from_fd) else {
        return;
    };
    // Names and kinds first: removing while reading a directory may skip entries.
    let listed: Vec<(std::ffi::CString, Option<Type>)> = entries
        .iter()
        .filter_map(Result::ok)
        .map(|entry| (entry.file_name().to_owned(), entry.file_type()))
        .filter(|(name, _)| name.as_c_str() != c"." && name.as_c_str() != c"..")
        .collect();
    for (name, kind) in listed {
        if sources == Path::new("/") && name.as_bytes() == SEEDED.as_bytes() {
            continue;
        }
        let kind = match kind {
            Some(kind) => kind,
            None => match crate::sys::stat_at(cache, &name) {
                Ok(stat) => match crate::sys::file_kind(&stat) {
                    nix::sys::stat::SFlag::S_IFDIR => Type::Directory,
                    nix::sys::stat::SFlag::S_IFREG => Type::File,
                    nix::sys::stat::SFlag::S_IFLNK => Type::Symlink,
                    _ => Type::Fifo,
                },
                Err(_) => continue,
            },
        };
        let source = sources.join(entry_name(&name));
        let keep = match kind {
            Type::Directory => source.is_dir(),
            Type::File => !racy(cache, &name),
            // The seed's, or one a run made: it could as well have written bytecode there.
            Type::Symlink => true,
            _ => false,
        };
        if !keep {
            let _ = crate::sys::remove_all(cache, &name);
        } else if kind == Type::Directory {
            if let Ok(below) = crate::sys::open_dir(cache, &name) {
                tidy_bytecode(below.as_fd(), &source);
            }
        }
    }
}

fn entry_name(name: &std::ffi::CStr) -> &std::ffi::OsStr {
    std::ffi::OsStr::from_bytes(name.to_bytes())
}

/// Whether the bytecode file `name` could be taken for a later version of its source:
/// checked by time (PEP 552: magic, flags 0, then the source's mtime in seconds and its size,
/// 32 bits each, little-endian) and written in the second that mtime names or before it, so
/// the same-sized edit that second would pass. Unreadable or short ones are racy too.
fn racy(dir: BorrowedFd<'_>, name: &std::ffi::CStr) -> bool {
    use nix::fcntl::OFlag;
    use std::io::Read;
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let Ok(file) = nix::fcntl::openat(dir, name, flags, nix::sys::stat::Mode::empty()) else {
        return true;
    };
    let Ok(stat) = nix::sys::stat::fstat(&file) else {
        return true;
    };
    let mut header = [0u8; 16];
    if std::fs::File::from(file).read_exact(&mut header).is_err() {
        return true;
    }
    let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().unwrap());
    // Checked by hash (flags 1 or 3): taken only for the very content it was made from.
    if word(4) != 0 {
        return false;
    }
    // Both in seconds, cut to 32 bits as Python cuts them.
    (stat.st_mtime as u32).wrapping_sub(word(8)) as i32 <= 0
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

    /// A bytecode file whose header names a source changed at `source_mtime` (seconds).
    fn bytecode(path: &Path, source_mtime: u32) {
        let mut header = b"\xa7\r\r\n\0\0\0\0".to_vec();
        header.extend(source_mtime.to_le_bytes());
        header.extend(26u32.to_le_bytes());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, header).unwrap();
    }

    #[test]
    fn what_mirrors_no_source_directory_and_racy_bytecode_go_and_no_link_is_followed() {
        let sources = tempfile::tempdir().unwrap();
        let sources = sources.path().canonicalize().unwrap();
        std::fs::create_dir(sources.join("here")).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let mirror = cache.path().join(sources.strip_prefix("/").unwrap());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as u32;
        bytecode(&mirror.join("here/old.cpython-311.pyc"), now - 60);
        bytecode(&mirror.join("here/racy.cpython-311.pyc"), now + 3600);
        bytecode(&mirror.join("gone/kept.cpython-311.pyc"), now - 60);
        let outside = tempfile::tempdir().unwrap();
        bytecode(&outside.path().join("x.cpython-311.pyc"), now + 3600);
        std::os::unix::fs::symlink(outside.path(), mirror.join("here/link")).unwrap();

        prepare(Framework::Pytest, cache.path());

        assert!(mirror.join("here/old.cpython-311.pyc").exists());
        assert!(!mirror.join("here/racy.cpython-311.pyc").exists());
        assert!(!mirror.join("gone").exists());
        assert!(outside.path().join("x.cpython-311.pyc").exists());
    }

    #[test]
    fn a_seed_links_the_interpreter_s_bytecode_and_follows_no_link_in_the_cache() {
        let interpreter = tempfile::tempdir().unwrap();
        let lib = interpreter.path().canonicalize().unwrap().join("lib");
        for module in ["os", "json/decoder", "json/__init__"] {
            let (dir, name) = module.rsplit_once('/').unwrap_or(("", module));
            let cached = lib.join(dir).join("__pycache__");
            std::fs::create_dir_all(&cached).unwrap();
            std::fs::write(lib.join(dir).join(format!("{name}.py")), "").unwrap();
            bytecode(&cached.join(format!("{name}.cpython-311.pyc")), 0);
            bytecode(&cached.join(format!("{name}.cpython-310.pyc")), 0);
        }
        let cache = tempfile::tempdir().unwrap();
        let mirror = cache.path().join(lib.strip_prefix("/").unwrap());
        // A link the sandboxed runs put where a mirrored directory goes.
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(&mirror).unwrap();
        std::os::unix::fs::symlink(outside.path(), mirror.join("json")).unwrap();
        assert!(needs_seed(cache.path()));

        seed_python(
            cache.path(),
            "cpython-311",
            &[lib.clone(), "".into()],
            Path::new("/w"),
        );

        assert!(!needs_seed(cache.path()));
        let os = mirror.join("os.cpython-311.pyc");
        assert_eq!(
            std::fs::read_link(&os).unwrap(),
            lib.join("__pycache__/os.cpython-311.pyc")
        );
        assert!(!mirror.join("os.cpython-310.pyc").exists());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        prepare(Framework::Pytest, cache.path());
        assert!(std::fs::symlink_metadata(&os).unwrap().is_symlink());
        assert!(!needs_seed(cache.path()));
    }
}
