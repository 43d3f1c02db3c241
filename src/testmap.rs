//! Which files of a project are tests, and which of its source files each test reaches, by the
//! runners' conventions (names and directories) and by what a test imports (Python modules,
//! JavaScript and TypeScript relative imports, Rust's `use` of the crate's modules). heal keeps tests read-only and shows the code a failing test
//! reaches; review maps changed files to the tests that cover them.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

/// Whether a path is a test by the runners' conventions: under `tests`, `test`, `__tests__`,
/// `spec` or `testdata`, or named `test_*.py`, `*_test.py`, `conftest.py`, `*_test.go`,
/// `*.test.*`, `*.spec.*`.
pub(crate) fn is_test_file(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let dirs = &parts[..parts.len().saturating_sub(1)];
    dirs.iter()
        .any(|dir| matches!(*dir, "tests" | "test" | "__tests__" | "spec" | "testdata"))
        || named_as_test(path)
}

/// Whether a file's own name marks it a test, as runners collect them by default (pytest's
/// `test_*.py`, Go's `*_test.go`, jest's `*.test.js`), wherever it is.
pub(crate) fn named_as_test(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || name == "conftest.py"
        || name.ends_with("_test.go")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// The project's files, relative and sorted: not ignored (by `.gitignore` files, in a
/// repository or not), not bytecode; `limit` at most.
pub(crate) fn project_files(root: &Path, limit: usize) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(root)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter_map(|entry| Some(entry.path().strip_prefix(root).ok()?.to_str()?.to_string()))
        .filter(|path| !path.contains("__pycache__") && !path.ends_with(".pyc"))
        .take(limit)
        .collect();
    files.sort();
    files
}

/// Compiled once: a review reads every test of a project.
static PYTHON_FROM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*from\s+([\w.]+)\s+import\s+([\w, ()]+)").expect("a valid pattern")
});
static PYTHON_IMPORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^\s*import\s+([\w.]+)").expect("a valid pattern"));
static JS_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:from\s+|require\(\s*|import\s*\(\s*)['"](\.{1,2}/[^'"]+)['"]"#)
        .expect("a valid pattern")
});
/// `use shop::tax::rate;`, `use crate::tax;`: the crate, then its modules' path.
static RUST_USE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*(?:pub\s+)?use\s+([a-z_][a-z0-9_]*)((?:::[a-z_][a-z0-9_]*)*)")
        .expect("a valid pattern")
});

/// The project files (`files`, sorted) that the test file `test` imports: Python modules,
/// JavaScript and TypeScript relative imports (ESM's `./util.js` may be `util.ts`), and the
/// modules of its crate a Rust test uses.
pub(crate) fn imports(test: &str, text: &str, files: &[String]) -> Vec<String> {
    let mut wanted = Vec::new();
    if test.ends_with(".rs") {
        for capture in RUST_USE.captures_iter(text) {
            if matches!(&capture[1], "std" | "core" | "alloc" | "super" | "self") {
                continue;
            }
            wanted.push("lib.rs".to_string());
            let modules: Vec<&str> = capture[2].split("::").filter(|m| !m.is_empty()).collect();
            for end in 1..=modules.len() {
                let module = modules[..end].join("/");
                wanted.push(format!("{module}.rs"));
                wanted.push(format!("{module}/mod.rs"));
            }
        }
    } else if test.ends_with(".py") {
        for capture in PYTHON_FROM.captures_iter(text) {
            let module = capture[1].replace('.', "/");
            wanted.push(format!("{module}.py"));
            wanted.push(format!("{module}/__init__.py"));
            for name in capture[2]
                .split([',', '(', ')', ' '])
                .filter(|n| !n.is_empty())
            {
                wanted.push(format!("{module}/{name}.py"));
            }
        }
        for capture in PYTHON_IMPORT.captures_iter(text) {
            wanted.push(format!("{}.py", capture[1].replace('.', "/")));
        }
    } else {
        let dir = Path::new(test).parent().unwrap_or(Path::new(""));
        for capture in JS_IMPORT.captures_iter(text) {
            let joined = normalized(&dir.join(&capture[1]));
            // TypeScript's ESM imports name the JavaScript the compiler will write.
            if let Some(stem) = [".js", ".jsx", ".mjs", ".cjs"]
                .iter()
                .find_map(|js| joined.strip_suffix(js))
            {
                for ts in [".ts", ".tsx", ".mts", ".cts"] {
                    wanted.push(format!("{stem}{ts}"));
                }
            }
            for suffix in [
                "",
                ".js",
                ".ts",
                ".mjs",
                ".cjs",
                ".jsx",
                ".tsx",
                "/index.js",
                "/index.ts",
            ] {
                wanted.push(format!("{joined}{suffix}"));
            }
        }
    }
    // A file in a `src` layout is found under it as well.
    wanted
        .into_iter()
        .flat_map(|path| [path.clone(), format!("src/{path}")])
        .filter(|path| files.binary_search(path).is_ok() && !is_test_file(path))
        .collect()
}

