//! Why a run ended in `error`, in the runner's own words, with what to do about it: a test id
//! that does not exist, a plugin that is not installed, files the sandbox cannot write (a root
//! run's leftovers in a user's workspace, crates cargo downloaded into the host's read-only
//! registry), the runner's own internal error; and why tests that
//! failed may not be at fault: another user's files, the network being off.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::run_document::TestFailure;

/// The reason and, when one fits, a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Explanation {
    pub reason: String,
    pub hint: Option<String>,
}

/// Why the run whose output is `output` (stdout, then stderr) failed without a test result;
/// `root` is the workspace, `selected` whether tests were named with `--tests`.
pub(crate) fn why_error(output: &str, root: &Path, selected: bool) -> Explanation {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("===") && !line.starts_with("---"))
        .collect();
    if let Some(registry) = cargo_registry_read_only(&lines) {
        return registry;
    }
    if let Some(files) = unwritable_files(&lines, root) {
        return files;
    }
    let said = runner_words(&lines);
    let hint = if selected && (said.contains("not found:") || said.contains("no tests to run")) {
        Some("give the id of a test as run-tests reports it (run without --tests to list them)")
    } else if said.contains("Error importing plugin") || said.contains("No module named") {
        Some(
            "install what is missing in the project's environment (its .venv, the activated \
             VIRTUAL_ENV, Poetry's or pipenv's are used), or take it out of the project's \
             configuration",
        )
    } else if said.contains("error: unrecognized arguments") {
        Some(
            "the project's pytest configuration (addopts in pytest.ini, setup.cfg, tox.ini or \
             pyproject.toml) gives options of a plugin its environment does not have (--cov is \
             pytest-cov's): install the plugin there, or run with --command and the options you \
             want",
        )
    } else if said.starts_with("error: failed to download")
        && lines
            .iter()
            .any(|line| line.contains("but --offline was specified"))
    {
        Some(
            "the crate is not in the host's cargo registry and the tests run offline: download \
             the dependencies on the host (cargo fetch in the workspace), then run again",
        )
    } else if said.contains("INTERNALERROR") {
        Some("the runner itself failed: its traceback is in output_tail")
    } else {
        None
    };
    Explanation {
        reason: said,
        hint: hint.map(String::from),
    }
}

/// The line where the runner says what went wrong: pytest's `ERROR:` and the last
/// `INTERNALERROR>` line that names an exception, cargo's `error:`, Node's `Error:`; else the
/// last line it wrote.
fn runner_words(lines: &[&str]) -> String {
    let first = |prefixes: &[&str]| {
        lines.iter().find_map(|line| {
            prefixes
                .iter()
                .any(|prefix| line.starts_with(prefix))
                .then(|| line.to_string())
        })
    };
    // argparse's usage line first, its complaint (`unrecognized arguments: --cov`) after.
    if let Some(complaint) = lines.iter().find(|line| line.contains(": error: ")) {
        return complaint.to_string();
    }
    if let Some(error) = first(&["ERROR: ", "error: ", "fatal: "]) {
        // pytest puts the detail on the next line (`(no match in any of [...])`).
        let at = lines.iter().position(|line| *line == error).unwrap_or(0);
        return match lines.get(at + 1) {
            Some(next) if next.starts_with('(') => format!("{error} {next}"),
            _ => error,
        };
    }
    if let Some(internal) = lines
        .iter()
        .rev()
        .find(|line| line.starts_with("INTERNALERROR>") && line.contains("Error"))
    {
        return internal.to_string();
    }
    lines
        .iter()
        .rev()
        .find(|line| line.contains("Error") || line.contains("error"))
        .or(lines.last())
        .map_or_else(
            || "the runner stopped without a word".into(),
            |line| line.to_string(),
        )
}

/// Files of another user in the workspace that the output says could not be written (whatever
/// the outcome: a test that fails for it fails for no fault of the code).
pub(crate) fn others_files(output: &str, root: &Path) -> Option<Explanation> {
    let lines: Vec<&str> = output.lines().map(str::trim).collect();
    unwritable_files(&lines, root).filter(|found| found.reason.contains("another user"))
}

