//! The test harness: a `Test` builder that runs the real `autocoder` binary in its own temp dir
//! with a scrubbed environment, and helpers to read its JSON.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
/// A command running autocoder, as the user `uid` when given (through setpriv, from a copy
/// of the binary put in `copy_into`, a directory that user can read), in no groups but its own.
pub(crate) fn autocoder_as(uid: Option<u32>, copy_into: &Path) -> Command {
    autocoder_as_member(uid, &[], copy_into)
}

/// `autocoder_as`, with the supplementary `groups` (the docker group, for one).
pub(crate) fn autocoder_as_member(uid: Option<u32>, groups: &[u32], copy_into: &Path) -> Command {
    let Some(uid) = uid else {
        return Command::new(autocoder_bin());
    };
    let copy = copy_into.join("autocoder");
    std::fs::copy(autocoder_bin(), &copy).unwrap();
    let mut command = Command::new("setpriv");
    command
        .arg(format!("--reuid={uid}"))
        .arg(format!("--regid={uid}"));
    if groups.is_empty() {
        command.arg("--clear-groups");
    } else {
        let groups: Vec<String> = groups.iter().map(u32::to_string).collect();
        command.arg(format!("--groups={}", groups.join(",")));
    }
    command.arg("--").arg(copy);
    command
}

/// Starts `command`, whose program is a copy this test just wrote: another test's fork may hold
/// the copy open for writing a moment longer (ETXTBSY), so that is retried, briefly.
pub(crate) fn spawn_fresh_copy(command: &mut Command) -> std::process::Child {
    for _ in 0..100 {
        match command.spawn() {
            Err(err) if err.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            other => return other.unwrap(),
        }
    }
    panic!("the copied executable stayed busy for a second")
}

/// Makes a FIFO at `path` (what sandboxed code can leave where a file is expected).
pub(crate) fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The official MCP TypeScript SDK installed with npm (install-test-tools.sh installs it), when
/// it is.
pub(crate) fn typescript_sdk() -> Option<PathBuf> {
    let out = Command::new("npm")
        .args(["root", "--global"])
        .output()
        .ok()?;
    let sdk =
        Path::new(String::from_utf8_lossy(&out.stdout).trim()).join("@modelcontextprotocol/sdk");
    sdk.join("package.json").exists().then_some(sdk)
}

pub(crate) fn autocoder_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_autocoder"))
}

/// Runs git in `dir` as a developer would (no global config), asserting it succeeds.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    stdout_of(
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "Dev")
            .env("GIT_AUTHOR_EMAIL", "dev@example.com")
            .env("GIT_COMMITTER_NAME", "Dev")
            .env("GIT_COMMITTER_EMAIL", "dev@example.com"),
    )
}

/// Runs `command`, asserting it succeeds, and returns what it wrote on stdout.
#[track_caller]
pub(crate) fn stdout_of(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Our own cgroup's directory in the cgroup v1 hierarchy of `controller`, if one is mounted.
pub(crate) fn own_cgroup(controller: &str) -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let relative = own.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let controllers = fields.nth(1)?;
        let path = fields.next()?;
        controllers
            .split(',')
            .any(|c| c == controller)
            .then_some(path)
    })?;
    Some(
        Path::new("/sys/fs/cgroup")
            .join(controller)
            .join(relative.trim_start_matches('/')),
    )
}

/// Waits (at most 20 s) until `path` exists: a sandboxed command's sign that it started.
#[track_caller]
pub(crate) fn wait_until_exists(path: &Path, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !path.exists() {
        assert!(std::time::Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// How many of heal's private copies the process `pid` has in the temporary directory.
pub(crate) fn heal_copies_of(pid: u32) -> usize {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("autocoder-heal-{pid}-"))
        })
        .count()
}

pub(crate) fn is_root() -> bool {
    // SAFETY: plain getter.
    unsafe { libc::geteuid() == 0 }
}

/// A test's own directory, removed when the test ends.
pub(crate) struct TempDir(tempfile::TempDir);

impl TempDir {
    pub(crate) fn new() -> TempDir {
        TempDir(
            tempfile::Builder::new()
                .prefix("autocoder-test-")
                .tempdir()
                .expect("temp dir"),
        )
    }

    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }

    pub(crate) fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, contents).unwrap();
        path
    }
}

