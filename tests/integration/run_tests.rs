//! `autocoder run-tests`: the real runners on the sample projects through the sandbox, and the
//! parsers on the outputs those runners produced (testdata/outputs, made by
//! scripts/regen-testdata.sh).

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{copy_dir, testdata, with_project, Run, Test};

/// The `tests` object of the document a run wrote.
#[track_caller]
fn tests_of(run: &Run) -> Value {
    crate::util::section_of(run, "tests")
}

fn ids(report: &Value) -> Vec<String> {
    report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn failure<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no failure {id} in {report:#}"))
}

fn counts(report: &Value) -> [u64; 4] {
    let c = &report["counts"];
    ["passed", "failed", "errors", "skipped"].map(|k| c[k].as_u64().unwrap())
}

fn parse(file: &str, framework: &str) -> Value {
    // Read in the home directory: a log is only read, so any workspace will do.
    let test = Test::new();
    let home = test.path().to_path_buf();
    let mut test = test
        .env("HOME", home)
        .args(["run-tests", "--parse"])
        .args([testdata(file)]);
    if !framework.is_empty() {
        test = test.args(["--framework", framework]);
    }
    tests_of(&test.run())
}

#[test]
fn pytest_run_in_the_sandbox() {
    let run = with_project("pytest-sample")
        .stdin(r#"{"autocoder": 1, "issue": {"title": "kept"}, "custom": [1, 2]}"#)
        .args(["run-tests"])
        .run()
        .expect_status(1);
    let doc: Value = serde_json::from_slice(&run.output.stdout).unwrap();
    assert_eq!(doc["issue"]["title"], "kept");
    assert_eq!(doc["custom"], serde_json::json!([1, 2]));
    assert!(doc["workspace"]
        .as_str()
        .unwrap()
        .contains("autocoder-test-"));
    let report = &doc["tests"];
    assert_eq!(report["framework"], "pytest");
    assert_eq!(report["outcome"], "tests_failed");
    assert_eq!(report["exit_code"], 1);
    assert_eq!(counts(report), [5, 4, 1, 1]);
    let odd = failure(
        report,
        "tests/test_ops.py::test_parse_ratio[odd id with spaces]",
    );
    assert_eq!(
        (odd["file"].as_str(), odd["line"].as_u64()),
        (Some("calc/ops.py"), Some(21))
    );
    assert_eq!(odd["kind"], "ValueError");
    let fixture = failure(report, "tests/test_ops.py::test_uses_broken_fixture");
    assert_eq!(fixture["file"], "tests/conftest.py");
    assert_eq!(
        failure(report, "tests/test_ops.py::TestGroup::test_zero_division")["kind"],
        "ZeroDivisionError"
    );
    assert_eq!(report["sandbox"]["backend"], "native");
    assert_eq!(report["sandbox"]["stdout"], Value::Null);
    assert!(report["output_tail"]
        .as_str()
        .unwrap()
        .contains("4 failed, 5 passed"));
    // The workspace stays clean: no cache or bytecode left behind.
    assert!(!run.dir.path().join(".pytest_cache").exists());
    assert!(!run.dir.path().join("calc/__pycache__").exists());
}

#[test]
fn failing_ids_run_again_with_tests() {
    let id = "tests/test_ops.py::test_parse_ratio[odd id with spaces]";
    let run = with_project("pytest-sample")
        .args(["run-tests", "--tests", id])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(ids(&report), [id]);
    assert_eq!(counts(&report), [0, 1, 0, 0]);

    let run = with_project("pytest-sample")
        .args([
            "run-tests",
            "--tests",
            "tests/test_ops.py::test_add",
            "--tests",
            "tests/test_ops.py::TestGroup::test_inside_class",
        ])
        .run()
        .expect_status(0);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "passed");
    assert_eq!(counts(&report), [2, 0, 0, 0]);
}

#[test]
fn unittest_run_and_rerun() {
    let run = with_project("shop-python")
        .args(["run-tests", "--framework", "unittest"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["framework"], "unittest");
    assert_eq!(report["outcome"], "tests_failed");
    assert_eq!(counts(&report), [3, 3, 0, 0]);
    let quarter = failure(&report, "tests.test_pricing.DiscountTest.test_quarter_off");
    assert_eq!(
        (quarter["file"].as_str(), quarter["line"].as_u64()),
        (Some("tests/test_pricing.py"), Some(11))
    );
    assert_eq!(
        (quarter["kind"].as_str(), quarter["message"].as_str()),
        (Some("AssertionError"), Some("1250 != 750"))
    );

    let run = with_project("shop-python")
        .args([
            "run-tests",
            "--framework",
            "unittest",
            "--tests",
            "tests.test_pricing.DiscountTest.test_quarter_off",
        ])
        .run()
        .expect_status(1);
    assert_eq!(
        ids(&tests_of(&run)),
        ["tests.test_pricing.DiscountTest.test_quarter_off"]
    );
}

/// Issue 20, item 7: a failed doctest is reported at its line in the source (rustdoc reports
/// its wrapper's), and doctests run again by name, alone or with other tests.
#[test]
fn doctests_are_reported_where_they_fail_and_run_again_by_name() {
    let test = Test::new();
    test.dir().write(
        "Cargo.toml",
        "[package]\nname = \"doc-sample\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    let mut lib = vec!["//! Doctests at the lines a long file has them.".to_string()];
    lib.extend((0..70).map(|n| format!("// filler {n}")));
    lib.extend(
        [
            "/// Adds.",
            "///",
            "/// ```",
            "/// let sum = doc_sample::add(1, 2);",
            "/// assert_eq!(sum, 4);",
            "/// ```",
            "pub fn add(a: i32, b: i32) -> i32 {",
            "    a + b",
            "}",
            "",
            "/// Halves an even number.",
            "///",
            "/// ```",
            "/// # use doc_sample::half;",
            "/// assert_eq!(half(4), 2);",
            "/// half(3);",
            "/// ```",
            "pub fn half(n: i32) -> i32 {",
            "    assert!(n % 2 == 0, \"odd: {n}\");",
            "    n / 2",
            "}",
            "",
            "/// ```",
            "/// assert_eq!(doc_sample::add(2, 2), 4);",
            "/// ```",
            "pub fn fine() {}",
            "",
            "#[cfg(test)]",
            "mod tests {",
            "    #[test]",
            "    fn unit() {",
            "        assert_eq!(super::add(1, 1), 2);",
            "    }",
            "}",
        ]
        .map(String::from),
    );
    test.dir().write("src/lib.rs", &(lib.join("\n") + "\n"));
    let line_of = |text: &str| lib.iter().position(|line| line.contains(text)).unwrap() as u64 + 1;
    let run = test.args(["run-tests"]).run().expect_status(1);
    let report = tests_of(&run);
    assert_eq!(counts(&report), [2, 2, 0, 0], "{report:#}");
    let add_id = format!("src/lib.rs - add (line {})", line_of("/// Adds.") + 2);
    let add = failure(&report, &add_id);
    assert_eq!(
        (add["file"].as_str(), add["line"].as_u64()),
        (Some("src/lib.rs"), Some(line_of("assert_eq!(sum, 4)")))
    );
    // A panic inside the library is where it is.
    let half_id = format!("src/lib.rs - half (line {})", line_of("/// Halves") + 2);
    let half = failure(&report, &half_id);
    assert_eq!(half["line"].as_u64(), Some(line_of("assert!(n % 2 == 0")));
    assert_eq!(half["message"], "odd: 3");

    let rerun = |tests: &[&str]| {
        let mut again = Test::new()
            .args(["run-tests", "--workspace"])
            .arg(run.dir.path());
        for id in tests {
            again = again.args(["--tests", id]);
        }
        tests_of(&again.run().expect_status(1))
    };
    let alone = rerun(&[&add_id]);
    assert_eq!(counts(&alone), [0, 1, 0, 0], "{alone:#}");
    assert_eq!(ids(&alone), std::slice::from_ref(&add_id));
    let with_a_unit_test = rerun(&[&add_id, "tests::unit"]);
    assert_eq!(
        counts(&with_a_unit_test),
        [1, 1, 0, 0],
        "{with_a_unit_test:#}"
    );
    assert_eq!(ids(&with_a_unit_test), [add_id]);
}

#[test]
fn cargo_run_with_a_compile_error_and_with_failures() {
    let run = with_project("cargo-sample")
        .args(["run-tests"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["framework"], "cargo");
    assert_eq!(report["outcome"], "tests_failed", "{report:#}");
    assert_eq!(report["exit_code"], 101);
    assert_eq!(counts(&report), [2, 4, 0, 1]);
    let max = failure(&report, "tests::max_picks_the_larger");
    assert_eq!(
        (max["file"].as_str(), max["line"].as_u64()),
        (Some("src/lib.rs"), Some(32))
    );
    assert_eq!(
        failure(&report, "tests::panics_with_a_message")["message"],
        "no values to work with"
    );
    failure(&report, "src/lib.rs - add (line 5)");

    let test = with_project("cargo-sample");
    let lib = test.path().join("src/lib.rs");
    std::fs::write(
        &lib,
        std::fs::read_to_string(&lib)
            .unwrap()
            .replace("a + b", "a + missing_value"),
    )
    .unwrap();
    let run = test.args(["run-tests"]).run().expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "build_failed", "{report:#}");
    assert!(report["build_error"]
        .as_str()
        .unwrap()
        .contains("missing_value"));
    let build = failure(&report, "build");
    assert_eq!(
        (build["file"].as_str(), build["line"].as_u64()),
        (Some("src/lib.rs"), Some(9))
    );
}

#[test]
fn make_fallback_uses_the_exit_status_and_what_it_recognises() {
    let test = with_project("shop-python");
    test.dir()
        .write("Makefile", "test:\n\tpython3 -m unittest -v\n");
    std::fs::remove_dir_all(test.path().join("tests")).ok();
    copy_dir(
        &testdata("projects/shop-python/tests"),
        &test.path().join("tests"),
    );
    let run = test
        .args(["run-tests", "--framework", "make"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["framework"], "make");
    assert_eq!(report["outcome"], "tests_failed");
    assert_eq!(counts(&report), [3, 3, 0, 0]);

    let test = Test::new();
    test.dir().write("Makefile", "test:\n\t@echo all good\n");
    let run = test.args(["run-tests"]).run().expect_status(0);
    assert_eq!(tests_of(&run)["outcome"], "passed");

    // A runner with nothing to run where it looked is not a test that failed.
    for (framework, file, text) in [
        ("make", "Makefile", "all:\n\t@true\n"),
        ("go", "README", "no module here\n"),
    ] {
        let test = Test::new();
        test.dir().write(file, text);
        let run = test
            .args(["run-tests", "--framework", framework])
            .run()
            .expect_status(1);
        assert_eq!(tests_of(&run)["outcome"], "error", "{framework}");
        assert!(
            run.stderr().contains("found nothing to run here"),
            "{framework}: {}",
            run.stderr()
        );
    }

    // --command runs as given: a --tests beside it is said to be ignored, not silently dropped.
    let test = Test::new();
    test.dir().write("Makefile", "test:\n\t@echo all good\n");
    let run = test
        .args(["run-tests", "--command", "make test", "--tests", "x"])
        .run()
        .expect_status(0);
    assert!(
        run.stderr().contains("--tests is ignored"),
        "{}",
        run.stderr()
    );
}

#[test]
fn no_tests_is_not_a_pass() {
    let test = with_project("pytest-sample");
    for entry in std::fs::read_dir(test.path().join("tests"))
        .unwrap()
        .flatten()
    {
        if entry.file_name().to_string_lossy().starts_with("test_") {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    let run = test.args(["run-tests"]).run().expect_status(1);
    assert_eq!(tests_of(&run)["outcome"], "no_tests");
}

/// Issue 20, item 3: a run its timeout stops keeps what finished and names the test running.
#[test]
fn a_timeout_keeps_what_finished_and_names_the_test_that_was_running() {
    let python = |framework: &str, timeout: &str| {
        let test = Test::new();
        test.dir().write(
            "test_slow.py",
            "import time\nimport unittest\n\n\nclass T(unittest.TestCase):\n    def test_a_ok(self):\n        pass\n\n    def test_b_ok(self):\n        pass\n\n    def test_c_wrong(self):\n        self.assertEqual(1, 2)\n\n    def test_d_hangs(self):\n        time.sleep(60)\n\n    def test_e_never_reached(self):\n        pass\n",
        );
        let run = test
            .args(["run-tests", "--framework", framework, "--timeout", timeout])
            .run()
            .expect_status(1);
        tests_of(&run)
    };
    for (framework, running, wrong) in [
        (
            "pytest",
            "test_slow.py::T::test_d_hangs",
            "test_slow.py::T::test_c_wrong",
        ),
        (
            "unittest",
            "test_slow.T.test_d_hangs",
            "test_slow.T.test_c_wrong",
        ),
    ] {
        let report = python(framework, "8s");
        assert_eq!(report["outcome"], "timeout", "{report:#}");
        assert_eq!(report["sandbox"]["limit_hit"], "time");
        assert_eq!(counts(&report), [2, 1, 0, 0], "{framework}: {report:#}");
        assert_eq!(
            report["running"],
            serde_json::json!([running]),
            "{report:#}"
        );
        assert_eq!(ids(&report), [wrong], "{report:#}");
        let reason = report["reason"].as_str().unwrap();
        assert!(
            reason.contains("timeout of 8 s") && reason.contains(running),
            "{reason}"
        );
        assert!(report["hint"].as_str().unwrap().contains("--timeout"));
    }

    let test = Test::new();
    test.dir()
        .write("go.mod", "module example.com/slow\n\ngo 1.21\n");
    test.dir().write(
        "slow_test.go",
        "package slow\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestOk(t *testing.T) {}\n\nfunc TestWrong(t *testing.T) { t.Fatal(\"wrong\") }\n\nfunc TestHangs(t *testing.T) {\n\tt.Run(\"inner\", func(t *testing.T) { time.Sleep(time.Minute) })\n}\n",
    );
    let run = test
        .args(["run-tests", "--framework", "go", "--timeout", "20s"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "timeout", "{report:#}");
    assert_eq!(counts(&report), [1, 1, 0, 0], "{report:#}");
    assert_eq!(report["running"], serde_json::json!(["TestHangs/inner"]));
    assert_eq!(ids(&report), ["TestWrong"]);

    // node --test names a test once it has ended: what was running is the suite still open.
    let test = Test::new();
    test.dir().write(
        "slow.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\n\
         test('fast one', () => {});\ntest('wrong', () => { assert.equal(1, 2); });\n\
         test.describe('suite', () => {\n  test('inner ok', () => {});\n  \
         test('hangs', async () => { await new Promise((r) => setTimeout(r, 60000)); });\n});\n",
    );
    let run = test
        .args(["run-tests", "--framework", "node", "--timeout", "8s"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "timeout", "{report:#}");
    assert_eq!(counts(&report), [2, 1, 0, 0], "{report:#}");
    assert_eq!(report["running"], serde_json::json!(["suite"]));
    assert_eq!(ids(&report), ["wrong"]);
    assert!(report["reason"].as_str().unwrap().contains("suite"));

    // jest and vitest write their report at the end: autocoder's reporter says what ended.
    // Their start-up alone takes seconds on a loaded machine: the limit leaves room for it.
    for framework in ["jest", "vitest"] {
        let test = Test::new();
        test.dir().write(
            "package.json",
            &format!(r#"{{"devDependencies": {{"{framework}": "*"}}}}"#),
        );
        test.dir().write(
            "slow.test.js",
            "test('fast one', () => {});\ntest('wrong', () => { expect(1).toBe(2); });\n\
             describe('suite', () => {\n  test('inner ok', () => {});\n  \
             test('hangs', async () => { await new Promise((r) => setTimeout(r, 600000)); }, 900000);\n});\n",
        );
        let run = test
            .args(["run-tests", "--timeout", "30s"])
            .run()
            .expect_status(1);
        let report = tests_of(&run);
        assert_eq!(report["outcome"], "timeout", "{framework}: {report:#}");
        assert_eq!(counts(&report), [2, 1, 0, 0], "{framework}: {report:#}");
        assert_eq!(
            report["running"],
            serde_json::json!(["slow.test.js > suite > hangs"])
        );
        assert_eq!(ids(&report), ["slow.test.js > wrong"]);
        assert_eq!(
            failure(&report, "slow.test.js > wrong")["line"],
            2,
            "{report:#}"
        );
        assert!(!report["output_tail"]
            .as_str()
            .unwrap()
            .contains("##autocoder-test"));
    }

    // libtest with one thread writes a test's name before its result.
    let test = Test::new();
    test.dir().write(
        "Cargo.toml",
        "[package]\nname = \"slow\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    test.dir()
        .write(".cargo/config.toml", "[env]\nRUST_TEST_THREADS = \"1\"\n");
    test.dir().write(
        "src/lib.rs",
        "#[test]\nfn a_ok() {}\n\n#[test]\nfn b_wrong() {\n    assert_eq!(1, 2);\n}\n\n\
         #[test]\nfn c_hangs() {\n    std::thread::sleep(std::time::Duration::from_secs(600));\n}\n",
    );
    let run = test
        .args(["run-tests", "--framework", "cargo", "--timeout", "40s"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "timeout", "{report:#}");
    assert_eq!(counts(&report), [1, 1, 0, 0], "{report:#}");
    assert_eq!(report["running"], serde_json::json!(["c_hangs"]));
    assert_eq!(ids(&report), ["b_wrong"]);

    // Without a timeout, a test that never ended is a failure of its own.
    let test = Test::new();
    test.dir()
        .write("go.mod", "module example.com/exits\n\ngo 1.21\n");
    test.dir().write(
        "exits_test.go",
        "package exits\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestOk(t *testing.T) {}\n\nfunc TestExits(t *testing.T) { os.Exit(3) }\n",
    );
    let report = tests_of(&test.args(["run-tests"]).run().expect_status(1));
    assert_eq!(report["outcome"], "tests_failed", "{report:#}");
    assert_eq!(report["running"], Value::Null);
    assert_eq!(failure(&report, "TestExits")["kind"], "did_not_finish");
}

#[test]
fn an_interrupted_run_ends_with_the_signal_s_status() {
    let test = Test::new();
    test.dir().write(
        "test_slow.py",
        "import pathlib, time\n\ndef test_slow():\n    pathlib.Path('started').touch()\n    time.sleep(30)\n",
    );
    let child = std::process::Command::new(crate::util::autocoder_bin())
        .args(["run-tests", "--framework", "pytest"])
        .current_dir(test.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::util::wait_until_exists(&test.path().join("started"), "the test");
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(128 + libc::SIGINT),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_ne!(document["tests"]["outcome"], "passed");
}

#[test]
fn a_missing_runner_is_status_3_with_how_to_install_it() {
    let run = with_project("pytest-sample")
        .args(["run-tests", "--command", "no-such-runner --all"])
        .run()
        .expect_status(3);
    assert!(
        run.stderr().contains("no-such-runner") && run.stderr().contains("--command names"),
        "{}",
        run.stderr()
    );

    let run = with_project("cargo-sample")
        .env("PATH", "/usr/bin:/bin")
        .args(["run-tests"])
        .run()
        .expect_status(3);
    assert!(run.stdout().is_empty());
    assert!(
        run.stderr().contains("cargo: command not found"),
        "{}",
        run.stderr()
    );
    assert!(run.stderr().contains("rustup"), "{}", run.stderr());
}

#[test]
fn a_workspace_flag_overrides_the_document_s_and_is_passed_on() {
    let project = Test::new();
    project.dir().write("Makefile", "test:\n\t@echo all good\n");
    let top = project.path().canonicalize().unwrap();
    let run = Test::new()
        .stdin(r#"{"autocoder": 1, "workspace": "/somewhere/else"}"#)
        .args(["run-tests", "--workspace"])
        .arg(&top)
        .run()
        .expect_status(0);
    let document: Value = serde_json::from_slice(&run.output.stdout).unwrap();
    assert_eq!(document["workspace"], top.display().to_string());
}

#[test]
fn bad_input_is_status_2() {
    let run = Test::new().args(["run-tests"]).run().expect_status(2);
    assert!(
        run.stderr().contains("cannot tell which test framework"),
        "{}",
        run.stderr()
    );
    assert!(run.stderr().contains("--framework"), "{}", run.stderr());

    let run = Test::new()
        .args(["run-tests", "--framework", "nosuch"])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("invalid value 'nosuch'"),
        "{}",
        run.stderr()
    );

    let run = Test::new()
        .args(["run-tests", "--parse", "/no/such/log"])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("--parse /no/such/log"),
        "{}",
        run.stderr()
    );

    let run = Test::new()
        .stdin("{not json")
        .args(["run-tests", "--framework", "make"])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("stdin is not a run document"),
        "{}",
        run.stderr()
    );

    let run = Test::new()
        .stdin(r#"{"autocoder": 1, "workspace": 42}"#)
        .args(["run-tests", "--framework", "make"])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("the run document's workspace is 42"),
        "{}",
        run.stderr()
    );
    // A document's workspace that is gone: the error says where the path came from.
    let run = Test::new()
        .stdin(r#"{"autocoder": 1, "workspace": "/no/such/project"}"#)
        .args(["run-tests", "--framework", "make"])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("the run document's `workspace`"),
        "{}",
        run.stderr()
    );

    let test = Test::new();
    let log = test.dir().write("plain.log", "some output\n");
    let run = test
        .args(["run-tests", "--parse"])
        .args([log])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("cannot tell which runner wrote"),
        "{}",
        run.stderr()
    );
}

#[test]
fn parses_the_real_runners_outputs() {
    let pytest = parse("outputs/pytest-failures.log", "pytest");
    assert_eq!(pytest["outcome"], "tests_failed");
    assert_eq!(counts(&pytest), [5, 4, 1, 1]);
    assert_eq!(
        ids(&pytest),
        [
            "tests/test_ops.py::test_mean",
            "tests/test_ops.py::test_clamp[11-10]",
            "tests/test_ops.py::test_parse_ratio[odd id with spaces]",
            "tests/test_ops.py::TestGroup::test_zero_division",
            "tests/test_ops.py::test_uses_broken_fixture",
        ]
    );
    assert_eq!(failure(&pytest, "tests/test_ops.py::test_mean")["line"], 11);
    // The innermost project frame lies past pytest's `_ _ _` frame separators.
    let odd = failure(
        &pytest,
        "tests/test_ops.py::test_parse_ratio[odd id with spaces]",
    );
    assert_eq!(
        (odd["file"].as_str(), odd["line"].as_u64()),
        (Some("calc/ops.py"), Some(21))
    );

    let collect = parse("outputs/pytest-collection-error.log", "pytest");
    assert_eq!(collect["outcome"], "build_failed");
    assert!(collect["build_error"]
        .as_str()
        .unwrap()
        .contains("missing_module_xyz"));
    assert_eq!(
        failure(&collect, "tests/test_broken.py")["kind"],
        "ModuleNotFoundError"
    );

    assert_eq!(
        parse("outputs/pytest-no-tests.log", "pytest")["outcome"],
        "no_tests"
    );

    // pytest's own report is recognised: its ids are those pytest takes back.
    let detected = parse("outputs/pytest-failures.junit.xml", "");
    assert_eq!(detected["framework"], "pytest");
    assert_eq!(ids(&detected), ids(&pytest));
    let junit = parse("outputs/pytest-failures.junit.xml", "junit");
    assert_eq!(junit["framework"], "junit");
    assert_eq!(counts(&junit), [5, 4, 1, 1]);
    assert_eq!(
        failure(&junit, "tests.test_ops.TestGroup.test_zero_division")["file"],
        "tests/test_ops.py"
    );
    let pytest_junit = parse("outputs/pytest-failures.junit.xml", "pytest");
    assert_eq!(ids(&pytest_junit), ids(&pytest));

    let unittest = parse("outputs/unittest-import-error.log", "unittest");
    assert_eq!(unittest["outcome"], "build_failed");
    assert_eq!(
        failure(&unittest, "tests.test_broken")["file"],
        "tests/test_broken.py"
    );

    let cargo = parse("outputs/cargo-failures.log", "cargo");
    assert_eq!(counts(&cargo), [2, 4, 0, 1]);
    assert_eq!(
        failure(&cargo, "integration_max")["message"],
        "assertion `left == right` failed: max of 1 and 2"
    );
    assert_eq!(
        parse("outputs/cargo-compile-error.log", "cargo")["outcome"],
        "build_failed"
    );
}

/// Writes `bytes` as a log in the test's directory and parses it.
fn parse_bytes(bytes: &[u8], framework: &str) -> Value {
    let test = Test::new();
    let path = test.path().join("run.log");
    std::fs::write(&path, bytes).unwrap();
    tests_of(
        &test
            .args(["run-tests", "--parse"])
            .args([&path])
            .args(["--framework", framework])
            .run(),
    )
}

#[test]
fn a_parsed_cargo_log_of_a_crashed_test_binary_is_an_error() {
    let log =
        "running 2 tests\ntest tests::adds ... ok\nerror: test failed, to rerun pass `--lib`\n\n\
               Caused by:\n  process didn't exit successfully: `target/debug/deps/x-1` \
               (signal: 6, SIGABRT: process abort signal)\n";
    let report = parse_bytes(log.as_bytes(), "cargo");
    assert_eq!(report["outcome"], "error", "{report:#}");
}

#[test]
fn parses_colour_broken_bytes_and_cut_logs() {
    let log = std::fs::read_to_string(testdata("outputs/pytest-failures.log")).unwrap();
    let coloured: String = log
        .lines()
        .map(|line| {
            if line.starts_with("FAILED") || line.starts_with("=") {
                format!("\x1b[31m\x1b[1m{line}\x1b[0m\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    let report = parse_bytes(coloured.as_bytes(), "pytest");
    assert_eq!(counts(&report), [5, 4, 1, 1]);
    assert_eq!(ids(&report).len(), 5);

    let mut broken = log.clone().into_bytes();
    let at = broken.windows(9).position(|w| w == b"test_mean").unwrap();
    broken.splice(at..at, [0xff, 0xfe, b'\n']);
    let report = parse_bytes(&broken, "pytest");
    assert_eq!(counts(&report), [5, 4, 1, 1]);

    // The sandbox keeps the head and the tail of a long output: the summary survives the cut.
    let cut = format!(
        "{}\n[... autocoder: 123456 bytes of output omitted ...]\n{}",
        &log[..400],
        &log[log.len() - 900..]
    );
    let report = parse_bytes(cut.as_bytes(), "pytest");
    assert_eq!(counts(&report), [5, 4, 1, 1]);
    assert!(ids(&report).contains(&"tests/test_ops.py::TestGroup::test_zero_division".to_string()));
}

#[test]
fn parses_very_long_logs_with_a_cap_on_listed_failures() {
    let mut log = String::from(
        "============ test session starts ============\n============ FAILURES ============\n",
    );
    for n in 0..3000 {
        log.push_str(&format!("____ test_case_{n} ____\n\n    def test_case_{n}():\n>       assert {n} == -1\nE       assert {n} == -1\n\ntests/test_big.py:{n}: AssertionError\n"));
    }
    log.push_str("============ short test summary info ============\n");
    for n in 0..3000 {
        log.push_str(&format!(
            "FAILED tests/test_big.py::test_case_{n} - assert {n} == -1\n"
        ));
    }
    log.push_str("============ 3000 failed, 7 passed in 12.00s ============\n");
    let report = parse_bytes(log.as_bytes(), "pytest");
    assert_eq!(counts(&report), [7, 3000, 0, 0]);
    assert_eq!(report["failures"].as_array().unwrap().len(), 200);
    assert_eq!(report["failures_omitted"], 2800);
    assert_eq!(
        failure(&report, "tests/test_big.py::test_case_199")["line"],
        199
    );
}

#[test]
fn many_tests_and_huge_names_stay_cheap_and_small() {
    // 20,000 Go tests with subtests, and as many libtest failures with their output blocks
    // (each once took a pass over all the others).
    let mut go = String::new();
    for n in 0..10_000 {
        go.push_str(&format!(
            "{{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"T{n}/sub\"}}\n\
             {{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"T{n}\"}}\n"
        ));
    }
    let report = parse_bytes(go.as_bytes(), "go");
    assert_eq!(counts(&report), [0, 10_000, 0, 0]);
    assert_eq!(report["failures"][0]["id"], "T0/sub");
    let mut libtest = String::from("running 20000 tests\n");
    for n in 0..20_000 {
        libtest.push_str(&format!("test t{n} ... FAILED\n"));
    }
    libtest.push_str("\nfailures:\n\n");
    for n in 0..20_000 {
        libtest.push_str(&format!(
            "---- t{n} stdout ----\nthread 'x' panicked at src/lib.rs:{n}:5:\nboom {n}\n\n"
        ));
    }
    let report = parse_bytes(libtest.as_bytes(), "cargo");
    assert_eq!(counts(&report)[1], 20_000);
    assert_eq!(failure(&report, "t7")["message"], "boom 7");
    // The same test failing in two test binaries: each gets its own block.
    let twice = "running 1 test\ntest tests::smoke ... FAILED\n\nfailures:\n\n---- tests::smoke stdout ----\n\
                 thread 'tests::smoke' panicked at src/lib.rs:3:5:\nfirst\n\n";
    let log = format!(
        "{twice}{}",
        twice
            .replace("lib.rs", "main.rs")
            .replace("first", "second")
    );
    let report = parse_bytes(log.as_bytes(), "cargo");
    let messages: Vec<&str> = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["first", "second"], "{report:#}");
    // A Go test name of 20,000 levels.
    let deep = format!(
        "{{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"TestA{}\"}}\n",
        "/x".repeat(20_000)
    );
    assert_eq!(counts(&parse_bytes(deep.as_bytes(), "go")), [0, 1, 0, 0]);
    // A suite name of 1 MB: ids are cut, the report stays small.
    let mut tap = format!(
        "TAP version 13\n# Subtest: {}\n    # Subtest: b\n",
        "A".repeat(1 << 20)
    );
    for _ in 0..300 {
        tap.push_str("        not ok 1 - x\n");
    }
    let report = parse_bytes(tap.as_bytes(), "node");
    let size = report.to_string().len();
    assert!(size < 2 << 20, "a report of {size} bytes");
}

#[test]
fn nothing_from_the_project_runs_outside_the_sandbox() {
    // A project that names no runner, with a "virtualenv" whose python is a script: detection
    // must not run it on the host; inside the sandbox it cannot write outside.
    let marker = std::env::temp_dir().join(format!("autocoder-hostexec-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let test = Test::new();
    test.dir()
        .write("setup.py", "from setuptools import setup\nsetup()\n");
    let python = test.dir().write(
        ".venv/bin/python",
        &format!("#!/bin/sh\necho ran > {}\nexit 1\n", marker.display()),
    );
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = test.args(["run-tests"]).run();
    assert!(
        !marker.exists(),
        "the project's python ran with access to the host: {}",
        run.stderr()
    );
    let _ = std::fs::remove_file(&marker);
}

#[test]
fn detection_reads_no_link_fifo_or_device_the_sandbox_left() {
    // A link out of the workspace would be read as the project's package.json (and say vitest).
    let test = Test::new();
    let outside = test
        .path()
        .parent()
        .unwrap()
        .join(format!("autocoder-detect-{}.json", std::process::id()));
    std::fs::write(&outside, "{\"devDependencies\": {\"vitest\": \"4\"}}\n").unwrap();
    std::os::unix::fs::symlink(&outside, test.path().join("package.json")).unwrap();
    test.dir()
        .write("setup.py", "from setuptools import setup\nsetup()\n");
    test.dir().write("test_ok.py", "def test_ok():\n    pass\n");
    let run = test.args(["run-tests"]).run();
    let _ = std::fs::remove_file(&outside);
    assert_eq!(tests_of(&run)["framework"], "pytest", "{}", run.stderr());

    // A FIFO as the Makefile: reading it would wait for a writer (here one comes after 5 s, so
    // that a regression fails instead of hanging, and says `make`).
    let test = Test::new();
    let fifo = test.path().join("Makefile");
    crate::util::mkfifo(&fifo);
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        if finished
            .recv_timeout(std::time::Duration::from_secs(5))
            .is_ok()
        {
            return;
        }
        if let Ok(mut pipe) = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
        {
            let _ = pipe.write_all(b"test:\n\ttrue\n");
        }
    });
    let run = test.args(["run-tests"]).run().expect_status(2);
    assert!(
        run.stderr().contains("cannot tell which test framework"),
        "{}",
        run.stderr()
    );
    done.send(()).unwrap();
    writer.join().unwrap();
}

/// Issue 20, item 11: with the network off, tests serve and connect on loopback (IPv4 and IPv6);
/// one that reaches past it fails, and the report says why and which flag allows it.
#[test]
fn loopback_works_with_the_network_off_and_an_unreachable_host_is_explained() {
    let test = Test::new();
    test.dir().write(
        "test_net.py",
        r#"import socket
import threading


def echo_once(family, host):
    server = socket.socket(family, socket.SOCK_STREAM)
    server.bind((host, 0))
    server.listen(1)

    def serve():
        conn, _ = server.accept()
        conn.sendall(conn.recv(16))
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    client = socket.create_connection((host, server.getsockname()[1]), timeout=5)
    client.sendall(b"ping")
    assert client.recv(16) == b"ping"
    client.close()
    server.close()


def test_loopback_ipv4():
    echo_once(socket.AF_INET, "127.0.0.1")


def test_loopback_ipv6():
    echo_once(socket.AF_INET6, "::1")


def test_outside_host():
    # TEST-NET-1 (RFC 5737): never routed, so only the sandbox's answer is fast.
    socket.create_connection(("192.0.2.1", 80), timeout=5).close()
"#,
    );
    let run = test
        .args(["run-tests", "--framework", "pytest"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(counts(&report), [2, 1, 0, 0], "{report:#}");
    assert_eq!(ids(&report), ["test_net.py::test_outside_host"]);
    let reason = report["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("Network is unreachable") && reason.contains("the network is off"),
        "{report:#}"
    );
    assert!(report["hint"].as_str().unwrap().contains("--network"));
}

#[test]
fn a_python_project_without_pytest_falls_back_to_unittest() {
    let test = with_project("shop-python");
    let venv = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(test.path())
        .status()
        .unwrap();
    assert!(venv.success());
    let run = test.args(["run-tests"]).run().expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["framework"], "unittest", "{report:#}");
    assert_eq!(report["command"][0], ".venv/bin/python");
    assert_eq!(counts(&report), [3, 3, 0, 0]);
}

/// Issue 20, item 13: Python's bytecode (and pytest's rewritten tests) outlive a run, kept apart
/// from the workspace, and are never taken for an edit of the same size in the same second; for
/// root with pytest and for an ordinary user with unittest (the system's Python has no pytest).
#[test]
fn python_bytecode_is_read_from_the_interpreters_own_never_kept_nor_taken_for_a_same_sized_edit() {
    for (user, framework) in [(None, "pytest"), (Some(1500), "unittest")] {
        let cache = crate::util::TempDir::new();
        let workspace = crate::util::TempDir::new();
        let calc = workspace.write("calc.py", "");
        workspace.write(
            "test_calc.py",
            "import importlib.util, os, unittest\n\nfrom calc import value\n\n\n\
             class TestValue(unittest.TestCase):\n    def test_value(self):\n        \
             self.assertEqual(value(), 1)\n\n    \
             # The interpreter's own bytecode, through the cache, can be read from inside.\n    \
             def test_bytecode_is_read(self):\n        \
             with open(importlib.util.cache_from_source(os.__file__), 'rb') as cached:\n            \
             self.assertEqual(cached.read(4), importlib.util.MAGIC_NUMBER)\n",
        );
        if let Some(uid) = user {
            crate::util::chown_tree(cache.path(), uid);
            crate::util::chown_tree(workspace.path(), uid);
        }
        let edit = |text: &str, at: std::time::SystemTime| {
            let mut file = std::fs::File::options()
                .write(true)
                .truncate(true)
                .open(&calc)
                .unwrap();
            file.write_all(text.as_bytes()).unwrap();
            file.set_modified(at).unwrap();
        };
        let run = |status: i32| {
            let test = match user {
                Some(uid) => Test::new().run_as_user(uid),
                None => Test::new(),
            };
            let run = test
                .env("XDG_CACHE_HOME", cache.path())
                .args(["run-tests", "--framework", framework, "--workspace"])
                .arg(workspace.path())
                .run()
                .expect_status(status);
            tests_of(&run)
        };
        // What an edit in the second its bytecode is written looks like: the bytecode is no
        // later than the source's mtime (here, an hour ahead).
        let edited_at = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
        edit("def value():\n    return 1\n", edited_at);
        let first = run(0);
        assert_eq!(counts(&first), [2, 0, 0, 0], "{first:#}");
        // Read-only to the tests: autocoder alone writes it.
        let filesystem = &first["sandbox"]["layers"]["filesystem"];
        let kept = filesystem["read_only"]
            .as_array()
            .unwrap()
            .iter()
            .map(|path| PathBuf::from(path.as_str().unwrap()))
            .find(|path| path.file_name().is_some_and(|name| name == "bytecode"))
            .unwrap_or_else(|| panic!("no bytecode cache: {filesystem:#}"));
        // Seeded with the interpreter's own bytecode, which a prefix would otherwise hide.
        fn links_below(dir: &Path) -> Vec<PathBuf> {
            let mut links = Vec::new();
            for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
                let kind = entry.file_type().unwrap();
                if kind.is_symlink() {
                    links.push(std::fs::read_link(entry.path()).unwrap());
                } else if kind.is_dir() {
                    links.extend(links_below(&entry.path()));
                }
            }
            links
        }
        let links = links_below(&kept);
        let os = links.iter().find(|target| {
            let name = target.file_name().unwrap().to_string_lossy();
            name.starts_with("os.") && target.parent().unwrap().ends_with("__pycache__")
        });
        assert!(
            os.is_some_and(|os| os.exists()),
            "{} links, none to os",
            links.len()
        );
        let mirror = kept.join(
            workspace
                .path()
                .canonicalize()
                .unwrap()
                .strip_prefix("/")
                .unwrap(),
        );
        let kept_for = |stem: &str| -> Option<PathBuf> {
            std::fs::read_dir(&mirror)
                .ok()?
                .map(|entry| entry.unwrap().path())
                .find(|path| {
                    path.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with(stem)
                })
        };
        assert!(kept_for("test_calc.").is_none() && kept_for("calc.").is_none());
        assert!(
            !workspace.path().join("__pycache__").exists(),
            "the workspace stays clean"
        );
        // The same size and mtime: compiled afresh, never taken for the old version.
        edit("def value():\n    return 2\n", edited_at);
        let second = run(1);
        assert_eq!(counts(&second), [1, 1, 0, 0], "{second:#}");
    }
}

/// Issue 39, item 5: a test that writes bytecode for the code it tests (unchecked by hash, so
/// that Python never compares it with the source) into the bytecode cache and into the
/// workspace's `__pycache__` cannot make a later run lie once the code is changed.
#[test]
fn bytecode_a_test_leaves_is_never_taken_for_the_code() {
    // The poison: bytecode of `add` returning 5, checked by nothing (PEP 552 flags 1), where
    // the cache prefix puts calc's and in the workspace's own `__pycache__`.
    let poison = "import importlib.util, marshal, os, sys, unittest\n\nfrom calc import add\n\n\n\
                  class T(unittest.TestCase):\n\
                  \x20   def test_add(self):\n\
                  \x20       self.assertEqual(add(2, 3), 5)\n\n\
                  \x20   def test_poison(self):\n\
                  \x20       source = os.path.abspath('calc.py')\n\
                  \x20       code = compile('def add(a, b):\\n    return 5\\n', source, 'exec')\n\
                  \x20       head = importlib.util.MAGIC_NUMBER + (1).to_bytes(4, 'little') + bytes(8)\n\
                  \x20       name = 'calc.' + sys.implementation.cache_tag + '.pyc'\n\
                  \x20       for target in (importlib.util.cache_from_source(source), os.path.join('__pycache__', name)):\n\
                  \x20           try:\n\
                  \x20               os.makedirs(os.path.dirname(target), exist_ok=True)\n\
                  \x20               with open(target, 'wb') as out:\n\
                  \x20                   out.write(head + marshal.dumps(code))\n\
                  \x20           except OSError:\n\
                  \x20               pass\n";
    for (user, framework) in [(None, "pytest"), (Some(1501), "unittest")] {
        let cache = crate::util::TempDir::new();
        let workspace = crate::util::TempDir::new();
        workspace.write("calc.py", "def add(a, b):\n    return a + b\n");
        workspace.write("test_calc.py", poison);
        if let Some(uid) = user {
            crate::util::chown_tree(cache.path(), uid);
            crate::util::chown_tree(workspace.path(), uid);
        }
        let run = |status: i32| {
            let test = match user {
                Some(uid) => Test::new().run_as_user(uid),
                None => Test::new(),
            };
            let run = test
                .env("XDG_CACHE_HOME", cache.path())
                .args(["run-tests", "--framework", framework, "--workspace"])
                .arg(workspace.path())
                .run()
                .expect_status(status);
            tests_of(&run)
        };
        assert_eq!(counts(&run(0)), [2, 0, 0, 0], "user {user:?}");
        // The poison is where it could be put: in the workspace, not in the cache.
        assert!(workspace.path().join("__pycache__").exists());
        // The user breaks the code: the test must fail, and does.
        workspace.write("calc.py", "def add(a, b):\n    return a - b\n");
        let broken = run(1);
        assert_eq!(counts(&broken), [1, 1, 0, 0], "user {user:?}: {broken:#}");
    }
}

/// Issue 39, item 6: the project's interpreter, asked where it finds modules, cannot choose
/// what of the host is walked for the bytecode cache: an answer naming the home is not taken.
#[test]
fn the_projects_interpreter_chooses_no_host_directory_to_seed_the_cache_from() {
    let cache = crate::util::TempDir::new();
    let home = crate::util::TempDir::new();
    home.write(
        "private-project/__pycache__/secret_name.cpython-311.pyc",
        "x",
    );
    let workspace = crate::util::TempDir::new();
    workspace.write(".venv/pyvenv.cfg", "home = /usr/bin\n");
    let python = workspace.write(
        ".venv/bin/python",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = -c ]; then printf 'cpython-311\\n{home}\\n{home}/private-project\\n'; exit 0; fi\nexec python3 \"$@\"\n",
            home = home.path().display()
        ),
    );
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    workspace.write("test_ok.py", "def test_ok():\n    pass\n");
    let run = Test::new()
        .env("XDG_CACHE_HOME", cache.path())
        .env("HOME", home.path())
        .args(["run-tests", "--framework", "pytest", "--workspace"])
        .arg(workspace.path())
        .run();
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "passed", "{report:#}\n{}", run.stderr());
    let found = std::process::Command::new("find")
        .arg(cache.path())
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&found.stdout);
    assert!(listed.contains("bytecode"), "{listed}");
    assert!(
        !listed.contains("secret_name") && !listed.contains("private-project"),
        "the home's names reached the cache: {listed}"
    );
}

/// With the network on, the crates cargo downloads go into a cargo home of the run's own (the
/// host's registry is read-only inside), gone when it ends: a build script could change what is
/// kept there for every later run (issue 39, item 5). The registry is a sparse one on loopback,
/// served by Python's http.server.
#[test]
fn crates_downloaded_with_the_network_on_are_the_runs_own_and_never_kept() {
    let sh = |dir: &Path, script: &str| {
        let out = std::process::Command::new("sh")
            .args(["-c", script])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let registry = crate::util::TempDir::new();
    let tiny = registry.write("src/tinydep/Cargo.toml", "[package]\nname = \"tinydep\"\nversion = \"0.1.0\"\nedition = \"2021\"\nlicense = \"MIT\"\ndescription = \"t\"\n");
    let tiny = tiny.parent().unwrap();
    registry.write(
        "src/tinydep/src/lib.rs",
        "pub fn value() -> u32 {\n    7\n}\n",
    );
    sh(tiny, "cargo package --offline --no-verify --allow-dirty -q && mkdir -p ../../served/crates ../../served/ti/ny && cp target/package/tinydep-0.1.0.crate ../../served/crates/");
    let served = registry.path().join("served");
    let sum = sh(
        &served,
        "sha256sum crates/tinydep-0.1.0.crate | cut -d' ' -f1",
    );
    std::fs::write(
        served.join("ti/ny/tinydep"),
        format!(
            "{{\"name\":\"tinydep\",\"vers\":\"0.1.0\",\"deps\":[],\"cksum\":\"{}\",\"features\":{{}},\"yanked\":false}}\n",
            sum.trim()
        ),
    )
    .unwrap();
    /// The registry's server, stopped however the test ends.
    struct Server(std::process::Child);
    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut server = Server(
        std::process::Command::new("python3")
            .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
            .current_dir(&served)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut said = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.0.stdout.as_mut().unwrap()),
        &mut said,
    )
    .unwrap();
    // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
    let port = said.split_whitespace().nth(5).unwrap().to_string();
    std::fs::write(
        served.join("config.json"),
        format!("{{\"dl\":\"http://127.0.0.1:{port}/crates/{{crate}}-{{version}}.crate\"}}"),
    )
    .unwrap();

    let workspace = crate::util::TempDir::new();
    workspace.write(
        "Cargo.toml",
        "[package]\nname = \"uses\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ntinydep = \"0.1.0\"\n",
    );
    workspace.write(
        "src/lib.rs",
        "#[cfg(test)]\nmod tests {\n    #[test]\n    fn seven() {\n        assert_eq!(tinydep::value(), 7);\n    }\n}\n",
    );
    workspace.write(
        ".cargo/config.toml",
        &format!("[source.crates-io]\nreplace-with = \"loopback\"\n\n[source.loopback]\nregistry = \"sparse+http://127.0.0.1:{port}/\"\n"),
    );
    let cache = crate::util::TempDir::new();
    let run = || {
        let run = Test::new()
            .env("XDG_CACHE_HOME", cache.path())
            .args(["run-tests", "--network", "--workspace"])
            .arg(workspace.path())
            .run();
        let report = tests_of(&run);
        assert_eq!(report["outcome"], "passed", "{report:#}\n{}", run.stderr());
        report
    };
    let first = run();
    let writable = &first["sandbox"]["layers"]["filesystem"]["read_write"];
    assert!(
        !writable.to_string().contains("cargo"),
        "a cargo home is kept: {writable}"
    );
    let kept = std::process::Command::new("find")
        .arg(cache.path())
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&kept.stdout).contains("tinydep"),
        "the crate is kept"
    );
    // The registry gone, nothing of the first run's is there to build from.
    drop(server);
    std::fs::remove_dir_all(workspace.path().join("target")).unwrap();
    let again = Test::new()
        .env("XDG_CACHE_HOME", cache.path())
        .args(["run-tests", "--network", "--workspace"])
        .arg(workspace.path())
        .run();
    assert_ne!(tests_of(&again)["outcome"], "passed");
}

/// Issue 20, item 13: Go's caches outlive a run, per workspace, in the user's cache directory,
/// for root and for an ordinary user.
#[test]
fn go_s_caches_are_kept_per_workspace_between_runs() {
    let project = |test: &Test| {
        test.dir()
            .write("go.mod", "module example.com/kept\n\ngo 1.21\n");
        test.dir().write(
            "kept_test.go",
            "package kept\n\nimport \"testing\"\n\nfunc TestOk(t *testing.T) {}\n",
        );
    };
    // A run of `run-tests ARGS` from `test`'s directory, as root or as `user`, with `cache` as
    // the user's cache directory: the run, its report, and its output's tail.
    let go_run = |test: Test, args: &[&OsStr], user: Option<u32>, cache: &Path| {
        let test = match user {
            Some(uid) => test.run_as_user(uid),
            None => test,
        };
        let run = test
            .env("XDG_CACHE_HOME", cache)
            .arg("run-tests")
            .args(args)
            .run()
            .expect_status(0);
        let report = tests_of(&run);
        assert_eq!(counts(&report), [1, 0, 0, 0], "{report:#}");
        let tail = report["output_tail"].as_str().unwrap().to_string();
        (run, report, tail)
    };
    let kept_in = |report: &Value| {
        let kept = &report["sandbox"]["layers"]["filesystem"]["read_write"][1];
        PathBuf::from(kept.as_str().unwrap())
    };
    fn workspace(run: &Run) -> [&OsStr; 2] {
        ["--workspace".as_ref(), run.dir.path().as_os_str()]
    }
    let cache = crate::util::TempDir::new();
    let first = Test::new();
    project(&first);
    let (first, report, tail) = go_run(first, &[], None, cache.path());
    assert!(!tail.contains("(cached)"), "{tail}");
    let kept = kept_in(&report);
    let root = cache.path().join("autocoder/run-tests");
    assert!(kept.starts_with(root.canonicalize().unwrap()), "{kept:?}");
    assert!(kept.join("build").is_dir());
    // The same workspace again: Go finds what it built and ran.
    let (_, report, tail) = go_run(Test::new(), &workspace(&first), None, cache.path());
    assert!(tail.contains("(cached)"), "{tail}");
    assert_eq!(kept_in(&report), kept);
    // With the network on, a cache of its own: a pass had online is not replayed offline.
    let mut online = workspace(&first).to_vec();
    online.push("--network".as_ref());
    let (_, report, tail) = go_run(Test::new(), &online, None, cache.path());
    assert!(!tail.contains("(cached)"), "{tail}");
    assert_eq!(kept_in(&report).file_name().unwrap(), "go-network");
    // Another workspace with the same code starts from a cache of its own.
    let other = Test::new();
    project(&other);
    let (other, report, tail) = go_run(other, &[], None, cache.path());
    assert!(!tail.contains("(cached)"), "{tail}");
    let elsewhere = kept_in(&report);
    assert_ne!(elsewhere, kept);
    let workspaces = std::fs::read_dir(&root)
        .unwrap()
        .filter(|entry| entry.as_ref().unwrap().file_type().unwrap().is_dir())
        .count();
    assert_eq!(workspaces, 2);
    // A link put in the cache's place is not followed: the run goes on without a cache.
    let target = crate::util::TempDir::new();
    std::fs::remove_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(target.path(), &elsewhere).unwrap();
    let (run, report, _) = go_run(Test::new(), &workspace(&other), None, cache.path());
    assert_ne!(kept_in(&report), elsewhere);
    assert!(run.stderr().contains("is a link"), "{}", run.stderr());
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);

    if !crate::util::is_root() {
        return;
    }
    // Root with a cache directory of another user's (sudo keeping HOME) uses none.
    let theirs = crate::util::TempDir::new();
    crate::util::chown_tree(theirs.path(), 1500);
    let (run, report, _) = go_run(Test::new(), &workspace(&first), None, theirs.path());
    assert!(!kept_in(&report).starts_with(theirs.path()));
    assert!(
        run.stderr().contains("belongs to uid 1500"),
        "{}",
        run.stderr()
    );
    assert_eq!(std::fs::read_dir(theirs.path()).unwrap().count(), 0);
    // An ordinary user's runs keep theirs in their own cache directory.
    let mine = Test::new();
    project(&mine);
    let (mine, report, tail) = go_run(mine, &[], Some(1500), theirs.path());
    assert!(!tail.contains("(cached)"), "{tail}");
    let (_, _, tail) = go_run(Test::new(), &workspace(&mine), Some(1500), theirs.path());
    assert!(tail.contains("(cached)"), "{tail}");
    let build = std::fs::metadata(kept_in(&report).join("build")).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&build), 1500);
}

#[test]
fn go_run_in_the_sandbox() {
    let run = with_project("go-sample")
        .args(["run-tests"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["framework"], "go", "{report:#}");
    assert_eq!(report["outcome"], "tests_failed", "{report:#}");
    let max = failure(&report, "TestMax");
    assert_eq!(
        (max["file"].as_str(), max["line"].as_u64()),
        (Some("calc_test.go"), Some(7))
    );
    assert_eq!(max["message"], "Max(3, 7) = 3, want 7");
    assert_eq!(failure(&report, "TestMaxTable/first_larger")["line"], 23);
    let panic = failure(&report, "TestIndexOutOfRange");
    assert_eq!(
        (panic["file"].as_str(), panic["kind"].as_str()),
        (Some("calc.go"), Some("panic"))
    );

    let run = with_project("go-sample")
        .args(["run-tests", "--tests", "TestMaxTable/first_larger"])
        .run()
        .expect_status(1);
    assert_eq!(ids(&tests_of(&run)), ["TestMaxTable/first_larger"]);

    let test = with_project("go-sample");
    let calc = test.path().join("calc.go");
    std::fs::write(
        &calc,
        std::fs::read_to_string(&calc)
            .unwrap()
            .replace("values[i]", "values[j]"),
    )
    .unwrap();
    let report = tests_of(&test.args(["run-tests"]).run().expect_status(1));
    assert_eq!(report["outcome"], "build_failed", "{report:#}");
    assert_eq!(failure(&report, "example.com/calc")["file"], "calc.go");
}

#[test]
fn a_go_package_that_does_not_build_is_reported_beside_the_others() {
    let test = Test::new();
    let dir = test.dir();
    dir.write("go.mod", "module example.com/proj\n\ngo 1.19\n");
    dir.write(
        "ok/ok.go",
        "package ok\n\nfunc Add(a, b int) int { return a + b }\n",
    );
    dir.write(
        "ok/ok_test.go",
        "package ok\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
    );
    dir.write(
        "broken/broken.go",
        "package broken\n\nfunc Sub(a, b int) int { return a - c }\n",
    );
    dir.write(
        "broken/broken_test.go",
        "package broken\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {}\n",
    );
    let live = test.args(["run-tests"]).run().expect_status(1);
    let root = live.dir.path().to_path_buf();
    let report = tests_of(&live);
    assert_eq!(report["outcome"], "build_failed", "{report:#}");
    assert_eq!(report["counts"]["passed"], 1, "{report:#}");
    let broken = failure(&report, "example.com/proj/broken");
    assert_eq!(
        (
            broken["file"].as_str(),
            broken["line"].as_u64(),
            broken["kind"].as_str()
        ),
        (Some("broken/broken.go"), Some(3), Some("compile_error")),
        "{report:#}"
    );
    assert!(broken["message"].as_str().unwrap().contains("undefined: c"));
    // What a CI log keeps of `go test -json ./... > out.json`: before Go 1.24 the compiler's
    // messages went to stderr, but the package is still named.
    let saved = root.join("out.json");
    let go = std::process::Command::new("go")
        .args(["test", "-json", "./..."])
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .current_dir(&root)
        .stdout(std::fs::File::create(&saved).unwrap())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!go.success());
    let run = Test::new()
        .args(["run-tests", "--framework", "go", "--parse"])
        .arg(&saved)
        .arg("--workspace")
        .arg(&root)
        .run();
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "build_failed", "{report:#}");
    assert_eq!(report["counts"]["passed"], 1);
    assert_eq!(
        failure(&report, "example.com/proj/broken")["kind"],
        "compile_error"
    );
}

/// Issue 20, item 6: a module replaced with a directory outside the workspace is a build
/// failure that names the directory and the flag; with `--ro` the tests see it and run.
#[test]
fn a_go_module_replaced_from_outside_the_workspace_needs_ro() {
    let dep = crate::util::TempDir::new();
    dep.write("go.mod", "module example.com/dep\n\ngo 1.21\n");
    dep.write("dep.go", "package dep\n\nfunc Two() int { return 2 }\n");
    let beside = format!("../{}", dep.path().file_name().unwrap().to_str().unwrap());
    let project = |test: &Test| {
        test.dir().write(
            "go.mod",
            &format!(
                "module example.com/proj\n\ngo 1.21\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => {beside}\n"
            ),
        );
        test.dir().write(
            "proj_test.go",
            "package proj\n\nimport (\n\t\"testing\"\n\n\t\"example.com/dep\"\n)\n\nfunc TestTwo(t *testing.T) {\n\tif dep.Two() != 2 {\n\t\tt.Fatal(\"not two\")\n\t}\n}\n",
        );
    };
    let test = Test::new();
    project(&test);
    let run = test.args(["run-tests"]).run().expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "build_failed", "{report:#}");
    assert!(report["build_error"]
        .as_str()
        .unwrap()
        .contains(&format!("replacement directory {beside} does not exist")));
    assert!(report["reason"]
        .as_str()
        .unwrap()
        .contains("outside the workspace"));
    let dir = dep.path().canonicalize().unwrap();
    assert_eq!(
        report["hint"],
        format!("let the tests read it: run-tests --ro {}", dir.display())
    );

    let test = Test::new();
    project(&test);
    let run = test
        .args(["run-tests", "--ro"])
        .arg(&dir)
        .run()
        .expect_status(0);
    assert_eq!(counts(&tests_of(&run)), [1, 0, 0, 0]);
}

#[test]
fn a_go_project_with_vendored_modules_runs_offline() {
    let test = Test::new();
    test.dir().write(
        "go.mod",
        "module example.com/app\n\ngo 1.19\n\nrequire example.org/dep v1.0.0\n",
    );
    test.dir().write(
        "vendor/modules.txt",
        "# example.org/dep v1.0.0\n## explicit\nexample.org/dep\n",
    );
    test.dir().write(
        "vendor/example.org/dep/dep.go",
        "package dep\n\nfunc Double(n int) int { return 2 * n }\n",
    );
    test.dir().write(
        "app_test.go",
        "package app\n\nimport (\n\t\"testing\"\n\n\t\"example.org/dep\"\n)\n\n\
         func TestDouble(t *testing.T) {\n\tif dep.Double(2) != 4 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
    );
    let run = test.args(["run-tests"]).run().expect_status(0);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "passed", "{report:#}");
    assert_eq!(counts(&report), [1, 0, 0, 0]);
}

