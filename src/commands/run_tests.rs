//! `autocoder run-tests`: the project's tests, run in the sandbox, as the run document's `tests`.

use crate::cli::{GlobalArgs, RunTestsArgs};
use crate::error::Failure;
use crate::output::write_json;
use crate::run_document::Outcome;
use crate::run_document::RunDocument;
use crate::sandbox::policy::{OutputMode, PolicyRequest};
use crate::testrun::{self, TestRequest};

/// Output kept per stream for parsing; reports (JUnit) are read from files whatever their size.
const MAX_OUTPUT: u64 = 8 << 20;
/// Largest file the tests may write.
const FILE_SIZE: u64 = 4 << 30;

pub(crate) fn run(args: RunTestsArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    let mut document = RunDocument::from_stdin("run-tests")?;
    let workspace = document.workspace(args.workspace.as_deref())?;
    let from_document = args.workspace.is_none() && document.has("workspace");
    // A saved log is only read: its workspace places file paths, and need not be one a command
    // may be handed.
    let workspace = match &args.parse {
        Some(_) => workspace.canonicalize().map_err(|err| {
            Failure::usage(format!("workspace {}: {err}", workspace.display()))
                .with_hint("give an existing directory with --workspace")
        })?,
        None => crate::sandbox::policy::checked_workspace(&workspace)
            .map_err(|failure| {
                if from_document {
                    failure.with_hint(
                        "it is the run document's `workspace`; give --workspace DIR to run elsewhere",
                    )
                } else {
                    failure
                }
            })?
            .path,
    };

    let report = match &args.parse {
        Some(path) => testrun::parse_file(path, args.framework, &workspace)?,
        None => testrun::run(TestRequest {
            framework: args.framework,
            command: args.command,
            tests: args.tests,
            sandbox: PolicyRequest {
                workspace: workspace.clone(),
                timeout: args.limits.timeout,
                memory_bytes: args.limits.memory,
                pids: args.limits.pids,
                cpus: args.limits.cpus,
                file_size_bytes: FILE_SIZE,
                disk_bytes: None,
                network: args.limits.network,
                env: args.limits.env,
                read_only: args.limits.ro,
                read_write: Vec::new(),
                output: OutputMode::Capture {
                    max_bytes: MAX_OUTPUT,
                },
                allow_degraded: false,
                image: None,
                command: Vec::new(),
                layered: Vec::new(),
                watcher: None,
            },
            caches_of: args.caches_of,
            progress: None,
        })?,
    };
    // The workspace the tests ran in, for the next stage: a --workspace flag overrides the
    // document's.
    if !document.has("workspace") || args.workspace.is_some() {
        document.set_workspace(&workspace);
    }
    let passed = report.outcome == Outcome::Passed;
    // Stopped by SIGINT, SIGTERM, SIGHUP or SIGQUIT: that signal's status, as `sandbox` ends with, so
    // that a caller tells an interruption from failing tests.
    let interrupted = report
        .sandbox
        .as_ref()
        .and_then(|sandbox| sandbox.interrupted);
    document.set_tests(&report);
    write_json(std::io::stdout(), document.as_value(), global.pretty)?;
    Ok(match interrupted {
        Some(signal) => 128 + signal,
        None if passed => 0,
        None => 1,
    })
}