/// One run of the binary.
pub(crate) struct Test {
    dir: TempDir,
    args: Vec<OsString>,
    env: Vec<(String, OsString)>,
    stdin: Option<Vec<u8>>,
    as_user: Option<u32>,
    /// The ordinary user's supplementary groups.
    groups: Vec<u32>,
}

/// What a run produced.
pub(crate) struct Run {
    pub output: Output,
    /// The test's directory, kept until the run is dropped so tests can look at files.
    pub dir: TempDir,
    /// The home of an ordinary user's run, and the cache directory of every run.
    _home: TempDir,
}

impl Test {
    /// A run in a fresh temp dir (also its working directory) with only PATH, HOME and the
    /// toolchain homes of this machine in the environment.
    pub(crate) fn new() -> Test {
        let mut env = Vec::new();
        for key in [
            "PATH",
            "HOME",
            "CARGO_HOME",
            "RUSTUP_HOME",
            "PYENV_ROOT",
            "LANG",
        ] {
            if let Some(value) = std::env::var_os(key) {
                env.push((key.to_string(), value));
            }
        }
        env.push(("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()));
        Test {
            dir: TempDir::new(),
            args: Vec::new(),
            env,
            stdin: None,
            as_user: None,
            groups: Vec::new(),
        }
    }

    /// A fresh run (in a directory of its own) with the same environment as `other`: for several
    /// runs against one set-up that `other`'s directory holds.
    pub(crate) fn new_like(other: &Test) -> Test {
        let mut test = Test::new();
        test.env = other.env.clone();
        test
    }

    pub(crate) fn dir(&self) -> &TempDir {
        &self.dir
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Test
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub(crate) fn arg(self, arg: impl Into<OsString>) -> Test {
        self.args([arg])
    }

    /// `sandbox [flags] -- sh -c SCRIPT`
    pub(crate) fn sandbox_sh(self, flags: &[&str], script: &str) -> Test {
        self.args(["sandbox"])
            .args(flags.iter().copied())
            .args(["--", "sh", "-c", script])
    }

    pub(crate) fn env(mut self, key: &str, value: impl Into<OsString>) -> Test {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.into()));
        self
    }

    pub(crate) fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Test {
        self.stdin = Some(bytes.into());
        self
    }

    /// Runs as an ordinary user (uid and gid `uid`, no groups) through setpriv; the temp dir is
    /// handed over to that user and the binary copied where the user can run it.
    pub(crate) fn run_as_user(mut self, uid: u32) -> Test {
        self.as_user = Some(uid);
        self
    }

    /// With `run_as_user`: the user is also a member of the group `gid`.
    pub(crate) fn in_group(mut self, gid: u32) -> Test {
        self.groups.push(gid);
        self
    }

    #[track_caller]
    pub(crate) fn run(self) -> Run {
        if let Some(uid) = self.as_user {
            let bin = self.dir.path().join(".bin");
            std::fs::create_dir_all(&bin).unwrap();
            chown_tree(self.dir.path(), uid);
        }
        let home = TempDir::new();
        let mut command =
            autocoder_as_member(self.as_user, &self.groups, &self.dir.path().join(".bin"));
        command
            .args(&self.args)
            .current_dir(self.dir.path())
            .env_clear();
        for (key, value) in &self.env {
            command.env(key, value);
        }
        // run-tests keeps toolchain caches in the user's cache directory: the run's own.
        if !self.env.iter().any(|(key, _)| key == "XDG_CACHE_HOME") {
            command.env("XDG_CACHE_HOME", home.path().join(".cache"));
        }
        if let Some(uid) = self.as_user {
            // A home of its own, apart from the workspace (no workspace may hold a home).
            chown_tree(home.path(), uid);
            command.env("HOME", home.path());
            if !self.env.iter().any(|(key, _)| key == "PATH") {
                command.env("PATH", "/usr/local/bin:/usr/bin:/bin");
            }
            command
                .env_remove("CARGO_HOME")
                .env_remove("RUSTUP_HOME")
                .env_remove("PYENV_ROOT");
        }
        command.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().expect("start autocoder");
        if let Some(bytes) = &self.stdin {
            child.stdin.take().unwrap().write_all(bytes).unwrap();
        }
        let output = child.wait_with_output().expect("wait for autocoder");
        Run {
            output,
            dir: self.dir,
            _home: home,
        }
    }
}

pub(crate) fn chown_tree(path: &Path, uid: u32) {
    let status = Command::new("chown")
        .arg("-R")
        .arg(format!("{uid}:{uid}"))
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

impl Run {
    pub(crate) fn status(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    pub(crate) fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Asserts the exit status, showing both streams when it differs.
    #[track_caller]
    pub(crate) fn expect_status(self, expected: i32) -> Run {
        assert_eq!(
            self.status(),
            expected,
            "unexpected exit status\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout(),
            self.stderr()
        );
        self
    }

    /// The `sandbox` object of the result, checked against the documented shape.
    #[track_caller]
    pub(crate) fn sandbox(&self) -> SandboxResult {
        let doc: SandboxDocument =
            serde_json::from_slice(&self.output.stdout).unwrap_or_else(|err| {
                panic!(
                    "stdout is not a sandbox document ({err})\n--- stdout\n{}\n--- stderr\n{}",
                    self.stdout(),
                    self.stderr()
                )
            });
        doc.sandbox
    }
}

/// The documented result shape; `deny_unknown_fields` makes every format change deliberate.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SandboxDocument {
    pub sandbox: SandboxResult,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SandboxResult {
    pub backend: String,
    pub command: Vec<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub limit_hit: Option<String>,
    pub duration_ms: u64,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub layers: serde_json::Value,
    /// With --disk only.
    #[serde(default)]
    pub disk: Option<serde_json::Value>,
    /// What the command made where git would obey it, moved away; only when there is any.
    #[serde(default)]
    pub quarantined: Vec<serde_json::Value>,
}

impl SandboxResult {
    pub(crate) fn out(&self) -> &str {
        self.stdout.as_deref().unwrap_or("")
    }

    pub(crate) fn err(&self) -> &str {
        self.stderr.as_deref().unwrap_or("")
    }
}

/// Exchanges two paths (`renameat2` with `RENAME_EXCHANGE`) over and over on a thread of its
/// own until stopped or dropped: the race against a check that goes by name twice.
pub(crate) struct PathSwapper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PathSwapper {
    pub(crate) fn start(a: &Path, b: &Path) -> PathSwapper {
        use std::os::unix::ffi::OsStrExt;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let a = std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap();
        let b = std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap();
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                // SAFETY: two valid NUL-terminated paths. By number: musl has no wrapper.
                unsafe {
                    libc::syscall(
                        libc::SYS_renameat2,
                        libc::AT_FDCWD,
                        a.as_ptr(),
                        libc::AT_FDCWD,
                        b.as_ptr(),
                        libc::RENAME_EXCHANGE,
                    )
                };
            }
        });
        PathSwapper {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for PathSwapper {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `sh -c SCRIPT` in `dir`, in a mount namespace of its own (`unshare -m`, private
/// propagation), so the mounts the script makes never reach the host's.
pub(crate) fn sh_in_private_mounts(dir: &Path, script: &str) -> Output {
    Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", script])
        .current_dir(dir)
        .output()
        .expect("start unshare")
}

/// A path in the repository's testdata.
pub(crate) fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(path)
}

/// A test whose directory holds a copy of a sample project.
pub(crate) fn with_project(name: &str) -> Test {
    let test = Test::new();
    copy_dir(&testdata(&format!("projects/{name}")), test.path());
    test
}

/// A test whose directory holds a sample project as a repository with one commit.
pub(crate) fn with_committed_project(name: &str) -> Test {
    let test = with_project(name);
    git(test.path(), &["init", "-q", "-b", "main"]);
    git(test.path(), &["add", "-A"]);
    git(
        test.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-qm",
            name,
        ],
    );
    test
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

/// The section `key` of the run document a run wrote on stdout, checked against its shape on
/// the wire (`wire`).
#[track_caller]
pub(crate) fn section_of(run: &Run, key: &str) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_slice(&run.output.stdout).unwrap_or_else(|err| {
        panic!(
            "stdout is not JSON ({err})\n{}\n{}",
            run.stdout(),
            run.stderr()
        )
    });
    if !doc[key].is_null() {
        crate::wire::check_section(key, &doc[key]);
    }
    doc[key].clone()
}

/// `open-pr --dry-run` for acme/shop into main, fed `document`, with an author set.
pub(crate) fn dry_run_pr(document: &[u8]) -> Test {
    Test::new()
        .stdin(document.to_vec())
        .args([
            "open-pr",
            "--dry-run",
            "--repo",
            "acme/shop",
            "--base",
            "main",
        ])
        .env("AUTOCODER_AUTHOR", "t <t@example.invalid>")
}
