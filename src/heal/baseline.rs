//! What a repair is measured against: the baseline (which tests fail, which of them are flaky),
//! the test runs in the copy, and each run judged against the baseline (what still fails, what
//! it broke).

use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::json;

use super::prompt;
use super::record::Events;
use super::tree::Tree;
use super::Settings;
use crate::error::Failure;
use crate::run_document::{Framework, Outcome, TestReport};
use crate::sandbox::policy::{OutputMode, PolicyRequest};
use crate::testrun::{self, TestRequest};

/// Whether a run's failures can be selected by id and rerun alone.
pub(super) fn selectable(framework: Framework) -> bool {
    !matches!(framework, Framework::Make | Framework::Junit)
}

/// What heal's live line says while a run goes on (on a terminal): `shown`, and how many tests
/// have ended ("12/40"; "12 done" when the run's number of tests is not known).
pub(super) struct Live {
    pub shown: String,
    pub total: Option<u64>,
}

/// Runs the tests in the copy: `tests` alone, or all when empty, within `timeout`; `live`: said
/// as it goes.
pub(super) fn run(
    request: &Settings,
    tree: &Tree,
    tests: Vec<String>,
    timeout: Duration,
    live: Option<Live>,
) -> Result<TestReport, Failure> {
    run_as(request, tree, None, tests, timeout, live)
}

/// As `run`, or with `command` in place of the runner's, its output read as `framework`'s.
pub(super) fn run_as(
    request: &Settings,
    tree: &Tree,
    command: Option<(Framework, String)>,
    tests: Vec<String>,
    timeout: Duration,
    live: Option<Live>,
) -> Result<TestReport, Failure> {
    let progress = live.map(|Live { shown, total }| {
        std::sync::Arc::new(move |done: usize| {
            let count = match total {
                Some(total) if done as u64 <= total => format!("{done}/{total}"),
                _ => format!("{done} done"),
            };
            crate::log::step_update("heal", &format!("{shown} ({count})"));
        }) as std::sync::Arc<dyn Fn(usize) + Send + Sync>
    });
    let mut report = testrun::run(TestRequest {
        progress,
        ..test_request(request, tree, command, tests, timeout)
    })?;
    // The runner is the baseline's, chosen for the reason it gave.
    if let Some(reason) = &request.framework_reason {
        report.framework_reason = reason.clone();
    }
    Ok(report)
}

/// The request for a run of `tests` in `tree` within `timeout`: the runner the baseline's was
/// (or `command`, its output read as `framework`'s), in the sandbox every run of heal's has.
pub(super) fn test_request(
    request: &Settings,
    tree: &Tree,
    command: Option<(Framework, String)>,
    tests: Vec<String>,
    timeout: Duration,
) -> TestRequest {
    let cpus = std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64);
    let (framework, command) = match command {
        Some((framework, command)) => (Some(framework), Some(command)),
        None => (request.framework, request.command.clone()),
    };
    TestRequest {
        framework,
        command,
        tests,
        sandbox: PolicyRequest {
            workspace: tree.path().to_path_buf(),
            timeout,
            memory_bytes: 2 << 30,
            pids: 512,
            cpus,
            file_size_bytes: 1 << 30,
            disk_bytes: None,
            network: false,
            env: request.env.clone(),
            read_only: Vec::new(),
            read_write: Vec::new(),
            output: OutputMode::Capture { max_bytes: 8 << 20 },
            allow_degraded: false,
            image: None,
            command: Vec::new(),
            layered: tree.layered(),
            watcher: None,
        },
        caches_of: Some(request.workspace.clone()),
        progress: None,
    }
}

/// What a run's failures look like, to tell progress from none.
pub(super) fn signature(report: &TestReport) -> Vec<(String, Option<String>, String)> {
    let mut signature: Vec<_> = report
        .failures
        .iter()
        .map(|f| {
            (
                f.id.clone(),
                f.kind.clone(),
                prompt::without_timings(&f.message),
            )
        })
        .collect();
    signature.sort();
    signature
}

/// What the repair starts from.
pub(super) struct Baseline {
    pub report: TestReport,
    /// The ids that failed (a build error counts as one, `build`).
    pub failing: BTreeSet<String>,
    pub flaky: BTreeSet<String>,
    /// Set when there is nothing to repair, and why.
    pub nothing_to_do: Option<String>,
    /// The signal that stopped a baseline run.
    pub interrupted: Option<i32>,
    /// How long the failing tests took on their own (or the whole suite, when they cannot be
    /// run alone).
    pub failing_run: Duration,
    /// The baseline's run was of the whole suite (heal's own; a document's may have been a
    /// selection).
    whole: bool,
    /// The whole suite before any change, once a change's whole-suite run failed tests the
    /// baseline's run did not show.
    whole_before: OnceLock<WholeBefore>,
}

