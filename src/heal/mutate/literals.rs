//! String literals the failing tests' own words say are wrong. A failure prints what the code
//! gave and what the test wanted (`assert 'buzz' == 'Buzz'`, `+ 'hello_world' - 'hello-world'`,
//! `Expected: "XLII" Received: "LXII"`): a literal of the suspicious lines that is the one
//! string (`"buzz"`) becomes the other, and one that is where the two differ (`"_"`, `"LX"`)
//! becomes the other's part. Tier 6, with the structural changes.

use std::collections::HashSet;

use tree_sitter::Node;

use super::operators::{changeable, one_line, Candidate};
use crate::run_document::TestFailure;

/// Quoted strings read from one failure at most: a list compared with a list prints many.
const MAX_STRINGS: usize = 24;
/// Strings longer than this are output, not a literal's value.
const MAX_LENGTH: usize = 200;

/// The replacements the failures suggest: (a literal's value, the value to try instead).
pub(super) fn replacements(failures: &[TestFailure]) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    // Hundreds of pairs a failure, for every failure: each kept once, in the order found.
    let mut seen = HashSet::new();
    for failure in failures {
        let said = format!("{}\n{}", failure.message, failure.details);
        let strings = quoted(&said);
        for a in &strings {
            for b in &strings {
                if a == b {
                    continue;
                }
                // `a` is the code's, `b` the test's (which is which is not known: both ways
                // are tried, and only a literal of the code matches).
                let prefix = common_prefix(a, b);
                let suffix = common_prefix(&reversed(&a[prefix..]), &reversed(&b[prefix..]));
                let part = |s: &str| s[prefix..s.len() - suffix].to_string();
                for pair in [(a.clone(), b.clone()), (part(a), part(b))] {
                    if seen.insert(pair.clone()) {
                        found.push(pair);
                    }
                }
            }
        }
    }
    found
}

/// The literals among the nodes of `lines` (first and last, 1-based) that `replacements`
/// replace, outside the `protected` byte ranges (the tests' own code).
pub(super) fn candidates(
    path: &str,
    text: &str,
    root: Node,
    lines: (usize, usize),
    protected: &[(usize, usize)],
    replacements: &[(String, String)],
) -> Vec<Candidate> {
    let mut found = Vec::new();
    if replacements.is_empty() {
        return found;
    }
    for node in changeable(root, lines, protected) {
        let Some((quote, value)) = plain_string(text, node) else {
            continue;
        };
        let line = node.start_position().row + 1;
        for (from, to) in replacements {
            if from != value || to.contains([quote, '\\', '\n', '\r']) {
                continue;
            }
            let replacement = format!("{quote}{to}{quote}");
            found.push(Candidate {
                path: path.to_string(),
                start: node.start_byte(),
                end: node.end_byte(),
                description: format!(
                    "`{}` → `{}`",
                    one_line(&text[node.byte_range()]),
                    one_line(&replacement)
                ),
                replacement,
                tier: 6,
                line,
                place: 0,
            });
        }
    }
    found.sort_by_key(|candidate| candidate.start);
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

    #[test]
    fn the_failures_strings_and_where_they_differ_are_the_replacements() {
        // Node's `assert.equal` message is the comparison, itself quoted.
        let found = replacements(&[
            failure("\"'buzz' == 'Buzz'\"", ""),
            failure(
                "Expected values to be strictly equal:",
                "+ actual - expected\n\n+ 'hello_world'\n- 'hello-world'\n",
            ),
        ]);
        for pair in [
            ("buzz", "Buzz"),
            ("Buzz", "buzz"),
            ("b", "B"),
            ("hello_world", "hello-world"),
            ("_", "-"),
            ("-", "_"),
        ] {
            assert!(
                found.contains(&(pair.0.to_string(), pair.1.to_string())),
                "{pair:?} in {found:?}"
            );
        }
    }

    #[test]
    fn an_empty_part_is_a_replacement_and_a_missing_quote_ends_the_line() {
        let found = replacements(&[failure("assert 'helloworld' == 'hello world' and 'x", "")]);
        assert!(
            found.contains(&(String::new(), " ".to_string())),
            "{found:?}"
        );
        assert!(
            !found.iter().any(|(a, b)| a == "x" || b == "x"),
            "{found:?}"
        );
    }

    #[test]
    fn only_plain_literals_of_the_lines_are_replaced() {
        let text =
            "def f(n):\n    a = 'buzz'\n    b = f'buzz{n}'\n    c = \"buzz\"\n    return r'buzz'\n";
        let parsed = crate::syntax::parse(crate::syntax::Lang::Python, text).unwrap();
        let pairs = [("buzz".to_string(), "Buzz".to_string())];
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
