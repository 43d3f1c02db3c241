//! Warm test runs: heal's offline engine tests hundreds of candidates; cold, each pays the
//! runner's start-up (most of a second with pytest, half of `node --test`'s time) though the
//! failing test takes milliseconds. Each run's output is read as a cold run's is.
//!
//! Python's runners (pytest, unittest): a worker, in the sandbox as a cold run would be,
//! imports the runner once (and, after a first run that learns them, the modules the tests
//! import from outside the project), then forks a process per run, which imports the project's
//! own modules from disk: each run sees the code as it is now. A worker that stops answering is
//! the caller's to drop, and to run cold instead.
//!
//! jest: a worker loads jest once and runs each request through jest's own in-band API, which
//! gives every test file a fresh module registry (`warm_worker.js`); vitest: the same worker
//! keeps one vitest instance (its config, Vite's server) and has the server transform the
//! project's files afresh each run, whose tests run in vitest's own pool. A candidate that
//! loops stops the worker (its reply does not come), and the caller runs cold from then on.
//!
//! `node --test`: Node has no fork, so nothing is kept warm; `warm_node` runs the file that
//! defines the failing tests as node's program, without the runner's own process.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout};
use serde::Deserialize;
use serde_json::json;

use super::warm_node::OneProcess;
use super::{policy_for, report_of, TestRequest};
use crate::error::Failure;
use crate::run_document::{Framework, TestReport};
use crate::sandbox::policy::{BackendKind, OutputMode, PolicyRequest};
use crate::sandbox::result::SandboxResult;
use crate::sandbox::supervise::TerminationSignals;

/// Python's worker, run with `python -c`.
const PYTHON_WORKER: &str = include_str!("warm_worker.py");
/// jest's and vitest's worker, run with `node -e`.
const JS_WORKER: &str = include_str!("warm_worker.js");

/// The time a worker has to import its runner and say it is ready.
const START_TIME: Duration = Duration::from_secs(60);

/// The time past a run's limit its reply may take (the worker kills the run at its limit).
const GRACE: Duration = Duration::from_secs(10);

/// Output kept per stream, as heal's cold runs keep.
const MAX_OUTPUT: u64 = 8 << 20;

/// Warm runs of one workspace's tests, started by `start`; a worker is stopped when dropped.
pub(crate) struct Warm {
    runs: Runs,
    /// Why a warm run would not give what a fresh process gives, if it would not.
    pub(crate) unsafe_reason: Option<String>,
    /// What `learn` found: the modules the tests import from outside the project (Python), the
    /// file that defines the failing tests (Node). `preload` gives it to another `Warm`.
    pub(crate) learnt: Vec<String>,
}

enum Runs {
    /// Python's runners, jest and vitest: a worker that has loaded the runner.
    Worker(Worker),
    /// `node --test`: one file's tests in one process.
    Node(OneProcess),
}

impl Warm {
    /// Starts warm runs for `request`'s framework (the runner's own command) in `request`'s
    /// sandbox, whose timeout is the worker's life. The caller has a single thread: Python's
    /// worker is run by a fork of it.
    pub(crate) fn start(request: TestRequest) -> Result<Warm, Failure> {
        let framework = request
            .framework
            .ok_or_else(|| Failure::usage("warm runs need the framework named"))?;
        if let Some(why) = Warm::cannot_run(framework, request.command.is_some()) {
            return Err(Failure::usage(why));
        }
        let (runs, unsafe_reason) = match framework {
            Framework::Node => (Runs::Node(OneProcess::new(request)?), None),
            _ => {
                let (worker, unsafe_reason) = Worker::start(framework, request)?;
                (Runs::Worker(worker), unsafe_reason)
            }
        };
        Ok(Warm {
            runs,
            unsafe_reason,
            learnt: Vec::new(),
        })
    }

    /// Why `framework`'s tests (run by a command given with --command: `given`) cannot run warm,
    /// if they cannot.
    pub(crate) fn cannot_run(framework: Framework, given: bool) -> Option<String> {
        if given {
            return Some("the tests run by a command given with --command".into());
        }
        match framework {
            Framework::Pytest
            | Framework::Unittest
            | Framework::Node
            | Framework::Jest
            | Framework::Vitest => None,
            other => Some(format!(
                "{} runs cold (pytest, unittest, node --test, jest and vitest run warm)",
                other.name()
            )),
        }
    }

    /// Runs `tests` (all when empty), cut at `limit`, as a cold run would, and reads the result.
    pub(crate) fn run(&self, tests: Vec<String>, limit: Duration) -> Result<TestReport, Failure> {
        match &self.runs {
            Runs::Worker(worker) => worker.ask(tests, limit, false).map(|(report, _)| report),
            Runs::Node(one) => one.run(tests, limit),
        }
    }

