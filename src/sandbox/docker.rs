//! The docker backend: the same policy in a container on the local Docker engine, for projects
//! that need an image's toolchain. Slower (a daemon round trip per run) but the same result shape.
//!
//! The container gets `--network none --read-only --cap-drop ALL --security-opt
//! no-new-privileges`, the limits as `--memory`, `--pids-limit`, `--cpus` and ulimits, a private
//! tmpfs `/tmp`, and the workspace bind-mounted at the same path. It runs as the workspace's
//! owner, so it can write there. Started as root, the engine is never handed a path by name:
//! each is a copy of the mount we opened (nosuid and nodev, so a set-id file made there is
//! useless; writable ones id-mapped), attached in a private directory, and a root-owned
//! workspace is written by a uid of the run's own, as the native backend does, its files landing
//! as root's. Variable values are handed to the docker client in a file only we may read
//! (`--env-file`), never on its command line nor in its own environment. Should autocoder be
//! killed, a `Reaper` removes the container and what was made for it.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{Mode, SFlag};

use super::native::child::BindPlan;
use super::native::trees::{self, Maker};
use super::native::view::{self, Access};
use super::native::SandboxUid;
use super::policy::{BackendKind, OutputMode, SandboxPolicy};
use super::result::{Layers, SandboxResult};
use super::supervise::{self, Streams, TerminationSignals, Watch};
use super::{layers_base, result_of, Ending, PRIVATE_HOME, PRIVATE_TMP};
use crate::error::{Failure, Kind};

/// Variables of ours the docker client itself is given: where the engine is and how to reach
/// it. Nothing of the command's: a `PATH`, `LD_PRELOAD` or `DOCKER_HOST` meant for the
/// command would otherwise choose what the client (often root) runs or talks to.
const CLIENT_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_CONFIG",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
    "DOCKER_API_VERSION",
    "XDG_RUNTIME_DIR",
    // An engine reached over ssh (DOCKER_HOST=ssh://...).
    "SSH_AUTH_SOCK",
];

/// Variables the container gets without being asked: the locale and terminal, and the private
/// home and temporary directory. The host's PATH and toolchain homes mean nothing in an image.
const PASSED: &[&str] = &[
    "LANG", "LANGUAGE", "TERM", "TZ", "NO_COLOR", "HOME", "TMPDIR",
];

