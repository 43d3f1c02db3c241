//! The run document: the JSON object that flows through a pipeline of autocoder commands.
//!
//! A stage reads it from stdin (when stdin is not a terminal and not empty), sets its own key and
//! writes the whole document back; keys it does not own pass through untouched (DESIGN.md
//! section 1). Version 1 is marked by `"autocoder": 1`.

use std::io::{IsTerminal, Read};

use serde_json::{Map, Value};

use crate::error::Failure;

/// The document format version this build reads and writes.
pub const VERSION: u64 = 1;

#[derive(Debug, Clone, PartialEq)]
pub struct RunDocument {
    fields: Map<String, Value>,
}

impl Default for RunDocument {
    fn default() -> RunDocument {
        let mut fields = Map::new();
        fields.insert("autocoder".into(), Value::from(VERSION));
        RunDocument { fields }
    }
}

impl RunDocument {
    /// Reads the document a previous stage wrote, or starts a new one when stdin is a terminal or
    /// empty.
    pub fn from_stdin() -> Result<RunDocument, Failure> {
        RunDocument::from_stdin_or_empty_pipe().map(|(document, _)| document)
    }

    /// `from_stdin`, also saying whether stdin was a pipe that closed without a byte: in a
    /// pipeline, the stage before failed (and said why), which a stage with effects beyond its
    /// output must not take as "no document".
    pub fn from_stdin_or_empty_pipe() -> Result<(RunDocument, bool), Failure> {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return Ok((RunDocument::default(), false));
        }
        let mut text = String::new();
        stdin.lock().read_to_string(&mut text).map_err(|err| {
            Failure::usage(format!("cannot read the run document from stdin: {err}"))
        })?;
        // SAFETY: fstat of our own stdin into a zeroed struct.
        let is_pipe = unsafe {
            let mut stat: libc::stat = std::mem::zeroed();
            libc::fstat(0, &mut stat) == 0 && stat.st_mode & libc::S_IFMT == libc::S_IFIFO
        };
        Ok((RunDocument::parse(&text)?, is_pipe && text.is_empty()))
    }

    /// Parses a document; empty input starts a new one.
    pub fn parse(text: &str) -> Result<RunDocument, Failure> {
        if text.trim().is_empty() {
            return Ok(RunDocument::default());
        }
        let value: Value = serde_json::from_str(text).map_err(|err| {
            Failure::usage(format!("stdin is not a run document: {err}")).with_hint(
                "pipe the output of another autocoder command, or give no stdin (< /dev/null)",
            )
        })?;
        let Value::Object(mut fields) = value else {
            return Err(Failure::usage(
                "stdin is not a run document: expected a JSON object",
            ));
        };
        match fields.get("autocoder") {
            None => {
                fields.insert("autocoder".into(), Value::from(VERSION));
            }
            Some(Value::Number(n)) if n.as_u64() == Some(VERSION) => {}
            Some(other) => {
                return Err(Failure::usage(format!(
                    "the run document has version {other}; this autocoder reads version {VERSION}"
                ))
                .with_hint("use the same autocoder version for every stage of the pipeline"))
            }
        }
        Ok(RunDocument { fields })
    }

    /// The workspace a stage works on: the flag's, else the document's, else the current
    /// directory.
    pub fn workspace(&self, flag: Option<&std::path::Path>) -> Result<std::path::PathBuf, Failure> {
        if let Some(flag) = flag {
            return Ok(flag.to_path_buf());
        }
        match self.get("workspace") {
            None => Ok(std::path::PathBuf::from(".")),
            Some(Value::String(path)) if !path.is_empty() => Ok(path.into()),
            Some(other) => Err(Failure::usage(format!(
                "the run document's workspace is {other}, not a directory's path"
            ))
            .with_hint("fix the document's `workspace`, or give --workspace DIR")),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// Sets a stage's key, replacing what an earlier run of the same stage wrote.
    pub fn set(&mut self, key: &str, value: Value) {
        self.fields.insert(key.to_string(), value);
    }

    pub fn as_value(&self) -> &Map<String, Value> {
        &self.fields
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_unknown_keys_and_replaces_its_own() {
        let mut doc =
            RunDocument::parse(r#"{"autocoder":1,"custom":{"a":1},"tests":{"old":true}}"#).unwrap();
        doc.set("tests", serde_json::json!({"outcome": "passed"}));
        assert_eq!(
            Value::Object(doc.as_value().clone()),
            serde_json::json!({"autocoder": 1, "custom": {"a": 1}, "tests": {"outcome": "passed"}})
        );
    }

    #[test]
    fn empty_input_starts_a_document() {
        assert_eq!(RunDocument::parse("  \n").unwrap(), RunDocument::default());
    }

    #[test]
    fn rejects_other_versions_and_non_objects() {
        assert!(RunDocument::parse(r#"{"autocoder":2}"#).is_err());
        assert!(RunDocument::parse("[1]").is_err());
        assert!(RunDocument::parse("{").is_err());
    }
}
