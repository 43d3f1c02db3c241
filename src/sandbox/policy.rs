//! What a sandboxed run may do: the limits and paths resolved from the flags, before any backend
//! starts. Parsing of sizes and durations lives here because the flags and the MCP tools share it.

use std::ffi::{CString, OsString};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::ValueEnum;

use super::environment::{self, ToolchainHomes};
use super::{PRIVATE_HOME, PRIVATE_TMP};
use crate::error::Failure;
use crate::workspace::runs_outside::RunsOutside;

/// Open files allowed to the command.
const OPEN_FILES: u64 = 4096;

/// Which engine runs the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum BackendKind {
    /// Landlock, seccomp, namespaces, cgroups or rlimits, in this process tree; no daemon.
    Native,
    /// A container on the local Docker engine.
    Docker,
}

impl BackendKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            BackendKind::Native => "native",
            BackendKind::Docker => "docker",
        }
    }
}

/// Where the command's stdout and stderr go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputMode {
    /// Captured into the result, each stream capped at this many bytes (head and tail kept).
    Capture { max_bytes: u64 },
    /// Passed straight through to our own stdout and stderr.
    Stream,
}

/// Everything a backend needs to run one command.
#[derive(Debug, Clone)]
pub(crate) struct SandboxPolicy {
    /// Canonical path of the directory the command starts in and may write.
    pub workspace: PathBuf,
    pub timeout: Duration,
    pub memory_bytes: u64,
    pub pids: u32,
    pub cpus: f64,
    pub file_size_bytes: u64,
    /// The most all the files the command writes in the workspace may take (`--disk`).
    pub disk_bytes: Option<u64>,
    pub open_files: u64,
    pub network: bool,
    /// The image, for the docker backend.
    pub image: Option<String>,
    /// Names given with `--env`: the docker backend passes only these and the locale.
    pub requested_env: Vec<String>,
    /// The complete environment of the command.
    pub env: Vec<(OsString, OsString)>,
    /// Toolchain homes (rustup, cargo, pyenv, ...) the command may read.
    pub toolchain_dirs: Vec<PathBuf>,
    /// The project's environments outside it (a Python virtualenv and the installation it was
    /// made from), each with why: read like the toolchains.
    pub environments: Vec<(PathBuf, String)>,
    /// Names of credential-like variables left out of `env`.
    pub withheld_env: Vec<String>,
    /// Extra canonical paths the command may read.
    pub read_only: Vec<PathBuf>,
    /// Extra canonical paths the command may write.
    pub read_write: Vec<PathBuf>,
    /// The workspace and the `read_write` paths, each as it was opened and checked.
    pub held: Vec<HeldPath>,
    pub output: OutputMode,
    pub allow_degraded: bool,
    /// The command as given (argv[0] unresolved).
    pub command: Vec<OsString>,
    /// Directories of the workspace seen as others, their writes kept apart.
    pub layered: Vec<Layered>,
    /// Told the captured output as it comes.
    pub watcher: Option<OutputWatcher>,
    /// The workspace's `.git`: read-only (Some(true), among `read_only`), given back with
    /// `--rw` (Some(false)), or none there.
    pub git_read_only: Option<bool>,
    /// Places git on the host would obey that are missing or reached through a link, with what
    /// was there before the command (device and inode): what the command made there is moved
    /// away after it (`sandbox::run`).
    pub watched: Vec<(PathBuf, Option<(u64, u64)>)>,
}

/// Told each piece of the command's captured output as it arrives, with its stream (0 stdout, 1
/// stderr): for a live count of the tests a run has done.
#[derive(Clone)]
pub(crate) struct OutputWatcher(pub Arc<WatchOutput>);

/// What an `OutputWatcher` calls: the stream and the piece.
pub(crate) type WatchOutput = dyn Fn(usize, &[u8]) + Send + Sync;

impl std::fmt::Debug for OutputWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputWatcher")
    }
}

