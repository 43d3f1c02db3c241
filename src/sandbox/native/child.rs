//! What runs between clone and exec: the child sets up its mounts, limits, identity, Landlock and
//! seccomp, in that order, takes the cgroups' files, then starts the command and stays behind as
//! its init.
//!
//! The command joins the run's cgroups itself, just before exec, by writing `0` to their `tasks`
//! files: moving oneself takes no global lock, where moving another process (even one thread, by
//! its pid) waits for an RCU grace period. The files are the parent's
//! (cgroup v1 checks who opened them, not our dropped identity), handed over last, so that the
//! parent, making the cgroups meanwhile, is done before we wait for it.
//!
//! The child (pid 1 of a new PID namespace) reports to the parent over a pipe, one line each:
//! `degraded LAYER REASON` (only with --allow-degraded), `fail LAYER REASON` (then exits 125),
//! `noview REASON` (the view could not be built, with --allow-degraded; then exits 125),
//! `join ERRNO` (the command could not join a cgroup), `exec ERRNO` (the command could not be
//! executed), `panic MESSAGE` (a bug of ours; then exits 125), with --disk `hold` (the command
//! has ended and its changes are being written back: not to be stopped), `conflict JSON` for
//! each file the host changed meanwhile (see `disk`), and `disk full` or `disk REASON`, and, once the command has ended, `status RAW_WAIT_STATUS`. By then the child has killed and reaped whatever else was left in
//! the namespace, setsid'ed daemons included; it closes the pipe and leaves, and the parent
//! removes the cgroups (which the child was never in) while the kernel tears the namespaces down.
//!
//! The parent is single-threaded when it clones, so allocating here is safe; everything the
//! child needs is prepared in `ChildPlan` beforehand. System calls go through `nix` and
//! `rlimit`; raw ones remain only where those lack them: the loopback ioctl, the vforked
//! command's start (`clone` with `CLONE_VFORK`, then only async-signal-safe calls) and the
//! raw wait status the parent is told.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sched::CpuSet;
use nix::sys::signal::Signal;
use nix::unistd::{Gid, Pid, Uid};

use super::disk;
use super::fs_rules::{FsRules, OpenedPath};
use super::syscall_filter::Program;
use super::trees::{self, Maker};
use super::view::Access;
use crate::sys;

/// A host path to mount at the same place in the command's view (see `view`).
pub(crate) struct BindPlan {
    pub path: CString,
    /// `O_PATH` descriptor opened by the parent: the mount is made from it, not from the path.
    pub fd: RawFd,
    pub access: Access,
    pub is_dir: bool,
    pub owner: (u32, u32),
}

/// The command's filesystem: a fresh root with only these in it.
pub(crate) struct ViewPlan {
    pub binds: Vec<BindPlan>,
    /// Top-level symlinks to recreate (`/bin -> usr/bin`).
    pub symlinks: Vec<(CString, CString)>,
    /// Where the parent hands over the mount trees (root), if it makes them.
    pub trees_from: Option<RawFd>,
    /// The workspace's path and the --disk limit: it is seen through an overlay (`disk`).
    pub disk: Option<(CString, u64)>,
    /// The workspace's layered directories (`SandboxPolicy::layered`), by their paths.
    pub layers: Vec<LayerPlan>,
    /// `/sys` is a sysfs of the command's own network namespace, not the host's.
    pub own_sysfs: bool,
    /// tmpfs options of the private /tmp and /dev/shm, and of a layered directory's writes.
    pub tmp_options: CString,
    pub shm_options: CString,
    pub layer_options: CString,
}

/// A layered directory of the workspace: `target` shows `lower` (mounted at its own path in the
/// view first), with what the command writes there in a tmpfs.
pub(crate) struct LayerPlan {
    pub target: CString,
    pub lower: CString,
}

/// How to join the run's cgroups, once the parent has made them.
pub(crate) struct JoinPlan {
    /// The `tasks` files of the run's cgroups, open for writing, arrive here once the cgroups
    /// exist with their limits.
    pub ready: RawFd,
}

pub(crate) type Rlimits = Vec<(rlimit::Resource, u64)>;

