//! What runs between clone and exec: the child sets up its namespaces, mounts, limits, identity,
//! Landlock and seccomp, in that order, then forks the command and stays behind as its init.
//!
//! The child (pid 1 of a new PID namespace) reports to the parent over a pipe, one line each:
//! `degraded LAYER REASON` (only with --allow-degraded), `fail LAYER REASON` (then exits 125),
//! `exec ERRNO` (the command could not be executed) and finally `status RAW_WAIT_STATUS`. When it
//! exits, the kernel kills whatever else is left in the namespace, setsid'ed daemons included,
//! before the parent's wait returns.
//!
//! The parent is single-threaded when it clones, so allocating here is safe; everything the
//! child needs is prepared in `ChildPlan` beforehand.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use seccompiler::BpfProgram;

use super::fs_rules::FsRules;
use super::sys;

/// A host path the command must see at the same place inside its mount namespace: one that lies
/// under a hidden directory, or one that is remounted with an id mapping.
pub struct Exposure {
    pub path: CString,
    pub is_dir: bool,
    /// A user namespace whose mapping the mount gets (root: show the owner's files as ours).
    pub idmap_userns: Option<RawFd>,
}

pub struct MountPlan {
    /// Directories covered by an empty private tmpfs (`/tmp`, `/run`, ...), with mount options.
    pub hidden: Vec<(CString, CString)>,
    pub exposures: Vec<Exposure>,
    /// The private home directory to create inside the private /tmp.
    pub home: CString,
}

pub struct ChildPlan {
    pub status_fd: RawFd,
    pub stdin: RawFd,
    pub stdout: Option<RawFd>,
    pub stderr: Option<RawFd>,
    /// (uid, gid) to map onto themselves in a new user namespace (ordinary users).
    pub self_map: Option<(u32, u32)>,
    pub cgroup_procs: Vec<RawFd>,
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    pub cpu_affinity: Option<usize>,
    pub mounts: Option<MountPlan>,
    pub mount_proc: bool,
    /// (uid, gid) to switch to (when started as root).
    pub switch_to: Option<(u32, u32)>,
    pub fs_rules: FsRules,
    pub seccomp: Vec<BpfProgram>,
    pub cwd: CString,
    pub program: CString,
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    pub allow_degraded: bool,
}

/// A layer failed: with --allow-degraded say so and go on, otherwise give up.
struct Reporter {
    fd: RawFd,
    allow_degraded: bool,
}

impl Reporter {
    fn line(&self, text: &str) {
        let mut line = text.replace('\n', " ");
        line.push('\n');
        sys::write_all(self.fd, line.as_bytes());
    }

    fn layer(&self, layer: &str, result: Result<(), String>) {
        if let Err(reason) = result {
            if self.allow_degraded {
                self.line(&format!("degraded {layer} {reason}"));
            } else {
                self.line(&format!("fail {layer} {reason}"));
                // SAFETY: leaving the child without running the parent's destructors.
                unsafe { libc::_exit(125) };
            }
        }
    }
}

fn step(what: &str, result: sys::SysResult<()>) -> Result<(), String> {
    result.map_err(|errno| format!("{what}: {}", std::io::Error::from_raw_os_error(errno)))
}

