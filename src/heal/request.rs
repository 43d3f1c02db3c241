//! heal's entry point, the same for the subcommand, an MCP tool or a batch run: what is asked
//! (`HealRequest`), checked before anything runs; which engines repair, in which order
//! (`--engine auto`: the offline engine, then the model); and when the work is a task for the
//! model instead (`--task`, or an issue no test fails for).

use std::path::{Component, Path};
use std::sync::Arc;
use std::time::Duration;

use super::record::Events;
use super::task::{self, Task};
use super::{heal, Healed, ModelEngine, MutateEngine, Settings, Stage};
use crate::error::Failure;
use crate::llm::{Model, Session};
use crate::run_document::{HealStatus, Outcome};
use crate::secrets::Secrets;

/// How long one model call may take.
const MODEL_CALL: Duration = Duration::from_secs(600);

/// Which engines make the changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engines {
    /// The offline engine first, then the model when one is configured.
    Auto,
    /// The model alone.
    Model,
    /// The offline engine alone.
    Offline,
}

/// A repair (or a task) to carry out.
pub(crate) struct HealRequest {
    pub settings: Settings,
    pub engines: Engines,
    /// The model the engines and a task use, when one is configured.
    pub model: Option<Model>,
    /// A coding task (`--task`) in place of repairing the failing tests.
    pub task: Option<String>,
    /// Files or directories a task looks at first: relative to the workspace, or absolute in it.
    pub paths: Vec<String>,
    /// A task's tool calls at most.
    pub max_steps: u32,
    /// The model's context window, in tokens.
    pub context_tokens: u64,
    /// The offline engine's candidates at most: a safety cap under its time.
    pub max_candidates: u32,
    /// The model's attempts at most.
    pub max_attempts: u32,
    /// The offline engine's time, its main bound; a model's turn follows it.
    pub mutate_time: Duration,
}

impl HealRequest {
    /// Refuses what cannot be carried out, before anything runs.
    pub(crate) fn check(&self) -> Result<(), Failure> {
        self.check_task()?;
        let needs_model = match self.task {
            Some(_) => Some("--task"),
            None => (self.engines == Engines::Model).then_some("--engine llm"),
        };
        if let (Some(what), None) = (needs_model, &self.model) {
            return Err(crate::llm::none_configured(what));
        }
        if let Some(bad) = self.settings.env.iter().find(|flag| {
            let name = flag.split_once('=').map_or(flag.as_str(), |(name, _)| name);
            name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }) {
            return Err(Failure::usage(format!("--env {bad}: not KEY or KEY=VALUE"))
                .with_hint("give a variable's name, with =VALUE to set it"));
        }
        for path in &self.paths {
            path_in(&self.settings.workspace, path)?;
        }
        Ok(())
    }

    /// The task's part of `check`, which needs no model to be looked for first.
    pub(crate) fn check_task(&self) -> Result<(), Failure> {
        if self
            .task
            .as_deref()
            .is_some_and(|task| task.trim().is_empty())
        {
            return Err(Failure::usage("--task is empty").with_hint("say what to build or change"));
        }
        if self.task.is_some() && self.engines == Engines::Offline {
            return Err(Failure::usage(
                "--task needs a model; the offline engine repairs failing tests only",
            )
            .with_hint("leave out --engine mutate, and name a model (--model, --base-url)"));
        }
        Ok(())
    }

    /// What is withheld from every model request, trace and test: the model's key, the
    /// credentials `--env` passes, the environment's and the workspace's.
    pub(crate) fn secrets(&self) -> Secrets {
        let model = self.model.as_ref().map(Model::secrets).unwrap_or_default();
        Secrets::collect(&model, &self.settings.env, &self.settings.workspace)
    }
}

