//! The loop every engine runs in, one after another: an engine proposes edits, the loop owns
//! what makes a change trustworthy: the baseline (what fails, what is flaky), validation in the
//! sandbox (the failing tests first, then the whole suite), the best state kept (a change that
//! breaks a passing test is undone) and the stopping rules.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::baseline::{self, selectable, signature, Baseline, Live};
use super::deliver::deliver;
use super::engine::{Context, Engine, Proposal, Proposed, Stage};
use super::record::{new_heal, Events};
use super::tree::{Contents, Tree};
use super::{coverage, edits, parallel, warm, Healed, Settings};
use crate::error::Failure;
use crate::llm::Session;
use crate::run_document::{
    Attempt, Heal, HealError, HealMode, HealStatus, Outcome, Plausible, TestFailure, TestReport,
};
use crate::sandbox::supervise::TerminationSignals;

/// How a stage ended.
enum End {
    Green,
    /// A limit: the next stage may go on.
    Budget(String),
    /// The engine has nothing more (or no progress): the next stage may go on.
    Spent(String),
    /// The model or the tests failed: the repair ends.
    Failed(String),
    Interrupted(i32),
}

impl End {
    /// The limit that was hit, else why the repair stopped short of green, and the signal that
    /// interrupted it.
    fn into_parts(self) -> (Option<String>, Option<String>, Option<i32>) {
        match self {
            End::Green => (None, None, None),
            End::Budget(why) => (Some(why), None, None),
            End::Spent(why) | End::Failed(why) => (None, Some(why), None),
            End::Interrupted(signal) => (
                None,
                Some(format!(
                    "interrupted by signal {signal}; nothing was written to the workspace"
                )),
                Some(signal),
            ),
        }
    }
}

/// With a model in the loop, the tests of every attempt (which its edits may make print
/// anything, however encoded) read no secret: the credential files of the copy `tree` hold the
/// stand-in, and so do the credential-looking variables given with --env. A run of the
/// workspace itself is then no baseline for the copy.
fn withhold_secrets(request: &mut Settings, tree: &Tree, session: &Session) -> Result<(), Failure> {
    let files_withheld = session
        .secrets()
        .withhold_in_files(tree.path())
        .map_err(|err| {
            Failure::external(format!("cannot withhold the secrets in heal's copy: {err}"))
        })?;
    let env = crate::secrets::withheld_env(&request.env);
    if files_withheld || env != request.env {
        request.baseline = None;
        request.env = env;
    }
    Ok(())
}

/// The repair: `stages` in turn, until one is green.
/// Long: a 20-field Repair; the rest runs in order (signals blocked first, Repair dropped before finish).
pub(super) fn heal(
    mut request: Settings,
    model: Option<&Session>,
    stages: Vec<Stage>,
    events: &mut Events,
) -> Result<Healed, Failure> {
    // SIGINT, SIGTERM, SIGHUP and SIGQUIT are read, not obeyed: an interrupted repair ends
    // between steps, with the user's tree as it was and the document written.
    let signals = TerminationSignals::block()?;
    let deadline = Instant::now() + request.timeout;
    let mut tree = Tree::copy_of(&request.workspace, true)?;
    if let Some(session) = model {
        withhold_secrets(&mut request, &tree, session)?;
    }
    let baseline = Baseline::find(&mut request, &tree, events)?;
    let mut report = Heal {
        flaky: baseline.flaky.iter().cloned().collect(),
        failing_before: baseline.failing.iter().cloned().collect(),
        tests: Some(baseline.report.clone()),
        ..new_heal(HealMode::Repair, model)
    };
    if let Some(reason) = &baseline.nothing_to_do {
        report.reason = reason.clone();
        return Ok(Healed {
            report,
            failed: false,
            interrupted: baseline.interrupted,
        });
    }
    let files = crate::testmap::project_files(tree.path(), 10_000);
    let spectrum = match stages.iter().any(|stage| stage.engine.searches()) {
        true => match coverage::measure(&request, &tree, &baseline, deadline) {
            Ok(spectrum) => spectrum,
            Err(signal) => {
                report.reason = format!("interrupted by signal {signal} before the first attempt");
                return Ok(Healed {
                    report,
                    failed: false,
                    interrupted: Some(signal),
                });
            }
        },
        false => None,
    };
    let mut repair = Repair {
        spectrum: spectrum.as_ref(),
        loops_in_a_row: 0,
        best: Best::start((
            baseline.report.outcome == Outcome::BuildFailed,
            baseline.failing.len(),
        )),
        last_signature: signature(&baseline.report),
        request: &request,
        tree: &mut tree,
        workers: Vec::new(),
        baseline: &baseline,
        report: &mut report,
        rules: edits::Rules {
            allow_test_edits: request.allow_test_edits,
            test_files: test_files(&baseline.report.failures, &files),
        },
        files,
        history: Vec::new(),
        feedback: String::new(),
        seen_diffs: BTreeSet::new(),
        stalled: 0,
        number: 0,
        before_green: None,
        cold: warm::not_warm(&request, &baseline),
        events,
        signals: &signals,
        deadline,
    };
    let mut end = End::Spent("no engine ran".into());
    for mut stage in stages {
        end = repair.stage(&mut stage)?;
        match end {
            End::Budget(_) | End::Spent(_) if Instant::now() < deadline => continue,
            _ => break,
        }
    }
    let best = std::mem::replace(&mut repair.best, Best::start((false, 0)));
    drop(repair);
    let (budget_hit, stop, interrupted) = end.into_parts();
    if interrupted.is_some() && report.status == Some(HealStatus::Green) {
        report.status = Some(HealStatus::Red);
    }
    finish(
        &request,
        &tree,
        best,
        &baseline,
        &mut report,
        budget_hit,
        stop,
    )?;
    if report.status != Some(HealStatus::Green) && report.reason.is_empty() {
        report.reason = "no change made the failing tests pass".into();
    }
    let failed = report.error.is_some();
    Ok(Healed {
        report,
        failed,
        interrupted,
    })
}

