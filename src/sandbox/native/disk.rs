//! `--disk SIZE`: a limit on what the command may write into the workspace, all files together.
//! The command sees the workspace through an overlay whose upper layer is a tmpfs of that size.
//! Once the command has ended by itself, the sandbox's init writes what changed back into the
//! workspace, unless the tmpfs filled up: then nothing changes, and the result says `disk`. A
//! command killed (timeout, interruption) changes nothing either. The upper layer and the
//! workspace underneath are held by the init's descriptors only, out of the command's view.
//!
//! What changed is read from the upper layer: a whiteout removes its name from the workspace, an
//! opaque directory (one the command replaced) removes what the workspace had there and it does
//! not, and the rest is copied in (files replaced whole, through a temporary file renamed over
//! them, with their mode and times); a file the command opened but left as it was is not
//! written. The init says `hold` before it starts, so that a timeout or an interruption then
//! waits for it instead of leaving the workspace half written.
//!
//! The user may edit the workspace while the command runs: nothing the host changed after the
//! run started (by its inode's change time, against the clock the kernel stamps it with) is
//! overwritten or removed, nor brought back once the host removed or renamed it (what the command
//! changed of it carries overlayfs's mark of its origin, and its directory changed meanwhile).
//! Such a conflict keeps the host's state; the run's version is put beside it
//! (`NAME.autocoder-run`, or `-2`, ...) and the result lists both.

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::{FileStat, Mode, SFlag};
use nix::unistd::UnlinkatFlags;

use crate::error::Failure;
use crate::sys;

/// Where the layers are put together, in the new root, before it is the root; removed once the
/// overlay is mounted.
const ASSEMBLY: &str = ".disk";

/// The overlay's layers, held open by the init.
pub(crate) struct Overlay {
    /// The tmpfs's directory holding what the command wrote.
    upper: OwnedFd,
    /// The workspace itself (its mount tree), under the overlay.
    lower: OwnedFd,
    /// The overlay's root, the workspace as the command sees it.
    pub merged: OwnedFd,
    /// When the layers were put together (seconds, nanoseconds), by the clock inodes' change
    /// times are stamped with: what the host changed since is the user's.
    started: (i64, i64),
}

