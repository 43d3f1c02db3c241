//! Running a project's tests in the sandbox and reading the result as data: which tests failed,
//! where and why. Runners disagree on everything (formats, exit codes: `cargo test` exits 101
//! for a compile error and for a failed test alike), so each has a parser and a classifier, and
//! the caller sees one `TestReport`.
//!
//! The outcome is decided from the exit code first and then checked against what the output
//! says: a run is never `passed` when the runner crashed or ran no test.

pub(crate) mod cache;
pub(crate) mod detect;
pub(crate) mod doctest;
pub(crate) mod explain;
pub(crate) mod frames;
pub(crate) mod gotest;
pub(crate) mod jest_events;
pub(crate) mod jest_json;
pub(crate) mod junit;
pub(crate) mod libtest;
pub(crate) mod nextest;
pub(crate) mod node_tap;
mod progress;
pub(crate) mod pytest;
pub(crate) mod python_env;
pub(crate) mod report;
pub(crate) mod unittest;
pub(crate) mod warm;
mod warm_node;

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use self::report::Parsed;
use crate::error::{Failure, Kind};
use crate::run_document::{Framework, Outcome, TestFailure, TestReport};
use crate::sandbox::policy::{BackendKind, PolicyRequest, SandboxPolicy};
use crate::sandbox::result::SandboxResult;
use crate::text::tail;

/// How a report's `framework_reason` ends when `--command` replaced the runner's: a later run
/// (heal's) runs the same command.
pub(crate) const GIVEN_COMMAND: &str = "the command given with --command";

/// How much of the runner's output the report keeps at its end.
const OUTPUT_TAIL: usize = 4000;

/// A test run to make.
#[derive(Clone)]
pub(crate) struct TestRequest {
    /// None: detect from the project's files.
    pub framework: Option<Framework>,
    /// Replaces the runner's command (split like a shell would, or run by `sh -c`).
    pub command: Option<String>,
    /// Run only these tests (ids as the report gives them).
    pub tests: Vec<String>,
    /// The sandbox to run in; its `command` is filled in here.
    pub sandbox: PolicyRequest,
    /// The workspace whose toolchain caches the run shares (heal's copy shares its original's);
    /// None: the run's own.
    pub caches_of: Option<std::path::PathBuf>,
    /// Told how many tests have ended, each time more have, while the run goes on.
    pub progress: Option<std::sync::Arc<dyn Fn(usize) + Send + Sync>>,
}

/// Runs the tests and reads the result.
pub(crate) fn run(request: TestRequest) -> Result<TestReport, Failure> {
    let root = request.sandbox.workspace.canonicalize().map_err(|err| {
        Failure::usage(format!(
            "--workspace {}: {err}",
            request.sandbox.workspace.display()
        ))
    })?;
    if !root.is_dir() {
        return Err(Failure::usage(format!(
            "--workspace {}: not a directory",
            request.sandbox.workspace.display()
        ))
        .with_hint("give the project's directory"));
    }
    let (framework, guessed, reason) = match request.framework {
        Some(framework) => (framework, false, "given with --framework".to_string()),
        None => match detect::detect(&root) {
            Some(detect::Detected {
                framework,
                guessed,
                reason,
            }) => (framework, guessed, reason),
            None => return Err(Failure::usage(format!(
                "cannot tell which test framework {} uses",
                root.display()
            ))
            .with_hint(
                "pass --framework (pytest, unittest, cargo, nextest, go, node, jest, vitest, make), \
                 or the command with --command",
            )),
        },
    };
    if framework == Framework::Junit {
        return Err(Failure::usage(
            "--framework junit reads a saved report: use it with --parse FILE",
        ));
    }
    if !request.tests.is_empty() {
        if request.command.is_some() {
            crate::log::warn(
                "run-tests",
                "--command runs as given: --tests is ignored (put the selection in the command)",
            );
        } else if framework == Framework::Make {
            crate::log::warn("run-tests", "make runs the whole suite: --tests is ignored");
        }
    }
    let mut report = match run_with(framework, &request, &root) {
        // A Python project that names no runner: pytest when it is there, unittest otherwise.
        Err(failure) if guessed && failure.kind == Kind::RunnerMissing => {
            crate::log::note("run-tests", "pytest is not installed; using unittest");
            let mut report = run_with(Framework::Unittest, &request, &root)?;
            report.framework_reason = format!("{reason}; pytest is not installed");
            return Ok(report);
        }
        other => other?,
    };
    report.framework_reason = match &request.command {
        Some(_) => format!("{reason}; {GIVEN_COMMAND}"),
        None => reason,
    };
    Ok(report)
}

/// Runs `framework`'s runner on the project at `root` in the sandbox, and reads its output.
fn run_with(
    framework: Framework,
    request: &TestRequest,
    root: &Path,
) -> Result<TestReport, Failure> {
    let (policy, command) = policy_for(framework, request, root)?;
    crate::log::note(
        "run-tests",
        &format!(
            "{} in {}: {}",
            framework.name(),
            root.display(),
            shell_words::join(&command)
        ),
    );
    let result = crate::sandbox::run(&policy, BackendKind::Native)
        .map_err(|failure| runner_missing(framework, request.command.is_some(), failure))?;
    report_of(framework, request, root, (policy.timeout, command), result)
}

