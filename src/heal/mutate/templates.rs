//! The offline engine's structural changes, tried after every operator (tier 6), and statement
//! deletion or duplication last of all (tier 7): a call's arguments swapped, a call unwrapped
//! (`flatten(x)` → `x`, `s.lower()` → `s`) or a variable wrapped in a call the file makes or a
//! common one (`values` → `sorted(values)`), an argument ±1 (`range(0, r)` → `range(0, r + 1)`),
//! a condition reduced to one side, a guard for the object of a `None`/`null` test, `while True`
//! given a variable, `[]` ↔ `[[]]`, a slice the function takes put on another variable, the
//! sides of `+` swapped (strings), and a condition expanded by one more clause. Each replaces one
//! node's bytes, like the operators.

use tree_sitter::Node;

use super::operators::{is_field_of, one_line, Candidate};
use crate::syntax::Lang;

/// Variables wrapped in a call at most: their number grows as the product of the references
/// and the functions.
const MAX_WRAPS: usize = 120;

/// Calls that so often belong around a value that they are tried even when the file makes none.
fn common_wrappers(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Python => &["sorted", "list", "abs", "len", "set", "str", "int"],
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => &["Math.abs", "String", "Number"],
        Lang::Rust | Lang::Go => &[],
    }
}

/// The names a file calls with one positional argument (`abs(a * b)`), and the methods it calls
/// with none (`text.lower()`): the calls a variable of the suspicious lines may be missing.
pub(super) struct Wrappers {
    functions: Vec<String>,
    methods: Vec<String>,
}

impl Wrappers {
    pub(super) fn of_file(lang: Lang, text: &str, root: Node) -> Wrappers {
        let mut functions: Vec<String> = common_wrappers(lang)
            .iter()
            .map(|name| name.to_string())
            .collect();
        let mut methods = Vec::new();
        let mut cursor = root.walk();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            stack.extend(node.children(&mut cursor));
            let Some((function, arguments)) = call_parts(node) else {
                continue;
            };
            let name = &text[function.byte_range()];
            let (found, wanted) = match (object_of(function), arguments.len()) {
                (None, 1) if function.kind() == "identifier" => (&mut functions, name),
                (Some(_), 0) => {
                    let method = name.rsplit('.').next().unwrap_or(name);
                    (&mut methods, method)
                }
                _ => continue,
            };
            if !found.iter().any(|f| f == wanted) {
                found.push(wanted.to_string());
            }
        }
        Wrappers { functions, methods }
    }
}

