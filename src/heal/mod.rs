//! `heal`'s repair loop: failing tests in, a verified change out. Every engine runs in it (the
//! model's today); the loop owns what makes a change trustworthy: the baseline (what fails,
//! what is flaky), validation in the sandbox (the failing tests first, then the whole suite),
//! the best state kept (a change that breaks a passing test is undone), the stopping rules, and
//! the user's tree, which only a green change reaches, at the end, through `tree`.

pub mod edits;
pub mod matching;
pub mod prompt;
pub mod record;
pub mod tree;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use self::edits::Applied;
use self::record::{AttemptRecord, ErrorShown, Events, HealReport, ModelShown, Tokens};
use self::tree::{Contents, Tree};
use crate::error::Failure;
use crate::llm::{Prompt, Session};
use crate::run_document::{Framework, HealStatus, Issue, Outcome, TestReport};
use crate::sandbox::policy::{OutputMode, PolicyRequest};
use crate::sandbox::supervise::TerminationSignals;
use crate::testrun::{self, TestRequest};

/// Tokens a reply may take.
const REPLY_TOKENS: u32 = 4096;

/// A repair to make.
pub struct HealRequest {
    /// The user's project (checked, canonical).
    pub workspace: PathBuf,
    pub issue: Option<Issue>,
    /// A test run of this workspace the document holds, taken as the baseline's first run.
    pub baseline: Option<TestReport>,
    pub framework: Option<Framework>,
    pub max_attempts: u32,
    pub token_budget: Option<u64>,
    /// The whole repair's wall time.
    pub timeout: Duration,
    /// One test run's.
    pub test_timeout: Duration,
    pub allow_test_edits: bool,
    pub patch_out: Option<PathBuf>,
    /// Variables passed to the tests (`--env`).
    pub env: Vec<String>,
}

/// How heal ended: the report, whether the model or the environment failed on the way (exit
/// 3, the report still written), and the signal that interrupted it.
pub struct Healed {
    pub report: HealReport,
    pub failed: bool,
    pub interrupted: Option<i32>,
}

/// Whether a run's failures can be selected by id and rerun alone.
fn selectable(framework: Framework) -> bool {
    !matches!(framework, Framework::Make | Framework::Junit)
}

