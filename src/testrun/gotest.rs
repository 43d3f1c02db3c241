//! `go test -json`: one JSON event per line, read as a stream. Ids are test names as `-run`
//! takes them (`TestParse`, `TestParse/empty_input`). Before Go 1.24 a build failure arrives as
//! plain lines (`FAIL pkg [build failed]`) among the events.
//!
//! Exit codes: 0 passed (also when no test ran), 1 failures, 2 build failure (1 on older Go).

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

use super::frames::project_relative;
use super::report::{for_each_line, Parsed, MAX_DETAILS};
use crate::run_document::TestFailure;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Event {
    action: String,
    #[serde(default)]
    package: String,
    #[serde(default)]
    test: Option<String>,
    #[serde(default)]
    output: Option<String>,
}

#[derive(Default)]
struct TestState {
    action: String,
    output: String,
}

pub(crate) fn parse_log<R: BufRead>(input: R, root: Option<&Path>) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    let module = root.and_then(module_path);
    // Test results in the order they finished, with their output.
    let mut tests: Vec<(String, String)> = Vec::new();
    // Tests in the order they started.
    let mut started: Vec<(String, String)> = Vec::new();
    let mut states = States::new();
    let mut build = BuildOutput::default();
    for_each_line(input, |line| {
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            // Compiler output and `FAIL pkg [build failed]` are plain lines before Go 1.24.
            if !line.starts_with("ok ") {
                build.line(line);
            }
            return;
        };
        let Some(test) = event.test else {
            // Package-level output: a build failure in Go 1.24+ comes as events too.
            if let Some(output) = event.output.as_deref() {
                if event.action == "build-output" || output.contains(" failed]") {
                    output.lines().for_each(|line| build.line(line));
                }
            }
            return;
        };
        let state = states
            .entry((event.package.clone(), test.clone()))
            .or_default();
        match event.action.as_str() {
            "output" => {
                if let Some(output) = event.output {
                    if state.output.len() < MAX_DETAILS * 2 {
                        state.output.push_str(&output);
                    }
                }
            }
            "run" => {
                state.action = event.action.clone();
                started.push((event.package, test));
            }
            "pass" | "fail" | "skip" => {
                state.action = event.action.clone();
                tests.push((event.package, test));
            }
            _ => {}
        }
    })?;
    parsed.running = still_running(&started, &states);
    count_innermost(&mut parsed, &tests, &states, module.as_deref(), root);
    build_failures(&mut parsed, &build, root);
    Ok(parsed)
}

/// Keyed by (package, test).
type States = HashMap<(String, String), TestState>;

/// Tests that started and did not end (the run was stopped): the innermost ones, as a running
/// subtest's parent is running too.
fn still_running(started: &[(String, String)], states: &States) -> Vec<String> {
    let unfinished: Vec<&(String, String)> = started
        .iter()
        .filter(|key| states[*key].action == "run")
        .collect();
    let parents: HashSet<(&str, &str)> = unfinished
        .iter()
        .flat_map(|(package, test)| {
            test.match_indices('/')
                .map(move |(at, _)| (package.as_str(), &test[..at]))
        })
        .collect();
    unfinished
        .iter()
        .filter(|(package, test)| !parents.contains(&(package.as_str(), test.as_str())))
        .map(|(_, test)| test.clone())
        .collect()
}

/// The results of `tests` (in the order they finished) counted and their failures reported:
/// a parent test fails with its subtests, so only the innermost ones are.
fn count_innermost(
    parsed: &mut Parsed,
    tests: &[(String, String)],
    states: &States,
    module: Option<&str>,
    root: Option<&Path>,
) {
    // Which tests have subtests (`T/sub`, at any depth), and whether one of them failed. The
    // names starting with `T/` lie together in sorted order (from `T/` to just before `T0`),
    // so a search finds them and a running count of failures says whether one failed
    // (comparing every pair, or hashing every prefix, was quadratic).
    let mut sorted: Vec<(&str, &str, bool)> = tests
        .iter()
        .map(|(package, test)| {
            let failed = states[&(package.clone(), test.clone())].action == "fail";
            (package.as_str(), test.as_str(), failed)
        })
        .collect();
    sorted.sort_unstable();
    let mut failures_before = vec![0usize];
    for &(_, _, failed) in &sorted {
        failures_before.push(failures_before.last().unwrap() + usize::from(failed));
    }
    let subtests = |package: &str, test: &str| {
        let (from, to) = (format!("{test}/"), format!("{test}0"));
        let start = sorted.partition_point(|&(p, t, _)| (p, t) < (package, from.as_str()));
        let end = sorted.partition_point(|&(p, t, _)| (p, t) < (package, to.as_str()));
        (end > start).then(|| failures_before[end] > failures_before[start])
    };
    for (package, test) in tests {
        let children = subtests(package, test);
        let state = &states[&(package.clone(), test.clone())];
        if children.is_some() && state.action != "fail" {
            continue;
        }
        let failed_children = children == Some(true);
        match state.action.as_str() {
            "pass" => parsed.counts.passed += 1,
            "skip" => parsed.counts.skipped += 1,
            "fail" if failed_children => {}
            "fail" => {
                parsed.counts.failed += 1;
                let dir = package_dir(package, module);
                parsed.push_failure(failure(test, &state.output, &dir, root));
            }
            _ => {}
        }
    }
}

