//! `autocoder sandbox`: run one command in the sandbox and write its result document.

use std::path::{Path, PathBuf};

use crate::cli::{GlobalArgs, SandboxArgs};
use crate::error::Failure;
use crate::output::write_json;
use crate::sandbox;
use crate::sandbox::outcome::SandboxDocument;
use crate::sandbox::policy::{
    resolve_without_writable_links, BackendKind, OutputMode, PolicyRequest, SandboxPolicy,
};

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
    }
    .resolve()?;
    // Opened before the command runs: a path that cannot be written fails the call before the
    // command has had its effects, not after.
    let result_file = args
        .result
        .as_ref()
        .map(|path| open_result(path, &policy))
        .transpose()?;
    crate::commands::note(
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
    crate::commands::note(
        "sandbox",
        &format!("ended after {} ms: {ended}{limit}", result.duration_ms),
    );
    let document = SandboxDocument { sandbox: &result };
    // The file may lie in the workspace, which the command could write: the result goes
    // through the descriptor opened before (never through a link put there since), over
    // anything written to it meanwhile, and to stdout if the file was replaced.
    let result_file = result_file.filter(|file| {
        let path = args.result.as_deref().expect("a file means a path");
        let same = file.metadata().ok().zip(std::fs::symlink_metadata(path).ok()).is_some_and(
            |(ours, now)| {
                use std::os::unix::fs::MetadataExt;
                (ours.dev(), ours.ino()) == (now.dev(), now.ino())
            },
        );
        if !same {
            crate::commands::warn(
                "sandbox",
                &format!(
                    "--result {} was replaced while the command ran; the result goes where it would without --result",
                    path.display()
                ),
            );
        }
        // A regular file loses what was there; a device or FIFO (/dev/stdout) has nothing to lose.
        same && (!file.metadata().is_ok_and(|meta| meta.is_file()) || file.set_len(0).is_ok())
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

/// The --result file, opened (not emptied yet) before the command runs. Links are followed
/// (`/dev/stdout` is one), except where the sandbox can write: one it put there would have
/// root write, or empty, any file.
fn open_result(path: &Path, policy: &SandboxPolicy) -> Result<std::fs::File, Failure> {
    use std::os::unix::fs::OpenOptionsExt;
    let refused = |err: String| {
        Failure::usage(format!("cannot write --result {}: {err}", path.display()))
            .with_hint("give a file in an existing, writable directory")
    };
    let absolute = std::path::absolute(path).map_err(|err| refused(err.to_string()))?;
    let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return Err(refused("not a file's path".into()));
    };
    let writable: Vec<_> = std::iter::once(policy.workspace.clone())
        .chain(policy.read_write.iter().cloned())
        .collect();
    let parent = resolve_without_writable_links(parent, &writable).map_err(|link| {
        refused(format!(
            "it goes through {}, a link where the sandbox can write",
            link.display()
        ))
    })?;
    let sandbox_writes_there = writable.iter().any(|dir| parent.starts_with(dir));
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(if sandbox_writes_there {
            libc::O_NOFOLLOW
        } else {
            0
        })
        .open(parent.join(name))
        .map_err(|err| match err.raw_os_error() {
            Some(libc::ELOOP) => refused("it is a link, in a place the sandbox can write".into()),
            _ => refused(err.to_string()),
        })
}
