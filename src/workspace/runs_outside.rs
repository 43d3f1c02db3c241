//! The files of a project that something on the host runs or obeys, outside any sandbox: git's
//! own (`.git` in any form, the hooks directory `core.hooksPath` names, the files the
//! repository's config includes, `.gitattributes` filters, `.gitmodules`, `.lfsconfig`),
//! editors' tasks and startup files (`.vscode/`, `.idea/`, `.zed/`, `*.code-workspace`, `.exrc`,
//! `.nvim.lua`), dev containers, CI (`.github/`, `.gitlab-ci.yml`, `.circleci/`, Gitea's,
//! Forgejo's, Buildkite's, Drone's, Woodpecker's, Bitbucket's, Azure's, Jenkins', Travis'), the
//! shell's on entering a directory (`.envrc`, mise's), git hook managers (`.husky/`,
//! `.pre-commit-config.yaml`). heal never changes them, review flags a change to them, and the
//! sandbox holds those git obeys read-only: an edit there would run as the user at their next
//! `git commit`, `cd`, push or editor start. Matched at any depth and in any case (a
//! case-insensitive filesystem takes `.GIT` for `.git`). Build files (`Makefile`,
//! `package.json`) are not among them: the tests run them, sandboxed.

use std::path::{Path, PathBuf};

/// Directories whose every file runs (or is obeyed) outside the sandbox, wherever they are.
const DIRECTORIES: &[&str] = &[
    ".git",
    ".github",
    ".gitea",
    ".forgejo",
    ".gitlab",
    ".circleci",
    ".buildkite",
    ".woodpecker",
    ".azure-pipelines",
    ".vscode",
    ".idea",
    ".zed",
    ".helix",
    ".devcontainer",
    ".husky",
    ".mise",
    ".claude",
    ".cursor",
];

/// Files that do, wherever they are (names in lower case).
const FILES: &[&str] = &[
    ".git",
    ".envrc",
    ".devcontainer.json",
    ".mcp.json",
    ".dir-locals.el",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    ".lefthook-local.yml",
    ".gitattributes",
    ".gitmodules",
    ".lfsconfig",
    ".gitlab-ci.yml",
    ".drone.yml",
    ".woodpecker.yml",
    ".woodpecker.yaml",
    "bitbucket-pipelines.yml",
    "azure-pipelines.yml",
    "jenkinsfile",
    ".travis.yml",
    ".exrc",
    ".nvimrc",
    ".nvim.lua",
    ".mise.toml",
    "mise.toml",
    ".mise.local.toml",
    "mise.local.toml",
];

/// Endings of such files' names (`project.code-workspace`).
const ENDINGS: &[&str] = &[".code-workspace"];

/// Beginnings of such files' names: `Jenkinsfile.groovy`; lint-staged's configuration, which the
/// commit hooks run (`.lintstagedrc.json`, `lint-staged.config.js`).
const BEGINNINGS: &[&str] = &["jenkinsfile", ".lintstagedrc", "lint-staged.config."];

/// Directories two names deep whose files do (mise's `.config/mise/`).
const NESTED: &[[&str; 2]] = &[[".config", "mise"]];

/// What runs outside the sandbox in one workspace.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunsOutside {
    /// What the repository's config names inside the workspace, from its root and in lower
    /// case: the hooks directory, and the files the config is read from (`include.path`).
    named: Vec<String>,
}

impl RunsOutside {
    /// For `workspace` (canonical): the fixed names, and what the repository's config names,
    /// read as git reads it (the repository's config, the user's, includes; a relative hooks
    /// directory from the repository's top).
    pub(crate) fn of(workspace: &Path) -> RunsOutside {
        let named = git_config_names(workspace)
            .iter()
            .filter_map(|path| inside(workspace, path))
            .collect();
        RunsOutside { named }
    }

    /// Whether `path` (from the workspace's root, `/`-separated) runs or is obeyed outside.
    pub(crate) fn matches(&self, path: &str) -> bool {
        let lower = path.to_ascii_lowercase();
        let parts: Vec<&str> = lower.split('/').filter(|part| !part.is_empty()).collect();
        let Some((name, dirs)) = parts.split_last() else {
            return false;
        };
        let whole = parts.join("/");
        dirs.iter().any(|dir| DIRECTORIES.contains(dir))
            || FILES.contains(name)
            || ENDINGS.iter().any(|ending| name.ends_with(ending))
            || BEGINNINGS
                .iter()
                .any(|beginning| name.starts_with(beginning))
            || dirs
                .windows(2)
                .any(|pair| NESTED.iter().any(|nested| pair == nested))
            || self
                .named
                .iter()
                .any(|named| whole == *named || whole.starts_with(&format!("{named}/")))
    }

    /// Whether `path` is one git on the host obeys: in `.git` (in any form, at any depth, in any
    /// case), or the hooks directory and config files the repository's config names.
    pub(crate) fn obeyed_by_git(&self, path: &str) -> bool {
        let lower = path.to_ascii_lowercase();
        let parts: Vec<&str> = lower.split('/').filter(|part| !part.is_empty()).collect();
        let whole = parts.join("/");
        parts.contains(&".git")
            || self
                .named
                .iter()
                .any(|named| whole == *named || whole.starts_with(&format!("{named}/")))
    }

