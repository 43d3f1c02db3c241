//! Thin wrappers over the Linux system calls the crate needs and `nix` does not wrap: clone3,
//! the new mount API (open_tree, move_mount, mount_setattr), close_range, capset and the ambient
//! capabilities, pidfds, the Landlock ABI probe, seccomp with `SPEC_ALLOW` (seccompiler installs
//! filters without it), `_exit`, and a `write` that allocates nothing (for the command's process
//! between vfork and exec); plus, on `nix`, the few steps the sandbox child takes with plain
//! errnos (mount, chroot, passing descriptors) and the symlink-refusing opens. The lowest layer:
//! it depends on nothing of ours. Each returns the errno on failure so the caller can say which
//! step failed.

use std::ffi::CStr;
use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, OpenHow, ResolveFlag};
use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags};
use nix::sys::stat::{FileStat, Mode, SFlag};
use nix::unistd::UnlinkatFlags;

pub(crate) type SysResult<T> = Result<T, i32>;

fn check(ret: libc::c_long) -> SysResult<libc::c_long> {
    if ret < 0 {
        Err(errno())
    } else {
        Ok(ret)
    }
}

/// The kind of file `stat` describes (`S_IFDIR`, `S_IFREG`, `S_IFLNK`, ...).
pub(crate) fn file_kind(stat: &nix::sys::stat::FileStat) -> SFlag {
    SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT
}

/// Where the process's command line lies in its memory (`arg_start` and `arg_end` of
/// /proc/self/stat), when it can be read.
pub(crate) fn argument_area() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's name, which may hold spaces and parentheses: the 3rd on.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split(' ').collect();
    let field = |number: usize| fields.get(number - 3)?.parse::<usize>().ok();
    let (start, end) = (field(48)?, field(49)?);
    (start > 0 && end > start).then_some((start, end))
}

pub(crate) fn errno() -> i32 {
    nix::errno::Errno::last_raw()
}

/// Leaves the process at once with `status`, running no destructor nor exit handler: what a
/// forked child (a copy of the parent's memory) must do.
pub(crate) fn exit_now(status: i32) -> ! {
    // SAFETY: _exit touches nothing of ours.
    unsafe { libc::_exit(status) }
}

#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// Forks with `flags` (namespaces), returning `Some((pid, pidfd))` in the parent and `None` in
/// the child. Like fork(2), only safe while the process has a single thread.
pub(crate) fn clone3(flags: u64) -> SysResult<Option<(libc::pid_t, OwnedFd)>> {
    let mut pidfd: RawFd = -1;
    let mut args = CloneArgs {
        flags: flags | libc::CLONE_PIDFD as u64,
        pidfd: &mut pidfd as *mut RawFd as u64,
        exit_signal: libc::SIGCHLD as u64,
        ..CloneArgs::default()
    };
    // SAFETY: clone3 without CLONE_VM and without a stack behaves like fork; `args` outlives the
    // call and the kernel writes the pidfd into `pidfd`.
    let pid = check(unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &mut args as *mut CloneArgs,
            std::mem::size_of::<CloneArgs>(),
        )
    })?;
    if pid == 0 {
        return Ok(None);
    }
    // SAFETY: the kernel just gave us this descriptor.
    Ok(Some((pid as libc::pid_t, unsafe {
        OwnedFd::from_raw_fd(pidfd)
    })))
}