/// The report of a run of `command` that `result` says how it went, cold or warm: its output
/// read as `framework`'s, its outcome, and why when it did not pass.
fn report_of(
    framework: Framework,
    request: &TestRequest,
    root: &Path,
    (timeout, command): (std::time::Duration, Vec<String>),
    result: SandboxResult,
) -> Result<TestReport, Failure> {
    let stdout = result.stdout.as_deref().unwrap_or("");
    let (stderr, events) = jest_events::split(result.stderr.as_deref().unwrap_or(""));
    let stderr = stderr.as_str();
    if let Some(missing) = not_installed(framework, &result, stderr, &command[0]) {
        return Err(missing);
    }
    let parsed = parsed_of(framework, request, root, &result, (stdout, stderr), &events)?;
    let outcome = classify(framework, &result, &parsed, !request.tests.is_empty());
    let mut output = String::with_capacity(stdout.len() + stderr.len() + 1);
    output.push_str(stdout);
    if !stdout.is_empty() && !stdout.ends_with('\n') {
        output.push('\n');
    }
    output.push_str(stderr);
    let mut sandbox_result = result.clone();
    sandbox_result.stdout = None;
    sandbox_result.stderr = None;
    let why = match outcome {
        Outcome::Error => Some(explain::why_error(&output, root, !request.tests.is_empty())),
        Outcome::Timeout => Some(explain::timed_out(
            timeout,
            &parsed.running,
            result.stdout_truncated || result.stderr_truncated,
        )),
        Outcome::Passed | Outcome::NoTests => None,
        _ => explain::others_files(&output, root)
            .or_else(|| explain::replaced_outside(&output, root))
            .or_else(|| {
                (!request.sandbox.network)
                    .then(|| explain::network_off(&parsed.failures, &output))
                    .flatten()
            }),
    };
    Ok(TestReport {
        reason: why.as_ref().map(|why| why.reason.clone()),
        hint: why.and_then(|why| why.hint),
        exit_code: result.exit_code,
        duration_ms: result.duration_ms,
        output_tail: tail(&output, OUTPUT_TAIL),
        sandbox: Some(sandbox_result),
        ..TestReport::new(framework, command, outcome, parsed)
    })
}

/// The sandbox's policy for the run, and the command it runs: the runner's (with autocoder's
/// reporter and cache flags) or the one given, with the runner's variables and caches.
fn policy_for(
    framework: Framework,
    request: &TestRequest,
    root: &Path,
) -> Result<(SandboxPolicy, Vec<String>), Failure> {
    let cache_root = request.caches_of.as_deref().unwrap_or(root);
    let cache = cache::dir_for(
        framework,
        cache_root,
        cache_root != root,
        request.sandbox.network,
    );
    // jest's and vitest's reports come at the end: this reporter says what a timeout stopped.
    let reporter = match request.command {
        None => jest_events::reporter(framework),
        Some(_) => None,
    };
    // A Python project's environment, wherever its user keeps it; make's recipes run its
    // Python too.
    let python = match framework {
        Framework::Pytest | Framework::Unittest | Framework::Make => {
            let home = crate::sandbox::native::view::home();
            python_env::find(root, home.as_deref())
        }
        _ => None,
    };
    let command = match &request.command {
        Some(command) => split_command(command)?,
        None => {
            let interpreter = python.as_ref().map_or("python3", |env| env.python.as_str());
            let mut command = runner_command(
                framework,
                &request.tests,
                (request.sandbox.network, interpreter),
                root,
            );
            if let Some((flags, _)) = &reporter {
                // After vitest's `run`, before the tests selected.
                command.splice(2..2, flags.iter().cloned());
            }
            if let Some(cache) = &cache {
                command.splice(1..1, cache::args(framework, &cache.dir));
            }
            command
        }
    };
    let mut sandbox = request.sandbox.clone();
    if let Some(done) = &request.progress {
        sandbox.watcher = Some(progress::watcher(framework, done.clone()));
    }
    if let Some((_, dir)) = reporter {
        sandbox.read_only.push(dir);
    }
    sandbox.command = command.iter().map(OsString::from).collect();
    if let Some(cache) = &cache {
        match cache.writable {
            true => sandbox.read_write.push(cache.dir.clone()),
            false => sandbox.read_only.push(cache.dir.clone()),
        }
    }
    // The runner's variables, unless the caller set the same with --env.
    let asked: Vec<String> = sandbox
        .env
        .iter()
        .map(|request| request.split('=').next().unwrap_or(request).to_string())
        .collect();
    sandbox.env.extend(
        runner_env(
            framework,
            request.sandbox.network,
            root,
            cache.as_ref().map(|cache| cache.dir.as_path()),
        )
        .into_iter()
        .chain(python.as_ref().map_or_else(Vec::new, activated))
        .filter(|var| !asked.iter().any(|key| var.starts_with(&format!("{key}=")))),
    );
    let mut policy = sandbox.resolve()?;
    policy.environments = python.map_or_else(Vec::new, |env| env.mounts);
    if let Some(cache) = &cache {
        let python = matches!(framework, Framework::Pytest | Framework::Unittest);
        if python && request.command.is_none() && cache::needs_seed(&cache.dir) {
            seed_bytecode(&policy, &command[0], &cache.dir, root);
        }
    }
    Ok((policy, command))
}

