//! The view's mount trees: a detached copy of each allow-listed path, with its mount attributes
//! (read-only, nosuid, nodev, private propagation) and, for writable paths and what layered
//! directories show when started as root, the id mapping that lets the sandbox uid write root's
//! files.
//!
//! Started as root, the parent makes them while the child builds the rest of its view, and
//! hands them over on a socket: the two CPUs then work at once, where the child alone took a
//! third of its start-up on them. An ordinary user's child makes them itself, in the user
//! namespace only it has.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

use super::child::BindPlan;
use super::view::Access;
use crate::sys;

/// Most descriptors one message carries (the kernel's limit is 253).
const TREES_PER_MESSAGE: usize = 200;

/// Who makes the trees, which decides how each path is reached.
#[derive(Clone, Copy)]
pub(crate) enum Maker {
    /// The parent, from its own descriptors, in the host's mount namespace; started as root, it
    /// id-maps the writable trees onto this (uid, gid).
    Parent { map_writable_onto: (u32, u32) },
    /// The child, in its copy of that namespace: a mount can only be cloned from the caller's
    /// own namespace, so each path is opened again there (and must be the same file).
    Child,
}

/// One detached tree per bind, in the same order.
pub(crate) fn make(binds: &[BindPlan], maker: Maker) -> Result<Vec<OwnedFd>, String> {
    let mut mappings = Mappings::default();
    binds
        .iter()
        .map(|bind| {
            let shown = bind.path.to_string_lossy();
            let source = match maker {
                Maker::Parent { .. } => None,
                Maker::Child => Some(reopen_same(bind)?),
            };
            let from = source.as_ref().map_or(bind.fd, AsRawFd::as_raw_fd);
            let tree = sys::open_tree_clone(from).map_err(|e| {
                format!(
                    "cannot copy the mount of {shown}: {}",
                    std::io::Error::from_raw_os_error(e)
                )
            })?;
            let (attributes, recursive) = match bind.access {
                Access::ReadOnly | Access::Layered => (
                    sys::MOUNT_ATTR_RDONLY | sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NODEV,
                    true,
                ),
                Access::ReadWrite => (sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NODEV, true),
                Access::Device => (sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NOEXEC, false),
            };
            // Copies of a shared mount are its peers: private, nothing mounted below them in
            // the view (a workspace inside /usr) reaches the host, nor the host's mounts the view.
            sys::set_mount_attributes(tree.as_raw_fd(), attributes, recursive, None).map_err(
                |e| {
                    format!(
                        "cannot restrict the mount of {shown}: {}",
                        std::io::Error::from_raw_os_error(e)
                    )
                },
            )?;
            if let (Access::ReadWrite | Access::Layered, Maker::Parent { map_writable_onto }) =
                (bind.access, maker)
            {
                let target = map_writable_onto;
                let userns = mappings.namespace(bind.owner, target)?;
                sys::set_mount_attributes(tree.as_raw_fd(), 0, false, Some(userns)).map_err(
                    |e| {
                        format!(
                            "cannot id-map {shown}: {}",
                            std::io::Error::from_raw_os_error(e)
                        )
                    },
                )?;
            }
            Ok(tree)
        })
        .collect()
}

/// Sends the trees on `channel` (a `SOCK_SEQPACKET` socket), in order.
pub(crate) fn send(channel: RawFd, trees: &[OwnedFd]) -> Result<(), String> {
    for chunk in trees.chunks(TREES_PER_MESSAGE) {
        let fds: Vec<RawFd> = chunk.iter().map(AsRawFd::as_raw_fd).collect();
        sys::send_fds(channel, &fds).map_err(|e| {
            format!(
                "cannot hand the mounts to the sandbox: {}",
                std::io::Error::from_raw_os_error(e)
            )
        })?;
    }
    Ok(())
}

/// Receives `count` trees from `channel`, in the order sent.
pub(crate) fn receive(channel: RawFd, count: usize) -> Result<Vec<OwnedFd>, String> {
    let mut trees = Vec::with_capacity(count);
    while trees.len() < count {
        let got = sys::receive_fds(channel).map_err(|e| match e {
            libc::EMSGSIZE => format!(
                "cannot receive {count} mounts: more than the open-file limit (ulimit -n) allows"
            ),
            e => format!(
                "cannot receive the mounts: {}",
                std::io::Error::from_raw_os_error(e)
            ),
        })?;
        if got.is_empty() {
            return Err("the sandbox's parent is gone".into());
        }
        trees.extend(got);
    }
    Ok(trees)
}

