//! The seccomp layer: system calls the command never needs and that reach past the other layers.
//!
//! Landlock's network rules cover only TCP, so with the network off every socket family but
//! AF_UNIX is refused here (UDP, raw, netlink, MPTCP, packet). Beyond that the filter closes
//! kernel surfaces that bypass the rest: io_uring (socket and file operations without the
//! syscalls above), new namespaces and mounts, keyrings (shared per uid with the host), BPF,
//! perf, userfaultfd, and TIOCSTI (typing into a terminal). `clone3` and `openat2` get ENOSYS so
//! libc falls back to `clone` and `openat`, whose arguments a filter can inspect. Filters are compiled in the parent and only
//! installed in the child, which must not allocate.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// Refused with EPERM whatever their arguments.
const DENIED: &[i64] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_kexec_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_setns,
    libc::SYS_unshare,
];

const NAMESPACE_FLAGS: &[i32] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// `fchmodat2` (Linux 6.6), by number (the same on every architecture): not every libc names it.
const FCHMODAT2: i64 = 452;

/// The compiled filters, in the order they are installed.
pub struct SyscallFilters {
    pub programs: Vec<BpfProgram>,
}

/// What the filter refuses beyond the always-denied calls.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilterOptions {
    pub network: bool,
    /// No socket at all but `socketpair` (no mount namespace hides the host's UNIX sockets).
    pub no_unix_sockets: bool,
    /// No changing the CPU affinity (it holds the CPU limit when cgroups do not).
    pub fixed_affinity: bool,
}

pub fn compile(options: FilterOptions) -> Result<SyscallFilters, String> {
    let arch = std::env::consts::ARCH.try_into().map_err(|_| {
        format!(
            "seccomp filters are not built for {}",
            std::env::consts::ARCH
        )
    })?;
    let error = |err: seccompiler::BackendError| format!("cannot build the seccomp filter: {err}");

    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|&nr| (nr, vec![])).collect();
    if options.no_unix_sockets {
        rules.insert(libc::SYS_socket, vec![]);
    } else if !options.network {
        let not_unix = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .map_err(error)?;
        rules.insert(
            libc::SYS_socket,
            vec![SeccompRule::new(vec![not_unix]).map_err(error)?],
        );
    }
    if options.fixed_affinity {
        rules.insert(libc::SYS_sched_setaffinity, vec![]);
    }
    // No setuid or setgid mode bits, for anyone: started as root, files in the id-mapped
    // workspace belong to root on the host, and a setuid-root file there would make anyone root;
    // as an ordinary user, one would let other users run code as that user.
    {
        // (syscall, index of the mode argument, index of the flags argument when the mode only
        // matters when creating)
        let calls: &[(i64, u8, Option<u8>)] = &[
            (libc::SYS_chmod, 1, None),
            (libc::SYS_fchmod, 1, None),
            (libc::SYS_fchmodat, 2, None),
            (FCHMODAT2, 2, None),
            (libc::SYS_mkdir, 1, None),
            (libc::SYS_mkdirat, 2, None),
            (libc::SYS_mknod, 1, None),
            (libc::SYS_mknodat, 2, None),
            (libc::SYS_creat, 1, None),
            (libc::SYS_open, 2, Some(1)),
            (libc::SYS_openat, 3, Some(2)),
        ];
        for &(nr, mode_arg, flags_arg) in calls {
            let mut call_rules = Vec::new();
            for bit in [libc::S_ISUID, libc::S_ISGID] {
                let bit = u64::from(bit);
                let conditions = vec![SeccompCondition::new(
                    mode_arg,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::MaskedEq(bit),
                    bit,
                )
                .map_err(error)?];
                let Some(flags) = flags_arg else {
                    call_rules.push(SeccompRule::new(conditions).map_err(error)?);
                    continue;
                };
                // The mode applies when the call creates a file: O_CREAT, or O_TMPFILE (an
                // unnamed file that linkat then names, with its mode).
                let tmpfile = libc::O_TMPFILE & !libc::O_DIRECTORY;
                for creating in [libc::O_CREAT, tmpfile] {
                    let creating = creating as u64;
                    let mut conditions = conditions.clone();
                    conditions.push(
                        SeccompCondition::new(
                            flags,
                            SeccompCmpArgLen::Dword,
                            SeccompCmpOp::MaskedEq(creating),
                            creating,
                        )
                        .map_err(error)?,
                    );
                    call_rules.push(SeccompRule::new(conditions).map_err(error)?);
                }
            }
            rules.insert(nr, call_rules);
        }
    }
    let mut clone_rules = Vec::new();
    for &flag in NAMESPACE_FLAGS {
        let flag = flag as u32 as u64;
        let has_flag = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )
        .map_err(error)?;
        clone_rules.push(SeccompRule::new(vec![has_flag]).map_err(error)?);
    }
    rules.insert(libc::SYS_clone, clone_rules);
    let mut ioctl_rules = Vec::new();
    // The request numbers are `c_ulong` in glibc's headers and `c_int` in musl's.
    #[allow(clippy::unnecessary_cast)]
    let requests = [libc::TIOCSTI as u64, libc::TIOCLINUX as u64];
    for request in requests {
        let is_request =
            SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)
                .map_err(error)?;
        ioctl_rules.push(SeccompRule::new(vec![is_request]).map_err(error)?);
    }
    rules.insert(libc::SYS_ioctl, ioctl_rules);

    let denied = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(error)?;
    // openat2 takes its mode in a struct a filter cannot read: ENOSYS makes callers fall back
    // to openat.
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, vec![]), (libc::SYS_openat2, vec![])]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(error)?;
    let programs = [denied, clone3]
        .into_iter()
        .map(|filter| BpfProgram::try_from(filter).map_err(error))
        .collect::<Result<_, _>>()?;
    Ok(SyscallFilters { programs })
}
