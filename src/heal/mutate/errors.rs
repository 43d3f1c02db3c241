//! Changes the error itself names, made on the lines its traceback names (tier 1): an attribute
//! an object does not have is read with a default (`AttributeError: 'tqdm' object has no
//! attribute 'total'`: `self.total` → `getattr(self, "total", None)`), and a statement a `None`
//! breaks is guarded (`TypeError: unsupported operand type(s) for *=: 'NoneType' and 'int'`:
//! `total *= scale` → `if total is not None:` around it, or `if total is None: return None`
//! before it). And a name that is not defined (`NameError: name 'x_path' is not defined`,
//! JavaScript's `ReferenceError`) is replaced there by the function's names closest to it, its
//! parameters first (`x_path` → `x`). A text that cannot be decoded gets the functions the
//! traceback passes through opening files as UTF-8 (`open(path)` → `open(path, encoding='utf-8')`,
//! where the locale's may be ASCII). Last of a line's changes (tier 6), the statement that raised
//! a built-in exception is let fail (`try: … except IndexError: pass`), the fix when the
//! exception was the expected case. Python's errors, and JavaScript's undefined name.

use std::sync::LazyLock;

use regex::Regex;
use tree_sitter::Node;

use super::operators::{is_field_of, Candidate};
use crate::run_document::TestFailure;

/// What the failures' errors say is missing.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Named {
    /// Attributes an object did not have (not `None`'s).
    attributes: Vec<String>,
    /// A `None` was used as a value.
    none: bool,
    /// Names used but not defined.
    undefined: Vec<String>,
    /// A text could not be decoded or encoded.
    unicode: bool,
    /// Built-in exceptions raised by the project's code: (path, line, exception).
    raised: Vec<(String, usize, String)>,
}

/// Built-in exceptions a statement may be let raise (not an assertion, not a program's own).
const LET_FAIL: &[&str] = &[
    "IndexError",
    "KeyError",
    "ValueError",
    "TypeError",
    "AttributeError",
    "ZeroDivisionError",
    "StopIteration",
];

static NO_ATTRIBUTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"'(\w+)' object has no attribute '(\w+)'").expect("a valid pattern")
});

/// Python's `name 'x' is not defined`, JavaScript's `ReferenceError: x is not defined`.
static NOT_DEFINED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:name '(\w+)'|ReferenceError: ([\w$]+)) is not defined")
        .expect("a valid pattern")
});

/// Names put in place of an undefined one at most.
const MAX_NAMES: usize = 6;

/// What `failures` name.
pub(super) fn named(failures: &[TestFailure]) -> Named {
    let mut named = Named::default();
    for failure in failures {
        let said = format!("{}\n{}", failure.message, failure.details);
        for found in NO_ATTRIBUTE.captures_iter(&said) {
            match &found[1] {
                "NoneType" => named.none = true,
                _ if !named.attributes.contains(&found[2].to_string()) => {
                    named.attributes.push(found[2].to_string())
                }
                _ => {}
            }
        }
        named.none |= said.contains("'NoneType'");
        if let (Some(kind), Some(file), Some(line)) = (&failure.kind, &failure.file, failure.line) {
            if LET_FAIL.contains(&kind.as_str()) {
                named
                    .raised
                    .push((file.clone(), line as usize, kind.clone()));
            }
        }
        let said = format!("{}: {said}", failure.kind.as_deref().unwrap_or_default());
        named.unicode |= said.contains("UnicodeDecodeError") || said.contains("UnicodeEncodeError");
        for found in NOT_DEFINED.captures_iter(&said) {
            let name = found.get(1).or(found.get(2)).map_or("", |m| m.as_str());
            if !named.undefined.iter().any(|n| n == name) {
                named.undefined.push(name.to_string());
            }
        }
    }
    named
}