pub(crate) struct ChildPlan<'a> {
    pub status_fd: BorrowedFd<'a>,
    /// The parent's ends of the pipes we share, closed first: then the pipes tell us when the
    /// parent is gone (end-of-file on ours to read, an error on ours to write).
    pub parent_ends: Vec<RawFd>,
    /// How to join the run's cgroups (None when rlimits hold the limits).
    pub cgroups: Option<JoinPlan>,
    pub stdin: BorrowedFd<'a>,
    pub stdout: Option<BorrowedFd<'a>>,
    pub stderr: Option<BorrowedFd<'a>>,
    /// (uid, gid) to map onto themselves in a new user namespace (ordinary users).
    pub self_map: Option<(u32, u32)>,
    pub rlimits: Rlimits,
    /// CPUs to keep when no cgroup holds the CPU limit.
    pub cpu_affinity: Option<usize>,
    /// The CPUs we may run on, restored once the parent has handed over what it made meanwhile
    /// (the mount trees, the cgroups): it moved us to one of them before.
    pub restore_cpus: Option<CpuSet>,
    /// None when running without a mount namespace (degraded).
    pub view: Option<ViewPlan>,
    /// The command has a network namespace of its own, whose `lo` is brought up.
    pub loopback: bool,
    /// (uid, gid) to switch to (when started as root); also what id-mapped mounts map onto.
    pub switch_to: Option<(u32, u32)>,
    pub fs_rules: FsRules,
    pub seccomp: Program,
    pub cwd: CString,
    pub program: CString,
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    pub allow_degraded: bool,
    /// Where our own command line lies in memory (`sys::argument_area`): the init, which is a
    /// copy of us, blanks it, so that the command cannot read ours (`--env KEY=SECRET`, a
    /// model's URL) in `/proc/1/cmdline`.
    pub our_arguments: Option<(usize, usize)>,
}

/// A layer failed: with --allow-degraded say so and go on, otherwise give up.
struct Reporter<'a> {
    fd: BorrowedFd<'a>,
    allow_degraded: bool,
}

impl Reporter<'_> {
    fn line(&self, text: &str) {
        let mut line = text.replace('\n', " ");
        line.push('\n');
        sys::write_all(self.fd.as_raw_fd(), line.as_bytes());
    }

    fn fail(&self, layer: &str, reason: &str) -> ! {
        self.line(&format!("fail {layer} {reason}"));
        sys::exit_now(125)
    }

    fn layer(&self, layer: &str, result: Result<(), String>) {
        if let Err(reason) = result {
            if self.allow_degraded {
                self.line(&format!("degraded {layer} {reason}"));
            } else {
                self.fail(layer, &reason);
            }
        }
    }
}

fn step(what: &str, result: sys::SysResult<()>) -> Result<(), String> {
    result.map_err(|errno| format!("{what}: {}", std::io::Error::from_raw_os_error(errno)))
}

fn step_nix(what: &str, result: nix::Result<()>) -> Result<(), String> {
    step(what, result.map_err(|errno| errno as i32))
}

/// Brings up the network namespace's `lo`, which starts down: servers on 127.0.0.1 and ::1 then
/// work, and nothing else is there to reach.
fn bring_up_loopback() -> Result<(), String> {
    /// `struct ifreq` as SIOCGIFFLAGS and SIOCSIFFLAGS use it: the name, then the flags.
    #[repr(C)]
    struct InterfaceFlags {
        name: [u8; libc::IFNAMSIZ],
        flags: libc::c_short,
        padding: [u8; 22],
    }
    let mut request = InterfaceFlags {
        name: [0; libc::IFNAMSIZ],
        flags: 0,
        padding: [0; 22],
    };
    request.name[..2].copy_from_slice(b"lo");
    use nix::sys::socket::{AddressFamily, SockFlag, SockType};
    let socket = nix::sys::socket::socket(
        AddressFamily::Inet,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|errno| format!("cannot bring up lo: {}", std::io::Error::from(errno)))?;
    let socket = socket.as_raw_fd();
    // SAFETY: ioctls on a socket of our own, which read and write `request`.
    unsafe {
        let done = libc::ioctl(socket, libc::SIOCGIFFLAGS, &mut request) == 0 && {
            request.flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            libc::ioctl(socket, libc::SIOCSIFFLAGS, &request) == 0
        };
        let err = std::io::Error::last_os_error();
        if done {
            Ok(())
        } else {
            Err(format!("cannot bring up lo: {err}"))
        }
    }
}

