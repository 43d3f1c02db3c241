//! The native backend: isolation from the kernel's own mechanisms, with no daemon and no root.
//!
//! One `clone3` makes the child in new mount, PID and IPC namespaces (and a user namespace when
//! we are not root). The child builds its filesystem view from an allow-list and makes it its
//! root (see `view`), drops to an unprivileged identity, applies Landlock and seccomp, and starts
//! the command, which joins the run's cgroups before exec (see `child`). Meanwhile, on
//! another CPU, the parent makes the cgroups and, started as root, the view's mount trees
//! (see `trees`). Started as root, the command runs as a uid of its own (`SandboxUid`) and sees the workspace
//! through an id-mapped mount, so it can write root's files without being root. The parent
//! supervises with a pidfd and kills the namespace's init on timeout, which takes every process
//! inside with it.

pub(crate) mod cgroup;
pub(crate) mod child;
pub(crate) mod disk;
pub(crate) mod fs_rules;
pub(crate) mod syscall_filter;
pub(crate) mod trees;
pub(crate) mod view;

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use nix::sched::CpuSet;
use nix::sys::signal::Signal;
use nix::unistd::{Gid, Pid, Uid};
use rlimit::Resource;

use self::cgroup::RunCgroups;
use self::child::{BindPlan, ChildPlan, JoinPlan, LayerPlan, ViewPlan};
use self::fs_rules::FsRules;
use self::syscall_filter::FilterOptions;
use self::trees::Maker;
use self::view::SandboxView;
use super::policy::{BackendKind, OutputMode, SandboxPolicy};
use super::result::{Degradation, Layers, SandboxResult};
use super::supervise::{self, Streams, TerminationSignals, Watch};
use super::{layers_base, resolve_command, result_of, Ending, PRIVATE_TMP};
use crate::error::{Failure, Kind};
use crate::sys;

/// The host uids (and gids) commands started by root run as, one each while it runs: per-uid
/// kernel limits (processes, inotify instances, pending signals, message queues) are then not
/// shared between concurrent runs. Above the ranges that systemd's dynamic users and the usual
/// subordinate ids take.
const SANDBOX_UIDS: std::ops::Range<u32> = 2_000_000_000..2_000_004_096;

/// Where the uids' slots are locked, one file each.
const SANDBOX_UID_LOCKS: &str = "/run/autocoder/sandbox-uids";

/// A uid from `SANDBOX_UIDS`, this run's until it is dropped (the lock on its slot is held).
/// The docker backend takes one too, for a root-owned workspace.
pub(crate) struct SandboxUid {
    pub uid: u32,
    slot: nix::fcntl::Flock<std::fs::File>,
}

impl SandboxUid {
    /// Takes a free uid: the first whose slot can be locked, from a place that depends on our
    /// pid (concurrent runs seldom try the same ones).
    pub(crate) fn take() -> Result<SandboxUid, Failure> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let locks = Path::new(SANDBOX_UID_LOCKS);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(locks)
            .map_err(|err| {
                Failure::external(format!("cannot make {}: {err}", locks.display()))
                    .with_hint("the sandbox keeps one lock per uid it hands out there")
            })?;
        let count = SANDBOX_UIDS.len() as u32;
        let start = std::process::id() % count;
        for step in 0..count {
            let slot = (start + step) % count;
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(locks.join(slot.to_string()))
                .map_err(|err| Failure::external(format!("cannot take a sandbox uid: {err}")))?;
            // Released when the file is closed.
            if let Ok(locked) =
                nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            {
                return Ok(SandboxUid {
                    uid: SANDBOX_UIDS.start + slot,
                    slot: locked,
                });
            }
        }
        Err(Failure::external(format!(
            "all {count} sandbox uids are in use by runs still going"
        )))
    }

    /// The locked file: whoever holds a copy of it holds the uid.
    pub(crate) fn lock(&self) -> &std::fs::File {
        &self.slot
    }
}

pub(crate) fn run(policy: &SandboxPolicy) -> Result<SandboxResult, Failure> {
    if policy.disk_bytes.is_some() {
        disk::check_workspace(policy)?;
    }
    // Ok: the run makes cgroups; else why rlimits hold its limits instead.
    let mut cgroups = if nix::unistd::geteuid().is_root() {
        RunCgroups::hierarchies_mounted().inspect_err(|reason| using_rlimits(reason))
    } else {
        Err(cgroup::refusal_for_ordinary_users())
    };
    let mut without_namespaces = None;
    loop {
        match run_with(policy, cgroups.clone(), without_namespaces.clone()) {
            Ok(result) => return Ok(result),
            Err(Attempt::Failed(failure)) => return Err(failure),
            // Nothing was started when an attempt is refused: the same run again, without what
            // refused (each at most once).
            Err(Attempt::CgroupsRefused(reason)) if cgroups.is_ok() => {
                using_rlimits(&reason);
                cgroups = Err(reason);
            }
            Err(Attempt::ViewRefused(reason)) if without_namespaces.is_none() => {
                without_namespaces = Some(view_refused(reason));
            }
            Err(Attempt::CgroupsRefused(reason) | Attempt::ViewRefused(reason)) => {
                return Err(Failure::external(reason))
            }
        }
    }
}

