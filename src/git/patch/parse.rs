//! Unified diffs read back into the model: git's (renames, copies, mode changes, binary files,
//! quoted and non-UTF-8 names) and plain `diff -u`'s, with "\\ No newline at end of file", CRLF
//! lines and zero-context hunks.

use super::{FileDiff, Hunk, Line, LineEnd, LineKind, Side};
use crate::run_document::FileStatus;

/// A file's section as it is read: the headers seen so far.
struct Draft {
    old_path: Option<Vec<u8>>,
    new_path: Option<Vec<u8>>,
    old_mode: Option<u32>,
    new_mode: Option<u32>,
    status: FileStatus,
    similarity: Option<u32>,
    index: Option<(String, String)>,
    binary: bool,
    hunks: Vec<Hunk>,
}

impl Draft {
    fn new(old_path: Option<Vec<u8>>, new_path: Option<Vec<u8>>) -> Draft {
        Draft {
            old_path,
            new_path,
            old_mode: None,
            new_mode: None,
            status: FileStatus::Modified,
            similarity: None,
            index: None,
            binary: false,
            hunks: Vec::new(),
        }
    }

    fn into_diff(self) -> FileDiff {
        let side = |path: Option<Vec<u8>>, mode| path.map(|path| Side { path, mode });
        FileDiff {
            old: side(self.old_path, self.old_mode),
            new: side(self.new_path, self.new_mode),
            status: self.status,
            similarity: self.similarity,
            index: self.index,
            hunks: (!self.binary).then_some(self.hunks),
            untracked: false,
        }
    }
}

/// The files a diff changes. Text that is not a diff gives none.
pub(crate) fn parse(text: &str) -> Result<Vec<FileDiff>, String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut files = Vec::new();
    let mut plain = false;
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if line.starts_with("diff --cc ") || line.starts_with("diff --combined ") {
            return Err(format!(
                "line {}: a combined diff (a merge's, against its parents at once) has no single \
                 old side to review; give the merge against one parent (git diff HEAD^1)",
                at + 1
            ));
        }
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (file, next) = git_file(&lines, at, rest)?;
            files.push(file);
            at = next;
        } else if line.starts_with("--- ")
            && lines.get(at + 1).is_some_and(|l| l.starts_with("+++ "))
        {
            let mut file = Draft::new(None, None);
            at = headers_and_hunks(&lines, at, &mut file)?;
            if file.old_path.is_none() {
                file.status = FileStatus::Added;
            } else if file.new_path.is_none() {
                file.status = FileStatus::Deleted;
            }
            files.push(file.into_diff());
            plain = true;
        } else {
            at += 1;
        }
    }
    if plain {
        without_directory_prefixes(&mut files);
    }
    Ok(files)
}

/// `diff -r OLD NEW` names files under the two directories it compared: each side loses its
/// first component, when every file has one on each side that is present.
fn without_directory_prefixes(files: &mut [FileDiff]) {
    let first_component = |path: &[u8]| {
        let slash = path.iter().position(|&byte| byte == b'/')?;
        Some(path[..slash].to_vec())
    };
    // The one first component every present path on a side has, if there is one.
    let common = |side: fn(&FileDiff) -> &Option<Side>| -> Option<Vec<u8>> {
        let mut dirs = files
            .iter()
            .filter_map(|f| side(f).as_ref())
            .map(|side| first_component(&side.path));
        let first = dirs.next()??;
        dirs.all(|dir| dir.as_ref() == Some(&first))
            .then_some(first)
    };
    let (old, new) = (common(|f| &f.old), common(|f| &f.new));
    if old.is_none() || new.is_none() || old == new {
        return;
    }
    for file in files.iter_mut() {
        for side in [&mut file.old, &mut file.new].into_iter().flatten() {
            if let Some(dir) = first_component(&side.path) {
                side.path.drain(..=dir.len());
            }
        }
    }
}