/// Each package that does not build as a failure of its own, with the compiler's words for it
/// (when the output holds them: before Go 1.24 they went to stderr).
fn build_failures(parsed: &mut Parsed, build: &BuildOutput, root: Option<&Path>) {
    for package in &build.failed {
        let said = build.said_about(package);
        let message = said
            .lines()
            .find(|l| l.contains(".go:"))
            .map(|l| l.trim().to_string())
            .unwrap_or_else(|| {
                format!("{package} does not build (the compiler's messages are not in this output)")
            });
        let location = said
            .lines()
            .find_map(|l| source_location(l.trim(), "", root));
        parsed.build_failed = true;
        parsed.build_error.get_or_insert_with(|| message.clone());
        parsed.push_failure(TestFailure {
            id: package.clone(),
            file: location.as_ref().map(|l| l.0.clone()),
            line: location.map(|l| l.1),
            kind: Some("compile_error".into()),
            message,
            details: said,
        });
    }
}

/// What `go test` said outside the tests' events: the compiler's messages, each section under
/// its `# pkg [pkg.test]` header, and the packages that failed to build (`FAIL pkg [build
/// failed]`, or `[setup failed]`).
#[derive(Default)]
struct BuildOutput {
    /// (package, what was said under its header), in order.
    sections: Vec<(String, String)>,
    failed: Vec<String>,
}

impl BuildOutput {
    fn line(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("FAIL") {
            let rest = rest.trim();
            if let Some(package) = rest
                .strip_suffix("[build failed]")
                .or_else(|| rest.strip_suffix("[setup failed]"))
            {
                let package = package.trim().to_string();
                if !self.failed.contains(&package) {
                    self.failed.push(package);
                }
            }
            return;
        }
        if let Some(header) = line.strip_prefix("# ") {
            let package = header.split(' ').next().unwrap_or(header).to_string();
            self.sections.push((package, String::new()));
            return;
        }
        if line.trim().is_empty() {
            return;
        }
        if self.sections.is_empty() {
            self.sections.push((String::new(), String::new()));
        }
        let (_, text) = self.sections.last_mut().expect("a section");
        if text.len() < MAX_DETAILS {
            text.push_str(line);
            text.push('\n');
        }
    }

    /// What the compiler said about `package` (or, with no header naming it, all it said).
    fn said_about(&self, package: &str) -> String {
        let own: String = self
            .sections
            .iter()
            .filter(|(name, _)| name == package)
            .map(|(_, text)| text.as_str())
            .collect();
        if own.is_empty()
            && !self
                .sections
                .iter()
                .any(|(name, _)| self.failed.contains(name))
        {
            self.sections
                .iter()
                .map(|(_, text)| text.as_str())
                .collect()
        } else {
            own
        }
    }
}

fn failure(test: &str, output: &str, dir: &str, root: Option<&Path>) -> TestFailure {
    let mut failure = TestFailure {
        id: test.to_string(),
        details: output.to_string(),
        ..TestFailure::default()
    };
    if let Some(panic) = output.lines().find(|l| l.starts_with("panic: ")) {
        failure.kind = Some("panic".into());
        failure.message = panic
            .trim_start_matches("panic: ")
            .trim_end_matches(" [recovered]")
            .to_string();
        // The first frame of the stack inside the project: `\t/abs/path/file.go:12 +0x1d`.
        if let Some((file, line)) = output
            .lines()
            .filter(|l| l.starts_with('\t'))
            .find_map(|l| {
                let location = l.trim().split(' ').next()?;
                source_location(location, "", root)
            })
        {
            failure.file = Some(file);
            failure.line = Some(line);
        }
        return failure;
    }
    // `    math_test.go:12: expected 2, got 3`: t.Errorf's location and message. t.Log writes
    // the same form; logs usually come before the check that fails (and t.Fatal ends the
    // test), so the last such line is taken.
    for line in output.lines().rev() {
        let text = line.trim();
        if let Some((location, message)) = text.split_once(": ") {
            if let Some((file, number)) = source_location(location, dir, root) {
                failure.file = Some(file);
                failure.line = Some(number);
                failure.kind = Some("test_failure".into());
                failure.message = message.to_string();
                break;
            }
        }
    }
    failure
}

/// `file.go:12` (relative to the package's directory `dir`) or `/abs/file.go:12:5` → (path in
/// the project, 12).
fn source_location(text: &str, dir: &str, root: Option<&Path>) -> Option<(String, u32)> {
    let text = text.trim_end_matches(':');
    let (file, rest) = text.split_once(".go:")?;
    let line = rest.split(':').next()?.parse().ok()?;
    let file = format!("{file}.go");
    let file = file.trim_start_matches("./");
    let path = if file.starts_with('/') || dir.is_empty() {
        file.to_string()
    } else {
        format!("{dir}/{file}")
    };
    Some((project_relative(&path, root)?, line))
}

/// The module path from `go.mod`.
fn module_path(root: &Path) -> Option<String> {
    let text = super::detect::read_project_file(root, "go.mod")?;
    text.lines()
        .find_map(|l| l.strip_prefix("module "))
        .map(|m| m.trim().to_string())
}

/// The package's directory relative to the module root (`example.com/m/sub` → `sub`).
fn package_dir(package: &str, module: Option<&str>) -> String {
    match module.and_then(|m| package.strip_prefix(m)) {
        Some(rest) => rest.trim_start_matches('/').to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failing_check_is_the_message_not_a_log_before_it() {
        let output = "=== RUN   TestBig\n    calc_test.go:12: checking big numbers\n    \
                      calc_test.go:14: Big(3) = 4, want 9\n--- FAIL: TestBig (0.00s)\n";
        let failure = failure("TestBig", output, "", None);
        assert_eq!(
            (
                failure.file.as_deref(),
                failure.line,
                failure.message.as_str()
            ),
            (Some("calc_test.go"), Some(14), "Big(3) = 4, want 9")
        );
    }
}
