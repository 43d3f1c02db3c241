//! `autocoder run-tests` in the Python environments users really have, outside the project: an
//! activated virtualenv, one first on `PATH`, a `.venv` link, Poetry's and pipenv's folders, a
//! conda prefix; as root and as an ordinary user. Each environment is made the way its tool
//! makes it (`python -m venv`, the tool's folder and name for the project) and holds a module
//! the project's tests import, which only that environment has.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{chown_tree, section_of, Run, TempDir, Test};

/// The module only the environment has, and the project's test that imports it.
const DEPENDENCY: &str = "shop_dependency";
const TEST: &str = "\
import os
import shutil
import sys
import unittest


class EnvironmentTest(unittest.TestCase):
    def test_the_environments_module_is_imported(self):
        import shop_dependency
        self.assertEqual(shop_dependency.VALUE, 42)

    def test_the_environment_is_active_for_what_the_tests_start(self):
        prefix = os.environ.get('VIRTUAL_ENV') or os.environ['CONDA_PREFIX']
        self.assertTrue(shutil.which('python').startswith(prefix), shutil.which('python'))
";

/// A project whose tests need the environment; `uid`: handed to that user.
fn project(uid: Option<u32>) -> Test {
    let test = match uid {
        Some(uid) => Test::new().run_as_user(uid),
        None => Test::new(),
    };
    test.dir().write("test_shop.py", TEST);
    test
}