/// The repair loop with a model.
pub fn heal(
    mut request: HealRequest,
    session: Arc<Session>,
    events: &mut Events,
) -> Result<Healed, Failure> {
    // SIGINT, SIGTERM and SIGHUP are read, not obeyed: an interrupted repair ends between steps,
    // with the user's tree as it was and the document written.
    let signals = TerminationSignals::block()?;
    let started = Instant::now();
    let deadline = started + request.timeout;
    let secrets = prompt::secrets(session.model().api_key());
    let mut tree = Tree::copy_of(&request.workspace)?;
    let baseline = Baseline::find(&mut request, &tree, events)?;
    let model = session.model();
    let mut report = HealReport {
        mode: "repair",
        status: HealStatus::NoChange,
        engine: None,
        model: Some(ModelShown {
            provider: model.provider.name(),
            name: model.name.clone().unwrap_or_default(),
            base_url: crate::http::without_userinfo(&model.base_url),
        }),
        reason: String::new(),
        attempts: Vec::new(),
        flaky: baseline.flaky.iter().cloned().collect(),
        failing_before: baseline.failing.iter().cloned().collect(),
        diff: String::new(),
        files_changed: Vec::new(),
        applied: false,
        patch_file: None,
        tokens: Tokens::default(),
        error: None,
        tests: Some(baseline.report.clone()),
    };
    if let Some(reason) = &baseline.nothing_to_do {
        report.reason = reason.clone();
        crate::log::info("heal", reason);
        return Ok(Healed {
            report,
            failed: false,
            interrupted: baseline.interrupted,
        });
    }
    let files = prompt::project_files(tree.path());
    let system = prompt::withheld(&prompt::system(&files), &secrets);

    let mut best = Best {
        contents: Contents::new(),
        score: (
            baseline.report.outcome == Outcome::BuildFailed,
            baseline.failing.len(),
        ),
        report: None,
    };
    let mut current_failures = baseline.report.failures.clone();
    let mut current_build_error = baseline.report.build_error.clone();
    let mut history: Vec<String> = Vec::new();
    let mut feedback = String::new();
    let mut seen_diffs: BTreeSet<String> = BTreeSet::new();
    let mut last_signature = signature(&baseline.report);
    let mut stalled = 0;
    let mut budget_hit = None;
    let mut stop = None;
    let mut interrupted = None;

    for number in 1..=request.max_attempts {
        if Instant::now() >= deadline {
            budget_hit = Some(format!(
                "the time budget ({} s) ran out",
                request.timeout.as_secs()
            ));
            break;
        }
        if let Some(limit) = request.token_budget {
            let used = report.tokens.input + report.tokens.output;
            if used >= limit {
                budget_hit = Some(format!("the token budget ({limit}) is spent ({used} used)"));
                break;
            }
        }
        let diff = tree.diff();
        let user = prompt::message(
            &prompt::Attempt {
                issue: request.issue.as_ref(),
                failures: &current_failures,
                build_error: current_build_error.as_deref(),
                files: &files,
                diff: &diff,
                history: &history,
                feedback: &feedback,
            },
            &tree,
            prompt::MAX_CHARS.saturating_sub(system.len()),
        );
        let user = prompt::withheld(&user, &secrets);
        crate::log::info(
            "heal",
            &format!(
                "attempt {number}/{}: asking {} (~{} tokens)",
                request.max_attempts,
                model.name.as_deref().unwrap_or("the model"),
                (system.len() + user.len()) / 4
            ),
        );
        let asked = Instant::now();
        let reply = match ask(&session, &system, &user, &signals) {
            Asked::Interrupted(signal) => {
                interrupted = Some(signal);
                break;
            }
            Asked::Answered(Ok(reply)) => reply,
            Asked::Answered(Err(failure)) => {
                events.emit(
                    "model_error",
                    json!({"attempt": number, "error": failure.error.to_string()}),
                );
                report.error = Some(ErrorShown {
                    message: format!("{:#}", failure.error),
                    hint: failure.hint.clone(),
                });
                stop = Some("the model failed".to_string());
                if report.attempts.is_empty() {
                    return Err(failure);
                }
                break;
            }
        };
        let model_seconds = asked.elapsed().as_secs_f64();
        let tokens = Tokens {
            input: reply.tokens_in,
            output: reply.tokens_out,
        };
        report.tokens.input += tokens.input;
        report.tokens.output += tokens.output;
        events.emit(
            "model_call",
            json!({"attempt": number, "tokens_in": tokens.input, "tokens_out": tokens.output,
                   "latency_ms": (model_seconds * 1000.0) as u64, "prompt_hash": record::prompt_hash(&system, &user),
                   "cut_off": reply.cut_off}),
        );

        let parsed = edits::parse(&reply.text);
        let applied = edits::apply(&mut tree, &parsed.edits, request.allow_test_edits);
        for edit in &applied {
            events.emit(
                "edit",
                json!({"attempt": number, "path": edit.path, "applied": edit.applied,
                       "matched": edit.matched, "reason": edit.reason}),
            );
        }
        let mut attempt = AttemptRecord {
            number,
            engine: "llm",
            edits: applied,
            problems: parsed.problems,
            cut_off: reply.cut_off,
            outcome: None,
            counts: None,
            whole_suite: false,
            still_failing: Vec::new(),
            regressions: Vec::new(),
            kept: false,
            tokens,
            model_seconds,
            test_seconds: 0.0,
        };
        feedback = edit_feedback(&attempt);
        let applied_count = attempt.edits.iter().filter(|e| e.applied).count();
        if applied_count == 0 {
            let why = if attempt.edits.is_empty() && attempt.problems.is_empty() {
                "the reply held no SEARCH/REPLACE block"
            } else {
                "no block applied"
            };
            if attempt.edits.is_empty() && attempt.problems.is_empty() {
                feedback = "Your reply held no SEARCH/REPLACE block; reply with blocks in the format shown.".into();
            }
            crate::log::info("heal", &format!("attempt {number}: {why}"));
            history.push(format!("attempt {number}: {why}"));
            report.attempts.push(attempt);
            continue;
        }
        let diff = tree.diff();
        if !seen_diffs.insert(diff.clone()) {
            crate::log::info(
                "heal",
                &format!("attempt {number}: the same change as an earlier attempt"),
            );
            history.push(format!(
                "attempt {number}: the same change as an earlier attempt"
            ));
            report.attempts.push(attempt);
            stop = Some("the model repeated a change already tried".into());
            break;
        }

        let tested = Instant::now();
        let result = validate(&request, &tree, &baseline, best.score, events, number);
        attempt.test_seconds = tested.elapsed().as_secs_f64();
        let (result, whole_suite) = match result {
            Ok((result, _))
                if result
                    .sandbox
                    .as_ref()
                    .is_some_and(|s| s.interrupted.is_some()) =>
            {
                interrupted = result.sandbox.as_ref().and_then(|s| s.interrupted);
                report.attempts.push(attempt);
                break;
            }
            Ok(result) => result,
            Err(failure) => {
                report.error = Some(ErrorShown {
                    message: format!("{:#}", failure.error),
                    hint: failure.hint.clone(),
                });
                report.attempts.push(attempt);
                stop = Some("the tests could not be run".into());
                break;
            }
        };
        let judged = baseline.judge(&result);
        attempt.outcome = Some(result.outcome);
        attempt.counts = Some(result.counts);
        attempt.whole_suite = whole_suite;
        attempt.still_failing = judged.still_failing.clone();
        attempt.regressions = judged.regressions.clone();
        let green = whole_suite && judged.still_failing.is_empty() && judged.regressions.is_empty();
        let summary = format!(
            "attempt {number}: {applied_count} block{} applied; {}",
            if applied_count == 1 { "" } else { "s" },
            judged.summary(baseline.failing.len())
        );
        crate::log::info("heal", &summary);
        if green {
            attempt.kept = true;
            best = Best {
                contents: tree.contents(),
                score: (false, 0),
                report: Some(result),
            };
            report.attempts.push(attempt);
            report.status = HealStatus::Green;
            report.reason = format!(
                "green after {number} attempt{}",
                if number == 1 { "" } else { "s" }
            );
            break;
        }
        let score = (
            result.outcome == Outcome::BuildFailed,
            judged.still_failing.len(),
        );
        // Only a change the whole suite ran on is known to break nothing: the tree stays at the
        // best such change between attempts.
        if whole_suite && judged.regressions.is_empty() && score < best.score {
            attempt.kept = true;
            history.push(summary);
            current_failures = result.failures.clone();
            current_build_error = result.build_error.clone();
            best = Best {
                contents: tree.contents(),
                score,
                report: Some(result.clone()),
            };
        } else {
            let why = if !judged.regressions.is_empty() {
                format!(
                    "it broke tests that passed before ({})",
                    judged.regressions.join(", ")
                )
            } else if score > best.score {
                "it fixed fewer of the failing tests than the change kept".to_string()
            } else {
                "it fixed none of the failing tests the change kept leaves".to_string()
            };
            let undone = format!("that change was undone: {why}");
            feedback.push_str(&format!("\n{undone}\n"));
            history.push(format!("{summary}; {undone}"));
            tree.restore(&best.contents).map_err(Failure::external)?;
        }
        report.attempts.push(attempt);
        let now = signature(&result);
        stalled = if now == last_signature {
            stalled + 1
        } else {
            0
        };
        last_signature = now;
        if stalled >= 2 {
            stop = Some("no progress: the same tests failed the same way twice".into());
            break;
        }
    }

    if let Some(signal) = interrupted.or_else(|| signals.take()) {
        interrupted = Some(signal);
        stop = Some(format!(
            "interrupted by signal {signal}; nothing was written to the workspace"
        ));
        if report.status == HealStatus::Green {
            report.status = HealStatus::Red;
        }
    } else if report.status != HealStatus::Green && budget_hit.is_none() && stop.is_none() {
        budget_hit = Some(format!("all {} attempts were made", request.max_attempts));
    }
    finish(
        &request,
        &mut tree,
        best,
        &baseline,
        &mut report,
        budget_hit,
        stop,
    )?;
    let failed = report.error.is_some();
    Ok(Healed {
        report,
        failed,
        interrupted,
    })
}

