//! Git for the tools. The workspace's `.git` is the sandbox's to write, and git obeys much of
//! what it finds there: filter and diff drivers, partial-clone fetches through a remote's
//! upload-pack, submodules with configs of their own, `core.worktree`, `.git` files and
//! alternates that point elsewhere. Switching each off from outside loses to a config swapped
//! between a check and git's own read, so whatever reads the repository is confined by the
//! kernel instead:
//! - `ask_reader` asks the root's git reader: this binary run in the sandbox (its view holds
//!   only the workspace and the system directories, so gix cannot even stat the host's files,
//!   and a filter driver the repository names runs there, as it would under git), reading with
//!   gix and keeping the repository open between calls; so `git_status` answers in well under a
//!   millisecond where a sandbox started for each `git` takes several. A process, so that one
//!   blocked on a FIFO or grown huge can be stopped. It sees no config from outside the
//!   repository (as git in the sandbox sees none).
//! - `run` runs the git CLI in the sandbox, where anything it starts can touch only the
//!   workspace and no network; the settings that start programs are switched off as well, so
//!   that the answer is git's own.

use std::io::{BufRead, Read, Write};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::run_command::{self, in_sandbox};
use super::{Call, Context};
use crate::forge::git::SAFE_CONFIG;
use crate::workspace::jail::{tool_error, Confined, ToolError};

/// git's output read at most (the tools cut what they show far below this).
const MAX_OUTPUT: &str = "8M";
const TIMEOUT_SECS: u64 = 60;

/// The workspace root, which must be the top of a repository.
fn repository_top<'a>(context: &'a Context) -> Result<Confined<'a>, ToolError> {
    let confined = context.roots.confine(".")?;
    if !confined
        .root
        .join(".git")
        .symlink_metadata()
        .is_ok_and(|meta| meta.is_dir())
    {
        return Err(tool_error(format!(
            "{} is not the top of a git repository (no .git directory in it); the git tools work \
             on a root that is, so start the server with --root at the repository's top",
            confined.root.display()
        )));
    }
    Ok(confined)
}

/// Asks the root's git reader `request` and returns its answer. The reader is this binary run
/// in the sandbox at the root (`autocoder git-reader`), keeping the repository open between
/// requests; idle readers wait for the next call. One that does not answer in time, or whose
/// call is cancelled, is stopped: a FIFO where gix expects a file blocks it for good.
pub fn ask_reader(context: &Context, call: &Call, request: &str) -> Result<Value, ToolError> {
    let confined = repository_top(context)?;
    // SAFETY: `confined` borrows the roots, which keep the descriptor open meanwhile.
    let root_dir = unsafe { BorrowedFd::borrow_raw(confined.root_fd) };
    let inode = std::fs::File::from(root_dir.try_clone_to_owned().map_err(cannot_read)?)
        .metadata()
        .map(|meta| (meta.dev(), meta.ino()))
        .map_err(cannot_read)?;
    let idle = {
        let mut idle = IDLE_READERS.lock().unwrap_or_else(PoisonError::into_inner);
        let at = idle
            .iter()
            .position(|reader| reader.root == confined.root && reader.inode == inode);
        at.map(|at| idle.remove(at))
    };
    // One that ended meanwhile (its sandbox's time limit, say) is replaced.
    let mut reader = match idle.and_then(|mut reader| reader.is_running().then_some(reader)) {
        Some(reader) => reader,
        None => Reader::start(&confined, inode)?,
    };
    let answer = reader.ask(request, call)?;
    // The reader used longest ago makes room (it may be for a root no longer served); it is
    // stopped once the lock is released.
    let _evicted = {
        let mut idle = IDLE_READERS.lock().unwrap_or_else(PoisonError::into_inner);
        let evicted = (idle.len() >= MAX_IDLE_READERS).then(|| idle.remove(0));
        idle.push(reader);
        evicted
    };
    let mut answer: Value = serde_json::from_slice(&answer)
        .map_err(|err| tool_error(format!("the git reader answered nonsense: {err}")))?;
    match answer.get("error").and_then(Value::as_str) {
        Some(error) => Err(tool_error(error)),
        None => Ok(answer.get_mut("ok").map(Value::take).unwrap_or_default()),
    }
}

fn cannot_read(err: std::io::Error) -> ToolError {
    tool_error(format!("cannot read the workspace root: {err}"))
}

/// Readers kept waiting for a call at most (more than one per root when calls overlap).
const MAX_IDLE_READERS: usize = 8;
/// An answer larger than this is refused (the tools cap what they list far below it).
const MAX_ANSWER: usize = 64 << 20;

