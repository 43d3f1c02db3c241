//! The sandbox every untrusted command runs in: policy, backends, supervision and the result.
//!
//! `run` takes a resolved `SandboxPolicy` and returns a `SandboxResult`; the backends differ in
//! mechanism, not in what the caller sees. The native backend (`native`) is the default; the
//! docker backend (`docker`) runs the same policy in a container.

pub(crate) mod capture;
pub(crate) mod docker;
pub(crate) mod environment;
pub(crate) mod native;
pub(crate) mod policy;
pub(crate) mod reexec;
pub(crate) mod result;
pub(crate) mod result_file;
pub(crate) mod supervise;

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use self::policy::{BackendKind, OutputMode, SandboxPolicy};
use self::result::{Layers, LimitHit, SandboxResult};
use crate::error::{Failure, Kind};

/// The command's private temporary directory (an empty tmpfs per run).
pub(crate) const PRIVATE_TMP: &str = "/tmp";
/// The command's private home directory, inside the private temporary directory.
pub(crate) const PRIVATE_HOME: &str = "/tmp/home";

pub(crate) fn run(policy: &SandboxPolicy, backend: BackendKind) -> Result<SandboxResult, Failure> {
    let mut result = match backend {
        BackendKind::Native => native::run(policy),
        BackendKind::Docker => docker::run(policy),
    }?;
    result.quarantined = quarantine(policy);
    Ok(result)
}

/// Moves away what the command made where git on the host would obey it (a `.git`, a hooks
/// directory or an included config file that was not there, or not that one, before): beside,
/// as `NAME.autocoder-quarantine`, so that nothing is lost and git obeys none of it. Said on
/// stderr too.
fn quarantine(policy: &SandboxPolicy) -> Vec<result::Quarantined> {
    let mut moved = Vec::new();
    for (path, before) in &policy.watched {
        let now = crate::workspace::runs_outside::identity(path);
        if now.is_none() || now == *before {
            continue;
        }
        let Some(name) = path.file_name() else {
            continue;
        };
        let free = (1..100)
            .map(|n| {
                let mut beside = name.to_os_string();
                beside.push(match n {
                    1 => ".autocoder-quarantine".to_string(),
                    n => format!(".autocoder-quarantine-{n}"),
                });
                path.with_file_name(beside)
            })
            .find(|beside| beside.symlink_metadata().is_err());
        let shown = |path: &Path| {
            path.strip_prefix(&policy.workspace)
                .unwrap_or(path)
                .display()
                .to_string()
        };
        let outcome = match free {
            Some(beside) => std::fs::rename(path, &beside).map(|()| beside),
            None => Err(std::io::Error::other("no free name beside it")),
        };
        let said = match &outcome {
            Ok(beside) => format!(
                "the command made {}, which git on the host would obey: moved to {}",
                shown(path),
                shown(beside)
            ),
            Err(err) => format!(
                "the command made {}, which git on the host would obey, and it could not be moved away ({err}): remove it before running git there",
                shown(path)
            ),
        };
        crate::log::warn("sandbox", &crate::text::sanitize_for_terminal(&said));
        moved.push(result::Quarantined {
            path: shown(path),
            moved_to: outcome.ok().map(|beside| shown(&beside)),
        });
    }
    moved
}