enum Asked {
    Answered(Result<crate::llm::Reply, Failure>),
    Interrupted(i32),
}

/// Asks the model on a thread of its own, so that a signal ends the wait at once (the thread is
/// left to its request; no sandbox is started after an interruption, so no fork sees it).
fn ask(session: &Arc<Session>, system: &str, user: &str, signals: &TerminationSignals) -> Asked {
    let (sender, receiver) = std::sync::mpsc::channel();
    let (session, system, user) = (Arc::clone(session), system.to_string(), user.to_string());
    std::thread::spawn(move || {
        let reply = session.ask(&Prompt {
            system: &system,
            user: &user,
            max_tokens: REPLY_TOKENS,
        });
        let _ = sender.send(reply);
    });
    loop {
        match receiver.recv_timeout(Duration::from_millis(100)) {
            Ok(reply) => return Asked::Answered(reply),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Asked::Answered(Err(Failure::external(
                    "the model call ended without an answer",
                )))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Some(signal) = signals.take() {
                    return Asked::Interrupted(signal);
                }
            }
        }
    }
}

/// The best state so far: one that builds before one that does not, then the fewest originally
/// failing tests still failing; never one with regressions.
struct Best {
    contents: Contents,
    score: (bool, usize),
    /// Its whole-suite run; none for the state heal started in.
    report: Option<TestReport>,
}

