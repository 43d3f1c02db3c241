//! `autocoder heal`: the run document's failing tests in, a verified change out (`heal`).

use std::time::Duration;

use crate::cli::{Engine, GlobalArgs, HealArgs};
use crate::error::Failure;
use crate::heal::record::Events;
use crate::heal::{self, HealRequest};
use crate::llm::{Model, ModelFlags, Session};
use crate::output::write_json;
use crate::run_document::{HealStatus, RunDocument};

/// How long one model call may take.
const MODEL_CALL: Duration = Duration::from_secs(600);

pub fn run(args: HealArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    let mut document = RunDocument::from_stdin("heal")?;
    let workspace = document.workspace(args.workspace.as_deref())?;
    let workspace = crate::sandbox::policy::checked_workspace(&workspace)?.path;
    if args.engine == Engine::Mutate {
        return Err(Failure::usage(
            "the offline engine (--engine mutate) is not in this build yet",
        )
        .with_hint("use a model: --model NAME and --base-url URL (or AUTOCODER_MODEL / AUTOCODER_BASE_URL)"));
    }
    let flags = ModelFlags {
        provider: args.provider,
        model: args.model.clone(),
        base_url: args.base_url.clone(),
    };
    let Some(model) = Model::configured(&flags, |name| std::env::var(name).ok())? else {
        return Err(Failure::usage(
            "no model is configured, and the offline engine is not in this build yet",
        )
        .with_hint(
            "name a model: --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b (Ollama), or \
             AUTOCODER_MODEL / AUTOCODER_BASE_URL; a key alone (OPENAI_API_KEY) is not enough",
        ));
    };
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
        Some(path) => Some(std::fs::File::create(path).map_err(|err| {
            Failure::usage(format!("--events {}: {err}", path.display()))
                .with_hint("give a file in a writable directory")
        })?),
        None => None,
    };
    let mut events = Events::new(events);
    let session = std::sync::Arc::new(Session::new(model, MODEL_CALL)?);
    let healed = heal::heal(
        HealRequest {
            workspace: workspace.clone(),
            issue: document.issue()?,
            baseline,
            framework: None,
            max_attempts: args.max_attempts,
            token_budget: args.token_budget,
            timeout: args.timeout,
            test_timeout: args.test_timeout,
            allow_test_edits: args.allow_test_edits,
            patch_out: args.patch_out,
            env: args.env,
        },
        session,
        &mut events,
    )?;
    events.emit(
        "end",
        serde_json::json!({"status": healed.report.status.name(), "attempts": healed.report.attempts.len()}),
    );
    if !ran_here {
        document.set_workspace(&workspace);
    }
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
    } else if status == HealStatus::Green {
        0
    } else {
        1
    })
}
