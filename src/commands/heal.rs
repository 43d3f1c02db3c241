//! `autocoder heal`: the run document's failing tests in, a verified change out (`heal`).

use std::sync::Arc;
use std::time::Duration;

use crate::cli::{Engine, GlobalArgs, HealArgs};
use crate::error::Failure;
use crate::heal::record::Events;
use crate::heal::{self, HealRequest, ModelEngine, MutateEngine, Stage};
use crate::llm::{Model, ModelFlags, Session};
use crate::output::write_json;
use crate::run_document::{HealStatus, RunDocument};
use crate::secrets::Secrets;

/// How long one model call may take.
const MODEL_CALL: Duration = Duration::from_secs(600);

pub fn run(args: HealArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    let mut document = RunDocument::from_stdin("heal")?;
    let workspace = document.workspace(args.workspace.as_deref())?;
    let workspace = crate::sandbox::policy::checked_workspace(&workspace)?.path;
    let flags = ModelFlags {
        provider: args.provider,
        model: args.model.clone(),
        base_url: args.base_url.clone(),
    };
    if args
        .task
        .as_deref()
        .is_some_and(|task| task.trim().is_empty())
    {
        return Err(Failure::usage("--task is empty").with_hint("say what to build or change"));
    }
    if args.task.is_some() && args.engine == Engine::Mutate {
        return Err(Failure::usage(
            "--task needs a model; the offline engine repairs failing tests only",
        )
        .with_hint("leave out --engine mutate, and name a model (--model, --base-url)"));
    }
    let engine = match args.task {
        Some(_) => Engine::Llm,
        None => args.engine,
    };
    let model = match engine {
        Engine::Mutate => None,
        Engine::Auto => Model::configured(&flags, |name| std::env::var(name).ok())?,
        Engine::Llm => Some(
            Model::configured(&flags, |name| std::env::var(name).ok())?.ok_or_else(|| {
                let what = match args.task {
                    Some(_) => "--task",
                    None => "--engine llm",
                };
                Failure::usage(format!("{what} needs a model, and none is configured")).with_hint(
                    "name one: --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b \
                     (Ollama), or AUTOCODER_MODEL / AUTOCODER_BASE_URL; a key alone \
                     (OPENAI_API_KEY) is not enough",
                )
            })?,
        ),
    };
    // Said now, not after the baseline's runs.
    if let Some(bad) = args.env.iter().find(|flag| {
        let name = flag.split_once('=').map_or(flag.as_str(), |(name, _)| name);
        name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    }) {
        return Err(Failure::usage(format!("--env {bad}: not KEY or KEY=VALUE"))
            .with_hint("give a variable's name, with =VALUE to set it"));
    }
    // The document's test run is the baseline only when it was run here.
    let ran_here = document.has("workspace")
        && document
            .workspace(None)
            .ok()
            .and_then(|path| path.canonicalize().ok())
            .is_some_and(|path| path == workspace);
    let baseline = match document.tests()? {
        Some(tests) if ran_here && tests.sandbox.is_some() => Some(tests),
        _ => None,
    };
    let events = match &args.events {
        Some(path) => Some(
            crate::workspace::write::create_output(path, &workspace, false).map_err(|err| {
                Failure::usage(format!("--events {}: {err}", path.display()))
                    .with_hint("give a file in a writable directory")
            })?,
        ),
        None => None,
    };
    let model_secrets = model.as_ref().map(Model::secrets).unwrap_or_default();
    let secrets = Secrets::collect(&model_secrets, &args.env, &workspace);
    let mut events = Events::new(events, secrets.clone());
    let session = match model {
        Some(model) => Some(Arc::new(
            Session::new(model, MODEL_CALL)?.withholding(secrets),
        )),
        None => None,
    };
    let request = HealRequest {
        workspace: workspace.clone(),
        issue: document.issue()?,
        baseline,
        framework: None,
        framework_reason: None,
        command: None,
        token_budget: args.token_budget,
        timeout: args.timeout,
        test_timeout: args.test_timeout,
        allow_test_edits: args.allow_test_edits,
        patch_out: args.patch_out,
        env: args.env.clone(),
        jobs: args.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |jobs| jobs as usize,
        ),
    };
    if !ran_here {
        document.set_workspace(&workspace);
    }
    let started = std::time::Instant::now();
    let context_tokens = match args.context_tokens {
        Some(tokens) => tokens,
        None => context_tokens_of_env()?,
    };
    let paths = args
        .paths
        .iter()
        .map(|path| path_in(&workspace, path))
        .collect::<Result<Vec<_>, _>>()?;
    let task = |text: String| heal::task::Task {
        text,
        paths: paths.clone(),
        max_steps: args.max_steps,
        context_tokens,
    };
    if let (Some(text), Some(session)) = (&args.task, &session) {
        let healed = heal::task::run(request, &task(text.clone()), session, &mut events);
        return conclude(healed, started, document, &mut events, global);
    }
    let mut stages = Vec::new();
    if args.engine != Engine::Llm {
        stages.push(Stage {
            engine: Box::new(MutateEngine::default()),
            attempts: args.max_candidates,
            // Alone, it has the whole time; before a model, a small part of it.
            time: (args.engine == Engine::Auto && session.is_some()).then_some(args.mutate_time),
        });
    }
    if let Some(session) = &session {
        stages.push(Stage {
            engine: Box::new(ModelEngine::new(Arc::clone(session))),
            attempts: args.max_attempts,
            time: None,
        });
    }
    let healed = heal::heal(request.clone(), session.as_deref(), stages, &mut events);
    // An issue no test fails for (a feature, a change) is a task for the model.
    let as_task = match (&healed, &session, &request.issue) {
        (Ok(healed), Some(session), Some(issue)) if nothing_fails(healed) => Some((session, issue)),
        _ => None,
    };
    if let Some((session, issue)) = as_task {
        crate::log::info("heal", "no test fails: the issue is carried out as a task");
        let text = format!(
            "{}\n\n{}",
            issue.title.trim(),
            crate::text::cut(issue.body.trim(), 6000)
        );
        let healed = heal::task::run(request, &task(text), session, &mut events);
        return conclude(healed, started, document, &mut events, global);
    }
    conclude(healed, started, document, &mut events, global)
}

