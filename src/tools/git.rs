//! Git for the tools, run inside the sandbox. The workspace's `.git` is the sandbox's to write, and
//! git obeys much of what it finds there: filter and diff drivers, partial-clone fetches through
//! a remote's upload-pack, submodules with configs of their own, `core.worktree`, `.git` files
//! and alternates that point elsewhere. Switching each off from outside loses to a config swapped
//! between a check and git's own read, so git runs where anything it starts can touch only the
//! workspace and no network. The settings that start programs are still switched off, so that
//! the answer is git's own.

use serde_json::Value;

use super::run_command::in_sandbox;
use super::{Call, Context};
use crate::forge::git::SAFE_CONFIG;
use crate::workspace::jail::{tool_error, ToolError};

/// git's output read at most (the tools cut what they show far below this).
const MAX_OUTPUT: &str = "8M";
const TIMEOUT_SECS: u64 = 60;

/// Runs `git ARGS` in the sandbox at the workspace root, which must be the repository's top;
/// returns its stdout, or what git said as the error.
pub fn run(context: &Context, call: &Call, args: &[&str]) -> Result<String, ToolError> {
    let confined = context.roots.confine(".")?;
    let root = confined.root.to_path_buf();
    if !root
        .join(".git")
        .symlink_metadata()
        .is_ok_and(|meta| meta.is_dir())
    {
        return Err(tool_error(format!(
            "{} is not the top of a git repository (no .git directory in it); the git tools work \
             on a root that is, so start the server with --root at the repository's top",
            root.display()
        )));
    }
    let mut argv = vec!["git".to_string()];
    for setting in SAFE_CONFIG {
        argv.extend(["-c".to_string(), setting.to_string()]);
    }
    argv.extend(args.iter().map(|arg| arg.to_string()));
    let sandbox = in_sandbox(
        confined.root_fd,
        &[
            "--max-output",
            MAX_OUTPUT,
            "--env",
            "GIT_NO_LAZY_FETCH=1",
            "--env",
            "GIT_OPTIONAL_LOCKS=0",
            "--env",
            "GIT_LITERAL_PATHSPECS=1",
            "--env",
            "GIT_TERMINAL_PROMPT=0",
        ],
        argv,
        None,
        call,
        TIMEOUT_SECS,
    )?;
    let text = |key: &str| sandbox.get(key).and_then(Value::as_str).unwrap_or_default();
    if sandbox.get("exit_code").and_then(Value::as_i64) != Some(0) {
        let said = text("stderr").trim();
        return Err(if said.contains("not a git repository") {
            tool_error(format!("{} is not a git repository", root.display()))
        } else if sandbox.get("timed_out").and_then(Value::as_bool) == Some(true) {
            tool_error(format!("git took longer than {TIMEOUT_SECS} s; stopped"))
        } else {
            tool_error(format!(
                "git {} failed: {said}",
                args.first().unwrap_or(&"")
            ))
        });
    }
    if sandbox.get("stdout_truncated").and_then(Value::as_bool) == Some(true) {
        return Err(tool_error(format!(
            "git's answer passed {MAX_OUTPUT}B; ask about fewer paths"
        )));
    }
    Ok(text("stdout").to_string())
}
