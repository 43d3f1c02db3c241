//! The seccomp layer: system calls the command never needs and that reach past the other layers.
//!
//! Landlock's network rules cover only TCP, so with the network off every socket family but
//! AF_UNIX is refused here (UDP, raw, netlink, MPTCP, packet). Beyond that the filter closes
//! kernel surfaces that bypass the rest: io_uring (socket and file operations without the
//! syscalls above), new namespaces and mounts, keyrings (shared per uid with the host), BPF,
//! perf, userfaultfd, and TIOCSTI (typing into a terminal). `clone3` gets ENOSYS so libc falls
//! back to `clone`, whose flags a filter can inspect. Filters are compiled in the parent and only
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

/// The compiled filters, in the order they are installed.
pub struct SyscallFilters {
    pub programs: Vec<BpfProgram>,
}

pub fn compile(network: bool) -> Result<SyscallFilters, String> {
    let arch = std::env::consts::ARCH.try_into().map_err(|_| {
        format!(
            "seccomp filters are not built for {}",
            std::env::consts::ARCH
        )
    })?;
    let error = |err: seccompiler::BackendError| format!("cannot build the seccomp filter: {err}");

    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|&nr| (nr, vec![])).collect();
    if !network {
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
    for request in [libc::TIOCSTI, libc::TIOCLINUX] {
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
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, vec![])]),
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