/// The bind's path opened again in this mount namespace, refusing it unless it is still the
/// very file the parent opened.
fn reopen_same(bind: &BindPlan) -> Result<OwnedFd, String> {
    let shown = bind.path.to_string_lossy();
    let fd = sys::open_path_no_symlinks(&bind.path).map_err(|e| {
        format!(
            "cannot open {shown}: {}",
            std::io::Error::from_raw_os_error(e)
        )
    })?;
    // SAFETY: the parent's descriptor, open in our copy of its table while we start.
    let held = nix::sys::stat::fstat(unsafe { BorrowedFd::borrow_raw(bind.fd) });
    let identity = |stat: nix::Result<nix::sys::stat::FileStat>| {
        stat.ok().map(|stat| (stat.st_dev, stat.st_ino))
    };
    match (identity(held), identity(nix::sys::stat::fstat(&fd))) {
        (Some(before), Some(now)) if before == now => Ok(fd),
        _ => Err(format!("{shown} changed while the sandbox was starting")),
    }
}

/// The user namespaces made for id mappings, one per owner, with the helpers that made them.
#[derive(Default)]
struct Mappings {
    namespaces: Vec<((u32, u32), OwnedFd)>,
    helpers: Vec<libc::pid_t>,
}

impl Mappings {
    /// A user namespace mapping `owner` onto `target`, for an id-mapped mount.
    fn namespace(&mut self, owner: (u32, u32), target: (u32, u32)) -> Result<RawFd, String> {
        if let Some((_, fd)) = self.namespaces.iter().find(|(o, _)| *o == owner) {
            return Ok(fd.as_raw_fd());
        }
        let (helper, fd) = mapping_namespace(owner, target)?;
        self.helpers.push(helper);
        self.namespaces.push((owner, fd));
        Ok(self.namespaces.last().expect("just pushed").1.as_raw_fd())
    }
}

impl Drop for Mappings {
    fn drop(&mut self) {
        for &helper in &self.helpers {
            reap(helper);
        }
    }
}

extern "C" fn leave_at_once(_: *mut libc::c_void) -> libc::c_int {
    // It shares our memory and touches none of it.
    sys::exit_now(0)
}

/// Reaps our helper, which exits at once.
fn reap(helper: libc::pid_t) {
    let _ = nix::sys::wait::waitpid(
        nix::unistd::Pid::from_raw(helper),
        Some(nix::sys::wait::WaitPidFlag::__WALL),
    );
}

/// A user namespace mapping `owner` onto `target`, held by descriptor, and the helper process
/// that made it (to be reaped). A namespace needs a process to be made in: a helper sharing our
/// memory (no page tables to copy) is started in it and exits at once. Its namespace lives on in
/// its credentials until it is reaped, so the maps are written and the namespace opened through
/// its /proc entry whether it has ended yet or not.
fn mapping_namespace(
    owner: (u32, u32),
    target: (u32, u32),
) -> Result<(libc::pid_t, OwnedFd), String> {
    // Never freed: the helper may still be running on it when we return.
    let stack: &'static mut [u8] = Box::leak(vec![0u8; 8 * 1024].into_boxed_slice());
    let stack_top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
    // SAFETY: the helper only calls _exit, on its own stack.
    let helper = unsafe {
        libc::clone(
            leave_at_once,
            stack_top as *mut libc::c_void,
            libc::CLONE_NEWUSER | libc::CLONE_VM | libc::SIGCHLD,
            std::ptr::null_mut(),
        )
    };
    if helper < 0 {
        return Err(format!(
            "cannot create a user namespace for the id mapping: {}",
            std::io::Error::last_os_error()
        ));
    }
    let failed =
        |what: &str, err: std::io::Error| format!("cannot set up the id mapping ({what}): {err}");
    let opened = std::fs::write(
        format!("/proc/{helper}/uid_map"),
        format!("{} {} 1", owner.0, target.0),
    )
    .map_err(|e| failed("uid_map", e))
    .and_then(|()| {
        std::fs::write(
            format!("/proc/{helper}/gid_map"),
            format!("{} {} 1", owner.1, target.1),
        )
        .map_err(|e| failed("gid_map", e))
    })
    .and_then(|()| {
        std::fs::File::open(format!("/proc/{helper}/ns/user"))
            .map(OwnedFd::from)
            .map_err(|e| failed("ns/user", e))
    });
    match opened {
        Ok(fd) => Ok((helper, fd)),
        Err(reason) => {
            reap(helper);
            Err(reason)
        }
    }
}
