//! The git reader, which answers the git tools. The workspace's `.git` is the sandbox's to write,
//! and git obeys much of what it finds there: filter and diff drivers, partial-clone fetches
//! through a remote's upload-pack, submodules with configs of their own, `core.worktree`, `.git`
//! files and alternates that point elsewhere. Switching each off from outside loses to a config
//! swapped between a check and git's own read, so whatever reads the repository is confined by the
//! kernel instead: `ask` asks the root's git reader: this binary run in the sandbox (its view holds
//! only the workspace and the system directories, so gix cannot even stat the host's files, and a
//! filter driver the repository names runs there, as it would under git), reading with gix
//! (`status`, `diff`) and keeping the repository open between calls, where a sandbox started for
//! each `git` would cost milliseconds a call. A process, so that one blocked on a FIFO or grown
//! huge can be stopped. It sees no config from outside the repository (as git in the sandbox sees
//! none). For a linked worktree it is also given the main repository to read, once the worktree's
//! pointers check out (`linked_worktree`).

use std::io::{BufRead, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use wait_timeout::ChildExt;

use crate::workspace::jail::{Confined, Roots};

const TIMEOUT_SECS: u64 = 60;

/// The workspace root, which must be the top of a repository: one with its own `.git`
/// directory, or a linked worktree (`git worktree add`) of a repository elsewhere, which the
/// reader is then given to read (see `linked_worktree`).
fn repository_top(roots: &Roots) -> Result<(Confined<'_>, Option<Linked>), String> {
    let confined = roots.confine(".").map_err(|err| err.0)?;
    match confined.root.join(".git").symlink_metadata() {
        Ok(meta) if meta.is_dir() => return Ok((confined, None)),
        Ok(meta) if meta.is_file() => {
            let roots: Vec<&Path> = roots.paths().collect();
            if let Some(linked) = linked_worktree(confined.root, &roots) {
                return Ok((confined, Some(linked)));
            }
        }
        _ => {}
    }
    Err(format!(
        "{} is not the top of a git repository (no .git directory in it, nor the .git file of \
         a linked worktree); the git tools work on a root that is, so start the server with \
         --root at the repository's top",
        confined.root.display()
    ))
}

/// Where a linked worktree's repository lives: its own git directory, and the common
/// directory it shares with the main worktree.
#[derive(Clone, PartialEq, Eq)]
struct Linked {
    git_dir: PathBuf,
    common: PathBuf,
}

/// The repository `root` is a linked worktree of, when `root/.git` is such a worktree's file
/// (`gitdir: G`) and all of it checks out:
/// - G is written as its own canonical absolute path (no `..`, link or `/proc/self`, which
///   would resolve elsewhere in the reader's sandbox), and lies in none of the roots (their
///   content is the workspace's to write);
/// - G's `gitdir` file names `root/.git` back;
/// - G is `C/worktrees/NAME` under the common directory C its `commondir` file names, which
///   holds a repository (`objects/`, `refs/`) and no root.
///
/// Code in the workspace can rewrite `.git` but not what lies outside the roots, so no other
/// directory passes; the reader then opens G itself, never following `.git` again. Every
/// failure looks alike, so the answer tells nothing of the host's files.
fn linked_worktree(root: &Path, roots: &[&Path]) -> Option<Linked> {
    let pointer = read_small(&root.join(".git"))?;
    let named = Path::new(pointer.strip_prefix("gitdir:")?.trim());
    let git_dir = std::fs::canonicalize(named).ok()?;
    if git_dir != named || roots.iter().any(|root| git_dir.starts_with(root)) {
        return None;
    }
    let back = read_small(&git_dir.join("gitdir"))?;
    if std::fs::canonicalize(git_dir.join(back.trim())).ok()? != root.join(".git") {
        return None;
    }
    let common = read_small(&git_dir.join("commondir"))?;
    let common = std::fs::canonicalize(git_dir.join(common.trim())).ok()?;
    if git_dir.parent()? != common.join("worktrees")
        || roots.iter().any(|root| root.starts_with(&common))
        || !common.join("objects").is_dir()
        || !common.join("refs").is_dir()
    {
        return None;
    }
    Some(Linked { git_dir, common })
}

/// A small regular file's text, read without following a final symlink or waiting on a FIFO.
fn read_small(path: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text).ok()?;
    Some(text)
}