/// A search's plausible patches at most: the first and the others found after it.
const PLAUSIBLE: usize = 3;
/// Candidates tried at most after a search's first plausible patch.
const MAX_ALTERNATIVES: usize = 8;
/// Candidates tried after it in any case, however long they take (a loaded machine's time says
/// nothing of which changes are plausible).
const MIN_ALTERNATIVES: usize = 4;
/// The time the alternatives may take: half the search's, and at least this.
const MIN_SEEKING: Duration = Duration::from_secs(3);

/// Candidates of a batch cut short that loop alone too, in a row, after which the next ones cut
/// short are believed to loop without a second run.
const LOOPS_BELIEVED: u32 = 3;

/// The best state so far: one that builds before one that does not, then the fewest originally
/// failing tests still failing; never one with regressions.
#[derive(Clone)]
struct Best {
    contents: Contents,
    score: (bool, usize),
    /// Its whole-suite run; none for the state heal started in.
    report: Option<TestReport>,
    /// The engine that made it.
    engine: Option<&'static str>,
}

impl Best {
    /// The state heal starts in (no change), with its `score`.
    fn start(score: (bool, usize)) -> Best {
        Best {
            contents: Contents::new(),
            score,
            report: None,
            engine: None,
        }
    }
}

/// Which of a batch's tested candidates `done` is kept: green first, then a change the whole
/// suite ran on that breaks nothing, by how many failing tests it leaves; the first of equals.
fn likeliest(baseline: &Baseline, done: &[(Attempt, Validated)]) -> usize {
    let rank = |validated: &Validated| {
        let judged = baseline.judge(&validated.report, validated.whole_suite);
        let clean = validated.whole_suite && judged.regressions.is_empty();
        (
            !(clean && judged.still_failing.is_empty()),
            !clean,
            validated.report.outcome == Outcome::BuildFailed,
            judged.still_failing.len(),
        )
    };
    (0..done.len())
        .min_by_key(|index| rank(&done[*index].1))
        .unwrap_or(0)
}

/// A plausible change a search found: the state, its attempt (none for the first, already
/// recorded), how it is shown, and its place among the suspicious regions.
struct Found {
    best: Best,
    attempt: Option<Attempt>,
    shown: Plausible,
    place: usize,
}

/// `best`, made by `attempt`, as a plausible change found after `tried` candidates.
fn found_of(tree: &Tree, best: Best, attempt: &Attempt, tried: u64) -> Found {
    let diff = tree.diff_of(&best.contents);
    let (tier, place) = attempt.rank.unwrap_or((u8::MAX, usize::MAX));
    let shown = Plausible {
        change: attempt.change.clone().unwrap_or_default(),
        tier,
        lines: diff
            .lines()
            .filter(|line| {
                (line.starts_with('+') || line.starts_with('-'))
                    && !line.starts_with("+++")
                    && !line.starts_with("---")
            })
            .count(),
        found_after: tried,
        diff,
    };
    Found {
        best,
        attempt: None,
        shown,
        place,
    }
}

/// The loop's state across stages.
struct Repair<'a> {
    request: &'a Settings,
    tree: &'a mut Tree,
    /// More copies in the best state, where a search's candidates are tested beside the one
    /// in `tree`: made when first needed.
    workers: Vec<Tree>,
    baseline: &'a Baseline,
    report: &'a mut Heal,
    best: Best,
    files: Vec<String>,
    rules: edits::Rules,
    history: Vec<String>,
    feedback: String,
    seen_diffs: BTreeSet<String>,
    last_signature: Vec<(String, Option<String>, String)>,
    stalled: u32,
    /// Which lines the failing tests ran, when it was measured (for a search's ranking).
    spectrum: Option<&'a coverage::Spectrum>,
    /// The candidates of a batch cut short that were cut short alone too, since one was not.
    loops_in_a_row: u32,
    /// The attempts made, over all stages.
    number: u32,
    /// The best state before a search's change made it green: where its alternatives start.
    before_green: Option<Best>,
    /// Why a search's candidates run cold, once they do (else each copy gets a warm worker).
    cold: Option<String>,
    events: &'a mut Events,
    signals: &'a TerminationSignals,
    deadline: Instant,
}

/// What one attempt came to.
enum Step {
    Next,
    End(End),
}

