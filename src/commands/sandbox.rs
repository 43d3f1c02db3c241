//! `autocoder sandbox`: run one command in the sandbox and write its result document.

use std::path::PathBuf;

use crate::cli::{GlobalArgs, SandboxArgs};
use crate::error::Failure;
use crate::output::write_json;
use crate::sandbox;
use crate::sandbox::policy::{BackendKind, OutputMode, PolicyRequest};
use crate::sandbox::result::{SandboxDocument, SandboxResult};
use crate::sandbox::result_file::ResultFile;

pub(crate) fn run(args: SandboxArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    if args.image.is_some() && args.backend != BackendKind::Docker {
        return Err(Failure::usage("--image is only used with --backend docker")
            .with_hint("add --backend docker, or drop --image"));
    }
    let policy = PolicyRequest {
        workspace: args.workspace.unwrap_or_else(|| PathBuf::from(".")),
        timeout: args.limits.timeout,
        memory_bytes: args.limits.memory,
        pids: args.limits.pids,
        cpus: args.limits.cpus,
        file_size_bytes: args.file_size,
        disk_bytes: args.disk,
        network: args.limits.network,
        env: args.limits.env,
        read_only: args.limits.ro,
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
        .map(|path| ResultFile::open(path, &policy))
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
    say_how_it_ended(&result);
    let document = SandboxDocument { sandbox: &result };
    let result_file = result_file.and_then(ResultFile::into_unchanged);
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

/// How the run ended, its advice and the host's changes kept, on stderr.
fn say_how_it_ended(result: &SandboxResult) {
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
    if let Some(advice) = result.install_advice() {
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
}
