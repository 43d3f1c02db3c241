//! The changes the offline engine tries, read off a syntax tree, in tiers by how often each
//! kind fixes a real bug: boundary operators (`<`/`<=`, `==`/`!=`) first, with the literals the
//! failure itself shows wrong (`literals`); then flipped
//! comparisons and off-by-one (integer literals and indices ±1); then arithmetic and boolean
//! operators, operands of non-commutative operators swapped, an arithmetic expression reduced to
//! one of its operands, a negation dropped; then sibling names (`min`/`max`, `any`/`all`, ...)
//! and boolean literals, methods often called for one another (`append`/`extend`, `push`/
//! `unshift`); then a variable replaced by another name the same function uses; last
//! the structural changes of `templates` (tiers 6 and 7). Each replaces one node's bytes, so the
//! file's formatting stays as it was.

use tree_sitter::Node;

use super::templates::{self, Wrappers};
use crate::syntax::Lang;

/// One change: `replacement` for the bytes `start..end` of the file at `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate {
    pub path: String,
    pub start: usize,
    pub end: usize,
    pub replacement: String,
    /// 1 first.
    pub tier: u8,
    /// 1-based.
    pub line: usize,
    /// What it changes, for people: "`quantity > 50` → `quantity >= 50`".
    pub description: String,
    /// The suspicious region it is in: 0 the most suspicious (set when the regions are known).
    pub place: usize,
}

impl Candidate {
    /// `node`'s bytes in `text` (the file at `path`) replaced by `replacement`, at `tier`.
    pub(super) fn at(path: &str, text: &str, node: Node, replacement: String, tier: u8) -> Self {
        Candidate {
            path: path.to_string(),
            start: node.start_byte(),
            end: node.end_byte(),
            description: format!(
                "`{}` → `{}`",
                one_line(&text[node.byte_range()]),
                one_line(&replacement)
            ),
            replacement,
            tier,
            line: node.start_position().row + 1,
            place: 0,
        }
    }
}

/// Boundary operators: the most common one-character fix.
const BOUNDARY: &[(&str, &str)] = &[
    ("<", "<="),
    ("<=", "<"),
    (">", ">="),
    (">=", ">"),
    ("==", "!="),
    ("!=", "=="),
    ("===", "!=="),
    ("!==", "==="),
];
const FLIPPED: &[(&str, &str)] = &[("<", ">"), (">", "<"), ("<=", ">="), (">=", "<=")];
const ARITHMETIC: &[(&str, &str)] = &[
    ("+", "-"),
    ("-", "+"),
    ("*", "/"),
    ("/", "*"),
    ("//", "/"),
    ("//", "*"),
    ("%", "//"),
    ("+=", "-="),
    ("-=", "+="),
    ("and", "or"),
    ("or", "and"),
    ("&&", "||"),
    ("||", "&&"),
    ("&", "|"),
    ("|", "&"),
    ("<<", ">>"),
    (">>", "<<"),
    ("^", "&"),
    ("&", "^"),
    ("^=", "&="),
    ("&=", "^="),
    ("|=", "&="),
    ("&=", "|="),
];
/// Operators of arithmetic, whose expression may hold an operand too many.
const ARITHMETIC_OPERATORS: &[&str] = &["+", "-", "*", "/", "//", "%"];
/// Operators whose operands, swapped, mean something else.
const NON_COMMUTATIVE: &[&str] = &["-", "/", "//", "%"];
const SIBLINGS: &[(&str, &str)] = &[
    ("min", "max"),
    ("any", "all"),
    ("first", "last"),
    ("start", "end"),
    ("left", "right"),
    ("lower", "upper"),
    ("head", "tail"),
    ("keys", "values"),
    ("incoming", "outgoing"),
    ("floor", "ceil"),
    ("True", "False"),
    ("true", "false"),
];

/// Methods often called for one another (both ways): tried only where a name is a method's.
const CONFUSED_METHODS: &[(&str, &str)] = &[
    ("append", "extend"),
    ("remove", "discard"),
    ("find", "rfind"),
    ("index", "rindex"),
    ("startswith", "endswith"),
    ("lstrip", "rstrip"),
    ("split", "rsplit"),
    ("isalpha", "isalnum"),
    ("isdigit", "isalnum"),
    ("items", "values"),
    ("push", "unshift"),
    ("pop", "shift"),
    ("indexOf", "lastIndexOf"),
    ("some", "every"),
    ("slice", "splice"),
    ("startsWith", "endsWith"),
    ("trimStart", "trimEnd"),
    ("padStart", "padEnd"),
];