/// What the whole suite did before any change: the tests that failed (not the change's doing
/// when they fail after it), how many ran, and what a run of the whole suite names (none: all).
struct WholeBefore {
    failing: BTreeSet<String>,
    ran: u64,
    tests: Vec<String>,
}

/// A run judged against the baseline.
pub(super) struct Judged {
    pub still_failing: Vec<String>,
    pub regressions: Vec<String>,
    /// How many of the run's failures failed before any change too (not the change's doing).
    pub failed_before: usize,
}

impl Judged {
    pub(super) fn summary(&self, failing_before: usize) -> String {
        let mut out = format!(
            "{} of {failing_before} failing test{} fixed",
            failing_before - self.still_failing.len().min(failing_before),
            if failing_before == 1 { "" } else { "s" }
        );
        if !self.regressions.is_empty() {
            out.push_str(&format!(", {} broken", self.regressions.len()));
        }
        if self.failed_before > 0 {
            out.push_str(&format!(
                " ({} other{} failed before the change too)",
                self.failed_before,
                if self.failed_before == 1 { "" } else { "s" }
            ));
        }
        out
    }
}

/// The whole suite run in `tree`, as the baseline's first run (the document held none).
fn first_run(request: &Settings, tree: &Tree, events: &mut Events) -> Result<TestReport, Failure> {
    // testrun would name heal's copy, and flags heal does not take.
    if request.framework.is_none() && testrun::detect::detect(tree.path()).is_none() {
        return Err(Failure::usage(format!(
            "cannot tell which test framework {} uses",
            request.workspace.display()
        ))
        .with_hint(
            "run its tests first and pipe them in: autocoder run-tests --framework \
             pytest (or --command '…') | autocoder heal",
        ));
    }
    let shown = "running the tests to see what fails";
    crate::log::step("heal", shown);
    let started_ms = events.origin().elapsed().as_millis() as u64;
    let live = Live {
        shown: shown.into(),
        total: None,
    };
    let report = run(request, tree, Vec::new(), request.test_timeout, Some(live))?;
    let wall_ms = events.origin().elapsed().as_millis() as u64 - started_ms;
    events.emit("tests", json!({"attempt": 0, "scope": "all", "outcome": report.outcome, "counts": report.counts,
                                "started_ms": started_ms, "duration_ms": report.duration_ms, "wall_ms": wall_ms}));
    Ok(report)
}

/// The id a run that did not build stands under.
const BUILD: &str = "build";

impl Baseline {
    /// The document's run of this workspace, or a new one, and the failing tests run again.
    pub(super) fn find(
        request: &mut Settings,
        tree: &Tree,
        events: &mut Events,
    ) -> Result<Baseline, Failure> {
        let (report, whole) = match request.baseline.take() {
            Some(report) => (report, false),
            None => (first_run(request, tree, events)?, true),
        };
        request.framework = Some(report.framework);
        request.framework_reason = Some(report.framework_reason.clone());
        if report
            .framework_reason
            .ends_with(crate::testrun::GIVEN_COMMAND)
        {
            request.command = Some(shell_words::join(&report.command));
        }
        let mut baseline = Baseline {
            failing: failing_ids(&report),
            interrupted: report.sandbox.as_ref().and_then(|s| s.interrupted),
            failing_run: Duration::from_millis(report.duration_ms),
            report,
            flaky: BTreeSet::new(),
            nothing_to_do: None,
            whole,
            whole_before: OnceLock::new(),
        };
        if let Some(signal) = baseline.interrupted {
            baseline.nothing_to_do = Some(format!(
                "interrupted by signal {signal} before the first attempt"
            ));
            return Ok(baseline);
        }
        match baseline.report.outcome {
            Outcome::TestsFailed | Outcome::BuildFailed => {}
            Outcome::Passed => {
                baseline.nothing_to_do = Some(
                    "every test passes already: nothing to repair (a test that shows the bug comes first)".into(),
                );
                return Ok(baseline);
            }
            Outcome::NoTests => {
                return Err(Failure::usage("the project has no tests to repair against")
                    .with_hint("add a test that shows the bug, then run heal"))
            }
            Outcome::Timeout => {
                return Err(
                    Failure::external("the tests ran out of time before heal began")
                        .with_hint("give the tests more time with --test-timeout"),
                )
            }
            Outcome::Error => {
                return Err(Failure::external(format!(
                    "the tests could not be run: {}",
                    baseline
                        .report
                        .reason
                        .as_deref()
                        .unwrap_or("the runner failed")
                ))
                .with_hint(
                    baseline
                        .report
                        .hint
                        .clone()
                        .unwrap_or_else(|| "run `autocoder run-tests` to see why".into()),
                ))
            }
        }
        if baseline.report.outcome == Outcome::TestsFailed
            && selectable(baseline.report.framework)
            && request.command.is_none()
        {
            baseline.tell_flaky(request, tree, events)?;
        }
        Ok(baseline)
    }