impl Overlay {
    /// The layers the init reads (upper) and writes (lower) after the command, for Landlock.
    pub(crate) fn layers(&self) -> [(BorrowedFd<'_>, bool); 2] {
        [(self.upper.as_fd(), false), (self.lower.as_fd(), true)]
    }

    /// The descriptors the init holds until the changes are written back.
    pub(crate) fn descriptors(&self) -> [BorrowedFd<'_>; 3] {
        [self.upper.as_fd(), self.lower.as_fd(), self.merged.as_fd()]
    }
}

/// What became of the command's changes.
pub(crate) enum Outcome {
    /// The tmpfs filled up: nothing was written back.
    Full,
    /// What it changed is in the workspace, but for these conflicts.
    WrittenBack(Vec<Conflict>),
}

pub(crate) use crate::sandbox::result::DiskConflict as Conflict;

/// Refuses a workspace the overlay would not cover whole: one with a mount inside (the overlay
/// would hide what is mounted there), or a `--rw` path inside (written past the limit).
pub(crate) fn check_workspace(
    policy: &crate::sandbox::policy::SandboxPolicy,
) -> Result<(), Failure> {
    let inside = |path: &Path| path != policy.workspace && path.starts_with(&policy.workspace);
    let written_past = |path: &&std::path::PathBuf| path.starts_with(&policy.workspace);
    if let Some(path) = policy.read_write.iter().find(written_past) {
        return Err(Failure::usage(format!(
            "--disk does not hold for --rw {}, the workspace or inside it",
            path.display()
        ))
        .with_hint("drop that --rw (the workspace is writable whole), or --disk"));
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|err| Failure::external(format!("cannot read /proc/self/mountinfo: {err}")))?;
    let mounted = mounts
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(unescape_mount_point)
        .find(|point| inside(Path::new(point)));
    if let Some(point) = mounted {
        return Err(Failure::usage(format!(
            "--disk cannot cover {}: a filesystem is mounted inside the workspace",
            point
        ))
        .with_hint("unmount it, or run without --disk"));
    }
    Ok(())
}

/// A mount point as /proc/self/mountinfo writes it: space, tab, newline and backslash as octal
/// escapes.
fn unescape_mount_point(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let octal = bytes.get(at + 1..at + 4).filter(|digits| {
            bytes[at] == b'\\' && digits.iter().all(|digit| (b'0'..=b'7').contains(digit))
        });
        match octal.and_then(|digits| u8::from_str_radix(std::str::from_utf8(digits).ok()?, 8).ok())
        {
            Some(byte) => {
                out.push(byte);
                at += 4;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Mounts the overlay at `target` (relative to the new root, the current directory) over the
/// workspace's mount `tree`, its upper layer a tmpfs of `size` bytes.
pub(crate) fn mount(tree: &OwnedFd, target: &Path, size: u64) -> Result<Overlay, String> {
    fn failed(what: &str) -> impl Fn(Errno) -> String + '_ {
        move |errno| format!("--disk: cannot {what}: {errno}")
    }
    let here = std::env::current_dir().map_err(|err| format!("--disk: {err}"))?;
    let assembly = here.join(ASSEMBLY);
    std::fs::create_dir(&assembly).map_err(|err| format!("--disk: {err}"))?;
    let c_assembly = c_path(&assembly);
    let options = CString::new(format!("mode=0700,size={size}")).expect("no NUL");
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    sys::mount(c"tmpfs", &c_assembly, Some(c"tmpfs"), flags, Some(&options))
        .map_err(|errno| failed("mount its tmpfs")(Errno::from_raw(errno)))?;
    for dir in ["upper", "work", "lower"] {
        std::fs::create_dir(assembly.join(dir)).map_err(|err| format!("--disk: {err}"))?;
    }
    let lower_path = c_path(&assembly.join("lower"));
    sys::move_mount(std::os::fd::AsRawFd::as_raw_fd(tree), &lower_path)
        .map_err(|errno| failed("hold the workspace")(Errno::from_raw(errno)))?;
    let open = |path: &Path| {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
        nix::fcntl::open(path, flags, Mode::empty())
    };
    let upper = open(&assembly.join("upper")).map_err(failed("open its upper layer"))?;
    let lower = open(&assembly.join("lower")).map_err(failed("open the workspace"))?;
    // The workspace's root as the command sees it is the upper layer's: the same owner and mode.
    let root = nix::sys::stat::fstat(&lower).map_err(failed("read the workspace"))?;
    nix::unistd::fchown(
        &upper,
        Some(nix::unistd::Uid::from_raw(root.st_uid)),
        Some(nix::unistd::Gid::from_raw(root.st_gid)),
    )
    .map_err(failed("hand its upper layer over"))?;
    nix::sys::stat::fchmod(&upper, Mode::from_bits_truncate(root.st_mode & 0o7777))
        .map_err(failed("hand its upper layer over"))?;
    let layers = CString::new(format!(
        "lowerdir={0}/lower,upperdir={0}/upper,workdir={0}/work,userxattr",
        assembly.display()
    ))
    .map_err(|_| "--disk: the new root's path holds a NUL byte".to_string())?;
    sys::mount(
        c"overlay",
        &c_path(target),
        Some(c"overlay"),
        flags,
        Some(&layers),
    )
    .map_err(|errno| failed("mount the overlay")(Errno::from_raw(errno)))?;
    let merged = open(target).map_err(failed("open the overlay"))?;
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the kernel writes the coarse clock's time, which stamps inodes, into `now`.
    if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut now) } != 0 {
        return Err(failed("read the clock")(Errno::last()));
    }
    nix::mount::umount2(&assembly, nix::mount::MntFlags::MNT_DETACH)
        .map_err(failed("hide its layers"))?;
    std::fs::remove_dir(&assembly).map_err(|err| format!("--disk: {err}"))?;
    Ok(Overlay {
        upper,
        lower,
        merged,
        started: (now.tv_sec, now.tv_nsec),
    })
}

/// After the command: the changes written back into the workspace, unless the tmpfs filled up.
pub(crate) fn write_back(overlay: &Overlay) -> Result<Outcome, String> {
    let room = nix::sys::statvfs::fstatvfs(&overlay.upper)
        .map_err(|errno| format!("cannot read the upper layer's use: {errno}"))?;
    if room.blocks_available() == 0 || room.files_available() == 0 {
        return Ok(Outcome::Full);
    }
    let mut merge = Merge {
        started: overlay.started,
        conflicts: Vec::new(),
    };
    merge.dir(
        overlay.upper.as_fd(),
        overlay.lower.as_fd(),
        Path::new(""),
        false,
    )?;
    Ok(Outcome::WrittenBack(merge.conflicts))
}

/// A write-back under way: what the host changed since `started` is kept.
struct Merge {
    started: (i64, i64),
    conflicts: Vec<Conflict>,
}

impl Merge {
    /// Whether `dir/name` (or, for a directory, anything in it) changed since the run started.
    fn touched(&self, dir: BorrowedFd, name: &CStr) -> bool {
        let Ok(stat) = sys::stat_at(dir, name) else {
            return false;
        };
        if (stat.st_ctime, stat.st_ctime_nsec) >= self.started {
            return true;
        }
        sys::file_kind(&stat) == SFlag::S_IFDIR
            && sys::open_dir(dir, name).is_ok_and(|below| {
                sys::entry_names(below.as_fd())
                    .unwrap_or_default()
                    .iter()
                    .any(|entry| self.touched(below.as_fd(), entry))
            })
    }