pub(crate) const OPEN_TREE_CLONE: u32 = 1;
pub(crate) const MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x4;
pub(crate) const MOUNT_ATTR_IDMAP: u64 = 0x0010_0000;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// A detached copy of the mount tree at the file `fd` refers to (opened with `O_PATH`).
pub(crate) fn open_tree_clone(fd: RawFd) -> SysResult<OwnedFd> {
    let flags = OPEN_TREE_CLONE
        | libc::O_CLOEXEC as u32
        | libc::AT_RECURSIVE as u32
        | libc::AT_EMPTY_PATH as u32;
    // SAFETY: plain system call on a descriptor we own.
    let fd = check(unsafe { libc::syscall(libc::SYS_open_tree, fd, c"".as_ptr(), flags) })?;
    // SAFETY: the kernel just gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

pub(crate) const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub(crate) const MOUNT_ATTR_NOSUID: u64 = 0x2;
pub(crate) const MOUNT_ATTR_NODEV: u64 = 0x4;
pub(crate) const MOUNT_ATTR_NOEXEC: u64 = 0x8;

/// Sets mount attributes on a detached tree, on all its mounts when `recursive`, and makes it
/// private; with `idmap`, also gives it the id mapping of that user namespace.
pub(crate) fn set_mount_attributes(
    tree: RawFd,
    attributes: u64,
    recursive: bool,
    idmap: Option<RawFd>,
) -> SysResult<()> {
    let attr = MountAttr {
        attr_set: attributes | if idmap.is_some() { MOUNT_ATTR_IDMAP } else { 0 },
        attr_clr: 0,
        propagation: libc::MS_PRIVATE,
        userns_fd: idmap.unwrap_or(0) as u64,
    };
    let flags = libc::AT_EMPTY_PATH | if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: `attr` is a valid mount_attr of the size given.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree,
            c"".as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })?;
    Ok(())
}

/// openat2(2): opens `path` relative to `dir` with `flags` (`O_CLOEXEC` added), `mode` when
/// creating, and the `resolve` restrictions on how the kernel walks it.
pub(crate) fn openat2(
    dir: BorrowedFd<'_>,
    path: &CStr,
    flags: i32,
    mode: u32,
    resolve: ResolveFlag,
) -> SysResult<OwnedFd> {
    let how = OpenHow::new()
        .flags(OFlag::from_bits_retain(flags) | OFlag::O_CLOEXEC)
        .mode(Mode::from_bits_retain(mode))
        .resolve(resolve);
    nix::fcntl::openat2(dir, path, how).map_err(|errno| errno as i32)
}

/// Opens `path` as an `O_PATH` descriptor, refusing symlinks in any component: the path was
/// canonicalized, so a symlink there now means someone swapped it since.
pub(crate) fn open_path_no_symlinks(path: &CStr) -> SysResult<OwnedFd> {
    open_path_no_symlinks_at(nix::fcntl::AT_FDCWD, path)
}

/// Opens `path` (relative to `dir`, or absolute) as an `O_PATH` descriptor, with ELOOP when a
/// component is a symbolic link. Without openat2 (Linux < 5.6, or inside a sandbox that refuses
/// it) the path is walked a component at a time, each opened beneath the last without
/// following a link.
pub(crate) fn open_path_no_symlinks_at(dir: BorrowedFd<'_>, path: &CStr) -> SysResult<OwnedFd> {
    let resolve = ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_NO_MAGICLINKS;
    match openat2(dir, path, libc::O_PATH, 0, resolve) {
        Err(libc::ENOSYS) => walk_no_symlinks(dir, path.to_bytes()),
        other => other,
    }
}

fn walk_no_symlinks(dir: BorrowedFd<'_>, path: &[u8]) -> SysResult<OwnedFd> {
    let open = |at: BorrowedFd<'_>, name: &[u8]| -> SysResult<OwnedFd> {
        let name = std::ffi::CString::new(name).map_err(|_| libc::EINVAL)?;
        let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::openat(at, name.as_c_str(), flags, Mode::empty())
            .map_err(|errno| errno as i32)?;
        let stat = nix::sys::stat::fstat(&fd).map_err(|errno| errno as i32)?;
        if file_kind(&stat) == SFlag::S_IFLNK {
            return Err(libc::ELOOP);
        }
        Ok(fd)
    };
    let mut current = if path.starts_with(b"/") {
        open(nix::fcntl::AT_FDCWD, b"/")?
    } else {
        open(dir, b".")?
    };
    for part in path
        .split(|&byte| byte == b'/')
        .filter(|part| !part.is_empty())
    {
        current = open(current.as_fd(), part)?;
    }
    Ok(current)
}

