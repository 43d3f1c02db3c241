//! The offline engine's candidates run warm: pytest and unittest forked from a worker that
//! imported the runner and the project's dependencies once, jest and vitest in a worker that
//! loaded the runner, `node --test` without the runner's process. Each warm result must be what
//! a cold run gives; tests that depend on what only a fresh process has send the repair cold.

use serde_json::Value;

use crate::util::{section_of, with_project, Run, Test};

/// The events named `name` the run wrote to events.jsonl.
fn events_named(run: &Run, name: &str) -> Vec<Value> {
    std::fs::read_to_string(run.dir.path().join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["event"] == name)
        .collect()
}

/// What each attempt tried and what its tests said, in order.
fn verdicts(heal: &Value) -> Vec<(Value, Value, Value, Value)> {
    heal["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let fields = ["change", "still_failing", "regressions", "kept"];
            let [change, still, regressions, kept] = fields.map(|f| a[f].clone());
            (change, still, regressions, kept)
        })
        .collect()
}

#[test]
fn a_python_repairs_candidates_run_warm_and_judge_as_cold_runs_do() {
    let (warm_run, warm) = healed(with_project("shop-python"), &[]);
    let (cold_run, cold) = healed(with_project("shop-python"), &["--cold"]);
    judged_as_cold((&warm_run, &warm), (&cold_run, &cold));
    // The failing tests ran warm; every run of the whole suite, which decides what is kept,
    // cold.
    let runs: Vec<Value> = events_named(&warm_run, "tests")
        .into_iter()
        .filter(|e| e["attempt"].as_u64() > Some(0))
        .collect();
    assert!(runs.iter().any(|r| r["scope"] == "all"), "{runs:#?}");
    for run in &runs {
        assert_eq!(run["warm"], run["scope"] == "failing", "{run}");
    }
    // The tests' final run is a fresh process's.
    assert_eq!(warm["tests"]["outcome"], "passed");
}

/// heal --engine mutate --jobs 1 -v with `flags` on `test`'s project, green; its heal section.
fn healed(test: Test, flags: &[&str]) -> (Run, Value) {
    let run = test
        .args(["heal", "--engine", "mutate", "--jobs", "1", "-v"])
        .args(["--events", "events.jsonl"])
        .args(flags.iter().copied())
        .run()
        .expect_status(0);
    let heal = section_of(&run, "heal");
    assert_eq!(heal["status"], "green", "{heal:#}\n{}", run.stderr());
    (run, heal)
}

/// A repair's every candidate ran warm, and was judged as the same repair with --cold judged
/// it: the same candidates, the same verdicts, in the same order.
fn judged_as_cold((warm_run, warm): (&Run, &Value), (cold_run, cold): (&Run, &Value)) {
    assert_eq!(verdicts(warm), verdicts(cold));
    let attempts = warm["attempts"].as_array().unwrap().len();
    assert_eq!(ran_warm(warm), attempts, "{warm:#}\n{}", warm_run.stderr());
    assert_eq!(ran_warm(cold), 0);
    let said = events_named(warm_run, "warm");
    assert_eq!(said.len(), 1, "{said:#?}");
    assert_eq!(said[0]["warm"], true);
    assert!(events_named(cold_run, "warm").is_empty());
}

fn ran_warm(heal: &Value) -> usize {
    let attempts = heal["attempts"].as_array().unwrap();
    attempts.iter().filter(|a| a["warm"] == true).count()
}

/// The repair ran every candidate cold, and said once why, with `why` in its words.
fn ran_cold_because(run: &Run, heal: &Value, why: &str) {
    let said = events_named(run, "warm");
    assert_eq!(said.len(), 1, "{said:#?}");
    assert_eq!(said[0]["warm"], false);
    let reason = said[0]["reason"].as_str().unwrap();
    assert!(reason.contains(why), "{reason}");
    assert_eq!(ran_warm(heal), 0, "{heal:#}");
}

/// `project`'s calc.js (its `add` subtracts) repaired warm and with --cold, judged alike.
fn calc_judged_as_cold(project: impl Fn() -> Test, fixed: &str) {
    let heal_with = |flags: &[&str]| {
        let (run, heal) = healed(project(), flags);
        let calc = std::fs::read_to_string(run.dir.path().join("calc.js")).unwrap();
        assert!(calc.contains(fixed), "{calc}");
        (run, heal)
    };
    let (warm_run, warm) = heal_with(&[]);
    let (cold_run, cold) = heal_with(&["--cold"]);
    judged_as_cold((&warm_run, &warm), (&cold_run, &cold));
}