/// Long: the steps run in this order on purpose: signals blocked, reaper first, mounts dropped after rm.
pub(crate) fn run(policy: &SandboxPolicy) -> Result<SandboxResult, Failure> {
    let started = Instant::now();
    // A little back: status change times come from the kernel's coarse clock, a tick behind.
    let started_at = std::time::SystemTime::now() - std::time::Duration::from_millis(20);
    let image = image_of(policy)?;
    let (owner_uid, owner_gid) =
        view::open_bind(policy, &policy.workspace, Access::ReadWrite)?.owner;
    let root = nix::unistd::geteuid().is_root();
    let run_uid = if root && owner_uid == 0 {
        Some(SandboxUid::take()?)
    } else {
        None
    };
    let (uid, gid) = run_uid
        .as_ref()
        .map_or((owner_uid, owner_gid), |run| (run.uid, run.uid));
    let name = format!(
        "autocoder-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    );
    // Blocked first: a signal while the mounts are staged must not leave them behind.
    let signals = TerminationSignals::block()?;
    let env_path = std::env::temp_dir().join(format!("{name}.env"));
    let seccomp_path = std::env::temp_dir().join(format!("{name}.seccomp.json"));
    let staging = root.then(|| Path::new(STAGING).join(&name));
    // Started before anything is made, and told last (dropped after all else here).
    let mut reaper = Reaper::start(
        &name,
        staging.as_deref(),
        [&env_path, &seccomp_path],
        run_uid.as_ref().map(SandboxUid::lock),
    )?;
    let staged = staging
        .map(|dir| StagedMounts::make(policy, dir, (uid, gid)))
        .transpose()?;
    let (variables, passed) = variables(policy)?;
    let env_file = PrivateFile::write(env_path, variables.as_bytes())?;
    let profile = super::native::syscall_filter::docker_profile().to_string();
    let seccomp = PrivateFile::write(seccomp_path, profile.as_bytes())?;
    let mut docker = docker_run(
        policy,
        image,
        &name,
        (uid, gid),
        staged.as_ref(),
        [&env_file, &seccomp],
    );

    let mut child = docker.spawn().map_err(|err| {
        Failure::external(format!("cannot run docker: {err}"))
            .with_hint("install Docker (the docker CLI must be on PATH) or use --backend native")
    })?;
    let pid = child.id() as libc::pid_t;
    reaper.watch_client(pid);
    let pidfd = crate::sys::pidfd_open(pid).map_err(|e| {
        Failure::external(format!(
            "cannot watch docker: {}",
            std::io::Error::from_raw_os_error(e)
        ))
    })?;
    let streams = Streams {
        stdout: child.stdout.take().map(Into::into),
        stderr: child.stderr.take().map(Into::into),
        report: None,
        relay: false,
    };
    let max_output = match policy.output {
        OutputMode::Capture { max_bytes } => max_bytes,
        OutputMode::Stream => 0,
    };
    let watch = Watch {
        pid,
        pidfd: &pidfd,
        signals: &signals,
        max_output,
        timeout: policy.timeout,
        started,
        ends_with_status: false,
        watcher: policy.watcher.as_ref(),
    };
    let mut run = supervise::supervise(watch, streams, || {
        let _ = client("docker")
            .args(["kill", &name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    });
    let state = inspect(&name);
    if root || uid == 0 {
        strip_setid_bits_after_run(policy, started_at);
    }
    let _ = client("docker")
        .args(["rm", "--force", &name])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    drop(staged);

    let wait_status = run.wait_status.unwrap_or_else(|| supervise::reap(pid));
    let ending = ending_of(&run, state, wait_status, image)?;
    let mut layers = docker_layers(policy, (uid, gid), passed);
    layers.identity.idmapped_workspace = run_uid.is_some();
    // Streamed straight through the docker client: unknown.
    run.stderr_mid_line = matches!(policy.output, OutputMode::Stream);
    Ok(result_of(policy, BackendKind::Docker, run, ending, layers))
}

/// The image `policy` names, when it asks for nothing the docker backend cannot give.
fn image_of(policy: &SandboxPolicy) -> Result<&str, Failure> {
    let image = policy.image.as_deref().ok_or_else(|| {
        Failure::usage("--backend docker needs --image IMG")
            .with_hint("for example --image python:3.12")
    })?;
    if policy.disk_bytes.is_some() {
        // Docker's own size limit (--storage-opt size) holds only for overlay2 on XFS with
        // project quotas, and not for bind mounts such as the workspace.
        return Err(
            Failure::usage("--disk is not available with --backend docker")
                .with_hint("drop --disk, or use the native backend"),
        );
    }
    if !policy.layered.is_empty() {
        return Err(Failure::usage(
            "layered directories are only available with the native backend",
        ));
    }
    Ok(image)
}

/// How the container ended, from the engine's record of it (`state`) and the docker client's
/// status and words; an error when it never ran or its init could not start the command.
fn ending_of(
    run: &supervise::Supervised,
    state: Option<ContainerState>,
    wait_status: libc::c_int,
    image: &str,
) -> Result<Ending, Failure> {
    let client_status = libc::WIFEXITED(wait_status).then(|| libc::WEXITSTATUS(wait_status));
    let stderr = run.stderr.as_ref().map(|c| c.text()).unwrap_or_default();
    let Some(state) = state.filter(|s| s.started) else {
        // The container never ran: the engine or the image is the problem, or the command.
        return Err(start_failure(client_status, stderr.trim(), image));
    };
    // The container's init (`--init`, tini) could not start the command: as with the native
    // backend, no result, and the status and message of a command not found or not executable.
    if let Some(said) = stderr
        .trim()
        .strip_prefix("[FATAL tini (")
        .and_then(|text| text.split_once(")] ").map(|(_, said)| said))
        .filter(|said| said.starts_with("exec ") && said.contains(" failed: "))
    {
        return Err(start_failure(Some(state.exit_code), said, image));
    }
    let (exit_code, signal) = if run.timed_out || run.interrupted.is_some() {
        (None, Some(libc::SIGKILL))
    } else if (129..=192).contains(&state.exit_code) {
        (None, Some(state.exit_code - 128))
    } else {
        (Some(state.exit_code), None)
    };
    Ok(Ending {
        exit_code,
        signal,
        oom_killed: state.oom_killed,
        pids_max_hit: false,
        disk_full: false,
        disk_conflicts: Vec::new(),
        recorded: true,
    })
}

/// The `docker run` command for `policy` as the container `name`, running as `(uid, gid)`,
/// binding the staged mounts when there are, with the variables in `env_file` and the seccomp
/// profile in `seccomp`.
fn docker_run(
    policy: &SandboxPolicy,
    image: &str,
    name: &str,
    (uid, gid): (u32, u32),
    staged: Option<&StagedMounts>,
    [env_file, seccomp]: [&PrivateFile; 2],
) -> Command {
    let mut docker = client("docker");
    let parent = nix::unistd::getpid();
    // SAFETY: prctl and getppid are async-signal-safe, as the code between fork and exec must
    // be. Killed with us, the client starts no container the reaper would not see.
    unsafe {
        docker.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::other("autocoder is gone"));
            }
            Ok(())
        })
    };
    docker.args(["run", "--name", name, "--init"]);
    if !policy.network {
        docker.args(["--network", "none"]);
    }
    docker
        .args([
            "--read-only",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
        ])
        .arg("--security-opt")
        .arg(format!("seccomp={}", seccomp.path.display()))
        .arg(format!("--pids-limit={}", policy.pids))
        .arg(format!("--memory={}", policy.memory_bytes))
        .arg(format!("--memory-swap={}", policy.memory_bytes))
        .arg(format!("--cpus={}", policy.cpus))
        .arg(format!("--ulimit=fsize={}", policy.file_size_bytes))
        .arg(format!("--ulimit=nofile={0}:{0}", policy.open_files))
        .arg("--ulimit=core=0")
        .arg(format!("--user={uid}:{gid}"))
        .arg(format!(
            "--tmpfs={PRIVATE_TMP}:rw,nosuid,nodev,size={},mode=1777",
            policy.memory_bytes
        ))
        .arg(format!("--workdir={}", policy.workspace.display()));
    let writable = std::iter::once(&policy.workspace).chain(&policy.read_write);
    let binds = writable
        .map(|path| (path, false))
        .chain(policy.read_only.iter().map(|path| (path, true)));
    for (index, (path, read_only)) in binds.enumerate() {
        let source = staged.map_or(path, |staged| &staged.points[index]);
        docker.arg(format!("--mount={}", bind_spec(source, path, read_only)));
    }
    docker.arg("--env-file").arg(&env_file.path);
    use std::io::IsTerminal;
    let interactive = !std::io::stdin().is_terminal();
    if interactive {
        docker.arg("--interactive");
    }
    docker.arg("--").arg(image).args(&policy.command);
    docker.stdin(if interactive {
        Stdio::inherit()
    } else {
        Stdio::null()
    });
    if matches!(policy.output, OutputMode::Capture { .. }) {
        docker.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    docker
}