/// Carries out `request`: the failing tests repaired, or the task done; `events`: the
/// `--events` trace's file.
pub(crate) fn run(request: HealRequest, events: Option<std::fs::File>) -> Result<Healed, Failure> {
    request.check()?;
    let secrets = request.secrets();
    let mut events = Events::new(events, secrets.clone());
    let session = match request.model {
        Some(model) => Some(Arc::new(
            Session::new(model, MODEL_CALL)?.withholding(secrets),
        )),
        None => None,
    };
    let paths = request
        .paths
        .iter()
        .map(|path| path_in(&request.settings.workspace, path))
        .collect::<Result<Vec<_>, _>>()?;
    let task = |text: String| Task {
        text,
        paths: paths.clone(),
        max_steps: request.max_steps,
        context_tokens: request.context_tokens,
    };
    let settings = request.settings;
    let healed = match (&request.task, &session) {
        (Some(text), Some(session)) => {
            task::run(settings, &task(text.clone()), session, &mut events)
        }
        _ => {
            let stages = stages(
                request.engines,
                session.as_ref(),
                request.max_candidates,
                request.max_attempts,
                request.mutate_time,
            );
            let healed = heal(settings.clone(), session.as_deref(), stages, &mut events);
            // An issue no test fails for (a feature, a change) is a task for the model.
            match (&healed, &session, &settings.issue) {
                (Ok(healed), Some(session), Some(issue)) if nothing_fails(healed) => {
                    crate::log::info("heal", "no test fails: the issue is carried out as a task");
                    let text = format!(
                        "{}\n\n{}",
                        issue.title.trim(),
                        crate::text::cut(issue.body.trim(), 6000)
                    );
                    task::run(settings.clone(), &task(text), session, &mut events)
                }
                _ => healed,
            }
        }
    };
    let healed = healed?;
    events.emit(
        "end",
        serde_json::json!({"status": healed.report.status.map_or("unknown", HealStatus::name),
                           "attempts": healed.report.attempts.len(),
                           "steps": healed.report.steps.len()}),
    );
    Ok(healed)
}

/// The engines' turns: the offline engine for its time (its candidates at most), then the model
/// for the rest.
fn stages(
    engines: Engines,
    session: Option<&Arc<Session>>,
    max_candidates: u32,
    max_attempts: u32,
    mutate_time: Duration,
) -> Vec<Stage> {
    let mut stages = Vec::new();
    if engines != Engines::Model {
        stages.push(Stage {
            engine: Box::new(MutateEngine::default()),
            attempts: max_candidates,
            time: Some(mutate_time),
        });
    }
    if let Some(session) = session {
        stages.push(Stage {
            engine: Box::new(ModelEngine::new(Arc::clone(session))),
            attempts: max_attempts,
            time: None,
        });
    }
    stages
}

/// Whether the repair found the whole suite passing, and so nothing to repair.
fn nothing_fails(healed: &Healed) -> bool {
    let report = &healed.report;
    healed.interrupted.is_none()
        && !healed.failed
        && report.failing_before.is_empty()
        && report
            .tests
            .as_ref()
            .is_some_and(|tests| tests.outcome == Outcome::Passed)
}

/// A `--paths` entry as a path from the workspace's root (`.` for the root itself); one
/// outside the workspace is refused.
fn path_in(workspace: &Path, path: &str) -> Result<String, Failure> {
    let outside = || {
        Failure::usage(format!(
            "--paths {}: not inside the workspace {}",
            crate::text::sanitize_for_terminal(path),
            workspace.display()
        ))
        .with_hint("give files or directories of the project, relative to its root")
    };
    let given = Path::new(path);
    let relative = if given.is_absolute() {
        let given = given.canonicalize().unwrap_or_else(|_| given.to_path_buf());
        given
            .strip_prefix(workspace)
            .map_err(|_| outside())?
            .to_path_buf()
    } else {
        given.to_path_buf()
    };
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy()),
            Component::CurDir => {}
            Component::ParentDir if parts.pop().is_some() => {}
            _ => return Err(outside()),
        }
    }
    Ok(match parts.is_empty() {
        true => ".".to_string(),
        false => parts.join("/"),
    })
}
