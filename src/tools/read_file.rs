//! `read_file`: a text file's lines, numbered, a window at a time.

use std::fmt::Write;
use std::io::{BufRead, BufReader, Read};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{tool_error, Context, ToolError};
use crate::workspace::jail;

pub(crate) const DESCRIPTION: &str = "Read a text file inside the workspace. Returns its lines numbered from 1 (`N\\tline`), the \
file's total line count, and, when the window did not reach the end, the offset to continue from. Read big files a window \
at a time with offset and limit. Binary files are refused with their size.";

/// A line is shown cut at this many bytes.
const MAX_LINE_BYTES: usize = 2_000;

/// Files larger than this are refused (every line is counted): read them with `run_command` and
/// head/sed instead.
const MAX_BYTES: u64 = 256 << 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// Path relative to the workspace root (or absolute inside it).
    pub path: String,
    /// First line to return, counted from 1.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<usize>,
    /// How many lines to return (default 2000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Output {
    /// As the other tools name it: relative in the first root, absolute in the others.
    pub path: String,
    /// The lines, each as `N\tline`.
    pub content: String,
    pub total_lines: usize,
    pub start_line: usize,
    pub end_line: usize,
    /// Where to continue (`offset`) when the window stopped before the end.
    pub next_offset: Option<usize>,
}

