//! `autocoder sandbox`: run one command in the sandbox and write its result document.

use std::path::{Path, PathBuf};

use crate::cli::{GlobalArgs, SandboxArgs};
use crate::error::Failure;
use crate::output::write_json;
use crate::sandbox;
use crate::sandbox::policy::{
    resolve_without_writable_links, BackendKind, OutputMode, PolicyRequest, SandboxPolicy,
};
use crate::sandbox::result::SandboxDocument;

pub fn run(args: SandboxArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    if args.image.is_some() && args.backend != BackendKind::Docker {
        return Err(Failure::usage("--image is only used with --backend docker")
            .with_hint("add --backend docker, or drop --image"));
    }
    let policy = PolicyRequest {
        workspace: args.workspace.unwrap_or_else(|| PathBuf::from(".")),
        timeout: args.timeout,
        memory_bytes: args.memory,
        pids: args.pids,
        cpus: args.cpus,
        file_size_bytes: args.file_size,
        disk_bytes: args.disk,
        network: args.network,
        env: args.env,
        read_only: args.ro,
        read_write: args.rw,
        output: if args.stream {
            OutputMode::Stream
        } else {
            OutputMode::Capture {
                max_bytes: args.max_output,
            }
        },
        allow_degraded: args.allow_degraded,
        image: args.image,
        command: args.command,
        layered: Vec::new(),
        watcher: None,
    }
    .resolve()?;
    // Opened before the command runs: a path that cannot be written fails the call before the
    // command has had its effects, not after.
    let result_file = args
        .result
        .as_ref()
        .map(|path| open_result(path, &policy))
        .transpose()?;
    crate::log::note(
        "sandbox",
        &format!(
            "running `{}` in {} ({} backend; memory {} MiB, {} processes, {} CPUs, timeout {} s, \
             network {})",
            shell_words::join(policy.command.iter().map(|a| a.to_string_lossy())),
            policy.workspace.display(),
            format!("{:?}", args.backend).to_lowercase(),
            policy.memory_bytes >> 20,
            policy.pids,
            policy.cpus,
            policy.timeout.as_secs(),
            if policy.network { "on" } else { "off" }
        ),
    );
    let result = sandbox::run(&policy, args.backend)?;
    let ended = match (result.exit_code, result.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "no status".to_string(),
    };
    let limit = result
        .limit_hit
        .map(|hit| format!(", {hit:?} limit hit").to_lowercase())
        .unwrap_or_default();
    crate::log::note(
        "sandbox",
        &format!("ended after {} ms: {ended}{limit}", result.duration_ms),
    );
    if let Some(advice) = install_advice(&result) {
        crate::log::warn("sandbox", advice);
    }
    for conflict in result.disk.iter().flat_map(|disk| &disk.conflicts) {
        let path = crate::text::sanitize_for_terminal(&conflict.path);
        crate::log::warn(
            "sandbox",
            &match &conflict.beside {
                Some(beside) => format!(
                    "{path} changed on the host while the command ran: yours is kept, the run's is in {}",
                    crate::text::sanitize_for_terminal(beside)
                ),
                None => format!(
                    "{path} changed on the host while the command ran, which removed it: yours is kept"
                ),
            },
        );
    }
    let document = SandboxDocument { sandbox: &result };
    // The file may lie in the workspace, which the command could write: the result goes
    // through the descriptor opened before (never through a link put there since), over
    // anything written to it meanwhile, and to stdout if the file was replaced.
    let result_file = result_file.and_then(|ResultFile { file, watched }| {
        let Some(watched) = watched else {
            // The user's own file (or a device, or /dev/stdout): emptied if it is a file.
            if file.metadata().is_ok_and(|meta| meta.is_file()) {
                let _ = file.set_len(0);
            }
            return Some(file);
        };
        let same = file
            .metadata()
            .ok()
            .zip(std::fs::symlink_metadata(&watched).ok())
            .is_some_and(|(ours, now)| {
                use std::os::unix::fs::MetadataExt;
                (ours.dev(), ours.ino()) == (now.dev(), now.ino())
            });
        if !same {
            crate::log::warn(
                "sandbox",
                &format!(
                    "--result {} was replaced while the command ran; the result goes where it \
                     would without --result",
                    watched.display()
                ),
            );
        }
        // What the command wrote there is replaced by the result alone.
        (same && file.set_len(0).is_ok()).then_some(file)
    });
    match (result_file, args.stream) {
        (Some(file), _) => write_json(file, &document, global.pretty)?,
        (None, true) => {
            if result.stderr_mid_line {
                eprintln!();
            }
            write_json(std::io::stderr(), &document, false)?
        }
        (None, false) => write_json(std::io::stdout(), &document, global.pretty)?,
    }
    Ok(result.exit_status())
}

/// What to do when the command tried to install packages into its toolchain: the toolchain's
/// prefix is read-only in the sandbox, and pip's fallback, the sandbox's private home, is
/// thrown away when the command ends. Seen in captured output only (streamed output is the
/// user's to read).
fn install_advice(result: &sandbox::result::SandboxResult) -> Option<&'static str> {
    let said = |words: &str| {
        [&result.stdout, &result.stderr]
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

/// The --result file, opened (not emptied yet) before the command runs, and, when it lies
/// where the sandbox can write, its path (the command could replace the file meanwhile).
/// There the file must be a regular one reached through no link (one a previous run put
/// there would have root create, write or empty any file, and a FIFO would hang us); links
/// elsewhere are followed (`/dev/stdout` is one).
fn open_result(path: &Path, policy: &SandboxPolicy) -> Result<ResultFile, Failure> {
    use std::os::unix::fs::OpenOptionsExt;
    let refused = |err: String| {
        Failure::usage(format!("cannot write --result {}: {err}", path.display()))
            .with_hint("give a plain file in an existing, writable directory")
    };
    let absolute = std::path::absolute(path).map_err(|err| refused(err.to_string()))?;
    let writable: Vec<_> = std::iter::once(policy.workspace.clone())
        .chain(policy.read_write.iter().cloned())
        .collect();
    let resolved = resolve_without_writable_links(&absolute, &writable).map_err(|link| {
        refused(format!(
            "it goes through {}, a link where the sandbox can write",
            link.display()
        ))
    })?;
    if !writable.iter().any(|dir| resolved.starts_with(dir)) {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&absolute)
            .map_err(|err| refused(err.to_string()))?;
        return Ok(ResultFile {
            file,
            watched: None,
        });
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&resolved)
        .map_err(|err| match err.raw_os_error() {
            Some(libc::ELOOP) => refused("it is a link, in a place the sandbox can write".into()),
            // A FIFO without a reader.
            Some(libc::ENXIO) => {
                refused("not a regular file, in a place the sandbox can write".into())
            }
            _ => refused(err.to_string()),
        })?;
    if !file.metadata().is_ok_and(|meta| meta.is_file()) {
        return Err(refused(
            "not a regular file, in a place the sandbox can write".into(),
        ));
    }
    Ok(ResultFile {
        file,
        watched: Some(resolved),
    })
}

/// The --result file, and the path to check it is still there, when the sandbox could have
/// replaced it.
struct ResultFile {
    file: std::fs::File,
    watched: Option<PathBuf>,
}
