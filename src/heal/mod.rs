//! `heal`: failing tests in, a verified change out. `request` is the entry point (`run`): it
//! chooses the engines (the offline one, `mutate`; the model, `model`) and whether the work is
//! a task (`task`, the model as an agent over the tool catalogue). Every engine (`engine`) runs
//! in one loop (`repair`), which owns what makes a change trustworthy: the baseline (what
//! fails, what is flaky, `baseline`), validation in the sandbox, the best state kept, the
//! stopping rules. The user's tree is reached only by a green change, at the end (`deliver`,
//! through `tree`).

mod baseline;
mod coverage;
mod deliver;
pub(crate) mod edits;
mod engine;
pub(crate) mod matching;
mod model;
mod mutate;
mod parallel;
pub(crate) mod prompt;
pub(crate) mod record;
mod repair;
mod request;
pub(crate) mod task;
pub(crate) mod tree;
mod warm;

use std::path::PathBuf;
use std::time::Duration;

use self::deliver::deliver;
use self::engine::{Context, Engine, Proposal, Proposed, Stage};
use self::repair::heal;
use crate::run_document::{Framework, Heal, Issue, TestReport};

pub(crate) use self::model::ModelEngine;
pub(crate) use self::mutate::MutateEngine;
pub(crate) use self::request::{run, Engines, HealRequest};

/// What every run of the tests and every engine of a repair share: the project, the issue,
/// the baseline, the limits.
#[derive(Clone)]
pub(crate) struct Settings {
    /// The user's project (checked, canonical).
    pub workspace: PathBuf,
    pub issue: Option<Issue>,
    /// A test run of this workspace the document holds, taken as the baseline's first run.
    pub baseline: Option<TestReport>,
    pub framework: Option<Framework>,
    /// Why that runner (the baseline's reason, kept for every run).
    pub framework_reason: Option<String>,
    /// The command the document's run was made with (`run-tests --command`), for every run:
    /// it runs whole, as given.
    pub command: Option<String>,
    pub token_budget: Option<u64>,
    /// The whole repair's wall time.
    pub timeout: Duration,
    /// One run of the whole suite's.
    pub test_timeout: Duration,
    pub allow_test_edits: bool,
    pub patch_out: Option<PathBuf>,
    /// Variables passed to the tests (`--env`).
    pub env: Vec<String>,
    /// How many of a search's candidates are tested at once.
    pub jobs: usize,
    /// A search's candidates run cold, each in a fresh process, even where they could run warm.
    pub cold: bool,
}

/// How heal ended: the report, whether the model or the environment failed on the way (exit
/// 3, the report still written), and the signal that interrupted it.
pub(crate) struct Healed {
    pub report: Heal,
    pub failed: bool,
    pub interrupted: Option<i32>,
}