    /// Keeps the host's `name` at `shown` and says so; the run's version goes beside it under
    /// the free name this returns, which the caller then writes (none: the run removed it).
    fn conflict(
        &mut self,
        lower: BorrowedFd,
        name: &CStr,
        shown: &Path,
        run_kept: bool,
    ) -> Result<Option<CString>, String> {
        let path = shown.join(OsStr::from_bytes(name.to_bytes()));
        let free = match run_kept {
            true => Some(
                free_name(lower, name)
                    .ok_or_else(|| format!("no free name beside {}", path.display()))?,
            ),
            false => None,
        };
        self.conflicts.push(Conflict {
            path: path.to_string_lossy().into_owned(),
            beside: free.as_ref().map(|free| {
                let beside = shown.join(OsStr::from_bytes(free.to_bytes()));
                beside.to_string_lossy().into_owned()
            }),
        });
        Ok(free)
    }

    /// Writes the upper directory `upper` into the workspace's `lower`, at `shown` in the
    /// workspace; `made`: `lower` was made for it now, so the host has nothing there.
    fn dir(
        &mut self,
        upper: BorrowedFd,
        lower: BorrowedFd,
        shown: &Path,
        made: bool,
    ) -> Result<(), String> {
        let failed = |name: &CStr, errno: Errno| {
            let path = shown.join(OsStr::from_bytes(name.to_bytes()));
            format!("cannot write back {}: {errno}", path.display())
        };
        let in_upper = sys::entry_names(upper).map_err(|errno| failed(c".", errno))?;
        // A directory the command replaced: what it does not hold is gone, unless the host
        // changed it meanwhile.
        if is_opaque(upper) {
            for name in sys::entry_names(lower).map_err(|errno| failed(c".", errno))? {
                if in_upper.contains(&name) {
                    continue;
                }
                match self.touched(lower, &name) {
                    true => drop(self.conflict(lower, &name, shown, false)?),
                    false => sys::remove_all(lower, &name).map_err(|errno| failed(&name, errno))?,
                }
            }
        }
        // The host removed or renamed something here meanwhile: what the command changed of
        // what it removed is the command's alone now.
        let dir_changed = !made
            && nix::sys::stat::fstat(lower)
                .is_ok_and(|dir| (dir.st_ctime, dir.st_ctime_nsec) >= self.started);
        for name in in_upper {
            let stat = sys::stat_at(upper, &name).map_err(|errno| failed(&name, errno))?;
            let kind = sys::file_kind(&stat);
            let removed = dir_changed
                && matches!(sys::stat_at(lower, &name), Err(Errno::ENOENT))
                && copied_up(upper, &name);
            let host_changed = !made && (removed || self.touched(lower, &name));
            if kind == SFlag::S_IFCHR && stat.st_rdev == 0 {
                // A whiteout: removed.
                match host_changed {
                    true => drop(self.conflict(lower, &name, shown, false)?),
                    false => sys::remove_all(lower, &name).map_err(|errno| failed(&name, errno))?,
                }
                continue;
            }
            if kind == SFlag::S_IFDIR {
                let host_kind = sys::stat_at(lower, &name).map(|stat| sys::file_kind(&stat));
                // A directory where the host changed a file of that name: beside it, whole.
                let target = match host_changed && !matches!(host_kind, Ok(SFlag::S_IFDIR)) {
                    true => self
                        .conflict(lower, &name, shown, true)?
                        .expect("a free name"),
                    false => name.clone(),
                };
                let path = shown.join(OsStr::from_bytes(target.to_bytes()));
                self.write_dir([upper, lower], [&name, &target], &stat, &path)?;
                continue;
            }
            let written = if host_changed {
                let free = self
                    .conflict(lower, &name, shown, true)?
                    .expect("a free name");
                copy_entry(upper, &name, lower, &free, &stat)
            } else if kind == SFlag::S_IFREG && unchanged(upper, lower, &name, &stat) {
                Ok(())
            } else if matches!(kind, SFlag::S_IFREG | SFlag::S_IFLNK) {
                copy_entry(upper, &name, lower, &name, &stat)
            } else {
                // A FIFO, socket or device: not kept, but what it replaced is gone.
                sys::remove_all(lower, &name)
            };
            written.map_err(|errno| failed(&name, errno))?;
        }
        Ok(())
    }

