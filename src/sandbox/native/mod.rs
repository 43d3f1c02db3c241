//! The native backend: isolation from the kernel's own mechanisms, with no daemon and no root.
//!
//! One `clone3` makes the child in new mount, PID and IPC namespaces (and a user namespace when
//! we are not root). The child hides the host's `/tmp`, `/run` and `/dev/shm` behind private
//! tmpfs mounts (host UNIX sockets live there), mounts the workspace back, mounts a private
//! `/proc`, joins the run's cgroups, drops to an unprivileged identity, and applies Landlock and
//! seccomp before it forks the command (see `child`). Started as root, the command runs as uid
//! `SANDBOX_UID` and sees the workspace through an id-mapped mount, so it can write root's files
//! without being root. The parent supervises with a pidfd and kills the namespace's init on
//! timeout, which takes every process inside with it.

pub mod cgroup;
pub mod child;
pub mod fs_rules;
pub mod sys;
pub mod syscall_filter;

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use self::cgroup::RunCgroups;
use self::child::{ChildPlan, Exposure, MountPlan};
use self::fs_rules::FsRules;
use super::outcome::{Degradation, SandboxResult};
use super::policy::{BackendKind, OutputMode, SandboxPolicy};
use super::supervise::{self, Streams};
use super::{layers_base, resolve_command, LimitEvidence, PRIVATE_HOME, PRIVATE_TMP};
use crate::error::{Failure, Kind};

/// The host uid and gid a command started by root runs as.
pub const SANDBOX_UID: u32 = 65_500;

/// System directories every command may read and execute.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys", "/proc",
];

/// Directories covered by an empty tmpfs: where host UNIX sockets and other users' temp files are.
const HIDDEN_DIRS: &[&str] = &["/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm"];

