//! `run_tests`: the project's tests, run in the sandbox by `autocoder run-tests`, as its report.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::run_command::{run_self, Progress};
use super::{tool_error, Call, Context, ToolError};
use crate::text::{Budget, RESULT_BUDGET};

pub(crate) const DESCRIPTION: &str = "Run the project's tests in the sandbox (the runner is detected: pytest, unittest, \
cargo, nextest, go, node, jest, vitest, make) and report the outcome (passed, tests_failed, build_failed, no_tests, \
timeout, error), the counts, and each failure: an id to pass back in tests to run it alone, the file and line inside \
the project, the kind, a one-line message and the traceback.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// Run only these tests, by the ids a report gave.
    #[serde(default)]
    pub tests: Vec<String>,
    /// Seconds before the run is stopped (default 600, at most 3600).
    #[serde(default)]
    #[schemars(range(min = 1, max = 3600))]
    pub timeout_sec: Option<u64>,
}

pub(crate) fn call(context: &Context, call: &Call, input: Input) -> Result<Value, ToolError> {
    let root = context.roots.confine(".")?;
    let timeout = input.timeout_sec.unwrap_or(600).clamp(1, 3600);
    let mut args = vec![
        "run-tests".to_string(),
        "--workspace".into(),
        ".".into(),
        "--timeout".into(),
        format!("{timeout}s"),
    ];
    args.extend(context.test_env.iter().map(|flag| format!("--env={flag}")));
    if let Some(workspace) = &context.caches_of {
        args.push("--caches-of".into());
        args.push(workspace.display().to_string());
    }
    for id in &input.tests {
        // One argument, so that an id starting with `-` stays an id.
        args.push(format!("--tests={id}"));
    }
    let document = run_self(
        &args,
        std::os::fd::AsRawFd::as_raw_fd(&root.root_fd),
        None,
        call,
        Duration::from_secs(timeout + 60),
        Progress::Clock,
        &[],
    )?;
    let mut report = document
        .get("tests")
        .cloned()
        .ok_or_else(|| tool_error("run-tests gave no report"))?;
    // The model needs the failures, not the sandbox's details; as many failures as fit the
    // result's budget, the others counted with those run-tests left out.
    if let Some(map) = report.as_object_mut() {
        map.remove("sandbox");
        let failures = match map.remove("failures") {
            Some(Value::Array(failures)) => failures,
            _ => Vec::new(),
        };
        let mut budget = Budget::new(RESULT_BUDGET);
        budget.take(&*map);
        let listed = failures.iter().take_while(|f| budget.take(f)).count();
        let omitted = (failures.len() - listed) as u64;
        let before = map
            .get("failures_omitted")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        map.insert("failures_omitted".into(), Value::from(before + omitted));
        map.insert(
            "failures".into(),
            Value::Array(failures.into_iter().take(listed).collect()),
        );
    }
    Ok(report)
}