/// Runs in the cloned child; never returns.
pub fn run(plan: &ChildPlan) -> ! {
    let report = Reporter {
        fd: plan.status_fd,
        allow_degraded: plan.allow_degraded,
    };

    if let Some((uid, gid)) = plan.self_map {
        report.layer("identity", write_self_map(uid, gid));
    }
    // SAFETY: plain system calls on our own process.
    unsafe {
        libc::setsid();
    }
    for &fd in &plan.cgroup_procs {
        // SAFETY: writing to a descriptor we own.
        let written = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
        report.layer(
            "resources",
            step(
                "cannot join the run's cgroup",
                if written == 1 {
                    Ok(())
                } else {
                    Err(sys::errno())
                },
            ),
        );
    }
    if let Some(mounts) = &plan.mounts {
        report.layer("filesystem", set_up_mounts(mounts, plan.switch_to));
    }
    if plan.mount_proc {
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        report.layer(
            "containment",
            step(
                "cannot mount a private /proc",
                sys::mount(c"proc", c"/proc", Some(c"proc"), flags, None),
            ),
        );
    }
    for &(resource, value) in &plan.rlimits {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: valid rlimit struct.
        let ret = unsafe { libc::setrlimit(resource, &limit) };
        report.layer(
            "resources",
            step(
                "cannot set a resource limit",
                if ret == 0 { Ok(()) } else { Err(sys::errno()) },
            ),
        );
    }
    if let Some(cpus) = plan.cpu_affinity {
        report.layer("resources", limit_cpus(cpus));
    }
    // SAFETY: plain system calls on our own process.
    let chdir = unsafe { libc::chdir(plan.cwd.as_ptr()) };
    if chdir != 0 {
        report.line(&format!(
            "fail filesystem cannot enter the workspace: {}",
            std::io::Error::last_os_error()
        ));
        unsafe { libc::_exit(125) };
    }
    if let Some((uid, gid)) = plan.switch_to {
        report.layer("identity", switch_identity(uid, gid));
    }
    report.layer(
        "identity",
        step("cannot drop capabilities", sys::drop_capabilities()),
    );
    // SAFETY: plain prctl calls on our own process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
    }
    // SAFETY: plain prctl call on our own process.
    let nnp = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    report.layer(
        "identity",
        step(
            "cannot set no_new_privs",
            if nnp == 0 { Ok(()) } else { Err(sys::errno()) },
        ),
    );
    report.layer("filesystem", plan.fs_rules.restrict_self());
    for program in &plan.seccomp {
        report.layer(
            "seccomp",
            seccompiler::apply_filter(program)
                .map_err(|err| format!("cannot install the seccomp filter: {err}")),
        );
    }

    let (stdin, stdout, stderr) = (plan.stdin, plan.stdout, plan.stderr);
    // SAFETY: dup2 onto the standard descriptors; the originals stay open until close_range.
    unsafe {
        libc::dup2(stdin, 0);
        if let Some(fd) = stdout {
            libc::dup2(fd, 1);
        }
        if let Some(fd) = stderr {
            libc::dup2(fd, 2);
        }
    }
    sys::close_descriptors_from(3, plan.status_fd);

    let argv = null_terminated(&plan.argv);
    let envp = null_terminated(&plan.envp);
    // SAFETY: fork in a single-threaded process.
    let command = unsafe { libc::fork() };
    if command == 0 {
        exec_command(plan, &argv, &envp);
    }
    if command < 0 {
        report.line(&format!(
            "fail containment cannot fork the command: {}",
            std::io::Error::last_os_error()
        ));
        unsafe { libc::_exit(125) };
    }
    // SAFETY: the init's copies of the standard streams are not needed; closing them lets the
    // parent see end-of-file as soon as the command and its children are gone.
    unsafe {
        libc::close(0);
        libc::close(1);
        libc::close(2);
    }
    reap_until(command, &report)
}

fn exec_command(plan: &ChildPlan, argv: &[*const libc::c_char], envp: &[*const libc::c_char]) -> ! {
    // SAFETY: restoring default signal handling (Rust ignores SIGPIPE) and exec'ing; on failure
    // the error goes to the parent and the child exits without running destructors.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::execve(plan.program.as_ptr(), argv.as_ptr(), envp.as_ptr());
        let errno = sys::errno();
        sys::write_all(plan.status_fd, format!("exec {errno}\n").as_bytes());
        libc::_exit(if errno == libc::ENOENT { 127 } else { 126 });
    }
}

