//! The git CLI on the user's repository, made safe to run where sandboxed code has written:
//! `.git/config` and `.gitattributes` are the sandbox's to change, so every setting that makes git
//! run a program (hooks, fsmonitor, credential helpers, ssh commands, the ext:: transport,
//! receive-pack and upload-pack paths, external diffs, textconv, clean filters) is overridden on
//! the command line or avoided, nothing prompts, and no optional locks are taken. Commits are made
//! with plumbing and a private index, so the user's checkout, index and working tree are never
//! touched.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::error::Failure;

pub(crate) struct Git {
    dir: PathBuf,
    /// Settings that switch off the filter drivers the repository's config names: git would
    /// run them (on `diff`, `add`, `status`) outside any sandbox, and sandboxed code can write
    /// that config.
    filters_off: Vec<String>,
}

/// Settings that win over anything in the repository's config.
pub(crate) const SAFE_CONFIG: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "credential.helper=",
    "core.sshCommand=ssh",
    "core.gitProxy=",
    "protocol.ext.allow=never",
    "diff.external=",
    "core.pager=cat",
    "core.editor=true",
    "commit.gpgSign=false",
];

/// How long a local git step may take, and one that talks to the forge (a push of a big
/// history). Without a limit a FIFO the sandbox left in `.git` would hang open-pr forever.
const LOCAL_TIMEOUT: Duration = Duration::from_secs(120);
const NETWORK_TIMEOUT: Duration = Duration::from_secs(900);

pub(crate) enum Waited {
    Spawn(std::io::Error),
    TimedOut,
}

/// Runs `command` with `stdin` fed to it and its output collected, killing it after `timeout`.
pub(crate) fn output_within(
    mut command: Command,
    stdin: Option<&str>,
    timeout: Duration,
) -> Result<Output, Waited> {
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(Waited::Spawn)?;
    let feeder = child.stdin.take().zip(stdin).map(|(mut pipe, text)| {
        let text = text.to_string();
        std::thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        })
    });
    let collect = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = collect(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = collect(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    // wait-timeout installs a SIGCHLD handler; the sandbox's supervisor, which waits on pidfds
    // and retries what a signal interrupts, is not disturbed by it.
    let status = match child.wait_timeout(timeout) {
        Ok(Some(status)) => status,
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Waited::TimedOut);
        }
    };
    if let Some(feeder) = feeder {
        let _ = feeder.join();
    }
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

impl Git {
    /// The repository containing `dir`.
    pub(crate) fn open(dir: &Path) -> Result<Git, Failure> {
        let mut git = Git {
            dir: dir.to_path_buf(),
            filters_off: Vec::new(),
        };
        git.run(&["rev-parse", "--show-toplevel"], &[], None)
            .map_err(|err| match err.hint {
                // git did not run (not installed) or hung: that failure says what to do.
                Some(_) => err,
                None => Failure::usage(format!(
                    "{} is not a git repository: {:#}",
                    dir.display(),
                    err.error
                ))
                .with_hint("run it in the project's clone, or give it with --workspace"),
            })?;
        // `filter.NAME.clean`, `.smudge`, `.process` (and `.required`) for every NAME set.
        let listed = git
            .run(
                &["config", "--name-only", "--get-regexp", r"^filter\."],
                &[],
                None,
            )
            .unwrap_or_default();
        let mut names: Vec<&str> = listed
            .lines()
            .filter_map(|key| {
                key.strip_prefix("filter.")?
                    .rsplit_once('.')
                    .map(|(name, _)| name)
            })
            .collect();
        names.sort_unstable();
        names.dedup();
        git.filters_off = names
            .iter()
            .flat_map(|name| {
                ["clean=", "smudge=", "process=", "required=false"]
                    .map(|setting| format!("filter.{name}.{setting}"))
            })
            .collect();
        Ok(git)
    }

    /// The repository `workspace` is in, as git finds it: the nearest directory at or above it
    /// that has a `.git`, and the workspace's path below that top ("" at the top), for a
    /// project in a subdirectory of its repository (a monorepo's package).
    pub(crate) fn top_of(workspace: &Path) -> Result<(PathBuf, String), Failure> {
        let canonical = workspace.canonicalize().map_err(|err| {
            Failure::usage(format!("{}: {err} (the workspace)", workspace.display()))
                .with_hint("give the project's clone")
        })?;
        let top = canonical
            .ancestors()
            .find(|dir| dir.join(".git").symlink_metadata().is_ok())
            .ok_or_else(|| {
                Failure::usage(format!(
                    "{} is not in a git repository (no .git in it or above it)",
                    workspace.display()
                ))
                .with_hint("run it in the project's clone, or give that with --workspace")
            })?;
        let below = canonical.strip_prefix(top).expect("an ancestor");
        let below = below.to_str().ok_or_else(|| {
            Failure::usage(format!(
                "{}: its path in the repository is not UTF-8",
                workspace.display()
            ))
        })?;
        Ok((top.to_path_buf(), below.to_string()))
    }