#[test]
fn a_warm_run_sees_the_modules_and_the_home_a_fresh_process_sees() {
    // The failing test checks that fractions is imported lazily (the worker imported it after
    // the first run), and the discount table is cached in the home (an earlier run's cache
    // would hide the fix).
    let test = Test::new();
    test.dir().write("calc/__init__.py", "");
    test.dir().write(
        "calc/ops.py",
        "import json\nimport os\n\n\ndef bulk_discount(quantity):\n    return 21 if quantity > 50 else 0\n\n\n\
         def cached(quantity):\n    path = os.path.expanduser('~/.cache/table.json')\n\
         \x20   if not os.path.exists(path):\n        os.makedirs(os.path.dirname(path), exist_ok=True)\n\
         \x20       with open(path, 'w') as file:\n            json.dump({'60': bulk_discount(60)}, file)\n\
         \x20   with open(path) as file:\n        return json.load(file)[str(quantity)]\n\n\n\
         def ratio(text):\n    from fractions import Fraction\n\n    return Fraction(text)\n",
    );
    test.dir().write("tests/__init__.py", "");
    test.dir().write(
        "tests/test_ops.py",
        "import sys\n\nimport calc.ops\n\n\ndef test_sixty_items_get_twenty_percent():\n\
         \x20   assert \"fractions\" not in sys.modules\n    assert calc.ops.ratio(\"1/2\") * 2 == 1\n\
         \x20   assert calc.ops.cached(60) == 20\n",
    );
    let (run, heal) = healed(test, &[]);
    let ops = std::fs::read_to_string(run.dir.path().join("calc/ops.py")).unwrap();
    assert!(ops.contains("return 20 if"), "{ops}");
    assert!(ran_warm(&heal) > 0, "{heal:#}\n{}", run.stderr());
    assert!(!run.stderr().contains("run cold"), "{}", run.stderr());
}

#[test]
fn tests_that_see_their_dependencies_were_imported_in_another_process_run_the_repair_cold() {
    // A dependency in the project's virtualenv notes the process that imported it (as
    // libraries that must notice a fork do); the failing test checks it is its own: warm, the
    // worker imported it.
    let test = Test::new();
    let venv = test.path().join(".venv");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--system-site-packages"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success());
    let site = crate::util::stdout_of(
        std::process::Command::new(venv.join("bin/python"))
            .args(["-c", "import site; print(site.getsitepackages()[0])"]),
    );
    std::fs::write(
        std::path::Path::new(site.trim()).join("forkcheck.py"),
        "import os\n\nIMPORTED_BY = os.getpid()\n",
    )
    .unwrap();
    test.dir().write("calc/__init__.py", "");
    test.dir()
        .write("calc/ops.py", "def add(a, b):\n    return a - b\n");
    test.dir().write("tests/__init__.py", "");
    test.dir().write(
        "tests/test_ops.py",
        "import os\n\nimport forkcheck\n\nimport calc.ops\n\n\ndef test_add():\n\
         \x20   assert forkcheck.IMPORTED_BY == os.getpid(), \"imported in another process\"\n\
         \x20   assert calc.ops.add(2, 3) == 5\n",
    );
    let (run, heal) = healed(test, &[]);
    let ops = std::fs::read_to_string(run.dir.path().join("calc/ops.py")).unwrap();
    assert!(ops.contains("return a + b"), "{ops}");
    let said = events_named(&run, "warm");
    assert_eq!(said.len(), 1, "{said:#?}");
    assert_eq!(said[0]["warm"], false);
    let reason = said[0]["reason"].as_str().unwrap();
    assert!(reason.contains("imported in another process"), "{reason}");
    assert!(
        run.stderr().contains("the candidates run cold"),
        "{}",
        run.stderr()
    );
    assert_eq!(ran_warm(&heal), 0, "{heal:#}");
}

/// A `node --test` project whose `add` is wrong: `failing_files` hold a failing test each (the
/// first an ES module whose name holds what a shell or a URL would read), `test/mul.test.js`
/// passes.
fn node_project(test: &Test, failing_files: usize) {
    test.dir().write(
        "package.json",
        r#"{"name": "calc", "private": true, "scripts": {"test": "node --test"}}"#,
    );
    test.dir().write(
        "calc.js",
        "exports.add = (a, b) => a - b;\nexports.mul = (a, b) => a * b;\n",
    );
    test.dir().write(
        "test/-add again #2.test.mjs",
        "import test from 'node:test';\nimport assert from 'node:assert';\n\
         import { createRequire } from 'node:module';\n\n\
         const { add } = createRequire(import.meta.url)('../calc.js');\n\n\
         test('adds again', async () => {\n  assert.strictEqual(add(1, 1), 2);\n});\n",
    );
    if failing_files > 1 {
        test.dir().write(
            "test/add.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\n\
             const { add } = require('../calc.js');\n\n\
             test('adds', () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n",
        );
    }
    test.dir().write(
        "test/mul.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\n\
         const { mul } = require('../calc.js');\n\n\
         test('multiplies', () => {\n  assert.strictEqual(mul(2, 3), 6);\n});\n",
    );
}

