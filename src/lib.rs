//! autocoder: closed-loop code repair as composable JSON steps.
//!
//! Each subcommand is a thin adapter in `commands/`: it reads the run document
//! (`run_document`, typed sections), calls its stage's one entry point
//! (`forge::fetch::fetch_issue`, `testrun::run`, `heal::run`, `review::run`,
//! `forge::publish::open_pull_request`), writes the stage's section, and maps its failures onto
//! the exit statuses of `error`. The sandbox every step runs untrusted code in is `sandbox`; the
//! rooms at the bottom (`log`, `text`, `sys`, `http`, `workspace`) depend on nothing above them.

mod cli;
mod commands;
mod error;
mod forge;
mod git;
mod heal;
mod http;
mod llm;
mod log;
mod mcp;
mod output;
mod review;
mod run_document;
mod sandbox;
mod secrets;
mod syntax;
mod sys;
mod testmap;
mod testrun;
mod text;
mod tools;
mod workspace;

use std::ffi::OsString;

/// Runs one invocation and returns the process exit status.
pub fn run<I: IntoIterator<Item = OsString>>(args: I) -> i32 {
    // SAFETY: resetting a signal's disposition. Ignored (inherited so from whoever started us),
    // SIGCHLD would have the kernel reap our children (the sandbox's, git, docker) before we
    // could wait for them.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = match cli::Cli::read(&args) {
        Ok(cli) => cli,
        Err(err) => return error::clap_exit(err, &args),
    };
    let name = cli.command.name();
    let global = cli.global;
    let verbosity = if global.quiet {
        log::Verbosity::Quiet
    } else if global.verbose {
        log::Verbosity::Verbose
    } else {
        log::Verbosity::Normal
    };
    log::init(verbosity, global.color);
    if let Some(dir) = &global.directory {
        if let Err(err) = std::env::set_current_dir(dir) {
            return error::report(
                name,
                &error::Failure::usage(format!(
                    "cannot change to directory {}: {err}",
                    dir.display()
                ))
                .with_hint("check the path given to -C"),
            );
        }
    }
    match commands::dispatch(cli.command, &global) {
        Ok(status) => status,
        Err(failure) => error::report(name, &failure),
    }
}