    /// What a refusal says of `path`.
    pub(crate) fn why(&self, path: &str) -> String {
        format!(
            "{path} runs outside the sandbox (git hooks, config and attributes, editor tasks, direnv, CI): it is not changed here"
        )
    }

    /// What git on the host obeys in `workspace`, for the sandbox (see `GitPaths`): `.git` (a
    /// directory, a file naming one, or a link), the submodules' `.git`, and the git directory,
    /// hooks directory and config files the repository names there.
    pub(crate) fn git_paths(&self, workspace: &Path) -> GitPaths {
        let mut paths = vec![PathBuf::from(".git")];
        let modules = std::fs::read_to_string(workspace.join(".gitmodules")).unwrap_or_default();
        paths.extend(modules.lines().filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "path").then(|| Path::new(value.trim()).join(".git"))
        }));
        paths.extend(self.named.iter().map(PathBuf::from));
        paths.retain(|path| {
            path.components()
                .all(|part| matches!(part, std::path::Component::Normal(_)))
        });
        paths.sort();
        paths.dedup();
        let mut found = GitPaths::default();
        for path in paths {
            let absolute = workspace.join(&path);
            // One inside another is held with it.
            if found.held.iter().any(|outer| absolute.starts_with(outer)) {
                continue;
            }
            match reached_without_links(workspace, &absolute) {
                true => {
                    found.pinned.extend(
                        absolute
                            .ancestors()
                            .skip(1)
                            .take_while(|dir| *dir != workspace)
                            .map(Path::to_path_buf),
                    );
                    found.held.push(absolute);
                }
                false => {
                    let now = identity(&absolute);
                    found.watched.push((absolute, now));
                }
            }
        }
        found.pinned.sort();
        found.pinned.dedup();
        found
    }
}

/// What git on the host obeys in a workspace, as the sandbox keeps it from a command.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct GitPaths {
    /// Those that exist, reached through no link: mounted read-only.
    pub held: Vec<PathBuf>,
    /// The directories between the workspace and those: mounted on themselves (writable), so
    /// that none can be renamed away for a copy the command made.
    pub pinned: Vec<PathBuf>,
    /// Those missing, or reached through a link: what is there after the command, if it is not
    /// what was there before (the device and inode, or nothing), was made by the command.
    pub watched: Vec<(PathBuf, Option<(u64, u64)>)>,
}

/// `path`'s device and inode (of a link, the link's own), or None when nothing is there.
pub(crate) fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    path.symlink_metadata()
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}

/// Whether `path` (below `root`) exists, and each step from `root` to it is no link.
fn reached_without_links(root: &Path, path: &Path) -> bool {
    let Ok(below) = path.strip_prefix(root) else {
        return false;
    };
    let mut at = root.to_path_buf();
    below.components().all(|part| {
        at.push(part);
        at.symlink_metadata()
            .is_ok_and(|meta| !meta.file_type().is_symlink())
    })
}

/// What the config of the repository holding `workspace` names that git obeys: `core.hooksPath`
/// as git resolves it (`~` expanded, a relative path from the repository's top), and each file
/// the config is read from (the repository's, the files it includes). Nothing when the
/// workspace is in no repository, or git cannot say.
fn git_config_names(workspace: &Path) -> Vec<PathBuf> {
    // The repository's top, as git finds it; no git asked where there is none (a sandbox's
    // start stays quick).
    let Some(top) = workspace
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .map(Path::to_path_buf)
    else {
        return Vec::new();
    };
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .arg("-C")
            .arg(workspace)
            // Read whoever owns the repository (root healing a user's clone).
            .args(["-c", "safe.directory=*"])
            .args(args)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_CONFIG_PARAMETERS")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let said = String::from_utf8(output.stdout).ok()?;
        let said = said.trim_end_matches('\n');
        (output.status.success() && !said.is_empty()).then(|| said.to_string())
    };
    let Some(listed) = git(&["config", "--list", "--includes", "--show-origin", "-z"]) else {
        return Vec::new();
    };
    // `~` is the home of whoever runs git there: the repository's owner, not us (root running
    // over a user's clone).
    let owner_home = || {
        use std::os::unix::fs::MetadataExt;
        let uid = top.join(".git").symlink_metadata().ok()?.uid();
        nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
            .ok()
            .flatten()
            .map(|user| user.dir)
    };
    let expand = |path: &str| -> Option<PathBuf> {
        let Some(rest) = path.strip_prefix('~') else {
            return Some(PathBuf::from(path));
        };
        let (user, rest) = rest.split_once('/').unwrap_or((rest, ""));
        let home = match user {
            "" => owner_home()?,
            name => nix::unistd::User::from_name(name).ok().flatten()?.dir,
        };
        Some(home.join(rest))
    };
    // Relative paths (`.git/config`, a relative hooks directory) are from the top.
    let mut named = Vec::new();
    let mut hooks = None;
    // NUL-separated: each entry's origin (`file:PATH`), then `key\nvalue`.
    let fields: Vec<&str> = listed.split('\0').collect();
    for pair in fields.chunks(2) {
        let [origin, entry] = pair else { continue };
        let origin = origin.strip_prefix("file:").map(|file| top.join(file));
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        let key = key.to_ascii_lowercase();
        if key == "core.hookspath" {
            hooks = Some(value.to_string());
        }
        // An include, from the file that names it: read even when it sets nothing yet.
        let include =
            key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path"));
        if let (true, Some(origin)) = (include, &origin) {
            let dir = origin.parent().unwrap_or(&top);
            named.extend(expand(value).map(|path| dir.join(path)));
        }
        named.extend(origin);
    }
    if let Some(hooks) = hooks.filter(|hooks| !hooks.is_empty()) {
        named.extend(expand(&hooks).map(|path| top.join(path)));
    }
    named.extend(git_dir(&top));
    named
}