/// The runner is not installed where the command looked (cargo-nextest, pytest for this
/// interpreter): said so, with how to install it.
fn not_installed(
    framework: Framework,
    result: &SandboxResult,
    stderr: &str,
    program: &str,
) -> Option<Failure> {
    let failed = result.exit_code != Some(0);
    if framework == Framework::Nextest && failed && stderr.contains("no such command: `nextest`") {
        return Some(
            Failure::new(
                Kind::RunnerMissing,
                anyhow::anyhow!("cargo-nextest is not installed"),
            )
            .with_hint("install it: cargo install --locked cargo-nextest"),
        );
    }
    (framework == Framework::Pytest && failed && stderr.contains("No module named pytest")).then(
        || {
            Failure::new(
                Kind::RunnerMissing,
                anyhow::anyhow!("pytest is not installed for {program}"),
            )
            .with_hint(format!("install it: {program} -m pip install pytest"))
        },
    )
}

/// A jest or vitest run that wrote no report: what had ended and what was running, when a
/// test had started (its events); else the runner's own words, said.
fn without_report(framework: Framework, root: &Path, stderr: &str, events: &[&str]) -> Parsed {
    match jest_events::parse(events, Some(root)) {
        Some(parsed) => Parsed {
            crashed: true,
            ..parsed
        },
        None => {
            // Its heading and the line under it (`● Validation Error:`, `Preset x not found.`).
            crate::log::warn(
                "run-tests",
                &format!(
                    "{} stopped before it wrote a report: {}",
                    framework.name(),
                    first_lines(stderr, 2)
                ),
            );
            Parsed {
                crashed: true,
                ..Parsed::default()
            }
        }
    }
}

/// What the run's output says: its tests and failures, with what the runner's output leaves
/// unsaid made explicit (a runner that stopped before its report, found nothing to run, or a
/// test that started and never ended).
fn parsed_of(
    framework: Framework,
    request: &TestRequest,
    root: &Path,
    result: &SandboxResult,
    (stdout, stderr): (&str, &str),
    events: &[&str],
) -> Result<Parsed, Failure> {
    let parsed = parse_output(framework, stdout, stderr, &request.tests, root);
    let mut parsed = match parsed {
        // jest and vitest write no report when they stop before running anything (a preset
        // or config that does not load): the run is an error, in the runner's own words.
        Err(_)
            if matches!(framework, Framework::Jest | Framework::Vitest)
                && result.exit_code != Some(0) =>
        {
            without_report(framework, root, stderr, events)
        }
        other => other?,
    };
    // Runners that found nothing to run where they looked (no `test` target, no Go module):
    // the project is not set up for them, which no test failed.
    let not_set_up = match framework {
        Framework::Make => stderr.contains("No rule to make target 'test'"),
        Framework::Go => {
            stderr.contains("does not contain main module")
                || stderr.contains("go.mod file not found")
        }
        _ => false,
    };
    if not_set_up && request.command.is_none() {
        crate::log::warn(
            "run-tests",
            &format!(
                "{} found nothing to run here: {}",
                framework.name(),
                first_lines(stderr, 1)
            ),
        );
        parsed.crashed = true;
    }
    // nextest's libtest-json events now and then lack an ignored test's (it runs tests in
    // parallel); its own summary on stderr counts the skipped ones, but also the tests left
    // out by --tests.
    if framework == Framework::Nextest && request.tests.is_empty() {
        if let Some(skipped) = nextest::summary_skipped(stderr) {
            parsed.counts.skipped = parsed.counts.skipped.max(skipped);
        }
    }
    // A test that started and never ended, in a run no timeout stopped: the test binary
    // stopped under it (os.Exit, a crash, the runner's own timeout), a failure of that test.
    if !result.timed_out {
        for id in std::mem::take(&mut parsed.running) {
            parsed.counts.failed += 1;
            parsed.push_failure(TestFailure {
                id,
                kind: Some("did_not_finish".into()),
                message: "started and never ended: the test process stopped while it ran (an \
                          exit, a crash, or the runner's own timeout); output_tail says more"
                    .into(),
                ..TestFailure::default()
            });
        }
    }
    Ok(parsed)
}

