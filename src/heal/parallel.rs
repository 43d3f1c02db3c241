//! A search's candidates tested at once, each in a copy of its own and a process of its own,
//! forked from this one while it has a single thread: the sandbox forks again, which a process
//! with threads must not, and each child then runs exactly the code a lone candidate does. A
//! child hands its result back in a file beside its copy and ends with `_exit`, so what it
//! inherited (the copies, the events file) stays the parent's. A signal the parent gets is
//! passed on to the children, whose sandboxes then stop their runs as they would in the parent.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::tree::Tree;
use crate::error::Failure;
use crate::sandbox::supervise::TerminationSignals;

/// What `work` gave for each tree, in order, and the signal that came meanwhile.
pub(super) fn each<T: Serialize + DeserializeOwned>(
    trees: &[&Tree],
    signals: &TerminationSignals,
    work: impl Fn(&Tree) -> Result<T, Failure>,
) -> (Vec<Result<T, Failure>>, Option<i32>) {
    if !single_threaded() {
        return (trees.iter().map(|tree| work(tree)).collect(), None);
    }
    let mut started = Vec::new();
    for tree in trees {
        let file = tree.beside("result.json");
        let _ = std::fs::remove_file(&file);
        // SAFETY: this process has a single thread (checked above), so the child may run any
        // code; it leaves by `_exit`, running no destructor of what it shares with the parent.
        match unsafe { libc::fork() } {
            0 => {
                let result = catch_unwind(AssertUnwindSafe(|| work(tree)));
                let value = match result {
                    Ok(Ok(value)) => json!({"ok": value}),
                    Ok(Err(failure)) => {
                        json!({"error": format!("{:#}", failure.error), "hint": failure.hint})
                    }
                    Err(_) => json!({"error": "the candidate's test process panicked"}),
                };
                let written = std::fs::write(&file, value.to_string()).is_ok();
                // SAFETY: ends the child at once, as said above.
                unsafe { libc::_exit(if written { 0 } else { 1 }) }
            }
            -1 => started.push(None),
            pid => started.push(Some((pid, file))),
        }
    }
    let signal = wait_all(&started, signals);
    let results = started
        .into_iter()
        .zip(trees)
        .map(|(child, tree)| match child {
            Some((_, file)) => read_result(&file),
            // No process could be started for it: tested here instead, after the others.
            None => work(tree),
        })
        .collect();
    (results, signal)
}

/// Waits for every child to end; a signal that comes meanwhile is passed on to those still
/// running, and returned.
fn wait_all(
    children: &[Option<(libc::pid_t, PathBuf)>],
    signals: &TerminationSignals,
) -> Option<i32> {
    let mut running: Vec<libc::pid_t> = children.iter().flatten().map(|(pid, _)| *pid).collect();
    let mut signal = None;
    while !running.is_empty() {
        running.retain(|pid| {
            let mut status = 0;
            // SAFETY: our own child, reaped here only.
            unsafe { libc::waitpid(*pid, &mut status, libc::WNOHANG) == 0 }
        });
        if let Some(got) = signals.take() {
            for pid in &running {
                // SAFETY: our own child, not reaped yet.
                unsafe { libc::kill(*pid, got) };
            }
            signal.get_or_insert(got);
        }
        if !running.is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    signal
}

fn read_result<T: DeserializeOwned>(file: &Path) -> Result<T, Failure> {
    let lost = || Failure::external("a candidate's test process ended without a result");
    let text = std::fs::read_to_string(file).map_err(|_| lost())?;
    let _ = std::fs::remove_file(file);
    let mut value: Value = serde_json::from_str(&text).map_err(|_| lost())?;
    if let Some(ok) = value.get_mut("ok") {
        return serde_json::from_value(ok.take()).map_err(|_| lost());
    }
    let message = value["error"].as_str().unwrap_or("unknown").to_string();
    let failure = Failure::external(message);
    Err(match value["hint"].as_str() {
        Some(hint) => failure.with_hint(hint),
        None => failure,
    })
}

/// Whether this process has a single thread, and so may fork and go on in the child.
pub(super) fn single_threaded() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.count() == 1)
}
