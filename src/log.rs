//! Messages on stderr: warnings, details (`-v`), refusals and errors, each prefixed
//! `autocoder <command>:`, coloured only when `--color` (or a terminal, with `auto`, and no
//! `NO_COLOR`) allows. On a terminal a long command's steps share one live line, rewritten in
//! place, which any other message clears first; elsewhere each step is a line of its own. Every
//! layer of the crate reports through here, so it depends on nothing above it; the global flags
//! set it once, before a command runs.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// When to colour messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// How much is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Verbosity {
    /// Errors and refusals only (`-q`).
    Quiet,
    Normal,
    /// Each step explained (`-v`).
    Verbose,
}

/// The verbosity, as its position in `Verbosity`.
static VERBOSITY: AtomicU8 = AtomicU8::new(Verbosity::Normal as u8);
/// The colour choice, as its position in `ColorChoice`.
static COLOR: AtomicU8 = AtomicU8::new(ColorChoice::Auto as u8);
/// A live line is on the terminal (the cursor at its end).
static LIVE: AtomicBool = AtomicBool::new(false);
/// A live line is cut to this many characters, so that it never wraps (which `\r` cannot undo)
/// on a terminal of the usual 80 columns.
const LIVE_WIDTH: usize = 79;

/// Sets what is said and how; called once from the global flags.
pub(crate) fn init(verbosity: Verbosity, color: ColorChoice) {
    VERBOSITY.store(verbosity as u8, Ordering::Relaxed);
    COLOR.store(color as u8, Ordering::Relaxed);
}

fn verbosity() -> Verbosity {
    match VERBOSITY.load(Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        1 => Verbosity::Normal,
        _ => Verbosity::Verbose,
    }
}

fn color_choice() -> ColorChoice {
    match COLOR.load(Ordering::Relaxed) {
        1 => ColorChoice::Always,
        2 => ColorChoice::Never,
        _ => ColorChoice::Auto,
    }
}

/// A warning (not with -q).
pub(crate) fn warn(command: &str, message: &str) {
    if verbosity() >= Verbosity::Normal {
        let label = coloured("warning", "\x1b[33m");
        say(&format!("autocoder {command}: {label}: {message}"));
    }
}

/// What the command is doing, when it may look stuck (not with -q).
pub(crate) fn info(command: &str, message: &str) {
    if verbosity() >= Verbosity::Normal {
        say(&format!("autocoder {command}: {message}"));
    }
}

/// A step of a long command (not with -q): the live line on a terminal, a line elsewhere.
pub(crate) fn step(command: &str, message: &str) {
    if verbosity() < Verbosity::Normal {
        return;
    }
    if std::io::stderr().is_terminal() {
        live(command, message);
    } else {
        say(&format!("autocoder {command}: {message}"));
    }
}

/// The step under way, with more said (its time so far): on a terminal only.
pub(crate) fn step_update(command: &str, message: &str) {
    if verbosity() >= Verbosity::Normal && std::io::stderr().is_terminal() {
        live(command, message);
    }
}

fn live(command: &str, message: &str) {
    let line: String = format!("autocoder {command}: {message}")
        .chars()
        .filter(|c| !c.is_control())
        .take(LIVE_WIDTH)
        .collect();
    let _ = write!(std::io::stderr().lock(), "\r\x1b[2K{line}");
    LIVE.store(true, Ordering::Relaxed);
}

/// A detail (only with -v).
pub(crate) fn note(command: &str, message: &str) {
    if verbosity() >= Verbosity::Verbose {
        say(&format!("autocoder {command}: {message}"));
    }
}

/// Why a command refused its work while still writing its result (exit 1): shown even with -q,
/// which keeps what went wrong.
pub(crate) fn refusal(command: &str, message: &str) {
    let label = coloured("refused", "\x1b[31m");
    say(&format!("autocoder {command}: {label}: {message}"));
}

/// An error that ends the command, with what to do about it.
pub(crate) fn error(command: &str, message: &str, hint: Option<&str>) {
    let label = coloured("error", "\x1b[31m");
    say(&format!("autocoder {command}: {label}: {message}"));
    if let Some(hint) = hint {
        say(&format!("  hint: {hint}"));
    }
}

/// One line on stderr, written whole, in place of the live line if one is showing.
fn say(line: &str) {
    let clear = match LIVE.swap(false, Ordering::Relaxed) {
        true => "\r\x1b[2K",
        false => "",
    };
    let _ = writeln!(std::io::stderr().lock(), "{clear}{line}");
}

/// Clears the live line, if one is showing: before the command ends.
pub(crate) fn end_live() {
    if LIVE.swap(false, Ordering::Relaxed) {
        let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
    }
}

/// `label` in bold `colour` when colour is allowed.
fn coloured(label: &str, colour: &str) -> String {
    if colors_enabled(color_choice()) {
        format!("{colour}\x1b[1m{label}\x1b[0m")
    } else {
        label.to_string()
    }
}

/// Whether messages on stderr may be coloured under `choice`.
pub(crate) fn colors_enabled(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stderr().is_terminal()
        }
    }
}
