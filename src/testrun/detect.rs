//! Which test framework a project uses, from its files: the first match wins, in the order a
//! project's own configuration is most specific.

use std::path::Path;

use crate::run_document::Framework;

/// What detection found: a framework, and whether it is a guess (a Python project that names no
/// runner gets pytest, falling back to unittest when pytest is not installed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detected {
    pub framework: Framework,
    pub guessed: bool,
}

/// The framework for the project at `root`, or None when nothing says. Only reads files: nothing
/// from the project runs outside the sandbox.
pub fn detect(root: &Path) -> Option<Detected> {
    let sure = |framework| {
        Some(Detected {
            framework,
            guessed: false,
        })
    };
    let has = |name: &str| root.join(name).exists();
    let contains = |name: &str, needle: &str| {
        read_project_file(root, name).is_some_and(|text| text.contains(needle))
    };
    if has("Cargo.toml") {
        return sure(if has(".config/nextest.toml") {
            Framework::Nextest
        } else {
            Framework::Cargo
        });
    }
    if has("go.mod") {
        return sure(Framework::Go);
    }
    let config = |stem: &str| {
        ["js", "mjs", "cjs", "ts", "mts"]
            .iter()
            .any(|ext| has(&format!("{stem}.config.{ext}")))
    };
    if config("vitest") || contains("package.json", "\"vitest\"") {
        return sure(Framework::Vitest);
    }
    if config("jest") || contains("package.json", "\"jest\"") {
        return sure(Framework::Jest);
    }
    if contains("package.json", "node --test") {
        return sure(Framework::Node);
    }
    if has("pytest.ini")
        || has("conftest.py")
        || has("tests/conftest.py")
        || contains("pyproject.toml", "[tool.pytest")
        || contains("setup.cfg", "[tool:pytest]")
        || contains("tox.ini", "[pytest]")
    {
        return sure(Framework::Pytest);
    }
    if has("pyproject.toml") || has("setup.py") || has("setup.cfg") || has_python_tests(root) {
        // pytest runs unittest suites too and reports better.
        return Some(Detected {
            framework: Framework::Pytest,
            guessed: true,
        });
    }
    if makefile_has_test_target(root) {
        return sure(Framework::Make);
    }
    None
}

/// A project's configuration file, when it is a regular file (not a link, which could lead to a
/// host file, a device like /dev/zero or a FIFO that never ends), cut at 1 MiB.
pub fn read_project_file(root: &Path, name: &str) -> Option<String> {
    crate::workspace::read_regular_file(&root.join(name), 1 << 20)
}

/// `test_*.py` or `*_test.py` files at the top or in `tests/` or `test/`.
fn has_python_tests(root: &Path) -> bool {
    ["", "tests", "test"].iter().any(|dir| {
        std::fs::read_dir(root.join(dir)).is_ok_and(|entries| {
            entries.flatten().any(|entry| {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
            })
        })
    })
}

pub fn makefile_has_test_target(root: &Path) -> bool {
    ["GNUmakefile", "makefile", "Makefile"].iter().any(|name| {
        read_project_file(root, name).is_some_and(|text| {
            text.lines()
                .any(|line| line.starts_with("test:") || line.starts_with("test :"))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_from_project_files() {
        let dir = std::env::temp_dir().join(format!("autocoder-detect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let found = |dir: &Path| detect(dir).map(|d| (d.framework, d.guessed));
        assert_eq!(found(&dir), None);
        std::fs::write(dir.join("Makefile"), "all:\n\ttrue\ntest: all\n\ttrue\n").unwrap();
        assert_eq!(found(&dir), Some((Framework::Make, false)));
        std::fs::write(dir.join("test_x.py"), "").unwrap();
        assert_eq!(found(&dir), Some((Framework::Pytest, true)));
        std::fs::write(dir.join("pytest.ini"), "[pytest]\n").unwrap();
        assert_eq!(found(&dir), Some((Framework::Pytest, false)));
        std::fs::write(dir.join("Cargo.toml"), "[package]\n").unwrap();
        assert_eq!(found(&dir), Some((Framework::Cargo, false)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
