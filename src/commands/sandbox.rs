//! `autocoder sandbox`: run one command in the sandbox and write its result document.

use std::path::PathBuf;

use crate::cli::{GlobalArgs, SandboxArgs};
use crate::error::Failure;
use crate::output::write_json;
use crate::sandbox;
use crate::sandbox::outcome::SandboxDocument;
use crate::sandbox::policy::{BackendKind, OutputMode, PolicyRequest};

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
        .map(|path| {
            use std::os::unix::fs::OpenOptionsExt;
            // Not truncated yet, and never through a link (one a previous run put there would
            // have root write, or empty, any file).
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
                .map_err(|err| {
                    Failure::usage(format!("cannot write --result {}: {err}", path.display()))
                        .with_hint(
                            "give a plain file (not a link) in an existing, writable directory",
                        )
                })
        })
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
        same && file.set_len(0).is_ok()
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
