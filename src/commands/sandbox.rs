//! `autocoder sandbox`: run one command in the sandbox and write its result document.

use std::path::{Path, PathBuf};

use crate::cli::{GlobalArgs, SandboxArgs};
use crate::error::Failure;
use crate::output::write_json;
use crate::sandbox::environment::{self, ToolchainHomes};
use crate::sandbox::outcome::SandboxDocument;
use crate::sandbox::policy::{BackendKind, OutputMode, SandboxPolicy};
use crate::sandbox::{self, PRIVATE_HOME, PRIVATE_TMP};

/// Open files allowed to the command.
const OPEN_FILES: u64 = 4096;

pub fn run(args: SandboxArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    if args.image.is_some() && args.backend != BackendKind::Docker {
        return Err(Failure::usage("--image is only used with --backend docker")
            .with_hint("add --backend docker, or drop --image"));
    }
    let workspace = existing_dir(
        args.workspace.as_deref().unwrap_or(Path::new(".")),
        "--workspace",
    )?;
    if workspace == Path::new("/") {
        return Err(
            Failure::usage("the workspace cannot be / (everything would be writable)")
                .with_hint("run from the project's directory, or give it with --workspace DIR"),
        );
    }
    let read_only = args
        .ro
        .iter()
        .map(|p| existing_path(p, "--ro"))
        .collect::<Result<Vec<_>, _>>()?;
    let read_write = args
        .rw
        .iter()
        .map(|p| existing_path(p, "--rw"))
        .collect::<Result<Vec<_>, _>>()?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let toolchains = ToolchainHomes::discover(home.as_deref());
    let env = environment::build(
        &args.env,
        &toolchains,
        Path::new(PRIVATE_HOME),
        Path::new(PRIVATE_TMP),
    )?;
    let policy = SandboxPolicy {
        workspace,
        timeout: args.timeout,
        memory_bytes: args.memory,
        pids: args.pids,
        cpus: args.cpus,
        file_size_bytes: args.file_size,
        open_files: OPEN_FILES,
        network: args.network,
        image: args.image,
        requested_env: args
            .env
            .iter()
            .map(|e| e.split_once('=').map_or(e.as_str(), |(k, _)| k).to_string())
            .collect(),
        env: env.vars,
        withheld_env: env.withheld,
        toolchain_dirs: toolchains.readable_dirs(),
        read_only,
        read_write,
        output: if args.stream {
            OutputMode::Stream
        } else {
            OutputMode::Capture {
                max_bytes: args.max_output,
            }
        },
        allow_degraded: args.allow_degraded,
        command: args.command,
    };
    let result = sandbox::run(&policy, args.backend)?;
    let document = SandboxDocument { sandbox: &result };
    match (&args.result, args.stream) {
        (Some(path), _) => {
            let file = std::fs::File::create(path).map_err(|err| {
                Failure::usage(format!("cannot write --result {}: {err}", path.display()))
            })?;
            write_json(file, &document, global.pretty)?;
        }
        (None, true) => write_json(std::io::stderr(), &document, false)?,
        (None, false) => write_json(std::io::stdout(), &document, global.pretty)?,
    }
    Ok(result.exit_status())
}

fn existing_dir(path: &Path, flag: &str) -> Result<PathBuf, Failure> {
    let path = existing_path(path, flag)?;
    if !path.is_dir() {
        return Err(Failure::usage(format!(
            "{flag} {}: not a directory",
            path.display()
        )));
    }
    Ok(path)
}

fn existing_path(path: &Path, flag: &str) -> Result<PathBuf, Failure> {
    path.canonicalize().map_err(|err| {
        Failure::usage(format!("{flag} {}: {err}", path.display()))
            .with_hint("give an existing path")
    })
}