/// A directory of the workspace the command sees as another directory, which stays read-only
/// underneath: what the command writes there is kept in memory (an overlay on a tmpfs) and gone
/// when it ends. heal's private copies see the project's build outputs (`node_modules`, cargo's
/// `target`) so, without copying them. Native backend only, in the sandbox's own mount namespace.
#[derive(Debug, Clone)]
pub(crate) struct Layered {
    /// Where, relative to the workspace: an existing directory, reached through no link.
    pub at: PathBuf,
    /// What it shows: a directory (canonical once checked).
    pub lower: PathBuf,
}

/// What a command asks of the sandbox, before paths are checked and the environment is built.
#[derive(Debug, Clone)]
pub(crate) struct PolicyRequest {
    pub workspace: PathBuf,
    pub timeout: Duration,
    pub memory_bytes: u64,
    pub pids: u32,
    pub cpus: f64,
    pub file_size_bytes: u64,
    pub disk_bytes: Option<u64>,
    pub network: bool,
    /// `--env` requests: `KEY=VALUE` or `KEY`.
    pub env: Vec<String>,
    pub read_only: Vec<PathBuf>,
    pub read_write: Vec<PathBuf>,
    pub output: OutputMode,
    pub allow_degraded: bool,
    pub image: Option<String>,
    pub command: Vec<OsString>,
    pub layered: Vec<Layered>,
    pub watcher: Option<OutputWatcher>,
}

impl PolicyRequest {
    /// Checks the paths (they must exist; the workspace as `checked_workspace` says) and builds
    /// the command's environment.
    /// Long: each path is resolved against the writable ones before it, then the policy's 24 fields.
    pub(crate) fn resolve(self) -> Result<SandboxPolicy, Failure> {
        let held_workspace = checked_workspace(&self.workspace)?;
        let workspace = held_workspace.path.clone();
        let layered = self
            .layered
            .iter()
            .map(|layer| checked_layer(&workspace, layer))
            .collect::<Result<Vec<_>, _>>()?;
        // Links are resolved here, not trusted: one inside the workspace (or, for --ro, inside
        // a --rw path) may be the sandbox's own.
        let resolve = |path: &Path, flag: &str, writable: &[PathBuf]| {
            existing_path(path, flag)?;
            let absolute = std::path::absolute(path)
                .map_err(|err| Failure::usage(format!("{flag} {}: {err}", path.display())))?;
            resolve_without_writable_links(&absolute, writable).map_err(|link| {
                Failure::usage(format!(
                    "{flag} {}: goes through {}, a symbolic link in a place the sandbox can \
                     write (a sandboxed command could have made it)",
                    path.display(),
                    link.display()
                ))
                .with_hint("give the real path")
            })
        };
        // Each --rw against the workspace and the other --rw paths (as given, canonical).
        let rw_given: Vec<PathBuf> = self
            .read_write
            .iter()
            .map(|p| existing_path(p, "--rw"))
            .collect::<Result<_, _>>()?;
        let mut read_write: Vec<PathBuf> = self
            .read_write
            .iter()
            .enumerate()
            .map(|(index, p)| {
                let others = std::iter::once(workspace.clone())
                    .chain(
                        rw_given
                            .iter()
                            .enumerate()
                            .filter(|&(other, _)| other != index)
                            .map(|(_, path)| path.clone()),
                    )
                    .collect::<Vec<_>>();
                resolve(p, "--rw", &others)
            })
            .collect::<Result<_, _>>()?;
        let writable: Vec<PathBuf> = std::iter::once(workspace.clone())
            .chain(read_write.iter().cloned())
            .collect();
        let mut read_only: Vec<PathBuf> = self
            .read_only
            .iter()
            .map(|p| resolve(p, "--ro", &writable))
            .collect::<Result<_, _>>()?;
        // What git on the host obeys in the workspace (its repository, the submodules', the git
        // directory, hooks directory and config files it names) is read-only to the command
        // unless `--rw` gives it back (autocoder writes its own files in `.git` too), and the
        // directories on the way to it are mount points, which cannot be renamed away; what is
        // missing there is watched (`sandbox::run` moves away what the command made).
        let git = workspace.join(".git");
        let mut git_read_only = None;
        let obeyed = RunsOutside::of(&workspace).git_paths(&workspace);
        for held in obeyed.held {
            let given_back = read_write.contains(&held);
            if held == git {
                git_read_only = Some(!given_back);
            }
            if !given_back {
                read_only.push(held);
            }
        }
        // With --disk the overlay's write-back holds them (no mount may lie inside it).
        if self.disk_bytes.is_none() {
            read_write.extend(obeyed.pinned);
        }
        // The workspace's rule holds for every writable path, and each is held as it is.
        let held = std::iter::once(Ok(held_workspace))
            .chain(read_write.iter().map(|path| held_writable(path)))
            .collect::<Result<Vec<_>, _>>()?;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let toolchains = ToolchainHomes::discover(home.as_deref());
        let env = environment::build(
            &self.env,
            &toolchains,
            Path::new(PRIVATE_HOME),
            Path::new(PRIVATE_TMP),
        )?;
        Ok(SandboxPolicy {
            workspace,
            timeout: self.timeout,
            memory_bytes: self.memory_bytes,
            pids: self.pids,
            cpus: self.cpus,
            file_size_bytes: self.file_size_bytes,
            disk_bytes: self.disk_bytes,
            open_files: OPEN_FILES,
            network: self.network,
            image: self.image,
            requested_env: self
                .env
                .iter()
                .map(|e| e.split_once('=').map_or(e.as_str(), |(k, _)| k).to_string())
                .collect(),
            env: env.vars,
            withheld_env: env.withheld,
            toolchain_dirs: toolchains.readable_dirs(),
            environments: Vec::new(),
            read_only,
            read_write,
            held,
            output: self.output,
            allow_degraded: self.allow_degraded,
            command: self.command,
            layered,
            watcher: self.watcher,
            git_read_only,
            watched: obeyed.watched,
        })
    }
}