/// A `diff --git` section from line `at`: its extended headers, then its `---`/`+++` lines and
/// hunks or its binary note. Returns where the next section starts.
fn git_file(lines: &[&str], at: usize, names: &str) -> Result<(FileDiff, usize), String> {
    let (a, b) = split_git_names(names);
    let mut file = Draft::new(a, b);
    let mode = |text: &str| u32::from_str_radix(text.trim(), 8).ok();
    let mut at = at + 1;
    while at < lines.len() {
        let line = lines[at].trim_end_matches('\r');
        if line.starts_with("diff --git ") || line.starts_with("@@ ") {
            break;
        }
        if line.starts_with("--- ") {
            at = headers_and_hunks(lines, at, &mut file)?;
            break;
        }
        if let Some(text) = line.strip_prefix("new file mode ") {
            file.status = FileStatus::Added;
            file.old_path = None;
            file.new_mode = mode(text);
        } else if let Some(text) = line.strip_prefix("deleted file mode ") {
            file.status = FileStatus::Deleted;
            file.new_path = None;
            file.old_mode = mode(text);
        } else if let Some(text) = line.strip_prefix("old mode ") {
            file.old_mode = mode(text);
        } else if let Some(text) = line.strip_prefix("new mode ") {
            file.new_mode = mode(text);
        } else if let Some(path) = line.strip_prefix("rename from ") {
            file.status = FileStatus::Renamed;
            file.old_path = Some(unquoted(path));
        } else if let Some(path) = line.strip_prefix("rename to ") {
            file.new_path = Some(unquoted(path));
        } else if let Some(path) = line.strip_prefix("copy from ") {
            file.status = FileStatus::Copied;
            file.old_path = Some(unquoted(path));
        } else if let Some(path) = line.strip_prefix("copy to ") {
            file.new_path = Some(unquoted(path));
        } else if let Some(percent) = line
            .strip_prefix("similarity index ")
            .and_then(|rest| rest.strip_suffix('%'))
        {
            file.similarity = percent.parse().ok();
        } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
            file.binary = true;
        } else if let Some(rest) = line.strip_prefix("index ") {
            let mut words = rest.split_whitespace();
            if let Some((before, after)) = words.next().and_then(|ids| ids.split_once("..")) {
                file.index = Some((before.to_string(), after.to_string()));
            }
            // The mode of a file whose mode stayed the same.
            if let Some(same) = words.next().and_then(mode) {
                file.old_mode.get_or_insert(same);
                file.new_mode.get_or_insert(same);
            }
        }
        at += 1;
    }
    // A binary patch's data runs to the next section.
    while at < lines.len() && !lines[at].starts_with("diff --git ") {
        at += 1;
    }
    Ok((file.into_diff(), at))
}

/// `a/x b/x` as the two names: quoted ones, or split where the two halves name the same path
/// (a name may hold spaces).
fn split_git_names(names: &str) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    let names = names.trim_end_matches('\r');
    if names.starts_with('"') {
        let (first, rest) = take_quoted(names);
        let second = rest.trim_start();
        let second = if second.starts_with('"') {
            take_quoted(second).0
        } else {
            second.as_bytes().to_vec()
        };
        return (strip_side(&first), strip_side(&second));
    }
    if let Some(quoted) = names.find(" \"") {
        return (
            strip_side(&names.as_bytes()[..quoted]),
            strip_side(&take_quoted(&names[quoted + 1..]).0),
        );
    }
    // Without quotes: `a/P b/P` with the same P, or the first ` b/`.
    let half = names.len() / 2;
    if names.len() % 2 == 1 && names.as_bytes().get(half) == Some(&b' ') {
        let (a, b) = (&names[..half], &names[half + 1..]);
        if a.get(2..) == b.get(2..) {
            return (strip_side(a.as_bytes()), strip_side(b.as_bytes()));
        }
    }
    match names.find(" b/") {
        Some(at) => (
            strip_side(&names.as_bytes()[..at]),
            strip_side(&names.as_bytes()[at + 1..]),
        ),
        None => (None, None),
    }
}

/// A path without git's `a/`, `b/` (or mnemonic `c/ i/ w/ o/`) prefix.
fn strip_side(path: &[u8]) -> Option<Vec<u8>> {
    // A name may end in spaces: only a tab (diff -u's date follows one) or a CR ends it.
    let end = path
        .iter()
        .rposition(|&byte| byte != b'\r' && byte != b'\t')
        .map_or(0, |last| last + 1);
    let path = &path[..end];
    if path == b"/dev/null" || path.is_empty() {
        return None;
    }
    if path.len() > 2 && path[1] == b'/' && b"abciwo".contains(&path[0]) {
        return Some(path[2..].to_vec());
    }
    Some(path.to_vec())
}

