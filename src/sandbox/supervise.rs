//! Watching a started command: drain its output into bounded captures (or, with --stream, pass
//! it on to ours), collect the child's report lines, enforce the wall-clock limit, stop it when
//! we are told to stop, and wait for it.
//! One `poll` loop on a pidfd, the pipes and a signalfd; no threads (the native backend forks,
//! which wants a single-threaded parent).

use std::io::IsTerminal;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag};
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

use super::capture::OutputCapture;
use super::policy::OutputWatcher;
use crate::error::Failure;

/// What happened while a command ran.
#[derive(Debug)]
pub(crate) struct Supervised {
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
pub(crate) struct Streams {
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
    /// Our own non-blocking opening of the file, when we could make one, else a duplicate of our
    /// descriptor (the same open file description as the shell's).
    to: OwnedFd,
    own_opening: bool,
    pending: Vec<u8>,
    /// The last byte written was not a newline.
    mid_line: bool,
}

impl Relay {
    /// A relay to our descriptor `ours`. Unless it is a regular file, writes go through a
    /// non-blocking opening of the same file of our own (a new open file description, so the
    /// shell's flags on `ours` stay as they are): a terminal that is not read (Ctrl-S, a stalled
    /// ssh session) takes less than poll promised, and a blocking write would stop the clock.
    fn new(ours: BorrowedFd<'_>) -> Option<Relay> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = format!("/proc/self/fd/{}", ours.as_raw_fd());
        let regular = std::fs::metadata(&path).is_ok_and(|m| m.is_file());
        let reopened = (!regular)
            .then(|| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                    .open(&path)
                    .ok()
            })
            .flatten();
        let own_opening = reopened.is_some();
        let to = match reopened {
            Some(file) => OwnedFd::from(file),
            None => nix::unistd::dup(ours).ok()?,
        };
        Some(Relay {
            to,
            own_opening,
            pending: Vec::new(),
            mid_line: false,
        })
    }

    /// Writes what `to` takes without blocking long: at most a pipe's atomic size at a time.
    /// Returns the last byte written, if any.
    fn write_some(&mut self) -> Result<Option<u8>, Errno> {
        let chunk = self.pending.len().min(libc::PIPE_BUF);
        // Without an opening of our own (a terminal we may not reopen), the shared one is made
        // non-blocking for the length of this write only.
        let flags = nix::fcntl::fcntl(&self.to, FcntlArg::F_GETFL).map(OFlag::from_bits_retain);
        let blocking = match flags {
            Ok(flags) if !self.own_opening && !flags.contains(OFlag::O_NONBLOCK) => Some(flags),
            _ => None,
        };
        if let Some(flags) = blocking {
            let _ = nix::fcntl::fcntl(&self.to, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK));
        }
        let written = nix::unistd::write(&self.to, &self.pending[..chunk]);
        if let Some(flags) = blocking {
            let _ = nix::fcntl::fcntl(&self.to, FcntlArg::F_SETFL(flags));
        }
        let n = match written {
            Ok(n) => n,
            Err(Errno::EINTR | Errno::EAGAIN) => return Ok(None),
            Err(errno) => return Err(errno),
        };
        let last = (n > 0).then(|| self.pending[n - 1]);
        if let Some(byte) = last {
            self.mid_line = byte != b'\n';
        }
        self.pending.drain(..n);
        Ok(last)
    }
}

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT, held back while a command runs, so that Ctrl-C (or
/// Ctrl-\\) or a CI runner's cancellation stops the sandbox and cleans up (its processes, its
/// cgroups) instead of killing us and leaving them behind. Block them before the command starts;
/// the command itself starts with an empty signal mask.
pub(crate) struct TerminationSignals {
    fd: SignalFd,
    previous: SigSet,
}

impl TerminationSignals {
    pub(crate) fn block() -> Result<TerminationSignals, Failure> {
        let mut set = SigSet::empty();
        for signal in [
            Signal::SIGINT,
            Signal::SIGTERM,
            Signal::SIGHUP,
            Signal::SIGQUIT,
        ] {
            set.add(signal);
        }
        let mut previous = SigSet::empty();
        let blocked = nix::sys::signal::pthread_sigmask(
            SigmaskHow::SIG_BLOCK,
            Some(&set),
            Some(&mut previous),
        );
        let watched = blocked.and_then(|()| {
            SignalFd::with_flags(&set, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        });
        match watched {
            Ok(fd) => Ok(TerminationSignals { fd, previous }),
            Err(errno) => {
                let _ = nix::sys::signal::pthread_sigmask(
                    SigmaskHow::SIG_SETMASK,
                    Some(&previous),
                    None,
                );
                Err(Failure::external(format!(
                    "cannot watch for signals: {}",
                    std::io::Error::from(errno)
                )))
            }
        }
    }

    /// The signal received since the last call, if any.
    pub(crate) fn take(&self) -> Option<i32> {
        match self.fd.read_signal() {
            Ok(Some(info)) => Some(info.ssi_signo as i32),
            _ => None,
        }
    }
}

impl std::os::fd::AsFd for TerminationSignals {
    /// Readable while one of the signals is pending (reading it, `take`, consumes it).
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Drop for TerminationSignals {
    fn drop(&mut self) {
        let _ =
            nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&self.previous), None);
    }
}

/// What to watch, and the limits.
pub(crate) struct Watch<'a> {
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
    /// Told the captured output as it comes.
    pub watcher: Option<&'a OutputWatcher>,
}

