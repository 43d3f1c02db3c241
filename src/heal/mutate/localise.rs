//! Where a bug probably is, from the failing tests: the project's own frames in their tracebacks
//! and panics first (the function around each), then the functions each failing test calls, then
//! what those call. A function reached by more failing tests ranks higher; with the tests' line
//! coverage, every function the failing tests ran is a place, by its most suspicious line, and one
//! they did not run ranks low. The tests' own code is never a place to change.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use tree_sitter::Node;

use crate::heal::coverage::{Spectrum, LOADED};
use crate::heal::tree::Tree;
use crate::run_document::TestFailure;
use crate::syntax::{parse, Lang};
use crate::testmap::{imports, is_test_file, same_stem};

/// A place to try changes: lines `first..=last` of a file, with how strongly the failures point
/// at it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Region {
    pub path: String,
    pub first: usize,
    pub last: usize,
    pub weight: f64,
}

/// Per file, the byte ranges of the tests' own functions.
pub(super) type Protected = BTreeMap<String, Vec<(usize, usize)>>;

/// The project's own lines the failures' tracebacks name: (path, line).
pub(super) type Frames = Vec<(String, usize)>;

/// Files parsed at most.
const MAX_FILES: usize = 2000;

/// A parsed project file.
struct Source {
    lang: Lang,
    text: String,
    tree: tree_sitter::Tree,
}

/// A traceback's frame: a file's name and a line (`File "a/b.py", line 3`, `a/b.rs:3`).
static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"([A-Za-z0-9_./-]+\.[A-Za-z]{1,5})"?(?:, line |:)(\d+)"#).expect("a valid pattern")
});

/// How suspicious each region is, by (path, first line, last line).
type Weights = BTreeMap<(String, usize, usize), f64>;

/// The suspicious regions, most suspicious first; the byte ranges of test functions found in
/// source files (a Rust module's unit tests), which are never changed; and the lines the
/// tracebacks name.
pub(super) fn suspicious(
    failures: &[TestFailure],
    files: &[String],
    tree: &Tree,
    spectrum: Option<&Spectrum>,
) -> (Vec<Region>, Protected, Frames) {
    let sources = parse_sources(files, tree);
    let mut weights = Weights::new();
    let mut protected = Protected::new();
    let mut frames = Frames::new();
    let mut callee_names: BTreeMap<String, f64> = BTreeMap::new();
    for failure in failures {
        weigh_failure(
            failure,
            &sources,
            (&mut weights, &mut frames),
            &mut protected,
            &mut callee_names,
        );
    }
    weigh_callees(&sources, &protected, &callee_names, &mut weights);
    if let Some(spectrum) = spectrum {
        weigh_by_spectrum(&sources, spectrum, &mut weights);
    }
    // Nothing pointed at: the whole of each source file a failing test imports, or is named for.
    if weights.is_empty() {
        weigh_imported(failures, files, &sources, &mut weights);
    }
    let mut regions: Vec<Region> = weights
        .into_iter()
        .map(|((path, first, last), weight)| Region {
            path,
            first,
            last,
            weight,
        })
        .collect();
    regions.sort_by(|a, b| {
        b.weight
            .total_cmp(&a.weight)
            .then(a.path.cmp(&b.path))
            .then(a.first.cmp(&b.first))
    });
    (regions, protected, frames)
}

/// Every file of a language read, parsed once (a few milliseconds each).
fn parse_sources<'a>(files: &'a [String], tree: &Tree) -> BTreeMap<&'a str, Source> {
    files
        .iter()
        .take(MAX_FILES)
        .filter_map(|path| {
            let lang = Lang::of(path)?;
            let text = match tree.read(path) {
                Ok(text) => text?,
                Err(err) => {
                    crate::log::note("heal", &err);
                    return None;
                }
            };
            let tree = parse(lang, &text)?;
            if tree.root_node().has_error() {
                // Every change to it fails the check that a candidate parses.
                crate::log::note(
                    "heal",
                    &format!("{path} does not parse: no change to it can be tried"),
                );
            }
            Some((path.as_str(), Source { lang, text, tree }))
        })
        .collect()
}