/// `healed` with `flags` on a `node_project`, its `add` repaired.
fn node_healed(failing_files: usize, flags: &[&str]) -> (Run, Value) {
    let test = Test::new();
    node_project(&test, failing_files);
    let (run, heal) = healed(test, flags);
    let calc = std::fs::read_to_string(run.dir.path().join("calc.js")).unwrap();
    assert!(calc.contains("exports.add = (a, b) => a + b;"), "{calc}");
    (run, heal)
}

#[test]
fn a_node_repairs_candidates_run_their_test_file_alone_and_judge_as_cold_runs_do() {
    let (warm_run, warm) = node_healed(1, &[]);
    let (cold_run, cold) = node_healed(1, &["--cold"]);
    // Had the file not been run as it is named, its test would not have failed as it did
    // cold, and the repair would have run cold.
    judged_as_cold((&warm_run, &warm), (&cold_run, &cold));
}

#[test]
fn failing_node_tests_of_two_files_run_cold_as_the_runner_keeps_them_apart() {
    let (run, heal) = node_healed(2, &[]);
    ran_cold_because(&run, &heal, "defined in 2 files");
}

#[test]
fn a_jest_repairs_candidates_run_in_a_worker_that_loaded_jest_and_judge_as_cold_runs_do() {
    let project = || {
        let test = Test::new();
        test.dir().write(
            "package.json",
            r#"{"name": "calc", "private": true, "scripts": {"test": "jest"},
                "jest": {"testEnvironment": "node"}}"#,
        );
        test.dir().write(
            "calc.js",
            "exports.add = (a, b) => a - b;\nexports.mul = (a, b) => a * b;\n",
        );
        test.dir().write(
            "__tests__/calc.test.js",
            "const { add, mul } = require('../calc');\n\n\
             test('adds', () => {\n  expect(add(2, 3)).toBe(5);\n});\n\n\
             test('multiplies', () => {\n  expect(mul(2, 3)).toBe(6);\n});\n",
        );
        test
    };
    calc_judged_as_cold(project, "exports.add = (a, b) => a + b;");
}

#[test]
fn jests_config_is_loaded_afresh_and_a_global_setup_sends_the_repair_cold() {
    // The config computes a global from the code under repair: each warm run must load it
    // again, or the fix would be judged on the bug's value.
    let project = |test: &Test, package: &str| {
        test.dir().write("package.json", package);
        test.dir()
            .write("limits.js", "exports.limit = (a, b) => a - b;\n");
        test.dir().write(
            "limits.test.js",
            "const { limit } = require('./limits');\n\
             test('limit', () => {\n  expect(limit(2, 3)).toBe(5);\n  expect(LIMIT).toBe(5);\n});\n",
        );
    };
    let test = Test::new();
    project(
        &test,
        r#"{"name": "calc", "private": true, "scripts": {"test": "jest"}}"#,
    );
    test.dir().write(
        "jest.config.js",
        "const { limit } = require('./limits');\n\
         module.exports = { testEnvironment: 'node', globals: { LIMIT: limit(2, 3) } };\n",
    );
    let (run, heal) = healed(test, &[]);
    let limits = std::fs::read_to_string(run.dir.path().join("limits.js")).unwrap();
    assert!(limits.contains("a + b"), "{limits}");
    assert!(ran_warm(&heal) > 0, "{heal:#}\n{}", run.stderr());

    // A global setup runs in jest's own process, which a warm worker keeps.
    let test = Test::new();
    project(
        &test,
        r#"{"name": "calc", "private": true, "scripts": {"test": "jest"},
            "jest": {"testEnvironment": "node", "globalSetup": "./setup.js",
                     "globals": {"LIMIT": 5}}}"#,
    );
    test.dir().write(
        "setup.js",
        "module.exports = async () => {\n  process.env.STARTED = '1';\n};\n",
    );
    let (run, heal) = healed(test, &[]);
    ran_cold_because(&run, &heal, "globalSetup");
}