/// Long: one poll loop whose states (timed out, interrupted, holding) share its locals; then the drain.
pub(crate) fn supervise(
    watch: Watch<'_>,
    mut streams: Streams,
    mut kill: impl FnMut(),
) -> Supervised {
    let deadline = watch.started + watch.timeout;
    let mut sinks = Sinks::new(&streams, watch.max_output, watch.watcher);
    // The streams still open, by index: 0 stdout, 1 stderr, 2 the report.
    let mut open: Vec<usize> = (0..3)
        .filter(|&which| streams.pipe(which).is_some())
        .collect();
    for &which in &open {
        set_nonblocking(streams.pipe(which).expect("open"));
    }
    let mut timed_out = false;
    let mut interrupted = None;
    let mut ended_with_status = false;
    let mut buffer = vec![0; 64 * 1024];
    loop {
        // The command's pipes (unless their bytes still wait to be passed on), then our own
        // descriptors that have bytes waiting.
        let reading: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&which| !sinks.waiting(which))
            .collect();
        let writing: Vec<usize> = (0..2).filter(|&which| sinks.waiting(which)).collect();
        // The process finishes what the command did (--disk writes its changes back): neither
        // the clock nor a signal stops it now.
        let holding = watch.ends_with_status && reported(&sinks.report, b"hold");
        // Told to stop: asked again each second (a container the engine had not made yet when
        // it was first told outlives the first `docker kill`).
        let stopping = (timed_out || interrupted.is_some()) && !holding;
        let wait = if holding {
            PollTimeout::NONE
        } else if stopping {
            PollTimeout::from(1000u16)
        } else {
            // Rounded up, so the deadline has passed when poll times out.
            let left = deadline.saturating_duration_since(Instant::now());
            let millis = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
            PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX)
        };
        let (ready, events) = poll(&watch, &streams, &sinks, (&reading, &writing), wait);
        if ready == Ok(0) && stopping {
            kill();
            continue;
        }
        let stoppable = !timed_out && interrupted.is_none() && !holding;
        if ready == Ok(0) && stoppable && Instant::now() >= deadline {
            timed_out = true;
            kill();
            continue;
        }
        if ready.is_err() {
            continue;
        }
        if !events[1].is_empty() {
            if let Some(signal) = watch.signals.take() {
                if interrupted.is_none() && !timed_out {
                    interrupted = Some(signal);
                    if !holding {
                        kill();
                    }
                }
            }
        }
        let ready_pipes = (&reading[..], &writing[..], &events[2..]);
        let closed = move_bytes(&mut streams, &mut sinks, ready_pipes, &mut buffer);
        open.retain(|which| !closed.contains(which));
        if !events[0].is_empty() {
            break;
        }
        if watch.ends_with_status && open.is_empty() && reported(&sinks.report, b"status") {
            ended_with_status = true;
            break;
        }
    }
    // The process is gone, or has reported its status; take what is still buffered in the
    // pipes, and pass on what waits.
    for &which in &open {
        let pipe = streams.pipe(which).expect("open");
        while let Ok(n @ 1..) = read_some(pipe, &mut buffer) {
            sinks.consume(which, &buffer[..n]);
        }
    }
    sinks.flush();
    let wait_status = (!ended_with_status).then(|| reap(watch.pid));
    let report = String::from_utf8_lossy(&sinks.report)
        .lines()
        .map(str::to_string)
        .collect();
    Supervised {
        report,
        stderr_mid_line: sinks.mid_line(),
        stdout: sinks.stdout,
        stderr: sinks.stderr,
        timed_out,
        interrupted,
        wait_status,
        elapsed: watch.started.elapsed(),
    }
}