    /// The directory `names[0]` of the upper layer written back as `names[1]`: made where it is
    /// missing (or was something else), then merged, and given its mode.
    fn write_dir(
        &mut self,
        [upper, lower]: [BorrowedFd; 2],
        [name, target]: [&CStr; 2],
        stat: &FileStat,
        shown: &Path,
    ) -> Result<(), String> {
        let failed = |errno: Errno| format!("cannot write back {}: {errno}", shown.display());
        // Set-id bits are not given (a set-gid directory's are inherited): seccomp refuses them.
        let mode = Mode::from_bits_truncate(stat.st_mode & 0o1777);
        let made = match sys::stat_at(lower, target) {
            Ok(existing) if sys::file_kind(&existing) == SFlag::S_IFDIR => false,
            Ok(_) => {
                sys::remove_all(lower, target).map_err(failed)?;
                true
            }
            Err(Errno::ENOENT) => true,
            Err(errno) => return Err(failed(errno)),
        };
        // Ours to fill first; its mode once it is filled (it may not let us write).
        if made {
            nix::sys::stat::mkdirat(lower, target, Mode::S_IRWXU).map_err(failed)?;
        }
        let upper_dir = sys::open_dir(upper, name).map_err(failed)?;
        let lower_dir = sys::open_dir(lower, target).map_err(failed)?;
        // One the workspace had read-only, which the command opened to write in: ours to fill
        // until its mode is given back below.
        if !made {
            let now = nix::sys::stat::fstat(&lower_dir).map_err(failed)?;
            if now.st_mode & 0o700 != 0o700 {
                let open = Mode::from_bits_truncate((now.st_mode & 0o1777) | 0o700);
                nix::sys::stat::fchmod(&lower_dir, open).map_err(failed)?;
            }
        }
        self.dir(upper_dir.as_fd(), lower_dir.as_fd(), shown, made)?;
        let now = nix::sys::stat::fstat(&lower_dir).map_err(failed)?;
        if now.st_mode & 0o1777 == mode.bits() {
            return Ok(());
        }
        nix::sys::stat::fchmod(&lower_dir, mode).map_err(failed)
    }
}

/// Whether the upper layer's `name` was copied up from the workspace (overlayfs marks it with
/// its origin), rather than made by the command.
fn copied_up(upper: BorrowedFd, name: &CStr) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(path) = CString::new(
        [
            format!("/proc/self/fd/{}/", upper.as_raw_fd()).as_bytes(),
            name.to_bytes(),
        ]
        .concat(),
    ) else {
        return false;
    };
    // SAFETY: asking the size of an attribute of a path we built; no buffer is written.
    let size = unsafe {
        libc::lgetxattr(
            path.as_ptr(),
            c"user.overlay.origin".as_ptr(),
            std::ptr::null_mut(),
            0,
        )
    };
    size >= 0
}

/// A name beside `name` in `dir` that nothing has: `NAME.autocoder-run`, then `-2`, ...
fn free_name(dir: BorrowedFd, name: &CStr) -> Option<CString> {
    (1..100).find_map(|n| {
        let suffix = match n {
            1 => ".autocoder-run".to_string(),
            n => format!(".autocoder-run-{n}"),
        };
        let mut free = name.to_bytes().to_vec();
        free.extend_from_slice(suffix.as_bytes());
        let free = CString::new(free).ok()?;
        matches!(sys::stat_at(dir, &free), Err(Errno::ENOENT)).then_some(free)
    })
}

