//! The one model of a unified diff: what changed in a file (its two sides, a rename or a copy,
//! the hunks of numbered lines). `git::diff` builds it from a repository and heal from its
//! change, `write` renders it as `git diff` does, `parse` reads any unified diff back (git's,
//! `diff -u`'s) for review and the pull request's checks. Whatever reads a change works on the
//! model, never on text written by one of us and read back by another in the same process.

mod parse;
mod write;

pub(crate) use parse::parse;
#[cfg(test)]
pub(crate) use write::write_hunk;
pub(crate) use write::{write, Format};

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::run_document::FileStatus;

/// One side of a changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Side {
    /// As git stores it: bytes, not always UTF-8.
    pub path: Vec<u8>,
    /// Git's mode: 100644, 100755, 120000 (a link), 160000 (a submodule); None when the diff
    /// does not say (`diff -u`'s).
    pub mode: Option<u32>,
}

/// What changed in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileDiff {
    /// None for a file added.
    pub old: Option<Side>,
    /// None for a file deleted.
    pub new: Option<Side>,
    pub status: FileStatus,
    /// How much of a renamed or copied file stayed the same, in percent.
    pub similarity: Option<u32>,
    /// The abbreviated object ids before and after; None when the diff gives none (a rename or
    /// a mode change alone, `diff -u`).
    pub index: Option<(String, String)>,
    /// The changed lines; None when either side is binary.
    pub hunks: Option<Vec<Hunk>>,
    /// A file git does not track yet, shown as added (review reads a working tree's untracked
    /// files so; open-pr commits one only when named with --add).
    pub untracked: bool,
}

/// A run of changes with the lines of context around them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// Where it starts in the old file, as the patch shows it (1-based; the line before for
    /// an empty range).
    pub old_start: u32,
    pub old_count: u32,
    pub new_start: u32,
    pub new_count: u32,
    /// The nearest line above that looks like a function's start (git's default), or empty.
    pub function: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    Context,
    Removed,
    Added,
}

/// One line of a hunk, with its numbers in the old and new file (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub kind: LineKind,
    /// Without its `+`/`-`/` ` and its line ending.
    pub text: String,
    pub end: LineEnd,
    pub old: Option<u32>,
    pub new: Option<u32>,
}

/// How a line ends: the last line of a file may have no newline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnd {
    Lf,
    CrLf,
    Missing,
}

impl Line {
    /// A line whose text may hold its ending (`"x\r\n"`), split into the two.
    pub(crate) fn new(kind: LineKind, text: &[u8], old: Option<u32>, new: Option<u32>) -> Line {
        let (text, end) = match text.strip_suffix(b"\n") {
            Some(text) => match text.strip_suffix(b"\r") {
                Some(text) => (text, LineEnd::CrLf),
                None => (text, LineEnd::Lf),
            },
            None => (text, LineEnd::Missing),
        };
        Line {
            kind,
            text: String::from_utf8_lossy(text).into_owned(),
            end,
            old,
            new,
        }
    }
}

impl Hunk {
    /// A hunk of `lines` (kind and text with its ending), numbered from its header's starts.
    pub(crate) fn numbered<'a>(
        (old_start, new_start): (u32, u32),
        function: String,
        lines: impl IntoIterator<Item = (LineKind, &'a [u8])>,
    ) -> Hunk {
        // An empty range's start is the line before it, and numbers no line.
        let (mut old_no, mut new_no) = (old_start.max(1), new_start.max(1));
        let mut hunk = Hunk {
            old_start,
            old_count: 0,
            new_start,
            new_count: 0,
            function,
            lines: Vec::new(),
        };
        for (kind, text) in lines {
            let old = (kind != LineKind::Added).then_some(old_no);
            let new = (kind != LineKind::Removed).then_some(new_no);
            if old.is_some() {
                old_no = old_no.saturating_add(1);
                hunk.old_count += 1;
            }
            if new.is_some() {
                new_no = new_no.saturating_add(1);
                hunk.new_count += 1;
            }
            hunk.lines.push(Line::new(kind, text, old, new));
        }
        hunk
    }
}

impl FileDiff {
    /// The path it is listed under, as git stores it: the new one, or the old one of a file
    /// deleted.
    pub(crate) fn path_bytes(&self) -> &[u8] {
        self.new
            .as_ref()
            .or(self.old.as_ref())
            .map_or(&[], |side| side.path.as_slice())
    }

    /// The path it is listed under, as text (a byte that is not UTF-8 as U+FFFD).
    pub(crate) fn path(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.path_bytes())
    }

    pub(crate) fn old_path(&self) -> Option<Cow<'_, str>> {
        let side = self.old.as_ref()?;
        Some(String::from_utf8_lossy(&side.path))
    }

    pub(crate) fn new_path(&self) -> Option<Cow<'_, str>> {
        let side = self.new.as_ref()?;
        Some(String::from_utf8_lossy(&side.path))
    }

    pub(crate) fn is_binary(&self) -> bool {
        self.hunks.is_none()
    }

    /// Its lines of one kind, in order.
    pub(crate) fn lines(&self, kind: LineKind) -> impl Iterator<Item = &Line> {
        self.hunks
            .iter()
            .flatten()
            .flat_map(|hunk| &hunk.lines)
            .filter(move |line| line.kind == kind)
    }

    pub(crate) fn added(&self) -> usize {
        self.lines(LineKind::Added).count()
    }

    pub(crate) fn removed(&self) -> usize {
        self.lines(LineKind::Removed).count()
    }

    /// Lines added and removed; None for a binary file.
    pub(crate) fn counts(&self) -> Option<(u64, u64)> {
        self.hunks.as_ref()?;
        Some((self.added() as u64, self.removed() as u64))
    }

    /// Where the removed line `old` was, as a line of the new file: the line before it that the
    /// hunk keeps (its start when none), so that every risk's line is a line of the new file.
    pub(crate) fn new_side_of(&self, old: u32) -> Option<u32> {
        self.new.as_ref()?;
        self.hunks.iter().flatten().find_map(|hunk| {
            let mut last = hunk.new_start;
            hunk.lines.iter().find_map(|line| {
                if line.kind == LineKind::Removed && line.old == Some(old) {
                    return Some(last.max(1));
                }
                last = line.new.unwrap_or(last);
                None
            })
        })
    }
}

/// The lines of the new side each file's hunks show (added or unchanged), by path: where a
/// review comment may sit.
pub(crate) fn new_side_lines(files: &[FileDiff]) -> BTreeMap<String, BTreeSet<u32>> {
    files
        .iter()
        .filter_map(|file| {
            let lines = file
                .hunks
                .iter()
                .flatten()
                .flat_map(|hunk| &hunk.lines)
                .filter(|line| line.kind != LineKind::Removed)
                .filter_map(|line| line.new)
                .collect();
            Some((file.new_path()?.into_owned(), lines))
        })
        .collect()
}