/// The tier-6 and tier-7 changes of one node.
/// Long: the catalogue of one node's changes, a branch per kind of node (a call first).
pub(super) fn of_node(path: &str, lang: Lang, text: &str, node: Node, found: &mut Vec<Candidate>) {
    let source = |n: Node| &text[n.byte_range()];
    let change = |target: Node, replacement: &str| {
        format!(
            "`{}` → `{}`",
            one_line(source(target)),
            one_line(replacement)
        )
    };
    if let Some((function, arguments)) = call_parts(node) {
        // Adjacent arguments swapped, keeping what stands between them.
        for pair in arguments.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.kind() == "keyword_argument" || b.kind() == "keyword_argument" {
                continue;
            }
            let swapped = format!(
                "{}{}{}",
                source(b),
                &text[a.end_byte()..b.start_byte()],
                source(a)
            );
            let after = format!(
                "{}{swapped}{}",
                &text[node.start_byte()..a.start_byte()],
                &text[b.end_byte()..node.end_byte()]
            );
            let description = format!("`{}` → `{}`", one_line(source(node)), one_line(&after));
            found.push(Candidate {
                end: b.end_byte(),
                ..replacing(path, a, &swapped, 6, description)
            });
        }
        // Unwrapped: `f(x)` → `x`, `x.m()` → `x`.
        let mut push = |tier: u8, target: Node, replacement: &str| {
            let description = change(target, replacement);
            found.push(replacing(path, target, replacement, tier, description));
        };
        match (object_of(function), arguments.as_slice()) {
            (None, [only]) if only.kind() != "keyword_argument" => push(6, node, source(*only)),
            (Some(object), []) => push(6, node, source(object)),
            _ => {}
        }
        // Off by one in an argument; integer literals already are.
        for argument in &arguments {
            if is_value(*argument) {
                for sign in ["+", "-"] {
                    push(6, *argument, &format!("{} {sign} 1", source(*argument)));
                }
            }
        }
        moved_arguments(path, text, node, &arguments, found);
        return;
    }
    let mut push = |tier: u8, target: Node, replacement: &str| {
        let description = change(target, replacement);
        found.push(replacing(path, target, replacement, tier, description));
    };
    let kind = node.kind();
    match kind {
        "list" | "array" if lang != Lang::Rust => {
            let items = named_children(node);
            let replacement = match items.as_slice() {
                [] => "[[]]",
                [only] if only.kind() == kind && named_children(*only).is_empty() => "[]",
                _ => return,
            };
            push(6, node, replacement);
        }
        "boolean_operator" | "binary_operator" | "binary_expression" => {
            let operator = node
                .child_by_field_name("operator")
                .map(|o| o.kind())
                .unwrap_or_default();
            let (Some(left), Some(right)) = (
                node.child_by_field_name("left"),
                node.child_by_field_name("right"),
            ) else {
                return;
            };
            if matches!(operator, "and" | "or" | "&&" | "||") {
                push(6, node, source(left));
                push(6, node, source(right));
            }
            // Strings do not commute: `alphabet[i] + result`.
            if operator == "+" {
                let swapped = format!(
                    "{}{}{}",
                    source(right),
                    &text[left.end_byte()..right.start_byte()],
                    source(left)
                );
                push(6, node, &swapped);
            }
            if let Some(guarded) = null_guard(lang, text, node, left, right) {
                push(6, node, &guarded);
            }
        }
        "comparison_operator" => {
            if let (Some(left), Some(right)) = (node.named_child(0), node.named_child(1)) {
                if let Some(guarded) = null_guard(lang, text, node, left, right) {
                    push(6, node, &guarded);
                }
            }
        }
        "expression_statement" => statement(path, text, node, found),
        _ => {}
    }
}

/// A statement of a block deleted, when the block has another, and repeated.
fn statement(path: &str, text: &str, node: Node, found: &mut Vec<Candidate>) {
    let Some(block) = node.parent() else {
        return;
    };
    // A docstring does nothing to delete or repeat.
    let is_string = node.named_child(0).is_some_and(|n| n.kind() == "string");
    if !matches!(block.kind(), "block" | "statement_block" | "statement_list") || is_string {
        return;
    }
    let statements = named_children(block)
        .into_iter()
        .filter(|n| !n.kind().contains("comment"))
        .count();
    let statement = &text[node.byte_range()];
    let line_start = text[..node.start_byte()].rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[line_start..node.start_byte()];
    let line_end = text[node.end_byte()..]
        .find('\n')
        .map_or(text.len(), |i| node.end_byte() + i + 1);
    let alone = indent.trim().is_empty() && text[node.end_byte()..line_end].trim().is_empty();
    if statements > 1 {
        let description = format!("`{}` deleted", one_line(statement));
        let deleted = replacing(path, node, "", 7, description);
        // Its whole lines when it stands alone on them, so that no blank line is left.
        found.push(match alone {
            true => Candidate {
                start: line_start,
                end: line_end,
                ..deleted
            },
            false => deleted,
        });
    }
    if alone {
        let description = format!("`{}` repeated", one_line(statement));
        let repeated = format!("{statement}\n{indent}{statement}");
        found.push(replacing(path, node, &repeated, 7, description));
    }
}

