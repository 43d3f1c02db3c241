//! The Python environment a project's tests run in, found where its user keeps it: the
//! project's own `.venv` or `venv` (also a link to one elsewhere), the one the user activated
//! (`VIRTUAL_ENV`, conda's `CONDA_PREFIX`), the first Python on `PATH` when it is an
//! environment's, or the one Poetry or pipenv made for the project in their own folders.
//!
//! Most environments live outside the project, and the sandbox shows only what it is given: the
//! environment's own directory and the installation its interpreter comes from (`pyvenv.cfg`'s
//! `home`), read-only, never the home around them. What a test run (or the repository) could
//! write is trusted with nothing: an environment in the workspace shows no installation its
//! `pyvenv.cfg` names (the toolchains and system directories are there already), and a `.venv`
//! link out of it is followed only to a directory a tool made as an environment (nothing but
//! `bin`, `lib`, `include`, `pyvenv.cfg` and their like at its top), never to any directory.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// A Python environment and what the sandbox must show of it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PythonEnv {
    /// The interpreter, as the command names it (`.venv/bin/python` in the project, else an
    /// absolute path).
    pub python: String,
    /// The environment's directory, as it really is.
    pub root: PathBuf,
    /// A conda environment (`CONDA_PREFIX`), not a virtualenv (`VIRTUAL_ENV`).
    pub conda: bool,
    /// The directories outside the project the sandbox shows read-only, each with why.
    pub mounts: Vec<(PathBuf, String)>,
}

/// This process's variable `name`, when set and not empty.
fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

/// The environment of the project at `root` (canonical), if one is found; `home`, the user's.
pub(crate) fn find(root: &Path, home: Option<&Path>) -> Option<PythonEnv> {
    for name in [".venv", "venv"] {
        let dir = root.join(name);
        if !dir.join("bin/python").exists() {
            continue;
        }
        let outside = dir.canonicalize().is_ok_and(|real| !real.starts_with(root));
        if outside && !made_as_environment(&dir) {
            return None;
        }
        let why = format!("the project's {name}");
        return environment(root, &dir, why, Some(format!("{name}/bin/python")));
    }
    let named = |name: &str, why: &str| Some((var(name)?, why.to_string()));
    let places: [&dyn Fn() -> Option<(PathBuf, String)>; 5] = [
        &|| named("VIRTUAL_ENV", "the virtualenv VIRTUAL_ENV names"),
        &|| named("CONDA_PREFIX", "the conda environment CONDA_PREFIX names"),
        &first_on_path,
        &|| poetrys(root, home),
        &|| pipenvs(root, home),
    ];
    places.iter().find_map(|place| {
        let (dir, why) = place()?;
        environment(root, &dir, why, None)
    })
}

/// The environment at `dir`, found for `why`, when it holds an interpreter; `python` as the
/// command names it, else its absolute path.
fn environment(root: &Path, dir: &Path, why: String, python: Option<String>) -> Option<PythonEnv> {
    let real = dir.canonicalize().ok()?;
    let inside = real.starts_with(root);
    // Outside the project, an environment's marks: a link the tests could have made (`.venv`
    // in the workspace) shows nothing but another environment.
    let conda = real.join("conda-meta").is_dir();
    let marked = inside || conda || real.join("pyvenv.cfg").is_file();
    if !real.join("bin/python").exists() || !marked {
        return None;
    }
    let mut mounts = Vec::new();
    // A `pyvenv.cfg` in the workspace is the tests' to write: only one outside it is read.
    if !inside {
        let base = base_installation(&real);
        mounts.push((real.clone(), why.clone()));
        mounts.extend(
            base.map(|base| (base, format!("the Python installation {why} was made from"))),
        );
    }
    Some(PythonEnv {
        python: python.unwrap_or_else(|| real.join("bin/python").display().to_string()),
        root: real,
        conda,
        mounts,
    })
}

/// The installation a virtualenv's interpreter comes from: the directory above `pyvenv.cfg`'s
/// `home` (the base interpreter's `bin`), when it holds a standard library. A conda
/// environment holds its own.
fn base_installation(venv: &Path) -> Option<PathBuf> {
    let config = crate::workspace::read_regular_file(&venv.join("pyvenv.cfg"), 64 << 10)?;
    let home = config.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })?;
    let prefix = home.canonicalize().ok()?.parent()?.to_path_buf();
    has_standard_library(&prefix).then_some(prefix)
}

/// `prefix/lib/pythonX.Y/os.py`: a Python installation, not a directory a written
/// `pyvenv.cfg` names to be shown.
fn has_standard_library(prefix: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
        return false;
    };
    entries.flatten().any(|entry| {
        entry.file_name().to_string_lossy().starts_with("python")
            && entry.path().join("os.py").is_file()
    })
}