/// A Go module whose `replace` directive names a directory outside the workspace, which the
/// sandbox does not show: which one, and the flag that shows it.
pub(crate) fn replaced_outside(output: &str, root: &Path) -> Option<Explanation> {
    let line = output.lines().map(str::trim).find(|line| {
        line.contains("replacement directory ") && line.ends_with(" does not exist")
    })?;
    let (_, rest) = line.split_once("replacement directory ")?;
    let directory = rest.strip_suffix(" does not exist")?;
    let host = root.join(directory);
    let (where_, hint) = match std::fs::canonicalize(&host) {
        Ok(found) if !found.starts_with(root) => (
            "outside the workspace, which the sandbox does not show",
            format!("let the tests read it: run-tests --ro {}", found.display()),
        ),
        _ => (
            "which does not exist",
            format!(
                "put the module at {}, or drop the replace directive from go.mod",
                host.display()
            ),
        ),
    };
    Some(Explanation {
        reason: format!("{line} — go.mod replaces a module with {directory}, {where_}"),
        hint: Some(hint),
    })
}

/// A run its timeout stopped, the tests it stopped in, and whether the output was cut (its
/// counts are then of the part kept).
pub(crate) fn timed_out(
    timeout: std::time::Duration,
    running: &[String],
    cut: bool,
) -> Explanation {
    let shown: Vec<&str> = running.iter().take(5).map(String::as_str).collect();
    let during = match shown.len() {
        0 => String::new(),
        1 => format!(" while {} was running", shown[0]),
        _ => format!(" while {} were running", shown.join(", ")),
    };
    Explanation {
        reason: format!(
            "stopped by the timeout of {}{during}{}",
            seconds(timeout),
            if cut {
                "; the output was cut at its cap, so the counts are of the part kept"
            } else {
                ""
            }
        ),
        hint: Some(
            "give more time with --timeout, or run the tests that did not finish alone \
             (--tests) to see whether they hang"
                .into(),
        ),
    }
}

