//! The tool catalogue: what `mcp` serves and what `heal`'s agent will offer a model, written
//! once. Each tool is a module with typed input and output (JSON Schemas generated from the Rust
//! types), a description written for a model, MCP annotations, and a `call` function. Every path
//! a tool touches is confined to the workspace roots (`workspace::jail`).

pub mod edit_file;
pub mod list_files;
pub mod read_file;
pub mod search_text;
pub mod write_file;

use serde_json::{json, Value};

use crate::workspace::jail::{Roots, ToolError};

/// What the tools work on.
pub struct Context {
    pub roots: Roots,
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
    call: fn(&Context, Value) -> Result<Value, ToolError>,
    /// The field whose text is the result's plain-text mirror (a diff, a file's lines), if any.
    text_field: Option<&'static str>,
}

macro_rules! tool {
    ($module:ident, $title:expr, $text:expr, read_only: $ro:expr, destructive: $de:expr, idempotent: $id:expr) => {
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
            output_schema: || schema::<$module::Output>(),
            call: |context, arguments| {
                let input: $module::Input = serde_json::from_value(arguments).map_err(|err| {
                    ToolError(format!(
                        "invalid arguments for {}: {err}",
                        stringify!($module)
                    ))
                })?;
                let output = $module::call(context, input)?;
                serde_json::to_value(output).map_err(|err| ToolError(err.to_string()))
            },
            text_field: $text,
        }
    };
}

/// Every tool, in a stable order.
pub fn catalogue() -> Vec<ToolSpec> {
    vec![
        tool!(list_files, "List files", None, read_only: true, destructive: false, idempotent: true),
        tool!(read_file, "Read a file", Some("content"), read_only: true, destructive: false, idempotent: true),
        tool!(search_text, "Search text", None, read_only: true, destructive: false, idempotent: true),
        tool!(edit_file, "Edit a file", Some("diff"), read_only: false, destructive: true, idempotent: false),
        tool!(write_file, "Write a file", None, read_only: false, destructive: true, idempotent: true),
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
    pub fn call(&self, context: &Context, arguments: Value) -> Result<(Value, String), ToolError> {
        let output = (self.call)(context, arguments)?;
        let text = match self
            .text_field
            .and_then(|field| output.get(field))
            .and_then(Value::as_str)
        {
            Some(text) => text.to_string(),
            None => serde_json::to_string_pretty(&output).unwrap_or_default(),
        };
        Ok((output, text))
    }
}

fn schema<T: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}