impl Repair<'_> {
    /// One engine's attempts, until green, its limits, or it has nothing more. A search's
    /// candidates are tested `jobs` at a time, each in a copy of its own.
    fn stage(&mut self, stage: &mut Stage) -> Result<End, Failure> {
        let engine = stage.engine.as_mut();
        let deadline = stage.time.map_or(self.deadline, |time| {
            self.deadline.min(Instant::now() + time)
        });
        self.stalled = 0;
        let at_once = match engine.searches() {
            true => self.request.jobs.max(1),
            false => 1,
        };
        let first = self.number;
        let started = Instant::now();
        while self.number - first < stage.attempts {
            if let Some(signal) = self.signals.take() {
                return Ok(End::Interrupted(signal));
            }
            if Instant::now() >= deadline {
                return Ok(End::Budget(match stage.time {
                    Some(time) if Instant::now() < self.deadline => format!(
                        "the offline engine's time ({}, --mutate-time) ran out",
                        shown_duration(time)
                    ),
                    _ => format!(
                        "the time budget ({}) ran out",
                        shown_duration(self.request.timeout)
                    ),
                }));
            }
            if let Some(limit) = self.request.token_budget {
                let used = self.report.tokens.input + self.report.tokens.output;
                if used >= limit {
                    return Ok(End::Budget(format!(
                        "the token budget ({limit}) is spent ({used} used)"
                    )));
                }
            }
            let left = (stage.attempts - (self.number - first)) as usize;
            let step = match at_once.min(left) {
                1 => self.attempt(engine, deadline)?,
                size => self.at_once(engine, deadline, size)?,
            };
            match step {
                Step::End(End::Green) if self.before_green.is_some() => {
                    let seeking = (started.elapsed() / 2).max(MIN_SEEKING);
                    let until = deadline.min(Instant::now() + seeking);
                    return self.more_plausible(engine, until);
                }
                Step::End(end) => return Ok(end),
                Step::Next => {}
            }
        }
        Ok(End::Budget(if engine.searches() {
            format!("{} candidates were tried", self.report.candidates_tried)
        } else {
            format!("all {} attempts were made", stage.attempts)
        }))
    }

    /// Asks the engine once, applies its edits, tests them, keeps or undoes them.
    fn attempt(&mut self, engine: &mut dyn Engine, deadline: Instant) -> Result<Step, Failure> {
        let searches = engine.searches();
        let (number, proposal) = match self.propose(engine, deadline)? {
            Ok(proposed) => proposed,
            Err(end) => return Ok(Step::End(end)),
        };
        // Before the change is made: the worker's first runs are of the best state.
        if searches {
            self.warm_up(1);
        }
        let mut attempt = match self.prepare(0, engine.name(), searches, number, proposal) {
            Ok(attempt) => attempt,
            Err(step) => return Ok(step),
        };
        let tested = Instant::now();
        let result = validate(
            self.request,
            self.baseline,
            self.best.score,
            self.tree,
            (
                failing_limit(self.request, self.baseline, searches),
                self.deadline,
            ),
            self.events.origin(),
            &|message| self.step(searches, &format!("attempt {number}: {message}")),
            Some(&format!("attempt {number}")),
        );
        attempt.test_seconds = tested.elapsed().as_secs_f64();
        let validated = match result {
            Ok(validated) => validated,
            Err(failure) => return Ok(self.could_not_test(searches, attempt, &failure)),
        };
        self.learn_from(&validated);
        attempt.warm = validated.warm;
        self.emit_runs(number, &validated);
        if let Some(signal) = validated.interrupted() {
            if let Some(end) = self.undo(0) {
                return Ok(end);
            }
            self.record(searches, attempt);
            return Ok(Step::End(End::Interrupted(signal)));
        }
        self.conclude(engine.name(), searches, attempt, validated)
    }

    /// Up to `size` of a search's candidates, each applied to a copy of its own and tested at
    /// once. The best of them is judged as a lone candidate is; the others are only said: they
    /// were tested against the state the one kept replaces.
    /// Long: one batch, proposal to verdict; each copy's state is taken before the copies are put back.
    fn at_once(
        &mut self,
        engine: &mut dyn Engine,
        deadline: Instant,
        size: usize,
    ) -> Result<Step, Failure> {
        while self.workers.len() + 1 < size {
            self.workers.push(self.tree.another()?);
        }
        // Before the changes are made: the workers' first runs are of the best state.
        self.warm_up(size);
        let mut proposals = Vec::new();
        let mut ended = None;
        while proposals.len() < size {
            match self.propose(engine, deadline)? {
                Ok(proposed) => proposals.push(proposed),
                Err(end) => {
                    ended = Some(end);
                    break;
                }
            }
        }
        // Each candidate goes to the next free copy; one not to test leaves its copy free.
        let mut trials = Vec::new();
        for (number, proposal) in proposals {
            match self.prepare(trials.len(), engine.name(), true, number, proposal) {
                Ok(attempt) => trials.push(attempt),
                Err(Step::Next) => {}
                Err(step) => return Ok(step),
            }
        }
        if trials.is_empty() {
            return Ok(ended.map_or(Step::Next, Step::End));
        }
        let numbers = match trials.len() {
            1 => format!("attempt {}", trials[0].number),
            _ => format!(
                "attempts {}-{}",
                trials[0].number,
                trials[trials.len() - 1].number
            ),
        };
        self.step(
            true,
            &format!("{numbers}: testing {} at once", trials.len()),
        );
        let trees: Vec<&Tree> = std::iter::once(&*self.tree)
            .chain(&self.workers)
            .take(trials.len())
            .collect();
        let (request, baseline, score) = (self.request, self.baseline, self.best.score);
        let origin = self.events.origin();
        let limit = (failing_limit(request, baseline, true), self.deadline);
        let tested = Instant::now();
        let (results, signal) = parallel::each(&trees, self.signals, |tree| {
            validate(request, baseline, score, tree, limit, origin, &|_| {}, None)
        });
        let seconds = tested.elapsed().as_secs_f64();
        let copies = trees.len();
        // What each copy tested, before they are put back.
        let mut states: Vec<Contents> = trees.iter().map(|tree| tree.contents()).collect();
        let mut done = Vec::new();
        let mut broken = None;
        for (mut attempt, result) in trials.into_iter().zip(results) {
            attempt.test_seconds = seconds;
            match result {
                Ok(validated) => {
                    self.learn_from(&validated);
                    attempt.warm = validated.warm;
                    done.push((attempt, validated))
                }
                Err(failure) => broken = Some((attempt, failure)),
            }
        }
        if broken.is_none() && signal.is_none() {
            self.retry_cut_short(&mut done, score, limit.0, origin);
        }
        for (attempt, validated) in &done {
            self.emit_runs(attempt.number, validated);
        }
        let signal = signal.or_else(|| done.iter().find_map(|(_, v)| v.interrupted()));
        if let Some(step) = (1..copies).find_map(|slot| self.undo(slot)) {
            return Ok(step);
        }
        if let Some((attempt, failure)) = broken {
            return Ok(self.could_not_test(true, attempt, &failure));
        }
        if let Some(signal) = signal {
            return Ok(self.undo(0).unwrap_or(Step::End(End::Interrupted(signal))));
        }
        let chosen = likeliest(baseline, &done);
        for (index, (attempt, validated)) in done.iter().enumerate() {
            if index != chosen {
                let judged = baseline.judge(&validated.report, validated.whole_suite);
                self.say(
                    true,
                    &format!(
                        "attempt {}: {}; {}",
                        attempt.number,
                        attempt.change.as_deref().unwrap_or("a change"),
                        judged.summary(baseline.failing.len())
                    ),
                );
            }
        }
        let (attempt, validated) = done.swap_remove(chosen);
        if chosen != 0 {
            // Heal's own copy takes the chosen change, from the copy it was tested in.
            if let Err(err) = self.tree.restore(&states.swap_remove(chosen)) {
                return Ok(self.cannot_restore(&err));
            }
        }
        let step = self.conclude(engine.name(), true, attempt, validated)?;
        Ok(match (step, ended) {
            (Step::Next, Some(end)) => Step::End(end),
            (step, _) => step,
        })
    }

    /// A candidate cut short may have been slowed down by its batch or a loaded machine, not
    /// looping: it is tested again, alone, with twice the time (a load spike once took a fix
    /// for a loop); until a few in a row loop alone too (a bug whose mutants loop).
    fn retry_cut_short(
        &mut self,
        done: &mut [(Attempt, Validated)],
        score: (bool, usize),
        limit: Duration,
        origin: Instant,
    ) {
        for (slot, (attempt, validated)) in done.iter_mut().enumerate() {
            if validated.report.outcome != Outcome::Timeout
                || validated.whole_suite
                || self.loops_in_a_row >= LOOPS_BELIEVED
            {
                continue;
            }
            let tree = std::iter::once(&*self.tree)
                .chain(&self.workers)
                .nth(slot)
                .expect("a copy per candidate");
            let again = Instant::now();
            if let Ok(mut retried) = validate(
                self.request,
                self.baseline,
                score,
                tree,
                (limit * 2, self.deadline),
                origin,
                &|_| {},
                None,
            ) {
                self.loops_in_a_row = match retried.report.outcome {
                    Outcome::Timeout => self.loops_in_a_row + 1,
                    _ => 0,
                };
                retried.runs.splice(0..0, validated.runs.drain(..));
                *validated = retried;
            }
            attempt.test_seconds += again.elapsed().as_secs_f64();
        }
    }

    /// After a search's first green change, the next candidates at its place (its tier's, then
    /// the next tiers'), each tested on the state before it, until `until` (once
    /// `MIN_ALTERNATIVES` were tried), `PLAUSIBLE` are green or `MAX_ALTERNATIVES` were tried:
    /// the plausible patches, ranked by tier, size (the diff's lines) and suspiciousness
    /// (place, then the order they were tried in). The best is kept.
    /// Long: one loop over batches of alternatives; its labeled breaks end the search from inside a trial.
    fn more_plausible(&mut self, engine: &mut dyn Engine, until: Instant) -> Result<End, Failure> {
        let Some(before) = self.before_green.take() else {
            return Ok(End::Green);
        };
        let Some(first) = self.report.attempts.last() else {
            return Ok(End::Green);
        };
        let mut found = vec![found_of(
            self.tree,
            self.best.clone(),
            first,
            self.report.candidates_tried,
        )];
        let mut end = End::Green;
        let at_once = self.request.jobs.max(1);
        let mut alternatives = engine.alternatives(self.tree, MAX_ALTERNATIVES).into_iter();
        // `jobs` at a time, each in a copy of its own put in the state before the green change.
        let mut tried = 0;
        'batches: while found.len() < PLAUSIBLE
            && (tried < MIN_ALTERNATIVES || Instant::now() < until)
        {
            if let Some(signal) = self.signals.take() {
                end = End::Interrupted(signal);
                break;
            }
            while self.workers.len() + 1 < at_once {
                self.workers.push(self.tree.another()?);
            }
            let mut trials = Vec::new();
            for proposal in alternatives.by_ref() {
                let slot = trials.len();
                let copy = match slot {
                    0 => &mut *self.tree,
                    _ => &mut self.workers[slot - 1],
                };
                if let Err(err) = copy.restore(&before.contents) {
                    self.cannot_restore(&err);
                    break 'batches;
                }
                self.number += 1;
                self.report.candidates_tried += 1;
                if let Ok(attempt) = self.prepare(slot, engine.name(), true, self.number, proposal)
                {
                    trials.push(attempt);
                }
                if trials.len() == at_once {
                    break;
                }
            }
            if trials.is_empty() {
                break;
            }
            tried += trials.len();
            let trees: Vec<&Tree> = std::iter::once(&*self.tree)
                .chain(&self.workers)
                .take(trials.len())
                .collect();
            // Only a change that fixes every failing test can be another plausible patch: the
            // whole suite runs for no other.
            let (request, baseline, score) = (self.request, self.baseline, (false, 1));
            let origin = self.events.origin();
            let limit = (failing_limit(request, baseline, true), self.deadline);
            let tested = Instant::now();
            let (results, signal) = parallel::each(&trees, self.signals, |tree| {
                validate(request, baseline, score, tree, limit, origin, &|_| {}, None)
            });
            let seconds = tested.elapsed().as_secs_f64();
            let states: Vec<Contents> = trees.iter().map(|tree| tree.contents()).collect();
            for ((mut attempt, result), state) in trials.into_iter().zip(results).zip(states) {
                attempt.test_seconds = seconds;
                let Ok(validated) = result else {
                    break 'batches;
                };
                self.learn_from(&validated);
                attempt.warm = validated.warm;
                self.emit_runs(attempt.number, &validated);
                if let Some(signal) = signal.or_else(|| validated.interrupted()) {
                    end = End::Interrupted(signal);
                    break 'batches;
                }
                let judged = self
                    .baseline
                    .judge(&validated.report, validated.whole_suite);
                self.say(
                    true,
                    &format!(
                        "attempt {}: {}; {}",
                        attempt.number,
                        attempt.change.as_deref().unwrap_or_default(),
                        judged.summary(self.baseline.failing.len())
                    ),
                );
                let green = validated.whole_suite
                    && judged.still_failing.is_empty()
                    && judged.regressions.is_empty();
                if !green || found.len() == PLAUSIBLE {
                    continue;
                }
                attempt.outcome = Some(validated.report.outcome);
                attempt.counts = Some(validated.report.counts);
                attempt.whole_suite = true;
                attempt.kept = true;
                let best = Best {
                    contents: state,
                    score: (false, 0),
                    report: Some(validated.report),
                    engine: Some(engine.name()),
                };
                let tried = self.report.candidates_tried;
                let mut alternative = found_of(self.tree, best, &attempt, tried);
                alternative.attempt = Some(attempt);
                found.push(alternative);
            }
        }
        Ok(self.keep_likeliest(before, found, end))
    }

    /// Of the plausible changes `found` (the first green one first), the likeliest kept as the
    /// best (the copy put in its state), the others said in `heal.plausible`; `end`: how the
    /// search ended, unless the copy cannot be put back.
    fn keep_likeliest(&mut self, before: Best, mut found: Vec<Found>, end: End) -> End {
        found.sort_by_key(|f| (f.shown.tier, f.shown.lines, f.place, f.shown.found_after));
        let chosen = found.remove(0);
        if let Err(err) = self.tree.restore(&chosen.best.contents) {
            self.cannot_restore(&err);
            // The copy holds none of them for sure: the state before, as the best, is safe.
            self.best = before;
            return End::Failed("the copy could not be put back".into());
        }
        if let Some(attempt) = chosen.attempt {
            crate::log::info(
                "heal",
                &format!(
                    "attempt {}: {}; as plausible, and smaller or likelier: kept instead",
                    attempt.number,
                    attempt.change.as_deref().unwrap_or("a change")
                ),
            );
            if let Some(last) = self.report.attempts.last_mut() {
                last.kept = false;
            }
            self.report.attempts.retain(|attempt| attempt.kept);
            self.report.attempts.push(attempt);
        }
        if !found.is_empty() {
            crate::log::info(
                "heal",
                &format!(
                    "{} more plausible change{} (heal.plausible)",
                    found.len(),
                    if found.len() == 1 { "" } else { "s" }
                ),
            );
        }
        self.best = chosen.best;
        self.report.plausible = std::iter::once(chosen.shown)
            .chain(found.into_iter().map(|f| f.shown))
            .collect();
        end
    }

    /// The engine's next change, on the best state so far, numbered and counted; or how the
    /// stage ends when there is none.
    /// Long: a 12-field Context, then a match over each way the engine's proposal can end.
    fn propose(
        &mut self,
        engine: &mut dyn Engine,
        deadline: Instant,
    ) -> Result<Result<(u32, Proposal), End>, Failure> {
        let number = self.number + 1;
        let diff = self.tree.diff();
        let failures = self
            .best
            .report
            .as_ref()
            .unwrap_or(&self.baseline.report)
            .clone();
        let context = Context {
            issue: self.request.issue.as_ref(),
            failures: &failures.failures,
            build_error: failures.build_error.as_deref(),
            files: &self.files,
            diff: &diff,
            history: &self.history,
            feedback: &self.feedback,
            number,
            previous: self.report.attempts.last(),
            signals: self.signals,
            deadline,
            spectrum: self.spectrum,
        };
        let proposal = match engine.propose(&context, self.tree) {
            Ok(Proposed::Edits(proposal)) => proposal,
            Ok(Proposed::Exhausted) => {
                return Ok(Err(End::Spent(match number {
                    1 => format!(
                        "the {} engine found nothing to change: the failures point at no source \
                         file it can read and parse (a link, a file that is not UTF-8 or does not \
                         parse is left alone; -v says which)",
                        engine.name()
                    ),
                    _ => format!("the {} engine had nothing more to try", engine.name()),
                })))
            }
            Ok(Proposed::Interrupted(signal)) => return Ok(Err(End::Interrupted(signal))),
            Ok(Proposed::OutOfTime) => {
                return Ok(Err(End::Budget(format!(
                    "the time budget ran out while the {} engine worked on attempt {number}",
                    engine.name()
                ))))
            }
            Err(failure) => {
                self.events.emit(
                    "model_error",
                    json!({"attempt": number, "error": failure.error.to_string()}),
                );
                if self.report.attempts.is_empty() && self.report.candidates_tried == 0 {
                    return Err(failure);
                }
                self.report.error = Some(HealError {
                    message: format!("{:#}", failure.error),
                    hint: failure.hint.clone(),
                });
                return Ok(Err(End::Failed(format!(
                    "the {} engine failed",
                    engine.name()
                ))));
            }
        };
        self.number = number;
        if engine.searches() {
            self.report.candidates_tried += 1;
        } else {
            self.report.tokens.input += proposal.tokens.input;
            self.report.tokens.output += proposal.tokens.output;
            self.events.emit(
                "model_call",
                json!({"attempt": number, "tokens_in": proposal.tokens.input,
                       "tokens_out": proposal.tokens.output,
                       "latency_ms": (proposal.model_seconds * 1000.0) as u64,
                       "prompt_hash": proposal.prompt_hash, "cut_off": proposal.cut_off}),
            );
        }
        Ok(Ok((number, proposal)))
    }

    /// The proposal's edits applied in copy `slot` (0: heal's own, then `workers`), as an
    /// attempt to test; or what came of it when there is nothing to test (no edit applied, a
    /// change tried before).
    fn prepare(
        &mut self,
        slot: usize,
        engine: &'static str,
        searches: bool,
        number: u32,
        proposal: Proposal,
    ) -> Result<Attempt, Step> {
        let tree = match slot {
            0 => &mut *self.tree,
            _ => &mut self.workers[slot - 1],
        };
        let applied = edits::apply(tree, &proposal.edits, &self.rules);
        let diff = tree.diff();
        for edit in &applied {
            self.events.emit(
                "edit",
                json!({"attempt": number, "engine": engine, "path": edit.path,
                       "applied": edit.applied, "matched": edit.matched, "reason": edit.reason,
                       "change": proposal.label}),
            );
        }
        let attempt = Attempt {
            number,
            engine: engine.to_string(),
            change: proposal.label.clone(),
            edits: applied,
            problems: proposal.problems,
            cut_off: proposal.cut_off,
            outcome: None,
            counts: None,
            whole_suite: false,
            still_failing: Vec::new(),
            regressions: Vec::new(),
            kept: false,
            tokens: proposal.tokens,
            model_seconds: proposal.model_seconds,
            test_seconds: 0.0,
            warm: false,
            rank: proposal.rank,
        };
        self.feedback = edit_feedback(&attempt);
        if !attempt.edits.iter().any(|e| e.applied) {
            let why = if attempt.edits.is_empty() && attempt.problems.is_empty() {
                self.feedback = "Your reply held no SEARCH/REPLACE block and called no tool; reply with blocks in the format shown.".into();
                "the reply held no SEARCH/REPLACE block"
            } else {
                "no block applied"
            };
            self.say(searches, &format!("attempt {number}: {why}"));
            self.history.push(format!("attempt {number}: {why}"));
            self.record(searches, attempt);
            return Err(Step::Next);
        }
        if !self.seen_diffs.insert(diff) {
            if let Some(end) = self.undo(slot) {
                return Err(end);
            }
            if searches {
                return Err(Step::Next);
            }
            crate::log::info(
                "heal",
                &format!("attempt {number}: the same change as an earlier attempt"),
            );
            self.history.push(format!(
                "attempt {number}: the same change as an earlier attempt"
            ));
            self.record(searches, attempt);
            return Err(Step::End(End::Spent(
                "the model repeated a change already tried".into(),
            )));
        }
        Ok(attempt)
    }

    /// The tests of an attempt could not be run: the repair ends, with what it found.
    fn could_not_test(&mut self, searches: bool, attempt: Attempt, failure: &Failure) -> Step {
        self.report.error = Some(HealError {
            message: format!("{:#}", failure.error),
            hint: failure.hint.clone(),
        });
        if let Some(end) = self.undo(0) {
            return end;
        }
        self.record(searches, attempt);
        Step::End(End::Failed("the tests could not be run".into()))
    }

    /// The tests' runs of an attempt, as events.
    fn emit_runs(&mut self, attempt: u32, validated: &Validated) {
        for run in &validated.runs {
            let mut fields = json!({"attempt": attempt});
            if let (Some(fields), Some(run)) = (fields.as_object_mut(), run.as_object()) {
                fields.extend(run.clone());
            }
            self.events.emit("tests", fields);
        }
    }

    /// Judges the attempt whose change heal's copy holds by its tests' run: kept when it is
    /// green or better than the best so far and breaks nothing, else undone.
    /// Long: one verdict on an attempt: kept or undone, then green or stalled, all from one judgement.
    fn conclude(
        &mut self,
        engine: &'static str,
        searches: bool,
        mut attempt: Attempt,
        validated: Validated,
    ) -> Result<Step, Failure> {
        let Validated {
            report: result,
            whole_suite,
            ..
        } = validated;
        let number = attempt.number;
        let judged = self.baseline.judge(&result, whole_suite);
        attempt.outcome = Some(result.outcome);
        attempt.counts = Some(result.counts);
        attempt.whole_suite = whole_suite;
        attempt.still_failing = judged.still_failing.clone();
        attempt.regressions = judged.regressions.clone();
        let applied_count = attempt.edits.iter().filter(|e| e.applied).count();
        let what = match &attempt.change {
            Some(change) => change.clone(),
            None => format!(
                "{applied_count} block{} applied",
                if applied_count == 1 { "" } else { "s" }
            ),
        };
        let summary = format!(
            "attempt {number}: {what}; {}",
            judged.summary(self.baseline.failing.len())
        );
        let green = whole_suite && judged.still_failing.is_empty() && judged.regressions.is_empty();
        let score = (
            result.outcome == Outcome::BuildFailed,
            judged.still_failing.len(),
        );
        // Only a change the whole suite ran on is known to break nothing: the tree stays at the
        // best such change between attempts.
        if green || (whole_suite && judged.regressions.is_empty() && score < self.best.score) {
            crate::log::info("heal", &summary);
            attempt.kept = true;
            self.history.push(summary);
            let before = std::mem::replace(
                &mut self.best,
                Best {
                    contents: self.tree.contents(),
                    score,
                    report: Some(result.clone()),
                    engine: Some(engine),
                },
            );
            if green && searches {
                self.before_green = Some(before);
            }
        } else {
            self.say(searches, &summary);
            let why = if !judged.regressions.is_empty() {
                format!(
                    "it broke tests that passed before ({})",
                    judged.regressions.join(", ")
                )
            } else if score > self.best.score {
                "it fixed fewer of the failing tests than the change kept".to_string()
            } else {
                "it fixed none of the failing tests the change kept leaves".to_string()
            };
            let undone = format!("that change was undone: {why}");
            self.feedback.push_str(&format!("\n{undone}\n"));
            if !searches {
                self.history.push(format!("{summary}; {undone}"));
            }
            if let Some(end) = self.undo(0) {
                return Ok(end);
            }
        }
        self.record(searches, attempt);
        if green {
            self.report.status = Some(HealStatus::Green);
            self.report.reason = match searches {
                true => format!("green after {} candidates", self.report.candidates_tried),
                false => format!(
                    "green after {number} attempt{}",
                    if number == 1 { "" } else { "s" }
                ),
            };
            return Ok(Step::End(End::Green));
        }
        let now = signature(&result);
        self.stalled = if now == self.last_signature {
            self.stalled + 1
        } else {
            0
        };
        self.last_signature = now;
        if self.stalled >= 2 && !searches {
            return Ok(Step::End(End::Spent(
                "no progress: the same tests failed the same way twice".into(),
            )));
        }
        Ok(Step::Next)
    }

    /// Gives the first `count` copies a warm worker each, unless the candidates run cold; the
    /// first that cannot have one sends the repair cold, with why.
    fn warm_up(&mut self, count: usize) {
        for slot in 0..count {
            if self.cold.is_some() {
                return;
            }
            let learnt = match slot {
                0 => None,
                _ => self.tree.warm().map(|first| first.learnt.clone()),
            };
            let tree = match slot {
                0 => &mut *self.tree,
                _ => &mut self.workers[slot - 1],
            };
            if tree.warm().is_some() {
                continue;
            }
            let started = Instant::now();
            // The copies are in the best state: its cold run is what their warm runs must give.
            let expected = self.best.report.as_ref().unwrap_or(&self.baseline.report);
            let on = (&*tree, expected);
            match warm::start(
                self.request,
                self.baseline,
                on,
                learnt.as_deref(),
                self.deadline,
            ) {
                Ok(worker) => {
                    tree.set_warm(Some(worker));
                    self.step(
                        true,
                        &format!(
                            "copy {}: the failing tests run warm (ready in {})",
                            slot + 1,
                            shown_duration(started.elapsed())
                        ),
                    );
                    self.events
                        .emit("warm", json!({"copy": slot + 1, "warm": true}));
                }
                Err(why) => self.go_cold(why),
            }
        }
    }

    /// What testing a candidate (maybe in a child process) taught: the whole suite's failures
    /// before any change, and whether the warm worker failed or disagreed with a cold run,
    /// which sends the rest of the repair's candidates cold.
    fn learn_from(&mut self, validated: &Validated) {
        if let Some((unchanged, tests)) = &validated.unchanged {
            self.baseline.learn(unchanged, tests);
        }
        if let Some(why) = &validated.warm_failed {
            self.go_cold(why.clone());
        }
    }

    fn go_cold(&mut self, why: String) {
        if self.cold.is_some() {
            return;
        }
        crate::log::note("heal", &format!("the candidates run cold: {why}"));
        self.events
            .emit("warm", json!({"warm": false, "reason": why}));
        self.tree.set_warm(None);
        for tree in &mut self.workers {
            tree.set_warm(None);
        }
        self.cold = Some(why);
    }

    /// Puts copy `slot` back to the best state; when that fails (code the tests ran got in the
    /// way), the repair ends, with what it found.
    fn undo(&mut self, slot: usize) -> Option<Step> {
        let tree = match slot {
            0 => &mut *self.tree,
            _ => &mut self.workers[slot - 1],
        };
        let err = tree.restore(&self.best.contents).err()?;
        Some(self.cannot_restore(&err))
    }

    fn cannot_restore(&mut self, err: &str) -> Step {
        self.report.error = Some(HealError {
            message: format!(
                "cannot put heal's copy back to the best change: {}",
                self.tree.without_copy_path(err)
            ),
            hint: None,
        });
        Step::End(End::Failed("the copy could not be put back".into()))
    }

    /// Keeps the attempt's record: every one of a model's, only those kept of a search's.
    fn record(&mut self, searches: bool, attempt: Attempt) {
        if !searches || attempt.kept {
            self.report.attempts.push(attempt);
        }
    }

    /// What an attempt came to: on stderr for a model's, with -v for a search's candidates.
    fn say(&self, searches: bool, message: &str) {
        if searches {
            crate::log::note("heal", message);
        } else {
            crate::log::info("heal", message);
        }
    }

    /// What an attempt is doing: as `say`, but on a terminal in the live line (a search's
    /// candidates there too, without -v).
    fn step(&self, searches: bool, message: &str) {
        if searches {
            crate::log::note("heal", message);
            crate::log::step_update("heal", message);
        } else {
            crate::log::step("heal", message);
        }
    }
}

