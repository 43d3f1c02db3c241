//! Where a model's SEARCH text is in a file, found by a fixed cascade and never by edit
//! distance: exactly (the catalogue's `edit_file::replace`), then line by line ignoring trailing
//! white space, with one indentation offset for every line (re-applied to the replacement),
//! ignoring all surrounding white space, and with Unicode punctuation (curly quotes, dashes,
//! non-breaking spaces) read as ASCII. The first pass that finds the text decides; more than one
//! place is refused, as is no place, with the lines that came closest.

use crate::tools::edit_file::{self, Mismatch};

/// How the text was found (said in the attempt's record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Matched {
    Exact,
    TrailingWhitespace,
    Indentation,
    Trimmed,
    Punctuation,
}

impl Matched {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Matched::Exact => "exact",
            Matched::TrailingWhitespace => "trailing_whitespace",
            Matched::Indentation => "indentation",
            Matched::Trimmed => "trimmed",
            Matched::Punctuation => "punctuation",
        }
    }
}

/// How a pass reads a line before comparing it.
type Normal = fn(&str) -> String;

/// `text` with `search` replaced by `replace`, and how it was found.
pub(crate) fn replace_once(
    text: &str,
    search: &str,
    replace: &str,
) -> Result<(String, Matched), Mismatch> {
    match edit_file::replace(text, search, replace, false) {
        Ok((updated, _)) => return Ok((updated, Matched::Exact)),
        Err(ambiguous @ Mismatch::Ambiguous { .. }) => return Err(ambiguous),
        Err(Mismatch::NotFound) => {}
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let wanted = without_blank_ends(search);
    let replacement = without_blank_ends(replace);
    if wanted.is_empty() {
        return Err(Mismatch::NotFound);
    }
    let passes: [(Matched, Normal); 3] = [
        (Matched::TrailingWhitespace, |line| {
            line.trim_end().to_string()
        }),
        (Matched::Trimmed, |line| line.trim().to_string()),
        (Matched::Punctuation, |line| ascii_punctuation(line.trim())),
    ];
    for (index, (how, normal)) in passes.iter().enumerate() {
        let found = windows(&lines, &wanted, |file, wanted| {
            normal(file) == normal(wanted)
        });
        if let Some(result) = decided(&lines, &found, &wanted, &replacement, *how)? {
            return Ok(result);
        }
        // One offset for every line comes after trailing white space and before trimming, as
        // it keeps the replacement's own indentation right.
        if index == 0 {
            let found = windows(&lines, &wanted, |_, _| true)
                .into_iter()
                .filter(|&at| offset(&lines[at..at + wanted.len()], &wanted).is_some())
                .collect::<Vec<_>>();
            if let Some(result) =
                decided(&lines, &found, &wanted, &replacement, Matched::Indentation)?
            {
                return Ok(result);
            }
        }
    }
    Err(Mismatch::NotFound)
}

/// One place found: the text with it replaced; several: refused with their lines; none: None.
fn decided(
    lines: &[&str],
    found: &[usize],
    wanted: &[&str],
    replacement: &[&str],
    how: Matched,
) -> Result<Option<(String, Matched)>, Mismatch> {
    match found {
        [] => Ok(None),
        [at] => Ok(Some((spliced(lines, *at, wanted, replacement, how), how))),
        _ => Err(Mismatch::Ambiguous {
            count: found.len(),
            lines: found.iter().take(20).map(|at| at + 1).collect(),
        }),
    }
}

/// The starts of the runs of `lines` that match `wanted` line by line.
fn windows(lines: &[&str], wanted: &[&str], same: impl Fn(&str, &str) -> bool) -> Vec<usize> {
    if wanted.len() > lines.len() {
        return Vec::new();
    }
    (0..=lines.len() - wanted.len())
        .filter(|&at| {
            lines[at..at + wanted.len()]
                .iter()
                .zip(wanted)
                .all(|(line, wanted)| same(line, wanted))
        })
        .collect()
}

/// How the file's lines are indented against the model's, when by the same white space on
/// every line that is not blank: (added to the model's, taken from the model's).
fn offset<'a>(file: &[&'a str], wanted: &[&'a str]) -> Option<(&'a str, &'a str)> {
    let mut found: Option<(&str, &str)> = None;
    for (line, want) in file.iter().zip(wanted) {
        let (line, want) = (line.trim_end(), want.trim_end());
        if line.is_empty() && want.is_empty() {
            continue;
        }
        let this = if let Some(extra) = line.strip_suffix(want) {
            (extra, "")
        } else if let Some(extra) = want.strip_suffix(line) {
            ("", extra)
        } else {
            return None;
        };
        if !this.0.trim().is_empty() || !this.1.trim().is_empty() {
            return None;
        }
        match found {
            None => found = Some(this),
            Some(seen) if seen != this => return None,
            Some(_) => {}
        }
    }
    found
}

