//! Paths confined to the workspace roots, resolved in a way a race cannot defeat: the kernel
//! walks every path beneath an open descriptor of its root (`openat2` with `RESOLVE_BENEATH`),
//! so `..`, absolute symlinks, symlinks that lead out (existing or dangling, or swapped in after a
//! check), `/proc` magic links and prefix look-alikes (`/root-evil` beside `/root`) are refused by
//! the kernel itself, at the moment of use.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::{path_error, PathError};
use crate::sys::{open_path_no_symlinks, openat2};
use nix::fcntl::ResolveFlag;

/// The directories the tools may touch.
#[derive(Debug)]
pub(crate) struct Roots {
    roots: Vec<Root>,
}

#[derive(Debug)]
struct Root {
    /// Canonical: what results name.
    path: PathBuf,
    /// How the user and the client named it (made absolute), which may go through a link: a
    /// request may name its files that way too.
    given: Vec<PathBuf>,
    fd: OwnedFd,
}

/// A path inside a root: the root's descriptor and the path relative to it.
#[derive(Debug, Clone)]
pub(crate) struct Confined<'a> {
    pub root: &'a Path,
    pub root_fd: BorrowedFd<'a>,
    /// Relative to the root; empty for the root itself.
    pub relative: PathBuf,
    /// The root is the first one, which relative paths in requests are taken against.
    pub primary: bool,
}

impl<'a> Confined<'a> {
    /// Refused when what it names is one git on the host obeys (`.git`, the hooks and config
    /// the repository's config names): a file tool's write there would run as the user at the
    /// next git command.
    pub(crate) fn writable_by_tools(self) -> Result<Confined<'a>, PathError> {
        let relative = self.relative.to_string_lossy();
        match super::runs_outside::RunsOutside::of(self.root).obeyed_by_git(&relative) {
            true => Err(path_error(format!(
                "{}: git obeys it (its directory, hooks or config), outside any sandbox: not written",
                self.display().display()
            ))),
            false => Ok(self),
        }
    }

    /// The path as the user sees it (absolute).
    pub(crate) fn display(&self) -> PathBuf {
        self.root.join(&self.relative)
    }

    /// Another path in the same root.
    pub(crate) fn beside(&self, relative: PathBuf) -> Confined<'a> {
        Confined { relative, ..*self }
    }

    /// How a tool's result names `relative` (a path in this root) so that it can be given back
    /// as it is: relative in the first root, absolute in the others.
    pub(crate) fn shown(&self, relative: &Path) -> String {
        if self.primary {
            relative.to_string_lossy().into_owned()
        } else {
            self.root.join(relative).to_string_lossy().into_owned()
        }
    }
}

impl Roots {
    pub(crate) fn new(paths: &[PathBuf]) -> Result<Roots, String> {
        let spelled: Vec<(PathBuf, Vec<PathBuf>)> = paths
            .iter()
            .map(|path| {
                let given = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                (path.clone(), vec![given])
            })
            .collect();
        Roots::spelled(&spelled)
    }

    /// Roots from (path, how requests may also spell it): the client's spelling of a root it
    /// listed, and the user's of an allowed one.
    pub(crate) fn spelled(paths: &[(PathBuf, Vec<PathBuf>)]) -> Result<Roots, String> {
        let mut roots = Vec::new();
        for (path, given) in paths {
            let canonical = path
                .canonicalize()
                .map_err(|err| format!("root {}: {err}", path.display()))?;
            if !canonical.is_dir() {
                return Err(format!("root {}: not a directory", canonical.display()));
            }
            // No symlink may lead there now: the descriptor is the directory that is checked.
            let c_path = CString::new(canonical.as_os_str().as_bytes())
                .map_err(|_| format!("root {}: contains a NUL byte", canonical.display()))?;
            let fd = open_path_no_symlinks(&c_path).map_err(|errno| {
                format!(
                    "root {}: {}",
                    canonical.display(),
                    std::io::Error::from_raw_os_error(errno)
                )
            })?;
            // Every file there would be the tools' to read and write (an editor may start the
            // server in `/` or in the home directory).
            if let Some(what) = super::too_wide(fd.as_fd()) {
                return Err(format!(
                    "a root cannot be {} ({what}); name the project's directory",
                    canonical.display()
                ));
            }
            roots.push(Root {
                path: canonical,
                given: given.clone(),
                fd,
            });
        }
        if roots.is_empty() {
            return Err("no root".into());
        }
        Ok(Roots { roots })
    }

    pub(crate) fn paths(&self) -> impl Iterator<Item = &Path> {
        self.roots.iter().map(|root| root.path.as_path())
    }