/// Variables replaced by another name of the same lines at most: their number grows as the
/// product of the references and the names.
const MAX_RENAMES: usize = 150;

/// The candidates in `text` on the lines `first..=last` (1-based), outside `protected` byte
/// ranges (the tests' own code).
pub(super) fn candidates(
    path: &str,
    lang: Lang,
    text: &str,
    root: Node,
    (first, last): (usize, usize),
    protected: &[(usize, usize)],
) -> Vec<Candidate> {
    let mut found = Vec::new();
    let mut variables = Vec::new();
    for node in changeable(root, (first, last), protected) {
        of_node(path, lang, text, node, &mut found);
        templates::of_node(path, lang, text, node, &mut found);
        if is_variable(text, node) {
            variables.push(node);
        }
    }
    found.extend(renames(path, text, &mut variables));
    let wrappers = Wrappers::of_file(lang, text, root);
    found.extend(templates::of_names(
        path, lang, text, root, &variables, &wrappers,
    ));
    found.sort_by_key(|c| (c.tier, c.line, c.start));
    found
}

/// The nodes that start on the lines `first..=last` (1-based), outside `protected` byte ranges.
pub(super) fn changeable<'t>(
    root: Node<'t>,
    (first, last): (usize, usize),
    protected: &[(usize, usize)],
) -> Vec<Node<'t>> {
    let mut nodes = Vec::new();
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let line = node.start_position().row + 1;
        if node.end_position().row + 1 < first || line > last {
            continue;
        }
        let inside = protected
            .iter()
            .any(|&(s, e)| node.start_byte() >= s && node.end_byte() <= e);
        if !inside && line >= first {
            nodes.push(node);
        }
        stack.extend(node.children(&mut cursor));
    }
    nodes
}