/// Why a run stopped before its command started.
enum Attempt {
    Failed(Failure),
    /// The run's cgroups could not be found, made or limited (no v1 hierarchy, a read-only one,
    /// a parent cgroup whose CPU quota is below the one asked for): it can run again without
    /// them.
    CgroupsRefused(String),
    /// The command's private view could not be built (with --allow-degraded): it can run again
    /// without namespaces, the host's filesystem in view and Landlock limiting it.
    ViewRefused(String),
}

fn view_refused(reason: String) -> Degradation {
    // Landlock still holds the filesystem; what is missing is the namespaces' containment.
    Degradation {
        layer: "containment".into(),
        reason: format!("cannot build the private view ({reason}); the host's filesystem is in view, Landlock limits what it may read and write"),
    }
}

impl From<Failure> for Attempt {
    fn from(failure: Failure) -> Attempt {
        Attempt::Failed(failure)
    }
}

fn using_rlimits(reason: &str) {
    crate::log::note(
        "sandbox",
        &format!("cgroups unavailable ({reason}); using rlimits"),
    );
}

/// One attempt at the run; `without_namespaces` says why it goes without them (a degraded run).
/// Long: its steps run in this order on purpose (descriptors closed after the clone and the
/// hand-over, cgroups read before the reap); each is a function, their order is here.
fn run_with(
    policy: &SandboxPolicy,
    cgroups_allowed: Result<(), String>,
    without_namespaces: Option<Degradation>,
) -> Result<SandboxResult, Attempt> {
    let use_cgroups = cgroups_allowed.is_ok();
    let started = Instant::now();
    let root = nix::unistd::geteuid().is_root();
    // Started as root, the command runs as a uid of its own, held until the run is over.
    let sandbox_uid = root.then(SandboxUid::take).transpose()?;
    let identity = Identity::ours(sandbox_uid.as_ref().map(|taken| taken.uid));
    let program = resolve_command(&policy.command[0], &policy.env, &policy.workspace)?;
    // With the network off the command gets a network namespace of its own, holding only `lo`:
    // abstract UNIX sockets, /proc/net and /sys/class/net are that namespace's, not the host's.
    let loopback = !policy.network;
    let mut view = view::plan(policy, loopback)?;
    let signals = TerminationSignals::block()?;
    // Work we do beside the child once it is started: root's mount trees (handed over on the
    // channel) and the cgroups (the channel then hands over where they are).
    let cgroup_name = use_cgroups.then(RunCgroups::name_for_this_run);
    let (theirs, ours) = (root || use_cgroups)
        .then(seqpacket_pair)
        .transpose()?
        .unzip();
    let mut pipes = Pipes::open(policy, identity.sandbox_uid)?;
    let relay = pipes.relay.take();
    let channel = (theirs.as_ref(), ours.as_ref());
    let (mut plan, mut filter) = child_plan(
        policy,
        &pipes,
        channel,
        &view,
        &program,
        identity,
        use_cgroups,
    )?;
    let mut degraded = Vec::new();
    let (pid, pidfd, private_dir) = start(
        &mut plan,
        &mut filter,
        &view.read_write,
        policy,
        identity.sandbox_uid,
        without_namespaces,
        &mut degraded,
    )?;
    // Its end is the child's: a send fails at once when the child is gone.
    drop(theirs);
    // After the clone: the child must start from a process of one thread.
    if let Some(relay) = relay {
        relay.start();
    }
    // The child builds its view meanwhile. Left alone, the scheduler mostly starts it on our CPU,
    // where it would wait until we block: it goes to another CPU, and takes back all of the
    // caller's once it has received what we send below (only then is our move sure to be done).
    if let Some(cpus) = &plan.restore_cpus {
        move_to_another_cpu(pid, cpus);
    }
    let cgroups = match &ours {
        Some(ours) => {
            let trees = plan.view.as_ref().zip(identity.sandbox_uid);
            hand_over(ours, trees, cgroup_name.as_deref(), policy, (pid, &pidfd))?
        }
        None => None,
    };
    // The child has its copy of the plan; the descriptors it names are closed here.
    let (namespaced, fs_rules) = (plan.view.is_some(), plan.fs_rules);
    drop((pipes.report_write, pipes.stdout_write, pipes.stderr_write));
    drop((pipes.stdin, ours));
    // The view's descriptors are the child's now; what it left out is for the result.
    let left_out = std::mem::take(&mut view.left_out);
    drop(view);
    let streams = Streams {
        stdout: pipes.stdout_read,
        stderr: pipes.stderr_read,
        report: Some(pipes.report_read),
        relay: matches!(policy.output, OutputMode::Stream),
    };
    let run = watch_child(policy, streams, (pid, &pidfd), &signals, started);
    // Once the init has reported the command's status, nothing of the command is left (in a PID
    // namespace; without one, what the command left running stays): the cgroups (which the init
    // was never in) are read and removed while it is still on its way out, and then it is
    // reaped.
    let events = cgroups.as_ref().map(RunCgroups::events).unwrap_or_default();
    let used_cgroups = cgroups.is_some();
    drop(cgroups);
    let wait_status = run.wait_status.unwrap_or_else(|| supervise::reap(pid));

    let ChildReport {
        command_status,
        in_cgroups,
        disk_full,
        disk_conflicts,
    } = read_child_report(&run.report, policy, &program, used_cgroups, &mut degraded)?;
    let (exit_code, signal) = command_ending(command_status, &run, wait_status)?;
    let facts = RunFacts {
        cgroups_refused: cgroups_allowed.err(),
        used_cgroups,
        in_cgroups,
        fs_rules: &fs_rules,
        namespaced,
        loopback,
        left_out: &left_out,
        identity: identity.runs_as(),
        root,
    };
    let layers = native_layers(policy, facts, degraded);
    drop(private_dir);
    let ending = Ending {
        exit_code,
        signal,
        oom_killed: events.oom_killed,
        pids_max_hit: events.pids_max_hit,
        disk_full,
        disk_conflicts,
        recorded: in_cgroups,
    };
    Ok(result_of(policy, BackendKind::Native, run, ending, layers))
}

