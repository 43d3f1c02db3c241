//! Which host paths the command may read, write and see: the system directories and its
//! toolchain read-only, the workspace and `--rw` paths writable, and the directories that are
//! replaced by an empty private tmpfs (where host UNIX sockets and other people's files live),
//! with whatever the command needs from under them mounted back ("exposed").

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::Failure;
use crate::sandbox::policy::SandboxPolicy;

/// System directories every command may read and execute.
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys", "/proc",
];

/// Directories always covered by an empty tmpfs.
const HIDDEN_DIRS: &[&str] = &["/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm"];

/// A path mounted again inside the child, at the same place.
#[derive(Debug)]
pub struct Exposure {
    pub path: PathBuf,
    pub is_dir: bool,
    /// As root: the (uid, gid) owning the path, shown to the command as its own uid.
    pub idmap_owner: Option<(u32, u32)>,
}

#[derive(Debug)]
pub struct SandboxPaths {
    pub read_only: Vec<PathBuf>,
    pub read_write: Vec<PathBuf>,
    pub hidden: Vec<PathBuf>,
    pub exposures: Vec<Exposure>,
}

/// Works out the paths for `policy`; `program` is the resolved command, `root` whether we run
/// as root (and so remount the writable paths with an id mapping).
pub fn plan(policy: &SandboxPolicy, program: &Path, root: bool) -> Result<SandboxPaths, Failure> {
    let mut read_only: Vec<PathBuf> = SYSTEM_DIRS
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect();
    read_only.extend(policy.toolchain_dirs.iter().cloned());
    if let Some(path) = crate::sandbox::lookup_env(&policy.env, "PATH") {
        read_only.extend(
            std::env::split_paths(path).filter(|dir| dir.is_absolute() && !under_system_dir(dir)),
        );
    }
    // A command outside the system directories gets its installation prefix (bin/..).
    if !under_system_dir(program) {
        if let Some(prefix) = program
            .canonicalize()
            .ok()
            .and_then(|p| p.parent()?.parent().map(Path::to_path_buf))
        {
            if prefix != Path::new("/") {
                read_only.push(prefix);
            }
        }
    }
    read_only.extend(policy.read_only.iter().cloned());
    read_only.retain(|p| p.is_absolute() && p.exists());
    dedupe_nested(&mut read_only);
    let mut read_write = vec![policy.workspace.clone()];
    read_write.extend(policy.read_write.iter().cloned());

    let mut hidden: Vec<PathBuf> = HIDDEN_DIRS
        .iter()
        .map(PathBuf::from)
        .filter(|dir| dir.symlink_metadata().is_ok_and(|m| m.is_dir()))
        .collect();
    // Our home holds much that is nobody else's business; and started as root, a 0700 directory
    // above a toolchain would lock the sandbox uid out of it. Both are replaced by an empty tmpfs
    // with the toolchains mounted back.
    let home = std::env::var_os("HOME").and_then(|h| PathBuf::from(h).canonicalize().ok());
    let closed: Vec<PathBuf> = if root {
        read_only
            .iter()
            .filter(|p| !under_system_dir(p))
            .filter_map(|p| closed_ancestor(p))
            .collect()
    } else {
        Vec::new()
    };
    for dir in home.into_iter().chain(closed) {
        let covered = hidden.iter().any(|outer| dir.starts_with(outer));
        if dir.is_dir() && dir != Path::new("/") && !under_system_dir(&dir) && !covered {
            hidden.push(dir);
        }
    }

    let mut wanted = Vec::new();
    for path in &read_only {
        if hidden.iter().any(|dir| path.starts_with(dir)) {
            wanted.push((path.clone(), None));
        }
    }
    for path in &read_write {
        let idmap_owner = if root {
            let meta = path
                .metadata()
                .map_err(|err| Failure::usage(format!("cannot read {}: {err}", path.display())))?;
            Some((meta.uid(), meta.gid()))
        } else {
            None
        };
        if idmap_owner.is_some() || hidden.iter().any(|dir| path.starts_with(dir)) {
            wanted.push((path.clone(), idmap_owner));
        }
    }
    // A path inside another exposed one with the same mapping comes along with it.
    wanted.sort_by_key(|(path, _)| path.as_os_str().len());
    let mut exposures: Vec<Exposure> = Vec::new();
    for (path, idmap_owner) in wanted {
        if !exposures
            .iter()
            .any(|outer| path.starts_with(&outer.path) && outer.idmap_owner == idmap_owner)
        {
            exposures.push(Exposure {
                is_dir: path.is_dir(),
                path,
                idmap_owner,
            });
        }
    }
    Ok(SandboxPaths {
        read_only,
        read_write,
        hidden,
        exposures,
    })
}

fn under_system_dir(path: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|dir| path.starts_with(dir))
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

/// The outermost directory above `path` that others may not enter (mode without o+x), if any:
/// started as root, the sandbox uid could not reach `path` through it.
fn closed_ancestor(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .filter(|dir| dir.parent().is_some())
        .filter(|dir| {
            dir.metadata()
                .is_ok_and(|m| m.permissions().mode() & 0o001 == 0)
        })
        .last()
        .map(Path::to_path_buf)
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
}