static IDLE_READERS: Mutex<Vec<Reader>> = Mutex::new(Vec::new());

/// A running `autocoder git-reader` and the root it reads.
struct Reader {
    root: PathBuf,
    /// The root directory's device and inode: a new directory at the same path gets its own.
    inode: (u64, u64),
    process: Child,
    requests: ChildStdin,
    answers: ChildStdout,
}

impl Reader {
    /// Starts `autocoder git-reader` in the sandbox, at the root, with our own executable
    /// readable there: the sandbox's view holds nothing of the host's beyond the workspace and
    /// the system directories, so not even whether a file exists there can be learned through
    /// what gix is made to look up. Its output is passed through as it comes (`--stream`).
    fn start(confined: &Confined, inode: (u64, u64)) -> Result<Reader, ToolError> {
        let exe = std::env::current_exe()
            .map_err(|err| tool_error(format!("cannot find autocoder itself: {err}")))?;
        let exe = exe
            .to_str()
            .ok_or_else(|| tool_error(format!("autocoder's own path {exe:?} is not UTF-8")))?;
        let mut process = run_command::self_command(confined.root_fd, libc::SIGTERM)?
            .args([
                "sandbox",
                "--workspace",
                ".",
                "--stream",
                "--result",
                "/dev/null",
            ])
            .args([
                "--timeout",
                "24h",
                "--memory",
                "2G",
                "--pids",
                "8",
                "--ro",
                exe,
            ])
            .args(["--", exe, "git-reader"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|err| tool_error(format!("cannot start the git reader: {err}")))?;
        Ok(Reader {
            root: confined.root.to_path_buf(),
            inode,
            requests: process.stdin.take().expect("piped"),
            answers: process.stdout.take().expect("piped"),
            process,
        })
    }

    fn is_running(&mut self) -> bool {
        matches!(self.process.try_wait(), Ok(None))
    }

    /// Sends one request and reads its one-line answer, within the time limit and while the call
    /// is not cancelled.
    fn ask(&mut self, request: &str, call: &Call) -> Result<Vec<u8>, ToolError> {
        let stopped =
            || tool_error("the git reader stopped unexpectedly (see the server's log); try again");
        self.requests
            .write_all(format!("{request}\n").as_bytes())
            .map_err(|_| stopped())?;
        let deadline = Instant::now() + Duration::from_secs(TIMEOUT_SECS);
        let mut answer = Vec::new();
        let mut chunk = [0; 16 << 10];
        loop {
            let mut ready = libc::pollfd {
                fd: self.answers.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut ready, 1, 100) } > 0 {
                let read = match self.answers.read(&mut chunk) {
                    Ok(0) => return Err(stopped()),
                    Ok(read) => read,
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => 0,
                    Err(_) => return Err(stopped()),
                };
                if let Some(end) = memchr::memchr(b'\n', &chunk[..read]) {
                    answer.extend_from_slice(&chunk[..end]);
                    return Ok(answer);
                }
                answer.extend_from_slice(&chunk[..read]);
                if answer.len() > MAX_ANSWER {
                    return Err(tool_error("git's answer is too large to show"));
                }
            }
            if call.is_cancelled() {
                return Err(tool_error("cancelled"));
            }
            if Instant::now() > deadline {
                return Err(tool_error(format!(
                    "git took longer than {TIMEOUT_SECS} s; stopped"
                )));
            }
        }
    }
}

