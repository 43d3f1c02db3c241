//! The result of a sandboxed run, as written to stdout by `autocoder sandbox` and embedded in the
//! run document by `run-tests`.
//!
//! ```json
//! {"sandbox": {"backend": "native", "command": ["make", "test"], "exit_code": 2, "signal": null,
//!   "timed_out": false, "limit_hit": null, "duration_ms": 412, "stdout": "...", "stderr": "...",
//!   "stdout_truncated": false, "stderr_truncated": false,
//!   "layers": {"filesystem": {...}, "network": {...}, "identity": {...}, "resources": {...},
//!              "containment": {...}, "environment": {...}, "degraded": []}}}
//! ```
//!
//! Field names are a public interface: add fields, never rename them.

use serde::{Deserialize, Serialize};

use super::policy::BackendKind;

/// The wrapper object written by `autocoder sandbox`.
#[derive(Debug, Serialize)]
pub(crate) struct SandboxDocument<'a> {
    pub sandbox: &'a SandboxResult,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SandboxResult {
    pub backend: BackendKind,
    pub command: Vec<String>,
    /// The command's exit code; null when it was killed by a signal.
    pub exit_code: Option<i32>,
    /// The signal that killed the command, if any.
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// The signal that made us stop the command early (SIGINT, SIGTERM, SIGHUP, SIGQUIT), if any.
    #[serde(skip)]
    pub interrupted: Option<i32>,
    pub limit_hit: Option<LimitHit>,
    pub duration_ms: u64,
    /// Captured output (lossy UTF-8); null when streamed.
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    #[serde(default)]
    pub layers: Layers,
    /// With `--disk`: what writing the changes back met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskWriteBack>,
    /// What the command made where git on the host would obey it, moved away.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quarantined: Vec<Quarantined>,
    /// Streamed stderr may have ended without a newline (unknown counts as yes): a result
    /// written after it must start a line of its own, or the command's last words would run
    /// into it (and a line of its own could pass for the result).
    #[serde(skip)]
    pub stderr_mid_line: bool,
}

impl SandboxResult {
    /// What to do when the command tried to install packages into its toolchain: the toolchain's
    /// prefix is read-only in the sandbox, and pip's fallback, the sandbox's private home, is
    /// thrown away when the command ends. Seen in captured output only (streamed output is the
    /// user's to read).
    pub(crate) fn install_advice(&self) -> Option<&'static str> {
        let said = |words: &str| {
            [&self.stdout, &self.stderr]
                .into_iter()
                .flatten()
                .any(|output| output.contains(words))
        };
        (said("pyenv: cannot rehash") || said("normal site-packages is not writeable")).then_some(
            "the interpreter's prefix is read-only in the sandbox, and what pip puts in the \
             sandbox's private home is discarded when the command ends; install into the \
             workspace: a virtual environment (`python3 -m venv .venv`, then `.venv/bin/pip \
             install ...`), or `pip install --target DIR` with DIR in the workspace (and \
             PYTHONPATH=DIR)",
        )
    }

    /// The exit status `autocoder sandbox` ends with, as timeout(1) does; when we were told to
    /// stop, the status of that signal.
    pub(crate) fn exit_status(&self) -> i32 {
        if let Some(signal) = self.interrupted {
            128 + signal
        } else if self.timed_out {
            124
        } else if let Some(signal) = self.signal {
            128 + signal
        } else {
            self.exit_code.unwrap_or(125)
        }
    }
}

/// Something the command made where git on the host would obey it: a `.git`, the hooks
/// directory or a config file the repository names, which was not there before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Quarantined {
    /// From the workspace's root.
    pub path: String,
    /// Where it was moved, from the workspace's root; null when it could not be.
    pub moved_to: Option<String>,
}

/// What writing a `--disk` run's changes back into the workspace met.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct DiskWriteBack {
    /// Files the user changed on the host while the command ran, which it changed too.
    pub conflicts: Vec<DiskConflict>,
}