/// The `---`/`+++` pair at `at` and the hunks after it; returns where they end.
fn headers_and_hunks(lines: &[&str], mut at: usize, file: &mut Draft) -> Result<usize, String> {
    // `diff -u` puts a tab and a date after the name; the epoch's date marks a side that does
    // not exist (`diff -N`).
    let name = |line: &str| {
        let name = line.get(4..).unwrap_or("").trim_end_matches('\r');
        if name.starts_with('"') {
            return strip_side(&take_quoted(name).0);
        }
        let (name, date) = name.split_once('\t').unwrap_or((name, ""));
        if is_epoch(date) {
            return None;
        }
        strip_side(name.as_bytes())
    };
    if !lines
        .get(at + 1)
        .is_some_and(|next| next.starts_with("+++ "))
    {
        return Err(format!(
            "line {}: `---` without the `+++` line after it",
            at + 1
        ));
    }
    if file.status == FileStatus::Modified || file.old_path.is_none() && file.new_path.is_none() {
        let (old, new) = (name(lines[at]), name(lines[at + 1]));
        if file.status == FileStatus::Modified
            || (file.old_path.is_none() && file.new_path.is_none())
        {
            file.old_path = old;
            file.new_path = new;
        }
    }
    at += 2;
    while at < lines.len() {
        let line = lines[at].trim_end_matches('\r');
        let Some(header) = line.strip_prefix("@@ -") else {
            break;
        };
        let (hunk, next) = read_hunk(lines, at, header)?;
        file.hunks.push(hunk);
        at = next;
    }
    Ok(at)
}

/// The hunk whose header (after `@@ -`) is on line `at`, and the line after it.
/// Long: one pass over the hunk's lines; its counters are shared by the loop and the checks after it.
fn read_hunk(lines: &[&str], mut at: usize, header: &str) -> Result<(Hunk, usize), String> {
    let (old_start, old_count, new_start, new_count) = hunk_header(header).ok_or_else(|| {
        format!(
            "line {}: a hunk header that cannot be read: {}",
            at + 1,
            lines[at].trim_end_matches('\r')
        )
    })?;
    let function = header
        .split_once(" @@")
        .map_or("", |(_, rest)| rest.strip_prefix(' ').unwrap_or(rest));
    let mut hunk = Hunk {
        old_start,
        old_count,
        new_start,
        new_count,
        function: function.to_string(),
        lines: Vec::new(),
    };
    let (mut old_left, mut new_left) = (old_count, new_count);
    let (mut old_no, mut new_no) = (old_start.max(1), new_start.max(1));
    // An empty range's start is the line before it.
    if old_count == 0 {
        old_no = old_start.saturating_add(1);
    }
    if new_count == 0 {
        new_no = new_start.saturating_add(1);
    }
    at += 1;
    while at < lines.len() && (old_left > 0 || new_left > 0) {
        let raw = lines[at];
        let (text, mut end) = match raw.strip_suffix('\r') {
            Some(text) => (text, LineEnd::CrLf),
            None => (raw, LineEnd::Lf),
        };
        let (kind, rest) = match text.chars().next() {
            Some('+') => (LineKind::Added, &text[1..]),
            Some('-') => (LineKind::Removed, &text[1..]),
            Some(' ') => (LineKind::Context, &text[1..]),
            // An empty context line whose space was lost.
            None => (LineKind::Context, ""),
            Some('\\') => {
                at += 1;
                continue;
            }
            _ => break,
        };
        if lines.get(at + 1).is_some_and(|next| next.starts_with('\\')) {
            end = LineEnd::Missing;
        }
        let old = (kind != LineKind::Added).then_some(old_no);
        let new = (kind != LineKind::Removed).then_some(new_no);
        if old.is_some() {
            old_left = old_left.saturating_sub(1);
            old_no = old_no.saturating_add(1);
        }
        if new.is_some() {
            new_left = new_left.saturating_sub(1);
            new_no = new_no.saturating_add(1);
        }
        hunk.lines.push(Line {
            kind,
            text: rest.to_string(),
            end,
            old,
            new,
        });
        at += 1;
    }
    // "\ No newline at end of file" after the hunk's last line.
    while at < lines.len() && lines[at].starts_with('\\') {
        at += 1;
    }
    // A changed line past the count its header gives would be read by nothing: a corrupt
    // diff (or one made to hide a line), as `git apply` calls it.
    if let Some(line) = lines.get(at) {
        let header =
            line.starts_with("--- ") && lines.get(at + 1).is_some_and(|l| l.starts_with("+++ "));
        // `git format-patch` ends with `-- ` and git's version.
        let signature = line.trim_end_matches('\r') == "-- ";
        if (line.starts_with('+') || line.starts_with('-')) && !header && !signature {
            return Err(format!(
                "line {}: a changed line past the end of its hunk (its `@@` header counts \
                 fewer lines): the diff is corrupt",
                at + 1
            ));
        }
    }
    Ok((hunk, at))
}

