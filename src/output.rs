//! Writing results: JSON documents to stdout, and untrusted text made safe for a terminal.

use std::io::{self, Write};

use serde::Serialize;

use crate::error::Failure;

/// Writes `value` to `out` as one compact JSON line, or indented with `pretty`.
///
/// A closed pipe (`autocoder ... | head -c0`) is not an error: the reader has what it wanted.
pub fn write_json<W: Write, T: Serialize>(out: W, value: &T, pretty: bool) -> Result<(), Failure> {
    let mut out = io::BufWriter::new(out);
    let written = if pretty {
        serde_json::to_writer_pretty(&mut out, value)
    } else {
        serde_json::to_writer(&mut out, value)
    }
    .map_err(io::Error::from)
    .and_then(|()| out.write_all(b"\n"))
    .and_then(|()| out.flush());
    match written {
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::external(format!("cannot write the result: {err}")))
        }
        _ => Ok(()),
    }
}

/// Escapes control characters (terminal escape sequences above all) in text that came from
/// outside: command output, issue bodies, model replies. Newlines and tabs stay.
pub fn sanitize_for_terminal(text: &str) -> String {
    let mut clean = String::with_capacity(text.len());
    for ch in text.chars() {
        if ch.is_control() && ch != '\n' && ch != '\t' {
            clean.extend(ch.escape_default());
        } else {
            clean.push(ch);
        }
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_sequences_but_keeps_lines() {
        assert_eq!(
            sanitize_for_terminal("a\x1b[2Jb\r\nc\td"),
            "a\\u{1b}[2Jb\\r\nc\td"
        );
    }
}