    /// Each root's (canonical path, spellings as given).
    pub(crate) fn spellings(&self) -> impl Iterator<Item = (&Path, &[PathBuf])> {
        self.roots
            .iter()
            .map(|root| (root.path.as_path(), root.given.as_slice()))
    }

    /// Where the file `path` lies, as `confine`; a path ending in `/` or `/.` names a
    /// directory, which the file tools would otherwise take as the file before it.
    pub(crate) fn confine_file(&self, path: &str) -> Result<Confined<'_>, PathError> {
        if path.ends_with('/') || path.ends_with("/.") {
            return Err(path_error(format!(
                "{path} names a directory; give the file's path"
            )));
        }
        self.confine(path)
    }

    /// Where `path` (relative to the first root, or absolute inside one) lies. Only lexical
    /// checks here; `open` lets the kernel check the rest.
    pub(crate) fn confine(&self, path: &str) -> Result<Confined<'_>, PathError> {
        if path.contains('\0') {
            return Err(path_error("the path contains a NUL byte"));
        }
        let given = Path::new(if path.is_empty() { "." } else { path });
        let (index, rest) = if given.is_absolute() {
            // Component-wise, so /work/root-evil is not inside /work/root.
            self.roots
                .iter()
                .enumerate()
                .find_map(|(index, root)| {
                    given
                        .strip_prefix(&root.path)
                        .ok()
                        .or_else(|| {
                            root.given
                                .iter()
                                .find_map(|spelled| given.strip_prefix(spelled).ok())
                        })
                        .map(|rest| (index, rest.to_path_buf()))
                })
                .ok_or_else(|| {
                    path_error(format!(
                        "{path} is outside the allowed roots ({}); give a path inside one",
                        self.paths()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?
        } else {
            (0, given.to_path_buf())
        };
        let Root { path: root, fd, .. } = &self.roots[index];
        let mut relative = PathBuf::new();
        for component in rest.components() {
            match component {
                Component::Normal(part) => relative.push(part),
                Component::CurDir => {}
                Component::ParentDir if !relative.as_os_str().is_empty() => {
                    return Err(path_error(format!(
                        "{path}: `..` is not taken inside a path (a link on the way would change \
                         where it leads); give the path from the root without it"
                    )))
                }
                Component::ParentDir => {
                    return Err(path_error(format!(
                        "{path}: `..` may not leave the root; give a path inside it"
                    )))
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(path_error(format!("{path}: not a path inside a root")))
                }
            }
        }
        Ok(Confined {
            root,
            root_fd: fd.as_fd(),
            relative,
            primary: index == 0,
        })
    }
}

/// Opens `confined` with `flags` (and `mode` when creating), the kernel keeping the whole walk
/// beneath the root.
pub(crate) fn open(confined: &Confined, flags: i32, mode: u32) -> Result<File, PathError> {
    let shown = confined.display();
    let relative = if confined.relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        &confined.relative
    };
    let c_path = CString::new(relative.as_os_str().as_bytes())
        .map_err(|_| path_error("the path contains a NUL byte"))?;
    // Never blocking: a FIFO the sandbox left must not hang a tool (and no tool reads one).
    let opened = openat2(
        confined.root_fd,
        &c_path,
        flags | libc::O_NONBLOCK,
        mode,
        ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS,
    );
    opened.map(File::from).map_err(|errno| match errno {
        libc::EXDEV => path_error(format!(
            "{}: a symlink or `..` leads outside the root; refused",
            shown.display()
        )),
        libc::ENOENT => path_error(format!("{}: no such file or directory", shown.display())),
        libc::ELOOP => path_error(format!("{}: too many symlinks", shown.display())),
        _ => path_error(format!(
            "{}: {}",
            shown.display(),
            std::io::Error::from_raw_os_error(errno)
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_checks() {
        let dir = std::env::temp_dir().join(format!("autocoder-jail-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("root")).unwrap();
        std::fs::create_dir_all(dir.join("root-evil")).unwrap();
        let roots = Roots::new(&[dir.join("root")]).unwrap();
        let root = dir.join("root").canonicalize().unwrap();
        assert!(roots.confine(&format!("{}/a.txt", root.display())).is_ok());
        assert!(roots
            .confine(&format!("{}-evil/a.txt", root.display()))
            .is_err());
        assert!(roots.confine("../x").is_err());
        assert!(roots.confine("a/../../x").is_err());
        assert!(roots.confine("a\0b").is_err());
        assert_eq!(
            roots.confine("./a/b").unwrap().relative,
            PathBuf::from("a/b")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
