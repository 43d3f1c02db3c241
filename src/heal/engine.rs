//! The engine trait: what makes changes (the model, the offline engine), what each is shown
//! and what it answers, and its turn in the loop (a stage).

use std::time::{Duration, Instant};

use super::coverage;
use super::edits::Edit;
use super::tree::Tree;
use crate::error::Failure;
use crate::run_document::{Attempt, Issue, TestFailure, Tokens};
use crate::sandbox::supervise::TerminationSignals;

/// What makes changes: the model, or the offline engine.
pub(super) trait Engine {
    fn name(&self) -> &'static str;
    /// Whether it searches through many small candidates (the offline engine), not a few
    /// considered attempts: then the same failures twice do not end it, a repeated change is
    /// skipped, only the candidates kept are recorded, and the failing tests get a short time.
    fn searches(&self) -> bool;
    /// The next change to try on the tree's state (the best so far).
    fn propose(&mut self, context: &Context, tree: &Tree) -> Result<Proposed, Failure>;
    /// After its last change made the tests pass, up to `at_most` others like it, on the state
    /// before it: a search's other plausible patches. None by default.
    fn alternatives(&mut self, _tree: &Tree, _at_most: usize) -> Vec<Proposal> {
        Vec::new()
    }
}

/// What an engine is shown: the state it works from.
pub(crate) struct Context<'a> {
    pub issue: Option<&'a Issue>,
    /// The failures of the best state so far.
    pub failures: &'a [TestFailure],
    pub build_error: Option<&'a str>,
    pub files: &'a [String],
    pub diff: &'a str,
    /// One line per earlier attempt.
    pub history: &'a [String],
    /// What the last attempt's edits got back.
    pub feedback: &'a str,
    pub number: u32,
    /// The attempt before this one, when there was one.
    pub previous: Option<&'a Attempt>,
    pub signals: &'a TerminationSignals,
    /// When the engine's stage runs out of time: a model's answer is not waited for past it.
    pub deadline: Instant,
    /// Which lines the failing tests ran, when measured.
    pub spectrum: Option<&'a coverage::Spectrum>,
}

/// An engine's answer.
pub(super) enum Proposed {
    Edits(Proposal),
    /// It has nothing more to try.
    Exhausted,
    /// A signal came while it worked.
    Interrupted(i32),
    /// The stage's time ran out while it worked.
    OutOfTime,
}

#[derive(Default)]
pub(super) struct Proposal {
    pub edits: Vec<Edit>,
    /// What could not be read as an edit.
    pub problems: Vec<String>,
    pub cut_off: bool,
    pub tokens: Tokens,
    pub model_seconds: f64,
    pub prompt_hash: Option<String>,
    /// What the change is, for people (the offline engine's candidates).
    pub label: Option<String>,
    /// A search's candidate's tier and place (its suspicious region): the lower, the likelier.
    pub rank: Option<(u8, usize)>,
}

/// One engine's turn: how many attempts and how long it may take.
pub(super) struct Stage {
    pub engine: Box<dyn Engine>,
    pub attempts: u32,
    pub time: Option<Duration>,
}