/// What testing a change found: the run that decides, whether it was of the whole suite, and
/// each run made (for the events).
#[derive(Serialize, Deserialize)]
struct Validated {
    report: TestReport,
    whole_suite: bool,
    runs: Vec<serde_json::Value>,
    /// The failing tests ran warm.
    warm: bool,
    /// Why the warm worker cannot be trusted any more: it failed, or the cold run of the whole
    /// suite disagreed with its run of the failing tests.
    warm_failed: Option<String>,
    /// The whole suite run without any change, to tell what failed before, and what it named
    /// (`Baseline::learn`).
    unchanged: Option<(TestReport, Vec<String>)>,
}

impl Validated {
    /// The signal that stopped the run, if one did.
    fn interrupted(&self) -> Option<i32> {
        self.report.sandbox.as_ref().and_then(|s| s.interrupted)
    }
}

/// How long the failing tests may take: a search's candidates get a short time (a mutant may
/// loop), twice the baseline's and at least 2 s; a model's the whole suite's.
fn failing_limit(request: &Settings, baseline: &Baseline, searches: bool) -> Duration {
    match searches {
        true => (baseline.failing_run * 2).max(Duration::from_secs(2)),
        false => request.test_timeout,
    }
}

/// The tests that failed first, within `limit`, then (when they show progress on `best`, the
/// best state's score) all, in `tree`, with `say` told what runs, every run cut at `deadline`
/// (the repair's); each run's start is counted from `origin`. `live`: the attempt whose runs
/// the live line counts, test by test.
#[allow(clippy::too_many_arguments)]
fn validate(
    request: &Settings,
    baseline: &Baseline,
    best: (bool, usize),
    tree: &Tree,
    (limit, deadline): (Duration, Instant),
    origin: Instant,
    say: &dyn Fn(&str),
    live: Option<&str>,
) -> Result<Validated, Failure> {
    let left = || deadline.saturating_duration_since(Instant::now());
    let limit = limit.min(left());
    let live = |shown: &str, total: u64| live_line(live, shown, total);
    let since = |origin: Instant| origin.elapsed().as_millis() as u64;
    let mut runs = Vec::new();
    let (mut ran_warm, mut warm_failed, mut first_still_failing) = (false, None, None);
    let failing = baseline.steady_failing();
    if selectable(baseline.report.framework)
        && request.command.is_none()
        && !failing.is_empty()
        && baseline.report.outcome == Outcome::TestsFailed
    {
        let shown = format!(
            "testing the {} failing test{}",
            failing.len(),
            if failing.len() == 1 { "" } else { "s" }
        );
        say(&shown);
        let (started_ms, live) = (since(origin), live(&shown, failing.len() as u64));
        let first;
        (first, ran_warm, warm_failed) =
            failing_run(request, baseline, tree, (failing, limit), live)?;
        runs.push(
            json!({"scope": "failing", "outcome": first.outcome, "counts": first.counts,
                   "started_ms": started_ms, "duration_ms": first.duration_ms,
                   "wall_ms": since(origin) - started_ms, "warm": ran_warm}),
        );
        // Worth the whole suite only when it fixed more than the change kept.
        let still = first_still_failing
            .insert(baseline.judge(&first, false).still_failing)
            .len();
        let ran = matches!(first.outcome, Outcome::Passed | Outcome::TestsFailed);
        if !ran || (false, still) >= best {
            return Ok(Validated {
                report: first,
                whole_suite: false,
                runs,
                warm: ran_warm,
                warm_failed,
                unchanged: None,
            });
        }
    }
    say("running the whole suite");
    let started_ms = since(origin);
    let live = live("running the whole suite", baseline.report.counts.total());
    // When the failing tests cannot be run alone (make, a --command), the whole suite is the
    // first run, and a mutant that loops is cut as short there.
    let whole_limit = if runs.is_empty() {
        limit
    } else {
        request.test_timeout.min(left())
    };
    let whole = baseline.whole_suite_tests();
    let mut all = baseline::run(request, tree, whole.clone(), whole_limit, live)?;
    let mut run_json = |scope: &str, run: &TestReport, started_ms: u64| {
        runs.push(
            json!({"scope": scope, "outcome": run.outcome, "counts": run.counts,
                   "started_ms": started_ms, "duration_ms": run.duration_ms,
                   "wall_ms": since(origin) - started_ms, "warm": false}),
        )
    };
    run_json("all", &all, started_ms);
    let started_ms = since(origin);
    let limit = request.test_timeout.min(left());
    let unchanged = baseline.run_whole_before(request, tree, &all, limit)?;
    if let Some((before, _)) = &unchanged {
        run_json("all_unchanged", before, started_ms);
    }
    // The suite turned out to be the failing tests' files: the change is tested on them.
    if baseline.whole_suite_tests() != whole {
        let started_ms = since(origin);
        all = baseline::run(request, tree, baseline.whole_suite_tests(), limit, None)?;
        run_json("all", &all, started_ms);
    }
    // Cold: what the failing tests did warm must be what they do in a fresh process.
    if let Some(warm) = ran_warm.then_some(first_still_failing).flatten() {
        warm_failed = warm_failed.or_else(|| contradicted(&warm, baseline.judge(&all, true)));
    }
    Ok(Validated {
        report: all,
        whole_suite: true,
        runs,
        warm: ran_warm,
        warm_failed,
        unchanged,
    })
}

