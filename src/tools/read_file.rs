//! `read_file`: a text file's lines, numbered, a window at a time.

use std::fmt::Write;
use std::io::Read;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Context;
use crate::workspace::jail::{self, tool_error, ToolError};

pub const DESCRIPTION: &str = "Read a text file inside the workspace. Returns its lines numbered from 1 (`N\\tline`), the \
file's total line count, and, when the window did not reach the end, the offset to continue from. Read big files a window \
at a time with offset and limit. Binary files are refused with their size.";

/// A line is shown cut at this many bytes.
const MAX_LINE_BYTES: usize = 2_000;

/// Files larger than this are refused: read them with `run_command` and head/sed instead.
const MAX_BYTES: u64 = 16 << 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Path relative to the workspace root (or absolute inside it).
    pub path: String,
    /// First line to return, counted from 1.
    #[serde(default)]
    pub offset: Option<usize>,
    /// How many lines to return (default 2000).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub path: String,
    /// The lines, each as `N\tline`.
    pub content: String,
    pub total_lines: usize,
    pub start_line: usize,
    pub end_line: usize,
    /// Where to continue (`offset`) when the window stopped before the end.
    pub next_offset: Option<usize>,
}

pub fn call(context: &Context, input: Input) -> Result<Output, ToolError> {
    let confined = context.roots.confine(&input.path)?;
    let mut file = jail::open(&confined, libc::O_RDONLY, 0)?;
    let meta = file
        .metadata()
        .map_err(|err| tool_error(format!("{}: {err}", input.path)))?;
    if meta.is_dir() {
        return Err(tool_error(format!(
            "{} is a directory; use list_files",
            input.path
        )));
    }
    if !meta.is_file() {
        return Err(tool_error(format!(
            "{} is not a regular file (a FIFO, socket or device); not read",
            input.path
        )));
    }
    if meta.len() > MAX_BYTES {
        return Err(tool_error(format!(
            "{} is {} bytes, too big to read whole; use search_text or run_command",
            input.path,
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)
        .map_err(|err| tool_error(format!("{}: {err}", input.path)))?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(tool_error(format!(
            "{} is a binary file ({} bytes); not shown",
            input.path,
            bytes.len()
        )));
    }
    // Lines are found on the bytes; only the window is decoded (lossily) and numbered.
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut line_start = 0;
    for newline in memchr::memchr_iter(b'\n', &bytes) {
        lines.push(&bytes[line_start..newline]);
        line_start = newline + 1;
    }
    if line_start < bytes.len() {
        lines.push(&bytes[line_start..]);
    }
    let start = input.offset.unwrap_or(1).max(1);
    if start > lines.len().max(1) {
        return Err(tool_error(format!(
            "offset {start} is past the end of {}, which has {} lines",
            input.path,
            lines.len()
        )));
    }
    let limit = input.limit.unwrap_or(2000).max(1);
    let mut end = (start - 1).saturating_add(limit).min(lines.len());
    // The window also stops at about 32 KB, so that a result fits a model's context.
    let mut content = String::new();
    for (index, line) in lines.iter().enumerate().take(end).skip(start - 1) {
        if content.len() > 32 << 10 {
            end = index;
            break;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // A minified file's line can be megabytes: shown cut, with its length.
        if line.len() > MAX_LINE_BYTES {
            // Cut on a character's boundary: an incomplete last character is left out.
            let mut cut = &line[..MAX_LINE_BYTES];
            if let Err(err) = std::str::from_utf8(cut) {
                if err.error_len().is_none() {
                    cut = &cut[..err.valid_up_to()];
                }
            }
            let shown = String::from_utf8_lossy(cut);
            let _ = writeln!(
                content,
                "{}\t{shown}… [line cut: {} bytes in all]",
                index + 1,
                line.len()
            );
        } else {
            let _ = writeln!(content, "{}\t{}", index + 1, String::from_utf8_lossy(line));
        }
    }
    Ok(Output {
        path: confined.display().display().to_string(),
        content,
        total_lines: lines.len(),
        start_line: start,
        end_line: end,
        next_offset: (end < lines.len()).then_some(end + 1),
    })
}