/// Whether a `diff -u` date is the epoch's, in any time zone (`1970-01-01 00:00:00 +0000`,
/// `1969-12-31 19:00:00.000000000 -0500`, `Thu Jan  1 00:00:00 1970`): `diff -N`'s mark of a
/// side that does not exist.
fn is_epoch(date: &str) -> bool {
    let mut parts = date.split_whitespace();
    let (Some(day), Some(time), zone) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let days = match day {
        "1970-01-01" => 0,
        "1969-12-31" => -1,
        "1970-01-02" => 1,
        // ctime's form, which gives no zone.
        _ => return date.contains(" 1970") || (date.contains("Dec 31") && date.contains(" 1969")),
    };
    let (clock, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let clock: Vec<i64> = clock.split(':').filter_map(|n| n.parse().ok()).collect();
    let offset = zone
        .filter(|z| z.len() == 5 && (z.starts_with('+') || z.starts_with('-')))
        .and_then(|z| {
            let minutes = z[1..3].parse::<i64>().ok()? * 60 + z[3..].parse::<i64>().ok()?;
            Some(if z.starts_with('-') {
                -minutes
            } else {
                minutes
            })
        })
        .unwrap_or(0);
    let [hours, minutes, seconds] = clock[..] else {
        return false;
    };
    seconds == 0
        && fraction.bytes().all(|b| b == b'0')
        && days * 1440 + hours * 60 + minutes - offset == 0
}

/// `3,7 +4,8 @@ fn` as (3, 7, 4, 8); a count left out is 1.
fn hunk_header(header: &str) -> Option<(u32, u32, u32, u32)> {
    let (ranges, _) = header.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |text: &str| -> Option<(u32, u32)> {
        match text.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((text.parse().ok()?, 1)),
        }
    };
    let ((old_start, old_count), (new_start, new_count)) = (range(old)?, range(new)?);
    Some((old_start, old_count, new_start, new_count))
}

/// A C-quoted name as git writes it, and the text after it.
fn take_quoted(text: &str) -> (Vec<u8>, &str) {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut at = 1;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => return (out, &text[at + 1..]),
            b'\\' if at + 1 < bytes.len() => {
                at += 1;
                match bytes[at] {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'v' => out.push(11),
                    b'f' => out.push(12),
                    b'0'..=b'7' => {
                        let digits: Vec<u8> = bytes[at..]
                            .iter()
                            .take(3)
                            .take_while(|b| (b'0'..=b'7').contains(*b))
                            .copied()
                            .collect();
                        let value = digits.iter().fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
                        out.push(u8::try_from(value).unwrap_or(b'?'));
                        at += digits.len() - 1;
                    }
                    other => out.push(other),
                }
            }
            byte => out.push(byte),
        }
        at += 1;
    }
    (out, "")
}

