//! Watching a started command: drain its output into bounded captures (or, with --stream, pass
//! it on to ours), collect the child's report lines, enforce the wall-clock limit, stop it when
//! we are told to stop, and wait for it.
//! One `poll` loop on a pidfd, the pipes and a signalfd; no threads (the native backend forks,
//! which wants a single-threaded parent).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::capture::OutputCapture;
use crate::error::Failure;

/// What happened while a command ran.
#[derive(Debug)]
pub struct Supervised {
    /// Lines the sandbox child wrote on its report pipe.
    pub report: Vec<String>,
    pub stdout: Option<OutputCapture>,
    pub stderr: Option<OutputCapture>,
    pub timed_out: bool,
    /// The signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) that made us stop the command, if any.
    pub interrupted: Option<i32>,
    /// The raw wait status of the process we started; `None` when watching ended with its
    /// `status` line (`Watch::ends_with_status`), before it was reaped.
    pub wait_status: Option<i32>,
    pub elapsed: Duration,
    /// The last byte passed on (to our stdout or stderr) was not a newline.
    pub stderr_mid_line: bool,
}

/// The pipes to read; `None` where the stream is not captured.
pub struct Streams {
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
    pub report: Option<OwnedFd>,
    /// Pass the command's output on to our own stdout and stderr instead of capturing it. The
    /// command never holds our descriptors: through them it could read a terminal (what the
    /// user types), change its settings, or truncate the file our output is appended to.
    pub relay: bool,
}

/// Bytes read from the command and not yet written on: while some wait, the command's pipe is
/// not read (it blocks, as it would writing to a slow reader), and our descriptor is written
/// only when poll says it can take more, so a reader that never reads cannot stop the clock.
struct Relay {
    to: RawFd,
    /// Our own non-blocking opening of the file, when we could make one: held here, `to` is it.
    _reopened: Option<OwnedFd>,
    pending: Vec<u8>,
    /// The last byte written was not a newline.
    mid_line: bool,
}

impl Relay {
    /// A relay to our descriptor `fd`. Unless it is a regular file, writes go through a
    /// non-blocking opening of the same file of our own (a new open file description, so the
    /// shell's flags on `fd` stay as they are): a terminal that is not read (Ctrl-S, a stalled
    /// ssh session) takes less than poll promised, and a blocking write would stop the clock.
    fn new(fd: RawFd) -> Relay {
        let regular = std::fs::metadata(format!("/proc/self/fd/{fd}")).is_ok_and(|m| m.is_file());
        let reopened = (!regular)
            .then(|| {
                let path = std::ffi::CString::new(format!("/proc/self/fd/{fd}")).ok()?;
                // SAFETY: opening a NUL-terminated path.
                let new = unsafe {
                    libc::open(
                        path.as_ptr(),
                        libc::O_WRONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY,
                    )
                };
                // SAFETY: the kernel just gave us this descriptor.
                (new >= 0).then(|| unsafe { OwnedFd::from_raw_fd(new) })
            })
            .flatten();
        Relay {
            to: reopened.as_ref().map_or(fd, AsRawFd::as_raw_fd),
            _reopened: reopened,
            pending: Vec::new(),
            mid_line: false,
        }
    }

    /// Writes what `to` takes without blocking long: at most a pipe's atomic size at a time.
    /// Returns the last byte written, if any.
    fn write_some(&mut self) -> Result<Option<u8>, i32> {
        let chunk = self.pending.len().min(libc::PIPE_BUF);
        // Without an opening of our own (a terminal we may not reopen), the shared one is made
        // non-blocking for the length of this write only.
        // SAFETY: fcntl on our own descriptor; writing from a valid buffer.
        let n = unsafe {
            let flags = libc::fcntl(self.to, libc::F_GETFL);
            let borrowed = self._reopened.is_none() && flags >= 0 && flags & libc::O_NONBLOCK == 0;
            if borrowed {
                libc::fcntl(self.to, libc::F_SETFL, flags | libc::O_NONBLOCK);
            }
            let n = libc::write(self.to, self.pending.as_ptr().cast(), chunk);
            if borrowed {
                let errno = crate::sys::errno();
                libc::fcntl(self.to, libc::F_SETFL, flags);
                *libc::__errno_location() = errno;
            }
            n
        };
        if n < 0 {
            let errno = crate::sys::errno();
            return if errno == libc::EINTR || errno == libc::EAGAIN {
                Ok(None)
            } else {
                Err(errno)
            };
        }
        let last = (n > 0).then(|| self.pending[n as usize - 1]);
        if let Some(byte) = last {
            self.mid_line = byte != b'\n';
        }
        self.pending.drain(..n as usize);
        Ok(last)
    }
}

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT, held back while a command runs, so that Ctrl-C (or
/// Ctrl-\\) or a CI runner's cancellation stops the sandbox and cleans up (its processes, its
/// cgroups) instead of killing us and leaving them behind. Block them before the command starts;
/// the command itself starts with an empty signal mask.
pub struct TerminationSignals {
    fd: OwnedFd,
    previous: libc::sigset_t,
}

impl TerminationSignals {
    pub fn block() -> Result<TerminationSignals, Failure> {
        // SAFETY: building a signal set, swapping the mask of this single thread, and making a
        // signalfd for the set.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                libc::sigaddset(&mut set, signal);
            }
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut previous);
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                let err = std::io::Error::last_os_error();
                libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
                return Err(Failure::external(format!(
                    "cannot watch for signals: {err}"
                )));
            }
            Ok(TerminationSignals {
                fd: OwnedFd::from_raw_fd(fd),
                previous,
            })
        }
    }

    /// The signal received since the last call, if any.
    pub fn take(&self) -> Option<i32> {
        // SAFETY: reading one siginfo record into a buffer of its size.
        unsafe {
            let mut info: libc::signalfd_siginfo = std::mem::zeroed();
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            let n = libc::read(
                self.fd.as_raw_fd(),
                (&mut info as *mut libc::signalfd_siginfo).cast(),
                size,
            );
            (n as usize == size).then_some(info.ssi_signo as i32)
        }
    }
}

