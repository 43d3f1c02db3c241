//! The command's view of the filesystem, built from an allow-list: a fresh root holding only the
//! system directories, the toolchains and `--ro` paths (read-only), the workspace and `--rw`
//! paths (writable), a few device files, a private `/tmp`, `/dev/shm` and `/proc`. Nothing else
//! exists there, so host UNIX sockets (`/run/docker.sock`, `/var/lib/mysql/mysql.sock`), other
//! users' files and our home are not merely forbidden but absent; Landlock then restricts access
//! within the view as well.
//!
//! Every path is opened once, with no symlink allowed in any component (they were canonicalized,
//! so a symlink now means one was swapped in), and the child mounts what these descriptors refer
//! to: a path swapped after the check cannot redirect a mount. The workspace and the `--rw`
//! paths were opened, and checked as opened, when the policy was made (`HeldPath`); the others
//! are opened here.

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::Failure;
use crate::sandbox::policy::{resolve_without_writable_links, SandboxPolicy};
use crate::sys;

/// System directories mounted read-only; top-level symlinks among them (`/bin -> usr/bin` on a
/// merged-/usr system) are recreated as symlinks.
pub(crate) const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys",
];

/// Device files the command gets (read and write, no others).
pub(crate) const DEVICE_FILES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Places the sandbox fills itself; no path may be mounted over or above them.
const RESERVED: &[&str] = &["/tmp", "/var/tmp", "/proc", "/dev"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    ReadOnly,
    ReadWrite,
    Device,
    /// Read-only, and what a layered directory of the workspace shows: owned, in the view, as
    /// the workspace is (started as root, id-mapped like it), so that what the command copies
    /// up is its own to change.
    Layered,
}

/// A host path mounted at the same place in the view.
#[derive(Debug)]
pub(crate) struct Bind {
    pub path: PathBuf,
    pub access: Access,
    pub is_dir: bool,
    /// The (uid, gid) owning it, from the descriptor (for the id mapping when root).
    pub owner: (u32, u32),
    /// `O_PATH` descriptor of the path, opened without following symlinks.
    pub fd: OwnedFd,
}

#[derive(Debug)]
pub(crate) struct SandboxView {
    /// Mounts, parents before children.
    pub binds: Vec<Bind>,
    /// Top-level symlinks to recreate: (link, target).
    pub symlinks: Vec<(PathBuf, PathBuf)>,
    pub read_only: Vec<PathBuf>,
    pub read_write: Vec<PathBuf>,
    /// Toolchain and `PATH` directories not mounted, and why.
    pub left_out: Vec<LeftOut>,
    /// `/sys` is the child's to mount (a sysfs of its network namespace).
    pub own_sysfs: bool,
}

/// `path`, to be mounted with `access`: the workspace and the --rw paths were opened and
/// checked once, and those descriptors are what is mounted, never their names again; others
/// are opened with no symbolic link on the way. The docker backend stages its mounts so too.
pub(crate) fn open_bind(
    policy: &SandboxPolicy,
    path: &Path,
    access: Access,
) -> Result<Bind, Failure> {
    let held = policy.held.iter().find(|held| held.path == path);
    let fd = match held {
        Some(held) => held
            .fd
            .try_clone()
            .map_err(|err| Failure::external(format!("cannot hold {}: {err}", path.display())))?,
        None => open_no_symlinks(path)?,
    };
    let stat = nix::sys::stat::fstat(&fd).map_err(|errno| {
        Failure::usage(format!(
            "cannot read {}: {}",
            path.display(),
            std::io::Error::from(errno)
        ))
    })?;
    Ok(Bind {
        path: path.to_path_buf(),
        access,
        is_dir: sys::file_kind(&stat) == nix::sys::stat::SFlag::S_IFDIR,
        owner: (stat.st_uid, stat.st_gid),
        fd,
    })
}

/// A directory the command would have been given to read, left out.
#[derive(Debug, Clone)]
pub(crate) struct LeftOut {
    pub path: PathBuf,
    pub reason: String,
}