    /// The failing tests run again: those that pass are flaky (and when all are, there is
    /// nothing to do).
    fn tell_flaky(
        &mut self,
        request: &Settings,
        tree: &Tree,
        events: &mut Events,
    ) -> Result<(), Failure> {
        let ids: Vec<String> = self.failing.iter().cloned().collect();
        let shown = format!(
            "running the {} failing test{} again, to tell flaky ones",
            ids.len(),
            if ids.len() == 1 { "" } else { "s" }
        );
        crate::log::step("heal", &shown);
        let started_ms = events.origin().elapsed().as_millis() as u64;
        let live = Live {
            shown,
            total: Some(ids.len() as u64),
        };
        let again = run(request, tree, ids, request.test_timeout, Some(live))?;
        let wall_ms = events.origin().elapsed().as_millis() as u64 - started_ms;
        events.emit("tests", json!({"attempt": 0, "scope": "failing", "outcome": again.outcome, "counts": again.counts,
                                    "started_ms": started_ms, "duration_ms": again.duration_ms, "wall_ms": wall_ms}));
        if let Some(signal) = again.sandbox.as_ref().and_then(|s| s.interrupted) {
            self.interrupted = Some(signal);
            self.nothing_to_do = Some(format!(
                "interrupted by signal {signal} before the first attempt"
            ));
            return Ok(());
        }
        self.failing_run = Duration::from_millis(again.duration_ms);
        let failed_again = failing_ids(&again);
        self.flaky = self
            .failing
            .iter()
            .filter(|id| !failed_again.contains(*id) && again.outcome != Outcome::Error)
            .cloned()
            .collect();
        if !self.flaky.is_empty() {
            crate::log::warn(
                "heal",
                &format!(
                    "flaky (failed, then passed): {}",
                    self.flaky.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            );
        }
        if self.flaky.len() == self.failing.len() {
            self.nothing_to_do =
                Some("the failing tests passed when run again: they are flaky, not broken".into());
        }
        Ok(())
    }

    /// Which of the baseline's failures still fail in `run`, and which tests it breaks.
    /// The tests that failed and are not flaky: those a repair must make pass.
    pub(super) fn steady_failing(&self) -> Vec<String> {
        self.failing
            .iter()
            .filter(|id| !self.flaky.contains(*id))
            .cloned()
            .collect()
    }

    /// A run of the whole suite (`whole_suite`) that ran fewer tests than the baseline's breaks
    /// the ones that no longer run: a change that ends the run early (a `process.exit(0)`) or
    /// skips a test has not fixed it.
    pub(super) fn judge(&self, run: &TestReport, whole_suite: bool) -> Judged {
        let failed = failing_ids(run);
        // A run that timed out or broke down shows nothing fixed.
        if !completed(run) {
            return Judged {
                still_failing: self.steady_failing(),
                regressions: vec![format!("the suite ({})", run.outcome.name())],
                failed_before: 0,
            };
        }
        // Before, nothing ran: whatever fails now is still to fix, none of it a regression.
        if self.report.outcome == Outcome::BuildFailed {
            return Judged {
                still_failing: failed.into_iter().collect(),
                regressions: Vec::new(),
                failed_before: 0,
            };
        }
        let before = self.whole_before.get().filter(|_| whole_suite);
        let failed_before = |id: &String| before.is_some_and(|b| b.failing.contains(id));
        let failed_before_count = failed.iter().filter(|id| failed_before(id)).count();
        // Now nothing ran: the failing tests did not pass (even if what broke broke before).
        if run.outcome == Outcome::BuildFailed {
            return Judged {
                still_failing: self.steady_failing(),
                regressions: failed.into_iter().filter(|id| !failed_before(id)).collect(),
                failed_before: failed_before_count,
            };
        }
        let still_failing = self
            .failing
            .iter()
            .filter(|id| failed.contains(*id) && !self.flaky.contains(*id))
            .cloned()
            .collect();
        let mut regressions: Vec<String> = failed
            .iter()
            .filter(|id| !self.failing.contains(*id) && !self.flaky.contains(*id))
            .filter(|id| !failed_before(id))
            .cloned()
            .collect();
        let ran_before = before.map_or(ran(&self.report), |b| b.ran);
        if whole_suite && ran(run) < ran_before {
            regressions.push(format!(
                "the tests that no longer run ({} ran, {ran_before} before)",
                ran(run)
            ));
        }
        Judged {
            still_failing,
            regressions,
            failed_before: failed_before_count,
        }
    }

    /// When `changed`, a whole-suite run on a change, fails tests the baseline's run did not
    /// show and that run may have been a selection (`run-tests --tests … | heal`): the whole
    /// suite run once, within `limit`, on a copy of `tree` without the change, so that what
    /// failed before is not taken for the change's doing. When the runner finds no test unless
    /// named (tqdm's files are `tests_*.py`), the suite is the failing tests' files from then
    /// on. The run and what it named, when one was made: a candidate tested in a child process
    /// hands them back to `learn`.
    pub(super) fn run_whole_before(
        &self,
        request: &Settings,
        tree: &Tree,
        changed: &TestReport,
        limit: Duration,
    ) -> Result<Option<(TestReport, Vec<String>)>, Failure> {
        if self.whole
            || self.whole_before.get().is_some()
            || self.judge(changed, true).regressions.is_empty()
        {
            return Ok(None);
        }
        crate::log::step(
            "heal",
            "running the whole suite without the change, to tell the failures that were there before",
        );
        let mut unchanged = tree.another()?;
        unchanged
            .restore(&Default::default())
            .map_err(|e| Failure::external(format!("cannot undo the change in a copy: {e}")))?;
        let mut before = run(request, &unchanged, Vec::new(), limit, None)?;
        let mut tests = Vec::new();
        if before.outcome == Outcome::NoTests && ran(&self.report) > 0 {
            tests = self.failing_files();
            if !tests.is_empty() {
                before = run(request, &unchanged, tests.clone(), limit, None)?;
            }
        }
        self.learn(&before, &tests);
        Ok(Some((before, tests)))
    }

    /// The files of the failing tests, when their ids name them (`path::test`).
    fn failing_files(&self) -> Vec<String> {
        let mut files: Vec<String> = self
            .failing
            .iter()
            .filter_map(|id| id.split_once("::").map(|(file, _)| file.to_string()))
            .collect();
        files.dedup();
        files
    }

    /// What a run of the whole suite names: none (all), or the failing tests' files when the
    /// runner finds no test without their names.
    pub(super) fn whole_suite_tests(&self) -> Vec<String> {
        self.whole_before
            .get()
            .map_or_else(Vec::new, |before| before.tests.clone())
    }

    /// Takes `before`, the whole suite's run without any change (of `tests`; none: all), as
    /// what failed before (the first one given; a run that did not complete tells nothing).
    pub(super) fn learn(&self, before: &TestReport, tests: &[String]) {
        let _ = self.whole_before.set(match completed(before) {
            true => WholeBefore {
                failing: failing_ids(before),
                ran: ran(before),
                tests: tests.to_vec(),
            },
            false => WholeBefore {
                failing: BTreeSet::new(),
                ran: 0,
                tests: Vec::new(),
            },
        });
    }
}

/// Whether a run ended with its tests' results (it did not time out or break down).
fn completed(report: &TestReport) -> bool {
    matches!(
        report.outcome,
        Outcome::Passed | Outcome::TestsFailed | Outcome::BuildFailed
    )
}

/// How many tests a run ran: not the skipped ones, nor errors (a teardown's error comes with
/// its test's result, a file that cannot be collected holds none).
fn ran(report: &TestReport) -> u64 {
    let counts = &report.counts;
    counts.passed + counts.failed + counts.xfailed + counts.xpassed
}

/// The ids of a run's failures; `build` for a run that did not build.
pub(super) fn failing_ids(report: &TestReport) -> BTreeSet<String> {
    let mut ids: BTreeSet<String> = report.failures.iter().map(|f| f.id.clone()).collect();
    if report.outcome == Outcome::BuildFailed && ids.is_empty() {
        ids.insert(BUILD.into());
    }
    ids
}