pub fn run(policy: &SandboxPolicy) -> Result<SandboxResult, Failure> {
    let started = Instant::now();
    // SAFETY: plain getters.
    let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let root = euid == 0;
    let program = resolve_command(&policy.command[0], &policy.env, &policy.workspace)?;

    let mut layers = layers_base(policy, BackendKind::Native);
    let mut degraded = Vec::new();

    let cgroups = if root {
        match RunCgroups::create(policy.memory_bytes, policy.pids, policy.cpus) {
            Ok(cgroups) => Some(cgroups),
            Err(reason) => {
                crate::commands::note(
                    "sandbox",
                    &format!("cgroups unavailable ({reason}); using rlimits"),
                );
                None
            }
        }
    } else {
        None
    };
    layers.resources.mechanism = if cgroups.is_some() {
        "cgroup-v1"
    } else {
        "rlimit"
    }
    .into();
    layers.resources.cpu_mechanism = if cgroups.is_some() {
        "cfs-quota"
    } else {
        "affinity"
    }
    .into();
    let cgroup_procs = match &cgroups {
        Some(cgroups) => cgroups.open_procs().map_err(Failure::external)?,
        None => Vec::new(),
    };

    // Which paths the command may read: the system, its toolchain, what was asked for.
    let mut read_only: Vec<PathBuf> = SYSTEM_DIRS
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect();
    read_only.extend(policy.toolchain_dirs.iter().cloned());
    if let Some(path) = super::lookup_env(&policy.env, "PATH") {
        read_only
            .extend(std::env::split_paths(path).filter(|dir| dir.is_absolute() && dir.is_dir()));
    }
    if let Some(prefix) = program
        .canonicalize()
        .ok()
        .and_then(|p| p.parent()?.parent().map(Path::to_path_buf))
    {
        if !read_only.iter().any(|dir| prefix.starts_with(dir)) && prefix != Path::new("/") {
            read_only.push(prefix);
        }
    }
    read_only.extend(policy.read_only.iter().cloned());
    let mut read_write = vec![policy.workspace.clone()];
    read_write.extend(policy.read_write.iter().cloned());

    let mut namespaces = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    if !root {
        namespaces |= libc::CLONE_NEWUSER;
    }
    let mut hidden: Vec<PathBuf> = HIDDEN_DIRS
        .iter()
        .map(PathBuf::from)
        .filter(|dir| dir.symlink_metadata().is_ok_and(|m| m.is_dir()))
        .collect();
    // Our home holds much that is nobody else's business; and started as root, a 0700 directory
    // above a toolchain would lock the sandbox uid out of it. Both are replaced by an empty tmpfs
    // with the toolchains mounted back.
    let home = std::env::var_os("HOME").and_then(|h| PathBuf::from(h).canonicalize().ok());
    let closed = if root {
        read_only
            .iter()
            .filter_map(|p| closed_ancestor(p))
            .collect()
    } else {
        Vec::new()
    };
    for dir in home.into_iter().chain(closed) {
        let system = SYSTEM_DIRS.iter().any(|system| dir.starts_with(system));
        let covered = hidden.iter().any(|outer| dir.starts_with(outer));
        if dir.is_dir() && dir != Path::new("/") && !system && !covered {
            hidden.push(dir);
        }
    }
    dedupe_nested(&mut read_only);
    let idmaps = if root {
        IdMaps::for_paths(&read_write)?
    } else {
        IdMaps::default()
    };
    let exposures = plan_exposures(&hidden, &read_only, &read_write, &idmaps);

    let seccomp =
        super::native::syscall_filter::compile(policy.network).map_err(Failure::external)?;
    let (report_read, report_write) = pipe()?;
    let (stdout_read, stdout_write, stderr_read, stderr_write) = match policy.output {
        OutputMode::Capture { .. } => {
            let (out_r, out_w) = pipe()?;
            let (err_r, err_w) = pipe()?;
            (Some(out_r), Some(out_w), Some(err_r), Some(err_w))
        }
        OutputMode::Stream => (None, None, None, None),
    };
    let stdin = open_stdin()?;

    let mut rlimits = vec![
        (libc::RLIMIT_FSIZE, policy.file_size_bytes),
        (
            libc::RLIMIT_NOFILE,
            policy.open_files.min(hard_limit(libc::RLIMIT_NOFILE)),
        ),
        (libc::RLIMIT_CORE, 0),
    ];
    if cgroups.is_none() {
        rlimits.push((libc::RLIMIT_NPROC, u64::from(policy.pids)));
        rlimits.push((libc::RLIMIT_DATA, policy.memory_bytes));
    }
    let tmp_options = if root {
        format!(
            "mode=0700,uid={SANDBOX_UID},gid={SANDBOX_UID},size={}",
            policy.memory_bytes
        )
    } else {
        format!("mode=0700,size={}", policy.memory_bytes)
    };
    let mut plan = ChildPlan {
        status_fd: report_write.as_raw_fd(),
        stdin: stdin.as_ref().map_or(0, AsRawFd::as_raw_fd),
        stdout: stdout_write.as_ref().map(AsRawFd::as_raw_fd),
        stderr: stderr_write.as_ref().map(AsRawFd::as_raw_fd),
        self_map: (!root).then_some((euid, egid)),
        cgroup_procs: cgroup_procs.iter().map(AsRawFd::as_raw_fd).collect(),
        rlimits,
        cpu_affinity: cgroups.is_none().then(|| policy.cpus.ceil() as usize),
        mounts: Some(MountPlan {
            hidden: hidden
                .iter()
                .map(|dir| {
                    let options = match dir.to_str() {
                        Some("/tmp") => tmp_options.clone(),
                        Some("/dev/shm") => format!("mode=1777,size={}", policy.memory_bytes),
                        _ => "mode=0755,size=64k".to_string(),
                    };
                    (c_path(dir), CString::new(options).expect("no NUL"))
                })
                .collect(),
            exposures: exposures
                .iter()
                .map(|(path, userns)| Exposure {
                    path: c_path(path),
                    is_dir: path.is_dir(),
                    idmap_userns: userns.map(|fd| fd.as_raw_fd()),
                })
                .collect(),
            home: c_path(Path::new(PRIVATE_HOME)),
        }),
        mount_proc: true,
        switch_to: root.then_some((SANDBOX_UID, SANDBOX_UID)),
        fs_rules: FsRules {
            read_only: read_only.clone(),
            read_write: read_write
                .iter()
                .cloned()
                .chain([PathBuf::from(PRIVATE_TMP), PathBuf::from("/dev/shm")])
                .collect(),
            network: policy.network,
        },
        seccomp: seccomp.programs,
        cwd: c_path(&policy.workspace),
        program: c_path(&program),
        argv: policy
            .command
            .iter()
            .map(|arg| c_string(arg.clone()))
            .collect::<Result<_, _>>()?,
        envp: environment_block(&policy.env, None)?,
        allow_degraded: policy.allow_degraded,
    };

    let mut private_dir: Option<PrivateDir> = None;
    let (pid, pidfd) = match sys::clone3(namespaces as u64) {
        Ok(Some(parent)) => parent,
        Ok(None) => child::run(&plan),
        Err(errno) if policy.allow_degraded => {
            degraded.push(Degradation {
                layer: "containment".into(),
                reason: format!("cannot create namespaces: {}", std::io::Error::from_raw_os_error(errno)),
            });
            // Without a mount namespace there is no private /tmp: use a private directory on the
            // host's, and run as we are (without capabilities) since nothing can be id-mapped.
            let private = private_dir.insert(PrivateDir::create()?);
            plan.envp = environment_block(&policy.env, Some(&private.path))?;
            plan.fs_rules.read_write = read_write.iter().cloned().chain([private.path.clone()]).collect();
            plan.self_map = None;
            plan.mounts = None;
            plan.mount_proc = false;
            plan.switch_to = None;
            // SAFETY: fork in a single-threaded process (clone3 may be the very thing refused).
            match unsafe { libc::fork() } {
                0 => child::run(&plan),
                pid if pid > 0 => {
                    let pidfd = sys::pidfd_open(pid).map_err(|e| {
                        Failure::external(format!("cannot watch the command: {}", std::io::Error::from_raw_os_error(e)))
                    })?;
                    (pid, pidfd)
                }
                _ => return Err(Failure::external(format!("cannot fork: {}", std::io::Error::last_os_error()))),
            }
        }
        Err(errno) => {
            return Err(Failure::external(format!(
                "cannot create the sandbox's namespaces: {}",
                std::io::Error::from_raw_os_error(errno)
            ))
            .with_hint(
                "allow user namespaces (sysctl user.max_user_namespaces, kernel.apparmor_restrict_unprivileged_userns=0), \
                 use --backend docker, or pass --allow-degraded to run with the layers that remain",
            ))
        }
    };
    drop((
        report_write,
        stdout_write,
        stderr_write,
        stdin,
        cgroup_procs,
        idmaps,
    ));

    let max_output = match policy.output {
        OutputMode::Capture { max_bytes } => max_bytes,
        OutputMode::Stream => 0,
    };
    let streams = Streams {
        stdout: stdout_read,
        stderr: stderr_read,
        report: Some(report_read),
    };
    let run = supervise::supervise(
        pid,
        &pidfd,
        streams,
        max_output,
        policy.timeout,
        started,
        || {
            // SAFETY: signalling our own child and its process group.
            let _ = sys::pidfd_send_signal(pidfd.as_raw_fd(), libc::SIGKILL);
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        },
    );

    let mut command_status = None;
    for line in &run.report {
        let (tag, rest) = line.split_once(' ').unwrap_or((line, ""));
        match tag {
            "status" => command_status = rest.parse::<i32>().ok(),
            "degraded" => {
                let (layer, reason) = rest.split_once(' ').unwrap_or((rest, ""));
                degraded.push(Degradation {
                    layer: layer.into(),
                    reason: reason.into(),
                });
            }
            "fail" => {
                let (layer, reason) = rest.split_once(' ').unwrap_or((rest, ""));
                return Err(Failure::external(format!("cannot apply the {layer} layer: {reason}")).with_hint(
                    "nothing was run; pass --allow-degraded to run with the layers that remain (the result lists them)",
                ));
            }
            "exec" => {
                return Err(exec_failure(
                    &policy.command[0],
                    &program,
                    rest.parse().unwrap_or(libc::EIO),
                ))
            }
            _ => {}
        }
    }
    let (exit_code, signal) = match command_status {
        Some(status) if libc::WIFEXITED(status) => (Some(libc::WEXITSTATUS(status)), None),
        Some(status) if libc::WIFSIGNALED(status) => (None, Some(libc::WTERMSIG(status))),
        _ if run.timed_out => (None, Some(libc::SIGKILL)),
        _ => {
            return Err(Failure::external(format!(
                "the sandbox's init process ended unexpectedly (wait status {})",
                run.wait_status
            )))
        }
    };

    let events = cgroups.as_ref().map(RunCgroups::events).unwrap_or_default();
    let cgroups_used = cgroups.is_some();
    drop(cgroups);
    let stdout_truncated = run.stdout.as_ref().is_some_and(|c| c.truncated());
    let stderr_truncated = run.stderr.as_ref().is_some_and(|c| c.truncated());
    let stdout = run.stdout.map(|c| c.into_text());
    let stderr = run.stderr.map(|c| c.into_text());
    let limit_hit = LimitEvidence {
        timed_out: run.timed_out,
        oom_killed: events.oom_killed,
        pids_max_hit: events.pids_max_hit,
        signal,
        stderr: stderr.as_deref(),
        recorded: cgroups_used,
        truncated: stdout_truncated || stderr_truncated,
    }
    .limit_hit();

    layers.filesystem.read_only = read_only.iter().map(|p| p.display().to_string()).collect();
    layers.filesystem.read_write = plan
        .fs_rules
        .read_write
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    layers.filesystem.hidden = hidden.iter().map(|p| p.display().to_string()).collect();
    layers.identity.uid = if root { SANDBOX_UID } else { euid };
    layers.identity.gid = if root { SANDBOX_UID } else { egid };
    layers.identity.user_namespace = !root;
    layers.identity.idmapped_workspace = root;
    let namespaced = plan.mounts.is_some();
    layers.containment.pid_namespace = namespaced;
    layers.containment.mount_namespace = namespaced;
    layers.containment.ipc_namespace = namespaced;
    for degradation in &degraded {
        match degradation.layer.as_str() {
            "filesystem" => layers.filesystem.mechanism = "none".into(),
            "seccomp" => layers.identity.seccomp = false,
            "identity" if root => layers.identity.root = true,
            _ => {}
        }
    }
    if !namespaced && root {
        layers.identity.uid = 0;
        layers.identity.gid = 0;
        layers.identity.root = true;
        layers.identity.idmapped_workspace = false;
    }
    layers.degraded = degraded;

    Ok(SandboxResult {
        backend: BackendKind::Native,
        command: policy
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        exit_code,
        signal,
        timed_out: run.timed_out,
        limit_hit,
        duration_ms: run.elapsed.as_millis() as u64,
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        layers,
    })
}