/// Where the repository at `top` keeps its git directory, when `.git` is a file naming it
/// (`gitdir: PATH`, git's `--separate-git-dir`) or a link to it.
fn git_dir(top: &Path) -> Option<PathBuf> {
    let dot_git = top.join(".git");
    let meta = dot_git.symlink_metadata().ok()?;
    if meta.file_type().is_symlink() {
        return dot_git.canonicalize().ok();
    }
    if !meta.is_file() {
        return None;
    }
    let text = crate::workspace::read_regular_file(&dot_git, 4096)?;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(top.join(named))
}

/// `path` from the workspace's root, in lower case, when it lies inside it (`..` resolved).
fn inside(workspace: &Path, path: &Path) -> Option<String> {
    let mut resolved = PathBuf::new();
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
    (!relative.is_empty()).then(|| relative.trim_end_matches('/').to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_runs_outside_is_found_at_any_depth_and_in_any_case() {
        let outside = RunsOutside {
            named: vec!["tools/githooks".into(), "shared.gitconfig".into()],
        };
        for path in [
            ".git/hooks/pre-commit",
            "sub/.git",
            "vendor/lib/.GIT/config",
            "sub/.vscode/tasks.json",
            ".Github/workflows/ci.yml",
            ".gitea/workflows/ci.yml",
            "web/.husky/pre-push",
            "a/b/.envrc",
            ".pre-commit-config.yaml",
            "x/.gitattributes",
            ".gitmodules",
            ".devcontainer/devcontainer.json",
            ".idea/workspace.xml",
            "Jenkinsfile",
            "shop.code-workspace",
            ".nvim.lua",
            "web/lefthook.yml",
            "Jenkinsfile.groovy",
            ".lintstagedrc.json",
            ".claude/settings.json",
            "pkg/.config/mise/config.toml",
            ".gitlab/ci/build.yml",
            "Tools/GitHooks/pre-commit",
            "tools/githooks",
            "shared.gitconfig",
        ] {
            assert!(outside.matches(path), "{path}");
        }
        for path in [
            "Makefile",
            "package.json",
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
    fn the_hooks_directory_and_included_config_are_read_as_git_reads_them() {
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
        let named = |dir: &Path| {
            let mut named = RunsOutside::of(dir).named;
            named.retain(|path| !path.starts_with(".git/"));
            named
        };
        git(&["init", "-q"]);
        assert!(named(&root).is_empty());
        git(&["config", "core.hooksPath", ".githooks"]);
        std::fs::write(root.join("shared.gitconfig"), "[core]\n").unwrap();
        git(&["config", "include.path", "../shared.gitconfig"]);
        assert_eq!(named(&root), ["shared.gitconfig", ".githooks"]);
        // A package of the repository: the path is the repository's, seen from the package.
        std::fs::create_dir_all(root.join("pkg/.githooks")).unwrap();
        git(&["config", "core.hooksPath", "pkg/.githooks/"]);
        assert_eq!(named(&root.join("pkg")), [".githooks"]);
        // Outside the workspace: nothing of it to keep.
        git(&["config", "core.hooksPath", "/etc/hooks"]);
        assert_eq!(named(&root), ["shared.gitconfig"]);
        // What the sandbox holds read-only: .git, the submodules', what the config names.
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        std::fs::write(
            root.join(".gitmodules"),
            "[submodule \"sub\"]\n\tpath = sub\n",
        )
        .unwrap();
        git(&["config", "core.hooksPath", "tools/hooks"]);
        std::fs::create_dir_all(root.join("tools/hooks")).unwrap();
        git(&["config", "--add", "include.path", "../local.gitconfig"]);
        let paths = RunsOutside::of(&root).git_paths(&root);
        let relative = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths
                .iter()
                .map(|path| path.strip_prefix(&root).unwrap().to_path_buf())
                .collect()
        };
        assert_eq!(
            relative(&paths.held),
            [".git", "shared.gitconfig", "sub/.git", "tools/hooks"].map(PathBuf::from)
        );
        // Their directories cannot be renamed away; what is missing is watched.
        assert_eq!(relative(&paths.pinned), ["sub", "tools"].map(PathBuf::from));
        assert_eq!(paths.watched, [(root.join("local.gitconfig"), None)]);
    }
}
