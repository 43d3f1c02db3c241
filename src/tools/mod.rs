//! The tool catalogue: what `mcp` serves and what `heal`'s task mode offers a model (all but the
//! delegates), written once. Each tool is a module with typed input and output (JSON Schemas generated from the Rust
//! types), a description written for a model, hints about its behaviour, and a `call` function;
//! `invoke` calls one by name as every caller does: arguments checked, a panic turned into an
//! error, the text mirror of the result cut to size. Every path a tool touches is confined to the
//! workspace roots (`workspace::jail`); every command runs in the sandbox.

pub(crate) mod delegate_task;
pub(crate) mod edit_file;
pub(crate) mod git_diff;
pub(crate) mod git_status;
pub(crate) mod list_files;
pub(crate) mod read_file;
pub(crate) mod run_command;
pub(crate) mod run_tests;
pub(crate) mod search_text;
pub(crate) mod write_file;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::Value;

use crate::workspace::jail::Roots;
use crate::workspace::PathError;

/// A tool's error, worded for the model that called it: it becomes a result with `isError`,
/// which the model can act on (a path outside the roots, no match, bad arguments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolError(pub String);

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<PathError> for ToolError {
    fn from(error: PathError) -> ToolError {
        ToolError(error.0)
    }
}

pub(crate) fn tool_error(message: impl Into<String>) -> ToolError {
    ToolError(message.into())
}

/// What the tools work on.
pub(crate) struct Context {
    pub roots: Roots,
    /// `--env` requests for the test runs (`run_tests`): heal's task mode passes its own, so that
    /// the model's runs see what the final one does; the MCP server none.
    pub test_env: Vec<String>,
    /// The workspace whose toolchain caches the test runs share: heal's copy gives its
    /// original's, so that no cache is kept for a copy; the MCP server none (its roots are
    /// workspaces).
    pub caches_of: Option<std::path::PathBuf>,
    /// What the MCP server withholds from its results (`Context::secrets`), found on first use.
    pub secrets: std::sync::OnceLock<crate::secrets::Secrets>,
}

impl Context {
    /// The secrets of the roots (their credential files' values) and of this environment's
    /// credential variables: what an MCP client, a model's agent, is never sent.
    pub(crate) fn secrets(&self) -> &crate::secrets::Secrets {
        self.secrets.get_or_init(|| {
            let roots: Vec<&std::path::Path> = self.roots.paths().collect();
            crate::secrets::Secrets::collect_in(&[], &[], &roots)
        })
    }
}

/// Where a call's progress goes: (how far, what is happening).
pub(crate) type ProgressSink = Box<dyn Fn(f64, &str) + Send + Sync>;

/// One call in progress: whether it was cancelled, and where its progress goes.
pub(crate) struct Call {
    cancelled: Arc<AtomicBool>,
    progress: Option<ProgressSink>,
}

impl Call {
    pub(crate) fn new(cancelled: Arc<AtomicBool>, progress: Option<ProgressSink>) -> Call {
        Call {
            cancelled,
            progress,
        }
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    pub(crate) fn progress(&self, done: f64, message: &str) {
        if let Some(report) = &self.progress {
            report(done, message);
        }
    }
}

/// Hints about a tool's behaviour, for a client deciding what to ask the user before a call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

pub(crate) struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub annotations: Annotations,
    input_schema: fn() -> Value,
    output_schema: fn() -> Value,
    call: fn(&Context, &Call, Value) -> Result<Value, ToolError>,
    /// The result's plain-text mirror, for tools whose result reads better as text than as JSON
    /// (a diff, a file's lines); None (or an empty text) mirrors the JSON.
    text: Option<fn(&Value) -> String>,
}

impl ToolSpec {
    /// The JSON Schema of the tool's arguments.
    pub(crate) fn input_schema(&self) -> Value {
        (self.input_schema)()
    }

    /// The JSON Schema of the tool's structured result.
    pub(crate) fn output_schema(&self) -> Value {
        (self.output_schema)()
    }
}

/// A tool's answer: its structured result, and the same as text (cut near `MAX_TEXT`).
#[derive(Debug)]
pub(crate) struct ToolOutput {
    pub structured: Value,
    pub text: String,
}

/// Why a call has no `ToolOutput`.
#[derive(Debug)]
pub(crate) enum CallError {
    /// No tool has this name.
    UnknownTool(String),
    /// The tool refused or failed in a way the model can act on.
    Tool(ToolError),
    /// A bug in the tool: it panicked (the panic itself went to stderr).
    Panicked,
}

/// A result's text mirror is cut near this size, with a note on how to get the rest.
pub(crate) const MAX_TEXT: usize = 40_000;