/// An argument in the wrong one of two nested calls (`enumerate(wrap(items, start))` →
/// `enumerate(wrap(items), start)`, and back): each positional argument of an inner call moved
/// out to just after it, and the outer call's argument just after an inner call moved in, after
/// the inner call's last positional one.
fn moved_arguments(
    path: &str,
    text: &str,
    node: Node,
    arguments: &[Node],
    found: &mut Vec<Candidate>,
) {
    let source = |n: Node| &text[n.byte_range()];
    let positional = |n: &Node| is_positional(*n);
    let mut push = |after: String| {
        let description = format!("`{}` → `{}`", one_line(source(node)), one_line(&after));
        found.push(replacing(path, node, &after, 6, description));
    };
    for (index, inner) in arguments.iter().enumerate() {
        let Some((_, inner_arguments)) = call_parts(*inner) else {
            continue;
        };
        let (before, after) = (
            &text[node.start_byte()..inner.start_byte()],
            &text[inner.end_byte()..node.end_byte()],
        );
        if inner_arguments.len() >= 2 {
            for (at, moved) in inner_arguments.iter().enumerate() {
                if !positional(moved) {
                    continue;
                }
                // The argument and the comma on one side of it.
                let (cut_start, cut_end) = match at {
                    0 => (moved.start_byte(), inner_arguments[1].start_byte()),
                    _ => (inner_arguments[at - 1].end_byte(), moved.end_byte()),
                };
                let without = format!(
                    "{}{}",
                    &text[inner.start_byte()..cut_start],
                    &text[cut_end..inner.end_byte()]
                );
                push(format!("{before}{without}, {}{after}", source(*moved)));
            }
        }
        let Some(next) = arguments.get(index + 1).filter(|n| positional(n)) else {
            continue;
        };
        let Some(last) = inner_arguments.iter().rev().find(|n| positional(n)) else {
            continue;
        };
        let into = format!(
            "{}, {}{}",
            &text[inner.start_byte()..last.end_byte()],
            source(*next),
            &text[last.end_byte()..inner.end_byte()]
        );
        push(format!(
            "{before}{into}{}",
            &text[next.end_byte()..node.end_byte()]
        ));
    }
}

/// An argument given by position (not `key=value`, `*args` or `**kwargs`, nor a comment).
fn is_positional(node: Node) -> bool {
    !matches!(
        node.kind(),
        "keyword_argument" | "list_splat" | "dictionary_splat" | "spread_element"
    )
}

fn replacing(
    path: &str,
    target: Node,
    replacement: &str,
    tier: u8,
    description: String,
) -> Candidate {
    Candidate {
        path: path.to_string(),
        start: target.start_byte(),
        end: target.end_byte(),
        replacement: replacement.to_string(),
        tier,
        line: target.start_position().row + 1,
        description,
        place: 0,
    }
}

/// The changes that take names from the suspicious lines: each variable wrapped in a call,
/// `while True` given each variable, and each slice the lines take put on another variable.
/// Long: the name templates share one walk of the suspicious span and one `push`.
pub(super) fn of_names(
    path: &str,
    lang: Lang,
    text: &str,
    root: Node,
    variables: &[Node],
    wrappers: &Wrappers,
) -> Vec<Candidate> {
    let source = |n: Node| &text[n.byte_range()];
    let mut names: Vec<&str> = Vec::new();
    for node in variables {
        if !names.contains(&source(*node)) {
            names.push(source(*node));
        }
    }
    let mut found = Vec::new();
    let mut push = |target: Node, replacement: String| {
        let description = format!(
            "`{}` → `{}`",
            one_line(source(target)),
            one_line(&replacement)
        );
        found.push(replacing(path, target, &replacement, 6, description));
    };
    let (first, last) = match (variables.first(), variables.last()) {
        (Some(first), Some(last)) => (first.start_byte(), last.end_byte()),
        _ => return found,
    };
    let mut slices = Vec::new();
    let mut conditions = Vec::new();
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.end_byte() < first || node.start_byte() > last {
            continue;
        }
        stack.extend(node.children(&mut cursor));
        if let Some(condition) = condition_of(node) {
            conditions.push(condition);
        }
        if node.kind() == "while_statement" || node.kind() == "while_expression" {
            let condition = node.child_by_field_name("condition");
            let inner = condition.map(|c| match c.kind() {
                "parenthesized_expression" => c.named_child(0).unwrap_or(c),
                _ => c,
            });
            if let Some(inner) = inner.filter(|c| matches!(c.kind(), "true" | "boolean_literal")) {
                if source(inner) == "true" || source(inner) == "True" {
                    for name in &names {
                        push(inner, name.to_string());
                    }
                }
            }
        }
        if lang == Lang::Python && node.kind() == "subscript" {
            if let Some(slice) = node
                .child_by_field_name("subscript")
                .filter(|s| s.kind() == "slice")
            {
                let taken = source(slice);
                if !slices.contains(&taken) {
                    slices.push(taken);
                }
            }
        }
    }
    let mut wraps = 0;
    for node in variables {
        if is_assigned(*node) {
            continue;
        }
        let name = source(*node);
        for slice in &slices {
            push(*node, format!("{name}[{slice}]"));
        }
        let wrapped = wrappers
            .functions
            .iter()
            .map(|f| format!("{f}({name})"))
            .chain(wrappers.methods.iter().map(|m| format!("{name}.{m}()")));
        for replacement in wrapped {
            if wraps == MAX_WRAPS {
                break;
            }
            push(*node, replacement);
            wraps += 1;
        }
    }
    conditions.sort_by_key(|node| node.start_byte());
    found.extend(expansions(path, lang, text, &conditions, variables));
    found
}