/// `layer` with its paths checked: `at` a directory of `workspace` (canonical) reached through
/// no link, `lower` an existing directory, made canonical; neither may hold what an overlay's
/// options cannot spell (`,` `:` `\`).
fn checked_layer(workspace: &Path, layer: &Layered) -> Result<Layered, Failure> {
    let shown = layer.at.display();
    let plain = layer
        .at
        .components()
        .all(|part| matches!(part, std::path::Component::Normal(_)));
    if !plain || layer.at.as_os_str().is_empty() {
        return Err(Failure::usage(format!(
            "a layered directory, {shown}: not a path inside the workspace"
        )));
    }
    let mut place = workspace.to_path_buf();
    for part in layer.at.components() {
        place.push(part);
        let is_dir = place
            .symlink_metadata()
            .is_ok_and(|meta| meta.file_type().is_dir());
        if !is_dir {
            return Err(Failure::usage(format!(
                "a layered directory, {shown}: not a directory of the workspace"
            )));
        }
    }
    let lower = existing_path(&layer.lower, "a layered directory's content")?;
    for path in [&place, &lower] {
        if !path.is_dir()
            || path
                .as_os_str()
                .as_bytes()
                .iter()
                .any(|b| b",:\\".contains(b))
        {
            return Err(Failure::usage(format!(
                "cannot layer {}: a directory whose path holds no `,` `:` or `\\` is needed",
                path.display()
            )));
        }
    }
    Ok(Layered {
        at: layer.at.clone(),
        lower,
    })
}

/// A path the command may write, opened once (an `O_PATH` descriptor) and known by that
/// descriptor from then on: the sandbox mounts the descriptor, never the name again, so a
/// directory and a link swapped at the name meanwhile redirect nothing.
#[derive(Debug, Clone)]
pub(crate) struct HeldPath {
    /// The kernel's path of what was opened (canonical).
    pub path: PathBuf,
    pub fd: Arc<OwnedFd>,
}