/// Each variable replaced by each other name the variables of these lines have (tier 5): the
/// wrong one of two names in scope (`min(value, low)` for `min(value, high)`).
fn renames(path: &str, text: &str, variables: &mut [Node]) -> Vec<Candidate> {
    variables.sort_by_key(|node| node.start_byte());
    let mut names: Vec<&str> = Vec::new();
    for node in variables.iter() {
        let name = &text[node.byte_range()];
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let mut found = Vec::new();
    for node in variables.iter() {
        let name = &text[node.byte_range()];
        let context = node.parent().unwrap_or(*node);
        for other in names.iter().filter(|other| **other != name) {
            let after = format!(
                "{}{other}{}",
                &text[context.start_byte()..node.start_byte()],
                &text[node.end_byte()..context.end_byte()]
            );
            found.push(Candidate {
                path: path.to_string(),
                start: node.start_byte(),
                end: node.end_byte(),
                replacement: other.to_string(),
                tier: 5,
                line: node.start_position().row + 1,
                description: format!(
                    "`{}` → `{}`",
                    one_line(&text[context.byte_range()]),
                    one_line(&after)
                ),
                place: 0,
            });
            if found.len() == MAX_RENAMES {
                return found;
            }
        }
    }
    found
}

/// Whether the node is a variable's name where it is used: an identifier that does not name a
/// function called or defined, a parameter, a keyword argument, an import, a path's part, an
/// attribute or a type, and is not the receiver (`self`).
fn is_variable(text: &str, node: Node) -> bool {
    if node.kind() != "identifier" || matches!(&text[node.byte_range()], "self" | "cls" | "_") {
        return false;
    }
    let Some(parent) = node.parent() else {
        return false;
    };
    let is_field = |field: &str| is_field_of(parent, field, node);
    // Python's annotations are expressions: `int` in `x: int` is no variable.
    let annotation = std::iter::successors(Some(parent), Node::parent)
        .take(4)
        .any(|ancestor| ancestor.kind() == "type");
    let kind = parent.kind();
    !(annotation
        || kind.contains("parameter")
        || kind.contains("import")
        || kind.contains("function")
        || kind.contains("method")
        || kind.starts_with("scoped")
        || kind == "keyword_argument" && is_field("name")
        || kind == "attribute" && is_field("attribute")
        || kind.starts_with("call") && is_field("function")
        || kind == "macro_invocation"
        || kind == "class_definition")
}

/// Whether `node` is the child `parent` has in `field`.
pub(super) fn is_field_of(parent: Node, field: &str, node: Node) -> bool {
    parent
        .child_by_field_name(field)
        .is_some_and(|child| child.id() == node.id())
}

fn of_node(path: &str, lang: Lang, text: &str, node: Node, found: &mut Vec<Candidate>) {
    let source = |n: Node| &text[n.byte_range()];
    let line = node.start_position().row + 1;
    let mut push = |tier: u8, target: Node, replacement: String, context: Node| {
        let before = source(context);
        let after = format!(
            "{}{replacement}{}",
            &text[context.start_byte()..target.start_byte()],
            &text[target.end_byte()..context.end_byte()]
        );
        found.push(Candidate {
            path: path.to_string(),
            start: target.start_byte(),
            end: target.end_byte(),
            replacement,
            tier,
            line,
            description: format!("`{}` → `{}`", one_line(before), one_line(&after)),
            place: 0,
        });
    };
    let expression = node
        .parent()
        .filter(|parent| !node.is_named() && is_operator_expression(lang, parent.kind()));
    match expression {
        Some(context) => operator_changes(lang, text, node, context, &mut push),
        None => operand_changes(lang, text, node, &mut push),
    }
}

/// A candidate: its tier, the node replaced, its replacement, and the node shown around it.
type Push<'a, 'n> = dyn FnMut(u8, Node<'n>, String, Node<'n>) + 'a;

/// The changes of an operator token `node` of the expression `context`: a boundary moved, a
/// comparison flipped, another arithmetic operator, an operand too many, the operands swapped.
fn operator_changes<'n>(
    lang: Lang,
    text: &str,
    node: Node<'n>,
    context: Node<'n>,
    push: &mut Push<'_, 'n>,
) {
    let source = |n: Node| &text[n.byte_range()];
    let kind = node.kind();
    for (from, to) in BOUNDARY {
        if kind == *from {
            push(1, node, to.to_string(), context);
        }
    }
    for (from, to) in FLIPPED {
        if kind == *from {
            push(2, node, to.to_string(), context);
        }
    }
    for (from, to) in ARITHMETIC {
        let python_only = matches!(*to, "//" | "and" | "or");
        if kind == *from && (lang == Lang::Python || !python_only) {
            push(3, node, to.to_string(), context);
        }
    }
    // An operand too many (`total * 1.1`): each side alone.
    if ARITHMETIC_OPERATORS.contains(&kind) {
        for side in ["left", "right"] {
            if let Some(operand) = context.child_by_field_name(side) {
                push(3, context, source(operand).to_string(), context);
            }
        }
    }
    if NON_COMMUTATIVE.contains(&kind) {
        if let (Some(left), Some(right)) = (
            context.child_by_field_name("left"),
            context.child_by_field_name("right"),
        ) {
            let swapped = format!(
                "{}{}{}",
                source(right),
                &text[left.end_byte()..right.start_byte()],
                source(left)
            );
            push(3, context, swapped, context);
        }
    }
}

/// The changes of a named node: a number one off, a negation dropped, an index one off, a name
/// for its sibling (`min`/`max`, `true`/`false`, …).
fn operand_changes<'n>(lang: Lang, text: &str, node: Node<'n>, push: &mut Push<'_, 'n>) {
    let source = |n: Node| &text[n.byte_range()];
    let parent = node.parent();
    match node.kind() {
        "integer" | "number" | "integer_literal" | "int_literal" => {
            let digits = source(node);
            if let Ok(value) = digits.parse::<i64>() {
                let context = parent.unwrap_or(node);
                for changed in [value + 1, value - 1] {
                    push(2, node, changed.to_string(), context);
                }
            }
        }
        "not_operator" => {
            if let Some(argument) = node.child_by_field_name("argument") {
                push(3, node, source(argument).to_string(), node);
            }
        }
        "unary_expression" if source(node).starts_with('!') => {
            let argument = node
                .child_by_field_name("argument")
                .or_else(|| node.named_child(0));
            if let Some(argument) = argument {
                push(3, node, source(argument).to_string(), node);
            }
        }
        "subscript" | "subscript_expression" | "index_expression" => {
            let index = match lang {
                Lang::Python => node.child_by_field_name("subscript"),
                Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                    node.child_by_field_name("index")
                }
                Lang::Rust => node.named_child(1),
                Lang::Go => node.child_by_field_name("index"),
            };
            if let Some(index) = index.filter(|i| i.kind() != "slice") {
                for sign in ["+", "-"] {
                    push(2, index, format!("{} {sign} 1", source(index)), node);
                }
            }
        }
        "identifier"
        | "property_identifier"
        | "field_identifier"
        | "true"
        | "false"
        | "boolean_literal" => {
            let name = source(node);
            let method = parent.is_some_and(|parent| is_method_name(parent, node));
            let confused = CONFUSED_METHODS.iter().filter(|_| method);
            for (a, b) in SIBLINGS.iter().chain(confused) {
                let other = if name == *a {
                    b
                } else if name == *b {
                    a
                } else {
                    continue;
                };
                push(4, node, other.to_string(), parent.unwrap_or(node));
            }
        }
        _ => {}
    }
}