/// Parses a saved log or report without running anything. JUnit XML is recognised on its own;
/// other formats need `framework`.
pub(crate) fn parse_file(
    path: &Path,
    framework: Option<Framework>,
    root: &Path,
) -> Result<TestReport, Failure> {
    let open = || {
        std::fs::File::open(path)
            .map(std::io::BufReader::new)
            .map_err(|err| Failure::usage(format!("--parse {}: {err}", path.display())))
    };
    let mut head = Vec::new();
    open()?.take(4096).read_to_end(&mut head).ok();
    let head = String::from_utf8_lossy(&head);
    let looks_like_xml = head.trim_start().starts_with('<');
    let (framework, reason) = match (framework, looks_like_xml) {
        (Some(framework), _) => (framework, "given with --framework"),
        // pytest's own report: read for the ids pytest takes back.
        (None, true) if head.contains("<testsuite name=\"pytest\"") => {
            (Framework::Pytest, "the file is pytest's JUnit XML")
        }
        (None, true) => (Framework::Junit, "the file is JUnit XML"),
        (None, false) => {
            return Err(Failure::usage(format!(
                "cannot tell which runner wrote {}",
                path.display()
            ))
            .with_hint(
                "pass --framework (pytest, unittest, cargo, nextest, go, node, jest, vitest, make, junit)",
            ))
        }
    };
    let invalid = |err: String| Failure::usage(format!("--parse {}: {err}", path.display()));
    let parsed = match framework {
        Framework::Junit => junit::parse(open()?).map_err(invalid)?,
        Framework::Pytest if looks_like_xml => {
            pytest::from_junit(open()?, Some(root)).map_err(invalid)?
        }
        Framework::Pytest => pytest::parse_log(open()?, Some(root)).map_err(invalid)?,
        Framework::Unittest => unittest::parse_log(open()?, Some(root)).map_err(invalid)?,
        Framework::Cargo => libtest::parse_log(open()?, Some(root)).map_err(invalid)?,
        Framework::Go => gotest::parse_log(open()?, Some(root)).map_err(invalid)?,
        Framework::Nextest => with_build_errors(
            nextest::parse_log(open()?, Some(root)).map_err(invalid)?,
            libtest::parse_log(open()?, Some(root)).map_err(invalid)?,
        ),
        Framework::Node => node_tap::parse_log(open()?, Some(root)).map_err(invalid)?,
        Framework::Jest | Framework::Vitest => jest_json::parse(
            &std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?,
            Some(root),
        )
        .map_err(invalid)?,
        Framework::Make => best_effort(
            &std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?,
            root,
        ),
    };
    let outcome = if parsed.build_failed {
        Outcome::BuildFailed
    } else if parsed.counts.failed + parsed.counts.errors > 0 || !parsed.failures.is_empty() {
        Outcome::TestsFailed
    } else if parsed.crashed {
        Outcome::Error
    } else if parsed.counts.total() == 0 {
        Outcome::NoTests
    } else {
        Outcome::Passed
    };
    Ok(TestReport {
        framework_reason: reason.into(),
        ..TestReport::new(framework, Vec::new(), outcome, parsed)
    })
}

/// The runner's command; `python`, the project's interpreter (see python_env).
fn runner_command(
    framework: Framework,
    tests: &[String],
    (network, python): (bool, &str),
    root: &Path,
) -> Vec<String> {
    let python = python.to_string();
    let mut command: Vec<String> = match framework {
        // The text output, not `--junitxml`: the report plugin slows every run down, and the
        // text has the ids, locations and messages (its summary, at the end, survives any cut);
        // `-v` names each test as it starts, for a run its timeout stops.
        Framework::Pytest => vec![
            python,
            "-m".into(),
            "pytest".into(),
            "-p".into(),
            "no:cacheprovider".into(),
            "-rfE".into(),
            "-v".into(),
        ],
        Framework::Unittest => vec![python, "-m".into(), "unittest".into(), "-v".into()],
        Framework::Cargo => cargo_command(
            &["test", "--no-fail-fast", "--color", "never"],
            tests,
            network,
        ),
        Framework::Make => vec!["make".into(), "test".into()],
        Framework::Nextest => cargo_command(
            &[
                "nextest",
                "run",
                "--no-fail-fast",
                "--message-format",
                "libtest-json-plus",
                "--color",
                "never",
            ],
            tests,
            network,
        ),
        Framework::Go => {
            let mut command: Vec<String> = ["go", "test", "-json"].map(String::from).into();
            if !tests.is_empty() {
                command.extend(["-run".into(), go_run_pattern(tests)]);
            }
            command.push("./...".into());
            return command;
        }
        Framework::Node => return node_command(tests, root),
        Framework::Jest | Framework::Vitest => return jest_command(framework, tests, root),
        Framework::Junit => Vec::new(),
    };
    match framework {
        // The whole suite goes on past a file that cannot be collected (pytest would stop
        // before any test): the file is one failure among the results, not all there is.
        Framework::Pytest if tests.is_empty() => {
            command.push("--continue-on-collection-errors".into())
        }
        Framework::Make | Framework::Cargo | Framework::Nextest => {}
        Framework::Unittest => command.extend(tests.iter().map(|id| unittest::dotted(id))),
        _ => command.extend(tests.iter().cloned()),
    }
    command
}

/// The variables an activated environment sets: its path (`VIRTUAL_ENV`, or conda's
/// `CONDA_PREFIX`) and its `bin` first on `PATH`, for what the tests start by name.
fn activated(env: &python_env::PythonEnv) -> Vec<String> {
    let name = if env.conda {
        "CONDA_PREFIX"
    } else {
        "VIRTUAL_ENV"
    };
    let bin = env.root.join("bin");
    let path = match std::env::var_os("PATH") {
        Some(path) => format!("{}:{}", bin.display(), path.to_string_lossy()),
        None => format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
    };
    vec![
        format!("{name}={}", env.root.display()),
        format!("PATH={path}"),
    ]
}

