//! The seccomp layer: system calls the command never needs and that reach past the other layers.
//!
//! With the network off the command has a network namespace of its own, holding only `lo`: it may
//! then make UNIX, IPv4 and IPv6 sockets, which reach nothing but itself, and no other family
//! (raw, netlink, packet, ...). Without that namespace every family but AF_UNIX is refused. Beyond that the filter closes kernel
//! surfaces that bypass the rest: io_uring (socket and file operations without the syscalls above),
//! new namespaces, mounts and roots, keyrings (shared per uid with the host), BPF, perf,
//! userfaultfd, and TIOCSTI (typing into a terminal). `clone3` and `openat2` get ENOSYS so libc
//! falls back to `clone` and `openat`, whose arguments a filter can inspect. Other architectures'
//! system call tables (`int 0x80`) kill the process; x32 calls get ENOSYS.
//!
//! The rules are compiled by seccompiler (the filter compiler Firecracker uses), one filter per
//! errno the rules give (EPERM, ENOSYS); seccompiler kills a call from another architecture.
//! The docker backend gives its containers the same rules as a Docker seccomp profile
//! (`docker_profile`), the network's aside (the container's network is Docker's). On
//! x86-64 a guard of four instructions, written here, comes first: no filter compiler can
//! express a range of call numbers, and x32 calls (the x86-64 numbers with bit 30 set) must get
//! ENOSYS, not pass as calls no rule names. The filters are built in the parent; the child only
//! installs them.

use std::collections::BTreeMap;

use libc::sock_filter;
use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

/// The classic BPF programs for `SECCOMP_SET_MODE_FILTER`, in the order they are installed.
pub(crate) type Program = Vec<Vec<sock_filter>>;

#[cfg(target_arch = "x86_64")]
const TARGET: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const TARGET: TargetArch = TargetArch::aarch64;

/// What the filter refuses beyond the always-refused calls.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FilterOptions {
    pub network: bool,
    /// With the network off, the command has a network namespace of its own (only `lo`).
    pub loopback: bool,
    /// No socket at all but `socketpair` (no mount namespace hides the host's UNIX sockets).
    pub no_unix_sockets: bool,
    /// No changing the CPU affinity (it holds the CPU limit when cgroups do not).
    pub fixed_affinity: bool,
}

/// Refused with EPERM whatever their arguments.
const REFUSED: &[i64] = &[
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
    libc::SYS_chroot,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    OPEN_TREE_ATTR,
    libc::SYS_setns,
    libc::SYS_unshare,
];

/// `open_tree_attr` (Linux 6.15), by number: open_tree that also sets the copy's attributes.
const OPEN_TREE_ATTR: i64 = 467;

/// The `clone` flags that make namespaces; all lie in the low 32 bits the kernel reads.
const NAMESPACE_FLAGS: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP) as u32;

/// `fchmodat2` (Linux 6.6), by number (the same on every architecture): not every libc names it.
const FCHMODAT2: i64 = 452;

/// The mode bits no one may set: started as root, files in the id-mapped workspace belong to
/// root on the host, and a setuid-root file there would make anyone root; as an ordinary user,
/// one would let other users run code as that user.
const SET_ID_BITS: u32 = libc::S_ISUID | libc::S_ISGID;

/// The open flags with which a call creates a file and applies its mode: O_CREAT, and
/// O_TMPFILE's own bit (an unnamed file that linkat then names, with its mode).
const CREATING: u32 = (libc::O_CREAT | (libc::O_TMPFILE & !libc::O_DIRECTORY)) as u32;

