//! The tool catalogue: what `mcp` serves and what `heal`'s agent will offer a model, written
//! once. Each tool is a module with typed input and output (JSON Schemas generated from the Rust
//! types), a description written for a model, MCP annotations, and a `call` function. Every path
//! a tool touches is confined to the workspace roots (`workspace::jail`); every command runs in
//! the sandbox.

pub mod edit_file;
pub mod git;
pub mod git_diff;
pub mod git_status;
pub mod list_files;
pub mod read_file;
pub mod run_command;
pub mod run_tests;
pub mod search_text;
pub mod write_file;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::workspace::jail::{Roots, ToolError};

/// What the tools work on.
pub struct Context {
    pub roots: Roots,
}

/// Where a call's progress goes: (how far, what is happening).
pub type ProgressSink = Box<dyn Fn(f64, &str) + Send + Sync>;

/// One call in progress: whether it was cancelled, and where its progress goes.
pub struct Call {
    cancelled: Arc<AtomicBool>,
    progress: Option<ProgressSink>,
}

impl Call {
    pub fn new(cancelled: Arc<AtomicBool>, progress: Option<ProgressSink>) -> Call {
        Call {
            cancelled,
            progress,
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    pub fn progress(&self, done: f64, message: &str) {
        if let Some(report) = &self.progress {
            report(done, message);
        }
    }
}

/// MCP's hints about a tool's behaviour.
#[derive(Debug, Clone, Copy)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

pub struct ToolSpec {
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

/// About how many bytes of JSON a tool's structured result may hold. Some clients hand the
/// model the structured result rather than the text (Codex prefers it), so the tools bound it
/// themselves: lists stop and say how many more there were, long texts are cut with a note.
pub const RESULT_BUDGET: usize = 32 << 10;

/// What is left of `RESULT_BUDGET` while a list is filled.
#[derive(Clone)]
pub struct Budget {
    left: usize,
}

impl Budget {
    pub fn new(bytes: usize) -> Budget {
        Budget { left: bytes }
    }

    /// Takes room for `item`; false when it does not fit (and then no later item does either).
    pub fn take<T: serde::Serialize>(&mut self, item: &T) -> bool {
        let size = serde_json::to_string(item).map_or(usize::MAX, |json| json.len() + 1);
        if size > self.left {
            self.left = 0;
            return false;
        }
        self.left -= size;
        true
    }
}

/// How many bytes `c` takes inside a JSON string: escapes count, and a control character's
/// escape (`\u0001`) is six bytes for one.
fn json_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// How many bytes `text` takes inside a JSON string. Counted by bytes, which is the same (a
/// character of several bytes has none below 0x80, and takes as many as it has) and faster.
pub fn json_len(text: &str) -> usize {
    text.bytes()
        .map(|byte| {
            if byte < 0x80 {
                json_char_len(char::from(byte))
            } else {
                1
            }
        })
        .sum()
}

/// The longest start of `text` that takes at most `budget` bytes inside a JSON string.
pub fn json_prefix(text: &str, budget: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += json_char_len(c);
        if used > budget {
            return &text[..at];
        }
    }
    text
}

/// `text` kept within `budget` bytes of JSON: whole, or its head and tail with a note of what
/// was cut between them (a command's output: how it started and how it ended), counting
/// `cut_before` bytes an earlier cut left out there.
pub fn json_head_and_tail(text: String, budget: usize, cut_before: u64) -> String {
    if json_len(&text) <= budget {
        return text;
    }
    let head = json_prefix(&text, budget / 2);
    let mut used = 0;
    let tail_start = text
        .char_indices()
        .rev()
        .find(|&(_, c)| {
            used += json_char_len(c);
            used > budget / 2
        })
        .map_or(0, |(at, c)| at + c.len_utf8());
    let tail = &text[tail_start.max(head.len())..];
    let cut = (text.len() - head.len() - tail.len()) as u64 + cut_before;
    format!("{head}\n[... {cut} bytes cut ...]\n{tail}")
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
            .map_err(|err| crate::workspace::jail::tool_error(format!("glob {glob:?}: {err}")))
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
        ToolSpec {
            name: stringify!($module),
            title: $title,
            description: $module::DESCRIPTION,
            annotations: Annotations {
                read_only: $ro,
                destructive: $de,
                idempotent: $id,
                open_world: false,
            },
            input_schema: || schema::<$module::Input>(),
            output_schema: $output_schema,
            call: $call,
            text: $text,
        }
    };
}

/// Every tool, in a stable order.
pub fn catalogue() -> Vec<ToolSpec> {
    vec![
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
            schema::<crate::testrun::report::TestReport>, read_only: false, destructive: false, idempotent: true),
        tool!(git_status, "Git status", None,
            |c, call, a| git_status::call(c, call, arguments("git_status", a)?),
            schema::<git_status::Output>, read_only: true, destructive: false, idempotent: true),
        tool!(git_diff, "Git diff", Some(|output| field_text(output, "diff")),
            |c, call, a| git_diff::call(c, call, arguments("git_diff", a)?),
            schema::<git_diff::Output>, read_only: true, destructive: false, idempotent: true),
    ]
}

impl ToolSpec {
    /// The tool as `tools/list` describes it.
    pub fn describe(&self) -> Value {
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": (self.input_schema)(),
            "outputSchema": (self.output_schema)(),
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.annotations.read_only,
                "destructiveHint": self.annotations.destructive,
                "idempotentHint": self.annotations.idempotent,
                "openWorldHint": self.annotations.open_world,
            },
        })
    }

    /// Runs the tool: its structured result and a plain-text mirror, or the error for the model.
    pub fn call(
        &self,
        context: &Context,
        call: &Call,
        arguments: Value,
    ) -> Result<(Value, String), ToolError> {
        let output = (self.call)(context, call, arguments)?;
        let text = match self.text.map(|text| text(&output)) {
            Some(text) if !text.is_empty() => text,
            _ => serde_json::to_string(&output).unwrap_or_default(),
        };
        Ok((output, text))
    }
}

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

    #[test]
    fn json_lengths_count_escapes() {
        let text = "a\"\\\n\u{1}é";
        assert_eq!(
            json_len(text),
            serde_json::to_string(text).unwrap().len() - 2
        );
        assert_eq!(json_prefix("ab\u{1}c", 3), "ab");
        assert_eq!(json_prefix("ab\u{1}c", 8), "ab\u{1}");
        let kept = json_head_and_tail("\u{1}".repeat(10_000), 600, 0);
        assert!(json_len(&kept) <= 600 + 40, "{}", json_len(&kept));
        assert!(kept.contains("bytes cut"));
        assert_eq!(json_head_and_tail("short".into(), 600, 7), "short");
    }
}