/// The workspace `given`, once it is known to be one a command may be handed: an existing
/// directory, reached through no symbolic link (a sandboxed command could have made one, in an
/// earlier run, where the next workspace is looked for), and not `too_wide` (keys, shell
/// start-up files, every other project), judged by the directory itself, not its name (a bind
/// mount of `/` elsewhere is `/`). It is opened once, and what is checked is what was opened;
/// a relative path is taken from the current directory as it is held, not by its name.
pub(crate) fn checked_workspace(given: &Path) -> Result<HeldPath, Failure> {
    let shown = given.display();
    let c_path = CString::new(given.as_os_str().as_bytes())
        .map_err(|_| Failure::usage(format!("--workspace {shown}: contains a NUL byte")))?;
    let opened =
        crate::sys::open_path_no_symlinks_at(nix::fcntl::AT_FDCWD, &c_path).and_then(|fd| {
            let is_dir = std::fs::File::from(fd.try_clone().map_err(|_| libc::EBADF)?)
                .metadata()
                .is_ok_and(|meta| meta.is_dir());
            if is_dir {
                Ok(fd)
            } else {
                Err(libc::ENOTDIR)
            }
        });
    let fd = opened.map_err(|errno| match errno {
        libc::ELOOP => {
            let hint = match given.canonicalize() {
                Ok(real) => format!("give the real path: --workspace {}", real.display()),
                Err(_) => "give the real path".to_string(),
            };
            Failure::usage(format!(
                "--workspace {shown}: goes through a symbolic link (a sandboxed command could have made it)"
            ))
            .with_hint(hint)
        }
        libc::ENOTDIR => Failure::usage(format!("--workspace {shown}: not a directory")),
        errno => Failure::usage(format!(
            "--workspace {shown}: {}",
            std::io::Error::from_raw_os_error(errno)
        ))
        .with_hint("give an existing directory"),
    })?;
    let path = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(|err| {
        Failure::external(format!("cannot tell where --workspace {shown} is: {err}"))
    })?;
    if let Some(what) = crate::workspace::too_wide(fd.as_fd()) {
        return Err(Failure::usage(format!(
            "the workspace cannot be {} ({what}): the command could write everything in it",
            path.display()
        ))
        .with_hint("run from the project's directory, or give it with --workspace DIR"));
    }
    Ok(HeldPath {
        path,
        fd: Arc::new(fd),
    })
}

/// A `--rw` path resolved as `resolve_without_writable_links` says, held as `checked_workspace`
/// holds the workspace: opened once, with no symbolic link left on the way, and judged by what
/// was opened.
fn held_writable(resolved: &Path) -> Result<HeldPath, Failure> {
    let shown = resolved.display();
    let c_path = CString::new(resolved.as_os_str().as_bytes())
        .map_err(|_| Failure::usage(format!("--rw {shown}: contains a NUL byte")))?;
    let fd = crate::sys::open_path_no_symlinks(&c_path).map_err(|errno| {
        Failure::usage(format!(
            "--rw {shown}: {}",
            std::io::Error::from_raw_os_error(errno)
        ))
        .with_hint("the path must not change while the sandbox starts (a symlink was swapped in?)")
    })?;
    if let Some(what) = crate::workspace::too_wide(fd.as_fd()) {
        return Err(Failure::usage(format!(
            "--rw {shown} ({what}): the command could write everything in it"
        ))
        .with_hint("give a directory of the project's, or let it be read with --ro"));
    }
    Ok(HeldPath {
        path: resolved.to_path_buf(),
        fd: Arc::new(fd),
    })
}

/// `path` with its symbolic links resolved, like `canonicalize`, unless resolving it follows a
/// link that lies inside one of the `writable` directories (canonical paths): the sandbox can
/// make such links, so a run must not mount wherever they point (a `.venv/bin` on PATH turned
/// into a link to `/run` would hand the next run the host's sockets). The error is the link.
pub(crate) fn resolve_without_writable_links(
    path: &Path,
    writable: &[PathBuf],
) -> Result<PathBuf, PathBuf> {
    use std::path::Component;
    const MAX_LINKS: usize = 40;
    if without_links(path) {
        return Ok(path.to_path_buf());
    }
    let mut pending: Vec<std::ffi::OsString> = path
        .components()
        .rev()
        .filter_map(|part| match part {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut resolved = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            resolved.pop();
            continue;
        }
        let next = resolved.join(&part);
        let is_link = next
            .symlink_metadata()
            .is_ok_and(|meta| meta.file_type().is_symlink());
        if !is_link {
            resolved = next;
            continue;
        }
        links += 1;
        if links > MAX_LINKS || writable.iter().any(|dir| next.starts_with(dir)) {
            return Err(next);
        }
        let target = std::fs::read_link(&next).map_err(|_| next.clone())?;
        if target.is_absolute() {
            resolved = PathBuf::from("/");
        }
        pending.extend(target.components().rev().filter_map(|part| match part {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        }));
    }
    Ok(resolved)
}