/// `30 s`, `1.5 s`.
fn seconds(duration: std::time::Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

/// Tests that tried to reach past loopback with the network off: the first failure that says
/// so (else a plain line of the output, never a runner's JSON), and the flag that lets them.
pub(crate) fn network_off(failures: &[TestFailure], output: &str) -> Option<Explanation> {
    const SIGNS: [&str; 7] = [
        "Network is unreachable",
        "network is unreachable",
        "ENETUNREACH",
        "Temporary failure in name resolution",
        "EAI_AGAIN",
        // A host's local DNS stub (systemd-resolved) is on the host's loopback, not ours.
        "127.0.0.53:53",
        "module lookup disabled by GOPROXY=off",
    ];
    let says = |text: &str| SIGNS.iter().any(|sign| text.contains(sign));
    let said = failures
        .iter()
        .find_map(|failure| {
            let line = if says(&failure.message) {
                failure.message.as_str()
            } else {
                failure.details.lines().find(|line| says(line))?
            };
            Some(format!("{}: {}", failure.id, line.trim()))
        })
        .or_else(|| {
            output
                .lines()
                .map(str::trim)
                .find(|line| says(line) && !line.starts_with('{'))
                .map(String::from)
        })?;
    let said = crate::text::one_line(&said, 300);
    if said.contains("GOPROXY=off") {
        return Some(Explanation {
            reason: format!("{said} — the network is off, so Go fetches no module"),
            hint: Some(
                "add --network to let Go fetch them, or vendor them in the workspace (go mod \
                 vendor)"
                    .into(),
            ),
        });
    }
    Some(Explanation {
        reason: format!(
            "{said} — the network is off in the sandbox (loopback, 127.0.0.1 and ::1, works)"
        ),
        hint: Some("add --network if the tests must reach other hosts".into()),
    })
}

/// Cargo, with the network on, downloaded crates but could not keep them: the host's cargo home is
/// read-only in the sandbox (the host's own cargo alone writes its registry).
fn cargo_registry_read_only(lines: &[&str]) -> Option<Explanation> {
    if !lines
        .iter()
        .any(|line| line.contains("Read-only file system"))
    {
        return None;
    }
    let failed = lines.iter().find(|line| {
        line.starts_with("error: failed to ") && line.contains("/registry/")
            || line.starts_with("error: failed to download")
    })?;
    Some(Explanation {
        reason: format!(
            "{failed} — cargo cannot write the registry of the host's cargo home, which the \
             sandbox shows read-only"
        ),
        hint: Some(
            "download the dependencies on the host first (cargo fetch in the workspace), then \
             run again"
                .into(),
        ),
    })
}

/// "Permission denied" on files in the workspace that belong to someone else: which files, whose,
/// and what to do.
fn unwritable_files(lines: &[&str], root: &Path) -> Option<Explanation> {
    let denied: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|line| {
            line.contains("Permission denied")
                || line.contains("permission denied")
                || line.contains("Read-only file system")
        })
        .collect();
    let first = *denied.first()?;
    let owner = std::fs::metadata(root).ok()?.uid();
    let mut others: Vec<(String, u32)> = Vec::new();
    for line in &denied {
        for path in paths_in(line) {
            let full = root.join(&path);
            // Only the workspace's: the sandbox's /tmp is its own.
            if !full.starts_with(root) {
                continue;
            }
            // A file that could not be made: its directory is what is not writable.
            let full = if full.symlink_metadata().is_ok() {
                full
            } else {
                match full.parent() {
                    Some(parent) if parent.starts_with(root) => parent.to_path_buf(),
                    _ => continue,
                }
            };
            let Ok(meta) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            let shown = full
                .strip_prefix(root)
                .map_or(path.clone(), |relative| relative.display().to_string());
            if meta.uid() != owner && !others.iter().any(|(seen, _)| *seen == shown) {
                others.push((shown, meta.uid()));
            }
        }
    }
    if others.is_empty() {
        return Some(Explanation {
            reason: first.to_string(),
            hint: Some(
                "the sandbox lets the tests write the workspace and a private /tmp only: point \
                 what they write there (or give the directory with --rw)"
                    .into(),
            ),
        });
    }
    let listed: Vec<String> = others
        .iter()
        .take(5)
        .map(|(path, uid)| format!("{path} (uid {uid})"))
        .collect();
    Some(Explanation {
        reason: format!(
            "{first} — the workspace holds files of another user, which stay read-only to the \
             tests: {}",
            listed.join(", ")
        ),
        hint: Some(format!(
            "give them to the workspace's owner (sudo chown -R {owner} {}) or remove them: \
             a run as another user (root) left them",
            others[0].0
        )),
    })
}