/// A path as git may quote it.
fn unquoted(path: &str) -> Vec<u8> {
    let path = path.trim_end_matches('\r');
    if path.starts_with('"') {
        take_quoted(path).0
    } else {
        path.as_bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_diffs_with_renames_modes_binaries_and_new_files() {
        let text = "diff --git a/src/a.py b/src/a.py\nindex 1..2 100644\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,3 +1,3 @@ def f():\n x = 1\n-y = 2\n+y = 3\n z = 4\ndiff --git a/old name.txt b/new name.txt\nsimilarity index 90%\nrename from old name.txt\nrename to new name.txt\n--- a/old name.txt\n+++ b/new name.txt\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\ndiff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\ndiff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1234567\nBinary files /dev/null and b/logo.png differ\ndiff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n";
        let files = parse(text).unwrap();
        let summary: Vec<(String, FileStatus, usize, usize, bool)> = files
            .iter()
            .map(|f| {
                (
                    f.path().to_string(),
                    f.status,
                    f.added(),
                    f.removed(),
                    f.is_binary(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("src/a.py".to_string(), FileStatus::Modified, 1, 1, false),
                ("new name.txt".to_string(), FileStatus::Renamed, 1, 1, false),
                ("run.sh".to_string(), FileStatus::Modified, 0, 0, false),
                ("logo.png".to_string(), FileStatus::Added, 0, 0, true),
                ("gone.py".to_string(), FileStatus::Deleted, 0, 2, false),
            ]
        );
        assert_eq!(files[1].old_path().as_deref(), Some("old name.txt"));
        assert_eq!(files[1].similarity, Some(90));
        assert_eq!(files[2].new.as_ref().unwrap().mode, Some(0o100755));
        let hunk = &files[0].hunks.as_ref().unwrap()[0];
        assert_eq!(hunk.function, "def f():");
        let changed = &hunk.lines[2];
        assert_eq!(
            (changed.kind, changed.text.as_str(), changed.new),
            (LineKind::Added, "y = 3", Some(2))
        );
        let last = &files[1].hunks.as_ref().unwrap()[0].lines[1];
        assert_eq!((last.text.as_str(), last.end), ("b", LineEnd::Missing));
    }

    #[test]
    fn plain_diff_u_zero_context_hunks_crlf_and_quoted_names() {
        let text = "--- a.txt\t2024-01-01 00:00:00\n+++ a.txt\t2024-01-02 00:00:00\n@@ -3,0 +4,2 @@\n+one\r\n+two\r\n";
        let files = parse(text).unwrap();
        assert_eq!(files[0].path(), "a.txt");
        let lines = &files[0].hunks.as_ref().unwrap()[0].lines;
        assert_eq!(
            (lines[0].text.as_str(), lines[0].end, lines[0].new),
            ("one", LineEnd::CrLf, Some(4))
        );
        assert_eq!(lines[1].new, Some(5));
        let text = "diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/caf\\303\\251.txt\"\n@@ -0,0 +1 @@\n+x\n";
        let files = parse(text).unwrap();
        assert_eq!(
            (&*files[0].path(), files[0].status),
            ("café.txt", FileStatus::Added)
        );
        assert!(parse("just some text\n").unwrap().is_empty());
    }

    #[test]
    fn truncated_and_hostile_diffs_are_errors_or_read_never_a_panic() {
        for text in [
            "diff --git a/x b/x\n--- a/x",
            "diff --git a/x b/x\n--- a/x\n+\n",
            "diff --git a/x b/x\n--- a/x\nxx\u{20ac}\n",
            "diff --git \"a/\\1\u{20ac}\" \"b/\\1\u{20ac}\"\nrename from \"\\12\u{20ac}\"\n",
            "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -4294967295,0 +1 @@\n+x\n",
            "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +4294967295,0 @@\n-x\n",
            "--- a\n+++ b\n@@ -1,99999999 +1,99999999 @@\n x\n",
        ] {
            let _ = parse(text);
        }
        assert!(parse("diff --git a/x b/x\n--- a/x").is_err());
        // A line past its hunk's count, and a merge's combined diff.
        let hidden = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+TOKEN = 1\n";
        assert!(parse(hidden)
            .unwrap_err()
            .contains("line 7: a changed line past the end"));
        let signed = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n-- \n2.43.0\n";
        assert_eq!(parse(signed).unwrap()[0].added(), 1);
        let merge = "diff --cc x\nindex 1,2..3\n--- a/x\n+++ b/x\n@@@ -1,1 -1,1 +1,1 @@@\n";
        assert!(parse(merge).unwrap_err().contains("combined diff"));
    }

    #[test]
    fn the_epoch_marks_a_missing_side_in_any_time_zone() {
        for date in [
            "1970-01-01 00:00:00.000000000 +0000",
            "1969-12-31 19:00:00.000000000 -0500",
            "1970-01-01 05:30:00 +0530",
            "Thu Jan  1 00:00:00 1970",
        ] {
            assert!(is_epoch(date), "{date}");
        }
        for date in [
            "1970-01-01 00:00:01 +0000",
            "1969-12-31 19:00:00 +0000",
            "2024-01-02 00:00:00.000000000 +0000",
            "",
        ] {
            assert!(!is_epoch(date), "{date}");
        }
    }

    #[test]
    fn diff_r_of_two_directories_names_the_files_and_sees_added_ones() {
        let text = "diff -ruN d1/a.py d2/a.py\n--- d1/a.py\t2024-01-01 00:00:00.000000000 +0000\n+++ d2/a.py\t2024-01-02 00:00:00.000000000 +0000\n@@ -1 +1 @@\n-x\n+y\ndiff -ruN d1/.env d2/.env\n--- d1/.env\t1970-01-01 00:00:00.000000000 +0000\n+++ d2/.env\t2024-01-02 00:00:00.000000000 +0000\n@@ -0,0 +1 @@\n+K=v\n";
        let files = parse(text).unwrap();
        let seen: Vec<(String, FileStatus)> = files
            .iter()
            .map(|f| (f.path().into_owned(), f.status))
            .collect();
        assert_eq!(
            seen,
            [
                ("a.py".to_string(), FileStatus::Modified),
                (".env".to_string(), FileStatus::Added)
            ]
        );
        let text = "diff --git a/trailing  b/trailing \nnew file mode 100644\n--- /dev/null\n+++ b/trailing \t\n@@ -0,0 +1 @@\n+x\n";
        assert_eq!(parse(text).unwrap()[0].path(), "trailing ");
    }
}