/// Set in the number of an x32 system call (which shares x86-64's architecture value).
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// What the filter does with one system call.
#[derive(Debug, Clone, Copy)]
enum Rule {
    /// Refused with this errno whatever the arguments.
    Refuse(i32),
    /// Refused (EPERM) when argument `arg` has any of `bits` set.
    RefuseBits { arg: u32, bits: u32 },
    /// Refused (EPERM) when argument `flags` has any of `flag_bits` and argument `mode` any of
    /// `mode_bits`.
    RefuseBitsWhen {
        flags: u32,
        flag_bits: u32,
        mode: u32,
        mode_bits: u32,
    },
    /// Refused (EPERM) when argument `arg` is one of `values`.
    RefuseValues { arg: u32, values: &'static [u32] },
    /// Allowed only when argument `arg` is one of `values`; refused (EPERM) otherwise.
    AllowOnly { arg: u32, values: &'static [u32] },
}

/// The rules for `options`, one per system call number, sorted by number.
/// Long: the filter's rules one after another, each with its reason; a list, not steps.
fn rules(options: FilterOptions) -> Vec<(u32, Rule)> {
    let eperm = Rule::Refuse(libc::EPERM);
    let mut rules: Vec<(i64, Rule)> = REFUSED.iter().map(|&nr| (nr, eperm)).collect();
    if options.no_unix_sockets {
        rules.push((libc::SYS_socket, eperm));
    } else if !options.network {
        const UNIX: &[u32] = &[libc::AF_UNIX as u32];
        const LOOPBACK: &[u32] = &[
            libc::AF_UNIX as u32,
            libc::AF_INET as u32,
            libc::AF_INET6 as u32,
        ];
        let values = if options.loopback { LOOPBACK } else { UNIX };
        rules.push((libc::SYS_socket, Rule::AllowOnly { arg: 0, values }));
    }
    if options.fixed_affinity {
        rules.push((libc::SYS_sched_setaffinity, eperm));
    }
    // The calls that take a mode, by the argument that holds it (aarch64 has only the *at ones).
    let mut with_mode = vec![
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (FCHMODAT2, 2),
        (libc::SYS_mkdirat, 2),
        (libc::SYS_mknodat, 2),
    ];
    #[cfg(target_arch = "x86_64")]
    with_mode.extend([
        (libc::SYS_chmod, 1),
        (libc::SYS_mkdir, 1),
        (libc::SYS_mknod, 1),
        (libc::SYS_creat, 1),
    ]);
    for (nr, mode) in with_mode {
        rules.push((
            nr,
            Rule::RefuseBits {
                arg: mode,
                bits: SET_ID_BITS,
            },
        ));
    }
    let mut opening = vec![(libc::SYS_openat, 2, 3)];
    #[cfg(target_arch = "x86_64")]
    opening.push((libc::SYS_open, 1, 2));
    for (nr, flags, mode) in opening {
        let rule = Rule::RefuseBitsWhen {
            flags,
            flag_bits: CREATING,
            mode,
            mode_bits: SET_ID_BITS,
        };
        rules.push((nr, rule));
    }
    rules.push((
        libc::SYS_clone,
        Rule::RefuseBits {
            arg: 0,
            bits: NAMESPACE_FLAGS,
        },
    ));
    // The request numbers are `c_ulong` in glibc's headers and `c_int` in musl's.
    #[allow(clippy::unnecessary_cast)]
    const TERMINAL_INPUT: &[u32] = &[libc::TIOCSTI as u32, libc::TIOCLINUX as u32];
    rules.push((
        libc::SYS_ioctl,
        Rule::RefuseValues {
            arg: 1,
            values: TERMINAL_INPUT,
        },
    ));
    // openat2 takes its mode in a struct a filter cannot read, clone3 its flags.
    rules.push((libc::SYS_clone3, Rule::Refuse(libc::ENOSYS)));
    rules.push((libc::SYS_openat2, Rule::Refuse(libc::ENOSYS)));

    let mut rules: Vec<(u32, Rule)> = rules
        .into_iter()
        .map(|(nr, rule)| (nr as u32, rule))
        .collect();
    rules.sort_by_key(|&(nr, _)| nr);
    rules
}

/// The rules (but the network's) as a Docker seccomp profile: calls by name, each argument
/// condition as libseccomp compares it; calls from other architectures are killed.
pub(crate) fn docker_profile() -> serde_json::Value {
    use serde_json::json;
    let options = FilterOptions {
        network: true,
        ..FilterOptions::default()
    };
    let mut syscalls = Vec::new();
    for (nr, rule) in rules(options) {
        let Some(name) = name_of(i64::from(nr)) else {
            continue;
        };
        let entry = |errno: i32, args: Vec<serde_json::Value>| json!({"names": [name], "action": "SCMP_ACT_ERRNO", "errnoRet": errno, "args": args});
        // Compared as the kernel reads them: 32 bits.
        let masked = |arg: u32, mask: u32, value: u32| json!({"index": arg, "value": mask, "valueTwo": value, "op": "SCMP_CMP_MASKED_EQ"});
        let each_bit = |bits: u32| {
            (0..32)
                .map(|n| 1u32 << n)
                .filter(move |bit| bits & bit != 0)
        };
        match rule {
            Rule::Refuse(errno) => syscalls.push(entry(errno, Vec::new())),
            Rule::RefuseBits { arg, bits } => syscalls
                .extend(each_bit(bits).map(|bit| entry(libc::EPERM, vec![masked(arg, bit, bit)]))),
            Rule::RefuseBitsWhen {
                flags,
                flag_bits,
                mode,
                mode_bits,
            } => {
                for flag in each_bit(flag_bits) {
                    for bit in each_bit(mode_bits) {
                        let args = vec![masked(flags, flag, flag), masked(mode, bit, bit)];
                        syscalls.push(entry(libc::EPERM, args));
                    }
                }
            }
            Rule::RefuseValues { arg, values } => syscalls.extend(
                values
                    .iter()
                    .map(|&value| entry(libc::EPERM, vec![masked(arg, u32::MAX, value)])),
            ),
            // Only the network's rules are of this kind.
            Rule::AllowOnly { .. } => {}
        }
    }
    #[cfg(target_arch = "x86_64")]
    let architectures = ["SCMP_ARCH_X86_64"];
    #[cfg(target_arch = "aarch64")]
    let architectures = ["SCMP_ARCH_AARCH64"];
    json!({"defaultAction": "SCMP_ACT_ALLOW", "architectures": architectures, "syscalls": syscalls})
}

/// The name of the system call `nr`, for those the rules name.
fn name_of(nr: i64) -> Option<&'static str> {
    let mut names = vec![
        (libc::SYS_io_uring_setup, "io_uring_setup"),
        (libc::SYS_io_uring_enter, "io_uring_enter"),
        (libc::SYS_io_uring_register, "io_uring_register"),
        (libc::SYS_keyctl, "keyctl"),
        (libc::SYS_add_key, "add_key"),
        (libc::SYS_request_key, "request_key"),
        (libc::SYS_bpf, "bpf"),
        (libc::SYS_perf_event_open, "perf_event_open"),
        (libc::SYS_userfaultfd, "userfaultfd"),
        (libc::SYS_kexec_load, "kexec_load"),
        (libc::SYS_init_module, "init_module"),
        (libc::SYS_finit_module, "finit_module"),
        (libc::SYS_delete_module, "delete_module"),
        (libc::SYS_reboot, "reboot"),
        (libc::SYS_swapon, "swapon"),
        (libc::SYS_swapoff, "swapoff"),
        (libc::SYS_acct, "acct"),
        (libc::SYS_mount, "mount"),
        (libc::SYS_umount2, "umount2"),
        (libc::SYS_pivot_root, "pivot_root"),
        (libc::SYS_chroot, "chroot"),
        (libc::SYS_open_tree, "open_tree"),
        (libc::SYS_move_mount, "move_mount"),
        (libc::SYS_fsopen, "fsopen"),
        (libc::SYS_fsconfig, "fsconfig"),
        (libc::SYS_fsmount, "fsmount"),
        (libc::SYS_fspick, "fspick"),
        (libc::SYS_mount_setattr, "mount_setattr"),
        (OPEN_TREE_ATTR, "open_tree_attr"),
        (libc::SYS_setns, "setns"),
        (libc::SYS_unshare, "unshare"),
        (libc::SYS_sched_setaffinity, "sched_setaffinity"),
        (libc::SYS_fchmod, "fchmod"),
        (libc::SYS_fchmodat, "fchmodat"),
        (FCHMODAT2, "fchmodat2"),
        (libc::SYS_mkdirat, "mkdirat"),
        (libc::SYS_mknodat, "mknodat"),
        (libc::SYS_openat, "openat"),
        (libc::SYS_clone, "clone"),
        (libc::SYS_ioctl, "ioctl"),
        (libc::SYS_clone3, "clone3"),
        (libc::SYS_openat2, "openat2"),
        (libc::SYS_socket, "socket"),
    ];
    #[cfg(target_arch = "x86_64")]
    names.extend([
        (libc::SYS_chmod, "chmod"),
        (libc::SYS_mkdir, "mkdir"),
        (libc::SYS_mknod, "mknod"),
        (libc::SYS_creat, "creat"),
        (libc::SYS_open, "open"),
    ]);
    names
        .into_iter()
        .find(|&(number, _)| number == nr)
        .map(|(_, name)| name)
}

/// The filters for `options`.
pub(crate) fn compile(options: FilterOptions) -> Result<Program, String> {
    let mut by_errno: BTreeMap<i32, BTreeMap<i64, Vec<SeccompRule>>> = BTreeMap::new();
    for (nr, rule) in rules(options) {
        let (errno, conditions) = seccompiler_rules(rule)?;
        by_errno
            .entry(errno)
            .or_default()
            .insert(i64::from(nr), conditions);
    }
    let mut program = Vec::new();
    #[cfg(target_arch = "x86_64")]
    program.push(x32_guard());
    for (errno, rules) in by_errno {
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            TARGET,
        )
        .map_err(|err| format!("cannot compile the seccomp filter: {err}"))?;
        let compiled: seccompiler::BpfProgram = filter
            .try_into()
            .map_err(|err| format!("cannot compile the seccomp filter: {err}"))?;
        program.push(
            compiled
                .into_iter()
                .map(|op| sock_filter {
                    code: op.code,
                    jt: op.jt,
                    jf: op.jf,
                    k: op.k,
                })
                .collect(),
        );
    }
    Ok(program)
}