/// The pipes of a run: the init's report, the command's output (none where it inherits ours)
/// and its stdin. The child gets the write ends; we keep the read ends.
struct Pipes {
    report_read: OwnedFd,
    report_write: OwnedFd,
    stdout_read: Option<OwnedFd>,
    stdout_write: Option<OwnedFd>,
    stderr_read: Option<OwnedFd>,
    stderr_write: Option<OwnedFd>,
    /// The command's stdin when it is not ours (see `open_stdin`), and what relays ours to it.
    stdin: Option<OwnedFd>,
    relay: Option<StdinRelay>,
    our_stdin: std::io::Stdin,
}

impl Pipes {
    /// `sandbox_uid`: the uid the command runs as when started as root.
    fn open(policy: &SandboxPolicy, sandbox_uid: Option<u32>) -> Result<Pipes, Failure> {
        let (report_read, report_write) = pipe()?;
        let (stdout_read, stdout_write, stderr_read, stderr_write) = output_pipes(policy)?;
        if let Some(uid) = sandbox_uid {
            // So that the command can reopen its output (`> /dev/stderr`, `tee /dev/stdout`).
            let id = (Uid::from_raw(uid), Gid::from_raw(uid));
            for fd in [&stdout_write, &stderr_write].into_iter().flatten() {
                let _ = nix::unistd::fchown(fd, Some(id.0), Some(id.1));
            }
        }
        let (stdin, relay) = open_stdin(policy.network)?;
        Ok(Pipes {
            report_read,
            report_write,
            stdout_read,
            stdout_write,
            stderr_read,
            stderr_write,
            stdin,
            relay,
            our_stdin: std::io::stdin(),
        })
    }

    /// What the command reads: ours, or the pipe or /dev/null that stands for it.
    fn command_stdin(&self) -> BorrowedFd<'_> {
        self.stdin
            .as_ref()
            .map_or(self.our_stdin.as_fd(), AsFd::as_fd)
    }

    /// The ends we read.
    fn read_ends(&self) -> impl Iterator<Item = &OwnedFd> {
        [self.stdout_read.as_ref(), self.stderr_read.as_ref()]
            .into_iter()
            .flatten()
            .chain([&self.report_read])
    }
}

/// Who runs the command: our effective ids, and the uid of its own it runs as when we are root.
#[derive(Clone, Copy)]
struct Identity {
    euid: u32,
    egid: u32,
    sandbox_uid: Option<u32>,
}

impl Identity {
    /// Ours, with the sandbox's uid when we are root.
    fn ours(sandbox_uid: Option<u32>) -> Identity {
        Identity {
            euid: nix::unistd::geteuid().as_raw(),
            egid: nix::unistd::getegid().as_raw(),
            sandbox_uid,
        }
    }

    /// The (uid, gid) the command runs as.
    fn runs_as(self) -> (u32, u32) {
        self.sandbox_uid
            .map_or((self.euid, self.egid), |uid| (uid, uid))
    }
}