/// Runs in the cloned child; never returns.
pub(crate) fn run(plan: &ChildPlan<'_>) -> ! {
    let report = Reporter {
        fd: plan.status_fd,
        allow_degraded: plan.allow_degraded,
    };
    if let Some((start, end)) = plan.our_arguments {
        // SAFETY: our own copy of the arguments' bytes (the clone shares no memory with the
        // parent), read by nothing here after the plan was made.
        unsafe { std::ptr::write_bytes(start as *mut u8, 0, end.saturating_sub(start)) };
    }
    // A panic here is a bug of ours: say so, or its exit status would pass for the command's,
    // and leave at once, since unwinding would run the parent's destructors in this copy of it.
    let status_fd = plan.status_fd.as_raw_fd();
    std::panic::set_hook(Box::new(move |info| {
        let line = format!("panic {info}").replace('\n', " ") + "\n";
        sys::write_all(status_fd, line.as_bytes());
        sys::exit_now(125)
    }));
    let overlay = isolate(plan, &report);
    if plan.cgroups.is_none() {
        restore_cpus(plan);
    }
    confine(plan, &report, overlay.as_ref());
    // The cgroups are handed over last, so that the parent has the longest time to make them.
    // The command joins them, not we: once it is gone, the parent can remove them while we are
    // still on our way out.
    let tasks_files = match &plan.cgroups {
        Some(join) => {
            let files = receive_cgroups(join, &report);
            restore_cpus(plan);
            files
        }
        None => Vec::new(),
    };
    // The overlay's layers stay ours (they close on the command's exec).
    let held: Vec<RawFd> = overlay
        .iter()
        .flat_map(disk::Overlay::descriptors)
        .map(|fd| fd.as_raw_fd())
        .collect();
    let command = start_command(plan, &report, &tasks_files, &held);
    // The init's copies of the standard streams and of the cgroups' files are not needed;
    // closing them lets the parent see end-of-file as soon as the command and its children are
    // gone.
    for fd in 0..3 {
        let _ = nix::unistd::close(fd);
    }
    drop(tasks_files);
    reap_until(command, &report, plan.status_fd.as_raw_fd(), overlay)
}

/// Leaves the parent's world: our own user namespace (an ordinary user), session, loopback
/// and view; returns the workspace's overlay, with --disk.
fn isolate(plan: &ChildPlan<'_>, report: &Reporter) -> Option<disk::Overlay> {
    if let Some((uid, gid)) = plan.self_map {
        report.layer("identity", write_self_map(uid, gid));
    }
    // Our copies of descriptors the parent keeps.
    for &fd in &plan.parent_ends {
        let _ = nix::unistd::close(fd);
    }
    let _ = nix::unistd::setsid();
    if plan.loopback {
        report.layer("network", bring_up_loopback());
    }
    if let Some(view) = &plan.view {
        // A view half built is no layer at all, and the Landlock rules below assume the view:
        // never go on without it. The parent runs the command again without namespaces when
        // degraded layers are allowed.
        match set_up_view(view, plan.switch_to, plan.switch_to.or(plan.self_map)) {
            Ok(overlay) => return overlay,
            Err(reason) => {
                if !plan.allow_degraded {
                    report.fail("filesystem", &reason);
                }
                report.line(&format!("noview {reason}"));
                sys::exit_now(125)
            }
        }
    }
    None
}

