//! String literals the failing tests' own words say are wrong. A failure prints what the code
//! gave and what the test wanted (`assert 'buzz' == 'Buzz'`, `+ 'hello_world' - 'hello-world'`,
//! `assert 'git push --force' == 'git push --force-with-lease'`): a literal of the suspicious
//! lines that produced the part where the two differ (it is the one string, `"buzz"`; or that
//! part, `"_"`; or holds it, `'push --force'`) gets the other's part there (`"Buzz"`, `"-"`,
//! `'push --force-with-lease'`). Tier 1: the failure names the value, which no other change
//! has for evidence (a real bug's such literal waited behind 750 guesses at tier 6).

use std::collections::HashSet;

use tree_sitter::Node;

use super::operators::{changeable, Candidate};
use crate::run_document::TestFailure;

/// Quoted strings read from one failure at most: a list compared with a list prints many.
const MAX_STRINGS: usize = 24;
/// Strings longer than this are output, not a literal's value.
const MAX_LENGTH: usize = 200;

/// Two strings a failure shows, one the code's and one the test's, and where they differ: the
/// bytes `start..ends.0` of `from` are `start..ends.1` of `to`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct Difference {
    from: String,
    to: String,
    start: usize,
    ends: (usize, usize),
}

impl Difference {
    fn new(from: &str, to: &str) -> Difference {
        let start = common_prefix(from, to);
        let suffix = common_prefix(&reversed(&from[start..]), &reversed(&to[start..]));
        Difference {
            from: from.to_string(),
            to: to.to_string(),
            start,
            ends: (from.len() - suffix, to.len() - suffix),
        }
    }

    /// What `literal` becomes where it produced the differing part of `from` (it lies within
    /// the literal's place there): that part replaced by `to`'s; each place once.
    fn applied_to(&self, literal: &str) -> Vec<String> {
        let (start, (end, to_end)) = (self.start, self.ends);
        let places: Vec<usize> = match literal.is_empty() {
            // An empty literal holds only an empty part: `"" → " "`.
            true => (start == end).then_some(start).into_iter().collect(),
            false => self.from.match_indices(literal).map(|(at, _)| at).collect(),
        };
        places
            .into_iter()
            .filter(|&at| at <= start && end <= at + literal.len())
            .map(|at| {
                let (kept_before, kept_after) = (&literal[..start - at], &literal[end - at..]);
                format!("{kept_before}{}{kept_after}", &self.to[start..to_end])
            })
            .collect()
    }
}

/// The differences the failures show, each pair of their strings both ways (which is the
/// code's is not known: only a literal of the code matches).
pub(super) fn differences(failures: &[TestFailure]) -> Vec<Difference> {
    let mut found = Vec::new();
    // Hundreds of pairs a failure, for every failure: each kept once, in the order found.
    let mut seen = HashSet::new();
    for failure in failures {
        let said = format!("{}\n{}", failure.message, failure.details);
        let strings = quoted(&said);
        for a in &strings {
            for b in &strings {
                if a != b && seen.insert((a.clone(), b.clone())) {
                    found.push(Difference::new(a, b));
                }
            }
        }
    }
    found
}

/// The literals among the nodes of `lines` (first and last, 1-based) that the `differences`
/// change, outside the `protected` byte ranges (the tests' own code).
pub(super) fn candidates(
    path: &str,
    text: &str,
    root: Node,
    lines: (usize, usize),
    protected: &[(usize, usize)],
    differences: &[Difference],
) -> Vec<Candidate> {
    let mut found = Vec::new();
    if differences.is_empty() {
        return found;
    }
    for node in changeable(root, lines, protected) {
        let Some((quote, value)) = plain_string(text, node) else {
            continue;
        };
        let mut tried = HashSet::new();
        for to in differences.iter().flat_map(|d| d.applied_to(value)) {
            if to.contains([quote, '\\', '\n', '\r']) || !tried.insert(to.clone()) {
                continue;
            }
            let replacement = format!("{quote}{to}{quote}");
            found.push(Candidate::at(path, text, node, replacement, 1));
        }
    }
    found.sort_by_key(|candidate| candidate.start);
    found
}

/// Python's regular expressions anchored at the start of the text that should match anywhere
/// (thefuck's `re.sub('^mkdir (.*)', …)` missed `hdfs dfs -mkdir`): the `^` dropped, or made a
/// word boundary (`\\b`, first: it keeps the pattern from matching inside a word). Tier 4,
/// with the operators.
pub(super) fn unanchored(
    path: &str,
    text: &str,
    root: Node,
    lines: (usize, usize),
    protected: &[(usize, usize)],
) -> Vec<Candidate> {
    const REGEX_CALLS: &[&str] = &[
        "re.sub",
        "re.subn",
        "re.match",
        "re.search",
        "re.findall",
        "re.finditer",
        "re.compile",
        "re.split",
        "re.fullmatch",
    ];
    let mut found = Vec::new();
    for node in changeable(root, lines, protected) {
        let Some((quote, value)) = plain_string(text, node) else {
            continue;
        };
        let Some(rest) = value.strip_prefix('^') else {
            continue;
        };
        let first_argument_of_regex_call = node
            .parent()
            .filter(|arguments| {
                arguments
                    .named_child(0)
                    .is_some_and(|n| n.id() == node.id())
            })
            .and_then(|arguments| arguments.parent())
            .and_then(|call| call.child_by_field_name("function"))
            .is_some_and(|function| REGEX_CALLS.contains(&&text[function.byte_range()]));
        if !first_argument_of_regex_call {
            continue;
        }
        // A word boundary first: it keeps the pattern from matching inside a word.
        for replacement in [
            format!("{quote}\\\\b{rest}{quote}"),
            format!("{quote}{rest}{quote}"),
        ] {
            found.push(Candidate::at(path, text, node, replacement, 4));
        }
    }
    found
}