    /// As `run` (for Node, a cold run); then `learnt` and `unsafe_reason` say what it found.
    pub(crate) fn learn(
        &mut self,
        tests: Vec<String>,
        limit: Duration,
    ) -> Result<TestReport, Failure> {
        let (report, learnt) = match &mut self.runs {
            Runs::Worker(worker) => worker.ask(tests, limit, true)?,
            Runs::Node(one) => one.learn(tests, limit)?,
        };
        self.unsafe_reason = learnt.unsafe_reason;
        self.learnt = learnt.learnt;
        Ok(report)
    }

    /// Takes what another `Warm` learnt, as `learn` would have found it.
    pub(crate) fn preload(&mut self, learnt: &[String]) -> Result<(), Failure> {
        self.unsafe_reason = match &mut self.runs {
            Runs::Worker(worker) => worker.preload(learnt)?,
            Runs::Node(one) => one.preload(learnt),
        };
        self.learnt = learnt.to_vec();
        Ok(())
    }
}

/// A worker for one workspace (Python's runners, jest, vitest), in its own sandbox; stopped when
/// dropped.
struct Worker {
    framework: Framework,
    root: PathBuf,
    sandbox: PolicyRequest,
    caches_of: Option<PathBuf>,
    /// Where the runner's own arguments start in its command (after `python -m pytest`, after
    /// `jest`): what the worker is given for each run.
    arguments_at: usize,
    /// The process that runs the worker's sandbox (a fork of this one).
    supervisor: libc::pid_t,
    requests: File,
    replies: File,
}

/// What a run that learnt said.
pub(super) struct Learnt {
    pub(super) unsafe_reason: Option<String>,
    pub(super) learnt: Vec<String>,
}

/// What the worker says about a run.
#[derive(Deserialize)]
struct Reply {
    exit_code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    duration_ms: u64,
    stdout: String,
    stderr: String,
    stdout_truncated: bool,
    stderr_truncated: bool,
    #[serde(default, rename = "unsafe")]
    unsafe_reason: Option<String>,
    /// With `learn`: the modules imported.
    #[serde(default)]
    learnt: Vec<String>,
}

