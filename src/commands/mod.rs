//! One thin module per subcommand: flags and document in, library calls, document out.

pub(crate) mod fetch_issue;
pub(crate) mod generate;
pub(crate) mod heal;
pub(crate) mod mcp;
pub(crate) mod open_pr;
pub(crate) mod review;
pub(crate) mod run_tests;
pub(crate) mod sandbox;

use crate::cli::{Command, GlobalArgs};
use crate::error::Failure;

/// Runs a parsed command; returns the exit status for success and negative verdicts.
pub(crate) fn dispatch(command: Command, global: &GlobalArgs) -> Result<i32, Failure> {
    match command {
        Command::FetchIssue(args) => fetch_issue::run(args, global),
        Command::Heal(args) => heal::run(args, global),
        Command::Mcp(args) => mcp::run(args),
        Command::OpenPr(args) => open_pr::run(args, global),
        Command::Review(args) => review::run(args, global),
        Command::RunTests(args) => run_tests::run(args, global),
        Command::Sandbox(args) => sandbox::run(args, global),
        Command::Generate(args) => generate::run(args),
        Command::GitReader(args) => crate::git::reader::serve_reader(args.git_dir)
            .map(|()| 0)
            .map_err(Failure::external),
    }
}

impl From<&crate::cli::ModelArgs> for crate::llm::ModelFlags {
    fn from(args: &crate::cli::ModelArgs) -> Self {
        crate::llm::ModelFlags {
            provider: args.provider,
            model: args.model.clone(),
            base_url: args.base_url.clone(),
        }
    }
}