impl Drop for Reader {
    /// Stops the reader: on SIGTERM the sandbox ends what it started and removes its cgroups;
    /// one that does not go within 2 s is killed.
    fn drop(&mut self) {
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(self.process.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(2);
        while self.is_running() {
            if Instant::now() > deadline {
                let _ = self.process.kill();
                let _ = self.process.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// `autocoder git-reader`, run in the sandbox at the root: answers each request on stdin with
/// one line of JSON, `{"ok": ...}` or `{"error": ...}`, until stdin ends. Requests: `status`
/// (`git_status`'s output).
pub fn serve_reader() -> Result<(), String> {
    let root = std::env::current_dir().map_err(|err| format!("no current directory: {err}"))?;
    let mut state = ReaderState { root, opened: None };
    let mut out = std::io::stdout().lock();
    for request in std::io::stdin().lock().lines() {
        let request = request.map_err(|err| format!("cannot read a request: {err}"))?;
        let answer = match request.as_str() {
            "status" => state
                .repository()
                .and_then(super::git_status::status)
                .map(|status| serde_json::json!({ "ok": status })),
            other => Err(tool_error(format!("unknown request {other:?}"))),
        };
        let answer = answer.unwrap_or_else(|err| serde_json::json!({ "error": err.0 }));
        writeln!(out, "{answer}")
            .and_then(|()| out.flush())
            .map_err(|err| format!("cannot answer: {err}"))?;
    }
    Ok(())
}

/// A reader's state: the repository it opened last and what its `.git` and config file looked
/// like just before. Opening (config, refs, ownership) costs more than a small
/// repository's status, so it is reused while they are unchanged; refs, the index and objects
/// are read afresh by gix anyway.
struct ReaderState {
    root: PathBuf,
    opened: Option<(Stamp, gix::Repository)>,
}

impl ReaderState {
    fn repository(&mut self) -> Result<&gix::Repository, ToolError> {
        let stamp = Stamp::of(&self.root).ok_or_else(|| {
            tool_error(format!("{} is not a git repository", self.root.display()))
        })?;
        let opened = match self.opened.take() {
            Some((was, repo)) if was == stamp => (was, repo),
            _ => (stamp, open(&self.root)?),
        };
        Ok(&self.opened.insert(opened).1)
    }
}

/// Which `.git` directory, and which version of its config file (a file `[include]`d from it is
/// not watched: a change there takes effect when the config itself next changes).
#[derive(PartialEq, Eq)]
struct Stamp {
    git_dir: (u64, u64),
    config: Option<(u64, i64, i64, i64, i64, u64)>,
}

impl Stamp {
    fn of(root: &Path) -> Option<Stamp> {
        let git_dir = std::fs::symlink_metadata(root.join(".git")).ok()?;
        let config = std::fs::symlink_metadata(root.join(".git/config")).ok();
        Some(Stamp {
            git_dir: (git_dir.dev(), git_dir.ino()),
            config: config.map(|meta| {
                (
                    meta.ino(),
                    meta.mtime(),
                    meta.mtime_nsec(),
                    meta.ctime(),
                    meta.ctime_nsec(),
                    meta.size(),
                )
            }),
        })
    }
}

/// Opens the repository at `root` with no configuration from outside it (no system, global or
/// environment settings, as git in the sandbox sees none), trusting its own: whatever it makes
/// gix do happens in the sandbox.
fn open(root: &Path) -> Result<gix::Repository, ToolError> {
    let options = gix::open::Options::isolated().with(gix::sec::Trust::Full);
    gix::open_opts(root, options).map_err(|err| {
        tool_error(format!(
            "cannot open the repository at {} (the git tools see nothing outside it): {err}",
            root.display()
        ))
    })
}

/// Runs `git ARGS` in the sandbox at the workspace root, which must be the repository's top;
/// returns its stdout, or what git said as the error.
pub fn run(context: &Context, call: &Call, args: &[&str]) -> Result<String, ToolError> {
    let confined = repository_top(context)?;
    let root = confined.root.to_path_buf();
    let mut argv = vec!["git".to_string()];
    for setting in SAFE_CONFIG {
        argv.extend(["-c".to_string(), setting.to_string()]);
    }
    argv.extend(args.iter().map(|arg| arg.to_string()));
    let sandbox = in_sandbox(
        confined.root_fd,
        &[
            "--max-output",
            MAX_OUTPUT,
            "--env",
            "GIT_NO_LAZY_FETCH=1",
            "--env",
            "GIT_OPTIONAL_LOCKS=0",
            "--env",
            "GIT_LITERAL_PATHSPECS=1",
            "--env",
            "GIT_TERMINAL_PROMPT=0",
        ],
        argv,
        None,
        call,
        TIMEOUT_SECS,
    )?;
    let text = |key: &str| sandbox.get(key).and_then(Value::as_str).unwrap_or_default();
    if sandbox.get("exit_code").and_then(Value::as_i64) != Some(0) {
        let said = text("stderr").trim();
        return Err(if said.contains("not a git repository") {
            tool_error(format!("{} is not a git repository", root.display()))
        } else if sandbox.get("timed_out").and_then(Value::as_bool) == Some(true) {
            tool_error(format!("git took longer than {TIMEOUT_SECS} s; stopped"))
        } else {
            tool_error(format!(
                "git {} failed: {said}",
                args.first().unwrap_or(&"")
            ))
        });
    }
    if sandbox.get("stdout_truncated").and_then(Value::as_bool) == Some(true) {
        return Err(tool_error(format!(
            "git's answer passed {MAX_OUTPUT}B; ask about fewer paths"
        )));
    }
    Ok(text("stdout").to_string())
}
