//! What can go wrong, as a few kinds that map onto exit statuses, with a hint for the user.
//!
//! Pipeline commands exit 2 for bad input and 3 when the outside world failed;
//! `sandbox` follows timeout(1) and env(1) instead (125 for its own failures, 126 and 127 for a
//! command that cannot be executed or found), so a script can tell the sandbox from the command.

use std::fmt;
use std::io::Write;

use crate::log::{colors_enabled, ColorChoice};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Bad flags or bad input: the user can fix the invocation.
    Usage,
    /// Something outside us failed: network, git, the kernel refusing a sandbox layer.
    External,
    /// The command to run does not exist.
    CommandNotFound,
    /// The command exists but cannot be executed.
    CommandNotExecutable,
    /// A test runner (pytest, cargo, ...) is not installed.
    RunnerMissing,
}

/// An error as the user sees it: what happened, and what to do about it.
#[derive(Debug)]
pub(crate) struct Failure {
    pub kind: Kind,
    pub error: anyhow::Error,
    pub hint: Option<String>,
}

impl Failure {
    pub(crate) fn new(kind: Kind, error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            kind,
            error: error.into(),
            hint: None,
        }
    }

    pub(crate) fn usage(message: impl fmt::Display) -> Failure {
        Failure::new(Kind::Usage, anyhow::anyhow!("{message}"))
    }

    pub(crate) fn external(message: impl fmt::Display) -> Failure {
        Failure::new(Kind::External, anyhow::anyhow!("{message}"))
    }

    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Failure {
        self.hint = Some(hint.into());
        self
    }

    /// The exit status for this failure when it ends `command`.
    pub(crate) fn exit_status(&self, command: &str) -> i32 {
        exit_status(self.kind, command)
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure::new(Kind::External, error)
    }
}

fn exit_status(kind: Kind, command: &str) -> i32 {
    if command == "sandbox" {
        return match kind {
            Kind::Usage | Kind::External | Kind::RunnerMissing => 125,
            Kind::CommandNotExecutable => 126,
            Kind::CommandNotFound => 127,
        };
    }
    match kind {
        Kind::Usage => 2,
        Kind::External
        | Kind::CommandNotFound
        | Kind::CommandNotExecutable
        | Kind::RunnerMissing => 3,
    }
}

/// Prints `autocoder <command>: error: ...` (and the hint) on stderr; returns the exit status.
pub(crate) fn report(command: &str, failure: &Failure) -> i32 {
    let message = crate::text::sanitize_for_terminal(&format!("{:#}", failure.error));
    crate::log::error(command, &message, failure.hint.as_deref());
    failure.exit_status(command)
}

/// Reports a command-line parsing error from clap with our exit statuses.
pub(crate) fn clap_exit(err: clap::Error, args: &[std::ffi::OsString]) -> i32 {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = err.print();
            0
        }
        _ => {
            // Parsing failed, so `--color` was not applied: it is looked for here.
            let rendered = err.render();
            let text = if colors_enabled(color_in(args)) {
                rendered.ansi().to_string()
            } else {
                rendered.to_string()
            };
            // clap quotes the value it refused: a URL's credentials are not shown.
            let text = without_credentials(&text);
            let _ = write!(std::io::stderr(), "{text}");
            // clap does not say which subcommand it was parsing; the sandbox's usage errors
            // follow timeout(1), everything else is a plain usage error.
            let is_sandbox = args
                .iter()
                .skip(1)
                .find(|arg| *arg == "sandbox" || *arg == "--");
            let command = if is_sandbox.is_some_and(|arg| arg == "sandbox") {
                "sandbox"
            } else {
                ""
            };
            if command == "sandbox" && err.kind() == ErrorKind::UnknownArgument {
                hint_the_separator(&err, args);
            }
            exit_status(Kind::Usage, command)
        }
    }
}

/// `text` with the `user:password@` of each URL in it masked.
fn without_credentials(text: &str) -> String {
    static URL_CREDENTIALS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    URL_CREDENTIALS
        .get_or_init(|| {
            regex::Regex::new(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/\s'`]*@").expect("valid")
        })
        .replace_all(text, "${1}***@")
        .into_owned()
}

/// The `--color` choice among arguments that did not parse (before any `--`).
fn color_in(args: &[std::ffi::OsString]) -> ColorChoice {
    let mut words = args
        .iter()
        .skip(1)
        .map(|arg| arg.to_string_lossy())
        .take_while(|arg| arg != "--");
    let mut choice = ColorChoice::Auto;
    while let Some(word) = words.next() {
        let value = match word.strip_prefix("--color") {
            Some("") => words.next().map(|value| value.into_owned()),
            Some(rest) => rest.strip_prefix('=').map(String::from),
            None => None,
        };
        match value.as_deref() {
            Some("always") => choice = ColorChoice::Always,
            Some("never") => choice = ColorChoice::Never,
            Some("auto") => choice = ColorChoice::Auto,
            _ => {}
        }
    }
    choice
}

/// `autocoder sandbox ls`: the command was given without the `--` before it.
fn hint_the_separator(err: &clap::Error, args: &[std::ffi::OsString]) {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(word)) = err.get(ContextKind::InvalidArg) else {
        return;
    };
    if word.starts_with('-') || args.iter().any(|arg| arg == "--") {
        return;
    }
    let _ = writeln!(
        std::io::stderr(),
        "  hint: the command goes after `--`: autocoder sandbox [OPTIONS] -- {word} ..."
    );
}