/// `lines` with the run at `at` replaced by `replacement`, indented by the same offset as the
/// run is against `wanted` (by its first line's, when they differ), in the run's line endings.
/// A replacement line the model copied from its SEARCH text is the file's line as it is (its
/// tabs, its quotes); found through typographic punctuation, the new lines get ASCII's.
fn spliced(
    lines: &[&str],
    at: usize,
    wanted: &[&str],
    replacement: &[&str],
    how: Matched,
) -> String {
    let run = &lines[at..at + wanted.len()];
    let (add, remove) = offset(run, wanted).unwrap_or_else(|| first_line_offset(run, wanted));
    let ending = if run[0].ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let last_ended = run.last().is_some_and(|line| line.ends_with('\n'));
    let mut out: String = lines[..at].concat();
    let mut unchanged_from = 0;
    for (index, line) in replacement.iter().enumerate() {
        let copied = wanted[unchanged_from..]
            .iter()
            .position(|want| want == line)
            .map(|k| unchanged_from + k);
        if let Some(k) = copied.filter(|_| !line.trim().is_empty()) {
            out.push_str(run[k].trim_end_matches(['\n', '\r']));
            unchanged_from = k + 1;
        } else if !line.trim().is_empty() {
            let line = line.strip_prefix(remove).unwrap_or(line);
            out.push_str(add);
            match how {
                Matched::Punctuation => out.push_str(&ascii_punctuation(line)),
                _ => out.push_str(line),
            }
        }
        if index + 1 < replacement.len() || last_ended {
            out.push_str(ending);
        }
    }
    out.push_str(&lines[at + wanted.len()..].concat());
    out
}

/// The offset of the run's first line that is not blank against the model's: what to add, and
/// what to take off where it is there (the model's indentation, when it is of another kind).
fn first_line_offset<'a>(run: &[&'a str], wanted: &[&'a str]) -> (&'a str, &'a str) {
    let indent = |line: &'a str| &line[..line.len() - line.trim_start().len()];
    let Some((line, want)) = run
        .iter()
        .zip(wanted)
        .find(|(l, w)| !l.trim().is_empty() && !w.trim().is_empty())
    else {
        return ("", "");
    };
    let (have, asked) = (indent(line), indent(want));
    if let Some(extra) = have.strip_prefix(asked) {
        (extra, "")
    } else if let Some(extra) = asked.strip_prefix(have) {
        ("", extra)
    } else {
        (have, asked)
    }
}

/// The lines of `text` (without their endings) without blank lines at either end: a stray blank
/// line around a model's block is not part of what it means.
fn without_blank_ends(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(start, |at| at + 1);
    lines[start..end].to_vec()
}