/// Asks the root's git reader `request` and returns its answer. The reader is this binary run
/// in the sandbox at the root (`autocoder git-reader`), keeping the repository open between
/// requests. Each root has one, which takes one call at a time (a status takes a millisecond;
/// a reader per call in a burst would be a sandbox per call); others wait their turn (60 s at
/// most, and while not cancelled), and beyond MAX_WAITING of them a call is refused at once
/// rather than hold a worker. One that does not answer in time, or whose call is cancelled, is
/// stopped: a FIFO where gix expects a file blocks it for good.
/// `cancelled` says whether the caller gave up.
pub(crate) fn ask(
    roots: &Roots,
    cancelled: &dyn Fn() -> bool,
    request: &str,
    arguments: &Value,
) -> Result<Value, String> {
    let (confined, linked) = repository_top(roots)?;
    let root_dir = confined.root_fd;
    let inode = std::fs::File::from(root_dir.try_clone_to_owned().map_err(cannot_read)?)
        .metadata()
        .map(|meta| (meta.dev(), meta.ino()))
        .map_err(cannot_read)?;
    let (turns, evicted) = {
        let mut slots = READERS.lock().unwrap_or_else(PoisonError::into_inner);
        let at = slots.iter().position(|slot| {
            slot.root == confined.root && slot.inode == inode && slot.linked == linked
        });
        // The slot goes to the end: the first is the root used longest ago, which makes room
        // for a new one (it may be a root no longer served). Its reader is stopped once the
        // lock is released, or when the call using it is done.
        let (slot, evicted) = match at {
            Some(at) => (slots.remove(at), None),
            None => {
                let evicted = (slots.len() >= MAX_READERS).then(|| slots.remove(0));
                let slot = ReaderSlot {
                    root: confined.root.to_path_buf(),
                    inode,
                    linked: linked.clone(),
                    turns: Arc::default(),
                };
                (slot, evicted)
            }
        };
        let turns = Arc::clone(&slot.turns);
        slots.push(slot);
        (turns, evicted)
    };
    drop(evicted);
    let mut turn = turns.take(cancelled)?;
    // One that ended meanwhile (its sandbox's time limit, say), or that has something to say
    // nobody asked for, is replaced.
    let mut reader = match turn
        .reader
        .take()
        .and_then(|mut reader| reader.is_ready().then_some(reader))
    {
        Some(reader) => reader,
        None => Reader::start(&confined, linked.as_ref())?,
    };
    let deadline = Instant::now() + Duration::from_secs(TIMEOUT_SECS);
    let answer = reader.ask(request, arguments, cancelled, deadline)?;
    turn.reader = Some(reader);
    answer
}

fn cannot_read(err: std::io::Error) -> String {
    format!("cannot read the workspace root: {err}")
}

/// Roots with a reader at most.
const MAX_READERS: usize = 8;
/// Calls waiting for a root's reader at most, besides the one it is answering: half the
/// server's workers, so that a reader that hangs leaves the other tools room.
const MAX_WAITING: usize = 16;
/// An answer larger than this is refused (the tools cap what they list far below it).
const MAX_ANSWER: usize = 64 << 20;

/// The roots' readers, the root used longest ago first.
static READERS: Mutex<Vec<ReaderSlot>> = Mutex::new(Vec::new());

struct ReaderSlot {
    root: PathBuf,
    /// The root directory's device and inode: a new directory at the same path gets its own.
    inode: (u64, u64),
    /// The repository the root is a linked worktree of, which the reader may read.
    linked: Option<Linked>,
    turns: Arc<Turns>,
}

/// One root's reader, and whose turn it is.
#[derive(Default)]
struct Turns {
    state: Mutex<TurnState>,
    free: Condvar,
}

#[derive(Default)]
struct TurnState {
    busy: bool,
    waiting: usize,
    /// None until the first call, while a call has it, and after one that failed.
    reader: Option<Reader>,
}

/// A call's turn with the reader; handed back (with the reader, if it is still fit) on drop.
struct Turn<'a> {
    turns: &'a Turns,
    reader: Option<Reader>,
}