/// `node --test`'s command: by TAP, the tests selected by their names' last part.
fn node_command(tests: &[String], root: &Path) -> Vec<String> {
    let mut command: Vec<String> = ["node", "--test", "--test-reporter=tap"]
        .map(String::from)
        .into();
    command.extend(node_name_patterns(tests));
    // The files the project's own `npm test` gives node (globs expanded by the shell,
    // as npm does); without them node runs every file that looks like a test.
    match node_test_files(root) {
        Some(files) => vec![
            "sh".into(),
            "-c".into(),
            format!("exec {} {files}", shell_words::join(&command)),
        ],
        None => command,
    }
}

/// `node --test`'s selection of `tests`: by their names' last part.
fn node_name_patterns(tests: &[String]) -> impl Iterator<Item = String> + '_ {
    tests.iter().map(|id| {
        let leaf = id.rsplit(" > ").next().unwrap_or(id);
        format!("--test-name-pattern=^{}$", regex_escape(leaf))
    })
}

/// `tests` run by node in one process, the test `file` (relative to the workspace) that defines
/// them its program, as the process `node --test` starts for that file would run them.
fn node_file_run(tests: &[String], file: &str) -> Vec<String> {
    let mut command: Vec<String> = vec!["node".into(), "--test-reporter=tap".into()];
    command.extend(node_name_patterns(tests));
    command.push(format!("./{file}"));
    command
}

/// jest's or vitest's command: the project's own copy when it has one, else the one on PATH,
/// writing its JSON report; tests selected by file and name.
fn jest_command(framework: Framework, tests: &[String], root: &Path) -> Vec<String> {
    let name = if framework == Framework::Jest {
        "jest"
    } else {
        "vitest"
    };
    let local = format!("node_modules/.bin/{name}");
    let bin = if root.join(&local).exists() {
        local
    } else {
        name.to_string()
    };
    let mut command = vec![bin];
    if framework == Framework::Jest {
        // Without tests jest writes no report; with this flag, one that counts none.
        command.extend(
            [
                "--json",
                "--ci",
                "--testLocationInResults",
                "--passWithNoTests",
            ]
            .map(String::from),
        );
    } else {
        // The report on stdout even when the project's config sends it to a file.
        let words = [
            "run",
            "--reporter=json",
            "--outputFile.json=/dev/stdout",
            "--globals",
        ];
        command.extend(words.map(String::from));
    }
    if !tests.is_empty() {
        // Ids are `file > describe > ... > title`; the runners match the rest, joined
        // with spaces, against -t, and file patterns as arguments.
        // jest takes file patterns as regular expressions, vitest as plain substrings.
        let mut files: Vec<String> = tests
            .iter()
            .map(|id| id.split(" > ").next().unwrap_or(id))
            .map(|file| match framework {
                Framework::Jest => regex_escape(file),
                _ => file.to_string(),
            })
            .collect();
        files.dedup();
        let names: Vec<String> = tests
            .iter()
            .map(|id| regex_escape(&id.split(" > ").skip(1).collect::<Vec<_>>().join(" ")))
            .collect();
        command.extend(files);
        command.extend(["-t".into(), format!("^({})$", names.join("|"))]);
    }
    command
}

/// Asks the project's `interpreter`, in the sandbox its tests get, for its bytecode's cache tag
/// and where it finds modules, and seeds the bytecode cache `dir` from there (see cache.rs):
/// only inside what the sandbox can read and not write, and the interpreter's own virtualenv as
/// its path says from outside (`.venv/bin/python`: `.venv`). Nothing is seeded when it cannot
/// say (the runs then compile what they import), and it is not asked again.
fn seed_bytecode(policy: &SandboxPolicy, interpreter: &str, dir: &Path, root: &Path) {
    let Ok(view) = crate::sandbox::native::view::read_only(policy, false) else {
        return cache::skip_seed(dir);
    };
    let mut trusted = view.dirs;
    let bin = match interpreter.contains('/') {
        true => Some(root.join(interpreter)),
        false => crate::sandbox::lookup_env(&policy.env, "PATH").and_then(|path| {
            std::env::split_paths(path)
                .map(|dir| dir.join(interpreter))
                .find(|candidate| candidate.is_file())
        }),
    };
    let venv = bin
        .as_deref()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .filter(|venv| venv.join("pyvenv.cfg").is_file());
    trusted.extend(venv.map(Path::to_path_buf));
    // Compared with the search path's directories as they really are.
    let trusted: Vec<PathBuf> = trusted
        .iter()
        .filter_map(|dir| dir.canonicalize().ok())
        .collect();
    let mut asking = policy.clone();
    asking.command = [
        interpreter,
        "-c",
        "import sys; print(sys.implementation.cache_tag); print(*sys.path, sep='\\n')",
    ]
    .map(OsString::from)
    .to_vec();
    asking.timeout = asking.timeout.min(std::time::Duration::from_secs(30));
    // What it imports to start would be compiled into the cache before the seed.
    asking
        .env
        .push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
    let Ok(result) = crate::sandbox::run(&asking, BackendKind::Native) else {
        return;
    };
    let said = result.stdout.as_deref().unwrap_or("");
    let mut lines = said.lines();
    match (result.exit_code, lines.next()) {
        (Some(0), Some(tag)) if tag != "None" && !tag.contains('/') => {
            let search_path: Vec<PathBuf> = lines.map(PathBuf::from).collect();
            cache::seed_python(dir, tag, &search_path, &trusted);
        }
        _ => cache::skip_seed(dir),
    }
}