/// A rule as seccompiler takes it: the errno it gives, and the argument conditions under which
/// it does (none: always; several rules: any of them).
fn seccompiler_rules(rule: Rule) -> Result<(i32, Vec<SeccompRule>), String> {
    let error = |err: seccompiler::BackendError| format!("a seccomp rule: {err}");
    let condition = |arg: u32, op: SeccompCmpOp, value: u32| {
        SeccompCondition::new(arg as u8, SeccompCmpArgLen::Dword, op, u64::from(value))
            .map_err(error)
    };
    let each_bit = |bits: u32| {
        (0..32)
            .map(|n| 1u32 << n)
            .filter(move |bit| bits & bit != 0)
    };
    let rule_of = |conditions: Vec<SeccompCondition>| SeccompRule::new(conditions).map_err(error);
    let rules = match rule {
        Rule::Refuse(errno) => return Ok((errno, Vec::new())),
        Rule::RefuseBits { arg, bits } => each_bit(bits)
            .map(|bit| {
                rule_of(vec![condition(
                    arg,
                    SeccompCmpOp::MaskedEq(bit.into()),
                    bit,
                )?])
            })
            .collect::<Result<_, _>>()?,
        Rule::RefuseBitsWhen {
            flags,
            flag_bits,
            mode,
            mode_bits,
        } => {
            let mut rules = Vec::new();
            for flag in each_bit(flag_bits) {
                for bit in each_bit(mode_bits) {
                    rules.push(rule_of(vec![
                        condition(flags, SeccompCmpOp::MaskedEq(flag.into()), flag)?,
                        condition(mode, SeccompCmpOp::MaskedEq(bit.into()), bit)?,
                    ])?);
                }
            }
            rules
        }
        Rule::RefuseValues { arg, values } => values
            .iter()
            .map(|&value| rule_of(vec![condition(arg, SeccompCmpOp::Eq, value)?]))
            .collect::<Result<_, _>>()?,
        Rule::AllowOnly { arg, values } => vec![rule_of(
            values
                .iter()
                .map(|&value| condition(arg, SeccompCmpOp::Ne, value))
                .collect::<Result<_, _>>()?,
        )?],
    };
    Ok((libc::EPERM, rules))
}