impl Turns {
    /// Waits for the reader to be free, while the call is not cancelled.
    fn take(&self, cancelled: &dyn Fn() -> bool) -> Result<Turn<'_>, String> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.busy {
            if state.waiting >= MAX_WAITING {
                return Err(String::from(
                    "the git reader for this root is busy with other calls; try again shortly",
                ));
            }
            state.waiting += 1;
            let deadline = Instant::now() + Duration::from_secs(TIMEOUT_SECS);
            while state.busy && !cancelled() && Instant::now() < deadline {
                state = self
                    .free
                    .wait_timeout(state, Duration::from_millis(100))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            state.waiting -= 1;
            if cancelled() {
                return Err(String::from("cancelled"));
            }
            if state.busy {
                return Err(format!(
                    "the git reader for this root has been busy with another call for \
                     {TIMEOUT_SECS} s; try again"
                ));
            }
        }
        state.busy = true;
        Ok(Turn {
            turns: self,
            reader: state.reader.take(),
        })
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut state = self
            .turns
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.busy = false;
        state.reader = self.reader.take();
        drop(state);
        self.turns.free.notify_one();
    }
}

/// A running `autocoder git-reader`.
struct Reader {
    process: Child,
    requests: ChildStdin,
    answers: ChildStdout,
    /// The end of what the reader and its sandbox said on stderr, to explain a failure.
    said: Arc<Mutex<Vec<u8>>>,
}

/// What is kept of a reader's stderr.
const SAID_KEPT: usize = 4 << 10;

impl Reader {
    /// Starts `autocoder git-reader` in the sandbox, at the root, with our own executable
    /// readable there: the sandbox's view holds nothing of the host's beyond the workspace and
    /// the system directories, so not even whether a file exists there can be learned through
    /// what gix is made to look up. Its output is passed through as it comes (`--stream`).
    fn start(confined: &Confined, linked: Option<&Linked>) -> Result<Reader, String> {
        let exe = own_executable()?;
        let mut readable = vec!["--ro".to_string(), exe.clone()];
        let mut reader = vec![exe.clone(), "git-reader".to_string()];
        if let Some(linked) = linked {
            let text = |path: &Path| {
                path.to_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("the repository's path {path:?} is not UTF-8"))
            };
            readable.extend(["--ro".to_string(), text(&linked.common)?]);
            reader.extend(["--git-dir".to_string(), text(&linked.git_dir)?]);
        }
        let mut process = crate::sandbox::reexec::own_command(confined.root_fd.as_raw_fd())?
            .args([
                "sandbox",
                "--workspace",
                ".",
                "--stream",
                "--result",
                "/dev/null",
            ])
            .args(["--timeout", "24h", "--memory", "2G"])
            .args(&readable)
            .arg("--")
            .args(&reader)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| format!("cannot start the git reader: {err}"))?;
        // Drained all along, so that a chatty filter never blocks the reader on a full pipe.
        let said = Arc::new(Mutex::new(Vec::new()));
        let mut stderr = process.stderr.take().expect("piped");
        let tail = Arc::clone(&said);
        std::thread::spawn(move || {
            let mut chunk = [0; 4096];
            while let Ok(read @ 1..) = stderr.read(&mut chunk) {
                let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                tail.extend_from_slice(&chunk[..read]);
                let excess = tail.len().saturating_sub(SAID_KEPT);
                tail.drain(..excess);
            }
        });
        Ok(Reader {
            requests: process.stdin.take().expect("piped"),
            answers: process.stdout.take().expect("piped"),
            process,
            said,
        })
    }

    /// Running, and with nothing on its stdout: an answer that comes unasked (written there by
    /// a program the repository had gix start) would be taken for the next one.
    fn is_ready(&mut self) -> bool {
        matches!(self.process.try_wait(), Ok(None)) && !self.has_output(0)
    }

    fn has_output(&self, wait_ms: i32) -> bool {
        use nix::poll::{PollFd, PollFlags, PollTimeout};
        let mut ready = [PollFd::new(self.answers.as_fd(), PollFlags::POLLIN)];
        let wait = PollTimeout::try_from(wait_ms).unwrap_or(PollTimeout::NONE);
        nix::poll::poll(&mut ready, wait).is_ok_and(|count| count > 0)
    }

    /// Sends `request` with a fresh id and its arguments and returns its answer (what was asked
    /// for, or the error the reader found), read before `deadline` and while the call is not
    /// cancelled. The outer error means the reader is not to be used again: it stopped, was
    /// stopped, or answered anything but one line that carries the id (out of step).
    fn ask(
        &mut self,
        request: &str,
        arguments: &Value,
        cancelled: &dyn Fn() -> bool,
        deadline: Instant,
    ) -> Result<Result<Value, String>, String> {
        let mut id = [0u8; 16];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut random| random.read_exact(&mut id))
            .map_err(|err| format!("cannot draw a request id from the kernel: {err}"))?;
        let id: String = id.iter().map(|byte| format!("{byte:02x}")).collect();
        self.requests
            .write_all(format!("{request} {id} {arguments}\n").as_bytes())
            .map_err(|_| self.stopped())?;
        let mut line = Vec::new();
        let mut chunk = [0; 16 << 10];
        loop {
            if self.has_output(100) {
                let read = match self.answers.read(&mut chunk) {
                    Ok(0) => return Err(self.stopped()),
                    Ok(read) => read,
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => 0,
                    Err(_) => return Err(self.stopped()),
                };
                line.extend_from_slice(&chunk[..read]);
                if let Some(end) = memchr::memchr(b'\n', &line) {
                    if end + 1 != line.len() {
                        return Err(out_of_step());
                    }
                    line.truncate(end);
                    break;
                }
                if line.len() > MAX_ANSWER {
                    return Err(String::from("git's answer is too large to show"));
                }
            }
            if cancelled() {
                return Err(String::from("cancelled"));
            }
            if Instant::now() > deadline {
                return Err(format!("git took longer than {TIMEOUT_SECS} s; stopped"));
            }
        }
        let mut answer: Value = serde_json::from_slice(&line).map_err(|_| out_of_step())?;
        if answer.get("id").and_then(Value::as_str) != Some(id.as_str()) {
            return Err(out_of_step());
        }
        Ok(match answer.get("error").and_then(Value::as_str) {
            Some(error) => Err(String::from(error)),
            None => Ok(answer.get_mut("ok").map(Value::take).unwrap_or_default()),
        })
    }

    /// The error for a reader that ended, with the end of what it said.
    fn stopped(&mut self) -> String {
        let _ = self.process.wait();
        let said = self.said.lock().unwrap_or_else(PoisonError::into_inner);
        let said = String::from_utf8_lossy(&said);
        let said = said.trim();
        if said.is_empty() {
            String::from("the git reader stopped unexpectedly; try again")
        } else {
            format!("the git reader stopped: {said}")
        }
    }
}