/// A file the host changed while the command ran, which the command changed too: the host's
/// is kept, the run's put `beside` it (none when the run removed it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DiskConflict {
    /// From the workspace's root.
    pub path: String,
    /// Where the run's version is, from the workspace's root.
    pub beside: Option<String>,
}

/// Which limit stopped or cut the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LimitHit {
    Memory,
    Pids,
    Time,
    Output,
    FileSize,
    /// The --disk limit on all the files the command wrote.
    Disk,
}

/// What isolation was in force: each layer says its mechanism, so a reader can judge the result.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Layers {
    pub filesystem: FilesystemLayer,
    pub network: NetworkLayer,
    pub identity: IdentityLayer,
    pub resources: ResourceLayer,
    pub containment: ContainmentLayer,
    pub environment: EnvironmentLayer,
    /// Layers that could not be applied (only with --allow-degraded; otherwise the run fails).
    pub degraded: Vec<Degradation>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct FilesystemLayer {
    /// "landlock", "docker" or "none".
    pub mechanism: String,
    /// The Landlock ABI version in use.
    pub abi: Option<u32>,
    pub read_write: Vec<String>,
    pub read_only: Vec<String>,
    /// What the command sees of the host: "allow-list" (only the paths above, in a root of
    /// their own), "host" (everything, limited by Landlock alone) or "image".
    pub view: String,
    /// Toolchain and `PATH` directories not given to the command, each with why: the home or
    /// one holding it, or one holding keys (`.ssh`, `.aws`, ...).
    pub left_out: Vec<String>,
    /// The project's environments outside it shown read-only, each with why ("/…/venvs/shop:
    /// the virtualenv VIRTUAL_ENV names").
    pub environments: Vec<String>,
    /// The workspace's `.git`: "read-only" (the default), "writable" (given back with `--rw`,
    /// or with no mount namespace to hold it, said why); null when the workspace has none.
    pub git_directory: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct NetworkLayer {
    pub allowed: bool,
    /// What blocks it: e.g. ["seccomp", "landlock", "mount-namespace"].
    pub mechanisms: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct IdentityLayer {
    /// The host uid the command runs as.
    pub uid: u32,
    pub gid: u32,
    pub root: bool,
    pub capabilities: String,
    pub no_new_privs: bool,
    pub user_namespace: bool,
    /// The workspace is mounted with an id mapping so a non-root uid can write root's files.
    pub idmapped_workspace: bool,
    pub seccomp: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ResourceLayer {
    /// "cgroup-v1", "cgroup-v2", "rlimit", "docker", or "none" (the command could not join its
    /// cgroups, with --allow-degraded).
    pub mechanism: String,
    pub memory_bytes: u64,
    pub pids: u32,
    pub cpus: f64,
    /// How the CPU limit is held: "cfs-quota", "affinity", "docker" or "none".
    pub cpu_mechanism: String,
    /// What the memory limit counts: "cgroup" (everything the processes use: shared memory,
    /// socket buffers, memfds), "rlimit (private memory only)" (each process's private memory,
    /// nothing shared or queued in the kernel), "docker" or "none".
    pub memory_mechanism: String,
    /// Why the run made no cgroups of its own (rlimits then hold the limits); null when it did,
    /// or with the docker backend.
    pub cgroups_refused: Option<String>,
    pub file_size_bytes: u64,
    /// The --disk limit on all the files written in the workspace; null when there is none.
    pub disk_bytes: Option<u64>,
    pub open_files: u64,
    pub timeout_ms: u64,
    pub max_output_bytes: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ContainmentLayer {
    pub pid_namespace: bool,
    pub mount_namespace: bool,
    pub ipc_namespace: bool,
    /// A network namespace of the command's own, with only `lo` (with the network off).
    pub network_namespace: bool,
    pub new_session: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct EnvironmentLayer {
    /// Names of the variables the command received (never their values).
    pub passed: Vec<String>,
    /// Names of credential-like variables that were withheld.
    pub withheld: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Degradation {
    pub layer: String,
    pub reason: String,
}