/// Conditions expanded at most, per suspicious region: their number grows as the product of
/// the conditions and the clauses.
const MAX_EXPANSIONS: usize = 100;

/// Each condition of the region given one more clause (the condition that is missing a guard or
/// a case, `if start <= merged[-1][1]` → `if merged and start <= merged[-1][1]`): a variable's
/// truth before it (Python and JavaScript, where any value has one), the variables the condition
/// reads first, then the nearest; then another condition of the region after it, as it is or
/// negated.
fn expansions(
    path: &str,
    lang: Lang,
    text: &str,
    conditions: &[Node],
    variables: &[Node],
) -> Vec<Candidate> {
    let source = |n: Node| &text[n.byte_range()];
    let (and, or) = match lang {
        Lang::Python => (" and ", " or "),
        _ => (" && ", " || "),
    };
    let mut found = Vec::new();
    for condition in conditions {
        let mut push = |replacement: String| {
            let description = format!(
                "`{}` → `{}`",
                one_line(source(*condition)),
                one_line(&replacement)
            );
            found.push(replacing(path, *condition, &replacement, 6, description));
        };
        let this = operand(lang, text, *condition);
        let mut guards: Vec<(bool, usize, &str)> = Vec::new();
        if matches!(
            lang,
            Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx
        ) {
            let line = condition.start_position().row;
            for variable in variables {
                let name = source(*variable);
                let read = condition.byte_range().contains(&variable.start_byte());
                let distance = variable.start_position().row.abs_diff(line);
                match guards.iter_mut().find(|(_, _, seen)| *seen == name) {
                    Some(guard) => *guard = (*guard).min((!read, distance, name)),
                    None => guards.push((!read, distance, name)),
                }
            }
        }
        guards.sort();
        for (_, _, name) in guards {
            let negated = format!("{}{name}", not(lang));
            push(format!("{name}{and}{this}"));
            push(format!("{negated}{and}{this}"));
            push(format!("{name}{or}{this}"));
            push(format!("{negated}{or}{this}"));
        }
        let mut clauses: Vec<&str> = Vec::new();
        for other in conditions {
            let clause = source(*other);
            if clause.contains(source(*condition))
                || source(*condition).contains(clause)
                || clauses.contains(&clause)
            {
                continue;
            }
            clauses.push(clause);
            let plain = operand(lang, text, *other);
            let negated = match is_primary(lang, *other) {
                true => format!("{}{clause}", not(lang)),
                false => format!("{}({clause})", not(lang)),
            };
            for joiner in [and, or] {
                push(format!("{this}{joiner}{plain}"));
                push(format!("{this}{joiner}{negated}"));
            }
        }
    }
    found.truncate(MAX_EXPANSIONS);
    found
}

/// The condition of an `if`, `elif`, `while` or JavaScript's `?:`, without its parentheses; not
/// Rust's `if let`.
fn condition_of(node: Node) -> Option<Node> {
    if !matches!(
        node.kind(),
        "if_statement"
            | "elif_clause"
            | "while_statement"
            | "if_expression"
            | "while_expression"
            | "ternary_expression"
    ) {
        return None;
    }
    let condition = node.child_by_field_name("condition")?;
    let inner = match condition.kind() {
        "parenthesized_expression" => condition.named_child(0)?,
        "let_condition" | "let_chain" => return None,
        _ => condition,
    };
    Some(inner)
}

/// The node's text as an operand of `and` or `or`: in parentheses unless it binds tighter.
fn operand(lang: Lang, text: &str, node: Node) -> String {
    let source = &text[node.byte_range()];
    let loose = match node.kind() {
        "boolean_operator" | "conditional_expression" | "lambda" | "named_expression" => true,
        "ternary_expression" | "assignment_expression" | "sequence_expression" => true,
        "binary_expression" => node.child_by_field_name("operator").is_some_and(|o| {
            matches!(o.kind(), "&&" | "||" | "??") || lang == Lang::Rust && o.kind() == ".."
        }),
        _ => false,
    };
    match loose {
        true => format!("({source})"),
        false => source.to_string(),
    }
}

