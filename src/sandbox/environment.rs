//! The command's environment: cleared, then an allow-list, the toolchain homes and `--env`.
//!
//! Toolchains find themselves through variables that default to paths under `$HOME` (rustup's
//! `RUSTUP_HOME`, pyenv's `PYENV_ROOT`); since the command gets a private `HOME`, those are set
//! explicitly to where they really are. Anything whose name looks like a credential is withheld
//! unless `--env` names it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::Failure;

/// Variables passed through from our environment when set.
const ALLOWED: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "NO_COLOR",
    "COLORTERM",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "JAVA_HOME",
    "GOROOT",
    "SOURCE_DATE_EPOCH",
];

/// The environment the command starts with, and the names that were withheld.
#[derive(Debug)]
pub(crate) struct CommandEnvironment {
    pub vars: Vec<(OsString, OsString)>,
    pub withheld: Vec<String>,
}

/// Toolchain home directories found for this user, to pass as variables and to allow reading.
#[derive(Debug, Default)]
pub(crate) struct ToolchainHomes {
    pub vars: Vec<(&'static str, PathBuf)>,
}

impl ToolchainHomes {
    /// Finds the homes of rustup, cargo and pyenv, from the environment or their defaults.
    pub(crate) fn discover(home: Option<&Path>) -> ToolchainHomes {
        let mut vars = Vec::new();
        for (name, default) in [
            ("CARGO_HOME", ".cargo"),
            ("RUSTUP_HOME", ".rustup"),
            ("PYENV_ROOT", ".pyenv"),
        ] {
            let dir = std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| home.map(|h| h.join(default)));
            if let Some(dir) = dir.filter(|d| d.is_dir()) {
                vars.push((name, dir));
            }
        }
        // Found on PATH when the variables are unset and HOME says nothing (a client that passes
        // only PATH): pyenv's shims directory and cargo's bin directory.
        for dir in std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
        {
            let parent = dir.parent().map(Path::to_path_buf);
            if dir.ends_with("shims") && !vars.iter().any(|(n, _)| *n == "PYENV_ROOT") {
                if let Some(root) = parent.filter(|p| p.join("libexec/pyenv").exists()) {
                    vars.push(("PYENV_ROOT", root));
                }
            } else if dir.ends_with(".cargo/bin") && !vars.iter().any(|(n, _)| *n == "CARGO_HOME") {
                if let Some(cargo) = parent {
                    let rustup = cargo.with_file_name(".rustup");
                    vars.push(("CARGO_HOME", cargo));
                    if rustup.is_dir() && !vars.iter().any(|(n, _)| *n == "RUSTUP_HOME") {
                        vars.push(("RUSTUP_HOME", rustup));
                    }
                }
            }
        }
        for name in ["JAVA_HOME", "GOROOT"] {
            if let Some(dir) = std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|d| d.is_dir())
            {
                vars.push((name, dir));
            }
        }
        ToolchainHomes { vars }
    }

    /// The directories the command may read. Of cargo's home only the installed binaries and
    /// the download caches: its `credentials.toml` and `config.toml` can hold registry tokens.
    pub(crate) fn readable_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for (name, dir) in &self.vars {
            if *name == "CARGO_HOME" {
                dirs.extend(
                    ["bin", "registry", "git"]
                        .iter()
                        .map(|sub| dir.join(sub))
                        .filter(|d| d.is_dir()),
                );
            } else {
                dirs.push(dir.clone());
            }
        }
        dirs
    }
}

/// Builds the environment from ours, the toolchain homes, the private home and temp directory,
/// and the `--env` requests (`KEY=VALUE` sets, `KEY` copies ours).
pub(crate) fn build(
    requests: &[String],
    toolchains: &ToolchainHomes,
    home: &Path,
    tmpdir: &Path,
) -> Result<CommandEnvironment, Failure> {
    let mut vars: Vec<(OsString, OsString)> = Vec::new();
    let mut withheld = Vec::new();
    let set = |vars: &mut Vec<(OsString, OsString)>, key: OsString, value: OsString| {
        vars.retain(|(k, _)| *k != key);
        vars.push((key, value));
    };
    for (key, value) in std::env::vars_os() {
        let Some(name) = key.to_str() else { continue };
        if crate::secrets::is_credential_name(name) {
            withheld.push(name.to_string());
        } else if ALLOWED.contains(&name) || name.starts_with("LC_") {
            set(&mut vars, key, value);
        }
    }
    if !vars.iter().any(|(k, _)| k == "PATH") {
        set(
            &mut vars,
            "PATH".into(),
            "/usr/local/bin:/usr/bin:/bin".into(),
        );
    }
    for (name, dir) in &toolchains.vars {
        set(
            &mut vars,
            OsString::from(name),
            dir.clone().into_os_string(),
        );
    }
    set(&mut vars, "HOME".into(), home.into());
    set(&mut vars, "TMPDIR".into(), tmpdir.into());
    for request in requests {
        let (key, value) = match request.split_once('=') {
            Some((key, value)) => (key, Some(OsString::from(value))),
            None => (request.as_str(), std::env::var_os(request)),
        };
        // A name as shells write them: no program could read `BAD KEY` or `1X` as a variable.
        let valid_name = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid_name
            || value
                .as_deref()
                .is_some_and(|v| v.as_encoded_bytes().contains(&0))
        {
            return Err(Failure::usage(format!(
                "--env {request}: expected KEY=VALUE or KEY, KEY of letters, digits and _ (not first a digit), with no NUL byte"
            )));
        }
        match value {
            Some(value) => {
                withheld.retain(|name| name != key);
                set(&mut vars, OsString::from(key), value);
            }
            None => crate::log::warn(
                "sandbox",
                &format!("--env {key}: not set in this environment, not passed"),
            ),
        }
    }
    withheld.sort();
    Ok(CommandEnvironment { vars, withheld })
}