/// The paths a message names: quoted ones (`'/w/x'`, `"x"`), and words that hold a `/`
/// (`/w/target`, `state/last-run:`).
fn paths_in(line: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for quote in ['\'', '"', '`'] {
        let mut parts = line.split(quote);
        parts.next();
        while let Some(inside) = parts.next() {
            if !inside.is_empty() && !inside.contains(' ') {
                paths.push(inside.to_string());
            }
            parts.next();
        }
    }
    paths.extend(
        line.split_whitespace()
            .filter(|word| !word.starts_with(['\'', '"', '`']))
            .map(|word| word.trim_matches(|c: char| matches!(c, ',' | ':' | ';' | '(' | ')')))
            .filter(|word| word.contains('/') && !word.contains("://"))
            .map(String::from),
    );
    paths.dedup();
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runner_s_words_and_a_hint() {
        let root = Path::new("/nonexistent");
        let missing = "collected 0 items\n\nERROR: not found: /w/test_a.py::test_nope\n(no match in any of [<Module test_a.py>])\n";
        let why = why_error(missing, root, true);
        assert_eq!(
            why.reason,
            "ERROR: not found: /w/test_a.py::test_nope (no match in any of [<Module test_a.py>])"
        );
        assert!(why.hint.unwrap().contains("--tests"));
        let plugin =
            "ERROR: Error importing plugin \"nosuchplugin\": No module named 'nosuchplugin'\n";
        let why = why_error(plugin, root, false);
        assert!(why.reason.contains("nosuchplugin") && why.hint.unwrap().contains("install"));
        let internal = "INTERNALERROR> Traceback (most recent call last):\nINTERNALERROR>   File \"x.py\", line 1\nINTERNALERROR> RuntimeError: boom\n";
        assert_eq!(
            why_error(internal, root, false).reason,
            "INTERNALERROR> RuntimeError: boom"
        );
        assert_eq!(
            why_error("", root, false).reason,
            "the runner stopped without a word"
        );
        // pytest 9's words when setup.cfg's addopts has --cov and pytest-cov is missing.
        let options = "ERROR: usage: python -m pytest [options] [file_or_dir] [file_or_dir] [...]\npython -m pytest: error: unrecognized arguments: --cov=calc --cov-report=term\n  inifile: /tmp/covp/setup.cfg\n";
        let why = why_error(options, root, false);
        assert_eq!(
            why.reason,
            "python -m pytest: error: unrecognized arguments: --cov=calc --cov-report=term"
        );
        assert!(why.hint.unwrap().contains("pytest-cov"));
    }

    #[test]
    fn crates_cargo_could_not_keep_are_to_be_fetched_on_the_host() {
        let output = "    Updating crates.io index\nwarning: failed to write cache, path: \
                      /h/.cargo/registry/index/x/.cache/it/oa/itoa, error: Read-only file system \
                      (os error 30)\n  Downloaded itoa v0.4.7\nerror: failed to open \
                      `/h/.cargo/registry/cache/x/itoa-0.4.7.crate`\n\nCaused by:\n  Read-only \
                      file system (os error 30)\n";
        let why = why_error(output, Path::new("/nonexistent"), false);
        assert!(
            why.reason.starts_with("error: failed to open `/h/.cargo/registry/cache/x/itoa-0.4.7.crate` — cargo cannot write"),
            "{}",
            why.reason
        );
        assert!(why.hint.unwrap().contains("cargo fetch"));
        // Offline, the download is refused before anything is written.
        let offline =
            "error: failed to download `itoa v0.4.7`\n\nCaused by:\n  attempting to make \
                       an HTTP request, but --offline was specified\n";
        let why = why_error(offline, Path::new("/nonexistent"), false);
        assert_eq!(why.reason, "error: failed to download `itoa v0.4.7`");
        assert!(why.hint.unwrap().contains("cargo fetch"));
    }

    #[test]
    fn unreachable_hosts_are_put_down_to_the_network_being_off() {
        let python = "E       OSError: [Errno 101] Network is unreachable\n";
        let why = network_off(&[], python).unwrap();
        assert!(why.reason.starts_with(
            "E       OSError: [Errno 101] Network is unreachable — the network is off"
        ));
        assert!(why.hint.unwrap().contains("--network"));
        assert!(network_off(&[], "Error: getaddrinfo EAI_AGAIN example.com").is_some());
        assert!(network_off(&[], "AssertionError: 1 != 2").is_none());
        // A runner's JSON is never the reason: the failure that says it is.
        let json = r#"{"Action":"output","Output":"dial tcp: lookup x: Temporary failure in name resolution"}"#;
        assert!(network_off(&[], json).is_none());
        let failure = TestFailure {
            id: "TestLookup".into(),
            message: "lookup example.com: Temporary failure in name resolution".into(),
            ..TestFailure::default()
        };
        let why = network_off(&[failure], json).unwrap();
        assert!(why.reason.starts_with("TestLookup: lookup example.com"));
    }

    #[test]
    fn paths_are_found_in_messages() {
        assert_eq!(
            paths_in("PermissionError: [Errno 13] Permission denied: '/w/.pytest_cache/v'"),
            ["/w/.pytest_cache/v"]
        );
        assert_eq!(
            paths_in("EACCES: permission denied, open '/w/out.txt'"),
            ["/w/out.txt"]
        );
        assert!(paths_in("mkdir /w/target: Permission denied").contains(&"/w/target".to_string()));
        assert!(
            paths_in("/bin/sh: 1: cannot create state/last-run: Permission denied")
                .contains(&"state/last-run".to_string())
        );
    }
}
