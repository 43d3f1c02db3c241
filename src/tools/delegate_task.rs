//! `delegate_task` (also served as `delegate_to_local_coder`, local-coder's name, with its
//! arguments): a coding task handed to the configured model, as `autocoder heal --task` run in a
//! process of its own (as `run_tests` runs `run-tests`), each of its steps a progress message;
//! a cancellation stops it, leaving the workspace as it was and its change so far in a patch.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::run_command::{run_self, Progress};
use super::{tool_error, Call, Context, ToolError};
use crate::llm::{Model, ModelFlags};
use crate::run_document::{Counts, Heal, HealStatus, Outcome};
use crate::text::json_prefix;

pub(crate) const DESCRIPTION: &str = "Hand a well-specified coding task to the configured model (often a local one), \
which works on a private copy of the workspace with the file and test tools, writes or names a test first, and works \
until the suite passes. A finished, green change is written to the workspace (only the files it changed); otherwise \
the workspace stays as it was and the change is in patch_file. Returns the status, the model's summary (its own \
words: check them), the tests' outcome and the diff. Takes minutes: raise the client's tool timeout.";

/// A task's steps at most, whatever is asked.
const MAX_STEPS: u32 = 100;
/// How long a task may run (heal's own limit is 30 minutes).
const LIMIT: Duration = Duration::from_secs(35 * 60);
/// The diff in the result at most (bytes, as JSON counts them), so that a large change keeps
/// the result within what clients take (Claude Code refuses results over 25,000 tokens); the
/// whole change is in the workspace or in the patch file.
const SHOWN_DIFF: usize = 20_000;
/// The model's summary in the result at most.
const SHOWN_SUMMARY: usize = 4_000;

/// Whose variables name the model first.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Naming {
    /// `AUTOCODER_*`, then local-coder's `LOCAL_CODER_*` (`delegate_task`).
    Autocoder,
    /// local-coder's, when they name a model or a server (`delegate_to_local_coder`, which
    /// must not send the code to a model `AUTOCODER_*` names for other uses, nor its key).
    LocalCoder,
}

/// Our model variables, all left out when local-coder's name the model.
const OURS: [&str; 4] = [
    "AUTOCODER_BASE_URL",
    "AUTOCODER_MODEL",
    "AUTOCODER_API_KEY",
    "AUTOCODER_ENABLE_THINKING",
];

