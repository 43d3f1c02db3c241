//! The languages autocoder reads as code, parsed with tree-sitter: a file's language from its
//! name, its syntax tree, whether a text parses (the offline engine drops a candidate that does
//! not before any test runs), and its functions (what heal localises in, what a review shows
//! around a change).

use tree_sitter::{Language, Node, Parser, Tree};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    JavaScript,
    /// TypeScript's grammar is JavaScript's with types: the same node kinds for the same code.
    TypeScript,
    Tsx,
    Rust,
    Go,
}

impl Lang {
    /// The language of the file at `path`, when one is read.
    pub(crate) fn of(path: &str) -> Option<Lang> {
        let extension = path.rsplit_once('.').map(|(_, e)| e)?;
        match extension {
            "py" => Some(Lang::Python),
            "js" | "mjs" | "cjs" | "jsx" => Some(Lang::JavaScript),
            "ts" | "mts" | "cts" => Some(Lang::TypeScript),
            "tsx" => Some(Lang::Tsx),
            "rs" => Some(Lang::Rust),
            "go" => Some(Lang::Go),
            _ => None,
        }
    }

    fn grammar(self) -> Language {
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }

    /// The node kinds that define a function (or method), whose name is the `name` field.
    pub(crate) fn is_function(self, kind: &str) -> bool {
        match self {
            Lang::Python => kind == "function_definition",
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => matches!(
                kind,
                "function_declaration"
                    | "method_definition"
                    | "generator_function_declaration"
                    | "arrow_function"
                    | "function_expression"
                    | "function"
            ),
            Lang::Rust => kind == "function_item",
            Lang::Go => matches!(
                kind,
                "function_declaration" | "method_declaration" | "func_literal"
            ),
        }
    }
}

/// `text` parsed; None when the grammar cannot be loaded or the parse fails outright.
pub(crate) fn parse(lang: Lang, text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    parser.parse(text, None)
}

/// The functions (and methods) `tree`, a `lang` syntax tree, defines, outermost first.
pub(crate) fn functions(lang: Lang, tree: &Tree) -> Vec<Node<'_>> {
    let mut found = Vec::new();
    let mut stack = vec![tree.root_node()];
    let mut cursor = tree.walk();
    while let Some(node) = stack.pop() {
        if lang.is_function(node.kind()) {
            found.push(node);
        }
        stack.extend(node.children(&mut cursor));
    }
    found
}

/// The lines (1-based, inclusive) of the innermost function around `line` (1-based).
pub(crate) fn enclosing_function(lang: Lang, tree: &Tree, line: usize) -> Option<(usize, usize)> {
    innermost_function(lang, tree, line)
        .map(|f| (f.start_position().row + 1, f.end_position().row + 1))
}

/// The innermost function around `line` (1-based): found going down the nodes that hold the
/// line (the first of siblings that share it), not by looking at every function.
pub(crate) fn innermost_function(lang: Lang, tree: &Tree, line: usize) -> Option<Node<'_>> {
    let row = line.checked_sub(1)?;
    let holds = |node: &Node| node.start_position().row <= row && row <= node.end_position().row;
    let mut node = tree.root_node();
    let mut innermost = None;
    loop {
        if lang.is_function(node.kind()) {
            innermost = Some(node);
        }
        let mut cursor = node.walk();
        let Some(child) = node.children(&mut cursor).find(holds) else {
            return innermost;
        };
        node = child;
    }
}

/// Whether `text` parses without an error.
pub(crate) fn parses(lang: Lang, text: &str) -> bool {
    parse(lang, text).is_some_and(|tree| !tree.root_node().has_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_parses_its_own_code_and_refuses_broken_code() {
        assert!(parses(Lang::Python, "def f(x):\n    return x < 1\n"));
        assert!(!parses(Lang::Python, "def f(x):\n    return x <\n"));
        assert!(parses(
            Lang::JavaScript,
            "function f(x) { return x <= 1; }\n"
        ));
        assert!(!parses(
            Lang::JavaScript,
            "function f(x) { return x <= ; }\n"
        ));
        assert!(parses(Lang::Rust, "fn f(x: i32) -> bool { x < 1 }\n"));
        assert!(!parses(Lang::Rust, "fn f(x: i32) -> bool { x < }\n"));
        assert_eq!(Lang::of("src/a.mjs"), Some(Lang::JavaScript));
        // Types, and a generic's `<` that is not a comparison.
        assert!(parses(
            Lang::TypeScript,
            "export function f(xs: Array<number>): boolean { return xs.length <= 1; }\n"
        ));
        assert!(!parses(
            Lang::TypeScript,
            "function f(x: number) { return x <= ; }\n"
        ));
        assert!(parses(
            Lang::Tsx,
            "export const A = (p: {n: number}) => <b>{p.n < 2}</b>;\n"
        ));
        assert_eq!(Lang::of("src/a.ts"), Some(Lang::TypeScript));
        assert!(parses(
            Lang::Go,
            "package a\n\nfunc F(x int) bool { return x < 1 }\n"
        ));
        assert!(!parses(
            Lang::Go,
            "package a\n\nfunc F(x int) bool { return x < }\n"
        ));
        assert_eq!(Lang::of("README"), None);
    }
}