/// What the live line says of a run of `total` tests of `attempt`'s, if it says anything.
fn live_line(attempt: Option<&str>, shown: &str, total: u64) -> Option<Live> {
    attempt.map(|attempt| Live {
        shown: format!("{attempt}: {shown}"),
        total: Some(total),
    })
}

/// The failing tests' run: in the copy's warm worker when it has one, else (or when the worker
/// fails, which is returned) cold; and whether it ran warm.
fn failing_run(
    request: &Settings,
    baseline: &Baseline,
    tree: &Tree,
    (failing, limit): (Vec<String>, Duration),
    live: Option<Live>,
) -> Result<(TestReport, bool, Option<String>), Failure> {
    let failed = match tree.warm().map(|worker| worker.run(failing.clone(), limit)) {
        Some(Ok(mut report)) => {
            report.framework_reason = baseline.report.framework_reason.clone();
            return Ok((report, true, None));
        }
        Some(Err(failure)) => Some(format!("{:#}", failure.error)),
        None => None,
    };
    let report = baseline::run(request, tree, failing, limit, live)?;
    Ok((report, false, failed))
}

/// Why the whole suite's cold run contradicts the failing tests' warm one, if it does: other
/// failing tests still fail.
fn contradicted(warm: &[String], cold: baseline::Judged) -> Option<String> {
    (warm != cold.still_failing).then(|| {
        format!(
            "the failing tests still failing warm ({}) are not those cold ({})",
            shown_ids(warm),
            shown_ids(&cold.still_failing)
        )
    })
}