/// The end: the best state in the copy, its status, diff and final run, and the change in the
/// user's tree (green) or in a patch file (not green, or the tree moved meanwhile).
fn finish(
    request: &HealRequest,
    tree: &mut Tree,
    best: Best,
    baseline: &Baseline,
    report: &mut HealReport,
    budget_hit: Option<String>,
    stop: Option<String>,
) -> Result<(), Failure> {
    tree.restore(&best.contents).map_err(Failure::external)?;
    report.diff = tree.diff();
    report.files_changed = best.contents.keys().cloned().collect();
    if report.status != HealStatus::Green {
        report.status = match (&budget_hit, best.contents.is_empty()) {
            (Some(_), _) => HealStatus::BudgetExhausted,
            (None, true) => HealStatus::NoChange,
            (None, false) => HealStatus::Red,
        };
        report.reason = budget_hit
            .or(stop)
            .unwrap_or_else(|| format!("{} attempts made, none green", report.attempts.len()));
    }
    report.engine = (!best.contents.is_empty()).then_some("llm");
    report.tests = Some(best.report.unwrap_or_else(|| baseline.report.clone()));
    if report.diff.is_empty() {
        return Ok(());
    }
    if report.status == HealStatus::Green {
        match tree.apply_to(&request.workspace)? {
            Ok(()) => {
                report.applied = true;
                crate::log::info(
                    "heal",
                    &format!(
                        "green: {} written to the workspace",
                        report.files_changed.join(", ")
                    ),
                );
                if request.patch_out.is_none() {
                    return Ok(());
                }
            }
            Err(moved) => crate::log::warn(
                "heal",
                &format!(
                    "{} changed in the workspace while heal ran: nothing was applied",
                    moved.join(", ")
                ),
            ),
        }
    }
    let path = request
        .patch_out
        .clone()
        .unwrap_or_else(|| default_patch_path(&request.workspace));
    match write_patch(&path, &report.diff) {
        Ok(()) => {
            if !report.applied {
                crate::log::info(
                    "heal",
                    &format!("the change is in {} (git apply {0})", path.display()),
                );
            }
            report.patch_file = Some(path.display().to_string());
        }
        Err(err) => crate::log::warn(
            "heal",
            &format!(
                "cannot write the patch to {}: {err}; it is in heal.diff",
                path.display()
            ),
        ),
    }
    Ok(())
}

/// `.git/autocoder/heal-TIME.patch` in the workspace's repository, else in the temporary
/// directory.
fn default_patch_path(workspace: &Path) -> PathBuf {
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let git = workspace.join(".git");
    let dir = if git.is_dir() && !git.is_symlink() {
        git.join("autocoder")
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("heal-{time}.patch"))
}

fn write_patch(path: &Path, diff: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, diff)
}