/// Applies the limits, the identity, Landlock and seccomp, in that order. With an `overlay`
/// the command writes the workspace through it, and we write its layers back after it.
fn confine(plan: &ChildPlan<'_>, report: &Reporter, overlay: Option<&disk::Overlay>) {
    // The Landlock rules open their paths now, while we may still open anything, so that a
    // workspace below a directory closed to the sandbox uid is still allowed.
    let opened: Vec<OpenedPath> = plan
        .view
        .iter()
        .flat_map(|view| &view.binds)
        .map(|bind| OpenedPath {
            path: Path::new(std::ffi::OsStr::from_bytes(bind.path.as_bytes())),
            fd: match overlay {
                Some(overlay) if plan.cwd == bind.path => overlay.merged.as_fd(),
                // SAFETY: the parent's descriptor, open in this process until the command starts.
                _ => unsafe { BorrowedFd::borrow_raw(bind.fd) },
            },
            is_dir: bind.is_dir,
        })
        .collect();
    let layers = overlay.map(disk::Overlay::layers);
    let ruleset = plan
        .fs_rules
        .prepare(&opened, layers.as_ref().map_or(&[], |l| &l[..]));
    report.layer("resources", set_rlimits(&plan.rlimits));
    if let Some(cpus) = plan.cpu_affinity {
        report.layer("resources", limit_cpus(cpus));
    }
    if !plan.fs_rules.network && sys::landlock_abi() < 6 {
        report.layer("network", Err(format!(
            "Landlock ABI {} cannot keep the command from abstract UNIX sockets outside (needs ABI 6, Linux 6.12)",
            sys::landlock_abi()
        )));
    }
    if let Err(errno) = nix::unistd::chdir(plan.cwd.as_c_str()) {
        let reason = format!(
            "cannot enter the workspace: {}",
            std::io::Error::from(errno)
        );
        report.fail("filesystem", &reason);
    }
    if let Some((uid, gid)) = plan.switch_to {
        report.layer("identity", switch_identity(uid, gid));
    }
    // Not a layer that may be missing: the view is our root by chroot, which a capability would
    // undo.
    if let Err(reason) = step("cannot drop capabilities", sys::drop_capabilities()) {
        report.fail("identity", &reason);
    }
    // The parent-death signal is set after the identity change, which clears it.
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    let _ = nix::sys::prctl::set_dumpable(false);
    if parent_gone(plan.status_fd) {
        // Leaving before the command starts: no one would watch it.
        sys::exit_now(125);
    }
    report.layer(
        "identity",
        step_nix(
            "cannot set no_new_privs",
            nix::sys::prctl::set_no_new_privs(),
        ),
    );
    report.layer("filesystem", ruleset.and_then(FsRules::restrict_self));
    report.layer(
        "seccomp",
        step(
            "cannot install the seccomp filter",
            plan.seccomp
                .iter()
                .try_for_each(|filter| sys::install_seccomp(filter)),
        ),
    );
}

/// Starts the command on the standard descriptors the plan gives it, joining the cgroups whose
/// `tasks_files` are given; returns its pid. Our descriptors are closed first, but for the
/// report pipe, those files and `kept`.
fn start_command(
    plan: &ChildPlan<'_>,
    report: &Reporter,
    tasks_files: &[OwnedFd],
    kept: &[RawFd],
) -> libc::pid_t {
    let join: Vec<RawFd> = tasks_files.iter().map(AsRawFd::as_raw_fd).collect();
    // Onto the standard descriptors; the originals are closed just after.
    let _ = nix::unistd::dup2_stdin(plan.stdin);
    if let Some(fd) = plan.stdout {
        let _ = nix::unistd::dup2_stdout(fd);
    }
    if let Some(fd) = plan.stderr {
        let _ = nix::unistd::dup2_stderr(fd);
    }
    let status_fd = plan.status_fd.as_raw_fd();
    sys::close_descriptors_except(3, &[&[status_fd][..], &join, kept].concat());

    let argv = null_terminated(&plan.argv);
    let envp = null_terminated(&plan.envp);
    let exec = ExecArgs {
        program: plan.program.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        status_fd,
        join: &join,
        allow_degraded: plan.allow_degraded,
    };
    // The command starts with vfork semantics (shared memory, we pause until it execs): no page
    // tables to copy.
    // Left unwritten: zeroing it would touch every page (a page fault each, on the way to the
    // command), where the callback uses only the top one.
    let mut stack: Vec<u8> = Vec::with_capacity(64 * 1024);
    let stack_top = (stack.as_mut_ptr() as usize + stack.capacity()) & !15;
    // SAFETY: the callback runs on its own stack, reads only `exec` (alive until it execs or
    // exits, since CLONE_VFORK pauses us until then) and calls only async-signal-safe functions.
    let command = unsafe {
        libc::clone(
            exec_command,
            stack_top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &exec as *const ExecArgs as *mut libc::c_void,
        )
    };
    drop(stack);
    if command < 0 {
        report.fail(
            "containment",
            &format!(
                "cannot start the command: {}",
                std::io::Error::last_os_error()
            ),
        );
    }
    command
}

