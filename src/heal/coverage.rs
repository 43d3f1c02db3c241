//! Which lines the failing tests ran, for the offline engine's ranking: a Python suite's per-test
//! line coverage (coverage.py's test-function contexts), scored by Ochiai, so that a line run by
//! every failing test and few passing ones is tried first. Measured once, in heal's copy, when the
//! project's Python can import `coverage` and the suite is small (tracing slows it several times);
//! otherwise there is none and the frames alone rank.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::baseline::{run_as, Baseline};
use super::tree::Tree;
use super::Settings;
use crate::run_document::{Framework, Outcome};
use crate::testrun::unittest::dotted;

/// Suites that took longer at the baseline are not measured.
const MAX_SUITE: Duration = Duration::from_secs(20);

/// The suspiciousness of a line run only as its module loaded, outside every test.
pub(super) const LOADED: f64 = 0.01;

/// Per file, each executable line's suspiciousness, 0 (no failing test ran it) to 1.
#[derive(Debug)]
pub(crate) struct Spectrum {
    files: BTreeMap<String, BTreeMap<usize, f64>>,
    /// Each file's number of lines when measured.
    line_counts: BTreeMap<String, usize>,
}

impl Spectrum {
    /// The suspiciousness of `line` of `path`: its own, or the statement's it continues (the
    /// closest executable line above); None for a file not measured.
    pub(crate) fn at(&self, path: &str, line: usize) -> Option<f64> {
        let lines = self.files.get(path)?;
        Some(lines.range(..=line).next_back().map_or(0.0, |(_, s)| *s))
    }

    /// The highest suspiciousness on lines `first..=last` of `path`.
    pub(crate) fn highest(&self, path: &str, first: usize, last: usize) -> Option<f64> {
        let lines = self.files.get(path).filter(|_| first <= last)?;
        Some(
            lines
                .range(first..=last)
                .map(|(_, s)| *s)
                .fold(0.0, f64::max),
        )
    }

    /// The spectrum of the files whose lines are still where they were measured (as many as
    /// then): a kept change that adds or removes lines leaves its file unranked.
    pub(crate) fn aligned(&self, tree: &Tree) -> Spectrum {
        let files = self
            .files
            .iter()
            .filter(|(path, _)| {
                let count = |text: Option<String>| text.map(|text| text.lines().count());
                let now = tree.read(path).ok().and_then(count);
                now.is_some() && now == self.line_counts.get(*path).copied()
            })
            .map(|(path, lines)| (path.clone(), lines.clone()))
            .collect();
        Spectrum {
            files,
            line_counts: self.line_counts.clone(),
        }
    }
}

/// coverage.py's JSON report (`coverage json --show-contexts`), the parts read.
#[derive(Deserialize)]
struct Report {
    files: BTreeMap<String, FileReport>,
}

#[derive(Deserialize)]
struct FileReport {
    executed_lines: Vec<usize>,
    missing_lines: Vec<usize>,
    /// Line number → the contexts (`test_shop.TestCart.test_total`) that ran it.
    #[serde(default)]
    contexts: BTreeMap<String, Vec<String>>,
}