/// Calls the tool `name` with `arguments` (null counts as none), in `context`.
pub(crate) fn invoke(
    context: &Context,
    call: &Call,
    name: &str,
    arguments: Value,
) -> Result<ToolOutput, CallError> {
    let tool = CATALOGUE
        .iter()
        .find(|tool| tool.name == name)
        .ok_or_else(|| CallError::UnknownTool(name.to_string()))?;
    let arguments = match arguments {
        Value::Null => Value::Object(serde_json::Map::new()),
        given => given,
    };
    // A bug in a tool must not leave its caller without an answer (an MCP client would wait
    // forever) nor end the process.
    let called = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let structured = (tool.call)(context, call, arguments)?;
        let text = tool.text.map(|text| text(&structured));
        Ok((structured, text))
    }));
    let (structured, text) = called
        .map_err(|_| CallError::Panicked)?
        .map_err(CallError::Tool)?;
    let mut text = match text {
        Some(text) if !text.is_empty() => text,
        _ => serde_json::to_string(&structured).unwrap_or_default(),
    };
    // Each tool keeps its structured result within about `text::RESULT_BUDGET` itself, so this
    // cut of the text is a last guard; the structured result stays whole, as its schema promises.
    if text.len() > MAX_TEXT {
        let note = format!(
            "\n[... cut at {MAX_TEXT} of {} bytes: narrow the request (offset/limit, path, glob, \
             max_entries, max_results)]",
            text.len()
        );
        text = format!("{}{note}", crate::text::cut(&text, MAX_TEXT));
    }
    Ok(ToolOutput { structured, text })
}

/// The text of a result's string field (a diff).
fn field_text(output: &Value, field: &str) -> String {
    output
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The matcher for a tool's `glob` argument, if it has one.
fn glob_matcher(glob: Option<&str>) -> Result<Option<globset::GlobMatcher>, ToolError> {
    glob.map(|glob| {
        globset::Glob::new(glob)
            .map(|glob| glob.compile_matcher())
            .map_err(|err| tool_error(format!("glob {glob:?}: {err}")))
    })
    .transpose()
}

/// Whether a path (relative to its root) matches a tool's glob: by the whole path, or by the
/// file's name alone, so that `*.py` finds Python files at any depth.
fn glob_matches(glob: &globset::GlobMatcher, relative: &std::path::Path) -> bool {
    glob.is_match(relative) || relative.file_name().is_some_and(|name| glob.is_match(name))
}

fn arguments<T: serde::de::DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ToolError> {
    // serde would also take a struct from an array of its fields in order.
    if !arguments.is_object() {
        return Err(ToolError(format!(
            "invalid arguments for {tool}: expected an object of named arguments"
        )));
    }
    serde_json::from_value(arguments)
        .map_err(|err| ToolError(format!("invalid arguments for {tool}: {err}")))
}

fn output<T: serde::Serialize>(output: T) -> Result<Value, ToolError> {
    serde_json::to_value(output).map_err(|err| ToolError(err.to_string()))
}

macro_rules! tool {
    ($module:ident, $title:expr, $text:expr, $call:expr, $output_schema:expr, read_only: $ro:expr, destructive: $de:expr, idempotent: $id:expr) => {
        tool!($module as stringify!($module), $title, $text, $call, $output_schema,
              read_only: $ro, destructive: $de, idempotent: $id, open_world: false)
    };
    ($module:ident as $name:expr, $title:expr, $text:expr, $call:expr, $output_schema:expr, read_only: $ro:expr, destructive: $de:expr, idempotent: $id:expr, open_world: $ow:expr) => {
        ToolSpec {
            name: $name,
            title: $title,
            description: $module::DESCRIPTION,
            annotations: Annotations {
                read_only: $ro,
                destructive: $de,
                idempotent: $id,
                open_world: $ow,
            },
            input_schema: || schema::<$module::Input>(),
            output_schema: $output_schema,
            call: $call,
            text: $text,
        }
    };
}

/// Every tool, in a stable order.
pub(crate) static CATALOGUE: &[ToolSpec] = &[
    tool!(list_files, "List files", None,
            |c, call, a| output(list_files::call(c, call, arguments("list_files", a)?)?),
            schema::<list_files::Output>, read_only: true, destructive: false, idempotent: true),
    tool!(read_file, "Read a file", Some(read_file::text),
            |c, _, a| output(read_file::call(c, arguments("read_file", a)?)?),
            schema::<read_file::Output>, read_only: true, destructive: false, idempotent: true),
    tool!(search_text, "Search text", None,
            |c, call, a| output(search_text::call(c, call, arguments("search_text", a)?)?),
            schema::<search_text::Output>, read_only: true, destructive: false, idempotent: true),
    tool!(edit_file, "Edit a file", Some(|output| field_text(output, "diff")),
            |c, _, a| output(edit_file::call(c, arguments("edit_file", a)?)?),
            schema::<edit_file::Output>, read_only: false, destructive: true, idempotent: false),
    tool!(write_file, "Write a file", None,
            |c, _, a| output(write_file::call(c, arguments("write_file", a)?)?),
            schema::<write_file::Output>, read_only: false, destructive: true, idempotent: true),
    tool!(run_command, "Run a command in the sandbox", None,
            |c, call, a| output(run_command::call(c, call, arguments("run_command", a)?)?),
            schema::<run_command::Output>, read_only: false, destructive: true, idempotent: false),
    tool!(run_tests, "Run the tests in the sandbox", None,
            |c, call, a| run_tests::call(c, call, arguments("run_tests", a)?),
            schema::<crate::run_document::TestReport>, read_only: false, destructive: false, idempotent: true),
    tool!(git_status, "Git status", None,
            |c, call, a| git_status::call(c, call, arguments("git_status", a)?),
            schema::<git_status::Output>, read_only: true, destructive: false, idempotent: true),
    tool!(git_diff, "Git diff", Some(|output| field_text(output, "diff")),
            |c, call, a| git_diff::call(c, call, arguments("git_diff", a)?),
            schema::<git_diff::Output>, read_only: true, destructive: false, idempotent: true),
    // The model it hands the task to may be a remote one.
    tool!(delegate_task as "delegate_task", "Delegate a coding task", Some(delegate_task::text),
            |c, call, a| output(delegate_task::call(c, call, arguments("delegate_task", a)?, delegate_task::Naming::Autocoder)?),
            schema::<delegate_task::Output>, read_only: false, destructive: true, idempotent: false,
            open_world: true),
    tool!(delegate_task as "delegate_to_local_coder", "Delegate a coding task", Some(delegate_task::text),
            |c, call, a| output(delegate_task::call(c, call, arguments("delegate_to_local_coder", a)?, delegate_task::Naming::LocalCoder)?),
            schema::<delegate_task::Output>, read_only: false, destructive: true, idempotent: false,
            open_world: true),
];

fn schema<T: schemars::JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    drop_rust_formats(&mut schema);
    schema
}