/// ENOSYS for every x32 call, whatever the rest says (the rest sees x32 numbers as calls no
/// rule names).
#[cfg(target_arch = "x86_64")]
fn x32_guard() -> Vec<sock_filter> {
    let op = |code: u32, jt: u8, jf: u8, k: u32| sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    vec![
        op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, 0),
        op(
            libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K,
            0,
            1,
            X32_SYSCALL_BIT,
        ),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, refuse(libc::ENOSYS)),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

fn refuse(errno: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (errno as u32 & libc::SECCOMP_RET_DATA)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

    #[test]
    fn the_docker_profile_names_every_rule() {
        let every = FilterOptions {
            network: false,
            loopback: true,
            no_unix_sockets: false,
            fixed_affinity: true,
        };
        for (nr, _) in rules(every) {
            assert!(
                name_of(i64::from(nr)).is_some(),
                "system call {nr} has no name"
            );
        }
        let profile = docker_profile();
        let names: Vec<&str> = profile["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["names"][0].as_str().unwrap())
            .collect();
        for name in [
            "mount", "unshare", "keyctl", "fchmodat", "openat", "clone", "clone3",
        ] {
            assert!(names.contains(&name), "{name} is not in the profile");
        }
        // The network is Docker's: no socket rule.
        assert!(!names.contains(&"socket"));
    }

    /// `AUDIT_ARCH_X86_64`, which every call from a 64-bit x86 program carries.
    const AUDIT_ARCH: u32 = 0xc000_003e;

    /// Runs `filters` on one call as the kernel would: each filter, the one installed last
    /// first; the action that takes precedence wins (the lowest, read as signed), the first
    /// met of equal ones.
    fn verdict(filters: &Program, arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let action = |verdict: u32| (verdict & libc::SECCOMP_RET_ACTION_FULL) as i32;
        let mut winner: Option<u32> = None;
        for filter in filters.iter().rev() {
            let verdict = run(filter, arch, nr, args);
            if winner.is_none_or(|best| action(verdict) < action(best)) {
                winner = Some(verdict);
            }
        }
        winner.expect("at least one filter")
    }

    /// Runs one filter on one call, for the instructions seccompiler and the guard emit.
    fn run(program: &[sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, arg) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&arg.to_le_bytes());
        }
        let (mut acc, mut pc) = (0u32, 0usize);
        loop {
            let op = program[pc];
            let code = u32::from(op.code);
            let taken =
                |condition: bool| pc + 1 + usize::from(if condition { op.jt } else { op.jf });
            pc = match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    let at = op.k as usize;
                    acc = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
                    pc + 1
                }
                c if c == libc::BPF_ALU | libc::BPF_AND | libc::BPF_K => {
                    acc &= op.k;
                    pc + 1
                }
                c if c == libc::BPF_RET | libc::BPF_K => return op.k,
                c if c == libc::BPF_JMP | libc::BPF_JA => pc + 1 + op.k as usize,
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => taken(acc == op.k),
                c if c == libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K => taken(acc >= op.k),
                c if c == libc::BPF_JMP | libc::BPF_JGT | libc::BPF_K => taken(acc > op.k),
                c if c == libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K => taken(acc & op.k != 0),
                _ => panic!("unexpected instruction {code:#x} at {pc}"),
            };
        }
    }

    fn meaning(rule: Option<Rule>, args: [u64; 6]) -> u32 {
        let low = |n: u32| args[n as usize] as u32;
        let refused = |yes: bool| if yes { refuse(libc::EPERM) } else { ALLOW };
        match rule {
            None => ALLOW,
            Some(Rule::Refuse(errno)) => refuse(errno),
            Some(Rule::RefuseBits { arg, bits }) => refused(low(arg) & bits != 0),
            Some(Rule::RefuseBitsWhen {
                flags,
                flag_bits,
                mode,
                mode_bits,
            }) => refused(low(flags) & flag_bits != 0 && low(mode) & mode_bits != 0),
            Some(Rule::RefuseValues { arg, values }) => refused(values.contains(&low(arg))),
            Some(Rule::AllowOnly { arg, values }) => refused(!values.contains(&low(arg))),
        }
    }

    fn all_options() -> Vec<FilterOptions> {
        let mut all = Vec::new();
        for bits in 0..16 {
            all.push(FilterOptions {
                network: bits & 1 != 0,
                no_unix_sockets: bits & 2 != 0,
                fixed_affinity: bits & 4 != 0,
                loopback: bits & 8 != 0,
            });
        }
        all
    }

    #[test]
    fn every_call_number_meets_its_own_rule_and_only_it() {
        let interesting = [
            0,
            1,
            2,
            10,
            16,
            0o755,
            0o4755,
            0o2000,
            libc::O_CREAT as u64,
            u64::MAX,
        ];
        for options in all_options() {
            let program = compile(options).unwrap();
            let rules = rules(options);
            for nr in 0..=600u32 {
                let rule = rules.iter().find(|(n, _)| *n == nr).map(|&(_, rule)| rule);
                for a in interesting {
                    for b in interesting {
                        let args = [a, b, a, b, 0, 0];
                        assert_eq!(
                            verdict(&program, AUDIT_ARCH, nr, args),
                            meaning(rule, args),
                            "{options:?}: call {nr} with {args:?}"
                        );
                    }
                }
                let x32 = verdict(&program, AUDIT_ARCH, X32_SYSCALL_BIT | nr, [0; 6]);
                assert_eq!(x32, refuse(libc::ENOSYS), "x32 call {nr}");
                const AUDIT_ARCH_I386: u32 = 0x4000_0003;
                let i386 = verdict(&program, AUDIT_ARCH_I386, nr, [0; 6]);
                assert_eq!(i386, libc::SECCOMP_RET_KILL_PROCESS, "i386 call {nr}");
            }
        }
    }

    #[test]
    fn the_calls_that_matter_get_the_answers_that_matter() {
        let off = compile(FilterOptions::default()).unwrap();
        let on = compile(FilterOptions {
            network: true,
            ..FilterOptions::default()
        })
        .unwrap();
        let call = |program: &Program, nr: i64, args: [u64; 6]| {
            verdict(program, AUDIT_ARCH, nr as u32, args)
        };
        let eperm = refuse(libc::EPERM);
        let (inet, unix) = (libc::AF_INET as u64, libc::AF_UNIX as u64);
        let loopback = compile(FilterOptions {
            loopback: true,
            ..FilterOptions::default()
        })
        .unwrap();
        let (inet6, netlink) = (libc::AF_INET6 as u64, libc::AF_NETLINK as u64);
        assert_eq!(
            call(&loopback, libc::SYS_socket, [inet, 1, 0, 0, 0, 0]),
            ALLOW
        );
        assert_eq!(
            call(&loopback, libc::SYS_socket, [inet6, 2, 0, 0, 0, 0]),
            ALLOW
        );
        assert_eq!(
            call(&loopback, libc::SYS_socket, [unix, 1, 0, 0, 0, 0]),
            ALLOW
        );
        assert_eq!(
            call(&loopback, libc::SYS_socket, [netlink, 3, 0, 0, 0, 0]),
            eperm
        );
        assert_eq!(call(&off, libc::SYS_getpid, [0; 6]), ALLOW);
        assert_eq!(call(&off, libc::SYS_mount, [0; 6]), eperm);
        assert_eq!(call(&off, libc::SYS_io_uring_setup, [0; 6]), eperm);
        assert_eq!(call(&off, libc::SYS_socket, [inet, 1, 0, 0, 0, 0]), eperm);
        assert_eq!(call(&off, libc::SYS_socket, [unix, 1, 0, 0, 0, 0]), ALLOW);
        assert_eq!(call(&on, libc::SYS_socket, [inet, 1, 0, 0, 0, 0]), ALLOW);
        assert_eq!(call(&off, libc::SYS_chmod, [0, 0o4755, 0, 0, 0, 0]), eperm);
        assert_eq!(call(&off, libc::SYS_chmod, [0, 0o755, 0, 0, 0, 0]), ALLOW);
        let creat = (libc::O_CREAT | libc::O_WRONLY) as u64;
        assert_eq!(
            call(&off, libc::SYS_openat, [0, 0, creat, 0o2755, 0, 0]),
            eperm
        );
        assert_eq!(
            call(&off, libc::SYS_openat, [0, 0, creat, 0o644, 0, 0]),
            ALLOW
        );
        // Without O_CREAT (or O_TMPFILE) the mode argument is ignored by the kernel.
        assert_eq!(call(&off, libc::SYS_openat, [0, 0, 0, 0o4755, 0, 0]), ALLOW);
        let tmpfile = (libc::O_TMPFILE | libc::O_WRONLY) as u64;
        assert_eq!(
            call(&off, libc::SYS_open, [0, tmpfile, 0o6755, 0, 0, 0]),
            eperm
        );
        let newuser = (libc::CLONE_NEWUSER | libc::SIGCHLD) as u64;
        assert_eq!(call(&off, libc::SYS_clone, [newuser, 0, 0, 0, 0, 0]), eperm);
        assert_eq!(
            call(&off, libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]),
            ALLOW
        );
        #[allow(clippy::unnecessary_cast)]
        let (tiocsti, tcgets) = (libc::TIOCSTI as u64, libc::TCGETS as u64);
        assert_eq!(call(&off, libc::SYS_ioctl, [0, tiocsti, 0, 0, 0, 0]), eperm);
        assert_eq!(call(&off, libc::SYS_ioctl, [0, tcgets, 0, 0, 0, 0]), ALLOW);
        assert_eq!(call(&off, libc::SYS_clone3, [0; 6]), refuse(libc::ENOSYS));
        assert_eq!(call(&off, libc::SYS_openat2, [0; 6]), refuse(libc::ENOSYS));
    }
}