/// Whether `!x` negates the whole node: a name, a call, a member, an element or parentheses.
fn is_primary(lang: Lang, node: Node) -> bool {
    // Python's `not` binds looser than a comparison: `not a < b` is `not (a < b)`.
    lang == Lang::Python && node.kind() == "comparison_operator"
        || matches!(
            node.kind(),
            "identifier"
                | "call"
                | "call_expression"
                | "attribute"
                | "member_expression"
                | "field_expression"
                | "selector_expression"
                | "subscript"
                | "subscript_expression"
                | "index_expression"
                | "parenthesized_expression"
        )
}

fn not(lang: Lang) -> &'static str {
    match lang {
        Lang::Python => "not ",
        _ => "!",
    }
}

/// `o.a is None` → `o is None or o.a is None` (and `is not`, `== null`, `=== null`): the guard a
/// chain of attributes may be missing.
fn null_guard(lang: Lang, text: &str, node: Node, left: Node, right: Node) -> Option<String> {
    let source = |n: Node| &text[n.byte_range()];
    if !matches!(source(right), "None" | "null" | "undefined") {
        return None;
    }
    let object = object_of(left)?;
    let operator = text[left.end_byte()..right.start_byte()].trim();
    let joiner = match (lang, operator) {
        (Lang::Python, "is" | "==") => " or ",
        (Lang::Python, "is not" | "!=") => " and ",
        (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "==" | "===") => " || ",
        (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "!=" | "!==") => " && ",
        _ => return None,
    };
    Some(format!(
        "{} {operator} {}{joiner}{}",
        source(object),
        source(right),
        source(node)
    ))
}

/// A call's function and its arguments (comments left out), for each language's call node.
fn call_parts(node: Node) -> Option<(Node, Vec<Node>)> {
    if !matches!(node.kind(), "call" | "call_expression") {
        return None;
    }
    let function = node.child_by_field_name("function")?;
    let arguments = node.child_by_field_name("arguments")?;
    if !matches!(arguments.kind(), "argument_list" | "arguments") {
        return None;
    }
    let arguments = named_children(arguments)
        .into_iter()
        .filter(|n| !n.kind().contains("comment"))
        .collect();
    Some((function, arguments))
}

/// The object of a member access (`o` of `o.a`), in each language's node.
fn object_of(node: Node) -> Option<Node> {
    match node.kind() {
        "attribute" | "member_expression" => node.child_by_field_name("object"),
        "field_expression" => node.child_by_field_name("value"),
        "selector_expression" => node.child_by_field_name("operand"),
        _ => None,
    }
}

/// Whether `x + 1` means one more than the node: a name, a call, a member or an element, or
/// arithmetic (as a whole argument, `a * b + 1` is `(a * b) + 1`).
fn is_value(node: Node) -> bool {
    match node.kind() {
        "identifier"
        | "call"
        | "call_expression"
        | "attribute"
        | "member_expression"
        | "field_expression"
        | "selector_expression"
        | "subscript"
        | "subscript_expression"
        | "index_expression" => true,
        "binary_operator" | "binary_expression" => node
            .child_by_field_name("operator")
            .is_some_and(|o| matches!(o.kind(), "+" | "-" | "*" | "/" | "%" | "//")),
        _ => false,
    }
}

/// Whether a variable is written here rather than read: an assignment's or declaration's target,
/// or a loop's.
fn is_assigned(node: Node) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    let is_field = |field: &str| is_field_of(parent, field, node);
    parent.kind().contains("pattern") || is_field("left") || is_field("name") || is_field("pattern")
}