/// `program` (the docker client, or a shell that runs it) with only our variables that choose
/// the engine and how to reach it.
fn client(program: &str) -> Command {
    let mut command = Command::new(program);
    command.env_clear();
    for key in CLIENT_ENV {
        if let Some(value) = std::env::var_os(key) {
            command.env(key, value);
        }
    }
    // The client reads its own configuration from the real home, not the command's.
    if std::env::var_os("DOCKER_CONFIG").is_none() {
        if let Some(home) = std::env::var_os("HOME") {
            command.env("DOCKER_CONFIG", Path::new(&home).join(".docker"));
        }
    }
    command
}

/// What removes the container and all made for it when autocoder itself is killed (SIGKILL
/// cannot be caught): a shell in a process group of its own, reading a pipe only we write to.
/// At its end without our last word (`done`), it waits for the docker client (killed with us)
/// to go, removes the container, detaches the staged mounts and deletes the files. Until then
/// it holds the run's uid lock: no other run takes the uid of a container still going.
struct Reaper {
    said: std::fs::File,
}

const REAPER_SCRIPT: &str = r#"
while IFS= read -r line; do
    [ "$line" = done ] && exit 0
    client=$line
done
{
    i=0
    while [ -n "$client" ] && kill -0 "$client" && [ $i -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    docker rm --force "$1"
    if [ -n "$2" ]; then
        # Neither removes a point still mounted (EBUSY) nor a directory with anything in it.
        for point in "$2"/*; do
            umount -l "$point"
            rmdir "$point" || rm -f "$point"
        done
        rmdir "$2"
    fi
    rm -f "$3" "$4"
} >/dev/null 2>&1
"#;

impl Reaper {
    /// Watches over the container `name`, the mounts staged in `staging` and `files`, holding
    /// `uid_lock` (as its standard output, never written to) when there is one.
    fn start(
        name: &str,
        staging: Option<&Path>,
        files: [&Path; 2],
        uid_lock: Option<&std::fs::File>,
    ) -> Result<Reaper, Failure> {
        let cannot = |err: std::io::Error| {
            Failure::external(format!("cannot start the container's reaper (sh): {err}"))
        };
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| cannot(e.into()))?;
        let lock = uid_lock
            .map(std::fs::File::try_clone)
            .transpose()
            .map_err(cannot)?;
        client("sh")
            .args(["-c", REAPER_SCRIPT, "sh", name])
            .arg(staging.unwrap_or(Path::new("")))
            .args(files)
            .process_group(0)
            .stdin(read)
            .stdout(lock.map_or_else(Stdio::null, Stdio::from))
            .stderr(Stdio::null())
            .spawn()
            .map_err(cannot)?;
        Ok(Reaper { said: write.into() })
    }

    /// The docker client, which the reaper waits for.
    fn watch_client(&mut self, pid: libc::pid_t) {
        use std::io::Write;
        let _ = writeln!(self.said, "{pid}");
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        use std::io::Write;
        let _ = writeln!(self.said, "done");
    }
}

/// The command's variables as `--env-file` lines, and their names. Their values then reach
/// neither the client's command line nor its environment.
fn variables(policy: &SandboxPolicy) -> Result<(String, Vec<String>), Failure> {
    let mut lines = String::new();
    let mut passed = Vec::new();
    for (key, value) in &policy.env {
        let Some(key) = key.to_str() else { continue };
        if !(PASSED.contains(&key)
            || key.starts_with("LC_")
            || policy.requested_env.iter().any(|k| k == key))
        {
            continue;
        }
        let value = value
            .to_str()
            .filter(|value| !value.contains('\n'))
            .ok_or_else(|| {
                Failure::usage(format!(
                    "the value of {key} cannot be passed to the docker backend (a newline, or not UTF-8)"
                ))
                .with_hint("pass it with the native backend, or in a file in the workspace")
            })?;
        lines.push_str(&format!("{key}={value}\n"));
        passed.push(key.to_string());
    }
    if key_missing(&passed, "HOME") {
        lines.push_str(&format!("HOME={PRIVATE_HOME}\n"));
        passed.push("HOME".into());
    }
    Ok((lines, passed))
}

/// A file only we may read, for the docker client (the variables, the seccomp profile), in the
/// temporary directory; removed when dropped.
struct PrivateFile {
    path: PathBuf,
}

impl PrivateFile {
    fn write(path: PathBuf, contents: &[u8]) -> Result<PrivateFile, Failure> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|err| Failure::external(format!("cannot write {}: {err}", path.display())))?;
        let written = PrivateFile { path };
        file.write_all(contents).map_err(|err| {
            Failure::external(format!("cannot write {}: {err}", written.path.display()))
        })?;
        Ok(written)
    }
}

impl Drop for PrivateFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What the container makes is its owner's on the host (root's, for a root-owned workspace): no
/// set-id file may stay, even where the mount made them useless.
fn strip_setid_bits_after_run(policy: &SandboxPolicy, started: std::time::SystemTime) {
    let since = started
        .duration_since(std::time::UNIX_EPOCH)
        .map_or((0, 0), |d| {
            (d.as_secs() as i64, i64::from(d.subsec_nanos()))
        });
    let mut walk = SetIdWalk {
        since,
        ..SetIdWalk::default()
    };
    for held in &policy.held {
        walk.strip(&held.fd);
    }
    if walk.stripped > 0 {
        crate::log::warn(
            "sandbox",
            &format!(
                "removed the setuid/setgid bits set during the run on {} files",
                walk.stripped
            ),
        );
    }
    if walk.unreached > 0 {
        crate::log::warn(
            "sandbox",
            &format!(
                "{} directories could not be opened to look for setuid/setgid files the container may have left (too deep, or closed to us)",
                walk.unreached
            ),
        );
    }
}

fn docker_layers(policy: &SandboxPolicy, (uid, gid): (u32, u32), passed: Vec<String>) -> Layers {
    let mut layers = layers_base(policy, BackendKind::Docker);
    layers.filesystem.read_write = std::iter::once(&policy.workspace)
        .chain(&policy.read_write)
        .map(|p| p.display().to_string())
        .chain([PRIVATE_TMP.to_string()])
        .collect();
    layers.filesystem.read_only = vec!["image root filesystem (read-only)".into()];
    layers
        .filesystem
        .read_only
        .extend(policy.read_only.iter().map(|p| p.display().to_string()));
    layers.identity.uid = uid;
    layers.identity.gid = gid;
    layers.identity.root = uid == 0;
    layers.resources.mechanism = "docker".into();
    layers.resources.cpu_mechanism = "docker".into();
    layers.resources.memory_mechanism = "docker".into();
    layers.containment.pid_namespace = true;
    layers.containment.mount_namespace = true;
    layers.containment.ipc_namespace = true;
    // `--network none`: the container's own namespace, with only `lo`.
    layers.containment.network_namespace = !policy.network;
    layers.environment.passed = passed;
    layers
}

/// The paths the container gets, staged for the engine by a run started as root: a copy of
/// each mount (from the descriptor the policy holds, or one opened with no symbolic link on
/// the way) attached at `points`, in a directory only root can enter. Detached when dropped.
struct StagedMounts {
    dir: PathBuf,
    /// One per path, in the order: the workspace, the `--rw` paths, the `--ro` paths.
    points: Vec<PathBuf>,
}

impl StagedMounts {
    /// Stages `policy`'s paths in `dir`, writable ones id-mapped onto `run_as`.
    fn make(policy: &SandboxPolicy, dir: PathBuf, run_as: (u32, u32)) -> Result<Self, Failure> {
        use std::os::unix::fs::DirBuilderExt;
        let mut binds = Vec::new();
        // Held while the mounts are copied from them.
        let mut opened = Vec::new();
        let writable = std::iter::once(&policy.workspace).chain(&policy.read_write);
        let paths = writable
            .map(|path| (path, Access::ReadWrite))
            .chain(policy.read_only.iter().map(|path| (path, Access::ReadOnly)));
        for (path, access) in paths {
            let bind = view::open_bind(policy, path, access)?;
            binds.push(BindPlan {
                path: CString::new(path.as_os_str().as_bytes()).map_err(|_| {
                    Failure::usage(format!("{}: contains a NUL byte", path.display()))
                })?,
                fd: bind.fd.as_raw_fd(),
                access,
                is_dir: bind.is_dir,
                owner: bind.owner,
            });
            opened.push(bind);
        }
        let trees = trees::make(
            &binds,
            Maker::Parent {
                map_writable_onto: run_as,
            },
        )
        .map_err(Failure::external)?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|err| Failure::external(format!("cannot make {}: {err}", dir.display())))?;
        let mut staged = StagedMounts {
            dir,
            points: Vec::new(),
        };
        for (index, (bind, tree)) in binds.iter().zip(&trees).enumerate() {
            let point = staged.dir.join(index.to_string());
            let made = if bind.is_dir {
                std::fs::create_dir(&point)
            } else {
                std::fs::File::create(&point).map(drop)
            };
            let shown = bind.path.to_string_lossy();
            made.map_err(|err| {
                Failure::external(format!("cannot stage {shown} for docker: {err}"))
            })?;
            staged.points.push(point.clone());
            let c_point = CString::new(point.as_os_str().as_bytes()).expect("no NUL in our path");
            crate::sys::move_mount(tree.as_raw_fd(), &c_point).map_err(|errno| {
                Failure::external(format!(
                    "cannot stage {shown} for docker: {}",
                    std::io::Error::from_raw_os_error(errno)
                ))
            })?;
        }
        Ok(staged)
    }
}

impl Drop for StagedMounts {
    fn drop(&mut self) {
        for point in &self.points {
            let _ = nix::mount::umount2(point, nix::mount::MntFlags::MNT_DETACH);
            let _ = std::fs::remove_dir(point).or_else(|_| std::fs::remove_file(point));
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Where runs started as root stage the container's mounts.
const STAGING: &str = "/run/autocoder/docker";

/// A walk that clears the setuid and setgid bits of the regular files changed since `since`
/// (seconds and nanoseconds; a file the container made or chmod-ed has a newer status change
/// time, one the host had set-id before is left as it is), not following symlinks, into submounts but never
/// twice through the same directory. Walked by descriptors, each directory opened beneath the
/// one above it, never by a full path: a tree deeper than PATH_MAX hides nothing.
#[derive(Default)]
struct SetIdWalk {
    since: (i64, i64),
    stripped: usize,
    /// Directories that could not be opened.
    unreached: usize,
    seen: std::collections::HashSet<(u64, u64)>,
}

impl SetIdWalk {
    /// From the path the policy holds `held` (an `O_PATH` descriptor): a directory or a file.
    fn strip(&mut self, held: &OwnedFd) {
        let Ok(stat) = nix::sys::stat::fstat(held) else {
            return;
        };
        if crate::sys::file_kind(&stat) == SFlag::S_IFREG {
            // Reopened through its descriptor: the very file held, not whatever has its name.
            let path = format!("/proc/self/fd/{}", held.as_raw_fd());
            let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
            if let Ok(file) = nix::fcntl::open(path.as_str(), flags, Mode::empty()) {
                self.strip_file(&file, &stat);
            }
            return;
        }
        match open_at(held.as_fd(), c".", OFlag::O_DIRECTORY) {
            Some(top) => self.below(top),
            None => self.unreached += 1,
        }
    }

    fn below(&mut self, dir: OwnedFd) {
        let Ok(stat) = nix::sys::stat::fstat(&dir) else {
            return;
        };
        if !self.seen.insert((stat.st_dev, stat.st_ino)) {
            return;
        }
        for name in crate::sys::entry_names(dir.as_fd()).unwrap_or_default() {
            let Ok(stat) =
                nix::sys::stat::fstatat(&dir, name.as_c_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
            else {
                continue;
            };
            let kind = crate::sys::file_kind(&stat);
            if kind == SFlag::S_IFDIR {
                match open_at(dir.as_fd(), &name, OFlag::O_DIRECTORY) {
                    Some(below) => self.below(below),
                    None => self.unreached += 1,
                }
            } else if kind == SFlag::S_IFREG && self.set_id_since(&stat) {
                // Opened, then changed through the descriptor: what is changed is the file
                // looked at.
                if let Some(file) = open_at(dir.as_fd(), &name, OFlag::O_NONBLOCK) {
                    self.strip_file(&file, &stat);
                }
            }
        }
    }

    /// Set-id, with its status changed during the run.
    fn set_id_since(&self, stat: &nix::sys::stat::FileStat) -> bool {
        stat.st_mode & 0o6000 != 0 && (stat.st_ctime, stat.st_ctime_nsec) >= self.since
    }

    fn strip_file(&mut self, file: &OwnedFd, looked_at: &nix::sys::stat::FileStat) {
        let same = nix::sys::stat::fstat(file).is_ok_and(|now| {
            (now.st_ino, now.st_dev) == (looked_at.st_ino, looked_at.st_dev)
                && crate::sys::file_kind(&now) == SFlag::S_IFREG
        });
        let set_id = self.set_id_since(looked_at);
        let mode = Mode::from_bits_truncate(looked_at.st_mode & 0o1777);
        if same && set_id && nix::sys::stat::fchmod(file, mode).is_ok() {
            self.stripped += 1;
        }
    }
}

/// `name` in the directory `dir`, opened read-only, never following a final symlink.
fn open_at(dir: BorrowedFd, name: &CStr, flags: OFlag) -> Option<OwnedFd> {
    let flags = flags | OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    nix::fcntl::openat(dir, name, flags, Mode::empty()).ok()
}

fn key_missing(passed: &[String], key: &str) -> bool {
    !passed.iter().any(|k| k == key)
}

/// A `--mount` value binding `source` at `target`, CSV-quoted so commas and quotes in paths
/// survive.
fn bind_spec(source: &Path, target: &Path, read_only: bool) -> String {
    let quote = |field: String| {
        if field.contains([',', '"']) {
            format!("\"{}\"", field.replace('"', "\"\""))
        } else {
            field
        }
    };
    let mut spec = format!(
        "type=bind,{},{}",
        quote(format!("source={}", source.display())),
        quote(format!("target={}", target.display()))
    );
    if read_only {
        spec.push_str(",readonly");
    }
    spec
}

struct ContainerState {
    started: bool,
    exit_code: i32,
    oom_killed: bool,
}

fn inspect(name: &str) -> Option<ContainerState> {
    let output = client("docker")
        .args([
            "inspect",
            "--format",
            "{{.State.StartedAt}} {{.State.ExitCode}} {{.State.OOMKilled}}",
            name,
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut fields = text.split_whitespace();
    let started_at = fields.next()?;
    Some(ContainerState {
        started: !started_at.starts_with("0001-01-01"),
        exit_code: fields.next()?.parse().ok()?,
        oom_killed: fields.next()? == "true",
    })
}

fn start_failure(client_status: Option<i32>, message: &str, image: &str) -> Failure {
    let lower = message.to_ascii_lowercase();
    if lower.contains("cannot connect to the docker daemon")
        || lower.contains("is the docker daemon running")
    {
        return Failure::external(format!("the Docker engine is not reachable: {message}"))
            .with_hint(
                "start it (sudo dockerd, or systemctl start docker) or use --backend native",
            );
    }
    if lower.contains("no such image")
        || lower.contains("unable to find image")
        || lower.contains("pull access denied")
    {
        return Failure::external(format!("image {image} is not available: {message}")).with_hint(
            format!(
                "build or pull it first (docker pull {image}), or import one with docker import"
            ),
        );
    }
    match client_status {
        Some(127) => Failure::new(
            Kind::CommandNotFound,
            anyhow::anyhow!("not found in image {image}: {message}"),
        ),
        Some(126) => Failure::new(
            Kind::CommandNotExecutable,
            anyhow::anyhow!("cannot execute in image {image}: {message}"),
        ),
        _ => Failure::external(format!("docker could not start the container: {message}")),
    }
}