/// Whether the parent died before our parent-death signal was armed: the report pipe then has
/// no reader left.
fn parent_gone(report: BorrowedFd<'_>) -> bool {
    let mut fds = [PollFd::new(report, PollFlags::empty())];
    let ready = nix::poll::poll(&mut fds, PollTimeout::ZERO);
    matches!(ready, Ok(1..))
        && fds[0]
            .revents()
            .is_some_and(|revents| revents.contains(PollFlags::POLLERR))
}

/// Waits until the parent has made the run's cgroups (if it cannot, it kills us), and takes the
/// `tasks` files it hands over, through which the command joins them.
fn receive_cgroups(join: &JoinPlan, report: &Reporter) -> Vec<OwnedFd> {
    match sys::receive_fds(join.ready) {
        Ok(files) if !files.is_empty() => files,
        _ => report.fail("resources", "the run's cgroups were never handed over"),
    }
}

/// Takes back all the CPUs we may run on, once the parent has handed over what it made beside
/// us: by then its move of us to another CPU is done.
fn restore_cpus(plan: &ChildPlan) {
    if let Some(cpus) = &plan.restore_cpus {
        let _ = nix::sched::sched_setaffinity(Pid::from_raw(0), cpus);
    }
}

struct ExecArgs<'a> {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    status_fd: RawFd,
    /// The `tasks` files of the run's cgroups, to join before exec.
    join: &'a [RawFd],
    allow_degraded: bool,
}

/// Runs in the command's process before exec: restores default signal handling (Rust ignores
/// SIGPIPE), joins the run's cgroups and execs. Without allocating, it reports a cgroup it
/// cannot join as `join ERRNO` (and exits unless degraded layers are allowed), and a failed
/// exec as `exec ERRNO` (and exits).
extern "C" fn exec_command(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points at the init's ExecArgs, alive while we run (CLONE_VFORK).
    unsafe {
        let exec = &*(arg as *const ExecArgs);
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        for &tasks in exec.join {
            if libc::write(tasks, b"0".as_ptr().cast(), 1) != 1 {
                report_errno(exec.status_fd, *b"join ", sys::errno());
                if !exec.allow_degraded {
                    libc::_exit(125);
                }
                break;
            }
        }
        libc::execve(exec.program, exec.argv, exec.envp);
        let errno = sys::errno();
        report_errno(exec.status_fd, *b"exec ", errno);
        libc::_exit(if errno == libc::ENOENT { 127 } else { 126 })
    }
}

/// Writes `TAG ERRNO` on the report pipe, without allocating.
fn report_errno(status_fd: RawFd, tag: [u8; 5], errno: i32) {
    let mut line = *b"TAG_ 0000\n";
    line[..5].copy_from_slice(&tag);
    let mut value = errno;
    for slot in (5..9).rev() {
        line[slot] = b'0' + (value % 10) as u8;
        value /= 10;
    }
    sys::write_all(status_fd, &line);
}

/// Waits for the command, reaping every orphan handed to us meanwhile. Once it has ended, kills
/// and reaps whatever else is left in the namespace (we are its init), reports the command's
/// `status RAW_WAIT_STATUS` and leaves: the parent can remove the run's cgroups, which none of
/// the command's processes are in any longer, while the kernel tears the namespaces down.
fn reap_until(
    command: libc::pid_t,
    report: &Reporter,
    status_fd: RawFd,
    overlay: Option<disk::Overlay>,
) -> ! {
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own children; the raw status is what we report.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == command {
            // Without a PID namespace (degraded) we are not its init: -1 would be every process
            // our uid may signal.
            if nix::unistd::getpid().as_raw() == 1 {
                let _ = nix::sys::signal::kill(Pid::from_raw(-1), Signal::SIGKILL);
                while matches!(
                    nix::sys::wait::waitpid(None, None),
                    Ok(_) | Err(Errno::EINTR)
                ) {}
            }
            if let Some(overlay) = &overlay {
                // Not to be stopped now: the workspace would be left half written.
                report.line("hold");
                match disk::write_back(overlay) {
                    Ok(disk::Outcome::Full) => report.line("disk full"),
                    Ok(disk::Outcome::WrittenBack(conflicts)) => {
                        for conflict in conflicts {
                            let said = serde_json::to_string(&conflict).unwrap_or_default();
                            report.line(&format!("conflict {said}"));
                        }
                    }
                    Err(reason) => report.line(&format!("disk {reason}")),
                }
            }
            report.line(&format!("status {status}"));
            // Our end of the report pipe closed is the parent's end-of-file.
            let _ = nix::unistd::close(status_fd);
            sys::exit_now(0)
        }
        if pid < 0 && sys::errno() != libc::EINTR {
            report.fail("containment", "lost track of the command");
        }
    }
}

