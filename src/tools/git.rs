//! Git for the tools. The workspace's `.git` is the sandbox's to write, and git obeys much of
//! what it finds there: filter and diff drivers, partial-clone fetches through a remote's
//! upload-pack, submodules with configs of their own, `core.worktree`, `.git` files and
//! alternates that point elsewhere. Switching each off from outside loses to a config swapped
//! between a check and git's own read, so whatever reads the repository is confined by the
//! kernel instead:
//! - `read_confined` runs gix in-process on the root's reader thread, which Landlock lets read
//!   beneath the workspace and nothing else (no writes, no programs, no network), and which
//!   keeps the repository open between calls; so `git_status` answers in well under a
//!   millisecond where a sandboxed `git` takes several. The repository is opened with reduced
//!   trust, so gix uses no filter driver from it, and with no config from outside it.
//! - `run` runs the git CLI in the sandbox, where anything it starts can touch only the
//!   workspace and no network; the settings that start programs are switched off as well, so
//!   that the answer is git's own.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::run_command::in_sandbox;
use super::{Call, Context};
use crate::forge::git::SAFE_CONFIG;
use crate::sandbox::native::fs_rules::FsRules;
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

/// Runs `read` on the workspace's repository on the root's reader thread, which can read only
/// beneath the workspace, and returns what `read` made of it. `read` is handed the flag that asks
/// gix to stop: it is raised when the call is cancelled or runs past the time limit.
pub fn read_confined<T: Send + 'static>(
    context: &Context,
    call: &Call,
    read: impl FnOnce(&gix::Repository, Arc<AtomicBool>) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let confined = repository_top(context)?;
    let interrupt = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = mpsc::channel();
    let job_interrupt = Arc::clone(&interrupt);
    submit(
        &confined,
        Box::new(move |reader: &mut Reader| {
            let result = reader
                .repository()
                .and_then(|repo| read(repo, job_interrupt));
            let _ = sender.send(result);
        }),
    )?;
    let deadline = Instant::now() + Duration::from_secs(TIMEOUT_SECS);
    let mut timed_out = false;
    loop {
        match receiver.recv_timeout(Duration::from_millis(100)) {
            Ok(Err(_)) if timed_out => {
                return Err(tool_error(format!(
                    "git took longer than {TIMEOUT_SECS} s; stopped"
                )))
            }
            Ok(result) => return result,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                timed_out |= Instant::now() > deadline;
                if timed_out || call.is_cancelled() {
                    interrupt.store(true, Ordering::SeqCst);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(tool_error("reading the repository failed unexpectedly"))
            }
        }
    }
}

type Job = Box<dyn FnOnce(&mut Reader) + Send>;

/// The reader threads, one per root directory, each taking jobs in turn.
static READERS: Mutex<Vec<ReaderThread>> = Mutex::new(Vec::new());

struct ReaderThread {
    root: PathBuf,
    /// The directory's device and inode: a new directory at the same path gets its own thread.
    inode: (u64, u64),
    jobs: mpsc::Sender<Job>,
}

/// Hands `job` to the root's reader thread, starting one if there is none (or it has died).
fn submit(confined: &Confined, mut job: Job) -> Result<(), ToolError> {
    let root = confined.root;
    // SAFETY: `confined` borrows the roots, which keep the descriptor open meanwhile.
    let root_dir = unsafe { BorrowedFd::borrow_raw(confined.root_fd) };
    let cannot_read =
        |err: std::io::Error| tool_error(format!("cannot read {}: {err}", root.display()));
    let directory = std::fs::File::from(root_dir.try_clone_to_owned().map_err(cannot_read)?);
    let inode = directory
        .metadata()
        .map(|meta| (meta.dev(), meta.ino()))
        .map_err(cannot_read)?;
    let mut readers = READERS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(at) = readers
        .iter()
        .position(|reader| reader.root == root && reader.inode == inode)
    {
        match readers[at].jobs.send(job) {
            Ok(()) => return Ok(()),
            Err(mpsc::SendError(returned)) => {
                readers.swap_remove(at);
                job = returned;
            }
        }
    }
    let jobs = start_reader(root, directory.into())?;
    let _ = jobs.send(job);
    readers.push(ReaderThread {
        root: root.to_path_buf(),
        inode,
        jobs,
    });
    Ok(())
}

/// Starts a thread that Landlock lets read beneath `root_dir` and nothing else, and that runs
/// the jobs sent to it in turn.
fn start_reader(root: &Path, root_dir: OwnedFd) -> Result<mpsc::Sender<Job>, ToolError> {
    let (jobs, queue) = mpsc::channel::<Job>();
    let (confined, was_confined) = mpsc::channel();
    let root = root.to_path_buf();
    std::thread::Builder::new()
        .name("git reader".into())
        .spawn(move || {
            let result = FsRules::restrict_thread_to_reading(root_dir.as_fd());
            drop(root_dir);
            let restricted = result.is_ok();
            let _ = confined.send(result);
            if restricted {
                let mut reader = Reader { root, opened: None };
                for job in queue {
                    job(&mut reader);
                }
            }
        })
        .map_err(|err| tool_error(format!("cannot start a thread: {err}")))?;
    match was_confined.recv() {
        Ok(Ok(())) => Ok(jobs),
        Ok(Err(err)) => Err(tool_error(format!(
            "cannot confine the repository read: {err}"
        ))),
        Err(_) => Err(tool_error("the repository reader stopped unexpectedly")),
    }
}

/// A reader thread's state: the repository it opened last and what its `.git` and config file
/// looked like just before. Opening (config, refs, ownership) costs more than a small
/// repository's status, so it is reused while they are unchanged; refs, the index and objects
/// are read afresh by gix anyway.
struct Reader {
    root: PathBuf,
    opened: Option<(Stamp, gix::Repository)>,
}

impl Reader {
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
/// environment settings, as git in the sandbox sees none) and with reduced trust in its own.
fn open(root: &Path) -> Result<gix::Repository, ToolError> {
    let options = gix::open::Options::isolated().with(gix::sec::Trust::Reduced);
    gix::open_opts(root, options).map_err(|err| {
        tool_error(format!(
            "cannot open the repository at {} (the git tools read nothing outside it): {err}",
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