/// Whether `node` is the name of a method or field in `parent` (`items.append`).
fn is_method_name(parent: Node, node: Node) -> bool {
    match parent.kind() {
        "attribute" => is_field_of(parent, "attribute", node),
        "member_expression" => is_field_of(parent, "property", node),
        "field_expression" | "selector_expression" => is_field_of(parent, "field", node),
        _ => false,
    }
}

/// Whether a node of `kind` is a binary, comparison, boolean or compound-assignment expression,
/// whose operator token may change.
fn is_operator_expression(lang: Lang, kind: &str) -> bool {
    match lang {
        Lang::Python => matches!(
            kind,
            "binary_operator" | "comparison_operator" | "boolean_operator" | "augmented_assignment"
        ),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => matches!(
            kind,
            "binary_expression" | "augmented_assignment_expression"
        ),
        Lang::Rust => matches!(kind, "binary_expression" | "compound_assignment_expr"),
        // Go's `x += 1` is a statement.
        Lang::Go => matches!(kind, "binary_expression" | "assignment_statement"),
    }
}

/// A node's text on one line, cut to 80 characters.
pub(super) fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::text::one_line(&joined, 80)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn all(lang: Lang, text: &str) -> Vec<Candidate> {
        let tree = parse(lang, text).unwrap();
        candidates("f", lang, text, tree.root_node(), (1, usize::MAX), &[])
    }

    fn applied(text: &str, candidate: &Candidate) -> String {
        format!(
            "{}{}{}",
            &text[..candidate.start],
            candidate.replacement,
            &text[candidate.end..]
        )
    }

    #[test]
    fn boundary_operators_come_first_and_keep_the_formatting() {
        let text = "def bulk(q):\n    if q > 50:  # twenty\n        return 20\n    return 0\n";
        let found = all(Lang::Python, text);
        assert_eq!(applied(text, &found[0]), text.replace("q > 50", "q >= 50"));
        assert_eq!(found[0].tier, 1);
        assert_eq!(found[0].description, "`q > 50` → `q >= 50`");
        let texts: Vec<String> = found.iter().map(|c| applied(text, c)).collect();
        assert!(texts.contains(&text.replace("q > 50", "q > 51")));
        assert!(texts.contains(&text.replace("return 20", "return 19")));
        assert!(texts.contains(&text.replace("q > 50", "q < 50")));
    }

    #[test]
    fn arithmetic_swaps_negation_and_sibling_names() {
        let text = "def f(a, b):\n    return max(a - b, 0) if not a else a // b\n";
        let texts: Vec<String> = all(Lang::Python, text)
            .iter()
            .map(|c| applied(text, c))
            .collect();
        for expected in [
            "max(a + b, 0)",
            "max(b - a, 0)",
            "min(a - b, 0)",
            "if a else",
            "a / b",
            "b // a",
        ] {
            assert!(
                texts.iter().any(|t| t.contains(expected)),
                "{expected} missing from {texts:#?}"
            );
        }
    }

    #[test]
    fn javascript_and_rust_operators_and_indices() {
        let js = "function last(xs) { return xs[xs.length] === undefined && xs.length > 0; }\n";
        let texts: Vec<String> = all(Lang::JavaScript, js)
            .iter()
            .map(|c| applied(js, c))
            .collect();
        assert!(
            texts.iter().any(|t| t.contains("xs[xs.length - 1]")),
            "{texts:#?}"
        );
        assert!(texts.iter().any(|t| t.contains("!== undefined")));
        assert!(texts.iter().any(|t| t.contains("|| xs.length")));
        let ts =
            "export function at(xs: Array<number>, i: number): number { return xs[i] ?? -1; }\n";
        let texts: Vec<String> = all(Lang::TypeScript, ts)
            .iter()
            .map(|c| applied(ts, c))
            .collect();
        assert!(texts.iter().any(|t| t.contains("xs[i - 1]")), "{texts:#?}");
        assert!(!texts.iter().any(|t| t.contains("Array<=")), "{texts:#?}");
        let rust = "fn get(v: &[i32], i: usize) -> Option<i32> { if i < v.len() { Some(v[i]) } else { None } }\n";
        let texts: Vec<String> = all(Lang::Rust, rust)
            .iter()
            .map(|c| applied(rust, c))
            .collect();
        assert!(
            texts.iter().any(|t| t.contains("i <= v.len()")),
            "{texts:#?}"
        );
        assert!(texts.iter().any(|t| t.contains("v[i + 1]")));
        // A generic's angle brackets are not a comparison.
        assert!(!texts.iter().any(|t| t.contains("Option<=")));
        let go = "package a\n\nfunc Last(xs []int) int {\n\tif len(xs) > 0 {\n\t\treturn xs[len(xs)]\n\t}\n\treturn 0\n}\n";
        let texts: Vec<String> = all(Lang::Go, go).iter().map(|c| applied(go, c)).collect();
        assert!(
            texts.iter().any(|t| t.contains("xs[len(xs) - 1]")),
            "{texts:#?}"
        );
        assert!(texts.iter().any(|t| t.contains("len(xs) >= 0")));
        assert!(texts.iter().any(|t| t.contains("return 1")));
    }

    #[test]
    fn a_variable_may_be_another_name_of_the_same_lines_last() {
        let text = "def clamp(value: int, low: int, high: int) -> int:\n    if low > high:\n        raise ValueError(\"low\")\n    return max(low, min(value, low))\n";
        let found = all(Lang::Python, text);
        let renames: Vec<&Candidate> = found.iter().filter(|c| c.tier == 5).collect();
        let texts: Vec<String> = renames.iter().map(|c| applied(text, c)).collect();
        assert!(
            texts.contains(&text.replace("min(value, low)", "min(value, high)")),
            "{texts:#?}"
        );
        let fixed = renames
            .iter()
            .find(|c| applied(text, c).contains("min(value, high)"))
            .unwrap();
        assert_eq!(fixed.description, "`(value, low)` → `(value, high)`");
        // Never a function's name, a parameter, or a name that is not a variable's.
        for text in &texts {
            assert!(
                text.starts_with("def clamp(value: int, low: int, high: int) -> int:"),
                "{text}"
            );
            assert!(
                text.contains("raise ValueError(") && text.contains("max("),
                "{text}"
            );
        }
        let js = "function pick(a, b) { const best = a.size; return best > b.size ? a : b; }\n";
        let texts: Vec<String> = all(Lang::JavaScript, js)
            .iter()
            .filter(|c| c.tier == 5)
            .map(|c| applied(js, c))
            .collect();
        assert!(
            texts.iter().any(|t| t.contains("const best = b.size")),
            "{texts:#?}"
        );
        assert!(!texts
            .iter()
            .any(|t| t.contains("a.best") || t.contains("function a")));
        let rust = "fn total(items: &[u32], extra: u32) -> u32 { let sum: u32 = items.iter().sum(); sum + items.len() as u32 }\n";
        let texts: Vec<String> = all(Lang::Rust, rust)
            .iter()
            .filter(|c| c.tier == 5)
            .map(|c| applied(rust, c))
            .collect();
        assert!(
            texts.iter().any(|t| t.contains("sum + sum.len()")),
            "{texts:#?}"
        );
        assert!(!texts
            .iter()
            .any(|t| t.contains("fn sum") || t.contains("(sum:")));
    }

    #[test]
    fn protected_ranges_and_other_lines_are_left_alone() {
        let text = "def f(x):\n    return x > 1\n\ndef test_f():\n    assert f(2) == True\n";
        let tree = parse(Lang::Python, text).unwrap();
        let test_start = text.find("def test_f").unwrap();
        let found = candidates(
            "f",
            Lang::Python,
            text,
            tree.root_node(),
            (1, 5),
            &[(test_start, text.len())],
        );
        assert!(found.iter().all(|c| c.line == 2), "{found:#?}");
        let found = candidates("f", Lang::Python, text, tree.root_node(), (5, 5), &[]);
        assert!(found.iter().all(|c| c.line == 5));
    }
}