/// The layer report fields that follow from the policy alone; backends fill in the rest.
fn layers_base(policy: &SandboxPolicy, backend: BackendKind) -> Layers {
    let mut layers = Layers::default();
    let native = backend == BackendKind::Native;
    layers.filesystem.mechanism = if native { "landlock" } else { "docker" }.into();
    layers.filesystem.abi = native.then(crate::sys::landlock_abi);
    layers.filesystem.environments = policy
        .environments
        .iter()
        .map(|(dir, why)| format!("{}: {why}", dir.display()))
        .collect();
    layers.filesystem.git_directory = policy.git_read_only.map(|read_only| {
        match read_only {
            true => "read-only",
            false => "writable (--rw)",
        }
        .to_string()
    });
    layers.network.allowed = policy.network;
    if !policy.network {
        layers.network.mechanisms = if native {
            vec![
                "seccomp".into(),
                "landlock".into(),
                "mount-namespace".into(),
            ]
        } else {
            vec!["docker-network-none".into()]
        };
    }
    layers.identity.capabilities = "none".into();
    layers.identity.no_new_privs = true;
    layers.identity.seccomp = true;
    layers.resources.memory_bytes = policy.memory_bytes;
    layers.resources.pids = policy.pids;
    layers.resources.cpus = policy.cpus;
    layers.resources.file_size_bytes = policy.file_size_bytes;
    layers.resources.disk_bytes = policy.disk_bytes;
    layers.resources.open_files = policy.open_files;
    layers.resources.timeout_ms = policy.timeout.as_millis() as u64;
    layers.resources.max_output_bytes = match policy.output {
        OutputMode::Capture { max_bytes } => Some(max_bytes),
        OutputMode::Stream => None,
    };
    layers.containment.new_session = true;
    layers.environment.passed = policy
        .env
        .iter()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    layers.environment.withheld = policy.withheld_env.clone();
    layers
}

/// Finds the program to execute the way execvp would, with the sandbox's PATH and the workspace
/// as the current directory. Missing and non-executable commands are reported here, before
/// anything starts, with the exit statuses of a shell (127, 126).
pub(crate) fn resolve_command(
    name: &OsStr,
    env: &[(OsString, OsString)],
    workspace: &Path,
) -> Result<PathBuf, Failure> {
    let shown = name.to_string_lossy();
    if name.is_empty() {
        return Err(Failure::usage("the command is empty").with_hint("give a command after `--`"));
    }
    let candidate = |path: PathBuf| -> Option<PathBuf> {
        let meta = path.metadata().ok()?;
        (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then_some(path)
    };
    if name.as_encoded_bytes().contains(&b'/') {
        let path = workspace.join(name);
        return match path.metadata() {
            Err(_) => Err(Failure::new(
                Kind::CommandNotFound,
                anyhow::anyhow!("{shown}: no such file"),
            )
            .with_hint("relative paths are taken from the workspace")),
            Ok(meta) if meta.is_dir() => Err(Failure::new(
                Kind::CommandNotExecutable,
                anyhow::anyhow!("{shown}: is a directory"),
            )),
            Ok(_) => candidate(path.clone()).ok_or_else(|| {
                Failure::new(
                    Kind::CommandNotExecutable,
                    anyhow::anyhow!("{shown}: permission denied (not executable)"),
                )
                // `./x` given: shown as the file's path, without the `.`.
                .with_hint(format!(
                    "chmod +x {}",
                    path.components().collect::<PathBuf>().display()
                ))
            }),
        };
    }
    let search = lookup_env(env, "PATH").unwrap_or_default();
    std::env::split_paths(search)
        .filter(|dir| !dir.as_os_str().is_empty())
        .find_map(|dir| candidate(workspace.join(dir).join(name)))
        .ok_or_else(|| {
            Failure::new(
                Kind::CommandNotFound,
                anyhow::anyhow!("{shown}: command not found"),
            )
            .with_hint(format!(
                "install it, or give its path; the sandbox searched PATH={}",
                search.to_string_lossy()
            ))
        })
}

/// Looks a variable up in a command environment.
pub(crate) fn lookup_env<'a>(env: &'a [(OsString, OsString)], key: &str) -> Option<&'a OsStr> {
    env.iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_os_str())
}

/// How the command ended, as its backend found out.
struct Ending {
    exit_code: Option<i32>,
    signal: Option<i32>,
    oom_killed: bool,
    pids_max_hit: bool,
    /// The --disk limit was reached.
    disk_full: bool,
    /// With --disk, the files the host changed meanwhile, kept.
    disk_conflicts: Vec<result::DiskConflict>,
    /// Whether memory and process limits are held by something that records hits (cgroups,
    /// docker); with rlimits only the command's own messages tell.
    recorded: bool,
}