/// Ids for a message: the first few, and how many more.
fn shown_ids(ids: &[String]) -> String {
    match ids.len() {
        0 => "none".into(),
        1..=3 => ids.join(", "),
        more => format!("{}, and {} more", ids[..3].join(", "), more - 3),
    }
}

/// The files the failing tests are in, from their ids (`shop/tests.py::test_a`,
/// `tests.test_a.T.test_b`, `__tests__/a.test.js > adds`), among the project's files.
fn test_files(failures: &[TestFailure], files: &[String]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for failure in failures {
        let id = failure.id.as_str();
        let mut spellings = vec![
            id.split("::").next().unwrap_or(id).to_string(),
            id.split(" > ").next().unwrap_or(id).to_string(),
        ];
        let dotted: Vec<&str> = id.split('.').collect();
        for end in 1..dotted.len() {
            spellings.push(format!("{}.py", dotted[..end].join("/")));
        }
        found.extend(spellings.into_iter().filter(|path| files.contains(path)));
    }
    found
}

/// A duration as a person reads it: 60 s, 1500 ms, 30 min.
fn shown_duration(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms % 60_000 == 0 && ms > 0 {
        format!("{} min", ms / 60_000)
    } else if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// The end: the best state's status, diff and final run, and the change in the user's tree
/// (green) or in a patch file (not green, or the tree moved meanwhile).
fn finish(
    request: &Settings,
    tree: &Tree,
    best: Best,
    baseline: &Baseline,
    report: &mut Heal,
    budget_hit: Option<String>,
    stop: Option<String>,
) -> Result<(), Failure> {
    report.diff = tree.diff_of(&best.contents);
    report.files_changed = best.contents.keys().cloned().collect();
    if report.status != Some(HealStatus::Green) {
        report.status = Some(match (&budget_hit, best.contents.is_empty()) {
            (Some(_), _) => HealStatus::BudgetExhausted,
            (None, true) => HealStatus::NoChange,
            (None, false) => HealStatus::Red,
        });
        report.reason = budget_hit.or(stop).unwrap_or_default();
    }
    report.engine = best.engine.map(str::to_string);
    report.tests = Some(best.report.unwrap_or_else(|| baseline.report.clone()));
    deliver(request, tree, &best.contents, report)
}

/// What the model is told about its blocks: each one that did not apply and why, and what could
/// not be read.
fn edit_feedback(attempt: &Attempt) -> String {
    let mut out = String::new();
    let applied = attempt.edits.iter().filter(|e| e.applied).count();
    let failed: Vec<&crate::run_document::Applied> =
        attempt.edits.iter().filter(|e| !e.applied).collect();
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