/// A virtualenv at `dir`, made by `python -m venv` of `python`, holding the module.
fn venv(python: &str, dir: &Path) {
    let made = Command::new(python)
        .args(["-m", "venv", "--without-pip"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(made.success(), "{python} -m venv {}", dir.display());
    let lib = std::fs::read_dir(dir.join("lib"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("python")
        })
        .unwrap();
    std::fs::write(
        lib.join(format!("site-packages/{DEPENDENCY}.py")),
        "VALUE = 42\n",
    )
    .unwrap();
}

/// A folder of its own for the environments, handed to `uid` too.
fn place(uid: Option<u32>) -> TempDir {
    let place = TempDir::new();
    if let Some(uid) = uid {
        chown_tree(place.path(), uid);
    }
    place
}

fn handed(place: &TempDir, uid: Option<u32>) {
    if let Some(uid) = uid {
        chown_tree(place.path(), uid);
    }
}

/// Runs the project's tests with unittest (the system Python has no pytest) and checks they
/// passed in the environment at `env`, which the sandbox showed for `why`.
#[track_caller]
fn passes_in(test: Test, env: &Path, why: &str) -> Value {
    let run: Run = test.args(["run-tests", "--framework", "unittest"]).run();
    let tests = section_of(&run, "tests");
    assert_eq!(tests["outcome"], "passed", "{tests:#}\n{}", run.stderr());
    assert_eq!(tests["counts"]["passed"], 2, "{tests:#}");
    let env = env.canonicalize().unwrap();
    let shown = &tests["sandbox"]["layers"]["filesystem"]["environments"];
    assert!(
        shown
            .as_array()
            .unwrap()
            .iter()
            .any(|line| line.as_str() == Some(&format!("{}: {why}", env.display()))),
        "{shown:#}"
    );
    tests
}

/// Poetry's hash of the project's path, in Python, as Poetry writes it.
fn poetry_hash(project: &Path) -> String {
    let script = "import base64, hashlib, os, sys\n\
                  h = hashlib.sha256(os.path.realpath(sys.argv[1]).encode()).digest()\n\
                  print(base64.urlsafe_b64encode(h).decode()[:8])";
    python_says(script, project)
}

/// pipenv's hash of the project's `Pipfile` path, in Python, as pipenv writes it.
fn pipenv_hash(project: &Path) -> String {
    let script = "import base64, hashlib, sys\n\
                  h = hashlib.sha256(sys.argv[1].encode()).digest()[:6]\n\
                  print(base64.urlsafe_b64encode(h).decode()[:8])";
    python_says(script, &project.canonicalize().unwrap().join("Pipfile"))
}

fn python_says(script: &str, arg: &Path) -> String {
    let output = Command::new(SYSTEM_PYTHON)
        .args(["-c", script])
        .arg(arg)
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// The system's Python: an ordinary user can run it (pyenv's is under root's home).
const SYSTEM_PYTHON: &str = "/usr/bin/python3";

fn an_activated_virtualenv(uid: Option<u32>) {
    let place = place(uid);
    let env = place.path().join("venvs/shop");
    venv(SYSTEM_PYTHON, &env);
    handed(&place, uid);
    let test = project(uid).env("VIRTUAL_ENV", &env).env(
        "PATH",
        format!("{}/bin:/usr/local/bin:/usr/bin:/bin", env.display()),
    );
    let tests = passes_in(test, &env, "the virtualenv VIRTUAL_ENV names");
    let python = format!("{}/bin/python", env.canonicalize().unwrap().display());
    assert_eq!(tests["command"][0], python.as_str(), "{tests:#}");
}

#[test]
fn an_activated_virtualenv_outside_the_project_is_the_tests_as_root() {
    an_activated_virtualenv(None);
}

#[test]
fn an_activated_virtualenv_outside_the_project_is_the_tests_as_a_user() {
    an_activated_virtualenv(Some(4243));
}

fn shapes(uid: Option<u32>) {
    // A virtualenv first on PATH, not activated.
    let place = place(uid);
    let env = place.path().join("envs/first");
    venv(SYSTEM_PYTHON, &env);
    handed(&place, uid);
    let test = project(uid).env(
        "PATH",
        format!("{}/bin:/usr/local/bin:/usr/bin:/bin", env.display()),
    );
    passes_in(test, &env, "the first python on PATH");

    // The project's .venv, a link to one elsewhere.
    let test = project(uid);
    std::os::unix::fs::symlink(&env, test.path().join(".venv")).unwrap();
    if let Some(uid) = uid {
        chown_tree(test.path(), uid);
    }
    passes_in(test, &env, "the project's .venv");

    // Poetry's: NAME-HASH-pyX.Y in its virtualenvs folder, under the user's cache directory.
    let test = project(uid);
    test.dir().write(
        "pyproject.toml",
        "[tool.poetry]\nname = \"shop\"\nversion = \"0.1.0\"\n",
    );
    let cache = place.path().join("cache");
    let env = cache.join(format!(
        "pypoetry/virtualenvs/shop-{}-py3.11",
        poetry_hash(test.path())
    ));
    venv(SYSTEM_PYTHON, &env);
    handed(&place, uid);
    let test = test.env("XDG_CACHE_HOME", &cache);
    passes_in(test, &env, "Poetry's environment for the project");

    // pipenv's: NAME-HASH in WORKON_HOME.
    let test = project(uid);
    test.dir().write("Pipfile", "[packages]\n");
    let name = test
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let env = place
        .path()
        .join(format!("workon/{name}-{}", pipenv_hash(test.path())));
    venv(SYSTEM_PYTHON, &env);
    handed(&place, uid);
    let test = test.env("WORKON_HOME", place.path().join("workon"));
    passes_in(test, &env, "pipenv's environment for the project");

    // A conda environment: a prefix with its own interpreter and `conda-meta`, activated.
    let prefix = place.path().join("miniconda3/envs/shop");
    for dir in ["bin", "conda-meta", "lib/python3.11/site-packages"] {
        std::fs::create_dir_all(prefix.join(dir)).unwrap();
    }
    std::fs::write(prefix.join("conda-meta/history"), "").unwrap();
    std::fs::write(
        prefix.join(format!("lib/python3.11/site-packages/{DEPENDENCY}.py")),
        "VALUE = 42\n",
    )
    .unwrap();
    // Its interpreter, here the system's run with the prefix's packages.
    let site = prefix
        .canonicalize()
        .unwrap()
        .join("lib/python3.11/site-packages");
    let python = prefix.join("bin/python");
    std::fs::write(
        &python,
        format!(
            "#!/bin/sh\nPYTHONPATH={} exec {SYSTEM_PYTHON} \"$@\"\n",
            site.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    handed(&place, uid);
    let test = project(uid).env("CONDA_PREFIX", &prefix);
    passes_in(test, &prefix, "the conda environment CONDA_PREFIX names");
}

#[test]
fn environments_where_tools_keep_them_are_the_tests_as_root() {
    shapes(None);
}

#[test]
fn environments_where_tools_keep_them_are_the_tests_as_a_user() {
    shapes(Some(4244));
}

#[test]
fn the_installation_a_virtualenv_was_made_from_is_shown_and_nothing_of_the_home_around_it() {
    // pyenv's Python, under root's home; the run knows of no pyenv (no PYENV_ROOT, another
    // HOME, no shims on PATH): only the venv's pyvenv.cfg names the installation.
    let base = PathBuf::from(python_of_pyenv());
    let place = place(None);
    let env = place.path().join("venvs/shop");
    venv(&base.join("bin/python3").display().to_string(), &env);
    let home = TempDir::new();
    let test = project(None)
        .env("VIRTUAL_ENV", &env)
        .env("HOME", home.path())
        .env("PYENV_ROOT", "")
        .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    let why = "the Python installation the virtualenv VIRTUAL_ENV names was made from";
    let tests = passes_in(test, &base, why);
    let read_only = &tests["sandbox"]["layers"]["filesystem"]["read_only"];
    let shown: Vec<&str> = read_only
        .as_array()
        .unwrap()
        .iter()
        .map(|path| path.as_str().unwrap())
        .collect();
    let real_home = std::env::var("HOME").unwrap();
    assert!(
        !shown
            .iter()
            .any(|path| Path::new(&real_home).starts_with(path)),
        "{read_only:#}"
    );
}

/// The installation of the Python the tests' PATH finds first (pyenv's, on this machine).
fn python_of_pyenv() -> String {
    let output = Command::new("python3")
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .unwrap();
    let prefix = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert!(
        !prefix.starts_with("/usr"),
        "this machine's python3 is the system's ({prefix}); the test needs pyenv's"
    );
    prefix
}

/// pyenv's Python 3.7 on this machine (pytest 3 runs on nothing later).
fn python_3_7() -> PathBuf {
    let versions = PathBuf::from(std::env::var("HOME").unwrap()).join(".pyenv/versions");
    std::fs::read_dir(&versions)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("3.7.")
        })
        .max()
        .unwrap_or_else(|| panic!("no Python 3.7 in {}: pyenv install 3.7", versions.display()))
        .join("bin/python3")
}

#[test]
fn pytest_3s_failures_keep_their_file_and_heal_repairs_with_them() {
    // pytest 3 writes `FAIL tests/test_calc.py::test_add` in its summary.
    let test = Test::new();
    test.dir()
        .write("calc.py", "def add(a, b):\n    return a - b\n");
    test.dir().write(
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(2, 0) == 2\n",
    );
    let venv = test.path().join(".venv");
    let made = Command::new(python_3_7())
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success());
    let installed = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "pytest==3.10.1",
        ])
        .status()
        .unwrap();
    assert!(
        installed.success(),
        "pip install pytest==3.10.1 (from PyPI)"
    );
    let document = Test::new_like(&test)
        .args(["run-tests", "--workspace"])
        .arg(test.path())
        .run()
        .expect_status(1);
    let tests = section_of(&document, "tests");
    assert_eq!(
        tests["failures"][0]["id"], "tests/test_calc.py::test_add",
        "{tests:#}"
    );
    let run = test
        .args(["heal", "--engine", "mutate", "--jobs", "1"])
        .stdin(document.output.stdout.clone())
        .run()
        .expect_status(0);
    let heal = section_of(&run, "heal");
    assert_eq!(heal["status"], "green", "{heal:#}\n{}", run.stderr());
    assert_eq!(
        std::fs::read_to_string(run.dir.path().join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n"
    );
}

#[test]
fn what_the_workspace_says_of_environments_shows_nothing_else_of_the_host() {
    // A hostile repository (or a test run before) wrote the workspace's .venv: a pyvenv.cfg
    // naming a directory shaped like a Python installation that holds secrets, and a link to a
    // directory with a pyvenv.cfg beside other things.
    let outside = TempDir::new();
    let shaped = outside.path().join("shaped");
    std::fs::create_dir_all(shaped.join("lib/python3.11")).unwrap();
    std::fs::create_dir_all(shaped.join("bin")).unwrap();
    std::fs::write(shaped.join("lib/python3.11/os.py"), "").unwrap();
    std::fs::write(
        shaped.join(".netrc"),
        "machine example.com password hunter2\n",
    )
    .unwrap();
    let other = outside.path().join("other");
    std::fs::create_dir_all(other.join("bin")).unwrap();
    std::fs::write(other.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::os::unix::fs::symlink(SYSTEM_PYTHON, other.join("bin/python")).unwrap();
    std::fs::write(other.join("secret.txt"), "OTHER SECRET\n").unwrap();
    let probe = "import os, unittest\n\n\nclass Probe(unittest.TestCase):\n    def test_nothing_outside_is_there(self):\n        for path in [PATHS]:\n            self.assertFalse(os.path.exists(path), path)\n";
    let paths = format!(
        "{:?}, {:?}",
        shaped.join(".netrc").display().to_string(),
        other.join("secret.txt").display().to_string()
    );

    // The workspace's pyvenv.cfg names the shaped directory.
    let test = Test::new();
    test.dir()
        .write("test_probe.py", &probe.replace("PATHS", &paths));
    venv(SYSTEM_PYTHON, &test.path().join(".venv"));
    std::fs::write(
        test.path().join(".venv/pyvenv.cfg"),
        format!("home = {}\n", shaped.join("bin").display()),
    )
    .unwrap();
    let run = test.args(["run-tests", "--framework", "unittest"]).run();
    let tests = section_of(&run, "tests");
    assert_eq!(tests["outcome"], "passed", "{tests:#}\n{}", run.stderr());
    assert_eq!(
        tests["sandbox"]["layers"]["filesystem"]["environments"],
        serde_json::json!([]),
        "{tests:#}"
    );

    // Its .venv links to the other directory: not an environment a tool made.
    let test = Test::new();
    test.dir()
        .write("test_probe.py", &probe.replace("PATHS", &paths));
    std::os::unix::fs::symlink(&other, test.path().join(".venv")).unwrap();
    let run = test.args(["run-tests", "--framework", "unittest"]).run();
    let tests = section_of(&run, "tests");
    assert_eq!(tests["outcome"], "passed", "{tests:#}\n{}", run.stderr());
    assert_eq!(tests["command"][0], "python3", "{tests:#}");
}