/// A vitest project with `config` as its vitest.config.js, and no tests yet.
fn vitest_project(config: &str) -> Test {
    let test = Test::new();
    test.dir()
        .write("package.json", r#"{"name": "calc", "type": "module"}"#);
    test.dir().write("vitest.config.js", config);
    test
}

/// A vitest project (`vitest_project`) whose `add` subtracts.
fn vitest_calc(config: &str) -> Test {
    let test = vitest_project(config);
    test.dir().write(
        "calc.js",
        "export const add = (a, b) => a - b;\nexport const mul = (a, b) => a * b;\n",
    );
    test.dir().write(
        "calc.test.js",
        "import { add, mul } from './calc.js';\n\n\
         test('adds', () => {\n  expect(add(2, 3)).toBe(5);\n});\n\n\
         test('multiplies', () => {\n  expect(mul(2, 3)).toBe(6);\n});\n",
    );
    test
}

#[test]
fn a_vitest_repairs_candidates_run_in_a_worker_that_keeps_vitest_and_judge_as_cold_runs_do() {
    let project = || vitest_calc("export default { test: { globals: true } };\n");
    calc_judged_as_cold(project, "add = (a, b) => a + b;");
}

#[test]
fn vitests_config_is_as_each_cold_run_loads_it_and_a_global_setup_sends_the_repair_cold() {
    // The config defines a global from the code under repair: a warm run must load it again
    // once a candidate changed that code, or the fix would be judged on the bug's value.
    let test = vitest_calc(
        "import { add } from './calc.js';\n\
         export default { test: { globals: true }, define: { SUM: add(2, 3) } };\n",
    );
    test.dir().write(
        "sum.test.js",
        "test('the sum is defined', () => {\n  expect(SUM).toBe(5);\n});\n",
    );
    let (run, heal) = healed(test, &[]);
    let calc = std::fs::read_to_string(run.dir.path().join("calc.js")).unwrap();
    assert!(calc.contains("add = (a, b) => a + b;"), "{calc}");
    assert!(ran_warm(&heal) > 0, "{heal:#}\n{}", run.stderr());

    // The config sets the environment the code reads: each warm run must have it, as each cold
    // run, which loads the config, has.
    let test = vitest_project(
        "process.env.DISCOUNT = '10';\nexport default { test: { globals: true } };\n",
    );
    test.dir().write(
        "discount.js",
        "export function discount(quantity) {\n  const rate = Number(process.env.DISCOUNT || 0);\n  \
         if (quantity > 10) return rate;\n  return 0;\n}\n",
    );
    test.dir().write(
        "discount.test.js",
        "import { discount } from './discount.js';\n\
         test('ten items get the discount', () => {\n  expect(discount(10)).toBe(10);\n});\n",
    );
    let (run, heal) = healed(test, &[]);
    let discount = std::fs::read_to_string(run.dir.path().join("discount.js")).unwrap();
    assert!(discount.contains("quantity >= 10"), "{discount}");
    assert!(ran_warm(&heal) > 0, "{heal:#}\n{}", run.stderr());

    // A global setup runs once per vitest instance, which a warm worker keeps.
    let test =
        vitest_calc("export default { test: { globals: true, globalSetup: './setup.js' } };\n");
    test.dir().write(
        "setup.js",
        "export default () => {\n  process.env.STARTED = '1';\n};\n",
    );
    let (run, heal) = healed(test, &[]);
    ran_cold_because(&run, &heal, "globalSetup");
}

#[test]
fn a_worker_that_stops_answering_while_alternatives_are_sought_sends_the_rest_cold() {
    // After the fix (`steps * 2` → `steps`), an alternative (`i += 2` → `i -= 2`) loops: the
    // worker does not answer, and the alternatives after it run cold, not each waiting for it.
    let test = vitest_project("export default { test: { globals: true } };\n");
    test.dir().write(
        "steps.js",
        "export function countSteps(n) {\n  let i = 0;\n  let steps = 0;\n  \
         while (i < n) {\n    i += 2;\n    steps++;\n  }\n  return steps * 2;\n}\n",
    );
    test.dir().write(
        "steps.test.js",
        "import { countSteps } from './steps.js';\n\
         test('two steps', () => {\n  expect(countSteps(4)).toBe(2);\n});\n",
    );
    let (run, _) = healed(test, &["--max-candidates", "40"]);
    let said = events_named(&run, "warm");
    let cold = said.iter().find(|event| event["warm"] == false);
    let reason = cold.and_then(|event| event["reason"].as_str());
    assert!(
        reason.is_some_and(|reason| reason.contains("did not answer in time")),
        "{said:#?}\n{}",
        run.stderr()
    );
}