/// Makes the current directory the process's root (`chroot`) and enters it.
pub(crate) fn root_at_current_directory() -> SysResult<()> {
    nix::unistd::chroot(c".")
        .and_then(|()| nix::unistd::chdir(c"/"))
        .map_err(|errno| errno as i32)
}

/// Attaches a detached mount at `target`.
pub(crate) fn move_mount(tree: RawFd, target: &CStr) -> SysResult<()> {
    // SAFETY: plain system call on valid descriptors and NUL-terminated paths.
    check(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree,
            c"".as_ptr(),
            libc::AT_FDCWD,
            target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    })?;
    Ok(())
}

/// mount(2) with optional source, type and data.
pub(crate) fn mount(
    source: &CStr,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> SysResult<()> {
    let flags = nix::mount::MsFlags::from_bits_retain(flags);
    nix::mount::mount(Some(source), target, fstype, flags, data).map_err(|errno| errno as i32)
}

/// Closes every descriptor from `first` on, except those in `keep`.
pub(crate) fn close_descriptors_except(first: u32, keep: &[RawFd]) {
    let mut keep: Vec<u32> = keep
        .iter()
        .map(|&fd| fd as u32)
        .filter(|&fd| fd >= first)
        .collect();
    keep.sort_unstable();
    let mut from = first;
    for fd in keep {
        if fd > from {
            // SAFETY: closing descriptors we own; nothing in this process uses them afterwards.
            unsafe { libc::syscall(libc::SYS_close_range, from, fd - 1, 0) };
        }
        from = fd + 1;
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, from, u32::MAX, 0) };
}

/// Drops every capability from the permitted, effective and inheritable sets, and the ambient set.
pub(crate) fn drop_capabilities() -> SysResult<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: valid header and two data structs as capset v3 expects.
    check(
        unsafe {
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0,
            )
        }
        .into(),
    )?;
    check(unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) })?;
    Ok(())
}

/// Sends `signal` to the process behind `pidfd`.
pub(crate) fn pidfd_send_signal(pidfd: RawFd, signal: i32) -> SysResult<()> {
    // SAFETY: plain system call.
    check(unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd,
            signal,
            std::ptr::null::<u8>(),
            0,
        )
    })?;
    Ok(())
}

/// A pidfd for an existing child.
pub(crate) fn pidfd_open(pid: libc::pid_t) -> SysResult<OwnedFd> {
    // SAFETY: plain system call.
    let fd = check(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })?;
    // SAFETY: the kernel just gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Writes all of `bytes` to `fd`, or says why not.
pub(crate) fn write_all_checked(fd: RawFd, mut bytes: &[u8]) -> SysResult<()> {
    while !bytes.is_empty() {
        // SAFETY: writing from a valid buffer.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            match errno() {
                libc::EINTR => continue,
                err => return Err(err),
            }
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// Writes all of `bytes` to `fd`, ignoring errors (used for reports from the child).
pub(crate) fn write_all(fd: RawFd, bytes: &[u8]) {
    let _ = write_all_checked(fd, bytes);
}

/// The running kernel's Landlock ABI version (0 when Landlock is unavailable).
pub(crate) fn landlock_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: the version query takes no attribute pointer.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(ret).unwrap_or(0)
}

/// Installs a seccomp filter (no_new_privs must be set). `SPEC_ALLOW` skips forcing the
/// speculative-store-bypass mitigation on the process, which costs an MSR write on every CPU and
/// protects a process only from code in its own address space: here the untrusted code itself.
pub(crate) fn install_seccomp(program: &[libc::sock_filter]) -> SysResult<()> {
    #[repr(C)]
    struct Program {
        len: u16,
        filter: *const libc::sock_filter,
    }
    let program = Program {
        len: program.len() as u16,
        filter: program.as_ptr(),
    };
    // SAFETY: the kernel copies the program; `program` outlives the call.
    check(unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW,
            &program as *const Program,
        )
    })?;
    Ok(())
}