/// Whether `path` is absolute and plain (no `.` or `..`), exists, and has no symbolic link in
/// any component: then it is its own resolution, found with one system call instead of a walk.
fn without_links(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let plain = path.is_absolute()
        && path.components().all(|part| {
            matches!(
                part,
                std::path::Component::RootDir | std::path::Component::Normal(_)
            )
        });
    // openat2 itself, not sys::open_path_no_symlinks: without openat2 that falls back to
    // checking the last component only, which would pass a link earlier in the path.
    plain
        && std::ffi::CString::new(path.as_os_str().as_bytes()).is_ok_and(|c_path| {
            crate::sys::openat2(
                nix::fcntl::AT_FDCWD,
                &c_path,
                libc::O_PATH,
                0,
                nix::fcntl::ResolveFlag::RESOLVE_NO_SYMLINKS,
            )
            .is_ok()
        })
}

fn existing_path(path: &Path, flag: &str) -> Result<PathBuf, Failure> {
    path.canonicalize().map_err(|err| {
        Failure::usage(format!("{flag} {}: {err}", path.display()))
            .with_hint("give an existing path")
    })
}

/// Parses `512M`, `2G`, `64k`, `1048576`, `1.5G` into bytes (binary multiples).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let invalid = || {
        format!(
            "`{text}` is not a size: use a number with an optional K, M, G or T suffix, e.g. 512M"
        )
    };
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let lower = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (number, shift) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 10),
        Some('m') => (&lower[..lower.len() - 1], 20),
        Some('g') => (&lower[..lower.len() - 1], 30),
        Some('t') => (&lower[..lower.len() - 1], 40),
        _ => (lower, 0),
    };
    let value: f64 = number.trim().parse().map_err(|_| invalid())?;
    if !value.is_finite() || value <= 0.0 {
        return Err(invalid());
    }
    let bytes = value * (1u64 << shift) as f64;
    if bytes > u64::MAX as f64 / 2.0 {
        return Err(format!("`{text}` is too large"));
    }
    Ok(bytes as u64)
}

/// Parses `90s`, `10m`, `1h30m`, `1500ms`, `2.5s`; a plain number is seconds.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let invalid = || {
        format!("`{text}` is not a duration: use e.g. 90s, 10m, 1h30m or 1500ms (a plain number is seconds)")
    };
    let zero =
        || format!("`{text}` is no time at all: a limit must be more than zero, e.g. 30s or 10m");
    let trimmed = text.trim();
    if let Ok(seconds) = trimmed.parse::<f64>() {
        if seconds == 0.0 {
            return Err(zero());
        }
        return positive_duration(seconds).ok_or_else(invalid);
    }
    let mut total = 0.0;
    let mut rest = trimmed;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(invalid)?;
        if digits == 0 {
            return Err(invalid());
        }
        let value: f64 = rest[..digits].parse().map_err(|_| invalid())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            _ => return Err(invalid()),
        };
        total += value * scale;
        rest = &rest[unit_len..];
    }
    if total == 0.0 {
        return Err(zero());
    }
    positive_duration(total).ok_or_else(invalid)
}

fn positive_duration(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && seconds > 0.0 && seconds < 1e9)
        .then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("64KiB"), Ok(64 << 10));
        assert_eq!(parse_size("100"), Ok(100));
        assert_eq!(parse_size("1.5K"), Ok(1536));
        for bad in ["", "M", "12Q", "-1M", "0", "nan"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        for bad in ["", "s", "10x", "-5", "0", "1h-3m"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        for zero in ["0", "0s", "0m0s"] {
            let said = parse_duration(zero).unwrap_err();
            assert!(said.contains("more than zero"), "{zero}: {said}");
        }
    }
}