/// Whether the regular file `name` of the upper layer holds what the workspace's does, with its
/// mode: copied up (opened to write, touched), not changed.
fn unchanged(upper: BorrowedFd, lower: BorrowedFd, name: &CStr, stat: &FileStat) -> bool {
    use std::io::Read;
    let Ok(host) = sys::stat_at(lower, name) else {
        return false;
    };
    if sys::file_kind(&host) != SFlag::S_IFREG
        || host.st_size != stat.st_size
        || host.st_mode & 0o7777 != stat.st_mode & 0o7777
    {
        return false;
    }
    let open = |dir: BorrowedFd| {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        nix::fcntl::openat(dir, name, flags, Mode::empty()).map(File::from)
    };
    let (Ok(mut run), Ok(mut host)) = (open(upper), open(lower)) else {
        return false;
    };
    let (mut ours, mut theirs) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        let Ok(read) = run.read(&mut ours) else {
            return false;
        };
        if read == 0 {
            return host.read(&mut theirs[..1]).is_ok_and(|more| more == 0);
        }
        if host.read_exact(&mut theirs[..read]).is_err() || ours[..read] != theirs[..read] {
            return false;
        }
    }
}

/// The upper layer's regular file or symbolic link `name` copied into `lower` as `target`.
fn copy_entry(
    upper: BorrowedFd,
    name: &CStr,
    lower: BorrowedFd,
    target: &CStr,
    stat: &FileStat,
) -> Result<(), Errno> {
    match sys::file_kind(stat) {
        SFlag::S_IFLNK => nix::fcntl::readlinkat(upper, name).and_then(|link| {
            sys::remove_all(lower, target)?;
            nix::unistd::symlinkat(link.as_os_str(), lower, target)
        }),
        _ => write_file(upper, lower, name, target, stat),
    }
}

/// The regular file `name` written back whole as `target`: through a temporary file renamed
/// over it.
fn write_file(
    upper: BorrowedFd,
    lower: BorrowedFd,
    name: &CStr,
    target: &CStr,
    stat: &FileStat,
) -> Result<(), Errno> {
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mut from = File::from(nix::fcntl::openat(upper, name, flags, Mode::empty())?);
    // Unique to this file (our pid is 1 in every run).
    static WRITTEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let serial = WRITTEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temp = CString::new(format!(".autocoder-disk-{serial}-{nanos}.tmp")).expect("no NUL");
    let mode = Mode::from_bits_truncate(stat.st_mode & 0o777);
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW;
    let mut to = File::from(nix::fcntl::openat(
        lower,
        temp.as_c_str(),
        flags | OFlag::O_CLOEXEC,
        mode,
    )?);
    let copied = std::io::copy(&mut from, &mut to)
        .map_err(|err| Errno::from_raw(err.raw_os_error().unwrap_or(libc::EIO)))
        .and_then(|_| nix::sys::stat::fchmod(&to, mode))
        .and_then(|()| {
            let time = |seconds, nanoseconds| nix::sys::time::TimeSpec::new(seconds, nanoseconds);
            nix::sys::stat::futimens(
                &to,
                &time(stat.st_atime, stat.st_atime_nsec),
                &time(stat.st_mtime, stat.st_mtime_nsec),
            )
        })
        .and_then(|()| match sys::stat_at(lower, target) {
            Ok(existing) if sys::file_kind(&existing) == SFlag::S_IFDIR => {
                sys::remove_all(lower, target)
            }
            _ => Ok(()),
        })
        .and_then(|()| nix::fcntl::renameat(lower, temp.as_c_str(), lower, target));
    if copied.is_err() {
        let _ = nix::unistd::unlinkat(lower, temp.as_c_str(), UnlinkatFlags::NoRemoveDir);
    }
    copied
}

/// Whether the upper layer's directory `dir` is opaque: it replaced the workspace's directory of
/// that name, whose entries the merged view no longer shows.
fn is_opaque(dir: BorrowedFd) -> bool {
    use std::os::fd::AsRawFd;
    let mut value = [0u8; 1];
    // SAFETY: reading an attribute of a directory we hold into a buffer of the size given.
    let read = unsafe {
        libc::fgetxattr(
            dir.as_raw_fd(),
            c"user.overlay.opaque".as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        )
    };
    read == 1 && value[0] == b'y'
}

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).expect("the view's paths hold no NUL byte")
}