#[test]
fn node_test_run_in_the_sandbox() {
    let run = with_project("node-sample")
        .args(["run-tests"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["framework"], "node", "{report:#}");
    assert_eq!(counts(&report), [1, 2, 0, 1]);
    let nested = failure(&report, "arithmetic > nested group > subtracts");
    assert_eq!(
        (nested["file"].as_str(), nested["line"].as_u64()),
        (Some("test/math.test.js"), Some(12))
    );
    assert_eq!(
        nested["message"],
        "Expected values to be strictly equal: -2 !== 2"
    );
    let divide = failure(&report, "arithmetic > divides by zero");
    assert_eq!(
        (divide["file"].as_str(), divide["kind"].as_str()),
        (Some("math.js"), Some("RangeError"))
    );

    let run = with_project("node-sample")
        .args(["run-tests", "--tests", "arithmetic > divides by zero"])
        .run()
        .expect_status(1);
    assert_eq!(ids(&tests_of(&run)), ["arithmetic > divides by zero"]);
}

#[test]
fn node_ids_are_the_names_as_written_and_run_again() {
    // TAP escapes `#` and `\` in names; the ids are the names the tests were given.
    let project = || {
        let test = Test::new();
        test.dir()
            .write("package.json", r#"{"scripts": {"test": "node --test"}}"#);
        test.dir().write(
            "test/names.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\n\
             test('issue #42 regression', () => assert.ok(false));\n\
             test('path C:\\\\temp', () => assert.ok(false));\n\
             test('passes', () => {});\n",
        );
        test
    };
    let report = tests_of(&project().args(["run-tests"]).run().expect_status(1));
    let mut names = ids(&report);
    names.sort();
    assert_eq!(
        names,
        ["issue #42 regression", "path C:\\temp"],
        "{report:#}"
    );
    for id in names {
        let report = tests_of(
            &project()
                .args(["run-tests", "--tests", &id])
                .run()
                .expect_status(1),
        );
        assert_eq!(ids(&report), [id.as_str()], "{report:#}");
        assert_eq!(counts(&report)[0], 0, "{report:#}");
    }
}

#[test]
fn a_node_hook_that_throws_is_the_failure_that_says_why() {
    let test = Test::new();
    test.dir()
        .write("package.json", r#"{"scripts": {"test": "node --test"}}"#);
    test.dir().write(
        "test/db.test.js",
        "const { describe, it, before } = require('node:test');\n\
         describe('db', () => {\n  \
         before(() => { throw new Error('cannot connect to db'); });\n  \
         it('reads', () => {});\n});\n",
    );
    let report = tests_of(&test.args(["run-tests"]).run().expect_status(1));
    let hook = failure(&report, "db");
    assert_eq!(
        (
            hook["kind"].as_str(),
            hook["message"].as_str(),
            hook["file"].as_str(),
            hook["line"].as_u64()
        ),
        (
            Some("hook_failed"),
            Some("cannot connect to db"),
            Some("test/db.test.js"),
            Some(3)
        ),
        "{report:#}"
    );
}

#[test]
fn node_runs_the_files_the_project_s_test_script_names() {
    // `node --test` alone would also run test/helpers.js (every file under test/).
    let test = Test::new();
    test.dir().write(
        "package.json",
        r#"{"scripts": {"test": "node --test test/*.test.js"}}"#,
    );
    test.dir().write(
        "test/add.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\n\
         test('adds', () => assert.strictEqual(1 + 1, 2));\n",
    );
    test.dir().write(
        "test/helpers.js",
        "throw new Error('a helper, not a test');\n",
    );
    let run = test.args(["run-tests"]).run().expect_status(0);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "passed", "{report:#}");
    assert_eq!(counts(&report), [1, 0, 0, 0]);
}

#[test]
fn a_test_file_that_does_not_compile_is_named_with_its_line() {
    let broken = |file: &str, text: &str, passing: Option<(&str, &str)>| {
        let test = Test::new();
        test.dir().write(file, text);
        if let Some((file, text)) = passing {
            test.dir().write(file, text);
        }
        test.dir()
            .write("package.json", r#"{"scripts": {"test": "node --test"}}"#);
        test
    };
    let pytest_build_failure = |test: Test| {
        let report = tests_of(
            &test
                .args(["run-tests", "--framework", "pytest"])
                .run()
                .expect_status(1),
        );
        assert_eq!(report["outcome"], "build_failed", "{report:#}");
        report
    };
    // pytest: a collection error, at the line Python names.
    let test = broken("test_bad.py", "def test_a(:\n    pass\n", None);
    std::fs::remove_file(test.path().join("package.json")).unwrap();
    let report = pytest_build_failure(test);
    let failure = &report["failures"][0];
    assert_eq!(
        (
            &failure["file"],
            &failure["line"],
            &failure["kind"],
            &failure["message"]
        ),
        (
            &Value::from("test_bad.py"),
            &Value::from(1),
            &Value::from("SyntaxError"),
            &Value::from("invalid syntax")
        ),
        "{report:#}"
    );
    // pytest: a conftest.py that does not import stops pytest before it collects (exit 4).
    let test = Test::new();
    test.dir().write(
        "tests/conftest.py",
        "import os\nimport no_such_module_here\n",
    );
    test.dir()
        .write("tests/test_a.py", "def test_a():\n    pass\n");
    let report = pytest_build_failure(test);
    let failure = &report["failures"][0];
    assert_eq!(
        (&failure["file"], &failure["line"], &failure["kind"]),
        (
            &Value::from("tests/conftest.py"),
            &Value::from(2),
            &Value::from("ModuleNotFoundError"),
        ),
        "{report:#}"
    );
    assert!(
        report["build_error"]
            .as_str()
            .is_some_and(|e| e.contains("no_such_module_here")),
        "{report:#}"
    );
    // node --test: the file's failure says why it did not load; beside a passing file the run
    // is a test failure, alone it is a build failure.
    for (file, passing, outcome) in [
        (
            "test/bad.test.js",
            Some(("test/ok.test.js", "require('node:test')('ok', () => {});\n")),
            "tests_failed",
        ),
        ("test/bad.test.js", None, "build_failed"),
        // An ES module: Node names it by its file:// address.
        ("test/bad.test.mjs", None, "build_failed"),
    ] {
        let test = broken(file, "const x = (;\n", passing);
        let report = tests_of(&test.args(["run-tests"]).run().expect_status(1));
        assert_eq!(report["outcome"], outcome, "{report:#}");
        let failure = &report["failures"][0];
        assert_eq!(
            (&failure["file"], &failure["line"], &failure["kind"]),
            (
                &Value::from(file),
                &Value::from(1),
                &Value::from("SyntaxError")
            ),
            "{report:#}"
        );
        assert!(
            failure["message"]
                .as_str()
                .unwrap()
                .contains("Unexpected token"),
            "{report:#}"
        );
    }
}

#[test]
fn parses_go_and_node_outputs() {
    let go = parse("outputs/go-failures.log", "go");
    assert_eq!(
        ids(&go),
        [
            "TestMax",
            "TestMaxTable/first_larger",
            "TestIndexOutOfRange"
        ]
    );
    assert_eq!(counts(&go), [1, 3, 0, 0]);
    let broken = parse("outputs/go-build-error.log", "go");
    assert_eq!(broken["outcome"], "build_failed");
    assert!(broken["build_error"]
        .as_str()
        .unwrap()
        .contains("undefined: j"));
    let node = parse("outputs/node-failures.log", "node");
    assert_eq!(counts(&node), [1, 2, 0, 1]);
    assert_eq!(
        ids(&node),
        [
            "arithmetic > nested group > subtracts",
            "arithmetic > divides by zero"
        ]
    );
}

#[test]
fn jest_and_vitest_run_in_the_sandbox() {
    let run = with_project("jest-sample")
        .args(["run-tests"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["framework"], "jest", "{report:#}");
    assert_eq!(counts(&report), [1, 2, 1, 1]);
    let totals = failure(
        &report,
        "__tests__/cart.test.js > cart > with items > totals prices",
    );
    assert_eq!(
        (totals["file"].as_str(), totals["line"].as_u64()),
        (Some("__tests__/cart.test.js"), Some(10))
    );
    assert_eq!(
        totals["message"],
        "expect(received).toBe(expected) // Object.is equality (Expected: 15, Received: 16.5)"
    );
    assert_eq!(
        failure(&report, "__tests__/broken.test.js")["kind"],
        "load_error"
    );

    let id = "__tests__/cart.test.js > cart > with items > totals prices";
    let run = with_project("jest-sample")
        .args(["run-tests", "--tests", id])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(ids(&report), [id]);
    assert_eq!(counts(&report)[1], 1);

    // A jest project with no tests yet: none ran, which is not a runner that failed.
    for framework in ["jest", "vitest"] {
        let test = Test::new();
        test.dir().write(
            "package.json",
            &format!(r#"{{"devDependencies": {{"{framework}": "*"}}}}"#),
        );
        let run = test.args(["run-tests"]).run().expect_status(1);
        let report = tests_of(&run);
        assert_eq!(
            (&report["framework"], &report["outcome"]),
            (&Value::from(framework), &Value::from("no_tests")),
            "{report:#}"
        );
    }

    let run = with_project("vitest-sample")
        .args(["run-tests"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["framework"], "vitest", "{report:#}");
    assert_eq!(counts(&report), [1, 2, 0, 1]);
    let double = failure(
        &report,
        "test/strings.test.js > strings > words > ignores double spaces",
    );
    assert_eq!(
        (double["file"].as_str(), double["line"].as_u64()),
        (Some("test/strings.test.js"), Some(14))
    );
    assert_eq!(double["kind"], "AssertionError");

    // vitest takes file filters as plain text (jest as regular expressions).
    let id = "test/strings.test.js > strings > words > ignores double spaces";
    let run = with_project("vitest-sample")
        .args(["run-tests", "--tests", id])
        .run()
        .expect_status(1);
    assert_eq!(ids(&tests_of(&run)), [id]);

    // Ids that select nothing: the runners count every test as skipped, and none ran.
    for (project, id) in [
        (
            "jest-sample",
            "__tests__/cart.test.js > cart > no such test",
        ),
        (
            "vitest-sample",
            "test/strings.test.js > strings > no such test",
        ),
        ("node-sample", "arithmetic > no such test"),
    ] {
        let run = with_project(project)
            .args(["run-tests", "--tests", id])
            .run()
            .expect_status(1);
        let report = tests_of(&run);
        assert_eq!(report["outcome"], "no_tests", "{project}: {report:#}");
    }
}

#[test]
fn unittest_runs_a_test_named_by_its_pytest_id() {
    let test = Test::new();
    test.dir().write("tests/__init__.py", "");
    test.dir().write(
        "tests/test_x.py",
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_y(self):\n        \
         self.assertEqual(1, 2)\n\n    def test_z(self):\n        pass\n",
    );
    let run = test
        .args(["run-tests", "--framework", "unittest"])
        .args(["--tests", "tests/test_x.py::T::test_y"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "tests_failed", "{report:#}");
    assert_eq!(ids(&report), ["tests.test_x.T.test_y"]);
    assert_eq!(counts(&report), [0, 1, 0, 0]);
}

#[test]
fn a_vitest_config_that_writes_its_json_report_to_a_file_still_gives_the_report() {
    let test = Test::new();
    test.dir()
        .write("package.json", r#"{"name": "p", "type": "module"}"#);
    test.dir().write(
        "vitest.config.js",
        "export default { test: { globals: true, reporters: ['default', 'json'],\n  \
         outputFile: { json: 'reports/vitest.json' } } };\n",
    );
    test.dir()
        .write("a.test.js", "test('a', () => { expect(1).toBe(1); });\n");
    let run = test.args(["run-tests"]).run().expect_status(0);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "passed", "{report:#}");
    assert_eq!(counts(&report), [1, 0, 0, 0]);
    assert!(!run.dir.path().join("reports").exists());
}

#[test]
fn a_jest_that_stops_before_its_report_is_an_error_in_its_own_words() {
    let test = Test::new();
    test.dir().write(
        "package.json",
        r#"{"devDependencies": {"jest": "*"}, "jest": {"preset": "no-such-preset"}}"#,
    );
    test.dir()
        .write("a.test.js", "test('a', () => expect(1).toBe(1));\n");
    let run = test.args(["run-tests"]).run().expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["outcome"], "error", "{report:#}");
    assert!(
        run.stderr().contains("stopped before it wrote a report")
            && run.stderr().contains("no-such-preset"),
        "{}",
        run.stderr()
    );
}

#[test]
fn parses_jest_and_vitest_reports() {
    let jest = parse("outputs/jest-failures.log", "jest");
    assert_eq!(counts(&jest), [1, 2, 1, 1]);
    assert_eq!(jest["outcome"], "tests_failed");
    let vitest = parse("outputs/vitest-failures.log", "vitest");
    assert_eq!(
        ids(&vitest),
        [
            "test/strings.test.js > strings > capitalizes",
            "test/strings.test.js > strings > words > ignores double spaces"
        ]
    );
}

#[test]
fn nextest_run_in_the_sandbox() {
    let run = with_project("cargo-sample")
        .args(["run-tests", "--framework", "nextest"])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["framework"], "nextest");
    assert_eq!(report["outcome"], "tests_failed", "{report:#}");
    assert_eq!(report["exit_code"], 100);
    assert_eq!(counts(&report), [2, 3, 0, 1]);
    let max = failure(&report, "tests::max_picks_the_larger");
    assert_eq!(
        (max["file"].as_str(), max["line"].as_u64()),
        (Some("src/lib.rs"), Some(32))
    );
    assert_eq!(
        failure(&report, "integration_max")["message"],
        "assertion `left == right` failed: max of 1 and 2"
    );

    let run = with_project("cargo-sample")
        .args([
            "run-tests",
            "--framework",
            "nextest",
            "--tests",
            "tests::panics_with_a_message",
        ])
        .run()
        .expect_status(1);
    assert_eq!(ids(&tests_of(&run)), ["tests::panics_with_a_message"]);
    // The tests left out are not counted as skipped.
    assert_eq!(counts(&tests_of(&run)), [0, 1, 0, 0]);
}

#[test]
fn parses_nextest_events_and_its_human_output() {
    // The events, and (issue 20, item 8) what a CI log holds without them.
    for log in ["nextest-failures", "nextest-human-failures"] {
        let report = parse(&format!("outputs/{log}.log"), "nextest");
        assert_eq!(report["outcome"], "tests_failed", "{log}: {report:#}");
        assert_eq!(counts(&report), [2, 3, 0, 1], "{log}");
        let panicked = failure(&report, "tests::panics_with_a_message");
        assert_eq!(panicked["message"], "no values to work with");
        assert_eq!(
            (panicked["file"].as_str(), panicked["line"].as_u64()),
            (Some("src/lib.rs"), Some(38))
        );
        let integration = failure(&report, "integration_max");
        assert!(integration["details"]
            .as_str()
            .unwrap()
            .contains("max of 1 and 2"));
    }
    let report = parse("outputs/nextest-human-compile-error.log", "nextest");
    assert_eq!(report["outcome"], "build_failed", "{report:#}");
    assert!(report["build_error"]
        .as_str()
        .unwrap()
        .contains("cannot find value `missing_value`"));
}

#[test]
fn command_overrides_the_runner_command() {
    let run = with_project("pytest-sample")
        .args(["run-tests", "--command", "python3 -m pytest -p no:cacheprovider -rfE 'tests/test_ops.py::test_parse_ratio[half]'"])
        .run()
        .expect_status(0);
    let report = tests_of(&run);
    assert_eq!(
        report["command"],
        serde_json::json!([
            "python3",
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rfE",
            "tests/test_ops.py::test_parse_ratio[half]"
        ])
    );
    assert_eq!(counts(&report), [1, 0, 0, 0]);
    // `-q` gives the counts on a line of their own, subtests their own summary lines.
    let with_subtests = || {
        let test = Test::new();
        test.dir().write(
            "test_sub.py",
            "import unittest\n\nclass T(unittest.TestCase):\n    def test_sub(self):\n        for i in range(3):\n            with self.subTest(i=i):\n                self.assertEqual(i % 2, 0)\n\ndef test_ok():\n    pass\n",
        );
        test.args(["run-tests", "--framework", "pytest"])
    };
    let run = with_subtests()
        .args([
            "--command",
            "python3 -m pytest -q -p no:cacheprovider test_sub.py::test_ok",
        ])
        .run()
        .expect_status(0);
    assert_eq!(counts(&tests_of(&run)), [1, 0, 0, 0]);
    let run = with_subtests().run().expect_status(1);
    let report = tests_of(&run);
    assert_eq!(ids(&report), ["test_sub.py::T::test_sub"], "{report}");
    assert!(
        report["failures"][0]["message"]
            .as_str()
            .unwrap()
            .ends_with("[subtest (i=1)]"),
        "{report}"
    );

    let run = with_project("shop-python")
        .args([
            "run-tests",
            "--framework",
            "unittest",
            "--command",
            "python3 -m unittest -v 2>&1 | cat >&2; exit 1",
        ])
        .run()
        .expect_status(1);
    let report = tests_of(&run);
    assert_eq!(report["command"][0], "sh");
    assert_eq!(counts(&report), [3, 3, 0, 0]);
}

#[test]
fn a_test_script_with_arguments_names_the_runner() {
    // As zod's and fast-json-stringify's package.json have it: the runner only in the script,
    // with arguments, and no dependency naming it (installed globally here).
    for (script, framework) in [("vitest run", "vitest"), ("vitest --run", "vitest")] {
        let test = with_project("vitest-sample");
        std::fs::write(
            test.path().join("package.json"),
            format!(r#"{{"name": "sample", "type": "module", "scripts": {{"test": "{script}"}}}}"#),
        )
        .unwrap();
        let run = test.arg("run-tests").run();
        let report = tests_of(&run);
        assert_eq!(report["framework"], framework, "{script}: {report:#}");
        assert_eq!(
            report["framework_reason"],
            format!("package.json's test script runs {framework}")
        );
        assert_eq!(report["outcome"], "tests_failed", "{report:#}");
    }
}

#[test]
fn a_project_whose_entry_point_is_unittest_runs_its_doctests() {
    // Shaped like more-itertools: doctests added to the suite by load_tests, and tox.ini running
    // `python -m unittest` (pytest, installed here, would run the unit tests and skip the
    // doctests). The doctest holds the injected bug.
    let test = Test::new();
    let dir = test.dir();
    dir.write("pkg/__init__.py", "");
    dir.write(
        "pkg/ops.py",
        "def first(items):\n    \"\"\"The first item.\n\n    >>> first([1, 2])\n    1\n    \"\"\"\n    return items[-1]\n",
    );
    dir.write("tests/__init__.py", "");
    dir.write(
        "tests/test_ops.py",
        "import doctest, unittest\nimport pkg.ops\n\n\ndef load_tests(loader, tests, ignore):\n    \
         tests.addTests(doctest.DocTestSuite(pkg.ops))\n    return tests\n\n\n\
         class Ops(unittest.TestCase):\n    def test_module(self):\n        self.assertTrue(pkg.ops.first)\n",
    );
    dir.write(
        "setup.py",
        "from setuptools import setup\nsetup(name='pkg')\n",
    );
    dir.write(
        "tox.ini",
        "[tox]\nenvlist = py3\n\n[testenv]\ncommands = {envpython} -m unittest {posargs}\n",
    );
    let run = test.arg("run-tests").run();
    let report = tests_of(&run);
    assert_eq!(report["framework"], "unittest", "{report:#}");
    assert_eq!(
        report["framework_reason"],
        "tox.ini runs python -m unittest"
    );
    assert_eq!(report["outcome"], "tests_failed", "{report:#}");
    let failed = ids(&report);
    assert!(
        failed.iter().any(|id| id.contains("first")),
        "the doctest's failure: {report:#}"
    );
}

#[test]
fn a_silent_stdin_and_a_zero_timeout_are_said() {
    // `sleep 2 | autocoder run-tests`: the stage says what it waits for.
    let test = with_project("pytest-sample");
    let mut child = std::process::Command::new(crate::util::autocoder_bin())
        .args(["run-tests", "--framework", "pytest"])
        .current_dir(test.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("waiting for the run document on stdin"),
        "{stderr}"
    );
    let run = Test::new()
        .args(["run-tests", "--timeout", "0"])
        .run()
        .expect_status(2);
    assert!(run.stderr().contains("more than zero"), "{}", run.stderr());
}

#[test]
fn expected_failures_are_counted_apart_from_skips() {
    let source = "import unittest, pytest\n\n\
                  @pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n\n\
                  @pytest.mark.xfail(reason='known')\ndef test_known():\n    assert False\n\n\
                  @pytest.mark.xfail(reason='fixed?')\ndef test_fixed():\n    assert True\n\n\
                  def test_fine():\n    assert True\n";
    let test = Test::new();
    test.dir().write("test_marks.py", source);
    let report = tests_of(&test.args(["run-tests", "--framework", "pytest"]).run());
    let c = &report["counts"];
    assert_eq!(
        [&c["passed"], &c["skipped"], &c["xfailed"], &c["xpassed"]],
        [1, 1, 1, 1],
        "{report:#}"
    );
    assert_eq!(report["outcome"], "passed");
    let source = "import unittest


class Marks(unittest.TestCase):
    @unittest.skip('later')
    def test_later(self):
        pass

    @unittest.expectedFailure
    def test_known(self):
        self.fail()

    @unittest.expectedFailure
    def test_fixed(self):
        pass

    def test_fine(self):
        pass
";
    let test = Test::new();
    test.dir().write("test_marks.py", source);
    let report = tests_of(&test.args(["run-tests", "--framework", "unittest"]).run());
    let c = &report["counts"];
    assert_eq!(
        [&c["passed"], &c["skipped"], &c["xfailed"], &c["xpassed"]],
        [1, 1, 1, 1],
        "{report:#}"
    );
    // unittest fails the run for the unexpected success (Python 3.11 on): it is listed.
    assert_eq!(report["outcome"], "tests_failed", "{report:#}");
    assert_eq!(report["failures"][0]["kind"], "unexpected_success");
}

#[test]
fn an_error_says_why_in_the_runner_s_words() {
    let test = Test::new();
    test.dir()
        .write("test_a.py", "def test_a():\n    assert True\n");
    let report = tests_of(
        &test
            .args([
                "run-tests",
                "--framework",
                "pytest",
                "--tests",
                "test_a.py::test_nope",
            ])
            .run(),
    );
    assert_eq!(report["outcome"], "error", "{report:#}");
    assert!(
        report["reason"].as_str().unwrap().contains("not found"),
        "{report:#}"
    );
    assert!(report["hint"].as_str().unwrap().contains("--tests"));
    let test = Test::new();
    test.dir()
        .write("test_a.py", "def test_a():\n    assert True\n");
    test.dir()
        .write("pytest.ini", "[pytest]\naddopts = -p nosuchplugin\n");
    let report = tests_of(&test.arg("run-tests").run());
    assert_eq!(report["outcome"], "error", "{report:#}");
    assert!(
        report["reason"].as_str().unwrap().contains("nosuchplugin"),
        "{report:#}"
    );
}

#[test]
fn files_another_user_left_in_the_workspace_are_named() {
    if !crate::util::is_root() {
        eprintln!("skipped: needs root to leave root's files in a user's workspace");
        return;
    }
    // As after `sudo make test` once: a directory of root's in the user's project, which the
    // user's sandboxed tests cannot write.
    let test = Test::new();
    test.dir()
        .write("Makefile", "test:\n\techo x > state/last-run\n");
    let root = test.path().to_path_buf();
    let bin = root.join(".bin");
    std::fs::create_dir(&bin).unwrap();
    crate::util::chown_tree(&root, 1500);
    std::fs::create_dir(root.join("state")).unwrap();
    let home = crate::util::TempDir::new();
    crate::util::chown_tree(home.path(), 1500);
    let output = crate::util::autocoder_as(Some(1500), &bin)
        .args(["run-tests", "--framework", "make"])
        .current_dir(&root)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&output.stderr)));
    let report = &doc["tests"];
    assert_ne!(report["outcome"], "passed", "{report:#}");
    let reason = report["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("state (uid 0)"), "{report:#}");
    assert!(
        report["hint"].as_str().unwrap().contains("chown"),
        "{report:#}"
    );
}

/// Issue 39, item 5: Go's caches are written by the runs, and keyed by content. A test that
/// overwrites everything the build and test caches hold (its results, the compiled packages)
/// cannot make a later run of changed code pass.
#[test]
fn what_a_test_writes_into_gos_cache_never_passes_changed_code() {
    let cache = crate::util::TempDir::new();
    let workspace = crate::util::TempDir::new();
    workspace.write("go.mod", "module example.com/calc\n\ngo 1.21\n");
    workspace.write(
        "calc.go",
        "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
    );
    workspace.write(
        "calc_test.go",
        "package calc\n\nimport (\n\t\"io/fs\"\n\t\"os\"\n\t\"path/filepath\"\n\t\"testing\"\n)\n\n\
         func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n\n\
         // Every file of the build cache rewritten: a passing result, a package that adds.\n\
         func TestPoison(t *testing.T) {\n\tfilepath.WalkDir(os.Getenv(\"GOCACHE\"), func(path string, entry fs.DirEntry, err error) error {\n\
         \t\tif err == nil && !entry.IsDir() {\n\t\t\tos.WriteFile(path, []byte(\"ok  \\texample.com/calc\\t(cached)\\nPASS\\n\"), 0o644)\n\t\t}\n\t\treturn nil\n\t})\n}\n",
    );
    let run = || {
        Test::new()
            .env("XDG_CACHE_HOME", cache.path())
            .args(["run-tests", "--workspace"])
            .arg(workspace.path())
            .run()
    };
    let first = run();
    assert_eq!(tests_of(&first)["outcome"], "passed", "{}", first.stderr());
    workspace.write(
        "calc.go",
        "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
    );
    let changed = tests_of(&run());
    assert_ne!(changed["outcome"], "passed", "{changed:#}");
    // Said as it is: the broken cache or the failing test.
    assert!(
        changed["outcome"] == "tests_failed" || changed["outcome"] == "build_failed",
        "{changed:#}"
    );
}