/// The changes on `lines` (1-based, the traceback's, in the file at `path`) that `named` calls
/// for.
pub(super) fn candidates(
    path: &str,
    text: &str,
    root: Node,
    lines: &[usize],
    named: &Named,
) -> Vec<Candidate> {
    let mut found = Vec::new();
    if named.attributes.is_empty()
        && !named.none
        && named.undefined.is_empty()
        && !named.unicode
        && named.raised.is_empty()
    {
        return found;
    }
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        let (first, last) = (node.start_position().row + 1, node.end_position().row + 1);
        if !lines.iter().any(|&line| first <= line && line <= last) {
            continue;
        }
        stack.extend(node.children(&mut cursor));
        if named.unicode && node.kind() == "function_definition" {
            opened_as_utf8(path, text, node, &mut found);
        }
        if !lines.contains(&first) {
            continue;
        }
        if is_simple_statement(node) {
            for (_, _, kind) in named
                .raised
                .iter()
                .filter(|(p, l, _)| p == path && *l == first)
            {
                let_fail(path, text, node, kind, &mut found);
            }
        }
        if node.kind() == "attribute" {
            read_with_default(path, text, node, named, &mut found);
        }
        if named.none && is_simple_statement(node) {
            guarded(path, text, node, &mut found);
        }
        if node.kind() == "identifier"
            && named
                .undefined
                .iter()
                .any(|n| *n == text[node.byte_range()])
        {
            defined_instead(path, text, node, &mut found);
        }
    }
    found.sort_by_key(|c| (c.line, c.start));
    found
}

/// `object.name` → `getattr(object, "name", None)`, where the object lacked `name` and the
/// attribute is read (not assigned, deleted or called).
fn read_with_default(
    path: &str,
    text: &str,
    node: Node,
    named: &Named,
    found: &mut Vec<Candidate>,
) {
    let (Some(object), Some(name)) = (
        node.child_by_field_name("object"),
        node.child_by_field_name("attribute"),
    ) else {
        return;
    };
    let name = &text[name.byte_range()];
    if !named.attributes.iter().any(|a| a == name) {
        return;
    }
    if let Some(parent) = node.parent() {
        let written = matches!(parent.kind(), "assignment" | "augmented_assignment")
            && is_field_of(parent, "left", node);
        let called = parent.kind() == "call" && is_field_of(parent, "function", node);
        if written || called || parent.kind() == "delete_statement" {
            return;
        }
    }
    let replacement = format!("getattr({}, \"{name}\", None)", &text[object.byte_range()]);
    found.push(candidate(path, text, node, replacement));
}

/// A statement of one line's kind: an expression, an assignment, a return.
fn is_simple_statement(node: Node) -> bool {
    matches!(node.kind(), "expression_statement" | "return_statement")
        && node
            .parent()
            .is_some_and(|p| p.kind() == "block" || p.kind() == "module")
}

/// The statement guarded against each name or attribute it reads being `None`: run only when
/// it is not, or the function returns `None` first.
fn guarded(path: &str, text: &str, statement: Node, found: &mut Vec<Candidate>) {
    let line_start = text[..statement.start_byte()]
        .rfind('\n')
        .map_or(0, |at| at + 1);
    let indent = &text[line_start..statement.start_byte()];
    if !indent.chars().all(|c| c == ' ' || c == '\t') {
        return;
    }
    let body = &text[statement.byte_range()];
    let in_function = ancestors(statement).any(|n| n.kind() == "function_definition");
    let mut names = Vec::new();
    let mut stack = vec![statement];
    let mut cursor = statement.walk();
    while let Some(node) = stack.pop() {
        stack.extend(node.children(&mut cursor));
        let value = matches!(node.kind(), "identifier" | "attribute")
            && !node.parent().is_some_and(|p| {
                p.kind() == "attribute" && is_field_of(p, "attribute", node)
                    || p.kind() == "call" && is_field_of(p, "function", node)
                    || p.kind() == "keyword_argument"
            });
        let name = &text[node.byte_range()];
        if value && !names.contains(&name) && name != "self" && names.len() < 6 {
            names.push(name);
        }
    }
    let nested = body.replace('\n', &format!("\n{indent}    "));
    for name in names {
        let replacement = format!("if {name} is not None:\n{indent}    {nested}");
        found.push(candidate(path, text, statement, replacement));
        if in_function && statement.kind() != "return_statement" {
            let replacement =
                format!("if {name} is None:\n{indent}    return None\n{indent}{body}");
            found.push(candidate(path, text, statement, replacement));
        }
    }
}

