//! One thin module per subcommand: flags and document in, library calls, document out.

pub mod fetch_issue;
pub mod generate;
pub mod mcp;
pub mod open_pr;
pub mod run_tests;
pub mod sandbox;

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::cli::{ColorChoice, Command, GlobalArgs};
use crate::error::Failure;

/// 0 quiet, 1 normal, 2 verbose; set once from the global flags.
static VERBOSITY: AtomicU8 = AtomicU8::new(1);

/// The `--color` choice, set once from the global flags; whether stderr is a terminal is asked
/// only when something is printed.
static COLOR: OnceLock<ColorChoice> = OnceLock::new();

/// Runs a parsed command; returns the exit status for success and negative verdicts.
pub fn dispatch(command: Command, global: &GlobalArgs) -> Result<i32, Failure> {
    VERBOSITY.store(
        if global.quiet {
            0
        } else if global.verbose {
            2
        } else {
            1
        },
        Ordering::Relaxed,
    );
    let _ = COLOR.set(global.color);
    match command {
        Command::FetchIssue(args) => fetch_issue::run(args, global),
        Command::Mcp(args) => mcp::run(args),
        Command::OpenPr(args) => open_pr::run(args, global),
        Command::RunTests(args) => run_tests::run(args, global),
        Command::Sandbox(args) => sandbox::run(args, global),
        Command::Generate(args) => generate::run(args),
        Command::GitReader(args) => crate::tools::git::serve_reader(args.git_dir)
            .map(|()| 0)
            .map_err(Failure::external),
    }
}

/// Why a command refused its work while still writing its result (exit 1), on stderr: shown
/// even with -q, which keeps what went wrong.
pub fn refusal(command: &str, message: &str) {
    let label = coloured("refused", "\x1b[31m");
    let _ = writeln!(std::io::stderr(), "autocoder {command}: {label}: {message}");
}

/// A warning on stderr (not with -q).
pub fn warn(command: &str, message: &str) {
    if VERBOSITY.load(Ordering::Relaxed) >= 1 {
        let label = coloured("warning", "\x1b[33m");
        let _ = writeln!(std::io::stderr(), "autocoder {command}: {label}: {message}");
    }
}

/// `label` in bold `colour` when `--color` (or a terminal, with `auto`) allows it.
fn coloured(label: &str, colour: &str) -> String {
    let choice = COLOR.get().copied().unwrap_or(ColorChoice::Auto);
    if crate::error::colors_enabled(choice) {
        format!("{colour}\x1b[1m{label}\x1b[0m")
    } else {
        label.to_string()
    }
}

/// A detail on stderr (only with -v).
pub fn note(command: &str, message: &str) {
    if VERBOSITY.load(Ordering::Relaxed) >= 2 {
        let _ = writeln!(std::io::stderr(), "autocoder {command}: {message}");
    }
}