/// The first `count` lines a runner wrote that are not blank, on one line: what it said.
fn first_lines(text: &str, count: usize) -> String {
    let said: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .take(count)
        .collect();
    if said.is_empty() {
        "nothing on stderr".to_string()
    } else {
        said.join(" ")
    }
}

/// What follows `node --test` in the project's `npm test` script (`node --test test/*.test.js`),
/// when the script is just that and names files: plain words and globs, no other shell syntax.
fn node_test_files(root: &Path) -> Option<String> {
    let package = detect::read_project_file(root, "package.json")?;
    let package: serde_json::Value = serde_json::from_str(&package).ok()?;
    let script = package.get("scripts")?.get("test")?.as_str()?;
    let files = script.trim().strip_prefix("node --test ")?.trim();
    let plain = files
        .chars()
        .all(|c| c.is_alphanumeric() || c == ' ' || "/._-*?[]{},@+=:%".contains(c));
    (plain && !files.is_empty()).then(|| files.to_string())
}

/// Variables that make runners' output parseable, keep the workspace clean and send the
/// toolchain's caches to `cache` (see cache.rs).
fn runner_env(
    framework: Framework,
    network: bool,
    root: &Path,
    cache: Option<&Path>,
) -> Vec<String> {
    let vars: &[&str] = match framework {
        Framework::Pytest | Framework::Unittest => &["PYTHONUNBUFFERED=1", "COLUMNS=200"],
        Framework::Cargo => &["CARGO_TERM_COLOR=never", "RUST_BACKTRACE=0"],
        Framework::Nextest => &[
            "CARGO_TERM_COLOR=never",
            "RUST_BACKTRACE=0",
            "NEXTEST_EXPERIMENTAL_LIBTEST_JSON=1",
        ],
        // Go's caches: see below.
        Framework::Go => &["CGO_ENABLED=0"],
        Framework::Node | Framework::Jest | Framework::Vitest => {
            &["NO_COLOR=1", "FORCE_COLOR=0", "CI=true"]
        }
        Framework::Make | Framework::Junit => &[],
    };
    let mut vars: Vec<String> = vars.iter().map(|var| var.to_string()).collect();
    match cache {
        Some(dir) => vars.extend(cache::env(framework, dir)),
        // Bytecode in the workspace's own `__pycache__` would be left behind.
        None if matches!(framework, Framework::Pytest | Framework::Unittest) => {
            vars.push("PYTHONDONTWRITEBYTECODE=1".into())
        }
        // A cargo home of the run's own for what it downloads (see cache.rs).
        None if network && matches!(framework, Framework::Cargo | Framework::Nextest) => vars.push(
            format!("CARGO_HOME={}/.cargo", crate::sandbox::PRIVATE_HOME),
        ),
        None => {}
    }
    if framework == Framework::Go {
        // Offline, modules come from the project's vendor directory when it has one (Go's own
        // default then); otherwise no proxy is tried, so a missing module fails at once.
        if !network {
            vars.push("GOPROXY=off".into());
        }
        // Modules are written read-only unless -modcacherw, and the cache (see cache.rs)
        // could then be removed only by `go clean -modcache`.
        if root.join("vendor/modules.txt").exists() {
            vars.push("GOFLAGS=-modcacherw".into());
        } else {
            vars.push("GOFLAGS=-mod=mod -modcacherw".into());
        }
    }
    vars
}

/// `cargo ARGS`, offline unless the network is allowed; with ids, `-- --exact` before them
/// (the caller appends the ids).
fn cargo_command(args: &[&str], tests: &[String], network: bool) -> Vec<String> {
    let mut command: Vec<String> = std::iter::once("cargo")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    if !network {
        command.push("--offline".into());
    }
    if tests.is_empty() {
        return command;
    }
    command.push("--".into());
    if !tests.iter().any(|id| doctest::parse_id(id).is_some()) {
        command.push("--exact".into());
        command.extend(tests.iter().cloned());
        return command;
    }
    // rustdoc splits its filters at spaces, which every doctest's name holds: its file is the
    // closest filter; what else it selects is left out of the report (see `only_selected`).
    for filter in tests
        .iter()
        .map(|id| doctest::parse_id(id).map_or(id.as_str(), |(file, _)| file))
    {
        if !command.iter().any(|arg| arg == filter) {
            command.push(filter.to_string());
        }
    }
    command
}

/// cargo's output without the lines of tests that were not asked for, when the filters had to
/// select more (a doctest among them).
fn only_selected<'a>(output: &'a str, tests: &[String]) -> std::borrow::Cow<'a, str> {
    if !tests.iter().any(|id| doctest::parse_id(id).is_some()) {
        return output.into();
    }
    let mut kept = String::with_capacity(output.len());
    for line in output.split_inclusive('\n') {
        let other = line
            .strip_prefix("test ")
            .and_then(|rest| rest.trim_end().rsplit_once(" ... "))
            .is_some_and(|(name, _)| {
                let name = name.strip_suffix(" - should panic").unwrap_or(name);
                !tests.iter().any(|id| id == name)
            });
        if !other {
            kept.push_str(line);
        }
    }
    kept.into()
}

