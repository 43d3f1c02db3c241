//! Which test framework a project uses, from its files: the first match wins, in the order a
//! project's own configuration is most specific.

use std::path::Path;

use crate::run_document::Framework;

/// What detection found: a framework, whether it is a guess (a Python project that names no
/// runner gets pytest, falling back to unittest when pytest is not installed), and what in the
/// project said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Detected {
    pub framework: Framework,
    pub guessed: bool,
    pub reason: String,
}

/// The framework for the project at `root`, or None when nothing says. Only reads files: nothing
/// from the project runs outside the sandbox.
pub(crate) fn detect(root: &Path) -> Option<Detected> {
    let sure = |framework, reason: String| {
        Some(Detected {
            framework,
            guessed: false,
            reason,
        })
    };
    let has = |name: &str| root.join(name).exists();
    let contains = |name: &str, needle: &str| {
        read_project_file(root, name).is_some_and(|text| text.contains(needle))
    };
    if has("Cargo.toml") {
        return if has(".config/nextest.toml") {
            sure(
                Framework::Nextest,
                "Cargo.toml and .config/nextest.toml".into(),
            )
        } else {
            sure(Framework::Cargo, "Cargo.toml".into())
        };
    }
    if has("go.mod") {
        return sure(Framework::Go, "go.mod".into());
    }
    if let Some((framework, reason)) = javascript_runner(root) {
        return sure(framework, reason);
    }
    // (file, the section it must hold if any, how the reason names it)
    let pytest_config = [
        ("pytest.ini", None, "pytest.ini"),
        ("conftest.py", None, "conftest.py"),
        ("tests/conftest.py", None, "tests/conftest.py"),
        (
            "pyproject.toml",
            Some("[tool.pytest"),
            "pyproject.toml's [tool.pytest]",
        ),
        (
            "setup.cfg",
            Some("[tool:pytest]"),
            "setup.cfg's [tool:pytest]",
        ),
        ("tox.ini", Some("[pytest]"), "tox.ini's [pytest]"),
    ];
    for (file, section, shown) in pytest_config {
        let found = section.map_or_else(|| has(file), |section| contains(file, section));
        if found {
            return sure(Framework::Pytest, shown.into());
        }
    }
    // A project whose own test entry point is unittest: pytest would skip its doctests.
    if let Some(file) = declares_unittest(root) {
        return sure(
            Framework::Unittest,
            format!("{file} runs python -m unittest"),
        );
    }
    if has("pyproject.toml") || has("setup.py") || has("setup.cfg") || has_python_tests(root) {
        // pytest runs unittest suites too and reports better.
        return Some(Detected {
            framework: Framework::Pytest,
            guessed: true,
            reason: "a Python project that names no runner (pytest runs unittest suites too)"
                .into(),
        });
    }
    if makefile_has_test_target(root) {
        return sure(Framework::Make, "the Makefile's test target".into());
    }
    None
}

/// Vitest, Jest or Node's runner, from the project's config files, the words of its `test`
/// script (`vitest run`, `jest --ci`, `tsc && vitest`, `node --test`), or its dependencies.
fn javascript_runner(root: &Path) -> Option<(Framework, String)> {
    let has_config = |stem: &str| {
        ["js", "mjs", "cjs", "ts", "mts"]
            .iter()
            .map(|ext| format!("{stem}.config.{ext}"))
            .find(|name| root.join(name).exists())
    };
    if let Some(config) = has_config("vitest") {
        return Some((Framework::Vitest, config));
    }
    if let Some(config) = has_config("jest") {
        return Some((Framework::Jest, config));
    }
    let package: serde_json::Value =
        serde_json::from_str(&read_project_file(root, "package.json")?).ok()?;
    if let Some(script) = package.pointer("/scripts/test").and_then(|s| s.as_str()) {
        let words = shell_words::split(script)
            .unwrap_or_else(|_| script.split_whitespace().map(String::from).collect());
        // A word names a program by its last path component (`node_modules/.bin/jest`).
        let program = |word: &str| word.rsplit('/').next().unwrap_or(word).to_string();
        for (at, word) in words.iter().enumerate() {
            let reason = |name: &str| format!("package.json's test script runs {name}");
            match program(word).as_str() {
                "vitest" => return Some((Framework::Vitest, reason("vitest"))),
                "jest" => return Some((Framework::Jest, reason("jest"))),
                "node" if words[at + 1..].iter().any(|word| word == "--test") => {
                    return Some((Framework::Node, reason("node --test")))
                }
                _ => {}
            }
        }
    }
    for (name, framework) in [("vitest", Framework::Vitest), ("jest", Framework::Jest)] {
        let depends = ["devDependencies", "dependencies"]
            .iter()
            .any(|deps| package.get(deps).and_then(|deps| deps.get(name)).is_some());
        if depends {
            return Some((framework, format!("package.json depends on {name}")));
        }
    }
    None
}