/// What the child does (see `child`), with the write ends of `pipes` and the child's end of
/// the channel (`theirs`, when we work beside it: root's mount trees, the cgroups); and the
/// syscall filter's options it was compiled from.
fn child_plan<'a>(
    policy: &SandboxPolicy,
    pipes: &'a Pipes,
    (theirs, ours): (Option<&OwnedFd>, Option<&OwnedFd>),
    view: &SandboxView,
    program: &Path,
    identity: Identity,
    use_cgroups: bool,
) -> Result<(ChildPlan<'a>, FilterOptions), Attempt> {
    let root = identity.sandbox_uid.is_some();
    let loopback = !policy.network;
    let filter = FilterOptions {
        network: policy.network,
        loopback,
        no_unix_sockets: false,
        fixed_affinity: !use_cgroups,
    };
    let plan = ChildPlan {
        status_fd: pipes.report_write.as_fd(),
        cgroups: theirs.filter(|_| use_cgroups).map(|ready| JoinPlan {
            ready: ready.as_raw_fd(),
        }),
        parent_ends: pipes
            .read_ends()
            .chain(ours)
            .map(AsRawFd::as_raw_fd)
            .collect(),
        stdin: pipes.command_stdin(),
        stdout: pipes.stdout_write.as_ref().map(AsFd::as_fd),
        stderr: pipes.stderr_write.as_ref().map(AsFd::as_fd),
        self_map: (!root).then_some((identity.euid, identity.egid)),
        rlimits: rlimits(policy, use_cgroups),
        cpu_affinity: (!use_cgroups).then(|| policy.cpus.ceil() as usize),
        restore_cpus: (root || use_cgroups)
            .then(|| nix::sched::sched_getaffinity(Pid::from_raw(0)).ok())
            .flatten(),
        view: Some(view_plan(
            view,
            policy.memory_bytes,
            identity.sandbox_uid,
            use_cgroups,
            theirs.filter(|_| root).map(AsRawFd::as_raw_fd),
            policy,
        )),
        switch_to: identity.sandbox_uid.map(|uid| (uid, uid)),
        fs_rules: fs_rules(policy, view, loopback),
        loopback,
        seccomp: syscall_filter::compile(filter).map_err(Failure::external)?,
        cwd: c_path(&policy.workspace),
        program: c_path(program),
        argv: policy
            .command
            .iter()
            .map(|arg| c_string(arg.clone()))
            .collect::<Result<_, _>>()?,
        envp: environment_block(&policy.env, None)?,
        allow_degraded: policy.allow_degraded,
        our_arguments: crate::sys::argument_area(),
    };
    Ok((plan, filter))
}

/// What Landlock lets the command reach: the whole view to read, its writable places and the
/// private /tmp and /dev/shm to write.
fn fs_rules(policy: &SandboxPolicy, view: &SandboxView, loopback: bool) -> FsRules {
    FsRules {
        whole_view_readable: true,
        read_only: view.read_only.clone(),
        read_write: view
            .read_write
            .iter()
            .cloned()
            .chain([PathBuf::from(PRIVATE_TMP), PathBuf::from("/dev/shm")])
            .collect(),
        // In its own network namespace the command reaches nothing but itself: Landlock need
        // not hold TCP back (loopback servers work), nor abstract sockets.
        network: policy.network || loopback,
    }
}

/// Starts the child that carries out `plan` in new namespaces (the child never returns from
/// here), or, when they cannot be made (`without_namespaces` says they could not) and the
/// policy allows, on the host with the layers that remain; returns its pid and pidfd, and the
/// private directory a run on the host uses.
fn start(
    plan: &mut ChildPlan<'_>,
    filter: &mut FilterOptions,
    read_write: &[PathBuf],
    policy: &SandboxPolicy,
    sandbox_uid: Option<u32>,
    without_namespaces: Option<Degradation>,
    degraded: &mut Vec<Degradation>,
) -> Result<(libc::pid_t, OwnedFd, Option<PrivateDir>), Attempt> {
    let mut namespaces = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    if sandbox_uid.is_none() {
        namespaces |= libc::CLONE_NEWUSER;
    }
    if plan.loopback {
        namespaces |= libc::CLONE_NEWNET;
    }
    let cloned = match without_namespaces {
        Some(degradation) => Err(degradation),
        None => sys::clone3(namespaces as u64).map_err(|errno| Degradation {
            layer: "containment".into(),
            reason: format!(
                "cannot create the sandbox's namespaces: {}",
                std::io::Error::from_raw_os_error(errno)
            ),
        }),
    };
    match cloned {
        Ok(Some((pid, pidfd))) => Ok((pid, pidfd, None)),
        Ok(None) => child::run(plan),
        Err(degradation) if policy.allow_degraded => {
            degraded.push(degradation);
            let private = PrivateDir::create()?;
            let (pid, pidfd) = fork_on_host(
                plan,
                filter,
                read_write,
                policy,
                sandbox_uid,
                &private,
                degraded,
            )?;
            Ok((pid, pidfd, Some(private)))
        }
        Err(degradation) => Err(Failure::external(degradation.reason)
            .with_hint(
                "allow user namespaces (sysctl user.max_user_namespaces, \
                 kernel.apparmor_restrict_unprivileged_userns=0), use --backend docker, or pass \
                 --allow-degraded to run with the layers that remain",
            )
            .into()),
    }
}

/// Watches the child `(pid, pidfd)` to its end: its output into `streams`, the time limit,
/// the signals; a kill is for its whole process group.
fn watch_child(
    policy: &SandboxPolicy,
    streams: Streams,
    (pid, pidfd): (libc::pid_t, &OwnedFd),
    signals: &TerminationSignals,
    started: Instant,
) -> supervise::Supervised {
    let kill = || {
        let _ = sys::pidfd_send_signal(pidfd.as_raw_fd(), libc::SIGKILL);
        // Our own child's process group (it called setsid).
        let _ = nix::sys::signal::killpg(Pid::from_raw(pid), Signal::SIGKILL);
    };
    let max_output = match policy.output {
        OutputMode::Capture { max_bytes } => max_bytes,
        OutputMode::Stream => 0,
    };
    let watch = Watch {
        pid,
        pidfd,
        signals,
        max_output,
        timeout: policy.timeout,
        started,
        ends_with_status: true,
        watcher: policy.watcher.as_ref(),
    };
    supervise::supervise(watch, streams, kill)
}