impl Worker {
    /// Starts a worker for `framework` (pytest, unittest, jest or vitest) in `request`'s
    /// sandbox, which bounds it as a whole; and why its runs would not give what a fresh process
    /// gives, if so.
    fn start(
        framework: Framework,
        request: TestRequest,
    ) -> Result<(Worker, Option<String>), Failure> {
        let root = request.sandbox.workspace.canonicalize().map_err(|err| {
            Failure::usage(format!("{}: {err}", request.sandbox.workspace.display()))
        })?;
        let (mut policy, command) = policy_for(framework, &request, &root)?;
        let (program, arguments_at) = match framework {
            Framework::Jest | Framework::Vitest => {
                let program = ["node", "-e", JS_WORKER, command[0].as_str()];
                (program.map(String::from).to_vec(), 1)
            }
            _ => {
                let module = framework.name();
                let module_at = command
                    .windows(2)
                    .position(|words| words[0] == "-m" && words[1] == module)
                    .ok_or_else(|| {
                        Failure::external(format!("`{}` runs no module", command.join(" ")))
                    })?;
                let interpreter = command[..module_at].iter().cloned();
                let worker = ["-c", PYTHON_WORKER, module].map(String::from);
                (interpreter.chain(worker).collect(), module_at + 2)
            }
        };
        policy.command = program.into_iter().map(Into::into).collect();
        policy.output = OutputMode::Stream;
        let (requests_read, requests_write) = crate::sandbox::native::pipe()?;
        let (replies_read, replies_write) = crate::sandbox::native::pipe()?;
        let null = File::options()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map_err(|err| Failure::external(format!("cannot open /dev/null: {err}")))?;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: the caller has a single thread (see above); the child leaves by `_exit`.
        let supervisor = match unsafe { libc::fork() } {
            0 => {
                // Ends with its parent, even killed (SIGKILL): the sandbox's run stops as on
                // Ctrl-C, and the worker with it.
                // SAFETY: prctl and getppid on this process only.
                unsafe {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                    if libc::getppid() != parent {
                        libc::_exit(1);
                    }
                }
                let ends = [requests_read.as_fd(), replies_write.as_fd(), null.as_fd()];
                for (fd, end) in ends.into_iter().enumerate() {
                    // SAFETY: dup2 onto the standard descriptors, which the sandbox passes on.
                    unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&end), fd as i32) };
                }
                let ran = crate::sandbox::run(&policy, BackendKind::Native).is_ok();
                // SAFETY: ends the fork at once, running no destructor of what it shares.
                unsafe { libc::_exit(if ran { 0 } else { 1 }) }
            }
            -1 => {
                return Err(Failure::external(format!(
                    "cannot start a warm worker: {}",
                    std::io::Error::last_os_error()
                )))
            }
            pid => pid,
        };
        let worker = Worker {
            framework,
            root,
            sandbox: request.sandbox,
            caches_of: request.caches_of,
            arguments_at,
            supervisor,
            requests: File::from(requests_write),
            replies: File::from(replies_read),
        };
        let ready: serde_json::Value = worker.reply(Instant::now() + START_TIME)?;
        if ready["ready"] != true {
            return Err(Failure::external(format!("the warm worker said {ready}")));
        }
        let unsafe_reason = ready["unsafe"].as_str().map(String::from);
        Ok((worker, unsafe_reason))
    }

    /// Imports `modules` (another worker's `learnt`) into the worker, as learning would have;
    /// and why forking from it would not give what a fresh process gives, if so.
    fn preload(&mut self, modules: &[String]) -> Result<Option<String>, Failure> {
        writeln!(&self.requests, "{}", json!({ "preload": modules }))
            .map_err(|err| Failure::external(format!("the warm worker is gone: {err}")))?;
        let reply: serde_json::Value = self.reply(Instant::now() + START_TIME)?;
        Ok(reply["unsafe"].as_str().map(String::from))
    }

    fn ask(
        &self,
        tests: Vec<String>,
        limit: Duration,
        learn: bool,
    ) -> Result<(TestReport, Learnt), Failure> {
        let request = TestRequest {
            framework: Some(self.framework),
            command: None,
            tests,
            sandbox: self.sandbox.clone(),
            caches_of: self.caches_of.clone(),
            progress: None,
        };
        // The command a cold run would run, with its reporter and cache.
        let (_, command) = policy_for(self.framework, &request, &self.root)?;
        let asked = json!({
            "argv": command[self.arguments_at..],
            "limit": limit.as_secs_f64(),
            "max_bytes": MAX_OUTPUT,
            "learn": learn,
        });
        writeln!(&self.requests, "{asked}")
            .map_err(|err| Failure::external(format!("the warm worker is gone: {err}")))?;
        let reply: Reply = self.reply(Instant::now() + limit + GRACE)?;
        let learnt = Learnt {
            unsafe_reason: reply.unsafe_reason,
            learnt: reply.learnt,
        };
        let result = SandboxResult {
            backend: BackendKind::Native,
            command: command.clone(),
            exit_code: reply.exit_code,
            signal: reply.signal,
            timed_out: reply.timed_out,
            interrupted: None,
            limit_hit: None,
            duration_ms: reply.duration_ms,
            stdout: Some(reply.stdout),
            stderr: Some(reply.stderr),
            stdout_truncated: reply.stdout_truncated,
            stderr_truncated: reply.stderr_truncated,
            layers: Default::default(),
            disk: None,
            quarantined: Vec::new(),
            stderr_mid_line: false,
        };
        let report = report_of(
            self.framework,
            &request,
            &self.root,
            (limit, command),
            result,
        )?;
        Ok((report, learnt))
    }

    /// The worker's next line, read by `deadline`. A termination signal (Ctrl-C) ends the wait
    /// and stops the worker; the signal is left pending, for the caller's next run to see.
    fn reply<T: serde::de::DeserializeOwned>(&self, deadline: Instant) -> Result<T, Failure> {
        let gone = |why: String| Failure::external(format!("the warm worker {why}"));
        let signals = TerminationSignals::block()?;
        let mut line = Vec::new();
        let mut buffer = vec![0; 64 * 1024];
        while !line.ends_with(b"\n") {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(gone("did not answer in time".into()));
            }
            let millis = left.as_millis().min(i32::MAX as u128) as i32;
            let mut fds = [
                PollFd::new(self.replies.as_fd(), PollFlags::POLLIN),
                PollFd::new(signals.as_fd(), PollFlags::POLLIN),
            ];
            let wait = PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX);
            match nix::poll::poll(&mut fds, wait) {
                Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
                Ok(_) => {}
                Err(errno) => return Err(gone(format!("cannot be read: {errno}"))),
            }
            if fds[1].any() == Some(true) {
                // SAFETY: our own child.
                unsafe { libc::kill(self.supervisor, libc::SIGTERM) };
                return Err(gone("was stopped by a signal".into()));
            }
            match (&self.replies).read(&mut buffer) {
                Ok(0) => return Err(gone("ended".into())),
                Ok(read) => line.extend_from_slice(&buffer[..read]),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => return Err(gone(format!("cannot be read: {err}"))),
            }
        }
        serde_json::from_slice(&line)
            .map_err(|err| gone(format!("said something unreadable: {err}")))
    }
}

impl Drop for Worker {
    /// Stops the worker's sandbox as a signal to a cold run would, and waits for it (a bounded
    /// time; then it is killed).
    fn drop(&mut self) {
        // SAFETY: our own child, signalled and reaped here only.
        unsafe { libc::kill(self.supervisor, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            let mut status = 0;
            // SAFETY: as above.
            let done = unsafe { libc::waitpid(self.supervisor, &mut status, libc::WNOHANG) };
            if done != 0 {
                return;
            }
            if Instant::now() >= until {
                // SAFETY: as above.
                unsafe {
                    libc::kill(self.supervisor, libc::SIGKILL);
                    libc::waitpid(self.supervisor, &mut status, 0);
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