/// The undefined name at `node` replaced by each name its function has (parameters first, then
/// by edit distance), closest first.
fn defined_instead(path: &str, text: &str, node: Node, found: &mut Vec<Candidate>) {
    const FUNCTIONS: &[&str] = &[
        "function_definition",
        "function_declaration",
        "function_expression",
        "arrow_function",
        "method_definition",
    ];
    let Some(function) = ancestors(node).find(|n| FUNCTIONS.contains(&n.kind())) else {
        return;
    };
    let missing = &text[node.byte_range()];
    let parameters = function.child_by_field_name("parameters");
    let mut names: Vec<(bool, usize, &str)> = Vec::new();
    let mut stack = vec![function];
    let mut cursor = function.walk();
    while let Some(inner) = stack.pop() {
        stack.extend(inner.children(&mut cursor));
        let name = &text[inner.byte_range()];
        // Values only: not the function's own name, a called function's or an attribute's.
        let named_thing = inner.parent().is_some_and(|p| {
            is_field_of(p, "name", inner)
                || is_field_of(p, "function", inner)
                || is_field_of(p, "attribute", inner)
                || is_field_of(p, "property", inner)
        });
        if inner.kind() != "identifier"
            || named_thing
            || name == missing
            || names.iter().any(|n| n.2 == name)
        {
            continue;
        }
        names.push((true, edit_distance(missing, name), name));
    }
    // Parameters first: a name the parameter list holds (as a whole word).
    if let Some(parameters) = parameters {
        let listed = &text[parameters.byte_range()];
        for entry in &mut names {
            entry.0 = !listed
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .any(|word| word == entry.2);
        }
    }
    names.sort();
    for (_, _, name) in names.into_iter().take(MAX_NAMES) {
        found.push(candidate(path, text, node, name.to_string()));
    }
}

/// Levenshtein's distance between `a` and `b`, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substituted = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// Each `open(…)` of `function` that names no encoding nor a binary mode, given UTF-8.
fn opened_as_utf8(path: &str, text: &str, function: Node, found: &mut Vec<Candidate>) {
    let mut stack = vec![function];
    let mut cursor = function.walk();
    while let Some(node) = stack.pop() {
        stack.extend(node.children(&mut cursor));
        let (Some(called), Some(arguments)) = (
            node.child_by_field_name("function"),
            node.child_by_field_name("arguments"),
        ) else {
            continue;
        };
        let arguments_text = &text[arguments.byte_range()];
        let opens = matches!(
            &text[called.byte_range()],
            "open" | "io.open" | "codecs.open"
        );
        if node.kind() != "call"
            || !opens
            || arguments_text.contains("encoding")
            || arguments_text.contains("b'")
            || arguments_text.contains("b\"")
            || !arguments_text.ends_with(')')
        {
            continue;
        }
        let inner = arguments_text[..arguments_text.len() - 1].trim_end();
        let separator = if inner.ends_with(',') { " " } else { ", " };
        let replacement = format!("{inner}{separator}encoding='utf-8')");
        found.push(candidate(path, text, arguments, replacement));
    }
}

/// `statement` let raise `kind`: `try: statement` / `except kind: pass`.
fn let_fail(path: &str, text: &str, statement: Node, kind: &str, found: &mut Vec<Candidate>) {
    let line_start = text[..statement.start_byte()]
        .rfind('\n')
        .map_or(0, |at| at + 1);
    let indent = &text[line_start..statement.start_byte()];
    if !indent.chars().all(|c| c == ' ' || c == '\t') {
        return;
    }
    let nested = text[statement.byte_range()].replace('\n', &format!("\n{indent}    "));
    let replacement =
        format!("try:\n{indent}    {nested}\n{indent}except {kind}:\n{indent}    pass");
    found.push(Candidate {
        tier: 6,
        ..candidate(path, text, statement, replacement)
    });
}

fn ancestors(node: Node) -> impl Iterator<Item = Node> {
    std::iter::successors(node.parent(), |n| n.parent())
}