fn out_of_step() -> String {
    String::from(
        "the git reader's answer was not the one asked for (something in the workspace wrote to \
         it); try again",
    )
}

/// This executable's path, for the sandbox to run it. Replaced since the server started (a
/// rebuild, an upgrade), the path leads to the new one.
fn own_executable() -> Result<String, String> {
    let exe =
        std::env::current_exe().map_err(|err| format!("cannot find autocoder itself: {err}"))?;
    let exe = exe
        .to_str()
        .ok_or_else(|| format!("autocoder's own path {exe:?} is not UTF-8"))?;
    let exe = exe.strip_suffix(" (deleted)").unwrap_or(exe);
    if !Path::new(exe).is_file() {
        return Err(format!(
            "autocoder's executable {exe} was removed since the server started; restart it"
        ));
    }
    Ok(exe.to_string())
}

impl Drop for Reader {
    /// Stops the reader: on SIGTERM the sandbox ends what it started and removes its cgroups;
    /// one that does not go within 2 s is killed.
    fn drop(&mut self) {
        if !matches!(self.process.try_wait(), Ok(None)) {
            return;
        }
        // Our own child, not yet reaped (try_wait just said so).
        let pid = nix::unistd::Pid::from_raw(self.process.id() as libc::pid_t);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        if !matches!(
            self.process.wait_timeout(Duration::from_secs(2)),
            Ok(Some(_))
        ) {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}

/// `autocoder git-reader`, run in the sandbox at the root: answers each request on stdin
/// (`NAME ID ARGUMENTS`, the arguments one line of JSON) with one line of JSON, `{"id": ID,
/// "ok": ...}` or `{"id": ID, "error": ...}`, until stdin ends. Requests: `status`
/// (`git_status`'s output) and `diff` (`git_diff`'s, for its input).
pub(crate) fn serve_reader(git_dir: Option<PathBuf>) -> Result<(), String> {
    // Not dumpable: a program gix starts for the repository (a filter) cannot reach this
    // process's stdin or stdout through /proc to ask or answer in its name.
    let _ = nix::sys::prctl::set_dumpable(false);
    let root = std::env::current_dir().map_err(|err| format!("no current directory: {err}"))?;
    let mut state = ReaderState {
        root,
        git_dir,
        opened: None,
    };
    let mut out = std::io::stdout().lock();
    for request in std::io::stdin().lock().lines() {
        let request = request.map_err(|err| format!("cannot read a request: {err}"))?;
        let mut parts = request.splitn(3, ' ');
        let (request, id) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        let arguments = parts.next().unwrap_or("{}");
        let answer = match request {
            "status" => state
                .repository()
                .and_then(super::status::status)
                .map(|status| serde_json::json!({ "id": id, "ok": status })),
            "diff" => serde_json::from_str(arguments)
                .map_err(|err| format!("unreadable diff arguments: {err}"))
                .and_then(|request| super::diff::diff(state.repository()?, request))
                .map(|diff| serde_json::json!({ "id": id, "ok": diff })),
            other => Err(format!("unknown request {other:?}")),
        };
        let answer = answer.unwrap_or_else(|err| serde_json::json!({ "id": id, "error": err }));
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
    /// A linked worktree's own git directory, opened as it is (`--git-dir`).
    git_dir: Option<PathBuf>,
    opened: Option<(Stamp, gix::Repository)>,
}

impl ReaderState {
    fn repository(&mut self) -> Result<&gix::Repository, String> {
        let git_dir = self
            .git_dir
            .clone()
            .unwrap_or_else(|| self.root.join(".git"));
        let stamp = Stamp::of(&git_dir)
            .ok_or_else(|| format!("{} is not a git repository", self.root.display()))?;
        let opened = match self.opened.take() {
            Some((was, repo)) if was == stamp => (was, repo),
            _ => (stamp, open(&git_dir)?),
        };
        Ok(&self.opened.insert(opened).1)
    }
}

/// Which git directory, and which version of its config file and `commondir` (a file
/// `[include]`d from the config is not watched: a change there takes effect when the config
/// itself next changes). A linked worktree's config is in the common directory its
/// `commondir` names.
#[derive(PartialEq, Eq)]
struct Stamp {
    git_dir: (u64, u64),
    config: Option<FileVersion>,
    common_dir: Option<FileVersion>,
}

/// A file's inode, times and size.
type FileVersion = (u64, i64, i64, i64, i64, u64);

impl Stamp {
    fn of(git_dir: &Path) -> Option<Stamp> {
        let entry = std::fs::symlink_metadata(git_dir).ok()?;
        if !entry.is_dir() {
            return None;
        }
        // Links are followed (to the file whose edits matter): this runs in the reader, in
        // the sandbox.
        let version = |path: &Path| {
            std::fs::metadata(path).ok().map(|meta| {
                (
                    meta.ino(),
                    meta.mtime(),
                    meta.mtime_nsec(),
                    meta.ctime(),
                    meta.ctime_nsec(),
                    meta.size(),
                )
            })
        };
        let common = read_small(&git_dir.join("commondir")).map_or_else(
            || git_dir.to_path_buf(),
            |common| git_dir.join(common.trim()),
        );
        Some(Stamp {
            git_dir: (entry.dev(), entry.ino()),
            config: version(&common.join("config")),
            common_dir: version(&git_dir.join("commondir")),
        })
    }
}

/// How the reader looks at submodules' checkouts: for a commit moved, not for changes inside
/// (git's `--ignore-submodules=dirty`). In a linked worktree not at all: the reader can read
/// the main repository there, and a submodule's `.git` the workspace rewrote would have gix
/// open it (or a repository made to borrow its refs) and tell what its refs hold.
pub(crate) fn submodules(repo: &gix::Repository) -> gix::status::Submodule {
    let ignore = if repo.git_dir() == repo.common_dir() {
        gix::submodule::config::Ignore::Dirty
    } else {
        gix::submodule::config::Ignore::All
    };
    gix::status::Submodule::Given {
        ignore,
        check_dirty: false,
    }
}

/// Opens the repository in `git_dir` with no configuration from outside it (no system, global or
/// environment settings, as git in the sandbox sees none), trusting its own: whatever it makes
/// gix do happens in the sandbox.
fn open(git_dir: &Path) -> Result<gix::Repository, String> {
    let options = gix::open::Options::isolated().with(gix::sec::Trust::Full);
    gix::open_opts(git_dir, options).map_err(|err| {
        format!(
            "cannot open the repository at {} (the git tools see nothing outside it): {err}",
            git_dir.display()
        )
    })
}