/// The names in the directory open at `dir` (not `.` nor `..`), read through a duplicate of
/// its descriptor.
pub(crate) fn entry_names(dir: BorrowedFd<'_>) -> nix::Result<Vec<std::ffi::CString>> {
    let mut entries = nix::dir::Dir::from_fd(nix::unistd::dup(dir)?)?;
    Ok(entries
        .iter()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_owned())
        .filter(|name| name.as_c_str() != c"." && name.as_c_str() != c"..")
        .collect())
}

/// Removes `name` from `dir`, a directory with all it holds; nothing there is no error.
pub(crate) fn remove_all(dir: BorrowedFd, name: &CStr) -> Result<(), Errno> {
    match stat_at(dir, name) {
        Err(Errno::ENOENT) => Ok(()),
        Err(errno) => Err(errno),
        Ok(stat) if file_kind(&stat) == SFlag::S_IFDIR => {
            let below = open_dir(dir, name)?;
            for entry in entry_names(below.as_fd())? {
                remove_all(below.as_fd(), &entry)?;
            }
            nix::unistd::unlinkat(dir, name, UnlinkatFlags::RemoveDir)
        }
        Ok(_) => nix::unistd::unlinkat(dir, name, UnlinkatFlags::NoRemoveDir),
    }
}

/// `dir/name`'s status, the link itself for a symbolic link.
pub(crate) fn stat_at(dir: BorrowedFd, name: &CStr) -> Result<FileStat, Errno> {
    nix::sys::stat::fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)
}

/// The directory `dir/name`, never through a symbolic link.
pub(crate) fn open_dir(dir: BorrowedFd, name: &CStr) -> Result<OwnedFd, Errno> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    nix::fcntl::openat(dir, name, flags, Mode::empty())
}

/// Most descriptors one message can carry (the kernel's SCM_MAX_FD).
const MOST_DESCRIPTORS: usize = 253;

/// Sends descriptors in one message on a `SOCK_SEQPACKET` socket.
pub(crate) fn send_fds(socket: RawFd, fds: &[RawFd]) -> SysResult<()> {
    let payload = [IoSlice::new(b"t")];
    let rights = [ControlMessage::ScmRights(fds)];
    loop {
        match nix::sys::socket::sendmsg::<()>(
            socket,
            &payload,
            &rights,
            MsgFlags::MSG_NOSIGNAL,
            None,
        ) {
            Err(nix::errno::Errno::EINTR) => continue,
            sent => return sent.map(drop).map_err(|errno| errno as i32),
        }
    }
}

/// Receives one message's descriptors from a `SOCK_SEQPACKET` socket; none when the other end
/// is closed.
pub(crate) fn receive_fds(socket: RawFd) -> SysResult<Vec<OwnedFd>> {
    let mut payload = [0u8; 1];
    let mut control = nix::cmsg_space!([RawFd; MOST_DESCRIPTORS]);
    let mut iov = [IoSliceMut::new(&mut payload)];
    let message = loop {
        match nix::sys::socket::recvmsg::<()>(
            socket,
            &mut iov,
            Some(&mut control),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Err(nix::errno::Errno::EINTR) => continue,
            received => break received.map_err(|errno| errno as i32)?,
        }
    };
    let mut fds = Vec::new();
    for message in message.cmsgs().map_err(|errno| errno as i32)? {
        if let ControlMessageOwned::ScmRights(received) = message {
            // SAFETY: the kernel just gave us these descriptors.
            fds.extend(
                received
                    .into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    if message.flags.contains(MsgFlags::MSG_CTRUNC) {
        return Err(libc::EMSGSIZE);
    }
    Ok(fds)
}