fn null_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

fn write_self_map(uid: u32, gid: u32) -> Result<(), String> {
    let write = |path: &str, text: String| {
        std::fs::write(path, text).map_err(|err| format!("cannot write {path}: {err}"))
    };
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))
}

/// Builds the command's view and makes it the root: an empty tmpfs becomes the new root and the
/// mount trees are attached inside it. An ordinary user's child copies the trees itself, first
/// (the host paths below /tmp are about to be covered); root's arrive from the parent on
/// `trees_from` meanwhile.
///
/// The view becomes the root by `chroot`, not `pivot_root`: detaching the old root after a pivot
/// waits for an RCU grace period (on the way to the command), where a
/// namespace's teardown pays one for all its mounts at once. The host's mounts stay in the
/// namespace, out of reach: the command has no CAP_SYS_CHROOT, the kernel lets no chrooted
/// process make a user namespace (where it would have one), `..` stops at the root, and
/// `/proc/self/mountinfo`, `statmount` and `listmount` show nothing outside it. Our copies of
/// them receive the host's mount events (slave propagation, as bwrap's do), so that a filesystem
/// the host unmounts meanwhile is released here too; where the host's mounts are not shared
/// (systemd shares them), our copies hold such filesystems until the command ends.
fn set_up_view(
    plan: &ViewPlan,
    sandbox_id: Option<(u32, u32)>,
    command_id: Option<(u32, u32)>,
) -> Result<Option<disk::Overlay>, String> {
    let io = |what: String| move |err: std::io::Error| format!("{what}: {err}");
    step(
        "cannot keep our mounts from the host",
        sys::mount(c"none", c"/", None, libc::MS_REC | libc::MS_SLAVE, None),
    )?;
    let mut trees = match plan.trees_from {
        Some(_) => Vec::new(),
        None => trees::make(&plan.binds, Maker::Child)?,
    };
    let tmpfs_flags = libc::MS_NOSUID | libc::MS_NODEV;
    step(
        "cannot make the new root",
        sys::mount(
            c"tmpfs",
            c"/tmp",
            Some(c"tmpfs"),
            tmpfs_flags,
            Some(c"mode=0755,size=1m,nr_inodes=4096"),
        ),
    )?;
    std::env::set_current_dir("/tmp").map_err(io("cannot enter the new root".into()))?;
    for (link, target) in &plan.symlinks {
        let link = relative(link);
        std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target.as_bytes()), link)
            .map_err(io(format!("cannot link {}", link.display())))?;
    }
    kernel_filesystems_and_home(plan, sandbox_id)?;
    if let Some(channel) = plan.trees_from {
        trees = trees::receive(channel, plan.binds.len())?;
    }
    let mut overlay = None;
    for (tree, bind) in trees.iter().zip(&plan.binds) {
        let target = relative(&bind.path);
        if std::fs::symlink_metadata(target).is_err() {
            let created = if bind.is_dir {
                std::fs::create_dir_all(target)
            } else {
                target
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::File::create(target).map(drop))
            };
            created.map_err(io(format!(
                "cannot make room for {}",
                bind.path.to_string_lossy()
            )))?;
        }
        match &plan.disk {
            Some((workspace, size)) if *workspace == bind.path => {
                overlay = Some(disk::mount(tree, target, *size)?);
                continue;
            }
            _ => {}
        }
        let c_target = CString::new(target.as_os_str().as_bytes()).expect("paths hold no NUL byte");
        step(
            &format!("cannot mount {}", bind.path.to_string_lossy()),
            sys::move_mount(tree.as_raw_fd(), &c_target),
        )?;
    }
    for (index, layer) in plan.layers.iter().enumerate() {
        mount_layer(layer, index, &plan.layer_options)?;
    }
    if let Some(id) = command_id {
        // Not a layer: without it the command only cannot name its user.
        let _ = account(id);
    }
    step(
        "cannot switch to the new root",
        sys::root_at_current_directory(),
    )?;
    let flags =
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
    step(
        "cannot make the new root read-only",
        sys::mount(c"none", c"/", None, flags, None),
    )?;
    Ok(overlay)
}

