//! The integration tests: one binary (see Cargo.toml), a module per command (and per concern
//! for the larger ones), with shared helpers: the `Test` builder (`util`), fixture repositories
//! (`git_fixtures`), an MCP session client (`mcp_session`) and a fake HTTP server for GitHub and
//! the model providers (`fake_server`).

mod cli;
mod docker;
mod fake_server;
mod fetch_issue;
mod git_fixtures;
mod heal;
mod heal_mutate;
mod heal_task;
mod heal_tools;
mod heal_warm;
mod mcp;
mod mcp_session;
mod open_pr;
mod python_envs;
mod review;
mod run_tests;
mod sandbox;
mod sandbox_attacks;
mod sandbox_limits;
mod util;
mod wire;