/// `KEY=VALUE` strings for execve; `private` replaces the home and temporary directory.
fn environment_block(
    env: &[(OsString, OsString)],
    private: Option<&Path>,
) -> Result<Vec<CString>, Failure> {
    env.iter()
        .map(|(key, value)| {
            let value = match private {
                Some(dir) if key == "HOME" => dir.join("home").into_os_string(),
                Some(dir) if key == "TMPDIR" => dir.as_os_str().to_os_string(),
                _ => value.clone(),
            };
            let mut pair = key.clone();
            pair.push("=");
            pair.push(value);
            c_string(pair)
        })
        .collect()
}

/// A private temporary directory (with `home/` inside) on the host, for runs without a mount
/// namespace; removed with everything in it when the run ends.
struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    fn create() -> Result<PrivateDir, Failure> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!("autocoder-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .and_then(|()| std::fs::create_dir(path.join("home")))
            .map_err(|err| {
                Failure::external(format!(
                    "cannot create a private directory in {}: {err}",
                    path.display()
                ))
            })?;
        Ok(PrivateDir { path })
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
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
    use std::os::unix::fs::PermissionsExt;
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

/// User namespaces whose mappings show each written path's owner as `SANDBOX_UID` (root only).
#[derive(Default)]
struct IdMaps {
    /// (owner uid, owner gid, namespace descriptor)
    namespaces: Vec<(u32, u32, OwnedFd)>,
    /// For each path, the index of its namespace.
    paths: Vec<(PathBuf, usize)>,
}

impl IdMaps {
    fn for_paths(paths: &[PathBuf]) -> Result<IdMaps, Failure> {
        let mut maps = IdMaps::default();
        for path in paths {
            let meta = path
                .metadata()
                .map_err(|err| Failure::usage(format!("cannot read {}: {err}", path.display())))?;
            let owner = (meta.uid(), meta.gid());
            let index = match maps
                .namespaces
                .iter()
                .position(|(u, g, _)| (*u, *g) == owner)
            {
                Some(index) => index,
                None => {
                    maps.namespaces
                        .push((owner.0, owner.1, mapping_namespace(owner.0, owner.1)?));
                    maps.namespaces.len() - 1
                }
            };
            maps.paths.push((path.clone(), index));
        }
        Ok(maps)
    }

    fn for_path(&self, path: &Path) -> Option<&OwnedFd> {
        let (_, index) = self.paths.iter().find(|(p, _)| p == path)?;
        Some(&self.namespaces[*index].2)
    }
}

/// A user namespace mapping `uid`/`gid` to `SANDBOX_UID`, held open by descriptor. It is made by a
/// short-lived child, since a namespace exists only while something is in it or refers to it.
fn mapping_namespace(uid: u32, gid: u32) -> Result<OwnedFd, Failure> {
    let failure = |what: &str, err: std::io::Error| {
        Failure::external(format!("cannot prepare the id-mapped workspace ({what}): {err}"))
            .with_hint("the kernel must support id-mapped mounts (Linux 5.12+) on this filesystem; or pass --allow-degraded")
    };
    let (pid, pidfd) = match sys::clone3(libc::CLONE_NEWUSER as u64) {
        Ok(Some(parent)) => parent,
        Ok(None) => loop {
            // SAFETY: the child only waits to be killed.
            unsafe { libc::pause() };
        },
        Err(errno) => return Err(failure("clone", std::io::Error::from_raw_os_error(errno))),
    };
    let result = (|| {
        std::fs::write(
            format!("/proc/{pid}/uid_map"),
            format!("{uid} {SANDBOX_UID} 1"),
        )
        .map_err(|e| failure("uid_map", e))?;
        std::fs::write(
            format!("/proc/{pid}/gid_map"),
            format!("{gid} {SANDBOX_UID} 1"),
        )
        .map_err(|e| failure("gid_map", e))?;
        std::fs::File::open(format!("/proc/{pid}/ns/user"))
            .map(OwnedFd::from)
            .map_err(|e| failure("ns/user", e))
    })();
    let _ = sys::pidfd_send_signal(pidfd.as_raw_fd(), libc::SIGKILL);
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    result
}

/// The paths to mount again inside the child: those under a hidden directory, and (as root) the
/// writable ones, which get an id mapping. A path inside another one with the same mapping
/// comes along with it.
fn plan_exposures<'a>(
    hidden: &[PathBuf],
    read_only: &[PathBuf],
    read_write: &[PathBuf],
    idmaps: &'a IdMaps,
) -> Vec<(PathBuf, Option<&'a OwnedFd>)> {
    let mut wanted: Vec<(PathBuf, Option<&OwnedFd>)> = Vec::new();
    for path in read_only.iter().chain(read_write) {
        let userns = idmaps.for_path(path);
        if userns.is_some() || hidden.iter().any(|dir| path.starts_with(dir)) {
            wanted.push((path.clone(), userns));
        }
    }
    wanted.sort_by_key(|(path, _)| path.as_os_str().len());
    let mut chosen: Vec<(PathBuf, Option<&OwnedFd>)> = Vec::new();
    for (path, userns) in wanted {
        let covered = chosen.iter().any(|(outer, outer_ns)| {
            path.starts_with(outer)
                && outer_ns.map(AsRawFd::as_raw_fd) == userns.map(AsRawFd::as_raw_fd)
        });
        if !covered {
            chosen.push((path, userns));
        }
    }
    chosen
}

