//! run_command and run_tests: commands run in the sandbox, with progress and cancellation.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::mcp_session::{initialized, Session};
use crate::util::TempDir;

#[test]
fn stdin_ending_mid_call_stops_the_sandboxed_command_and_the_server() {
    let dir = TempDir::new();
    let mut session = initialized(dir.path());
    let marker = format!("61.{}", std::process::id());
    start_sleeping(&mut session, 5, &marker);
    let closed = std::time::Instant::now();
    drop(session.stdin.take());
    assert!(session.child.wait().unwrap().success());
    assert!(
        closed.elapsed() < Duration::from_secs(10),
        "{:?}",
        closed.elapsed()
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while sleeping(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command outlived the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn commands_run_in_the_sandbox_with_progress_and_cancellation() {
    let dir = TempDir::new();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/x.txt"), "one line\n").unwrap();
    let mut session = initialized(dir.path());
    let ran = session.call(
        "run_command",
        json!({"argv": ["sh", "-c", "echo hi; echo err >&2; exit 3"]}),
    )["structuredContent"]
        .clone();
    assert_eq!(
        (
            ran["exit_code"].as_i64(),
            ran["stdout"].as_str(),
            ran["stderr"].as_str()
        ),
        (Some(3), Some("hi\n"), Some("err\n"))
    );
    let ran = session.call(
        "run_command",
        json!({"command": "pwd; touch /etc/escape 2>/dev/null || echo refused", "cwd": "sub"}),
    )["structuredContent"]
        .clone();
    assert!(
        ran["stdout"].as_str().unwrap().ends_with("/sub\nrefused\n"),
        "{ran}"
    );
    let ran = session.call("run_command", json!({"argv": ["cat"], "stdin": "piped\n"}))
        ["structuredContent"]
        .clone();
    assert_eq!(ran["stdout"], "piped\n");
    let text = session.call_error("run_command", json!({"argv": [], "command": "x"}));
    assert!(text.contains("argv") && text.contains("command"), "{text}");

    // Progress, when asked for, while a command runs.
    session.send_raw(&json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call",
        "params": {"name": "run_command", "arguments": {"argv": ["sleep", "2.5"]}, "_meta": {"progressToken": "p-1"}}}).to_string());
    let mut progress = Vec::new();
    let result = loop {
        let message = session.receive();
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "p-1");
            progress.push(message["params"]["progress"].as_f64().unwrap());
        } else {
            break message;
        }
    };
    assert_eq!(result["id"], 900);
    assert!(
        !progress.is_empty() && progress.windows(2).all(|w| w[0] < w[1]),
        "{progress:?}"
    );

    // Cancelled: no answer, and the command is gone.
    let marker = format!("319.{}", std::process::id());
    start_sleeping(&mut session, 901, &marker);
    // Other calls are answered while it runs, on workers that finished earlier calls.
    for _ in 0..3 {
        let read = session.call("read_file", json!({"path": "sub/x.txt"}));
        assert_eq!(read["structuredContent"]["total_lines"], 1, "{read}");
    }
    // Its id is not taken again while it runs: a cancellation could not tell the two apart.
    session.send_raw(
        &json!({"jsonrpc": "2.0", "id": 901, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "sub/x.txt"}}})
        .to_string(),
    );
    let refused = session.receive();
    assert_eq!(
        (&refused["id"], &refused["error"]["code"]),
        (&json!(901), &json!(-32600)),
        "{refused}"
    );
    assert!(sleeping(&marker), "the command ended on its own");
    // Its reason cut in half an emoji, as JavaScript writes it: a lone surrogate, which
    // serde_json cannot hold. The cancellation is still read.
    session.send_raw(r#"{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 901, "reason": "user hit \ud83d"}}"#);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while sleeping(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the cancelled command is still running"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pong = session.request("ping", json!({}));
    assert_eq!(
        pong["result"],
        json!({}),
        "a cancelled call was answered: {pong}"
    );
}

/// Calls run_command `sleep MARKER` as request `id` and waits until the sleep runs.
fn start_sleeping(session: &mut Session, id: u64, marker: &str) {
    session.send_raw(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "run_command", "arguments": {"argv": ["sleep", marker], "timeout_sec": 600}}})
        .to_string(),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !sleeping(marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sleeping(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&format!("sleep\0{marker}")))
    })
}

#[test]
fn run_tests_reports_failures_from_the_sandbox() {
    let dir = TempDir::new();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/projects/pytest-sample");
    assert!(Command::new("cp")
        .arg("-r")
        .arg(format!("{}/.", sample.display()))
        .arg(dir.path())
        .status()
        .unwrap()
        .success());
    let mut session = initialized(dir.path());
    let report = session.call("run_tests", json!({}))["structuredContent"].clone();
    assert_eq!(report["outcome"], "tests_failed", "{report}");
    // The report has exactly the fields its output schema lists (clients validate it).
    let tools = session.request("tools/list", json!({}))["result"]["tools"].clone();
    let schema = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "run_tests")
        .unwrap()["outputSchema"]
        .clone();
    let mut listed: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut given: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // Left out when there is nothing to say: why a run failed, and what was still running.
    let when_said = ["hint", "reason", "running"];
    for key in when_said {
        if !given.contains(&key) {
            given.push(key);
        }
    }
    listed.sort();
    given.sort();
    assert_eq!(given, listed, "{schema}");
    for required in schema["required"].as_array().unwrap() {
        assert!(!report[required.as_str().unwrap()].is_null(), "{required}");
    }
    let ids: Vec<&str> = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"tests/test_ops.py::test_mean"), "{ids:?}");
    let again = session.call(
        "run_tests",
        json!({"tests": ["tests/test_ops.py::test_add"]}),
    )["structuredContent"]
        .clone();
    assert_eq!(again["outcome"], "passed", "{again}");
}