/// What the view shows read-only: the system directories (but for `/sys` with `own_sysfs`),
/// the `--ro` paths, the toolchains and `PATH` directories; the top-level links to recreate;
/// and what was left out, with why.
pub(crate) struct ReadOnly {
    pub dirs: Vec<PathBuf>,
    pub symlinks: Vec<(PathBuf, PathBuf)>,
    pub left_out: Vec<LeftOut>,
}

/// The read-only part of `policy`'s view (see `ReadOnly`), with no descriptor opened: what
/// `plan` mounts, and what the caches may be seeded from.
pub(crate) fn read_only(policy: &SandboxPolicy, own_sysfs: bool) -> Result<ReadOnly, Failure> {
    let mut symlinks = Vec::new();
    let mut read_only = Vec::new();
    let system_dirs = SYSTEM_DIRS
        .iter()
        .filter(|dir| !(own_sysfs && **dir == "/sys"));
    for dir in system_dirs.map(PathBuf::from) {
        match dir.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(&dir) {
                    symlinks.push((dir, target));
                }
            }
            Ok(meta) if meta.is_dir() => read_only.push(dir),
            _ => {}
        }
    }
    let mut read_write = vec![policy.workspace.clone()];
    read_write.extend(policy.read_write.iter().cloned());
    for path in &policy.read_only {
        check_not_reserved(path, "--ro")?;
        read_only.push(path.clone());
    }
    // Toolchains, the project's environments and PATH directories: read-only, unless a writable path or another read-only
    // path already brings them. Directories that would cover a reserved place are left out, and
    // so are those reached through a link in a writable place (the sandbox's to make).
    let path_dirs = crate::sandbox::lookup_env(&policy.env, "PATH")
        .map(|path| std::env::split_paths(path).collect::<Vec<_>>())
        .unwrap_or_default();
    let trusted = policy
        .toolchain_dirs
        .iter()
        .chain(policy.environments.iter().map(|(dir, _)| dir))
        .chain(path_dirs.iter().filter(|dir| dir.is_absolute()))
        .filter_map(|dir| resolve_without_writable_links(dir, &read_write).ok())
        .collect::<Vec<_>>();
    let home = home();
    let mut left_out = Vec::new();
    let trusted =
        trusted
            .into_iter()
            .filter(|dir| match exposes_credentials(dir, home.as_deref()) {
                Some(reason) => {
                    left_out.push(LeftOut {
                        path: dir.clone(),
                        reason,
                    });
                    false
                }
                None => true,
            });
    let trusted: Vec<PathBuf> = trusted.collect();
    left_out.dedup_by(|a, b| a.path == b.path);
    for dir in trusted {
        let covered = read_only
            .iter()
            .chain(&read_write)
            .any(|outer| dir.starts_with(outer));
        if !covered && dir.is_dir() && check_not_reserved(&dir, "").is_ok() {
            read_only.push(dir);
        }
    }
    dedupe_nested(&mut read_only);
    Ok(ReadOnly {
        dirs: read_only,
        symlinks,
        left_out,
    })
}

/// The user's home, canonical: never in view, nor a directory holding it. `HOME`, or where it
/// is unset or `/` (a cron job, a service), the account's.
pub(crate) fn home() -> Option<PathBuf> {
    let account = || {
        let user = nix::unistd::User::from_uid(nix::unistd::getuid()).ok()??;
        Some(user.dir.into_os_string())
    };
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty() && home != "/")
        .or_else(account)
        .and_then(|home| PathBuf::from(home).canonicalize().ok())
        .filter(|home| home != Path::new("/"))
}