impl Drop for TerminationSignals {
    fn drop(&mut self) {
        // SAFETY: restoring the mask we replaced.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous, std::ptr::null_mut()) };
    }
}

/// What to watch, and the limits.
pub struct Watch<'a> {
    pub pid: libc::pid_t,
    pub pidfd: &'a OwnedFd,
    pub signals: &'a TerminationSignals,
    pub max_output: u64,
    pub timeout: Duration,
    pub started: Instant,
    /// The process writes `status ...` on the report pipe and closes it once nothing it watches
    /// over is left (the sandbox's init): watching ends when that line is in and every pipe has
    /// ended, without waiting for the process's own exit; the caller reaps it.
    pub ends_with_status: bool,
}

pub fn supervise(watch: Watch<'_>, mut streams: Streams, mut kill: impl FnMut()) -> Supervised {
    let deadline = watch.started + watch.timeout;
    let capture = |pipe: &Option<OwnedFd>| {
        pipe.as_ref()
            .filter(|_| !streams.relay)
            .map(|_| OutputCapture::new(watch.max_output))
    };
    let mut stdout = capture(&streams.stdout);
    let mut stderr = capture(&streams.stderr);
    // Indexed like the streams: 0 stdout, 1 stderr.
    let mut relays = [1, 2].map(|to| streams.relay.then(|| Relay::new(to)));
    // Our stdout and stderr are one file: the command got one pipe, relayed to our stdout.
    let shared_pipe = streams.relay && streams.stderr.is_none();
    // Or both are terminals (perhaps one, by two names): what was written last decides.
    // SAFETY: isatty on our own descriptors.
    let both_terminals = unsafe { libc::isatty(1) == 1 && libc::isatty(2) == 1 };
    let mut last_written = if shared_pipe { 0 } else { 1 };
    let mut open: Vec<(RawFd, usize)> = [&streams.stdout, &streams.stderr, &streams.report]
        .into_iter()
        .enumerate()
        .filter_map(|(which, fd)| fd.as_ref().map(|fd| (fd.as_raw_fd(), which)))
        .collect();
    for &(fd, _) in &open {
        // SAFETY: setting a flag on a descriptor we own.
        unsafe {
            libc::fcntl(
                fd,
                libc::F_SETFL,
                libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK,
            )
        };
    }
    let mut timed_out = false;
    let mut interrupted = None;
    let mut ended_with_status = false;
    // Not zeroed: its pages are touched only when bytes come (a run with no output saves 16 page
    // faults).
    let mut buffer = Vec::with_capacity(64 * 1024);
    let mut report_bytes = Vec::new();
    let mut consume =
        |which: usize, bytes: &[u8], report: &mut Vec<u8>, relays: &mut [Option<Relay>; 2]| {
            match which {
                0 | 1 if relays[which].is_some() => relays[which]
                    .as_mut()
                    .unwrap()
                    .pending
                    .extend_from_slice(bytes),
                0 => stdout.as_mut().map_or((), |c| c.push(bytes)),
                1 => stderr.as_mut().map_or((), |c| c.push(bytes)),
                _ => report.extend_from_slice(bytes),
            }
        };
    loop {
        // The command's pipes (unless their bytes still wait to be passed on), then our own
        // descriptors that have bytes waiting.
        let waiting = |which: usize| {
            relays
                .get(which)
                .is_some_and(|r| r.as_ref().is_some_and(|r| !r.pending.is_empty()))
        };
        let reading: Vec<(RawFd, usize)> = open
            .iter()
            .copied()
            .filter(|&(_, which)| !waiting(which))
            .collect();
        let writing: Vec<usize> = (0..2).filter(|&which| waiting(which)).collect();
        let mut fds: Vec<libc::pollfd> = [watch.pidfd.as_raw_fd(), watch.signals.fd.as_raw_fd()]
            .into_iter()
            .chain(reading.iter().map(|&(fd, _)| fd))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .chain(writing.iter().map(|&which| libc::pollfd {
                fd: relays[which].as_ref().unwrap().to,
                events: libc::POLLOUT,
                revents: 0,
            }))
            .collect();
        let wait_ms = if timed_out || interrupted.is_some() {
            -1
        } else {
            // Rounded up, so the deadline has passed when poll times out.
            let left = deadline.saturating_duration_since(Instant::now());
            left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
        };
        // SAFETY: polling descriptors we own.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait_ms) };
        if ready == 0 && !timed_out && interrupted.is_none() && Instant::now() >= deadline {
            timed_out = true;
            kill();
            continue;
        }
        if ready < 0 {
            continue;
        }
        if fds[1].revents != 0 {
            if let Some(signal) = watch.signals.take() {
                if interrupted.is_none() && !timed_out {
                    interrupted = Some(signal);
                    kill();
                }
            }
        }
        let mut closed = Vec::new();
        for (slot, pollfd) in fds.iter().enumerate().skip(2).take(reading.len()) {
            if pollfd.revents == 0 {
                continue;
            }
            let (fd, which) = reading[slot - 2];
            match read_some(fd, &mut buffer) {
                Ok(0) => closed.push(fd),
                Ok(_) => consume(which, &buffer, &mut report_bytes, &mut relays),
                Err(libc::EAGAIN) => {}
                Err(_) => closed.push(fd),
            }
        }
        open.retain(|(fd, _)| !closed.contains(fd));
        for (pollfd, &which) in fds.iter().skip(2 + reading.len()).zip(&writing) {
            if pollfd.revents == 0 {
                continue;
            }
            let relay = relays[which].as_mut().unwrap();
            let written = match pollfd.revents & libc::POLLOUT {
                0 => Err(libc::EPIPE),
                _ => relay.write_some(),
            };
            match written {
                Ok(Some(_)) if both_terminals => last_written = which,
                Ok(_) => {}
                // Our reader went away (EPIPE, POLLERR): our end of the command's pipe closes
                // too, so that the command learns it (SIGPIPE) as it would have without us.
                Err(_) => {
                    relay.pending.clear();
                    let fd = match which {
                        0 => streams.stdout.take(),
                        _ => streams.stderr.take(),
                    };
                    if let Some(fd) = fd {
                        open.retain(|&(open_fd, _)| open_fd != fd.as_raw_fd());
                    }
                }
            }
        }
        if fds[0].revents != 0 {
            break;
        }
        if watch.ends_with_status && open.is_empty() && reported_status(&report_bytes) {
            ended_with_status = true;
            break;
        }
    }
    // The process is gone, or has reported its status; take what is still buffered in the
    // pipes, and pass on what waits (as long as our reader keeps taking it within a few
    // seconds).
    for &(fd, which) in &open {
        while let Ok(1..) = read_some(fd, &mut buffer) {
            consume(which, &buffer, &mut report_bytes, &mut relays);
        }
    }
    for (which, relay) in relays.iter_mut().enumerate() {
        let Some(relay) = relay else {
            continue;
        };
        while !relay.pending.is_empty() {
            let mut pollfd = libc::pollfd {
                fd: relay.to,
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: polling one descriptor.
            let ready = unsafe { libc::poll(&mut pollfd, 1, 5000) };
            if ready <= 0 || pollfd.revents & libc::POLLOUT == 0 {
                break;
            }
            match relay.write_some() {
                Ok(Some(_)) if both_terminals => last_written = which,
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
    let wait_status = (!ended_with_status).then(|| reap(watch.pid));
    let report = String::from_utf8_lossy(&report_bytes)
        .lines()
        .map(str::to_string)
        .collect();
    Supervised {
        report,
        stdout,
        stderr,
        timed_out,
        interrupted,
        wait_status,
        elapsed: watch.started.elapsed(),
        stderr_mid_line: relays[last_written]
            .as_ref()
            .is_some_and(|r| r.mid_line || !r.pending.is_empty()),
    }
}

/// Waits for our child `pid` to end, and returns its raw wait status.
pub fn reap(pid: libc::pid_t) -> i32 {
    let mut wait_status = 0;
    // SAFETY: reaping our own child.
    while unsafe { libc::waitpid(pid, &mut wait_status, 0) } < 0
        && crate::sys::errno() == libc::EINTR
    {}
    wait_status
}

/// Whether the report holds a `status` line.
fn reported_status(report: &[u8]) -> bool {
    report
        .split(|&byte| byte == b'\n')
        .any(|line| line.starts_with(b"status "))
}

/// Reads what is available into `buffer`, up to its capacity, in place of what it held: `Ok(0)`
/// at end of file, `Err(EAGAIN)` when nothing is ready.
fn read_some(fd: RawFd, buffer: &mut Vec<u8>) -> Result<usize, i32> {
    debug_assert!(
        buffer.capacity() > 0,
        "a read of 0 bytes would look like end of file"
    );
    buffer.clear();
    loop {
        // SAFETY: reading into the buffer's allocation, no further than its capacity.
        let n = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.capacity()) };
        if n >= 0 {
            // SAFETY: read wrote these n bytes.
            unsafe { buffer.set_len(n as usize) };
            return Ok(n as usize);
        }
        let errno = crate::sys::errno();
        if errno != libc::EINTR {
            return Err(errno);
        }
    }
}
