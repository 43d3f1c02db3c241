//! Which test framework a project uses, from its files: the first match wins, in the order a
//! project's own configuration is most specific.

use std::path::Path;

use super::report::Framework;

/// The framework for the project at `root`, or None when nothing says.
pub fn detect(root: &Path) -> Option<Framework> {
    let has = |name: &str| root.join(name).exists();
    let contains = |name: &str, needle: &str| {
        std::fs::read_to_string(root.join(name)).is_ok_and(|text| text.contains(needle))
    };
    if has("Cargo.toml") {
        return Some(Framework::Cargo);
    }
    if has("pytest.ini")
        || has("conftest.py")
        || has("tests/conftest.py")
        || contains("pyproject.toml", "[tool.pytest")
        || contains("setup.cfg", "[tool:pytest]")
        || contains("tox.ini", "[pytest]")
    {
        return Some(Framework::Pytest);
    }
    if has("pyproject.toml") || has("setup.py") || has("setup.cfg") || has_python_tests(root) {
        // pytest runs unittest suites too and reports better; use it when it is installed.
        return Some(if pytest_installed(root) {
            Framework::Pytest
        } else {
            Framework::Unittest
        });
    }
    if makefile_has_test_target(root) {
        return Some(Framework::Make);
    }
    None
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

fn pytest_installed(root: &Path) -> bool {
    std::process::Command::new(super::python(root))
        .args(["-c", "import pytest"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

pub fn makefile_has_test_target(root: &Path) -> bool {
    ["GNUmakefile", "makefile", "Makefile"].iter().any(|name| {
        std::fs::read_to_string(root.join(name)).is_ok_and(|text| {
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
        assert_eq!(detect(&dir), None);
        std::fs::write(dir.join("Makefile"), "all:\n\ttrue\ntest: all\n\ttrue\n").unwrap();
        assert_eq!(detect(&dir), Some(Framework::Make));
        std::fs::write(dir.join("pytest.ini"), "[pytest]\n").unwrap();
        assert_eq!(detect(&dir), Some(Framework::Pytest));
        std::fs::write(dir.join("Cargo.toml"), "[package]\n").unwrap();
        assert_eq!(detect(&dir), Some(Framework::Cargo));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
