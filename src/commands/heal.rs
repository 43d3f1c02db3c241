//! `autocoder heal`: the run document's failing tests in, a verified change out (`heal`).

use crate::cli::{Engine, GlobalArgs, HealArgs};
use crate::error::Failure;
use crate::heal::record::summary;
use crate::heal::{self, Engines, HealRequest, Settings};
use crate::llm::{Model, ModelFlags};
use crate::output::write_json;
use crate::run_document::{HealStatus, RunDocument};

pub(crate) fn run(args: HealArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    let mut document = RunDocument::from_stdin("heal")?;
    let workspace = document.workspace(args.workspace.as_deref())?;
    let workspace = crate::sandbox::policy::checked_workspace(&workspace)?.path;
    let flags = ModelFlags::from(&args.model);
    let engines = match (&args.task, args.engine) {
        (_, Engine::Mutate) => Engines::Offline,
        (Some(_), _) | (None, Engine::Llm) => Engines::Model,
        (None, Engine::Auto) => Engines::Auto,
    };
    // The document's test run is the baseline only when it was run here.
    let ran_here = document.has("workspace")
        && document
            .workspace(None)
            .ok()
            .and_then(|path| path.canonicalize().ok())
            .is_some_and(|path| path == workspace);
    let context_tokens = match args.context_tokens {
        Some(tokens) => tokens,
        None => crate::llm::context_window_of_env(|name| std::env::var(name).ok())?,
    };
    let mut request = HealRequest {
        settings: Settings {
            workspace: workspace.clone(),
            issue: document.issue()?,
            baseline: None,
            framework: None,
            framework_reason: None,
            command: None,
            token_budget: args.token_budget,
            timeout: args.timeout,
            test_timeout: args.test_timeout,
            allow_test_edits: args.allow_test_edits,
            cold: args.cold,
            patch_out: args.patch_out,
            env: args.env,
            jobs: args.jobs.map_or_else(
                || std::thread::available_parallelism().map_or(1, |n| n.get()),
                |jobs| jobs as usize,
            ),
        },
        engines,
        model: None,
        task: args.task,
        paths: args.paths,
        max_steps: args.max_steps,
        context_tokens,
        max_candidates: args.max_candidates,
        max_attempts: args.max_attempts,
        mutate_time: args.mutate_time,
    };
    request.check_task()?;
    if engines != Engines::Offline {
        request.model = Model::configured(&flags, |name| std::env::var(name).ok())?;
    }
    // Said now, not after the baseline's runs.
    request.check()?;
    request.settings.baseline = match document.tests()? {
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
    if !ran_here {
        document.set_workspace(&workspace);
    }
    let started = std::time::Instant::now();
    let healed = heal::run(request, events);
    conclude(healed, started, document, global)
}

/// The document written with what heal found, and the exit status: 0 green, 1 not green, 3
/// the model or the sandbox failed, 128+N interrupted by signal N.
fn conclude(
    healed: Result<heal::Healed, Failure>,
    started: std::time::Instant,
    mut document: RunDocument,
    global: &GlobalArgs,
) -> Result<i32, Failure> {
    crate::log::end_live();
    let healed = healed?;
    crate::log::info("heal", &summary(&healed.report, started.elapsed()));
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