/// The project file that runs `python -m unittest` as the project's tests: its Makefile, its
/// tox.ini, or a GitHub Actions workflow.
fn declares_unittest(root: &Path) -> Option<String> {
    let runs_unittest = |text: &str| {
        text.lines().any(|line| {
            let line = line.trim();
            !line.starts_with('#') && line.contains("-m unittest")
        })
    };
    let mut candidates: Vec<String> = ["Makefile", "GNUmakefile", "makefile", "tox.ini"]
        .iter()
        .map(|name| name.to_string())
        .collect();
    if let Ok(workflows) = std::fs::read_dir(root.join(".github/workflows")) {
        let mut names: Vec<String> = workflows
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".yml") || name.ends_with(".yaml"))
            .map(|name| format!(".github/workflows/{name}"))
            .collect();
        names.sort();
        candidates.extend(names);
    }
    candidates
        .into_iter()
        .find(|name| read_project_file(root, name).is_some_and(|text| runs_unittest(&text)))
}

/// A project's configuration file, when it is a regular file (not a link, which could lead to a
/// host file, a device like /dev/zero or a FIFO that never ends), cut at 1 MiB.
pub(crate) fn read_project_file(root: &Path, name: &str) -> Option<String> {
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

pub(crate) fn makefile_has_test_target(root: &Path) -> bool {
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
        // The project's own entry point runs unittest: not pytest, which skips doctests.
        std::fs::write(
            dir.join("tox.ini"),
            "[testenv]\ncommands = {envpython} -m unittest {posargs}\n",
        )
        .unwrap();
        let detected = detect(&dir).unwrap();
        assert_eq!(
            (detected.framework, detected.reason.as_str()),
            (Framework::Unittest, "tox.ini runs python -m unittest")
        );
        std::fs::write(dir.join("pytest.ini"), "[pytest]\n").unwrap();
        assert_eq!(found(&dir), Some((Framework::Pytest, false)));
        std::fs::write(dir.join("Cargo.toml"), "[package]\n").unwrap();
        assert_eq!(found(&dir), Some((Framework::Cargo, false)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_test_script_is_read_word_by_word() {
        let dir = std::env::temp_dir().join(format!("autocoder-detect-js-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (script, framework) in [
            ("vitest run", Framework::Vitest),
            ("vitest --run", Framework::Vitest),
            ("jest --coverage", Framework::Jest),
            ("jest --ci", Framework::Jest),
            ("nub exec --node vitest run", Framework::Vitest),
            ("tsc -p . && node_modules/.bin/jest", Framework::Jest),
            ("node --test test/", Framework::Node),
        ] {
            let package = serde_json::json!({"scripts": {"test": script}});
            std::fs::write(dir.join("package.json"), package.to_string()).unwrap();
            assert_eq!(
                detect(&dir).map(|d| d.framework),
                Some(framework),
                "{script}"
            );
        }
        std::fs::write(
            dir.join("package.json"),
            r#"{"scripts": {"test": "mocha"}, "devDependencies": {"jest": "^30"}}"#,
        )
        .unwrap();
        let detected = detect(&dir).unwrap();
        assert_eq!(
            (detected.framework, detected.reason.as_str()),
            (Framework::Jest, "package.json depends on jest")
        );
        std::fs::write(
            dir.join("package.json"),
            r#"{"scripts": {"test": "mocha"}}"#,
        )
        .unwrap();
        assert_eq!(detect(&dir), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