/// The text a model reads: the lines, and where to go on when the window stopped early.
pub(crate) fn text(output: &serde_json::Value) -> String {
    let mut text = super::field_text(output, "content");
    if let Some(next) = output
        .get("next_offset")
        .and_then(serde_json::Value::as_u64)
    {
        let number = |key: &str| {
            output
                .get(key)
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        let _ = write!(
            text,
            "[lines {}-{} of {}; continue with offset={next}]",
            number("start_line"),
            number("end_line"),
            number("total_lines")
        );
    }
    text
}

/// The file at `shown` (a path under the roots), its metadata and its path as results show
/// it, when it is a regular file read_file reads.
fn open_regular(
    context: &Context,
    shown: &str,
) -> Result<(std::fs::File, std::fs::Metadata, String), ToolError> {
    if shown.is_empty() {
        return Err(tool_error("path is empty; give the file to read"));
    }
    let confined = context.roots.confine_file(shown)?;
    let file = jail::open(&confined, libc::O_RDONLY, 0)?;
    let meta = file
        .metadata()
        .map_err(|err| tool_error(format!("{shown}: {err}")))?;
    if meta.is_dir() {
        return Err(tool_error(format!(
            "{shown} is a directory; use list_files"
        )));
    }
    if !meta.is_file() {
        return Err(tool_error(format!(
            "{shown} is not a regular file (a FIFO, socket or device); not read"
        )));
    }
    if meta.len() > MAX_BYTES {
        return Err(tool_error(format!(
            "{shown} is {} bytes, more than read_file reads (256 MiB); use run_command with head, sed or grep",
            meta.len()
        )));
    }
    Ok((file, meta, confined.shown(&confined.relative)))
}

pub(crate) fn call(context: &Context, input: Input) -> Result<Output, ToolError> {
    let shown = &input.path;
    let (file, meta, path) = open_regular(context, shown)?;
    let mut reader = BufReader::with_capacity(64 << 10, file.take(MAX_BYTES));
    let head = reader
        .fill_buf()
        .map_err(|err| tool_error(format!("{shown}: {err}")))?;
    if head[..head.len().min(8192)].contains(&0) {
        return Err(tool_error(format!(
            "{shown} is a binary file ({} bytes); not shown",
            meta.len()
        )));
    }
    let start = input.offset.unwrap_or(1).max(1);
    let limit = input.limit.unwrap_or(2000).max(1);
    let mut window = Window {
        first: start,
        last: (start - 1).saturating_add(limit),
        content: String::new(),
        json_bytes: 0,
        line: Vec::new(),
        line_bytes: 0,
        ends_in_cr: false,
    };
    // Streamed: only the window's lines are kept (each cut at MAX_LINE_BYTES); the others are
    // counted.
    let mut lines = 0;
    let mut open_line = false;
    loop {
        let chunk = reader
            .fill_buf()
            .map_err(|err| tool_error(format!("{shown}: {err}")))?;
        if chunk.is_empty() {
            break;
        }
        let length = chunk.len();
        let mut at = 0;
        while at < length {
            if lines >= window.last {
                // Past the window: the lines left are only counted.
                lines += memchr::memchr_iter(b'\n', &chunk[at..]).count();
                open_line = chunk[length - 1] != b'\n';
                break;
            }
            match memchr::memchr(b'\n', &chunk[at..]) {
                Some(end) => {
                    lines += 1;
                    window.finish(lines, &chunk[at..at + end]);
                    open_line = false;
                    at += end + 1;
                }
                None => {
                    window.take(lines + 1, &chunk[at..]);
                    open_line = true;
                    at = length;
                }
            }
        }
        reader.consume(length);
    }
    if open_line {
        lines += 1;
        window.finish(lines, b"");
    }
    if start > lines.max(1) {
        return Err(tool_error(format!(
            "offset {start} is past the end of {shown}, which has {lines} lines"
        )));
    }
    let end = window.last.min(lines);
    Ok(Output {
        path,
        content: window.content,
        total_lines: lines,
        start_line: start,
        end_line: end,
        next_offset: (end < lines).then_some(end + 1),
    })
}

/// The lines being shown, numbered, as the file streams by.
struct Window {
    /// The first and last line numbers to show; `last` moves back when the text is full.
    first: usize,
    last: usize,
    content: String,
    /// The bytes `content` takes in JSON (a control character's escape takes six).
    json_bytes: usize,
    /// The start of the line being read (up to MAX_LINE_BYTES), its full length, and whether
    /// its last byte so far is a carriage return.
    line: Vec<u8>,
    line_bytes: usize,
    ends_in_cr: bool,
}

impl Window {
    fn shows(&self, number: usize) -> bool {
        (self.first..=self.last).contains(&number)
    }

    /// Takes the next piece of line `number`, which goes on in the next chunk read.
    fn take(&mut self, number: usize, piece: &[u8]) {
        if !self.shows(number) || piece.is_empty() {
            return;
        }
        let room = (MAX_LINE_BYTES + 1).saturating_sub(self.line.len());
        self.line.extend_from_slice(&piece[..piece.len().min(room)]);
        self.line_bytes += piece.len();
        self.ends_in_cr = piece.ends_with(b"\r");
    }

    /// Line `number` has ended with `last`, its last piece: numbered into the text if shown.
    /// The window also stops within RESULT_BUDGET bytes of JSON, so that a result fits a
    /// model's context.
    fn finish(&mut self, number: usize, last: &[u8]) {
        if !self.shows(number) {
            return;
        }
        // A line read whole (most are) is not copied aside first.
        let (line, mut length, ends_in_cr) = if self.line_bytes == 0 {
            (last, last.len(), last.ends_with(b"\r"))
        } else {
            self.take(number, last);
            (&self.line[..], self.line_bytes, self.ends_in_cr)
        };
        if ends_in_cr {
            length -= 1;
        }
        let start = self.content.len();
        let line = &line[..length.min(line.len())];
        // A minified file's line can be megabytes: shown cut, with its length.
        if length > MAX_LINE_BYTES {
            // Cut on a character's boundary: an incomplete last character is left out.
            let mut cut = &line[..MAX_LINE_BYTES];
            if let Err(err) = std::str::from_utf8(cut) {
                if err.error_len().is_none() {
                    cut = &cut[..err.valid_up_to()];
                }
            }
            let shown = String::from_utf8_lossy(cut);
            let _ = writeln!(
                self.content,
                "{number}\t{shown}… [line cut: {length} bytes in all]"
            );
        } else {
            // Pushed, not formatted: the formatter's calls cost more than the copy of a line.
            self.content.push_str(itoa::Buffer::new().format(number));
            self.content.push('\t');
            match std::str::from_utf8(line) {
                Ok(line) => self.content.push_str(line),
                Err(_) => self.content.push_str(&String::from_utf8_lossy(line)),
            }
            self.content.push('\n');
        }
        // The window stops before the line that would take it past the budget (the first
        // line is shown whatever its size).
        let added = crate::text::json_len(&self.content[start..]);
        if start > 0 && self.json_bytes + added > crate::text::RESULT_BUDGET {
            self.content.truncate(start);
            self.last = number - 1;
        } else {
            self.json_bytes += added;
        }
        self.line.clear();
        self.line_bytes = 0;
        self.ends_in_cr = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_read_in_pieces_is_whole_and_loses_only_its_final_cr() {
        let mut window = Window {
            first: 2,
            last: 4,
            content: String::new(),
            json_bytes: 0,
            line: Vec::new(),
            line_bytes: 0,
            ends_in_cr: false,
        };
        // Line 1 is outside the window; line 2 comes in three pieces, the CR alone in the last;
        // line 3 has a CR inside it and ends in pieces that split a character; line 4 comes
        // whole; line 5 is outside the window again.
        window.finish(1, b"skipped\r");
        for piece in [&b"sec"[..], b"ond"] {
            window.take(2, piece);
        }
        window.finish(2, b"\r");
        window.take(3, b"a\rb \xc3");
        window.finish(3, b"\xa9");
        window.finish(4, b"whole\r");
        window.finish(5, b"after");
        assert_eq!(window.content, "2\tsecond\n3\ta\rb \u{e9}\n4\twhole\n");
    }

    #[test]
    fn a_long_line_is_cut_on_a_character_boundary_with_its_length() {
        let mut window = Window {
            first: 1,
            last: 1,
            content: String::new(),
            json_bytes: 0,
            line: Vec::new(),
            line_bytes: 0,
            ends_in_cr: false,
        };
        let line = "é".repeat(MAX_LINE_BYTES);
        for piece in line.as_bytes().chunks(999) {
            window.take(1, piece);
        }
        window.finish(1, b"\r");
        let shown = window.content.strip_prefix("1\t").unwrap();
        assert!(
            shown.ends_with(&format!("… [line cut: {} bytes in all]\n", line.len())),
            "{}",
            &shown[shown.len() - 60..]
        );
        assert_eq!(
            shown.chars().filter(|c| *c == 'é').count(),
            MAX_LINE_BYTES / 2
        );
    }
}