/// The suite's spectrum in `tree` (in the state the baseline ran), when it can be measured; Err:
/// the signal that stopped the run.
pub(super) fn measure(
    request: &Settings,
    tree: &Tree,
    baseline: &Baseline,
    deadline: Instant,
) -> Result<Option<Spectrum>, i32> {
    let report = &baseline.report;
    let python = matches!(report.framework, Framework::Pytest | Framework::Unittest);
    let timeout = Duration::from_millis(report.duration_ms) * 4 + Duration::from_secs(10);
    // Not worth more than a quarter of the repair's time left.
    let left = deadline.saturating_duration_since(Instant::now());
    if !python
        || report.outcome != Outcome::TestsFailed
        || Duration::from_millis(report.duration_ms) > MAX_SUITE
        || timeout * 4 > left
    {
        return Ok(None);
    }
    let mut interrupted = None;
    // The runner's own command, traced: `python3 -m coverage run --rcfile=… -m pytest …`.
    let Some(module) = report.command.iter().position(|word| word == "-m") else {
        return Ok(None);
    };
    let dir_name = format!(".autocoder-coverage-{}", std::process::id());
    let dir = tree.path().join(&dir_name);
    // A fresh directory of heal's own: never one the tests left (or a link they made), and no
    // process of theirs outlives its run (the sandbox's PID namespace) to swap it.
    if std::fs::create_dir(&dir).is_err() {
        return Ok(None);
    }
    let measured = (|| {
        let rc = format!("{dir_name}/rc");
        std::fs::write(
            dir.join("rc"),
            format!(
                "[run]\ndynamic_context = test_function\nsource = .\nrelative_files = true\n\
                 data_file = {dir_name}/data\n"
            ),
        )
        .ok()?;
        let command = traced_command(&report.command, module, &dir_name, &rc);
        let run = run_as(
            request,
            tree,
            Some((report.framework, command)),
            Vec::new(),
            timeout,
            None,
        )
        .ok()?;
        interrupted = run.sandbox.and_then(|sandbox| sandbox.interrupted);
        // Through the copy's jail: the tests may have left a link or a FIFO in its place.
        let text = tree.read(&format!("{dir_name}/report.json")).ok()??;
        let report: Report = serde_json::from_str(&text).ok()?;
        spectrum_of(&report, baseline, tree)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(signal) = interrupted {
        return Err(signal);
    }
    if measured.is_some() {
        crate::log::note(
            "heal",
            "candidates ranked by the tests' line coverage (coverage.py)",
        );
    }
    Ok(measured)
}

/// The spectrum of coverage.py's `report` for the baseline's steadily failing tests, with the
/// line counts of the files it names.
fn spectrum_of(report: &Report, baseline: &Baseline, tree: &Tree) -> Option<Spectrum> {
    let failing: Vec<String> = baseline
        .steady_failing()
        .iter()
        .map(|id| dotted(id))
        .collect();
    let mut spectrum = spectrum(report, &failing)?;
    for path in spectrum.files.keys() {
        if let Ok(Some(text)) = tree.read(path) {
            spectrum
                .line_counts
                .insert(path.clone(), text.lines().count());
        }
    }
    Some(spectrum)
}

/// The runner's `command` (its `-m` at `module`) run under coverage.py with the settings in
/// `rc`, then its JSON report written to `dir_name/report.json`, as one shell command.
fn traced_command(command: &[String], module: usize, dir_name: &str, rc: &str) -> String {
    let interpreter = &command[..module];
    let traced: Vec<String> = interpreter
        .iter()
        .cloned()
        .chain(["-m", "coverage", "run", "--rcfile", rc].map(String::from))
        .chain(command[module..].iter().cloned())
        .collect();
    let json: Vec<String> = interpreter
        .iter()
        .cloned()
        .chain(
            [
                "-m",
                "coverage",
                "json",
                "-q",
                "--show-contexts",
                "--rcfile",
                rc,
            ]
            .map(String::from),
        )
        .chain(["-o".to_string(), format!("{dir_name}/report.json")])
        .collect();
    format!(
        "{}; {}",
        shell_words::join(&traced),
        shell_words::join(&json)
    )
}

/// Ochiai over the report's contexts: a context is failing when it names one of `failing`
/// (dotted ids). None unless every failing test has a context of its own.
fn spectrum(report: &Report, failing: &[String]) -> Option<Spectrum> {
    let contexts: BTreeSet<&str> = report
        .files
        .values()
        .flat_map(|file| file.contexts.values().flatten())
        .map(String::as_str)
        .filter(|context| !context.is_empty())
        .collect();
    let failed: BTreeSet<&str> = contexts
        .into_iter()
        .filter(|context| failing.iter().any(|id| same_test(id, context)))
        .collect();
    // A failing test with no context of its own (a method it inherits, a fixture that failed)
    // ran lines no one can name: then none is ruled out.
    let all_found = failing
        .iter()
        .all(|id| failed.iter().any(|context| same_test(id, context)));
    if failed.is_empty() || !all_found {
        return None;
    }
    let total_failed = failed.len() as f64;
    let mut files = BTreeMap::new();
    for (path, file) in &report.files {
        // A module no test ran here (one run in a subprocess, say) is not measured.
        if file.executed_lines.is_empty() {
            continue;
        }
        let mut lines: BTreeMap<usize, f64> = file
            .executed_lines
            .iter()
            .chain(&file.missing_lines)
            .map(|line| (*line, 0.0))
            .collect();
        for (line, contexts) in &file.contexts {
            let Ok(line) = line.parse::<usize>() else {
                continue;
            };
            let fails = contexts
                .iter()
                .filter(|c| failed.contains(c.as_str()))
                .count() as f64;
            let tests = contexts.iter().filter(|c| !c.is_empty()).count() as f64;
            if fails > 0.0 {
                lines.insert(line, fails / (total_failed * tests).sqrt());
            } else if contexts.iter().any(String::is_empty) {
                // Run as the module loaded (a constant the tests read): not ruled out.
                lines.insert(line, LOADED);
            }
        }
        files.insert(path.clone(), lines);
    }
    Some(Spectrum {
        files,
        line_counts: BTreeMap::new(),
    })
}

/// Whether a dotted id and a context name the same test: equal, or one ends with the other (a
/// context names the module as Python imported it, `test_a` for `tests/test_a.py`).
fn same_test(id: &str, context: &str) -> bool {
    let ends = |long: &str, short: &str| {
        long.strip_suffix(short)
            .is_some_and(|head| head.is_empty() || head.ends_with('.'))
    };
    ends(id, context) || ends(context, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_ids_name_their_contexts() {
        assert!(same_test(
            "tests.test_cart.test_total",
            "test_cart.test_total"
        ));
        assert!(same_test("test_cart.test_total", "test_cart.test_total"));
        assert!(!same_test(
            "tests.test_cart.test_total",
            "test_cart.test_total_empty"
        ));
        assert!(!same_test(
            "tests.test_cart.test_total",
            "est_cart.test_total"
        ));
    }

    #[test]
    fn a_line_only_failing_tests_run_ranks_first() {
        let report: Report = serde_json::from_str(
            r#"{"files": {"cart.py": {"executed_lines": [1, 2, 3, 5], "missing_lines": [7],
                "contexts": {"1": [""], "2": ["test_cart.test_a", "test_cart.test_b"],
                             "3": ["test_cart.test_b"], "5": ["test_cart.test_a"]}}}}"#,
        )
        .unwrap();
        let spectrum = spectrum(&report, &["test_cart.test_b".to_string()]).unwrap();
        assert_eq!(spectrum.at("cart.py", 3), Some(1.0));
        assert_eq!(spectrum.at("cart.py", 4), Some(1.0), "continues line 3");
        assert!((spectrum.at("cart.py", 2).unwrap() - 0.5f64.sqrt()).abs() < 1e-9);
        assert_eq!(spectrum.at("cart.py", 5), Some(0.0));
        assert_eq!(spectrum.at("cart.py", 7), Some(0.0));
        assert_eq!(spectrum.at("cart.py", 1), Some(LOADED));
        assert_eq!(spectrum.highest("cart.py", 3, 2), None);
        assert_eq!(spectrum.highest("cart.py", 4, 7), Some(0.0));
        assert_eq!(spectrum.at("other.py", 1), None);
        assert!(super::spectrum(&report, &["test_cart.test_c".to_string()]).is_none());
    }
}
