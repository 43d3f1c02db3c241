//! `autocoder mcp` over pipes: the protocol, every tool, every escape, and real clients (the
//! official Python and TypeScript SDKs), one file per concern.

mod clients;
mod commands;
mod confinement;
mod delegate;
mod file_tools;
mod git_tools;
mod protocol;
