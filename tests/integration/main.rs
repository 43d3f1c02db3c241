//! The integration tests: one binary (see Cargo.toml), a module per command.

mod cli;
mod docker;
mod fake_github;
mod fetch_issue;
mod mcp;
mod open_pr;
mod run_tests;
mod sandbox;
mod sandbox_attacks;
mod sandbox_limits;
mod util;
