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
    let result = sandbox::run(&policy, args.backend)?;
    let document = SandboxDocument { sandbox: &result };
    match (&args.result, args.stream) {
        (Some(path), _) => {
            let file = std::fs::File::create(path).map_err(|err| {
                Failure::usage(format!("cannot write --result {}: {err}", path.display()))
            })?;
            write_json(file, &document, global.pretty)?;
        }
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
