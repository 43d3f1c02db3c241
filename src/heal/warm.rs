//! A search's candidates tested warm: each copy's worker (`testrun::warm`) started, and trusted
//! only once it has run the failing tests as the baseline's cold run did. Tests that depend on
//! state a fresh process has (the environment read at import, the time, the directory) fail
//! that check, and the repair runs cold. What is kept is always run cold (`repair::validate`).

use std::collections::BTreeSet;
use std::time::Instant;

use super::baseline::{self, signature, Baseline};
use super::parallel;
use super::tree::Tree;
use super::Settings;
use crate::run_document::{Outcome, TestReport};
use crate::testrun::warm::Warm;
use crate::testrun::TestRequest;

/// Why the repair's candidates cannot run warm at all, if they cannot.
pub(super) fn not_warm(request: &Settings, baseline: &Baseline) -> Option<String> {
    match request.cold {
        true => Some("--cold".into()),
        false => Warm::cannot_run(baseline.report.framework, request.command.is_some()),
    }
}

/// Warm runs for `tree`, living until `deadline`, that have run the failing tests twice (once
/// to learn what they import or which files define them, once warm) and got what `expected`, a
/// cold run of the whole suite on the state `tree` is in, got for them; else why not. Given what
/// another copy's learnt (`learnt`), they take that instead, and are trusted as those were.
pub(super) fn start(
    request: &Settings,
    baseline: &Baseline,
    (tree, expected): (&Tree, &TestReport),
    learnt: Option<&[String]>,
    deadline: Instant,
) -> Result<Warm, String> {
    // The worker's sandbox runs in a fork of this process, which must have one thread.
    if !parallel::single_threaded() {
        return Err("heal has more than one thread, and cannot fork a worker".into());
    }
    let life = deadline.saturating_duration_since(Instant::now());
    let mut warm = Warm::start(TestRequest {
        framework: Some(baseline.report.framework),
        ..baseline::test_request(request, tree, None, Vec::new(), life)
    })
    .map_err(|failure| format!("{:#}", failure.error))?;
    let said = |failure: crate::error::Failure| format!("{:#}", failure.error);
    if let Some(modules) = learnt {
        warm.preload(modules).map_err(said)?;
        return match warm.unsafe_reason.take() {
            Some(why) => Err(why),
            None => Ok(warm),
        };
    }
    let failing = baseline.steady_failing();
    warm.learn(failing.clone(), request.test_timeout)
        .map_err(said)?;
    if let Some(why) = &warm.unsafe_reason {
        return Err(why.clone());
    }
    let again = warm
        .run(failing.clone(), request.test_timeout)
        .map_err(said)?;
    // Failed the same way: the same tests, each with the same kind of failure and message.
    let failed = |report: &TestReport| -> BTreeSet<_> {
        signature(report)
            .into_iter()
            .filter(|(id, _, _)| failing.contains(id))
            .collect()
    };
    let (cold, warm_said) = (failed(expected), failed(&again));
    let ran = matches!(again.outcome, Outcome::TestsFailed | Outcome::Passed);
    if !ran || cold != warm_said {
        let differs = match (
            warm_said.difference(&cold).next(),
            cold.difference(&warm_said).next(),
        ) {
            (Some((id, _, message)), _) => format!("{id}: {message}"),
            (None, Some((id, _, message))) => format!("{id} did not fail with {message}"),
            (None, None) => again.outcome.name().to_string(),
        };
        return Err(format!(
            "run warm, the failing tests did not fail as they did cold ({}): they depend on \
             what a fresh process has",
            crate::text::sanitize_for_terminal(crate::text::cut(&differs, 200))
        ));
    }
    Ok(warm)
}