/// One `go test -run` pattern for the ids: top-level tests by name; a subtest brings its whole
/// top-level test (a single pattern cannot select subtests of several tests).
fn go_run_pattern(ids: &[String]) -> String {
    let mut tops: Vec<String> = ids
        .iter()
        .map(|id| regex_escape(id.split('/').next().unwrap_or(id)))
        .collect();
    tops.dedup();
    format!("^({})$", tops.join("|"))
}

/// Escapes regular-expression metacharacters (Go's RE2 and JavaScript's share them).
fn regex_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for ch in text.chars() {
        if "\\.+*?()|[]{}^$".contains(ch) {
            escaped.push('\\');
        }
        escaped.push(ch);
    }
    escaped
}

/// `--command`: shell syntax runs under `sh -c`; a plain command line is split like a shell.
fn split_command(command: &str) -> Result<Vec<String>, Failure> {
    const SHELL: &[char] = &[
        '|', '&', ';', '<', '>', '$', '`', '*', '?', '(', ')', '\n', '~',
    ];
    if command.contains(SHELL) {
        return Ok(vec!["sh".into(), "-c".into(), command.into()]);
    }
    let words = shell_words::split(command)
        .map_err(|err| Failure::usage(format!("--command {command:?}: {err}")))?;
    if words.is_empty() {
        return Err(Failure::usage("--command is empty"));
    }
    Ok(words)
}

fn runner_missing(framework: Framework, custom_command: bool, failure: Failure) -> Failure {
    if failure.kind != Kind::CommandNotFound {
        return failure;
    }
    let hint = match framework {
        _ if custom_command => {
            "check the program --command names: it must be on PATH inside the sandbox, or a path in the workspace"
        }
        Framework::Pytest | Framework::Unittest => {
            "install Python 3 (apt-get install python3), or use the project's virtualenv"
        }
        Framework::Cargo | Framework::Nextest => "install Rust with rustup (https://rustup.rs)",
        Framework::Make => "install make (apt-get install make)",
        Framework::Go => "install Go (apt-get install golang-go, or https://go.dev/dl)",
        Framework::Node => "install Node.js 20 or later",
        Framework::Jest => "install it in the project (npm install --save-dev jest) or globally (npm install -g jest)",
        Framework::Vitest => "install it in the project (npm install --save-dev vitest) or globally (npm install -g vitest)",
        Framework::Junit => "",
    };
    Failure::new(Kind::RunnerMissing, failure.error).with_hint(hint)
}

/// nextest's results, with the compile errors cargo reported before them (read as `cargo
/// test`'s are).
fn with_build_errors(mut parsed: Parsed, build: Parsed) -> Parsed {
    if build.build_failed {
        parsed.build_failed = true;
        parsed.build_error = build.build_error;
        parsed.failures.extend(build.failures);
    }
    parsed
}

fn parse_output(
    framework: Framework,
    stdout: &str,
    stderr: &str,
    tests: &[String],
    root: &Path,
) -> Result<Parsed, Failure> {
    let invalid = |err: String| {
        Failure::external(format!(
            "cannot read the {} output: {err}",
            framework.name()
        ))
    };
    Ok(match framework {
        Framework::Pytest => {
            let mut parsed = pytest::parse_log(stdout.as_bytes(), Some(root)).map_err(invalid)?;
            if let Some(failure) = pytest::conftest_error(stderr, Some(root)) {
                parsed.build_failed = true;
                parsed.build_error = Some(format!("{}: {}", failure.id, failure.message));
                parsed.push_failure(failure);
            }
            parsed
        }
        Framework::Unittest => {
            unittest::parse_log(stderr.as_bytes(), Some(root)).map_err(invalid)?
        }
        Framework::Cargo => {
            let both = format!("{stderr}\n{stdout}");
            libtest::parse_log(only_selected(&both, tests).as_bytes(), Some(root))
                .map_err(invalid)?
        }
        Framework::Go => gotest::parse_log(format!("{stdout}\n{stderr}").as_bytes(), Some(root))
            .map_err(invalid)?,
        // Compile errors come from cargo, on stderr, as with `cargo test`.
        Framework::Nextest => with_build_errors(
            nextest::parse_log(stdout.as_bytes(), Some(root)).map_err(invalid)?,
            libtest::parse_log(stderr.as_bytes(), Some(root)).map_err(invalid)?,
        ),
        Framework::Node => node_tap::parse_log(stdout.as_bytes(), Some(root)).map_err(invalid)?,
        Framework::Jest | Framework::Vitest => {
            jest_json::parse(stdout, Some(root)).map_err(invalid)?
        }
        Framework::Make => best_effort(&format!("{stdout}\n{stderr}"), root),
        Framework::Junit => Parsed::default(),
    })
}