/// The command's exit code or signal from its wait status as the init reported it. Without a
/// status line, the init died because we killed it (timeout, interruption), and everything
/// inside died with it.
fn command_ending(
    command_status: Option<i32>,
    run: &supervise::Supervised,
    wait_status: i32,
) -> Result<(Option<i32>, Option<i32>), Attempt> {
    match command_status {
        Some(status) if libc::WIFSIGNALED(status) => Ok((None, Some(libc::WTERMSIG(status)))),
        Some(status) if libc::WIFEXITED(status) => Ok((Some(libc::WEXITSTATUS(status)), None)),
        _ if run.timed_out || run.interrupted.is_some() => Ok((None, Some(libc::SIGKILL))),
        _ => Err(Failure::external(format!(
            "the sandbox's init process ended unexpectedly (wait status {wait_status})"
        ))
        .into()),
    }
}

/// What the init reported (see `child`).
struct ChildReport {
    /// The command's raw wait status, if it ended.
    command_status: Option<i32>,
    /// The command is in the run's cgroups (it could not join one with --allow-degraded: then
    /// nothing holds the limits).
    in_cgroups: bool,
    /// The --disk limit was reached: nothing was written back.
    disk_full: bool,
    /// Files the host changed while the command ran, kept; the run's beside them.
    disk_conflicts: Vec<crate::sandbox::result::DiskConflict>,
}

/// Reads the init's report lines. Degraded layers are added to `degraded`; a failed layer, a
/// failed exec, changes that could not be written back or a view refused end the attempt.
fn read_child_report(
    report: &[String],
    policy: &SandboxPolicy,
    program: &Path,
    used_cgroups: bool,
    degraded: &mut Vec<Degradation>,
) -> Result<ChildReport, Attempt> {
    let mut read = ChildReport {
        command_status: None,
        in_cgroups: used_cgroups,
        disk_full: false,
        disk_conflicts: Vec::new(),
    };
    for line in report {
        let (tag, rest) = line.split_once(' ').unwrap_or((line, ""));
        let (layer, reason) = rest.split_once(' ').unwrap_or((rest, ""));
        match tag {
            "status" => read.command_status = rest.parse::<i32>().ok(),
            "disk" if rest == "full" => read.disk_full = true,
            "conflict" => read.disk_conflicts.extend(serde_json::from_str(rest).ok()),
            "disk" => {
                return Err(Failure::external(format!(
                    "--disk: the command ended, but its changes could not all be written back ({rest}); the workspace may hold some of them"
                ))
                .into())
            }
            "join" => {
                let reason = format!(
                    "cannot join the run's cgroup: {}",
                    std::io::Error::from_raw_os_error(rest.trim().parse().unwrap_or(libc::EIO))
                );
                if !policy.allow_degraded {
                    return Err(layer_failure("resources", &reason).into());
                }
                read.in_cgroups = false;
                degraded.push(Degradation {
                    layer: "resources".into(),
                    reason,
                });
            }
            "noview" => return Err(Attempt::ViewRefused(rest.to_string())),
            "degraded" => degraded.push(Degradation {
                layer: layer.into(),
                reason: reason.into(),
            }),
            "fail" => return Err(layer_failure(layer, reason).into()),
            "panic" => {
                return Err(
                    Failure::external(format!("the sandbox's init process failed: {rest}"))
                        .with_hint("this is a bug in autocoder; please report it")
                        .into(),
                )
            }
            "exec" => {
                return Err(exec_failure(
                    &policy.command[0],
                    program,
                    rest.trim().parse().unwrap_or(libc::EIO),
                )
                .into())
            }
            _ => {}
        }
    }
    Ok(read)
}

/// What a native run's layers say beyond the policy.
struct RunFacts<'a> {
    /// Why the run made no cgroups, if it made none.
    cgroups_refused: Option<String>,
    /// The run's cgroups were made, and the command got into them.
    used_cgroups: bool,
    in_cgroups: bool,
    fs_rules: &'a FsRules,
    /// The command had its namespaces and its view (not the host's filesystem).
    namespaced: bool,
    loopback: bool,
    left_out: &'a [view::LeftOut],
    /// The (uid, gid) the command ran as.
    identity: (u32, u32),
    root: bool,
}