/// The view for `policy`; with `own_sysfs`, `/sys` is left to the child, which mounts a sysfs
/// of the command's own network namespace there.
pub(crate) fn plan(policy: &SandboxPolicy, own_sysfs: bool) -> Result<SandboxView, Failure> {
    check_not_reserved(&policy.workspace, "--workspace")?;
    let mut read_write = vec![policy.workspace.clone()];
    read_write.extend(policy.read_write.iter().cloned());
    for path in &policy.read_write {
        check_not_reserved(path, "--rw")?;
    }
    let ReadOnly {
        dirs: read_only,
        symlinks,
        left_out,
    } = read_only(policy, own_sysfs)?;
    let mut binds = Vec::new();
    let mut open = |path: &Path, access: Access| -> Result<(), Failure> {
        binds.push(open_bind(policy, path, access)?);
        Ok(())
    };
    for path in &read_only {
        open(path, Access::ReadOnly)?;
    }
    for path in &read_write {
        open(path, Access::ReadWrite)?;
    }
    for device in DEVICE_FILES.iter().map(Path::new).filter(|d| d.exists()) {
        open(device, Access::Device)?;
    }
    for layer in &policy.layered {
        check_not_reserved(&layer.lower, "a layered directory")?;
        open(&layer.lower, Access::Layered)?;
    }
    // Parents first; at equal depth, read-only before writable so an explicit --rw inside a
    // read-only tree is mounted over it.
    binds.sort_by_key(|bind| {
        (
            bind.path.components().count(),
            bind.access == Access::ReadWrite,
        )
    });
    Ok(SandboxView {
        binds,
        symlinks,
        read_only,
        read_write,
        left_out,
        own_sysfs,
    })
}

/// Directories and files of keys and tokens, below a home.
const CREDENTIAL_DIRS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config/gh",
    ".config/gcloud",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
];

/// Why `dir` (a toolchain or `PATH` directory) must not be mounted, if it must not: it is the
/// home (`home`) or holds it, or it holds a credential directory.
pub(crate) fn exposes_credentials(dir: &Path, home: Option<&Path>) -> Option<String> {
    if home.is_some_and(|home| home.starts_with(dir)) {
        return Some("the home directory, or one that holds it".into());
    }
    CREDENTIAL_DIRS
        .iter()
        .find(|keys| dir.join(keys).symlink_metadata().is_ok())
        .map(|keys| format!("it holds {keys}"))
}

/// `path` as an `O_PATH` descriptor, through no symbolic link.
fn open_no_symlinks(path: &Path) -> Result<OwnedFd, Failure> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Failure::usage(format!("{} contains a NUL byte", path.display())))?;
    sys::open_path_no_symlinks(&c_path).map_err(|errno| {
        Failure::usage(format!(
            "cannot open {}: {}",
            path.display(),
            std::io::Error::from_raw_os_error(errno)
        ))
        .with_hint("the path must not change while the sandbox starts (a symlink was swapped in?)")
    })
}

/// Refuses `/`, the reserved places and their ancestors, and paths inside `/proc` and `/dev`.
fn check_not_reserved(path: &Path, flag: &str) -> Result<(), Failure> {
    let clash = RESERVED.iter().any(|reserved| {
        Path::new(reserved).starts_with(path) || (*reserved != "/tmp" && path.starts_with(reserved))
    });
    if clash {
        return Err(Failure::usage(format!(
            "{flag} {}: the sandbox provides its own /tmp (also as /var/tmp), /proc and /dev",
            path.display()
        ))
        .with_hint("give a directory below /tmp, or elsewhere"));
    }
    Ok(())
}

/// Drops paths that another entry already contains, and repeats.
fn dedupe_nested(paths: &mut Vec<PathBuf>) {
    let all = std::mem::take(paths);
    for path in &all {
        let nested = all
            .iter()
            .any(|outer| outer != path && path.starts_with(outer));
        if !nested && !paths.contains(path) {
            paths.push(path.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_paths_are_dropped() {
        let mut paths: Vec<PathBuf> = ["/usr", "/usr/bin", "/opt/x", "/usr", "/opt/x/bin", "/etc"]
            .iter()
            .map(PathBuf::from)
            .collect();
        dedupe_nested(&mut paths);
        assert_eq!(
            paths,
            ["/usr", "/opt/x", "/etc"]
                .iter()
                .map(PathBuf::from)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn reserved_places_cannot_be_mounted_over() {
        for bad in [
            "/",
            "/tmp",
            "/proc",
            "/proc/1",
            "/dev",
            "/dev/shm",
            "/var/tmp",
            "/var/tmp/ws",
            "/var",
        ] {
            assert!(check_not_reserved(Path::new(bad), "--ro").is_err(), "{bad}");
        }
        for good in ["/tmp/ws", "/var/data", "/home/me/proj"] {
            assert!(
                check_not_reserved(Path::new(good), "--ro").is_ok(),
                "{good}"
            );
        }
    }
}