/// What the model is told about its blocks: each one that did not apply and why, and what could
/// not be read.
fn edit_feedback(attempt: &AttemptRecord) -> String {
    let mut out = String::new();
    let applied = attempt.edits.iter().filter(|e| e.applied).count();
    let failed: Vec<&Applied> = attempt.edits.iter().filter(|e| !e.applied).collect();
    for (index, edit) in attempt.edits.iter().enumerate() {
        if let Some(reason) = &edit.reason {
            out.push_str(&format!(
                "Block {} ({}) was not applied: {reason}\n",
                index + 1,
                edit.path
            ));
        }
    }
    for problem in &attempt.problems {
        out.push_str(problem);
        out.push('\n');
    }
    if applied > 0 && !failed.is_empty() {
        out.push_str(&format!(
            "The other {applied} block{} applied; do not send them again.\n",
            if applied == 1 { " was" } else { "s were" }
        ));
    }
    if attempt.cut_off {
        out.push_str("Your reply was cut off at the token limit: send fewer, smaller blocks.\n");
    }
    out
}

/// What a run's failures look like, to tell progress from none.
fn signature(report: &TestReport) -> Vec<(String, Option<String>, String)> {
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

/// Runs the tests in the copy: `tests` alone, or all when empty.
fn run(request: &HealRequest, tree: &Tree, tests: Vec<String>) -> Result<TestReport, Failure> {
    let cpus = std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64);
    testrun::run(TestRequest {
        framework: request.framework,
        command: None,
        tests,
        sandbox: PolicyRequest {
            workspace: tree.path().to_path_buf(),
            timeout: request.test_timeout,
            memory_bytes: 2 << 30,
            pids: 512,
            cpus,
            file_size_bytes: 1 << 30,
            network: false,
            env: request.env.clone(),
            read_only: Vec::new(),
            read_write: Vec::new(),
            output: OutputMode::Capture { max_bytes: 8 << 20 },
            allow_degraded: false,
            image: None,
            command: Vec::new(),
        },
        caches_of: Some(request.workspace.clone()),
    })
}

/// The tests that failed first, then (when they pass) all: the run that decides, and whether it
/// was of the whole suite.
fn validate(
    request: &HealRequest,
    tree: &Tree,
    baseline: &Baseline,
    best: (bool, usize),
    events: &mut Events,
    attempt: u32,
) -> Result<(TestReport, bool), Failure> {
    let failing: Vec<String> = baseline
        .failing
        .iter()
        .filter(|id| !baseline.flaky.contains(*id))
        .cloned()
        .collect();
    let framework = baseline.report.framework;
    if selectable(framework)
        && !failing.is_empty()
        && baseline.report.outcome == Outcome::TestsFailed
    {
        crate::log::info(
            "heal",
            &format!(
                "attempt {attempt}: testing the {} failing test{}",
                failing.len(),
                if failing.len() == 1 { "" } else { "s" }
            ),
        );
        let first = run(request, tree, failing.clone())?;
        events.emit("tests", json!({"attempt": attempt, "scope": "failing", "outcome": first.outcome, "counts": first.counts, "duration_ms": first.duration_ms}));
        // Worth the whole suite only when it fixed more than the change kept.
        let still = baseline.judge(&first).still_failing.len();
        let runs = matches!(first.outcome, Outcome::Passed | Outcome::TestsFailed);
        if !runs || (false, still) >= best {
            return Ok((first, false));
        }
    }
    crate::log::info(
        "heal",
        &format!("attempt {attempt}: running the whole suite"),
    );
    let all = run(request, tree, Vec::new())?;
    events.emit("tests", json!({"attempt": attempt, "scope": "all", "outcome": all.outcome, "counts": all.counts, "duration_ms": all.duration_ms}));
    Ok((all, true))
}

/// What the repair starts from.
struct Baseline {
    report: TestReport,
    /// The ids that failed (a build error counts as one, `build`).
    failing: BTreeSet<String>,
    flaky: BTreeSet<String>,
    /// Set when there is nothing to repair, and why.
    nothing_to_do: Option<String>,
    /// The signal that stopped a baseline run.
    interrupted: Option<i32>,
}

/// A run judged against the baseline.
struct Judged {
    still_failing: Vec<String>,
    regressions: Vec<String>,
}