/// A string literal with no prefix, escape or interpolation (`"buzz"`, `'-'`): its quote and
/// value.
fn plain_string<'t>(text: &'t str, node: Node) -> Option<(char, &'t str)> {
    if !matches!(
        node.kind(),
        "string" | "string_literal" | "interpreted_string_literal"
    ) {
        return None;
    }
    let source = &text[node.byte_range()];
    let quote = source.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let value = source.strip_prefix(quote)?.strip_suffix(quote)?;
    let mut cursor = node.walk();
    let interpolated = node
        .named_children(&mut cursor)
        .any(|child| child.kind() == "interpolation");
    let plain = !value.contains([quote, '\\', '\n']) && !interpolated;
    plain.then_some((quote, value))
}

/// The strings quoted in `said`, `'...'` or `"..."` on one line (each quote read apart, so
/// that `"'buzz' == 'Buzz'"` gives the inner strings too), without escapes; at most
/// `MAX_STRINGS`, each once.
fn quoted(said: &str) -> Vec<String> {
    let mut strings: Vec<String> = Vec::new();
    for line in said.lines() {
        for quote in ['\'', '"'] {
            let mut parts = line.split(quote).skip(1);
            // Between the 1st and 2nd quote, the 3rd and 4th, ...; a last one alone ends nothing.
            while let (Some(value), Some(_)) = (parts.next(), parts.clone().next()) {
                let plausible = value.len() <= MAX_LENGTH && !value.contains('\\');
                if plausible && !strings.iter().any(|s| s == value) {
                    strings.push(value.to_string());
                    if strings.len() == MAX_STRINGS {
                        return strings;
                    }
                }
                parts.next();
            }
        }
    }
    strings
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i)
}

fn reversed(s: &str) -> String {
    s.chars().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(message: &str, details: &str) -> TestFailure {
        TestFailure {
            message: message.into(),
            details: details.into(),
            ..TestFailure::default()
        }
    }

    /// What the failures make of `literal`.
    fn changed(failures: &[TestFailure], literal: &str) -> Vec<String> {
        differences(failures)
            .iter()
            .flat_map(|d| d.applied_to(literal))
            .collect()
    }

    #[test]
    fn a_regular_expression_anchored_at_the_start_is_tried_anywhere() {
        // thefuck's real bug.
        let text = "import re\n\n\ndef fix(script):\n    return re.sub('^mkdir (.*)', 'mkdir -p \\\\1', script) + '^x'\n";
        let tree = crate::syntax::parse(crate::syntax::Lang::Python, text).unwrap();
        let found: Vec<String> = unanchored("f.py", text, tree.root_node(), (1, 9), &[])
            .into_iter()
            .map(|c| format!("{}{}{}", &text[..c.start], c.replacement, &text[c.end..]))
            .collect();
        assert_eq!(
            found,
            [
                text.replace("'^mkdir (.*)'", "'\\\\bmkdir (.*)'"),
                text.replace("'^mkdir (.*)'", "'mkdir (.*)'"),
            ]
        );
    }

    #[test]
    fn a_literal_that_is_the_string_where_they_differ_or_holds_that_part_gets_the_others() {
        // Node's `assert.equal` message is the comparison, itself quoted.
        let fizz = [failure("\"'buzz' == 'Buzz'\"", "")];
        assert!(changed(&fizz, "buzz").contains(&"Buzz".to_string()));
        assert!(changed(&fizz, "b").contains(&"B".to_string()));
        let hello = [failure(
            "Expected values to be strictly equal:",
            "+ actual - expected\n\n+ 'hello_world'\n- 'hello-world'\n",
        )];
        for (literal, becomes) in [("hello_world", "hello-world"), ("_", "-"), ("-", "_")] {
            assert!(
                changed(&hello, literal).contains(&becomes.to_string()),
                "{literal}"
            );
        }
        // The literal made the part of the code's string where they differ, and more.
        let push = [failure(
            "assert 'git push --force' == 'git push --force-with-lease'",
            "",
        )];
        assert_eq!(changed(&push, "push --force"), ["push --force-with-lease"]);
        assert!(changed(&push, "git").is_empty());
        // Many places: each tried.
        let many = [failure("assert 'a-b-a' == 'a-b-c'", "")];
        assert_eq!(changed(&many, "a"), ["c"]);
    }

    #[test]
    fn an_empty_part_is_a_replacement_and_a_missing_quote_ends_the_line() {
        let found = [failure("assert 'helloworld' == 'hello world' and 'x", "")];
        assert_eq!(changed(&found, ""), [" "]);
        assert!(changed(&found, "x").is_empty());
        assert!(differences(&found)
            .iter()
            .all(|d| d.from != "x" && d.to != "x"));
    }

    #[test]
    fn only_plain_literals_of_the_lines_are_replaced() {
        let text =
            "def f(n):\n    a = 'buzz'\n    b = f'buzz{n}'\n    c = \"buzz\"\n    return r'buzz'\n";
        let parsed = crate::syntax::parse(crate::syntax::Lang::Python, text).unwrap();
        let pairs = [Difference::new("buzz", "Buzz")];
        let found = candidates("f.py", text, parsed.root_node(), (1, 5), &[], &pairs);
        let found: Vec<(usize, &str)> = found
            .iter()
            .map(|c| (c.line, c.replacement.as_str()))
            .collect();
        assert_eq!(found, [(2, "'Buzz'"), (4, "\"Buzz\"")]);
        let none = candidates("f.py", text, parsed.root_node(), (3, 3), &[], &pairs);
        assert!(none.is_empty());
    }
}
