//! The offline engine's candidates run warm (pytest, unittest): forked from a worker that
//! imported the runner and the project's dependencies once. Each warm result must be what a
//! cold run gives; tests that depend on what only a fresh process has send the repair cold.

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
    let heal_with = |flags: &[&str]| {
        let run = with_project("shop-python")
            .args(["heal", "--engine", "mutate", "--jobs", "1"])
            .args(["--events", "events.jsonl"])
            .args(flags.iter().copied())
            .run()
            .expect_status(0);
        let heal = section_of(&run, "heal");
        assert_eq!(heal["status"], "green", "{heal:#}\n{}", run.stderr());
        (run, heal)
    };
    let (warm_run, warm) = heal_with(&[]);
    let (cold_run, cold) = heal_with(&["--cold"]);
    // The same candidates, judged the same, in the same order.
    assert_eq!(verdicts(&warm), verdicts(&cold));
    let ran_warm = |heal: &Value| {
        let attempts = heal["attempts"].as_array().unwrap();
        attempts.iter().filter(|a| a["warm"] == true).count()
    };
    let attempts = warm["attempts"].as_array().unwrap().len();
    assert_eq!(ran_warm(&warm), attempts, "{warm:#}");
    assert_eq!(ran_warm(&cold), 0);
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
    let said = events_named(&warm_run, "warm");
    assert_eq!(said.len(), 1, "{said:#?}");
    assert_eq!(said[0]["warm"], true);
    assert!(events_named(&cold_run, "warm").is_empty());
    // The tests' final run is a fresh process's.
    assert_eq!(warm["tests"]["outcome"], "passed");
}

#[test]
fn tests_that_see_what_a_warm_worker_imported_run_the_repair_cold() {
    // The failing test checks that fractions is imported lazily: cold it fails on the bug
    // alone; warm, fractions would be there before it starts.
    let test = Test::new();
    test.dir().write("calc/__init__.py", "");
    test.dir().write(
        "calc/ops.py",
        "def add(a, b):\n    return a - b\n\n\ndef ratio(text):\n    from fractions import Fraction\n\n    return Fraction(text)\n",
    );
    test.dir().write("tests/__init__.py", "");
    test.dir().write(
        "tests/test_ops.py",
        "import sys\n\nimport calc.ops\n\n\ndef test_add_keeps_fractions_lazy():\n    assert \"fractions\" not in sys.modules\n    assert calc.ops.ratio(\"1/2\") * 2 == 1\n    assert calc.ops.add(2, 3) == 5\n",
    );
    let run = test
        .args(["heal", "--engine", "mutate", "--jobs", "1", "-v"])
        .args(["--events", "events.jsonl"])
        .run()
        .expect_status(0);
    let heal = section_of(&run, "heal");
    assert_eq!(heal["status"], "green", "{heal:#}\n{}", run.stderr());
    let ops = std::fs::read_to_string(run.dir.path().join("calc/ops.py")).unwrap();
    assert!(ops.contains("return a + b"), "{ops}");
    let said = events_named(&run, "warm");
    assert_eq!(said.len(), 1, "{said:#?}");
    assert_eq!(said[0]["warm"], false);
    let reason = said[0]["reason"].as_str().unwrap();
    assert!(reason.contains("did not fail as they did cold"), "{reason}");
    assert!(
        run.stderr().contains("the candidates run cold"),
        "{}",
        run.stderr()
    );
    let attempts = heal["attempts"].as_array().unwrap();
    assert!(attempts.iter().all(|a| a["warm"].is_null()), "{heal:#}");
}