/// In the new root (the current directory): /proc, /sys when it is the command's own,
/// /dev/shm and /tmp, /dev's links to the descriptors, and the private
/// home (the sandbox's uid's, when there is one).
fn kernel_filesystems_and_home(
    plan: &ViewPlan,
    sandbox_id: Option<(u32, u32)>,
) -> Result<(), String> {
    let io = |what: String| move |err: std::io::Error| format!("{what}: {err}");
    let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let tmpfs_flags = libc::MS_NOSUID | libc::MS_NODEV;
    for dir in ["proc", "dev/shm", "tmp", "var"] {
        std::fs::create_dir_all(dir).map_err(io(format!("cannot create /{dir}")))?;
    }
    step(
        "cannot mount /proc",
        sys::mount(c"proc", c"proc", Some(c"proc"), proc_flags, None),
    )?;
    if plan.own_sysfs {
        std::fs::create_dir("sys").map_err(io("cannot create /sys".into()))?;
        step(
            "cannot mount /sys",
            sys::mount(
                c"sysfs",
                c"sys",
                Some(c"sysfs"),
                proc_flags | libc::MS_RDONLY,
                None,
            ),
        )?;
    }
    step(
        "cannot mount /dev/shm",
        sys::mount(
            c"tmpfs",
            c"dev/shm",
            Some(c"tmpfs"),
            tmpfs_flags,
            Some(&plan.shm_options),
        ),
    )?;
    step(
        "cannot mount /tmp",
        sys::mount(
            c"tmpfs",
            c"tmp",
            Some(c"tmpfs"),
            tmpfs_flags,
            Some(&plan.tmp_options),
        ),
    )?;
    for (link, target) in [
        ("dev/fd", "/proc/self/fd"),
        ("dev/stdin", "/proc/self/fd/0"),
        ("dev/stdout", "/proc/self/fd/1"),
        ("dev/stderr", "/proc/self/fd/2"),
        ("var/tmp", "/tmp"),
    ] {
        std::os::unix::fs::symlink(target, link).map_err(io(format!("cannot link /{link}")))?;
    }
    std::fs::create_dir("tmp/home").map_err(io("cannot create the private home".into()))?;
    if let Some((uid, gid)) = sandbox_id {
        std::os::unix::fs::chown("tmp/home", Some(uid), Some(gid))
            .map_err(io("cannot hand the private home over".into()))?;
    }
    Ok(())
}

/// Gives the command's uid and gid an entry in the view's /etc/passwd and /etc/group where the
/// host's have none (the sandbox's own uid never has one), with the private home: programs that
/// ask who runs them (`getpass.getuser()`, `~`, `id -un`) work as they do outside. Each file is
/// the host's with a line added, written in the new root, mounted read-only over the host's, and
/// unlinked (the mount holds it).
fn account((uid, gid): (u32, u32)) -> Result<(), String> {
    let home = crate::sandbox::PRIVATE_HOME;
    let entries = [
        (
            "etc/passwd",
            uid,
            format!("autocoder:x:{uid}:{gid}:autocoder sandbox:{home}:/bin/sh"),
        ),
        ("etc/group", gid, format!("autocoder:x:{gid}:")),
    ];
    for (file, id, entry) in entries {
        let host = std::fs::read_to_string(file).map_err(|err| format!("{file}: {err}"))?;
        let id = id.to_string();
        if host
            .lines()
            .any(|line| line.split(':').nth(2) == Some(id.as_str()))
        {
            continue;
        }
        let staged = format!(".{}", file.replace('/', "-"));
        let separator = if host.is_empty() || host.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        std::fs::write(&staged, format!("{host}{separator}{entry}\n"))
            .map_err(|err| format!("{staged}: {err}"))?;
        let c = |path: &str| CString::new(path).expect("no NUL byte");
        let (source, target) = (c(&staged), c(file));
        let read_only = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID;
        let mounted = sys::mount(&source, &target, None, libc::MS_BIND, None)
            .and_then(|()| sys::mount(c"none", &target, None, read_only | libc::MS_NODEV, None));
        let _ = std::fs::remove_file(&staged);
        mounted.map_err(|errno| format!("cannot mount {file}: errno {errno}"))?;
    }
    Ok(())
}