/// Removes the formats schemars gives numbers (`uint`, `int64`, `double`): they are not JSON
/// Schema's, and clients' validators warn about each one they meet.
fn drop_rust_formats(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| {
                    ["int", "uint", "float", "double"]
                        .iter()
                        .any(|prefix| format.starts_with(prefix))
                })
            {
                map.remove("format");
            }
            map.values_mut().for_each(drop_rust_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_rust_formats),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A context whose one root is a fresh directory holding `files`; removed by the caller.
    fn context_with(files: &[(&str, &str)]) -> (Context, std::path::PathBuf) {
        static DIRS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "autocoder-invoke-{}-{}",
            std::process::id(),
            DIRS.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        for (path, content) in files {
            std::fs::write(dir.join(path), content).unwrap();
        }
        let roots = Roots::new(std::slice::from_ref(&dir)).unwrap();
        (
            Context {
                roots,
                test_env: Vec::new(),
                caches_of: None,
                secrets: Default::default(),
            },
            dir,
        )
    }

    fn call() -> Call {
        Call::new(Arc::new(AtomicBool::new(false)), None)
    }

    #[test]
    fn tools_are_called_by_name_in_process() {
        let (context, dir) = context_with(&[("a.py", "print(1)\n")]);
        let read = invoke(
            &context,
            &call(),
            "read_file",
            serde_json::json!({"path": "a.py"}),
        )
        .unwrap();
        assert!(read.text.contains("print(1)"), "{}", read.text);
        assert_eq!(read.structured["path"], "a.py");
        // No arguments are none.
        let listed = invoke(&context, &call(), "list_files", Value::Null).unwrap();
        assert_eq!(listed.structured["entries"][0]["path"], "a.py");
        assert!(matches!(
            invoke(&context, &call(), "rm_rf", Value::Null),
            Err(CallError::UnknownTool(name)) if name == "rm_rf"
        ));
        let refused = invoke(
            &context,
            &call(),
            "read_file",
            serde_json::json!({"file": "a.py"}),
        );
        assert!(
            matches!(&refused, Err(CallError::Tool(err)) if err.0.contains("invalid arguments for read_file")),
            "{refused:?}"
        );
        let outside = invoke(
            &context,
            &call(),
            "read_file",
            serde_json::json!({"path": "../x"}),
        );
        assert!(matches!(outside, Err(CallError::Tool(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_tool_has_schemas_of_objects() {
        for tool in CATALOGUE {
            assert_eq!(tool.input_schema()["type"], "object", "{}", tool.name);
            assert_eq!(tool.output_schema()["type"], "object", "{}", tool.name);
        }
    }
}