fn set_nonblocking(pipe: BorrowedFd<'_>) {
    if let Ok(flags) = nix::fcntl::fcntl(pipe, FcntlArg::F_GETFL) {
        let flags = OFlag::from_bits_retain(flags) | OFlag::O_NONBLOCK;
        let _ = nix::fcntl::fcntl(pipe, FcntlArg::F_SETFL(flags));
    }
}

/// Waits up to `wait` for the process's end, a signal, bytes on the pipes `reading` and room
/// on the relays `writing`; the events come in that order.
fn poll(
    watch: &Watch<'_>,
    streams: &Streams,
    sinks: &Sinks<'_>,
    (reading, writing): (&[usize], &[usize]),
    wait: PollTimeout,
) -> (nix::Result<i32>, Vec<PollFlags>) {
    let mut fds: Vec<PollFd> = [watch.pidfd.as_fd(), watch.signals.fd.as_fd()]
        .into_iter()
        .chain(reading.iter().filter_map(|&which| streams.pipe(which)))
        .map(|fd| PollFd::new(fd, PollFlags::POLLIN))
        .chain(
            writing
                .iter()
                .map(|&which| PollFd::new(sinks.relay_to(which), PollFlags::POLLOUT)),
        )
        .collect();
    let ready = nix::poll::poll(&mut fds, wait);
    let events = fds
        .iter()
        .map(|fd| fd.revents().unwrap_or(PollFlags::empty()))
        .collect();
    (ready, events)
}

/// Reads the pipes and writes the relays that `events` (theirs, in that order) say are
/// ready; returns the streams that closed.
fn move_bytes(
    streams: &mut Streams,
    sinks: &mut Sinks<'_>,
    (reading, writing, events): (&[usize], &[usize], &[PollFlags]),
    buffer: &mut [u8],
) -> Vec<usize> {
    let mut closed = Vec::new();
    for (slot, &which) in reading.iter().enumerate() {
        if events[slot].is_empty() {
            continue;
        }
        let pipe = streams.pipe(which).expect("open");
        match read_some(pipe, buffer) {
            Ok(0) => closed.push(which),
            Ok(n) => sinks.consume(which, &buffer[..n]),
            Err(Errno::EAGAIN) => {}
            Err(_) => closed.push(which),
        }
    }
    for (slot, &which) in writing.iter().enumerate() {
        let revents = events[reading.len() + slot];
        if revents.is_empty() {
            continue;
        }
        // Our reader went away (EPIPE, POLLERR): our end of the command's pipe closes too,
        // so that the command learns it (SIGPIPE) as it would have without us.
        if !sinks.pass_on(which, revents.contains(PollFlags::POLLOUT)) {
            match which {
                0 => streams.stdout = None,
                _ => streams.stderr = None,
            }
            closed.push(which);
        }
    }
    closed
}

/// Where the command's bytes go: its captures, or the relays to our own stdout and stderr
/// (indexed like the streams: 0 stdout, 1 stderr), and the report.
struct Sinks<'a> {
    watcher: Option<&'a OutputWatcher>,
    stdout: Option<OutputCapture>,
    stderr: Option<OutputCapture>,
    relays: [Option<Relay>; 2],
    report: Vec<u8>,
    /// Both our stdout and stderr are terminals (perhaps one, by two names).
    both_terminals: bool,
    /// The relay written last, by which the result tells whether a line was left open.
    last_written: usize,
}

