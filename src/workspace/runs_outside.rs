//! The files of a project that something on the host runs or obeys, outside any sandbox: git's
//! own (`.git` in any form, the hooks directory `core.hooksPath` names, `.gitattributes` filters,
//! `.gitmodules`), editors' tasks (`.vscode/`, `.idea/`), dev containers, CI (`.github/`,
//! `.gitlab-ci.yml`, `.circleci/`), direnv's `.envrc`, git hook managers (`.husky/`,
//! `.pre-commit-config.yaml`). heal never changes them and review flags a change to them: a
//! model's edit there would run as the user at their next `git commit`, `cd` or editor start.
//! Matched at any depth and in any case (a case-insensitive filesystem takes `.GIT` for `.git`).
//! Build files (`Makefile`, `package.json`) are not among them: the tests run them, sandboxed.

use std::path::Path;

/// Directories whose every file runs (or is obeyed) outside the sandbox, wherever they are.
const DIRECTORIES: &[&str] = &[
    ".git",
    ".github",
    ".circleci",
    ".vscode",
    ".idea",
    ".devcontainer",
    ".husky",
];

/// Files that do, wherever they are.
const FILES: &[&str] = &[
    ".git",
    ".envrc",
    ".pre-commit-config.yaml",
    ".gitattributes",
    ".gitmodules",
    ".gitlab-ci.yml",
];

/// What runs outside the sandbox in one workspace.
#[derive(Debug, Clone, Default)]
pub struct RunsOutside {
    /// The hooks directory the repository's config names, from the workspace's root and in
    /// lower case, when it is inside the workspace.
    hooks: Option<String>,
}

impl RunsOutside {
    /// For `workspace` (canonical): the fixed names, and the directory `core.hooksPath` names,
    /// read as git reads it (the repository's config, the user's, includes; relative to the
    /// repository's top).
    pub fn of(workspace: &Path) -> RunsOutside {
        RunsOutside {
            hooks: hooks_path(workspace).and_then(|hooks| inside(workspace, &hooks)),
        }
    }

    /// Whether `path` (from the workspace's root, `/`-separated) runs or is obeyed outside.
    pub fn matches(&self, path: &str) -> bool {
        let lower = path.to_ascii_lowercase();
        let parts: Vec<&str> = lower.split('/').filter(|part| !part.is_empty()).collect();
        let Some((name, dirs)) = parts.split_last() else {
            return false;
        };
        dirs.iter().any(|dir| DIRECTORIES.contains(dir))
            || FILES.contains(name)
            || self
                .hooks
                .as_deref()
                .is_some_and(|hooks| lower == hooks || lower.starts_with(&format!("{hooks}/")))
    }

    /// What a refusal says of `path`.
    pub fn why(&self, path: &str) -> String {
        format!(
            "{path} runs outside the sandbox (git hooks and attributes, editor tasks, direnv, CI): it is not changed here"
        )
    }
}

/// `core.hooksPath` as git resolves it for the repository holding `workspace`: `~` expanded,
/// a relative path taken from the repository's top. None when it is not set or git cannot say.
fn hooks_path(workspace: &Path) -> Option<std::path::PathBuf> {
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .arg("-C")
            .arg(workspace)
            // Read whoever owns the repository (root healing a user's clone).
            .args(["-c", "safe.directory=*"])
            .args(args)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let said = String::from_utf8(output.stdout).ok()?;
        let said = said.trim_end_matches('\n');
        (output.status.success() && !said.is_empty()).then(|| said.to_string())
    };
    let hooks = std::path::PathBuf::from(git(&["config", "--get", "--path", "core.hooksPath"])?);
    match hooks.is_absolute() {
        true => Some(hooks),
        false => Some(Path::new(&git(&["rev-parse", "--show-toplevel"])?).join(hooks)),
    }
}

/// `path` from the workspace's root, in lower case, when it lies inside it (`..` resolved).
fn inside(workspace: &Path, path: &Path) -> Option<String> {
    let mut resolved = std::path::PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                resolved.pop();
            }
            std::path::Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    // Through the links git would follow, as the workspace itself is canonical.
    let resolved = resolved.canonicalize().unwrap_or(resolved);
    let relative = resolved.strip_prefix(workspace).ok()?.to_str()?;
    Some(relative.trim_end_matches('/').to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_runs_outside_is_found_at_any_depth_and_in_any_case() {
        let outside = RunsOutside {
            hooks: Some("tools/githooks".into()),
        };
        for path in [
            ".git/hooks/pre-commit",
            "sub/.git",
            "vendor/lib/.GIT/config",
            "sub/.vscode/tasks.json",
            ".Github/workflows/ci.yml",
            "web/.husky/pre-push",
            "a/b/.envrc",
            ".pre-commit-config.yaml",
            "x/.gitattributes",
            ".gitmodules",
            ".devcontainer/devcontainer.json",
            ".idea/workspace.xml",
            "Tools/GitHooks/pre-commit",
            "tools/githooks",
        ] {
            assert!(outside.matches(path), "{path}");
        }
        for path in [
            "Makefile",
            "src/git.py",
            "docs/.github.md",
            "tools/githooks-old/x",
            "my.envrc.txt",
            "",
        ] {
            assert!(!outside.matches(path), "{path}");
        }
    }

    #[test]
    fn the_hooks_directory_is_read_from_the_repositorys_config_as_git_would() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .args(args)
                .current_dir(&root)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .status()
                .unwrap();
            assert!(status.success());
        };
        git(&["init", "-q"]);
        assert!(RunsOutside::of(&root).hooks.is_none());
        git(&["config", "core.hooksPath", ".githooks"]);
        assert_eq!(RunsOutside::of(&root).hooks.as_deref(), Some(".githooks"));
        // A package of the repository: the path is the repository's, seen from the package.
        std::fs::create_dir_all(root.join("pkg/.githooks")).unwrap();
        git(&["config", "core.hooksPath", "pkg/.githooks/"]);
        let package = root.join("pkg");
        assert_eq!(
            RunsOutside::of(&package).hooks.as_deref(),
            Some(".githooks")
        );
        // Outside the workspace: nothing of it to keep.
        git(&["config", "core.hooksPath", "/etc/hooks"]);
        assert!(RunsOutside::of(&root).hooks.is_none());
    }
}