/// The variables the task's run must not see, as `naming` says.
fn hidden(naming: Naming) -> &'static [&'static str] {
    let set = |name: &str| std::env::var(name).is_ok_and(|value| !value.trim().is_empty());
    if naming == Naming::LocalCoder && (set("LOCAL_CODER_BASE_URL") || set("LOCAL_CODER_MODEL")) {
        &OURS
    } else {
        &[]
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// What to build or change, as you would tell a colleague: the behaviour, the files, how to
    /// test it.
    pub task: String,
    /// Files or directories to look at first.
    #[serde(default)]
    pub paths: Vec<String>,
    /// The model's replies at most (default 30, at most 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub max_steps: Option<u32>,
    /// The project's directory, inside the server's roots (default: the first root).
    #[serde(default)]
    pub workspace: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Output {
    /// green, red, no_change or budget_exhausted.
    pub status: String,
    /// Why it ended.
    pub reason: String,
    /// The model's own account of what it did (not checked by anyone).
    pub summary: Option<String>,
    /// The change as a unified diff, against the workspace as it was; cut at a line after
    /// 20,000 bytes (see diff_cut).
    pub diff: String,
    /// Whether diff is cut: the whole change is in the workspace (applied) or in patch_file.
    pub diff_cut: bool,
    pub files_changed: Vec<String>,
    /// Whether the change was written to the workspace (only a finished, green one is).
    pub applied: bool,
    /// Where the change is as a patch (`git apply`), when it was not written.
    pub patch_file: Option<String>,
    /// The last run of the whole suite.
    pub tests: Option<TestsShown>,
    /// The tool calls the model made.
    pub steps: usize,
    /// What failed, when the model or the environment did (with what to do about it).
    pub error: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TestsShown {
    pub outcome: Outcome,
    pub counts: Counts,
}

pub(crate) fn call(
    context: &Context,
    call: &Call,
    input: Input,
    naming: Naming,
) -> Result<Output, ToolError> {
    if input.task.trim().is_empty() {
        return Err(tool_error("task is empty: say what to build or change"));
    }
    let dir = context
        .roots
        .confine(input.workspace.as_deref().unwrap_or("."))?;
    drop(crate::workspace::jail::open(
        &dir,
        libc::O_RDONLY | libc::O_DIRECTORY,
        0,
    )?);
    // Said here in the server's words: the flags heal's own hint names are not the client's.
    let hidden = hidden(naming);
    let env = |name: &str| {
        (!hidden.contains(&name))
            .then(|| std::env::var(name).ok())
            .flatten()
    };
    match Model::configured(&ModelFlags::default(), env) {
        Ok(Some(_)) => {}
        Ok(None) => return Err(tool_error(
            "no model is configured for this server: set AUTOCODER_BASE_URL and AUTOCODER_MODEL (or local-coder's LOCAL_CODER_BASE_URL and LOCAL_CODER_MODEL) in the environment the client starts `autocoder mcp` with",
        )),
        Err(failure) => return Err(tool_error(format!("the server's model: {:#}", failure.error))),
    }
    let relative = dir.relative.display().to_string();
    let root = dir.beside(std::path::PathBuf::new());
    let max_steps = input.max_steps.unwrap_or(30).clamp(1, MAX_STEPS);
    // One argument each, so that a task starting with `-` stays a task.
    let mut args = vec![
        "heal".to_string(),
        format!("--task={}", input.task),
        format!(
            "--workspace=./{}",
            if relative.is_empty() { "." } else { &relative }
        ),
        format!("--max-steps={max_steps}"),
    ];
    args.extend(input.paths.iter().map(|path| format!("--paths={path}")));
    let document = run_self(
        &args,
        std::os::fd::AsRawFd::as_raw_fd(&root.root_fd),
        None,
        call,
        LIMIT,
        Progress::StderrLines,
        hidden,
    )?;
    let section = document
        .get("heal")
        .ok_or_else(|| tool_error("heal gave no result"))?;
    let heal = Heal::deserialize(section)
        .map_err(|err| tool_error(format!("heal's result cannot be read: {err}")))?;
    Ok(shown(heal))
}

/// What the client is shown of heal's section: the diff cut at a line past SHOWN_DIFF bytes,
/// the summary past SHOWN_SUMMARY.
fn shown(heal: Heal) -> Output {
    let diff = match json_prefix(&heal.diff, SHOWN_DIFF) {
        whole if whole.len() == heal.diff.len() => whole,
        cut => cut.rfind('\n').map_or("", |end| &cut[..=end]),
    };
    Output {
        status: heal.status.map_or("", HealStatus::name).to_string(),
        reason: heal.reason,
        summary: heal
            .summary
            .map(|summary| json_prefix(&summary.text, SHOWN_SUMMARY).to_string()),
        diff_cut: diff.len() < heal.diff.len(),
        diff: diff.to_string(),
        files_changed: heal.files_changed,
        applied: heal.applied,
        patch_file: heal.patch_file,
        tests: heal.tests.map(|tests| TestsShown {
            outcome: tests.outcome,
            counts: tests.counts,
        }),
        steps: heal.steps.len(),
        error: heal.error.map(|error| match error.hint {
            Some(hint) => format!("{} (hint: {hint})", error.message),
            None => error.message,
        }),
    }
}

/// The result as text: the status, the summary, the tests and the diff (as the structured
/// result has it).
pub(crate) fn text(output: &Value) -> String {
    let field = |key: &str| output.get(key).and_then(Value::as_str).unwrap_or_default();
    let mut out = format!("status: {} ({})\n", field("status"), field("reason"));
    if let Some(error) = output.get("error").and_then(Value::as_str) {
        out.push_str(&format!("error: {error}\n"));
    }
    if let Some(summary) = output.get("summary").and_then(Value::as_str) {
        out.push_str(&format!("the model's summary (unchecked): {summary}\n"));
    }
    if let Some(tests) = output.get("tests").filter(|tests| !tests.is_null()) {
        out.push_str(&format!(
            "tests: {} ({})\n",
            tests["outcome"].as_str().unwrap_or_default(),
            tests["counts"]
        ));
    }
    let applied = output.get("applied").and_then(Value::as_bool) == Some(true);
    out.push_str(
        match (applied, output.get("patch_file").and_then(Value::as_str)) {
            (true, _) => "written to the workspace\n",
            (false, Some(_)) => "not written to the workspace: the change is in the patch file\n",
            (false, None) => "nothing was written to the workspace\n",
        },
    );
    if let Some(path) = output.get("patch_file").and_then(Value::as_str) {
        out.push_str(&format!("patch_file: {path}\n"));
    }
    let diff = field("diff");
    if !diff.is_empty() {
        out.push('\n');
        out.push_str(diff);
        if output.get("diff_cut").and_then(Value::as_bool) == Some(true) {
            out.push_str(if applied {
                "[... the diff is cut: the whole change is in the workspace (git diff)]\n"
            } else {
                "[... the diff is cut: the whole change is in patch_file]\n"
            });
        }
    }
    out
}