/// The overlay of a layered directory over its place in the workspace, which is reached through
/// no link (the command of an earlier run could have made one there). Its upper layer is a
/// tmpfs, put together in the new root and then hidden: the overlay holds it until it goes.
fn mount_layer(layer: &LayerPlan, index: usize, tmpfs: &CStr) -> Result<(), String> {
    let shown = layer.target.to_string_lossy();
    let failed = |what: &str, errno: Errno| format!("cannot {what} to layer {shown}: {errno}");
    let io = |err: std::io::Error| format!("cannot layer {shown}: {err}");
    let here = std::env::current_dir().map_err(io)?;
    let c_here = |path: &Path| {
        CString::new(here.join(path).into_os_string().into_encoded_bytes()).expect("no NUL")
    };
    let place = sys::open_path_no_symlinks(&c_here(relative(&layer.target)))
        .map_err(|errno| failed("reach the place", Errno::from_raw(errno)))?;
    let assembly = std::path::PathBuf::from(format!(".layer-{index}"));
    std::fs::create_dir(&assembly).map_err(io)?;
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    sys::mount(
        c"tmpfs",
        &c_here(&assembly),
        Some(c"tmpfs"),
        flags,
        Some(tmpfs),
    )
    .map_err(|errno| failed("mount a tmpfs", Errno::from_raw(errno)))?;
    for dir in ["upper", "work"] {
        std::fs::create_dir(assembly.join(dir)).map_err(io)?;
    }
    // The overlay's root is its upper layer's: the owner and mode of what it shows.
    let lower = relative(&layer.lower);
    let shows = nix::sys::stat::stat(lower).map_err(|errno| failed("read what it shows", errno))?;
    let upper = assembly.join("upper");
    std::os::unix::fs::chown(&upper, Some(shows.st_uid), Some(shows.st_gid)).map_err(io)?;
    let mode = std::os::unix::fs::PermissionsExt::from_mode(shows.st_mode & 0o7777);
    std::fs::set_permissions(&upper, mode).map_err(io)?;
    let options = CString::new(format!(
        "lowerdir={},upperdir={1}/upper,workdir={1}/work,userxattr",
        here.join(lower).display(),
        here.join(&assembly).display()
    ))
    .expect("paths hold no NUL byte");
    let at = CString::new(format!("/proc/self/fd/{}", place.as_raw_fd())).expect("no NUL");
    sys::mount(c"overlay", &at, Some(c"overlay"), flags, Some(&options))
        .map_err(|errno| failed("mount an overlay", Errno::from_raw(errno)))?;
    nix::mount::umount2(&assembly, nix::mount::MntFlags::MNT_DETACH)
        .map_err(|errno| failed("hide its tmpfs", errno))?;
    std::fs::remove_dir(&assembly).map_err(io)
}

/// `/a/b` → `a/b`, for paths inside the new root while it is the current directory.
fn relative(path: &CString) -> &Path {
    Path::new(std::ffi::OsStr::from_bytes(
        path.as_bytes()
            .strip_prefix(b"/")
            .unwrap_or(path.as_bytes()),
    ))
}

fn set_rlimits(limits: &[(rlimit::Resource, u64)]) -> Result<(), String> {
    for &(resource, value) in limits {
        resource
            .set(value, value)
            .map_err(|err| format!("cannot set a resource limit: {err}"))?;
    }
    Ok(())
}

fn switch_identity(uid: u32, gid: u32) -> Result<(), String> {
    let (uid, gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
    step_nix(
        "cannot drop supplementary groups",
        nix::unistd::setgroups(&[]),
    )?;
    step_nix("cannot change group", nix::unistd::setresgid(gid, gid, gid))?;
    step_nix("cannot change user", nix::unistd::setresuid(uid, uid, uid))
}

fn limit_cpus(count: usize) -> Result<(), String> {
    let ourselves = Pid::from_raw(0);
    let mut set = nix::sched::sched_getaffinity(ourselves).map_err(|errno| {
        format!(
            "cannot read the CPU affinity: {}",
            std::io::Error::from(errno)
        )
    })?;
    let mut kept = 0;
    for cpu in 0..CpuSet::count() {
        if set.is_set(cpu).unwrap_or(false) {
            if kept < count {
                kept += 1;
            } else {
                let _ = set.unset(cpu);
            }
        }
    }
    step_nix(
        "cannot limit the CPUs",
        nix::sched::sched_setaffinity(ourselves, &set),
    )
}