impl<'a> Sinks<'a> {
    fn new(streams: &Streams, max_output: u64, watcher: Option<&'a OutputWatcher>) -> Sinks<'a> {
        let capture = |pipe: &Option<OwnedFd>| {
            pipe.as_ref()
                .filter(|_| !streams.relay)
                .map(|_| OutputCapture::new(max_output))
        };
        // Our stdout and stderr are one file: the command got one pipe, relayed to our stdout.
        let shared_pipe = streams.relay && streams.stderr.is_none();
        Sinks {
            watcher,
            stdout: capture(&streams.stdout),
            stderr: capture(&streams.stderr),
            relays: [std::io::stdout().as_fd(), std::io::stderr().as_fd()]
                .map(|ours| streams.relay.then(|| Relay::new(ours)).flatten()),
            report: Vec::new(),
            both_terminals: std::io::stdout().is_terminal() && std::io::stderr().is_terminal(),
            last_written: if shared_pipe { 0 } else { 1 },
        }
    }

    fn consume(&mut self, which: usize, bytes: &[u8]) {
        if let (0 | 1, Some(watcher)) = (which, self.watcher) {
            (watcher.0)(which, bytes);
        }
        match which {
            0 | 1 if self.relays[which].is_some() => self.relays[which]
                .as_mut()
                .unwrap()
                .pending
                .extend_from_slice(bytes),
            0 => self.stdout.as_mut().map_or((), |c| c.push(bytes)),
            1 => self.stderr.as_mut().map_or((), |c| c.push(bytes)),
            _ => self.report.extend_from_slice(bytes),
        }
    }

    /// Whether stream `which` has bytes waiting to be passed on.
    fn waiting(&self, which: usize) -> bool {
        self.relays
            .get(which)
            .is_some_and(|r| r.as_ref().is_some_and(|r| !r.pending.is_empty()))
    }

    fn relay_to(&self, which: usize) -> BorrowedFd<'_> {
        self.relays[which].as_ref().expect("relayed").to.as_fd()
    }

    /// Passes on what waits for stream `which`, when poll said our descriptor `writable` (or
    /// gone); false when our reader went away, and what waited is dropped.
    fn pass_on(&mut self, which: usize, writable: bool) -> bool {
        let relay = self.relays[which].as_mut().expect("relayed");
        let written = if writable {
            relay.write_some()
        } else {
            Err(Errno::EPIPE)
        };
        match written {
            Ok(Some(_)) if self.both_terminals => self.last_written = which,
            Ok(_) => {}
            Err(_) => {
                relay.pending.clear();
                return false;
            }
        }
        true
    }

    /// Passes on what still waits, as long as our reader keeps taking it within a few seconds.
    fn flush(&mut self) {
        for which in 0..2 {
            while self.waiting(which) {
                let mut fds = [PollFd::new(self.relay_to(which), PollFlags::POLLOUT)];
                let ready = nix::poll::poll(&mut fds, PollTimeout::from(5000u16));
                let writable = fds[0]
                    .revents()
                    .is_some_and(|revents| revents.contains(PollFlags::POLLOUT));
                if !matches!(ready, Ok(1..)) || !writable || !self.pass_on(which, true) {
                    break;
                }
            }
        }
    }

    /// The last byte passed on (to our stdout or stderr) was not a newline, or bytes are left.
    fn mid_line(&self) -> bool {
        self.relays[self.last_written]
            .as_ref()
            .is_some_and(|r| r.mid_line || !r.pending.is_empty())
    }
}

impl Streams {
    /// The pipe `which` (0 stdout, 1 stderr, 2 the report), if it is open.
    fn pipe(&self, which: usize) -> Option<BorrowedFd<'_>> {
        [&self.stdout, &self.stderr, &self.report][which]
            .as_ref()
            .map(AsFd::as_fd)
    }
}

/// Waits for our child `pid` to end, and returns its raw wait status.
pub(crate) fn reap(pid: libc::pid_t) -> i32 {
    let mut wait_status = 0;
    // SAFETY: reaping our own child.
    while unsafe { libc::waitpid(pid, &mut wait_status, 0) } < 0
        && crate::sys::errno() == libc::EINTR
    {}
    wait_status
}

/// Whether the report holds a line of `tag` (complete: a newline ends it).
fn reported(report: &[u8], tag: &[u8]) -> bool {
    let complete = report
        .iter()
        .rposition(|&byte| byte == b'\n')
        .map_or(&report[..0], |end| &report[..end]);
    complete.split(|&byte| byte == b'\n').any(|line| {
        line.strip_prefix(tag)
            .is_some_and(|rest| rest.is_empty() || rest[0] == b' ')
    })
}

/// Reads what is available into `buffer`: `Ok(0)` at end of file, `Err(EAGAIN)` when nothing
/// is ready.
fn read_some(fd: BorrowedFd<'_>, buffer: &mut [u8]) -> Result<usize, Errno> {
    loop {
        match nix::unistd::read(fd, buffer) {
            Err(Errno::EINTR) => continue,
            read => return read,
        }
    }
}