/// One failure's evidence: the project's frames in its traceback (their functions), and the
/// functions its test calls (`callee_names`; the test itself protected).
fn weigh_failure(
    failure: &TestFailure,
    sources: &BTreeMap<&str, Source>,
    (weights, frames): (&mut Weights, &mut Frames),
    protected: &mut Protected,
    callee_names: &mut BTreeMap<String, f64>,
) {
    // Frames: the project's own source files named in the traceback.
    let mut framed = false;
    let places = FRAME
        .captures_iter(&failure.details)
        .filter_map(|c| Some((c.get(1)?.as_str().to_string(), c[2].parse::<usize>().ok()?)))
        .chain(failure.file.clone().zip(failure.line.map(|l| l as usize)));
    for (named, line) in places {
        let named = named.trim_start_matches("./");
        let Some((path, source)) = sources
            .iter()
            .find(|(f, _)| named == **f || named.ends_with(&format!("/{f}")))
        else {
            continue;
        };
        if is_test_file(path) {
            continue;
        }
        let (first, last) = crate::syntax::enclosing_function(source.lang, &source.tree, line)
            .unwrap_or((line.saturating_sub(3).max(1), line + 3));
        *weights.entry((path.to_string(), first, last)).or_default() += 2.0;
        if !frames.contains(&(path.to_string(), line)) {
            frames.push((path.to_string(), line));
        }
        framed = true;
    }
    // The functions the failing test calls. The test is in a test file or the file its
    // runner names: a function of the project's own code may have the test's name.
    let name = test_name(&failure.id);
    let mut found_test = false;
    let holds_tests = |path: &str| {
        is_test_file(path)
            || failure.file.as_deref() == Some(path)
            || failure.id.starts_with(&format!("{path}::"))
    };
    for (path, source) in sources.iter().filter(|(path, _)| holds_tests(path)) {
        for function in functions(source) {
            if name.is_none() || function_name(source, function) != name {
                continue;
            }
            found_test = true;
            protected
                .entry(path.to_string())
                .or_default()
                .push((function.start_byte(), function.end_byte()));
            for called in calls(source, function) {
                *callee_names.entry(called).or_default() += if framed { 0.5 } else { 1.0 };
            }
        }
    }
    if !found_test {
        // The test's line, when the runner named it.
        if let (Some(file), Some(line)) = (&failure.file, failure.line) {
            if let Some(source) = sources.get(file.as_str()) {
                for called in calls_on_line(source, line as usize) {
                    *callee_names.entry(called).or_default() += 1.0;
                }
            }
        }
    }
}

/// The definitions of the called functions in the project's own code (a protected test's
/// own excepted), and one level of what they call.
fn weigh_callees(
    sources: &BTreeMap<&str, Source>,
    protected: &Protected,
    callee_names: &BTreeMap<String, f64>,
    weights: &mut Weights,
) {
    let mut second: BTreeMap<String, f64> = BTreeMap::new();
    for (path, source) in sources {
        if is_test_file(path) {
            continue;
        }
        let guarded = protected.get(*path).cloned().unwrap_or_default();
        for function in functions(source) {
            if guarded
                .iter()
                .any(|&(s, e)| function.start_byte() >= s && function.end_byte() <= e)
            {
                continue;
            }
            let Some(name) = function_name(source, function) else {
                continue;
            };
            if let Some(weight) = callee_names.get(name) {
                let lines = (
                    function.start_position().row + 1,
                    function.end_position().row + 1,
                );
                *weights
                    .entry((path.to_string(), lines.0, lines.1))
                    .or_default() += weight;
                for called in calls(source, function) {
                    if !callee_names.contains_key(&called) {
                        *second.entry(called).or_default() += weight * 0.3;
                    }
                }
            }
        }
    }
    for (path, source) in sources {
        if is_test_file(path) || second.is_empty() {
            continue;
        }
        for function in functions(source) {
            if let Some(weight) = function_name(source, function).and_then(|n| second.get(n)) {
                let lines = (
                    function.start_position().row + 1,
                    function.end_position().row + 1,
                );
                *weights
                    .entry((path.to_string(), lines.0, lines.1))
                    .or_default() += weight;
            }
        }
    }
}

/// The failing tests' coverage (`spectrum`): the functions near the top of it become places;
/// the frames' and callees' rank lower when the failing tests did not run them.
fn weigh_by_spectrum(sources: &BTreeMap<&str, Source>, spectrum: &Spectrum, weights: &mut Weights) {
    // Each function's body (a `def` line runs as its module loads), by its top line.
    let mut ran = Vec::new();
    for (path, source) in sources {
        if is_test_file(path) {
            continue;
        }
        for function in functions(source) {
            let (first, last) = (
                function.start_position().row + 1,
                function.end_position().row + 1,
            );
            if let Some(highest) = spectrum.highest(path, body(first, last), last) {
                ran.push(((path.to_string(), first, last), highest));
            }
        }
    }
    let top = ran.iter().map(|(_, highest)| *highest).fold(0.0, f64::max);
    for (place, highest) in ran {
        if highest > LOADED && highest >= top / 2.0 {
            *weights.entry(place).or_default() += 3.0 * highest;
        }
    }
    // What no failing test ran, in a module they never imported too, weighs little.
    for ((path, first, last), weight) in weights.iter_mut() {
        if spectrum
            .highest(path, body(*first, *last), *last)
            .unwrap_or(0.0)
            == 0.0
        {
            *weight *= 0.2;
        }
    }
}