/// Waits for the command, reaping every orphan handed to us meanwhile, and reports its status.
fn reap_until(command: libc::pid_t, report: &Reporter) -> ! {
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own children.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == command {
            report.line(&format!("status {status}"));
            unsafe { libc::_exit(0) };
        }
        if pid < 0 && sys::errno() != libc::EINTR {
            report.line("fail containment lost track of the command");
            unsafe { libc::_exit(125) };
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

fn set_up_mounts(plan: &MountPlan, owner: Option<(u32, u32)>) -> Result<(), String> {
    step(
        "cannot make the mount namespace private",
        sys::mount(c"none", c"/", None, libc::MS_REC | libc::MS_PRIVATE, None),
    )?;
    // Detach copies of what must stay visible before the directories above them are covered.
    let mut trees: Vec<(OwnedFd, &Exposure)> = Vec::with_capacity(plan.exposures.len());
    for exposure in &plan.exposures {
        let tree = sys::open_tree_clone(&exposure.path).map_err(|e| {
            format!(
                "cannot copy the mount of {}: {}",
                exposure.path.to_string_lossy(),
                std::io::Error::from_raw_os_error(e)
            )
        })?;
        if let Some(userns) = exposure.idmap_userns {
            step(
                &format!("cannot id-map {}", exposure.path.to_string_lossy()),
                sys::idmap_mount(tree.as_raw_fd(), userns),
            )?;
        }
        trees.push((tree, exposure));
    }
    for (dir, options) in &plan.hidden {
        step(
            &format!("cannot hide {}", dir.to_string_lossy()),
            sys::mount(
                c"tmpfs",
                dir,
                Some(c"tmpfs"),
                libc::MS_NOSUID | libc::MS_NODEV,
                Some(options),
            ),
        )?;
    }
    for (tree, exposure) in &trees {
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(exposure.path.as_bytes()));
        if !path.exists() {
            let created = if exposure.is_dir {
                std::fs::create_dir_all(&path)
            } else {
                path.parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::File::create(&path).map(drop))
            };
            created.map_err(|err| format!("cannot recreate {}: {err}", path.display()))?;
        }
        step(
            &format!("cannot mount {}", path.display()),
            sys::move_mount(tree.as_raw_fd(), &exposure.path),
        )?;
    }
    std::fs::create_dir_all(std::ffi::OsStr::from_bytes(plan.home.as_bytes()))
        .map_err(|err| format!("cannot create the private home: {err}"))?;
    if let Some((uid, gid)) = owner {
        // SAFETY: chown of a directory we just created.
        let ret = unsafe { libc::chown(plan.home.as_ptr(), uid, gid) };
        step(
            "cannot hand the private home over",
            if ret == 0 { Ok(()) } else { Err(sys::errno()) },
        )?;
    }
    Ok(())
}

fn switch_identity(uid: u32, gid: u32) -> Result<(), String> {
    // SAFETY: plain credential system calls on our own process.
    unsafe {
        if libc::setgroups(0, std::ptr::null()) != 0 {
            return step("cannot drop supplementary groups", Err(sys::errno()));
        }
        if libc::setresgid(gid, gid, gid) != 0 {
            return step("cannot change group", Err(sys::errno()));
        }
        if libc::setresuid(uid, uid, uid) != 0 {
            return step("cannot change user", Err(sys::errno()));
        }
    }
    Ok(())
}

fn limit_cpus(count: usize) -> Result<(), String> {
    // SAFETY: reading and narrowing our own CPU affinity mask.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return step("cannot read the CPU affinity", Err(sys::errno()));
        }
        let mut kept = 0;
        for cpu in 0..libc::CPU_SETSIZE as usize {
            if libc::CPU_ISSET(cpu, &set) {
                if kept < count {
                    kept += 1;
                } else {
                    libc::CPU_CLR(cpu, &mut set);
                }
            }
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return step("cannot limit the CPUs", Err(sys::errno()));
        }
    }
    Ok(())
}