fn candidate(path: &str, text: &str, target: Node, replacement: String) -> Candidate {
    Candidate::at(path, text, target, replacement, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{parse, Lang};

    fn failure(kind: &str, message: &str) -> TestFailure {
        TestFailure {
            id: "t.py::test".into(),
            file: None,
            line: None,
            kind: Some(kind.into()),
            message: message.into(),
            details: String::new(),
        }
    }

    fn changed(text: &str, line: usize, failure: TestFailure) -> Vec<String> {
        let tree = parse(Lang::Python, text).unwrap();
        let named = named(&[failure]);
        candidates("f.py", text, tree.root_node(), &[line], &named)
            .into_iter()
            .map(|c| format!("{}{}{}", &text[..c.start], c.replacement, &text[c.end..]))
            .collect()
    }

    #[test]
    fn an_attribute_the_object_lacks_is_read_with_a_default() {
        // tqdm's real bug.
        let text = "class T:\n    def __len__(self):\n        return self.n if self.total is None else self.total\n";
        let found = changed(
            text,
            3,
            failure("AttributeError", "'tqdm' object has no attribute 'total'"),
        );
        assert!(
            found.contains(&text.replacen(
                "else self.total",
                "else getattr(self, \"total\", None)",
                1
            )),
            "{found:#?}"
        );
        // Not where it is written or called.
        let text = "def f(t):\n    t.total = t.total() + 1\n";
        let found = changed(
            text,
            2,
            failure("AttributeError", "'T' object has no attribute 'total'"),
        );
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn an_undefined_name_is_replaced_by_the_functions_closest_parameter_first() {
        let text = "import os\n\n\ndef load(x, mode):\n    other = 1\n    with open(x_path, mode) as f:\n        return f.read() + other\n";
        let found = changed(
            text,
            6,
            failure("NameError", "name 'x_path' is not defined"),
        );
        assert_eq!(
            found[0],
            text.replace("open(x_path", "open(x"),
            "{found:#?}"
        );
        assert!(
            found.contains(&text.replace("open(x_path", "open(other")),
            "{found:#?}"
        );
        // JavaScript's.
        let text = "function sum(values) {\n  let total = 0;\n  for (const v of values) totl += v;\n  return total;\n}\n";
        let tree = parse(Lang::JavaScript, text).unwrap();
        let named = named(&[failure("ReferenceError", "totl is not defined")]);
        let found = candidates("f.js", text, tree.root_node(), &[3], &named);
        assert_eq!(found[0].replacement, "values", "{found:#?}");
        assert!(found.iter().any(|c| c.replacement == "total"), "{found:#?}");
        assert_eq!(edit_distance("x_path", "x"), 5);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn a_file_that_cannot_be_decoded_is_opened_as_utf8_and_a_raised_index_error_let_fail() {
        // cookiecutter's real bug: the JSON is read with the locale's encoding.
        let text = "import json\n\n\ndef load(path):\n    with open(path) as f:\n        return json.load(f)\n\n\ndef raw(path):\n    return open(path, 'rb').read()\n";
        let found = changed(
            text,
            6,
            failure("UnicodeDecodeError", "'ascii' codec can't decode byte 0xc3"),
        );
        assert_eq!(
            found,
            [text.replace("open(path) as f", "open(path, encoding='utf-8') as f")]
        );
        // thefuck's: the index is out of range when there is no argument after `-u`.
        let text = "def f(parts, at):\n    parts.pop(at)\n    return parts\n";
        let mut raised = failure("IndexError", "pop index out of range");
        (raised.file, raised.line) = (Some("f.py".into()), Some(2));
        assert_eq!(
            changed(text, 2, raised),
            ["def f(parts, at):\n    try:\n        parts.pop(at)\n    except IndexError:\n        pass\n    return parts\n"]
        );
    }

    #[test]
    fn a_statement_a_none_breaks_is_guarded() {
        // tqdm's real bug: `total` may be None.
        let text = "def f(total, unit_scale):\n    if unit_scale:\n        total *= unit_scale\n    return total\n";
        let found = changed(
            text,
            3,
            failure(
                "TypeError",
                "unsupported operand type(s) for *=: 'NoneType' and 'int'",
            ),
        );
        let wrapped = text.replace(
            "        total *= unit_scale\n",
            "        if total is not None:\n            total *= unit_scale\n",
        );
        let returned = text.replace(
            "        total *= unit_scale\n",
            "        if total is None:\n            return None\n        total *= unit_scale\n",
        );
        assert!(found.contains(&wrapped), "{found:#?}");
        assert!(found.contains(&returned), "{found:#?}");
        for changed in &found {
            assert!(parse(Lang::Python, changed).is_some_and(|t| !t.root_node().has_error()));
        }
    }
}