/// Typographic punctuation as the ASCII a program holds.
fn ascii_punctuation(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' => '\'',
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00a0}' | '\u{2002}'..='\u{200a}' | '\u{202f}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "def f(x):\n    if x > 1:\n        return x\n    return 0\n";

    #[test]
    fn lines_copied_from_the_search_text_stay_as_the_file_has_them() {
        // Tabs where the model wrote spaces: the unchanged line keeps its tabs.
        let file = "def f(x):\n\tif x > 1:\n\t\treturn False\n\treturn True\n";
        let (out, how) = replace_once(
            file,
            "    if x > 1:\n        return False\n",
            "    if x >= 1:\n        return False\n",
        )
        .unwrap();
        assert_eq!(how, Matched::Trimmed);
        assert_eq!(
            out,
            "def f(x):\n\tif x >= 1:\n\t\treturn False\n\treturn True\n"
        );
        // Curly quotes the model typed: the comment stays, the new line gets ASCII quotes.
        let file = "# it's the \"legal\" age\nmsg = 'adult' if age > 18 else 'minor'\n";
        let (out, how) = replace_once(
            file,
            "# it\u{2019}s the \u{201c}legal\u{201d} age\nmsg = \u{2018}adult\u{2019} if age > 18 else \u{2018}minor\u{2019}\n",
            "# it\u{2019}s the \u{201c}legal\u{201d} age\nmsg = \u{2018}adult\u{2019} if age >= 18 else \u{2018}minor\u{2019}\n",
        )
        .unwrap();
        assert_eq!(how, Matched::Punctuation);
        assert_eq!(
            out,
            "# it's the \"legal\" age\nmsg = 'adult' if age >= 18 else 'minor'\n"
        );
    }

    #[test]
    fn exact_text_is_replaced_first() {
        let (out, how) = replace_once(FILE, "x > 1", "x >= 1").unwrap();
        assert_eq!(how, Matched::Exact);
        assert!(out.contains("if x >= 1:"));
    }

    #[test]
    fn trailing_white_space_and_stray_blank_lines_are_forgiven() {
        let (out, how) = replace_once(
            FILE,
            "\n    if x > 1:   \n        return x\n\n",
            "    if x >= 1:\n        return x\n",
        )
        .unwrap();
        assert_eq!(how, Matched::TrailingWhitespace);
        assert_eq!(out, FILE.replace("x > 1", "x >= 1"));
    }

    #[test]
    fn a_uniform_indentation_offset_is_applied_to_the_replacement() {
        // The model dropped the function's indentation from every line.
        let (out, how) = replace_once(
            FILE,
            "if x > 1:\n    return x",
            "if x >= 1:\n    return x + 1",
        )
        .unwrap();
        assert_eq!(how, Matched::Indentation);
        assert_eq!(
            out,
            "def f(x):\n    if x >= 1:\n        return x + 1\n    return 0\n"
        );
    }

    #[test]
    fn trimmed_lines_and_curly_quotes_match_last() {
        let file = "msg = \"it's\"\n  call( a )\n";
        let (out, how) =
            replace_once(file, "msg = \u{201c}it\u{2019}s\u{201d}", "msg = \"ok\"").unwrap();
        assert_eq!(
            (out.as_str(), how),
            ("msg = \"ok\"\n  call( a )\n", Matched::Punctuation)
        );
        let (out, how) = replace_once(file, "\tcall( a )", "call(b)").unwrap();
        assert_eq!(
            (out.as_str(), how),
            ("msg = \"it's\"\n  call(b)\n", Matched::Trimmed)
        );
    }

    #[test]
    fn two_places_are_refused_and_none_is_not_found() {
        let file = "a = 1\nb = 2\na = 1\n";
        let twice = Err(Mismatch::Ambiguous {
            count: 2,
            lines: vec![1, 3],
        });
        assert_eq!(replace_once(file, "a = 1\n", "a = 3\n"), twice);
        // Past the exact pass too: twice once trailing white space is ignored.
        assert_eq!(
            replace_once("a = 1 \nb\na = 1\t\n", "a = 1\n", "a = 3\n"),
            twice
        );
        assert_eq!(
            replace_once(file, "c = 1", "c = 2"),
            Err(Mismatch::NotFound)
        );
    }

    #[test]
    fn crlf_files_keep_their_endings() {
        let file = "one\r\n  two\r\nthree\r\n";
        let (out, _) = replace_once(file, "two \nthree", "2\n3").unwrap();
        assert_eq!(out, "one\r\n  2\r\n  3\r\n");
    }
}