fn native_layers(policy: &SandboxPolicy, facts: RunFacts, degraded: Vec<Degradation>) -> Layers {
    let mut layers = layers_base(policy, BackendKind::Native);
    // Made for the command, the cgroups stood in for rlimits and affinity: joined, they held the
    // limits; not joined, nothing did.
    let (mechanism, cpu_mechanism, memory_mechanism) = match (facts.used_cgroups, facts.in_cgroups)
    {
        (true, true) => ("cgroup-v1", "cfs-quota", "cgroup"),
        (true, false) => ("none", "none", "none"),
        (false, _) => ("rlimit", "affinity", "rlimit (private memory only)"),
    };
    layers.resources.mechanism = mechanism.into();
    layers.resources.cpu_mechanism = cpu_mechanism.into();
    layers.resources.memory_mechanism = memory_mechanism.into();
    layers.resources.cgroups_refused = facts.cgroups_refused;
    let shown = |paths: &[PathBuf]| paths.iter().map(|p| p.display().to_string()).collect();
    layers.filesystem.read_only = shown(&facts.fs_rules.read_only);
    layers.filesystem.read_write = shown(&facts.fs_rules.read_write);
    let namespaced = facts.namespaced;
    layers.filesystem.view = if namespaced { "allow-list" } else { "host" }.into();
    if !namespaced && policy.git_read_only == Some(true) {
        layers.filesystem.git_directory =
            Some("writable (no mount namespace to hold it read-only)".into());
    }
    layers.filesystem.left_out = facts
        .left_out
        .iter()
        .map(|left| format!("{} ({})", left.path.display(), left.reason))
        .collect();
    // An environment left out was not shown.
    layers.filesystem.environments.retain(|shown| {
        !facts
            .left_out
            .iter()
            .any(|left| shown.starts_with(&format!("{}: ", left.path.display())))
    });
    layers.network.mechanisms = if !namespaced {
        vec!["seccomp".into(), "landlock".into()]
    } else if facts.loopback {
        vec!["network-namespace".into(), "seccomp".into()]
    } else {
        layers.network.mechanisms
    };
    (layers.identity.uid, layers.identity.gid) = facts.identity;
    // Started as root, the command runs as a sandbox uid, never as root.
    layers.identity.root = false;
    layers.identity.user_namespace = !facts.root && namespaced;
    layers.identity.idmapped_workspace = facts.root && namespaced;
    layers.containment.pid_namespace = namespaced;
    layers.containment.mount_namespace = namespaced;
    layers.containment.ipc_namespace = namespaced;
    layers.containment.network_namespace = namespaced && facts.loopback;
    for degradation in &degraded {
        match degradation.layer.as_str() {
            "filesystem" => layers.filesystem.mechanism = "none".into(),
            "seccomp" => layers.identity.seccomp = false,
            _ => {}
        }
    }
    layers.degraded = degraded;
    layers
}

/// Starts the child without namespaces (they were refused, and --allow-degraded was given).
/// The host's filesystem stays in view: a private temporary directory on the host and no UNIX
/// sockets at all. An ordinary user runs as itself; root still hands the command to the sandbox
/// uid (root, even without capabilities, owns /etc/shadow and the host keys the view leaves
/// readable), which can write the workspace only where that uid may, as nothing can be
/// id-mapped.
fn fork_on_host(
    plan: &mut ChildPlan<'_>,
    filter: &mut FilterOptions,
    read_write: &[PathBuf],
    policy: &SandboxPolicy,
    sandbox_uid: Option<u32>,
    private: &PrivateDir,
    degraded: &mut Vec<Degradation>,
) -> Result<(libc::pid_t, OwnedFd), Attempt> {
    if policy.disk_bytes.is_some() {
        degraded.push(Degradation {
            layer: "resources".into(),
            reason: "--disk needs the sandbox's own mount namespace: the command writes the workspace itself, with no limit on the total size".into(),
        });
    }
    if let Some(layer) = policy.layered.first() {
        return Err(Failure::external(format!(
            "{} cannot be shown without the sandbox's own mount namespace",
            policy.workspace.join(&layer.at).display()
        ))
        .into());
    }
    if let Some(sandbox_id) = sandbox_uid {
        for dir in [private.path.clone(), private.path.join("home")] {
            std::os::unix::fs::chown(&dir, Some(sandbox_id), Some(sandbox_id)).map_err(|err| {
                Failure::external(format!(
                    "cannot hand {} to the sandbox uid: {err}",
                    dir.display()
                ))
            })?;
        }
        degraded.push(Degradation {
            layer: "identity".into(),
            reason: format!("without a mount namespace the workspace cannot be id-mapped: the command runs as uid {sandbox_id} and writes only where that uid may"),
        });
    }
    plan.envp = environment_block(&policy.env, Some(&private.path))?;
    plan.fs_rules.read_write = read_write
        .iter()
        .cloned()
        .chain([private.path.clone()])
        .collect();
    plan.self_map = None;
    plan.view = None;
    plan.loopback = false;
    plan.fs_rules.network = policy.network;
    filter.loopback = false;
    plan.fs_rules.whole_view_readable = false;
    plan.switch_to = sandbox_uid.map(|id| (id, id));
    // No trees to hand over: only the cgroups' readiness tells the child we moved it.
    if plan.cgroups.is_none() {
        plan.restore_cpus = None;
    }
    filter.no_unix_sockets = true;
    plan.seccomp = syscall_filter::compile(*filter).map_err(Failure::external)?;
    // SAFETY: fork in a single-threaded process (clone3 may be the very thing refused).
    match unsafe { libc::fork() } {
        0 => child::run(plan),
        pid if pid > 0 => {
            let pidfd = sys::pidfd_open(pid).map_err(|e| {
                Failure::external(format!(
                    "cannot watch the command: {}",
                    std::io::Error::from_raw_os_error(e)
                ))
            })?;
            Ok((pid, pidfd))
        }
        _ => Err(
            Failure::external(format!("cannot fork: {}", std::io::Error::last_os_error())).into(),
        ),
    }
}