    /// Refuses a repository through which git would read files outside the workspace (or wait
    /// forever): sandboxed
    /// code may have written `.git`, and a `.git` file, alternates, a `commondir` or a symbolic
    /// link anywhere in it (a ref, `packed-refs`, an object directory) could make HEAD another
    /// repository's commit, whose files would then go into the commit, the pull request's body
    /// and the push; a linked ref directory would also have `update-ref` write elsewhere.
    pub(crate) fn check_confined(workspace: &Path) -> Result<(), Failure> {
        let git_dir = workspace.join(".git");
        let refuse = |what: String| {
            Failure::usage(format!("{} cannot be used: {what}", git_dir.display())).with_hint(
                "open-pr works on a repository whose .git directory holds everything itself, at \
                 the workspace's top (clone it plainly, or `git repack -a -d` and remove \
                 objects/info/alternates)",
            )
        };
        if !workspace.is_dir() {
            return Err(Failure::usage(format!(
                "{}: no such directory (the workspace)",
                workspace.display()
            ))
            .with_hint("give the project's clone"));
        }
        if git_dir.symlink_metadata().is_err() {
            return Err(Failure::usage(format!(
                "{} is not the top of a git repository (no .git in it)",
                workspace.display()
            ))
            .with_hint("run it at the top of the project's clone, or give that with --workspace"));
        }
        if !git_dir.symlink_metadata().is_ok_and(|meta| meta.is_dir()) {
            return Err(refuse(
                "it is not a directory (a link or a .git file), so git could read another \
                 repository"
                    .into(),
            ));
        }
        for borrowed in ["objects/info/alternates", "commondir"] {
            if git_dir.join(borrowed).symlink_metadata().is_ok() {
                return Err(refuse(format!(
                    "it has {borrowed}, so git would read outside the workspace"
                )));
            }
        }
        let mut pending = vec![git_dir.clone()];
        while let Some(dir) = pending.pop() {
            let entries = std::fs::read_dir(&dir)
                .map_err(|err| refuse(format!("{} cannot be read ({err})", dir.display())))?;
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_symlink() {
                    // Hooks never run (core.hooksPath is /dev/null), so links there are harmless.
                    if dir != git_dir.join("hooks") {
                        return Err(refuse(format!(
                            "{} is a symbolic link, which git would follow outside the workspace",
                            entry.path().display()
                        )));
                    }
                } else if kind.is_dir() {
                    pending.push(entry.path());
                } else if !kind.is_file() {
                    // A FIFO or a device would have git wait or read forever.
                    return Err(refuse(format!(
                        "{} is not a regular file (git would wait on it forever)",
                        entry.path().display()
                    )));
                }
            }
        }
        Ok(())
    }

    /// A new bare repository at `dir` (which must not exist), without templates (no hooks), that
    /// reads objects from `borrowed` too: the network steps run in it, so that none of the
    /// settings in the workspace's config (proxies, TLS verification, URL rewrites, programs)
    /// applies to them. The caller removes `dir`.
    pub(crate) fn private_bare(dir: &Path, borrowed: &Git) -> Result<Git, Failure> {
        let objects = borrowed.run(
            &[
                "rev-parse",
                "--path-format=absolute",
                "--git-path",
                "objects",
            ],
            &[],
            None,
        )?;
        std::fs::create_dir(dir)
            .map_err(|err| Failure::external(format!("cannot make {}: {err}", dir.display())))?;
        let git = Git {
            dir: dir.to_path_buf(),
            filters_off: Vec::new(),
        };
        git.run(&["init", "--bare", "--quiet", "--template="], &[], None)?;
        std::fs::write(dir.join("objects/info/alternates"), format!("{objects}\n")).map_err(
            |err| Failure::external(format!("cannot borrow the repository's objects: {err}")),
        )?;
        Ok(git)
    }

    fn command(&self) -> Command {
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(&self.dir)
            .args(SAFE_CONFIG.iter().flat_map(|setting| ["-c", setting]))
            .args(
                self.filters_off
                    .iter()
                    .flat_map(|setting| ["-c", setting.as_str()]),
            )
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            // A partial clone fetches missing objects through a remote's upload-pack, which the
            // repository's config names.
            .env("GIT_NO_LAZY_FETCH", "1")
            // `git replace` objects the sandbox made would change what commands show (the diff
            // in the pull request's body) from what is committed.
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            // The forge token reaches git only as the credential helper's own variable, for
            // the network steps; not every program git may start.
            .env_remove("GITHUB_TOKEN")
            .env_remove("GH_TOKEN")
            .env_remove("GH_ENTERPRISE_TOKEN")
            .env_remove("GITHUB_ENTERPRISE_TOKEN")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(Stdio::null());
        command
    }

    /// Runs git with extra variables (and stdin); returns its stdout, or its stderr as the error.
    pub(crate) fn run(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<&str>,
    ) -> Result<String, Failure> {
        self.run_within(args, env, stdin, LOCAL_TIMEOUT)
    }

    fn run_within(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<&str>,
        timeout: Duration,
    ) -> Result<String, Failure> {
        let mut command = self.command();
        command.args(args).envs(env.iter().copied());
        let output = output_within(command, stdin, timeout).map_err(|err| match err {
            Waited::Spawn(err) => {
                Failure::external(format!("cannot run git: {err}")).with_hint("install git")
            }
            Waited::TimedOut => Failure::external(format!(
                "git {} did not finish within {} s: stopped",
                subcommand(args),
                timeout.as_secs()
            ))
            .with_hint("a FIFO or a device in .git (config, HEAD, an include) makes git wait forever; check the repository"),
        })?;
        if !output.status.success() {
            let message = String::from_utf8_lossy(&output.stderr).trim().to_string();
            return Err(Failure::external(format!(
                "git {} failed: {message}",
                subcommand(args)
            )));
        }
        Ok(String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_string())
    }

    /// Like `run`, with extra `-c` settings (for a credential helper of our own).
    pub(crate) fn run_configured(
        &self,
        config: &[&str],
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<String, Failure> {
        let mut all: Vec<&str> = Vec::new();
        for setting in config {
            all.extend(["-c", setting]);
        }
        all.extend(args);
        self.run_within(&all, env, None, NETWORK_TIMEOUT)
    }

    /// Stages the tracked files' contents below the directory `under` (a path from the top; ""
    /// for all) from the working tree into the index `env` names, like
    /// `git add --update` but without clean filters (a `.gitattributes` the sandbox wrote could
    /// name a program): each file is hashed as it is.
    /// Long: list, check, hash, update, in order; the names are checked before hash-object reads them.
    pub(crate) fn stage_tracked_changes(
        &self,
        under: &str,
        env: &[(&str, &str)],
    ) -> Result<(), Failure> {
        let listing = self.run(&["ls-files", "-s", "-z", "--", &literal(under)], env, None)?;
        let mut paths = Vec::new();
        let mut entries = Vec::new();
        for entry in listing.split('\0').filter(|e| !e.is_empty()) {
            let Some((info, path)) = entry.split_once('\t') else {
                continue;
            };
            let mut fields = info.split(' ');
            let (Some(mode), Some(blob)) = (fields.next(), fields.next()) else {
                continue;
            };
            entries.push((mode.to_string(), blob.to_string(), path.to_string()));
        }
        let mut updates = String::new();
        let mut removals = Vec::new();
        let mut real_dirs = HashSet::new();
        for (mode, _, path) in &entries {
            if mode == "160000" {
                continue; // submodules keep their commit
            }
            // hash-object reads one path a line, dropping a final CR and unquoting a leading
            // quote: a name the sandbox chose that way would have it read another file (a link
            // beside it, to /etc/shadow) than the one checked here.
            if path.starts_with('"') || path.chars().any(|c| c.is_control()) {
                return Err(Failure::usage(format!(
                    "a tracked file's name has a control character or starts with a quote: {path:?}"
                ))
                .with_hint(
                    "rename it (git mv), or commit by hand; open-pr will not read it by name",
                ));
            }
            if self.beyond_symlink(path, &mut real_dirs) {
                // As for git: a path under a symbolic link is gone from the working tree.
                removals.push(path.clone());
                continue;
            }
            match self.dir.join(path).symlink_metadata() {
                Err(_) => removals.push(path.clone()),
                Ok(meta) if meta.file_type().is_file() => paths.push(path.clone()),
                Ok(_) => {}
            }
        }
        let hashes = if paths.is_empty() {
            String::new()
        } else {
            self.run(
                &["hash-object", "-w", "--no-filters", "--stdin-paths"],
                env,
                Some(&(paths.join("\n") + "\n")),
            )?
        };
        for (path, hash) in paths.iter().zip(hashes.lines()) {
            let (mode, blob, _) = entries
                .iter()
                .find(|(_, _, p)| p == path)
                .expect("listed above");
            let executable = {
                use std::os::unix::fs::PermissionsExt;
                self.dir
                    .join(path)
                    .symlink_metadata()
                    .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
            };
            let new_mode = if executable { "100755" } else { "100644" };
            if hash != blob || (mode != "120000" && mode != new_mode) {
                updates.push_str(&format!("{new_mode} {hash}\t{path}\n"));
            }
        }
        for path in &removals {
            updates.push_str(&format!(
                "0 0000000000000000000000000000000000000000\t{path}\n"
            ));
        }
        if !updates.is_empty() {
            self.run(&["update-index", "--index-info"], env, Some(&updates))?;
        }
        Ok(())
    }

    /// Whether a directory on the way from the working tree's top to `path` is not a real
    /// directory (a symbolic link, a file, or missing). git never reads a path beyond a symbolic
    /// link, and neither may open-pr: one the sandbox put there would have it commit (and push)
    /// a file from outside the workspace. `real_dirs` remembers the directories already seen.
    fn beyond_symlink(&self, path: &str, real_dirs: &mut HashSet<PathBuf>) -> bool {
        let mut dir = self.dir.clone();
        let Some((parents, _)) = path.rsplit_once('/') else {
            return false;
        };
        for part in parents.split('/') {
            dir.push(part);
            if real_dirs.contains(&dir) {
                continue;
            }
            if !dir.symlink_metadata().is_ok_and(|meta| meta.is_dir()) {
                return true;
            }
            real_dirs.insert(dir.clone());
        }
        false
    }

    /// Stages `path` as it is in the working tree (tracked or not), without clean filters.
    pub(crate) fn stage_file(&self, path: &str, env: &[(&str, &str)]) -> Result<(), Failure> {
        use std::os::unix::fs::PermissionsExt;
        if path.starts_with('/') || path.split('/').any(|part| part == "..") {
            return Err(
                Failure::usage(format!("--add {path}: not a path inside the workspace"))
                    .with_hint("name files relative to the workspace"),
            );
        }
        if self.beyond_symlink(path, &mut HashSet::new()) {
            return Err(Failure::usage(format!(
                "--add {path}: a directory on its way is a symbolic link or missing"
            ))
            .with_hint("name the file by its real path inside the workspace"));
        }
        let meta = self
            .dir
            .join(path)
            .symlink_metadata()
            .map_err(|err| Failure::usage(format!("--add {path}: {err}")))?;
        if !meta.is_file() {
            return Err(Failure::usage(format!("--add {path}: not a regular file")));
        }
        let hash = self.run(
            &["hash-object", "-w", "--no-filters", "--", path],
            env,
            None,
        )?;
        let mode = if meta.permissions().mode() & 0o111 != 0 {
            "100755"
        } else {
            "100644"
        };
        self.run(
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("{mode},{hash},{path}"),
            ],
            env,
            None,
        )
        .map(drop)
    }

    /// Puts `path` back as it is in HEAD in the index `env` names (plumbing: `git reset` would
    /// refresh the index, and so run clean filters).
    pub(crate) fn unstage(&self, path: &str, env: &[(&str, &str)]) -> Result<(), Failure> {
        let entry = self.run(&["ls-tree", "HEAD", "--", path], env, None)?;
        let line = match entry.split_once('\t').and_then(|(info, _)| {
            let mut fields = info.split(' ');
            Some((fields.next()?.to_string(), fields.nth(1)?.to_string()))
        }) {
            Some((mode, blob)) => format!("{mode} {blob}\t{path}\n"),
            None => format!("0 0000000000000000000000000000000000000000\t{path}\n"),
        };
        self.run(&["update-index", "--index-info"], env, Some(&line))
            .map(drop)
    }

    /// A setting from the repository's (and the user's) git config.
    pub(crate) fn config(&self, key: &str) -> Option<String> {
        self.run(&["config", "--get", key], &[], None)
            .ok()
            .filter(|v| !v.is_empty())
    }

    /// A setting from the user's own git config (global, then system), not the repository's,
    /// which sandboxed code may have written.
    pub(crate) fn user_config(&self, key: &str) -> Option<String> {
        ["--global", "--system"].iter().find_map(|scope| {
            self.run(&["config", scope, "--includes", "--get", key], &[], None)
                .ok()
                .filter(|v| !v.is_empty())
        })
    }
}

/// The git command among `args`, past the options given to git itself (`-c key=value`).
/// A pathspec matching the path `path` from the top exactly (and what is below it), whatever
/// characters it has; the whole tree for "".
pub(crate) fn literal(path: &str) -> String {
    format!(":(top,literal){path}")
}

fn subcommand<'a>(args: &[&'a str]) -> &'a str {
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match *word {
            "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => {
                words.next();
            }
            option if option.starts_with('-') => {}
            command => return command,
        }
    }
    ""
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_git_command_is_named_past_git_s_own_options() {
        assert_eq!(
            subcommand(&["-c", "core.hooksPath=/dev/null", "commit", "-q"]),
            "commit"
        );
        assert_eq!(subcommand(&["--no-pager", "-C", "/x", "push"]), "push");
        assert_eq!(
            subcommand(&["--git-dir", "/x/.git", "--work-tree", "/x", "add"]),
            "add"
        );
        assert_eq!(subcommand(&["status"]), "status");
        assert_eq!(subcommand(&[]), "");
    }
}