/// `path` with `.` and `..` taken out, as text.
fn normalized(path: &Path) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.iter().filter_map(|p| p.to_str()) {
        match part {
            "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// Source files whose name is the test's without its test marks (`test_pricing.py`,
/// `pricing.test.js`, `pricing_test.go` → `pricing.*`).
pub(crate) fn same_stem(test: &str, files: &[String]) -> Vec<String> {
    let name = test.rsplit('/').next().unwrap_or(test);
    let stem = name.split('.').next().unwrap_or(name);
    // Only a name with a test's mark says what it tests (`lib.rs` under testdata/ does not).
    let marked = name.contains(".test.") || name.contains(".spec.");
    let stem = match stem
        .strip_prefix("test_")
        .or_else(|| stem.strip_suffix("_test"))
    {
        Some(stem) => stem,
        None if marked => stem,
        None => return Vec::new(),
    };
    if stem.is_empty() {
        return Vec::new();
    }
    files
        .iter()
        .filter(|file| {
            let name = file.rsplit('/').next().unwrap_or(file);
            !is_test_file(file) && name.split('.').next() == Some(stem)
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_are_known_by_the_runners_conventions() {
        for path in [
            "tests/test_a.py",
            "pkg/test_a.py",
            "a_test.go",
            "src/x.test.ts",
            "__tests__/a.js",
            "conftest.py",
            "crate/tests/it.rs",
        ] {
            assert!(is_test_file(path), "{path}");
        }
        for path in ["shop/pricing.py", "src/lib.rs", "contest.py", "latest.go"] {
            assert!(!is_test_file(path), "{path}");
        }
    }

    #[test]
    fn typescript_and_rust_imports_name_the_source_files() {
        let files: Vec<String> = [
            "src/lib.rs",
            "src/tax/mod.rs",
            "src/tax/rate.rs",
            "src/util.ts",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            imports(
                "test/util.test.ts",
                "import { pad } from '../src/util.js';\n",
                &files
            ),
            ["src/util.ts"]
        );
        let mut found = imports(
            "tests/tax.rs",
            "use std::fmt;\nuse shop::tax::rate::{vat, Rate};\n",
            &files,
        );
        found.sort();
        assert_eq!(found, ["src/lib.rs", "src/tax/mod.rs", "src/tax/rate.rs"]);
    }

    #[test]
    fn python_and_javascript_imports_name_the_source_files() {
        // Sorted, as the project's file lists are.
        let files: Vec<String> = [
            "shop/__init__.py",
            "shop/pricing.py",
            "src/index.js",
            "src/util.js",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            imports(
                "tests/test_pricing.py",
                "import unittest\nfrom shop.pricing import bulk_discount, discounted\n",
                &files
            ),
            ["shop/pricing.py"]
        );
        assert_eq!(
            imports(
                "src/util.test.js",
                "const { a } = require('./util');\nimport x from \"../src/index.js\";\n",
                &files
            ),
            ["src/util.js", "src/index.js"]
        );
        assert_eq!(
            same_stem("tests/test_pricing.py", &files),
            ["shop/pricing.py"]
        );
    }
}
