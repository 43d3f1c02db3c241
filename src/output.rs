//! Writing results: a JSON document to stdout, as one line or indented, or a text as it is.

use std::io::{self, Write};

use serde::Serialize;

use crate::error::Failure;

/// Writes `value` to `out` as one compact JSON line, or indented with `pretty`.
///
/// A closed pipe (`autocoder ... | head -c0`) is not an error: the reader has what it wanted.
pub(crate) fn write_json<W: Write, T: Serialize>(
    out: W,
    value: &T,
    pretty: bool,
) -> Result<(), Failure> {
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

/// Writes `text` (`what` it is, for the error) to `out` as it is; a closed pipe is not an
/// error, as for `write_json`.
pub(crate) fn write_text<W: Write>(mut out: W, text: &str, what: &str) -> Result<(), Failure> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::external(format!("cannot write {what}: {err}")))
        }
        _ => Ok(()),
    }
}