/// Whether `dir` holds only what venv, virtualenv, uv, Poetry or conda put at an environment's
/// top (and a `pyvenv.cfg` or `conda-meta`): a link the workspace holds is followed to nothing
/// else (a project made into a venv with `python -m venv .`, a directory that has a
/// `pyvenv.cfg` beside other things).
fn made_as_environment(dir: &Path) -> bool {
    const TOP: &[&str] = &[
        "bin",
        "lib",
        "lib64",
        "include",
        "share",
        "etc",
        "man",
        "src",
        "Scripts",
        "conda-meta",
        "pyvenv.cfg",
        ".gitignore",
        "CACHEDIR.TAG",
        ".lock",
        ".project",
        "pip-selfcheck.json",
    ];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let names: Vec<String> = entries
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    let marked = names.iter().any(|n| n == "pyvenv.cfg" || n == "conda-meta");
    marked && names.iter().all(|name| TOP.contains(&name.as_str()))
}

/// The first `python3` (or `python`) on `PATH`, when it is an environment's (a virtualenv's
/// `bin`, or a conda environment's): the user put it first without activating it.
fn first_on_path() -> Option<(PathBuf, String)> {
    let path = var("PATH")?;
    let bin = std::env::split_paths(&path)
        .find(|dir| dir.join("python3").is_file() || dir.join("python").is_file())?;
    let dir = bin.parent()?;
    (dir.join("pyvenv.cfg").is_file() || dir.join("conda-meta").is_dir())
        .then(|| (dir.to_path_buf(), "the first python on PATH".to_string()))
}

/// The environment Poetry made for the project: `NAME-HASH-pyX.Y` in its virtualenvs folder,
/// HASH from the project's path (Poetry's `generate_env_name`); the newest when there are
/// several Pythons'.
fn poetrys(root: &Path, home: Option<&Path>) -> Option<(PathBuf, String)> {
    let pyproject = crate::workspace::read_regular_file(&root.join("pyproject.toml"), 1 << 20)?;
    if !pyproject.contains("[tool.poetry") {
        return None;
    }
    let folder = var("POETRY_VIRTUALENVS_PATH")
        .or_else(|| var("POETRY_CACHE_DIR").map(|dir| dir.join("virtualenvs")))
        .or_else(|| {
            let cache = var("XDG_CACHE_HOME").or_else(|| home.map(|h| h.join(".cache")))?;
            Some(cache.join("pypoetry/virtualenvs"))
        })?;
    let hash = urlsafe(&Sha256::digest(root.as_os_str().as_encoded_bytes()), 8);
    let marker = format!("-{hash}-py");
    let newest = std::fs::read_dir(&folder)
        .ok()?
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().contains(&marker))
        .max_by_key(|entry| entry.metadata().and_then(|m| m.modified()).ok())?;
    Some((newest.path(), "Poetry's environment for the project".into()))
}

/// The environment pipenv made for the project: `NAME-HASH` in `WORKON_HOME` (by default
/// `~/.local/share/virtualenvs`), HASH from the `Pipfile`'s path.
fn pipenvs(root: &Path, home: Option<&Path>) -> Option<(PathBuf, String)> {
    let pipfile = root.join("Pipfile");
    if !pipfile.is_file() {
        return None;
    }
    let folder = var("WORKON_HOME").or_else(|| {
        let data = var("XDG_DATA_HOME").or_else(|| home.map(|h| h.join(".local/share")))?;
        Some(data.join("virtualenvs"))
    })?;
    let name: String = root
        .file_name()?
        .to_string_lossy()
        .chars()
        .map(|c| match c {
            ' ' | '&' | '$' | '`' | '!' | '*' | '@' | '"' | '(' | ')' | '[' | ']' | '\\' | '\r'
            | '\n' | '\t' => '_',
            c => c,
        })
        .take(42)
        .collect();
    let hash = urlsafe(
        &Sha256::digest(pipfile.as_os_str().as_encoded_bytes())[..6],
        8,
    );
    let dir = folder.join(format!("{name}-{hash}"));
    dir.is_dir()
        .then(|| (dir, "pipenv's environment for the project".into()))
}

/// The first `length` characters of `bytes` in URL-safe base64.
fn urlsafe(bytes: &[u8], length: usize) -> String {
    let mut encoded = base64::engine::general_purpose::URL_SAFE.encode(bytes);
    encoded.truncate(length);
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_in_place_of_pyvenv_cfg_is_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        nix::unistd::mkfifo(
            &dir.path().join("pyvenv.cfg"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        assert_eq!(base_installation(dir.path()), None);
    }

    #[test]
    fn a_link_is_followed_only_to_what_a_tool_made_as_an_environment() {
        let dir = tempfile::tempdir().unwrap();
        for entry in ["bin", "lib", "include"] {
            std::fs::create_dir(dir.path().join(entry)).unwrap();
        }
        std::fs::write(dir.path().join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        assert!(made_as_environment(dir.path()));
        std::fs::create_dir(dir.path().join("deep")).unwrap();
        assert!(!made_as_environment(dir.path()));
    }
}