/// The result of a supervised run that ended as `ending`: its output as captured, the limit hit
/// judged from all the evidence.
fn result_of(
    policy: &SandboxPolicy,
    backend: BackendKind,
    run: supervise::Supervised,
    ending: Ending,
    layers: Layers,
) -> SandboxResult {
    let stdout_truncated = run.stdout.as_ref().is_some_and(|c| c.truncated());
    let stderr_truncated = run.stderr.as_ref().is_some_and(|c| c.truncated());
    let stdout = run.stdout.as_ref().map(|c| c.text());
    let stderr = run.stderr.as_ref().map(|c| c.text());
    let limit_hit = LimitEvidence {
        timed_out: run.timed_out,
        oom_killed: ending.oom_killed,
        pids_max_hit: ending.pids_max_hit,
        disk_full: ending.disk_full,
        signal: ending.signal,
        stderr: stderr.as_deref(),
        recorded: ending.recorded,
        truncated: stdout_truncated || stderr_truncated,
    }
    .limit_hit();
    SandboxResult {
        backend,
        command: policy
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        exit_code: ending.exit_code,
        signal: ending.signal,
        timed_out: run.timed_out,
        interrupted: run.interrupted,
        limit_hit,
        duration_ms: run.elapsed.as_millis() as u64,
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        layers,
        disk: policy.disk_bytes.map(|_| result::DiskWriteBack {
            conflicts: ending.disk_conflicts,
        }),
        quarantined: Vec::new(),
        stderr_mid_line: run.stderr_mid_line,
    }
}

/// What a backend knows about a finished run, to name the limit it hit.
struct LimitEvidence<'a> {
    timed_out: bool,
    oom_killed: bool,
    pids_max_hit: bool,
    disk_full: bool,
    signal: Option<i32>,
    stderr: Option<&'a str>,
    /// Whether memory and process limits are held by something that records hits (cgroups,
    /// docker); with rlimits only the command's own messages tell.
    recorded: bool,
    truncated: bool,
}

impl LimitEvidence<'_> {
    /// The limit hit, by precedence: time, memory, processes, disk, file size, output.
    fn limit_hit(&self) -> Option<LimitHit> {
        let from_messages = self.stderr.and_then(limit_from_messages);
        if self.timed_out {
            Some(LimitHit::Time)
        } else if self.oom_killed {
            Some(LimitHit::Memory)
        } else if self.pids_max_hit {
            Some(LimitHit::Pids)
        } else if self.disk_full {
            Some(LimitHit::Disk)
        } else if self.signal == Some(libc::SIGXFSZ) {
            Some(LimitHit::FileSize)
        } else if let Some(hit) =
            from_messages.filter(|hit| !self.recorded || *hit == LimitHit::FileSize)
        {
            Some(hit)
        } else {
            self.truncated.then_some(LimitHit::Output)
        }
    }
}

/// The usual messages of a write, allocation or fork refused by a limit, in the command's last
/// words: rlimits leave no other trace, and a file-size signal may kill a grandchild only.
fn limit_from_messages(stderr: &str) -> Option<LimitHit> {
    let start = (stderr.len().saturating_sub(4096)..stderr.len())
        .find(|&i| stderr.is_char_boundary(i))
        .unwrap_or(0);
    let tail = stderr[start..].to_ascii_lowercase();
    const FILE_SIZE: &[&str] = &["file size limit exceeded", "file too large"];
    const MEMORY: &[&str] = &[
        "memoryerror",
        "cannot allocate memory",
        "out of memory",
        "bad_alloc",
        "memory allocation of",
    ];
    const PIDS: &[&str] = &[
        "resource temporarily unavailable",
        "fork: retry",
        "cannot fork",
        "can't fork",
    ];
    let found = |markers: &[&str]| markers.iter().any(|m| tail.contains(m));
    if found(FILE_SIZE) {
        Some(LimitHit::FileSize)
    } else if found(MEMORY) {
        Some(LimitHit::Memory)
    } else if found(PIDS) {
        Some(LimitHit::Pids)
    } else {
        None
    }
}