/// The command's stdout and stderr pipes (read end, write end), in both modes: streamed output
/// is passed on by us (`supervise`). When our stdout and stderr are one file (`2>&1`, a
/// terminal), streamed output shares one pipe, so that the command's lines keep their order.
type OutputPipes = (
    Option<OwnedFd>,
    Option<OwnedFd>,
    Option<OwnedFd>,
    Option<OwnedFd>,
);

fn output_pipes(policy: &SandboxPolicy) -> Result<OutputPipes, Failure> {
    let (out_r, out_w) = pipe()?;
    if matches!(policy.output, OutputMode::Stream)
        && same_file(std::io::stdout().as_fd(), std::io::stderr().as_fd())
    {
        let err_w = out_w
            .try_clone()
            .map_err(|e| Failure::external(e.to_string()))?;
        Ok((Some(out_r), Some(out_w), None, Some(err_w)))
    } else {
        let (err_r, err_w) = pipe()?;
        Ok((Some(out_r), Some(out_w), Some(err_r), Some(err_w)))
    }
}

/// The limits the child sets on itself; without cgroups, also those standing in for theirs.
fn rlimits(policy: &SandboxPolicy, use_cgroups: bool) -> child::Rlimits {
    let open_files_allowed = Resource::NOFILE.get().map_or(u64::MAX, |(_, hard)| hard);
    let mut rlimits = vec![
        (Resource::FSIZE, policy.file_size_bytes),
        (Resource::NOFILE, policy.open_files.min(open_files_allowed)),
        (Resource::CORE, 0),
    ];
    if !use_cgroups {
        rlimits.push((Resource::NPROC, u64::from(policy.pids)));
        rlimits.push((Resource::DATA, policy.memory_bytes));
    }
    rlimits
}

/// What we make beside the child `(pid, pidfd)` and send it on `channel`: the view's mount
/// trees, id-mapped onto the sandbox uid (`trees`, when started as root), and the run's cgroups
/// (`cgroup_name`). A refusal stops the child.
fn hand_over(
    channel: &OwnedFd,
    trees: Option<(&ViewPlan, u32)>,
    cgroup_name: Option<&str>,
    policy: &SandboxPolicy,
    (pid, pidfd): (libc::pid_t, &OwnedFd),
) -> Result<Option<RunCgroups>, Attempt> {
    let stop_child = || {
        let _ = sys::pidfd_send_signal(pidfd.as_raw_fd(), libc::SIGKILL);
        let _ = nix::sys::wait::waitpid(Pid::from_raw(pid), None);
    };
    if let Some((view, sandbox_id)) = trees {
        hand_over_trees(view, sandbox_id, channel).map_err(|reason| {
            stop_child();
            if policy.allow_degraded {
                Attempt::ViewRefused(reason)
            } else {
                Attempt::Failed(layer_failure("filesystem", &reason))
            }
        })?;
    }
    let Some(name) = cgroup_name else {
        return Ok(None);
    };
    let cgroups = hand_over_cgroups(name, policy, channel).map_err(|reason| {
        stop_child();
        Attempt::CgroupsRefused(reason)
    })?;
    Ok(Some(cgroups))
}

/// Makes the view's mount trees, id-mapped onto the sandbox uid, and sends them to the child on
/// `channel`.
fn hand_over_trees(view: &ViewPlan, sandbox_id: u32, channel: &OwnedFd) -> Result<(), String> {
    let maker = Maker::Parent {
        map_writable_onto: (sandbox_id, sandbox_id),
    };
    let trees = trees::make(&view.binds, maker)?;
    // A child that cannot take them has ended already, and its report (read later) says why.
    let _ = trees::send(channel.as_raw_fd(), &trees);
    Ok(())
}

/// Makes the run's cgroups `name` with the policy's limits, and sends the child their `tasks`
/// files on `channel`.
fn hand_over_cgroups(
    name: &str,
    policy: &SandboxPolicy,
    channel: &OwnedFd,
) -> Result<RunCgroups, String> {
    let mut cgroups = RunCgroups::locate(name)?;
    cgroups.create(policy.memory_bytes, policy.pids, policy.cpus)?;
    let tasks_files = cgroups.open_tasks_files()?;
    let tasks_fds: Vec<RawFd> = tasks_files.iter().map(AsRawFd::as_raw_fd).collect();
    // A child that cannot take them has ended already, and its report says why.
    let _ = sys::send_fds(channel.as_raw_fd(), &tasks_fds);
    drop(tasks_files);
    cgroups.while_running();
    Ok(cgroups)
}

/// A layer that could not be applied, so nothing ran.
fn layer_failure(layer: &str, reason: &str) -> Failure {
    Failure::external(format!("cannot apply the {layer} layer: {reason}")).with_hint(
        "nothing was run; pass --allow-degraded to run with the layers that remain (the result lists them)",
    )
}

/// Whether two of our descriptors are the same file.
fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    let stat = |fd| {
        nix::sys::stat::fstat(fd)
            .ok()
            .map(|stat| (stat.st_dev, stat.st_ino))
    };
    stat(a).is_some_and(|file| stat(b) == Some(file))
}