fn pipe() -> Result<(OwnedFd, OwnedFd), Failure> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Failure::external(format!(
            "cannot create a pipe: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: the kernel just gave us these descriptors.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Our stdin when it is a pipe or a file; `/dev/null` instead of a terminal, so nothing inside
/// can read (or type into) it.
fn open_stdin() -> Result<Option<OwnedFd>, Failure> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return Ok(None);
    }
    std::fs::File::open("/dev/null")
        .map(|f| Some(OwnedFd::from(f)))
        .map_err(|err| Failure::external(format!("cannot open /dev/null: {err}")))
}

fn hard_limit(resource: libc::__rlimit_resource_t) -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid rlimit struct.
    unsafe { libc::getrlimit(resource, &mut limit) };
    limit.rlim_max
}

fn c_path(path: &Path) -> CString {
    // Paths come from canonicalized directories and PATH entries, which cannot hold NUL.
    CString::new(path.as_os_str().as_bytes()).expect("paths hold no NUL byte")
}

fn c_string(text: OsString) -> Result<CString, Failure> {
    let shown = text.to_string_lossy().into_owned();
    CString::new(text.into_vec())
        .map_err(|_| Failure::usage(format!("`{shown}` contains a NUL byte")))
}

fn exec_failure(given: &OsStr, program: &Path, errno: i32) -> Failure {
    let name = given.to_string_lossy();
    let err = std::io::Error::from_raw_os_error(errno);
    if errno == libc::ENOENT {
        Failure::new(Kind::CommandNotFound, anyhow::anyhow!("{name}: not found inside the sandbox ({err})"))
            .with_hint(format!(
                "{} exists outside; if it is a script, its interpreter must be readable inside too (add --ro DIR)",
                program.display()
            ))
    } else {
        Failure::new(Kind::CommandNotExecutable, anyhow::anyhow!("{name}: cannot execute {}: {err}", program.display()))
            .with_hint("check its execute permission, or add its directory with --ro DIR if it lies outside the readable paths")
    }
}