impl Judged {
    fn summary(&self, failing_before: usize) -> String {
        let mut out = format!(
            "{} of {failing_before} failing test{} fixed",
            failing_before - self.still_failing.len().min(failing_before),
            if failing_before == 1 { "" } else { "s" }
        );
        if !self.regressions.is_empty() {
            out.push_str(&format!(", {} broken", self.regressions.len()));
        }
        out
    }
}

/// The id a run that did not build stands under.
const BUILD: &str = "build";

impl Baseline {
    /// The document's run of this workspace, or a new one, and the failing tests run again.
    fn find(
        request: &mut HealRequest,
        tree: &Tree,
        events: &mut Events,
    ) -> Result<Baseline, Failure> {
        let report = match request.baseline.take() {
            Some(report) => report,
            None => {
                crate::log::info("heal", "running the tests to see what fails");
                let report = run(request, tree, Vec::new())?;
                events.emit("tests", json!({"attempt": 0, "scope": "all", "outcome": report.outcome, "counts": report.counts, "duration_ms": report.duration_ms}));
                report
            }
        };
        request.framework = Some(report.framework);
        let mut baseline = Baseline {
            failing: failing_ids(&report),
            interrupted: report.sandbox.as_ref().and_then(|s| s.interrupted),
            report,
            flaky: BTreeSet::new(),
            nothing_to_do: None,
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
        if baseline.report.outcome == Outcome::TestsFailed && selectable(baseline.report.framework)
        {
            let ids: Vec<String> = baseline.failing.iter().cloned().collect();
            crate::log::info(
                "heal",
                &format!(
                    "running the {} failing test{} again, to tell flaky ones",
                    ids.len(),
                    if ids.len() == 1 { "" } else { "s" }
                ),
            );
            let again = run(request, tree, ids)?;
            events.emit("tests", json!({"attempt": 0, "scope": "failing", "outcome": again.outcome, "counts": again.counts, "duration_ms": again.duration_ms}));
            if let Some(signal) = again.sandbox.as_ref().and_then(|s| s.interrupted) {
                baseline.interrupted = Some(signal);
                baseline.nothing_to_do = Some(format!(
                    "interrupted by signal {signal} before the first attempt"
                ));
                return Ok(baseline);
            }
            let failed_again = failing_ids(&again);
            baseline.flaky = baseline
                .failing
                .iter()
                .filter(|id| !failed_again.contains(*id) && again.outcome != Outcome::Error)
                .cloned()
                .collect();
            if !baseline.flaky.is_empty() {
                crate::log::warn(
                    "heal",
                    &format!(
                        "flaky (failed, then passed): {}",
                        baseline
                            .flaky
                            .iter()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
            if baseline.flaky.len() == baseline.failing.len() {
                baseline.nothing_to_do = Some(
                    "the failing tests passed when run again: they are flaky, not broken".into(),
                );
            }
        }
        Ok(baseline)
    }

    /// Which of the baseline's failures still fail in `run`, and which tests it breaks.
    fn judge(&self, run: &TestReport) -> Judged {
        let failed = failing_ids(run);
        // Before, nothing ran: whatever fails now is still to fix, none of it a regression.
        if self.report.outcome == Outcome::BuildFailed {
            return Judged {
                still_failing: failed.into_iter().collect(),
                regressions: Vec::new(),
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
            .cloned()
            .collect();
        let runs = matches!(
            run.outcome,
            Outcome::Passed | Outcome::TestsFailed | Outcome::BuildFailed
        );
        if !runs && regressions.is_empty() {
            regressions.push(format!("the suite ({})", outcome_name(run)));
        }
        Judged {
            still_failing,
            regressions,
        }
    }
}

fn outcome_name(run: &TestReport) -> String {
    serde_json::to_value(run.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The ids of a run's failures; `build` for a run that did not build.
fn failing_ids(report: &TestReport) -> BTreeSet<String> {
    let mut ids: BTreeSet<String> = report.failures.iter().map(|f| f.id.clone()).collect();
    if report.outcome == Outcome::BuildFailed && ids.is_empty() {
        ids.insert(BUILD.into());
    }
    ids
}