/// Moves process `pid` to one CPU of `allowed` other than the one we run on (when there is
/// one), so that both make progress at once.
fn move_to_another_cpu(pid: libc::pid_t, allowed: &CpuSet) {
    let here = nix::sched::sched_getcpu().ok();
    let Some(other) =
        (0..CpuSet::count()).find(|&cpu| Some(cpu) != here && allowed.is_set(cpu).unwrap_or(false))
    else {
        return;
    };
    let mut only = CpuSet::new();
    if only.set(other).is_ok() {
        let _ = nix::sched::sched_setaffinity(Pid::from_raw(pid), &only);
    }
}

/// The child's instructions for the view. Without cgroups nothing charges the tmpfs mounts (the
/// private /tmp, /dev/shm, the layered directories' writes) to the memory limit, so they get a
/// share of it instead of all of it.
fn view_plan(
    view: &SandboxView,
    memory_bytes: u64,
    sandbox_uid: Option<u32>,
    cgroups: bool,
    trees_from: Option<RawFd>,
    policy: &SandboxPolicy,
) -> ViewPlan {
    let (tmp_size, shm_size) = if cgroups {
        (memory_bytes, memory_bytes)
    } else {
        (memory_bytes / 2, memory_bytes / 4)
    };
    let owner = sandbox_uid.map_or(String::new(), |id| format!(",uid={id},gid={id}"));
    let options = |text: String| CString::new(text).expect("mount options hold no NUL");
    ViewPlan {
        binds: view
            .binds
            .iter()
            .map(|bind| BindPlan {
                path: c_path(&bind.path),
                fd: bind.fd.as_raw_fd(),
                access: bind.access,
                is_dir: bind.is_dir,
                owner: bind.owner,
            })
            .collect(),
        symlinks: view
            .symlinks
            .iter()
            .map(|(link, target)| (c_path(link), c_path(target)))
            .collect(),
        trees_from,
        disk: policy
            .disk_bytes
            .map(|size| (c_path(&policy.workspace), size)),
        layers: policy
            .layered
            .iter()
            .map(|layer| LayerPlan {
                target: c_path(&policy.workspace.join(&layer.at)),
                lower: c_path(&layer.lower),
            })
            .collect(),
        own_sysfs: view.own_sysfs,
        tmp_options: options(format!("mode=0700{owner},size={tmp_size},nr_inodes=262144")),
        layer_options: options(format!("mode=0700,size={tmp_size},nr_inodes=262144")),
        shm_options: options(format!("mode=1777,size={shm_size},nr_inodes=65536")),
    }
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

/// A pipe whose ends close on exec.
pub(crate) fn pipe() -> Result<(OwnedFd, OwnedFd), Failure> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|errno| {
        Failure::external(format!(
            "cannot create a pipe: {}",
            std::io::Error::from(errno)
        ))
    })
}

/// A connected pair of `SOCK_SEQPACKET` sockets (messages keep their bounds and can carry
/// descriptors).
fn seqpacket_pair() -> Result<(OwnedFd, OwnedFd), Failure> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType};
    let flags = SockFlag::SOCK_CLOEXEC;
    nix::sys::socket::socketpair(AddressFamily::Unix, SockType::SeqPacket, None, flags).map_err(
        |errno| {
            Failure::external(format!(
                "cannot create a socket pair: {}",
                std::io::Error::from(errno)
            ))
        },
    )
}

/// What the command gets as stdin, when not ours as it is: `/dev/null` instead of a terminal, so
/// nothing inside can read (or type into) it; with the network off, a pipe instead of a network
/// socket (a connection the caller was started on would be the command's way out), with what
/// comes in on the socket relayed into it.
fn open_stdin(network: bool) -> Result<(Option<OwnedFd>, Option<StdinRelay>), Failure> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        let null = std::fs::File::open("/dev/null")
            .map_err(|err| Failure::external(format!("cannot open /dev/null: {err}")))?;
        return Ok((Some(OwnedFd::from(null)), None));
    }
    if network || !is_network_socket(0) {
        return Ok((None, None));
    }
    let (read, write) = pipe()?;
    Ok((Some(read), Some(StdinRelay { write })))
}

/// Whether `fd` is a socket of a family other than AF_UNIX (a socketpair, as Node and others
/// give their children, stays as it is).
fn is_network_socket(fd: RawFd) -> bool {
    use nix::sys::socket::{AddressFamily, SockaddrLike, SockaddrStorage};
    // Fails (ENOTSOCK) for anything but a socket.
    nix::sys::socket::getsockname::<SockaddrStorage>(fd)
        .ok()
        .and_then(|address| address.family())
        .is_some_and(|family| family != AddressFamily::Unix)
}

/// Copies what arrives on our stdin (a network socket) into the command's (a pipe), on a thread
/// of its own, until either side ends.
struct StdinRelay {
    write: OwnedFd,
}

impl StdinRelay {
    fn start(self) {
        use std::io::{Read, Write};
        std::thread::spawn(move || {
            let mut pipe = std::fs::File::from(self.write);
            let mut stdin = std::io::stdin().lock();
            // Read and written, never spliced (as `io::copy` would): a splice waiting on a
            // silent socket holds the pipe's lock, and the command could not even exit.
            let mut buffer = vec![0; 64 * 1024];
            loop {
                match stdin.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) if pipe.write_all(&buffer[..n]).is_ok() => {}
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    _ => break,
                }
            }
        });
    }
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