/// For `make test`: whichever known format finds the most tests in the output.
fn best_effort(output: &str, root: &Path) -> Parsed {
    [
        pytest::parse_log(output.as_bytes(), Some(root)),
        unittest::parse_log(output.as_bytes(), Some(root)),
        libtest::parse_log(output.as_bytes(), Some(root)),
    ]
    .into_iter()
    .flatten()
    .filter(|parsed| parsed.counts.total() > 0 || parsed.build_failed)
    .max_by_key(|parsed| parsed.counts.total())
    .unwrap_or_default()
}

/// The outcome: the exit code first (each runner's own meaning), then what the output says.
/// With tests `selected`, the runners count those their filter left out as skipped: then only
/// tests that passed, failed or erred show that any ran.
fn classify(
    framework: Framework,
    result: &SandboxResult,
    parsed: &Parsed,
    selected: bool,
) -> Outcome {
    if result.timed_out {
        return Outcome::Timeout;
    }
    let Some(code) = result.exit_code else {
        // Killed by a signal (a memory limit, a crash): the runner did not finish.
        return Outcome::Error;
    };
    let failures = parsed.counts.failed + parsed.counts.errors > 0 || !parsed.failures.is_empty();
    // As for a parsed log: listed failures say more than that the run did not finish.
    if parsed.crashed && !failures {
        return Outcome::Error;
    }
    let counts = &parsed.counts;
    let ran = if selected {
        counts.passed + counts.failed + counts.errors > 0
    } else {
        counts.total() > 0
    };
    match (framework, code) {
        (_, 0) if failures => Outcome::TestsFailed,
        (Framework::Make, 0) => Outcome::Passed,
        (_, 0) if !ran => Outcome::NoTests,
        (_, 0) => Outcome::Passed,
        // Went on past files it could not collect, and they were all there was.
        (Framework::Pytest, 1) if parsed.build_failed => Outcome::BuildFailed,
        (Framework::Pytest, 1) => Outcome::TestsFailed,
        (Framework::Pytest, 2 | 4) if parsed.build_failed => Outcome::BuildFailed,
        (Framework::Pytest, 5) | (Framework::Unittest, 5) => Outcome::NoTests,
        (Framework::Pytest, _) => Outcome::Error,
        (Framework::Unittest, 1) if parsed.build_failed => Outcome::BuildFailed,
        (Framework::Unittest, 1) => Outcome::TestsFailed,
        (Framework::Cargo, 101) if parsed.build_failed => Outcome::BuildFailed,
        (Framework::Cargo, 101) if failures => Outcome::TestsFailed,
        (Framework::Nextest, 100) => Outcome::TestsFailed,
        (Framework::Nextest, 101) if parsed.build_failed => Outcome::BuildFailed,
        (Framework::Nextest, 4) => Outcome::NoTests,
        (Framework::Go, 1 | 2) if parsed.build_failed => Outcome::BuildFailed,
        (Framework::Node, 1) if parsed.build_failed => Outcome::BuildFailed,
        (Framework::Go, 1) | (Framework::Node, 1) => Outcome::TestsFailed,
        (Framework::Jest | Framework::Vitest, 1) if parsed.build_failed => Outcome::BuildFailed,
        (Framework::Jest | Framework::Vitest, 1) if !ran => Outcome::NoTests,
        (Framework::Jest | Framework::Vitest, 1) => Outcome::TestsFailed,
        (Framework::Make, _) if parsed.build_failed => Outcome::BuildFailed,
        (Framework::Make, _) => Outcome::TestsFailed,
        _ => Outcome::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_did_not_finish_is_an_error_unless_failures_say_more() {
        let result = SandboxResult {
            backend: BackendKind::Native,
            command: Vec::new(),
            exit_code: Some(101),
            signal: None,
            timed_out: false,
            interrupted: None,
            limit_hit: None,
            duration_ms: 0,
            stdout: None,
            stderr: None,
            stdout_truncated: false,
            stderr_truncated: false,
            layers: Default::default(),
            disk: None,
            quarantined: Vec::new(),
            stderr_mid_line: false,
        };
        let mut parsed = Parsed {
            crashed: true,
            ..Parsed::default()
        };
        assert_eq!(
            classify(Framework::Cargo, &result, &parsed, false),
            Outcome::Error
        );
        parsed.push_failure(crate::run_document::TestFailure {
            id: "tests::fails".into(),
            ..Default::default()
        });
        assert_eq!(
            classify(Framework::Cargo, &result, &parsed, false),
            Outcome::TestsFailed
        );
    }

    #[test]
    fn command_splitting() {
        assert_eq!(
            split_command("pytest -k 'a b'").unwrap(),
            ["pytest", "-k", "a b"]
        );
        assert_eq!(
            split_command("make test | tee log").unwrap(),
            ["sh", "-c", "make test | tee log"]
        );
        assert!(split_command("'unclosed").is_err());
        assert!(split_command("  ").is_err());
    }
    #[test]
    fn a_node_file_runs_as_its_own_program() {
        let tests = ["suite > adds (2)".to_string()];
        assert_eq!(
            node_file_run(&tests, "test/-a #1.test.mjs"),
            [
                "node",
                "--test-reporter=tap",
                "--test-name-pattern=^adds \\(2\\)$",
                "./test/-a #1.test.mjs",
            ]
        );
    }
}