/// The whole of each source file a failing test imports, or is named for.
fn weigh_imported(
    failures: &[TestFailure],
    files: &[String],
    sources: &BTreeMap<&str, Source>,
    weights: &mut Weights,
) {
    for failure in failures {
        let test_file = failure
            .file
            .as_deref()
            .unwrap_or_else(|| failure.id.split("::").next().unwrap_or(""));
        let Some(source) = sources.get(test_file) else {
            continue;
        };
        let named = imports(test_file, &source.text, files)
            .into_iter()
            .chain(same_stem(test_file, files));
        for path in named {
            if let Some(found) = sources.get(path.as_str()) {
                let lines = found.text.lines().count().max(1);
                *weights.entry((path, 1, lines)).or_default() += 0.1;
            }
        }
    }
}

/// The first line of the body of a function on lines `first..=last`: the next, unless it is
/// all on one line.
fn body(first: usize, last: usize) -> usize {
    if last > first {
        first + 1
    } else {
        first
    }
}

/// The test function's name in a runner's id: `tests/test_a.py::test_b[1]`,
/// `tests.test_a.T.test_b`, `tests::it_adds`, `TestMax/equal` → `test_b`, `it_adds`, `TestMax`.
/// None for a described test (`math.test.js > adds two numbers`): its words name no function,
/// and the code under test may have one of the same name.
fn test_name(id: &str) -> Option<&str> {
    let id = id.split('[').next().unwrap_or(id);
    let id = id
        .split('/')
        .next()
        .filter(|first| first.starts_with("Test"))
        .unwrap_or(id);
    if id.contains(char::is_whitespace) {
        return None;
    }
    id.rsplit(['.', ':']).find(|part| !part.is_empty())
}

fn functions(source: &Source) -> Vec<Node<'_>> {
    crate::syntax::functions(source.lang, &source.tree)
}

/// A function's name: its own, or for a JavaScript function value the name it is given
/// (`const total = () => ...`, `exports.total = function ...`, `{ total: () => ... }`).
fn function_name<'s>(source: &'s Source, function: Node) -> Option<&'s str> {
    let text = |node: Node| &source.text[node.byte_range()];
    if let Some(name) = function.child_by_field_name("name") {
        return Some(text(name));
    }
    let parent = function.parent()?;
    let name = match parent.kind() {
        "variable_declarator" => parent.child_by_field_name("name")?,
        "pair" => parent.child_by_field_name("key")?,
        "assignment_expression" => {
            let left = parent.child_by_field_name("left")?;
            match left.kind() {
                "member_expression" => left.child_by_field_name("property")?,
                _ => left,
            }
        }
        _ => return None,
    };
    Some(text(name))
}

/// The names `node` calls: plain functions, and methods by their own name.
fn calls(source: &Source, node: Node) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![node];
    let mut cursor = node.walk();
    while let Some(node) = stack.pop() {
        // A Rust macro's arguments are tokens: a name right before a parenthesised group is
        // a call (`assert_eq!(max(3, 7), 7)`).
        if node.kind() == "token_tree" {
            let children: Vec<Node> = node.children(&mut node.walk()).collect();
            for pair in children.windows(2) {
                if pair[0].kind() == "identifier" && pair[1].kind() == "token_tree" {
                    names.push(source.text[pair[0].byte_range()].to_string());
                }
            }
        }
        if matches!(node.kind(), "call" | "call_expression") {
            if let Some(function) = node.child_by_field_name("function") {
                let name = match function.kind() {
                    "attribute" => function.child_by_field_name("attribute"),
                    "member_expression" => function.child_by_field_name("property"),
                    "field_expression" => function.child_by_field_name("field"),
                    "scoped_identifier" => function.child_by_field_name("name"),
                    "selector_expression" => function.child_by_field_name("field"),
                    _ => Some(function),
                };
                if let Some(name) = name {
                    names.push(source.text[name.byte_range()].to_string());
                }
            }
        }
        stack.extend(node.children(&mut cursor));
    }
    names
}

/// The names called on `line` (1-based).
fn calls_on_line(source: &Source, line: usize) -> Vec<String> {
    let root = source.tree.root_node();
    let start: usize = source
        .text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    if start >= source.text.len() {
        return Vec::new();
    }
    let end = source.text[start..]
        .find('\n')
        .map_or(source.text.len(), |at| start + at);
    root.descendant_for_byte_range(start, end)
        .map(|node| calls(source, node))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_are_found_in_every_runners_ids() {
        assert_eq!(
            test_name("tests/test_ops.py::test_mean[2 3]"),
            Some("test_mean")
        );
        assert_eq!(
            test_name("tests.test_pricing.DiscountTest.test_quarter_off"),
            Some("test_quarter_off")
        );
        assert_eq!(test_name("tests::it_adds"), Some("it_adds"));
        assert_eq!(test_name("TestMaxTable/equal values"), Some("TestMaxTable"));
        assert_eq!(test_name("the second when it is larger"), None);
        assert_eq!(test_name("test/a.test.js > sums > adds"), None);
    }
}