/// A `--paths` entry as a path from the workspace's root (`.` for the root itself); one
/// outside the workspace is refused.
fn path_in(workspace: &std::path::Path, path: &str) -> Result<String, Failure> {
    use std::path::{Component, Path};
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

/// Whether the repair found the whole suite passing, and so nothing to repair.
fn nothing_fails(healed: &heal::Healed) -> bool {
    let report = &healed.report;
    healed.interrupted.is_none()
        && !healed.failed
        && report.failing_before.is_empty()
        && report
            .tests
            .as_ref()
            .is_some_and(|tests| tests.outcome == crate::run_document::Outcome::Passed)
}

/// The document written with what heal found, and the exit status: 0 green, 1 not green, 3
/// the model or the sandbox failed, 128+N interrupted by signal N.
fn conclude(
    healed: Result<heal::Healed, Failure>,
    started: std::time::Instant,
    mut document: RunDocument,
    events: &mut Events,
    global: &GlobalArgs,
) -> Result<i32, Failure> {
    crate::log::end_live();
    let healed = healed?;
    crate::log::info("heal", &summary(&healed.report, started.elapsed()));
    events.emit(
        "end",
        serde_json::json!({"status": healed.report.status.map_or("unknown", HealStatus::name), "attempts": healed.report.attempts.len(),
                           "steps": healed.report.steps.len()}),
    );
    let status = healed.report.status;
    document.set_heal(&healed.report);
    write_json(std::io::stdout(), document.as_value(), global.pretty)?;
    Ok(if let Some(signal) = healed.interrupted {
        128 + signal
    } else if healed.failed {
        if let Some(error) = &healed.report.error {
            crate::log::error("heal", &error.message, error.hint.as_deref());
        }
        3
    } else if status == Some(HealStatus::Green) {
        0
    } else {
        1
    })
}

/// The last line said: the status and why, and what the repair took.
fn summary(report: &crate::run_document::Heal, took: std::time::Duration) -> String {
    let status = report.status.map_or("unknown", HealStatus::name);
    let mut line = match report.reason.starts_with(status) {
        true => report.reason.clone(),
        false => format!("{status}: {}", report.reason),
    };
    let attempts = report.attempts.len();
    if attempts > 0 && report.candidates_tried == 0 && !line.contains("attempt") {
        line.push_str(&format!(
            " · {attempts} attempt{}",
            if attempts == 1 { "" } else { "s" }
        ));
    }
    if !report.steps.is_empty() {
        line.push_str(&format!(" · {} tool calls", report.steps.len()));
    }
    let tokens = report.tokens.input + report.tokens.output;
    if tokens > 0 {
        line.push_str(&format!(" · {tokens} tokens"));
    }
    line.push_str(&format!(" · {:.1} s", took.as_secs_f64()));
    crate::text::sanitize_for_terminal(&line)
}

/// The model's context window as the environment says (`AUTOCODER_CONTEXT_TOKENS`, else
/// local-coder's `LOCAL_CODER_CONTEXT_TOKENS`: an MCP client's configuration sets it for
/// `delegate_task`), else 32,000 tokens, as servers do not report it.
fn context_tokens_of_env() -> Result<u64, Failure> {
    for name in ["AUTOCODER_CONTEXT_TOKENS", "LOCAL_CODER_CONTEXT_TOKENS"] {
        let Some(value) = std::env::var(name).ok().filter(|v| !v.trim().is_empty()) else {
            continue;
        };
        return match value.trim().parse::<u64>() {
            Ok(tokens) if tokens >= 4_000 => Ok(tokens),
            _ => Err(Failure::usage(format!(
                "{name}={value} is not a context window of 4000 tokens or more"
            ))
            .with_hint("give the model's context window in tokens, e.g. 32768")),
        };
    }
    Ok(32_000)
}
