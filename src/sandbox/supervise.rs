//! Watching a started command: drain its output into bounded captures, collect the child's
//! report lines, enforce the wall-clock limit, and wait for it. One `poll` loop on a pidfd and
//! the pipes; no threads (the native backend forks, which wants a single-threaded parent).

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::capture::OutputCapture;

/// What happened while a command ran.
#[derive(Debug)]
pub struct Supervised {
    /// Lines the sandbox child wrote on its report pipe.
    pub report: Vec<String>,
    pub stdout: Option<OutputCapture>,
    pub stderr: Option<OutputCapture>,
    pub timed_out: bool,
    /// The raw wait status of the process we started.
    pub wait_status: i32,
    pub elapsed: Duration,
}

/// The pipes to read; `None` where the stream is not captured.
pub struct Streams {
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
    pub report: Option<OwnedFd>,
}

pub fn supervise(
    pid: libc::pid_t,
    pidfd: &OwnedFd,
    streams: Streams,
    max_output: u64,
    timeout: Duration,
    started: Instant,
    mut kill: impl FnMut(),
) -> Supervised {
    let deadline = started + timeout;
    let mut stdout = streams
        .stdout
        .as_ref()
        .map(|_| OutputCapture::new(max_output));
    let mut stderr = streams
        .stderr
        .as_ref()
        .map(|_| OutputCapture::new(max_output));
    let mut report = Vec::new();
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
    let mut buffer = vec![0u8; 64 * 1024];
    let mut consume = |which: usize, bytes: &[u8], report: &mut Vec<u8>| match which {
        0 => stdout.as_mut().map_or((), |c| c.push(bytes)),
        1 => stderr.as_mut().map_or((), |c| c.push(bytes)),
        _ => report.extend_from_slice(bytes),
    };
    let mut report_bytes = Vec::new();
    loop {
        let mut fds: Vec<libc::pollfd> = std::iter::once(pidfd.as_raw_fd())
            .chain(open.iter().map(|&(fd, _)| fd))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let wait_ms = if timed_out {
            -1
        } else {
            let left = deadline.saturating_duration_since(Instant::now());
            left.as_millis().min(i32::MAX as u128) as i32
                + i32::from(left.subsec_micros() % 1000 > 0)
        };
        // SAFETY: polling descriptors we own.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait_ms) };
        if ready == 0 && !timed_out && Instant::now() >= deadline {
            timed_out = true;
            kill();
            continue;
        }
        if ready < 0 {
            continue;
        }
        let mut closed = Vec::new();
        for (slot, pollfd) in fds.iter().enumerate().skip(1) {
            if pollfd.revents == 0 {
                continue;
            }
            let (fd, which) = open[slot - 1];
            match read_some(fd, &mut buffer) {
                Ok(0) => closed.push(fd),
                Ok(n) => consume(which, &buffer[..n], &mut report_bytes),
                Err(errno) if errno == libc::EAGAIN => {}
                Err(_) => closed.push(fd),
            }
        }
        open.retain(|(fd, _)| !closed.contains(fd));
        if fds[0].revents != 0 {
            break;
        }
    }
    // The process is gone; take what is still buffered in the pipes.
    for &(fd, which) in &open {
        while let Ok(n @ 1..) = read_some(fd, &mut buffer) {
            consume(which, &buffer[..n], &mut report_bytes);
        }
    }
    let mut wait_status = 0;
    // SAFETY: reaping our own child.
    while unsafe { libc::waitpid(pid, &mut wait_status, 0) } < 0
        && super::native::sys::errno() == libc::EINTR
    {}
    report.extend(
        String::from_utf8_lossy(&report_bytes)
            .lines()
            .map(str::to_string),
    );
    Supervised {
        report,
        stdout,
        stderr,
        timed_out,
        wait_status,
        elapsed: started.elapsed(),
    }
}

/// Reads what is available: `Ok(0)` at end of file, `Err(EAGAIN)` when nothing is ready.
fn read_some(fd: RawFd, buffer: &mut [u8]) -> Result<usize, i32> {
    loop {
        // SAFETY: reading into a valid buffer.
        let n = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let errno = super::native::sys::errno();
        if errno != libc::EINTR {
            return Err(errno);
        }
    }
}
