//! Rust doctests: their ids (`src/lib.rs - add (line 74)`, the line of the opening fence), and
//! where in the source one failed. rustdoc compiles each doctest inside a wrapper of its own and
//! reports a panic's line in that wrapper (line 7 for an assert on the doctest's third line);
//! the wrapper's head is rebuilt here to take it back to the source. Edition 2024 bundles the
//! doctests in a temporary file of its own: the doctest's fence is all that is known then.

use std::path::Path;

/// The file and fence line of a doctest's id, `None` for any other test.
pub(crate) fn parse_id(id: &str) -> Option<(&str, u32)> {
    let (file, rest) = id.split_once(" - ")?;
    let line = rest
        .strip_suffix(')')?
        .rsplit_once(" (line ")?
        .1
        .parse()
        .ok()?;
    (!file.contains(' ')).then_some((file, line))
}

/// Where the failed doctest `id` is in the source, given where its panic was reported (a
/// project-relative file and line, if the panic named one in the project).
pub(crate) fn source_location(
    id: &str,
    reported: Option<(&str, u32)>,
    root: Option<&Path>,
) -> Option<(String, u32)> {
    let (file, fence) = parse_id(id)?;
    let source = root.and_then(|root| std::fs::read_to_string(root.join(file)).ok());
    let in_source = match (reported, &source) {
        (Some((reported_file, line)), Some(source)) if reported_file == file => {
            // A panic in the library the doctest calls is reported where it is; a line of
            // the wrapper is mapped back, and is known for one by what the source holds there.
            let lines: Vec<&str> = source.lines().collect();
            let name = root.and_then(|root| crate_name(root, file));
            let mapped = wrapper_to_source(&lines, fence, line, name.as_deref());
            let there_is_code = lines
                .get(line as usize - 1)
                .is_some_and(|text| !is_comment_or_blank(text));
            match mapped {
                Some(mapped) if !there_is_code || may_panic(lines[mapped as usize - 1]) => {
                    Some(mapped)
                }
                _ if there_is_code => return Some((file.to_string(), line)),
                _ => None,
            }
        }
        (Some((other, line)), _) if other != file => return Some((other.to_string(), line)),
        _ => None,
    };
    // Unknown: the doctest's first line.
    Some((file.to_string(), in_source.unwrap_or(fence + 1)))
}

/// The source line of the wrapper's line `line`, for the doctest whose fence is on line
/// `fence`: the wrapper is `#![allow(unused)]`, the doctest's crate attributes and a blank line,
/// `extern crate NAME;` (two lines) when the code names the crate, `fn main() {` unless the
/// code has one, then the code.
fn wrapper_to_source(
    lines: &[&str],
    fence: u32,
    line: u32,
    crate_name: Option<&str>,
) -> Option<u32> {
    if !lines.get(fence as usize - 1)?.contains("```") {
        return None;
    }
    let code: Vec<String> = lines[fence as usize..]
        .iter()
        .take_while(|text| !text.contains("```"))
        .map(|text| doc_text(text))
        .collect();
    let attributes = code
        .iter()
        .take_while(|text| text.trim_start().starts_with("#!["))
        .count();
    let all = code.join("\n");
    let names_the_crate =
        crate_name.is_some_and(|name| !all.contains("extern crate") && names(&all, name));
    let head = 1
        + if attributes > 0 { attributes + 1 } else { 0 }
        + if names_the_crate { 2 } else { 0 }
        + usize::from(!all.contains("fn main("));
    let body_line = (line as usize).checked_sub(head)?;
    (body_line >= 1 && attributes + body_line <= code.len())
        .then(|| fence + (attributes + body_line) as u32)
}

/// A doc comment line's text: `/// # let x = 1;` is `let x = 1;` (hidden lines are compiled).
fn doc_text(line: &str) -> String {
    let text = line.trim_start();
    let text = text
        .strip_prefix("///")
        .or_else(|| text.strip_prefix("//!"))
        .unwrap_or(text);
    let text = text.strip_prefix(' ').unwrap_or(text);
    match text.strip_prefix('#') {
        Some(hidden) if hidden.is_empty() || hidden.starts_with(' ') => {
            hidden.trim_start().to_string()
        }
        _ => text.to_string(),
    }
}

/// The crate's name as code names it (`my-crate` is `my_crate`), from the `Cargo.toml` nearest
/// to `file` in the workspace `root`: its `[lib]` name, else its `[package]` name.
fn crate_name(root: &Path, file: &str) -> Option<String> {
    let manifest = root
        .join(file)
        .ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(root))
        .map(|dir| dir.join("Cargo.toml"))
        .find(|manifest| manifest.is_file())?;
    let text = std::fs::read_to_string(manifest).ok()?;
    let mut section = "";
    let (mut lib, mut package) = (None, None);
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let Some(value) = line
            .strip_prefix("name")
            .and_then(|rest| rest.trim_start().strip_prefix('='))
        else {
            continue;
        };
        let value = value.trim().trim_matches('"').replace('-', "_");
        match section {
            "[lib]" => lib = Some(value),
            "[package]" => package = Some(value),
            _ => {}
        }
    }
    lib.or(package)
}

fn names(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + name.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

fn is_comment_or_blank(line: &str) -> bool {
    let text = line.trim_start();
    text.is_empty() || text.starts_with("//") || text.starts_with("/*") || text.starts_with('*')
}

/// Whether the line holds something that panics: an assertion, `panic!`, an `unwrap`.
fn may_panic(line: &str) -> bool {
    [
        "assert",
        "panic!",
        "unwrap",
        "expect(",
        "unreachable!",
        "todo!",
        "unimplemented!",
        "[",
    ]
    .iter()
    .any(|word| line.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_the_wrapper_s_lines() {
        assert_eq!(
            parse_id("src/lib.rs - add (line 74)"),
            Some(("src/lib.rs", 74))
        );
        assert_eq!(
            parse_id("src/a.rs - Thing::new (line 3)"),
            Some(("src/a.rs", 3))
        );
        assert_eq!(parse_id("tests::adds"), None);
        let lines = [
            "/// ```",
            "/// #![allow(dead_code)]",
            "/// # let hidden = 1;",
            "/// assert_eq!(hidden, 2);",
            "/// ```",
        ];
        // `#![allow(unused)]`, the attribute, a blank line, `fn main() {`, then the code.
        assert_eq!(wrapper_to_source(&lines, 1, 6, None), Some(4));
        assert_eq!(wrapper_to_source(&lines, 1, 60, None), None);
        assert_eq!(doc_text("    /// # use x::y;"), "use x::y;");
        assert_eq!(doc_text("/// #[derive(Debug)]"), "#[derive(Debug)]");
    }
}