fn named_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heal::mutate::operators::candidates;
    use crate::syntax::parse;

    /// Each tier-6 and tier-7 candidate's file text, with its tier.
    fn changed(lang: Lang, text: &str) -> Vec<(u8, String)> {
        let tree = parse(lang, text).unwrap();
        candidates("f", lang, text, tree.root_node(), (1, usize::MAX), &[])
            .into_iter()
            .filter(|c| c.tier >= 6)
            .map(|c| {
                let after = format!("{}{}{}", &text[..c.start], c.replacement, &text[c.end..]);
                (c.tier, after)
            })
            .collect()
    }

    fn assert_has(found: &[(u8, String)], tier: u8, expected: &str) {
        assert!(
            found.iter().any(|(t, text)| *t == tier && text == expected),
            "tier {tier}: {expected:?} missing from {found:#?}"
        );
    }

    #[test]
    fn an_argument_moves_between_two_nested_calls() {
        // tqdm's real bug: `start` given to the wrapper, not to enumerate.
        let text = "def f(it, start, **kw):\n    return enumerate(wrap(it, start, **kw))\n";
        let found = changed(Lang::Python, text);
        assert_has(
            &found,
            6,
            &text.replace(
                "enumerate(wrap(it, start, **kw))",
                "enumerate(wrap(it, **kw), start)",
            ),
        );
        assert_has(
            &found,
            6,
            &text.replace(
                "enumerate(wrap(it, start, **kw))",
                "enumerate(wrap(start, **kw), it)",
            ),
        );
        // And back in, after the inner call's last positional argument.
        let text = "function f(a, b, o) {\n  return g(h(a, o), b);\n}\n";
        let found = changed(Lang::JavaScript, text);
        assert_has(&found, 6, &text.replace("g(h(a, o), b)", "g(h(a, o, b))"));
        assert_has(&found, 6, &text.replace("g(h(a, o), b)", "g(h(a), o, b)"));
    }

    #[test]
    fn python_calls_are_swapped_unwrapped_wrapped_and_given_one_more() {
        let text = "def f(a, b, values):\n    for x in flatten(a):\n        pass\n    return gcd(a % b, b) + len(range(0, b))\n";
        let found = changed(Lang::Python, text);
        assert_has(&found, 6, &text.replace("gcd(a % b, b)", "gcd(b, a % b)"));
        assert_has(&found, 6, &text.replace("flatten(a)", "a"));
        assert_has(&found, 6, &text.replace("range(0, b)", "range(0, b + 1)"));
        assert_has(
            &found,
            6,
            &text.replace("gcd(a % b, b)", "gcd(a % b - 1, b)"),
        );
        // A common wrapper, and one the file calls with one argument.
        assert_has(
            &found,
            6,
            &text.replace("gcd(a % b, b)", "gcd(a % sorted(b), b)"),
        );
        assert_has(
            &found,
            6,
            &text.replace("range(0, b)", "range(0, flatten(b))"),
        );
        // A loop's target is written, not read: never wrapped.
        assert!(!found.iter().any(|(_, t)| t.contains("for sorted(x)")));
        let text = "def g(text):\n    chars = [c for c in text]\n    return text.strip() == text\n";
        let found = changed(Lang::Python, text);
        assert_has(&found, 6, &text.replace("text.strip() ==", "text =="));
        assert_has(
            &found,
            6,
            &text.replace("for c in text]", "for c in text.strip()]"),
        );
    }

    #[test]
    fn python_guards_conditions_loops_literals_slices_and_strings() {
        let text = "def f(hare, queue, a, b, digits):\n    while True:\n        if hare.successor is None and queue:\n            return []\n    return a[0] + f(a[1:], b) + digits\n";
        let found = changed(Lang::Python, text);
        assert_has(&found, 6, &text.replace("while True", "while queue"));
        assert_has(
            &found,
            6,
            &text.replace(
                "hare.successor is None and",
                "hare is None or hare.successor is None and",
            ),
        );
        assert_has(&found, 6, &text.replace(" and queue", ""));
        assert_has(&found, 6, &text.replace("hare.successor is None and ", ""));
        assert_has(&found, 6, &text.replace("return []", "return [[]]"));
        assert_has(&found, 6, &text.replace("f(a[1:], b)", "f(a[1:], b[1:])"));
        let swapped = text.replace("a[0] + f(a[1:], b) + digits", "digits + a[0] + f(a[1:], b)");
        assert_has(&found, 6, &swapped);
        let found = changed(Lang::Python, "def g():\n    return [[]]\n");
        assert_has(&found, 6, "def g():\n    return []\n");
    }

    #[test]
    fn conditions_are_expanded_by_a_variable_or_another_condition() {
        let text = "def f(runs, ch, n):\n    if runs[-1][0] == ch or n:\n        return 1\n    while n > 0:\n        n -= 1\n    return 0\n";
        let found = changed(Lang::Python, text);
        let condition = "runs[-1][0] == ch or n";
        let expanded = |by: &str| text.replace(condition, by);
        assert_has(&found, 6, &expanded("runs and (runs[-1][0] == ch or n)"));
        assert_has(&found, 6, &expanded("not ch or (runs[-1][0] == ch or n)"));
        assert_has(
            &found,
            6,
            &expanded("(runs[-1][0] == ch or n) and not n > 0"),
        );
        assert_has(
            &found,
            6,
            &text.replace("n > 0", "n > 0 or (runs[-1][0] == ch or n)"),
        );
        let js = "function f(words, edge) {\n  const w = words[0];\n  if (SMALL.has(w)) return w;\n  return edge ? w : '';\n}\n";
        let found = changed(Lang::JavaScript, js);
        assert_has(
            &found,
            6,
            &js.replace("(SMALL.has(w))", "(!edge && SMALL.has(w))"),
        );
        assert_has(&found, 6, &js.replace("edge ?", "edge || !SMALL.has(w) ?"));
        // Rust's conditions are bools: only other conditions are joined, negated whole.
        let rust = "fn f(a: i32, b: i32) -> i32 {\n    if a < b {\n        return 1;\n    }\n    while a == 0 {}\n    0\n}\n";
        let found = changed(Lang::Rust, rust);
        assert_has(
            &found,
            6,
            &rust.replace("if a < b", "if a < b && !(a == 0)"),
        );
        assert_has(
            &found,
            6,
            &rust.replace("while a == 0", "while a == 0 || a < b"),
        );
        assert!(!found.iter().any(|(_, t)| t.contains("if a && a < b")));
        for (_, after) in &found {
            assert!(crate::syntax::parses(Lang::Rust, after), "{after}");
        }
    }

    #[test]
    fn a_statement_is_deleted_with_its_line_or_repeated_last() {
        let text = "def f(seen, x):\n    \"\"\"Adds.\"\"\"\n    seen.add(x)\n    seen.add(x + 1)\n    return seen\n";
        let found = changed(Lang::Python, text);
        assert_has(&found, 7, &text.replace("    seen.add(x)\n", ""));
        assert_has(
            &found,
            7,
            &text.replace("    seen.add(x)\n", "    seen.add(x)\n    seen.add(x)\n"),
        );
        assert!(!found.iter().any(|(_, t)| t.matches("Adds.").count() != 1));
        // The only statement of a block stays: deleting it would not parse.
        let text = "def f(seen):\n    if seen:\n        seen.clear()\n    return seen\n";
        let found = changed(Lang::Python, text);
        assert!(!found
            .iter()
            .any(|(tier, t)| *tier == 7 && !t.contains("seen.clear()")));
    }

    #[test]
    fn javascript_rust_and_go_calls_and_guards() {
        let js = "function f(node, list) {\n  if (node.next === null) { return []; }\n  list.push(node);\n  return Math.max(list.length, 1);\n}\n";
        let found = changed(Lang::JavaScript, js);
        assert_has(
            &found,
            6,
            &js.replace("node.next === null", "node === null || node.next === null"),
        );
        assert_has(&found, 6, &js.replace("return [];", "return [[]];"));
        assert_has(
            &found,
            6,
            &js.replace("Math.max(list.length, 1)", "Math.max(1, list.length)"),
        );
        assert_has(
            &found,
            6,
            &js.replace("list.push(node)", "list.push(Math.abs(node))"),
        );
        assert_has(&found, 7, &js.replace("  list.push(node);\n", ""));
        let rust = "fn f(a: u32, b: u32) -> u32 {\n    pow(a, b)\n}\n";
        let found = changed(Lang::Rust, rust);
        assert_has(&found, 6, &rust.replace("pow(a, b)", "pow(b, a)"));
        assert_has(&found, 6, &rust.replace("pow(a, b)", "pow(a, b - 1)"));
        let go = "package a\n\nfunc F(xs []int) int {\n\treturn max(len(xs), 1)\n}\n";
        let found = changed(Lang::Go, go);
        assert_has(&found, 6, &go.replace("max(len(xs), 1)", "max(1, len(xs))"));
        assert_has(&found, 6, &go.replace("max(len(xs), 1)", "max(xs, 1)"));
    }
}
