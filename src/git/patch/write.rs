//! The text `git diff` writes for the model: its headers, quoted names and hunks.

use super::{FileDiff, Hunk, LineEnd, LineKind, Side};
use crate::run_document::FileStatus;

/// How the text is written: the settings that change `git diff`'s text.
#[derive(Debug, Clone)]
pub(crate) struct Format {
    /// `core.quotePath` (on unless set off): non-ASCII bytes in names are quoted too.
    pub quote_non_ascii: bool,
    /// The prefixes of the old and new names: `a/` and `b/`; none with `diff.noprefix`; with
    /// `diff.mnemonicPrefix`, what each side is (`c/` a commit, `i/` the index, `w/` the working
    /// tree).
    pub prefixes: (&'static str, &'static str),
}

impl Default for Format {
    fn default() -> Format {
        Format {
            quote_non_ascii: true,
            prefixes: ("a/", "b/"),
        }
    }
}

impl Format {
    /// `path` after `prefix`, in double quotes with C escapes when it holds a byte git quotes (a
    /// control character, a quote, a backslash or, unless core.quotePath is off, a non-ASCII
    /// byte).
    pub(crate) fn quoted(&self, prefix: &str, path: &[u8]) -> String {
        let plain = |byte: u8| {
            ((0x20..0x7f).contains(&byte) && byte != b'"' && byte != b'\\')
                || (byte >= 0x80 && !self.quote_non_ascii)
        };
        if path.iter().all(|&byte| plain(byte)) {
            return format!("{prefix}{}", String::from_utf8_lossy(path));
        }
        let mut out = format!("\"{prefix}").into_bytes();
        for &byte in path {
            match byte {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\t' => out.extend_from_slice(b"\\t"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                0x07 => out.extend_from_slice(b"\\a"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0b => out.extend_from_slice(b"\\v"),
                0x0c => out.extend_from_slice(b"\\f"),
                _ if plain(byte) => out.push(byte),
                _ => out.extend_from_slice(format!("\\{byte:03o}").as_bytes()),
            }
        }
        out.push(b'"');
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Appends `file`'s patch to `out` as git writes it.
pub(crate) fn write(file: &FileDiff, format: &Format, out: &mut String) {
    let (old, new) = (file.old.as_ref(), file.new.as_ref());
    let old_path = old.map_or(file.path_bytes(), |side| &side.path);
    let new_path = new.map_or(file.path_bytes(), |side| &side.path);
    let (a, b) = format.prefixes;
    out.push_str(&format!(
        "diff --git {} {}\n",
        format.quoted(a, old_path),
        format.quoted(b, new_path)
    ));
    let mode = |side: &Side| format!("{:06o}", side.mode.unwrap_or(0o100644));
    match (old, new) {
        (None, Some(new)) => out.push_str(&format!("new file mode {}\n", mode(new))),
        (Some(old), None) => out.push_str(&format!("deleted file mode {}\n", mode(old))),
        (Some(old), Some(new)) if old.mode != new.mode => {
            out.push_str(&format!("old mode {}\nnew mode {}\n", mode(old), mode(new)))
        }
        _ => {}
    }
    let how = match file.status {
        FileStatus::Copied => Some("copy"),
        FileStatus::Renamed => Some("rename"),
        _ => None,
    };
    if let Some(how) = how {
        out.push_str(&format!(
            "similarity index {}%\n{how} from {}\n{how} to {}\n",
            file.similarity.unwrap_or(0),
            format.quoted("", old_path),
            format.quoted("", new_path)
        ));
    }
    if let Some((before, after)) = &file.index {
        out.push_str(&format!("index {before}..{after}"));
        match (old, new) {
            (Some(old), Some(new)) if old.mode == new.mode => {
                out.push_str(&format!(" {}", mode(new)))
            }
            _ => {}
        }
        out.push('\n');
    }
    match &file.hunks {
        Some(hunks) if !hunks.is_empty() => {
            // git ends a name with a space in it with a tab on these lines, for patch(1).
            let label = |side: Option<&Side>, prefix: &str, path: &[u8]| match side {
                None => "/dev/null".to_string(),
                Some(_) => {
                    let tab = if path.contains(&b' ') { "\t" } else { "" };
                    format!("{}{tab}", format.quoted(prefix, path))
                }
            };
            out.push_str(&format!("--- {}\n", label(old, a, old_path)));
            out.push_str(&format!("+++ {}\n", label(new, b, new_path)));
            for hunk in hunks {
                write_hunk(hunk, out);
            }
        }
        Some(_) => {}
        None if file.index.is_some() => {
            let name = |side: Option<&Side>, prefix: &str, path: &[u8]| {
                side.map_or("/dev/null".into(), |_| format.quoted(prefix, path))
            };
            out.push_str(&format!(
                "Binary files {} and {} differ\n",
                name(old, a, old_path),
                name(new, b, new_path)
            ));
        }
        None => {}
    }
}

/// Appends one hunk: its `@@` line, then its lines.
pub(crate) fn write_hunk(hunk: &Hunk, out: &mut String) {
    let range = |start: u32, count: u32| {
        if count == 1 {
            format!("{start}")
        } else {
            format!("{start},{count}")
        }
    };
    out.push_str(&format!(
        "@@ -{} +{} @@",
        range(hunk.old_start, hunk.old_count),
        range(hunk.new_start, hunk.new_count)
    ));
    if !hunk.function.is_empty() {
        out.push(' ');
        out.push_str(&hunk.function);
    }
    out.push('\n');
    for line in &hunk.lines {
        out.push(match line.kind {
            LineKind::Context => ' ',
            LineKind::Removed => '-',
            LineKind::Added => '+',
        });
        out.push_str(&line.text);
        out.push_str(match line.end {
            LineEnd::Lf => "\n",
            LineEnd::CrLf => "\r\n",
            LineEnd::Missing => "\n\\ No newline at end of file\n",
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    #[test]
    fn a_change_is_written_as_git_writes_it() {
        let side = |path: &str| Side {
            path: path.as_bytes().to_vec(),
            mode: Some(0o100644),
        };
        let file = FileDiff {
            old: Some(side("old name.py")),
            new: Some(side("new.py")),
            status: FileStatus::Renamed,
            similarity: Some(80),
            index: Some(("1234567".into(), "89abcde".into())),
            hunks: Some(vec![Hunk::numbered(
                (2, 2),
                "def f():".into(),
                [
                    (LineKind::Removed, &b"    return 1\n"[..]),
                    (LineKind::Added, b"    x = 1\n"),
                    (LineKind::Added, b"    return x"),
                ],
            )]),
            untracked: false,
        };
        let mut out = String::new();
        write(&file, &Format::default(), &mut out);
        assert_eq!(
            out,
            "diff --git a/old name.py b/new.py\nsimilarity index 80%\nrename from old name.py\n\
             rename to new.py\nindex 1234567..89abcde 100644\n--- a/old name.py\t\n+++ b/new.py\n\
             @@ -2 +2,2 @@ def f():\n-    return 1\n+    x = 1\n+    return x\n\
             \\ No newline at end of file\n"
        );
        assert_eq!(file.counts(), Some((2, 1)));
        assert_eq!(file.path(), "new.py");
        assert_eq!(parse(&out).unwrap(), [file]);
    }

    #[test]
    fn binary_and_added_files() {
        let added = FileDiff {
            old: None,
            new: Some(Side {
                path: b"logo.png".to_vec(),
                mode: Some(0o100644),
            }),
            status: FileStatus::Added,
            similarity: None,
            index: Some(("0000000".into(), "89abcde".into())),
            hunks: None,
            untracked: false,
        };
        let mut out = String::new();
        write(&added, &Format::default(), &mut out);
        assert_eq!(
            out,
            "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..89abcde\n\
             Binary files /dev/null and b/logo.png differ\n"
        );
        assert_eq!(added.counts(), None);
        assert_eq!(parse(&out).unwrap(), [added]);
    }

    #[test]
    fn paths_are_quoted_as_git_quotes_them() {
        let mut format = Format::default();
        assert_eq!(format.quoted("a/", b"new name.txt"), "a/new name.txt");
        assert_eq!(format.quoted("b/", b"tab\there"), "\"b/tab\\there\"");
        assert_eq!(format.quoted("", "é".as_bytes()), "\"\\303\\251\"");
        format.quote_non_ascii = false;
        assert_eq!(format.quoted("", "é".as_bytes()), "é");
        assert_eq!(format.quoted("", "é\t".as_bytes()), "\"é\\t\"");
    }
}
