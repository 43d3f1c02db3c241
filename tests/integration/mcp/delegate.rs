//! `delegate_task` and `delegate_to_local_coder` driven by the official Python SDK's client, the
//! model a loopback fake configured as local-coder's variables name it.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fake_server::{FakeServer, Reply};
use crate::heal::CHAT;
use crate::heal_task::{add_multiply, calls, MULTIPLY_TEST};
use crate::util::{autocoder_bin, typescript_sdk, with_committed_project};

fn have_sdk() -> bool {
    Command::new("python3")
        .args(["-c", "import mcp"])
        .status()
        .is_ok_and(|s| s.success())
}

/// tests/mcp_delegate_client.py calling `tool` in `mode` on the server rooted at `root`, with
/// local-coder's variables naming `server` (and `more` variables).
fn client(
    root: &Path,
    server: &FakeServer,
    tool: &str,
    mode: &str,
    more: &[(&str, &str)],
) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_delegate_client.py");
    Command::new("python3")
        .envs(more.iter().copied())
        .arg(script)
        .arg(autocoder_bin())
        .arg(root)
        .args([tool, mode])
        .env("LOCAL_CODER_BASE_URL", format!("{}/v1", server.url()))
        .env("LOCAL_CODER_MODEL", "qwen3-coder")
        .env("LOCAL_CODER_API_KEY", "local-key-77")
        .env("LOCAL_CODER_ENABLE_THINKING", "false")
        .output()
        .unwrap()
}

/// The model's replies for a task that ends green: a test written and run, multiply added,
/// finish.
pub(super) fn multiply_steps() -> Vec<Reply> {
    vec![
        calls(
            1,
            &[
                (
                    "write_file",
                    json!({"path": "tests/test_multiply.py", "content": MULTIPLY_TEST}),
                ),
                ("run_tests", json!({})),
            ],
        ),
        calls(2, &[add_multiply()]),
        calls(
            3,
            &[("finish", json!({"summary": "multiply added and tested"}))],
        ),
    ]
}

#[test]
fn a_delegated_task_reports_each_step_and_returns_a_tested_diff() {
    if !have_sdk() {
        eprintln!("skipped: the MCP Python SDK is not installed (pip install mcp; .ci/run does)");
        return;
    }
    let server = FakeServer::start(vec![(CHAT, multiply_steps())]);
    let test = with_committed_project("calculator-python");
    let output = client(
        test.path(),
        &server,
        "delegate_to_local_coder",
        "finish",
        &[],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("listed: True"), "{stdout}");
    for step in [
        "step 1: write_file tests/test_multiply.py",
        "step 1: run_tests",
        "step 2: edit_file calculator.py",
        "step 3: asking qwen3-coder",
    ] {
        assert!(stdout.contains(step), "{step}: {stdout}");
    }
    assert!(stdout.contains("progress increasing: True"), "{stdout}");
    let result: Value = serde_json::from_str(
        stdout
            .lines()
            .find_map(|line| line.strip_prefix("result: "))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(result["status"], "green", "{result:#}");
    assert_eq!(result["applied"], true);
    assert_eq!(result["summary"], "multiply added and tested");
    assert_eq!(result["tests"]["outcome"], "passed");
    assert!(result["diff"]
        .as_str()
        .unwrap()
        .contains("+def multiply(a, b):"));
    let text = stdout
        .lines()
        .find_map(|line| line.strip_prefix("text: "))
        .unwrap();
    assert!(
        text.contains("status: green") && text.contains("the model's summary (unchecked)"),
        "{text}"
    );
    assert!(std::fs::read_to_string(test.path().join("calculator.py"))
        .unwrap()
        .contains("def multiply"));
    // The model was asked as local-coder's variables say, thinking off.
    let request = &server.requests()[0];
    assert_eq!(request.headers["authorization"], "Bearer local-key-77");
    let body: Value = serde_json::from_str(&request.body).unwrap();
    assert_eq!(body["model"], "qwen3-coder");
    assert_eq!(
        body["chat_template_kwargs"],
        json!({"enable_thinking": false})
    );
    assert_eq!(body["thinking_budget_tokens"], 0);
    let offered: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        !offered.iter().any(|name| name.starts_with("delegate")),
        "{offered:?}"
    );
}

#[test]
fn a_cancelled_delegated_task_leaves_the_workspace_and_keeps_its_change_in_a_patch() {
    if !have_sdk() {
        eprintln!("skipped: the MCP Python SDK is not installed (pip install mcp; .ci/run does)");
        return;
    }
    let server = FakeServer::start(vec![(
        CHAT,
        vec![
            calls(
                1,
                &[(
                    "write_file",
                    json!({"path": "tests/test_multiply.py", "content": MULTIPLY_TEST}),
                )],
            ),
            calls(2, &[("finish", json!({"summary": "never sent"}))])
                .delayed(Duration::from_secs(60)),
        ],
    )]);
    let test = with_committed_project("calculator-python");
    let started = Instant::now();
    let output = client(test.path(), &server, "delegate_task", "cancel", &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("cancelled: True"), "{stdout}");
    assert!(
        stdout.contains("serving after the cancellation: True"),
        "{stdout}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "the task was not stopped at once"
    );
    assert!(
        !test.path().join("tests/test_multiply.py").exists(),
        "the workspace was changed"
    );
    // The change so far is kept, in a patch in the repository's git directory.
    let patches = test.path().join(".git/autocoder");
    let deadline = Instant::now() + Duration::from_secs(20);
    let patch = loop {
        let found = std::fs::read_dir(&patches).ok().and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "patch"))
        });
        if let Some(found) = found {
            break found;
        }
        assert!(
            Instant::now() < deadline,
            "no patch in {}: {stderr}",
            patches.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(std::fs::read_to_string(&patch)
        .unwrap()
        .contains("+from calculator import multiply"));
    // The client was told where, in a log message.
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with("log: warning request ")
                && line.ends_with(&format!(
                    ": cancelled; the change so far is in {}",
                    patch.display()
                ))),
        "{stdout}"
    );
}

/// tests/mcp_delegate_task.mjs (the TypeScript SDK, running the delegate as an MCP task) in
/// `mode` on the server rooted at `root`, with local-coder's variables naming `server`; None
/// when the SDK is not installed.
fn task_client(root: &Path, server: &FakeServer, mode: &str) -> Option<Output> {
    let sdk = typescript_sdk()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_delegate_task.mjs");
    let output = Command::new("node")
        .arg(script)
        .arg(sdk)
        .arg(autocoder_bin())
        .arg(root)
        .arg(mode)
        .env("LOCAL_CODER_BASE_URL", format!("{}/v1", server.url()))
        .env("LOCAL_CODER_MODEL", "qwen3-coder")
        .env("LOCAL_CODER_ENABLE_THINKING", "false")
        .output()
        .unwrap();
    Some(output)
}

#[test]
fn a_delegated_task_runs_as_an_mcp_task_to_its_end_or_until_cancelled() {
    let server = FakeServer::start(vec![(CHAT, multiply_steps())]);
    let test = with_committed_project("calculator-python");
    let Some(output) = task_client(test.path(), &server, "finish") else {
        eprintln!("skipped: the MCP TypeScript SDK is not installed (npm install --global @modelcontextprotocol/sdk; .ci/run does)");
        return;
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("stream: taskCreated, status working, status completed, result"),
        "{stdout}\n{stderr}"
    );
    let result: Value = serde_json::from_str(
        stdout
            .lines()
            .find_map(|line| line.strip_prefix("result: "))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(result["status"], "green", "{result:#}");
    assert!(std::fs::read_to_string(test.path().join("calculator.py"))
        .unwrap()
        .contains("def multiply"));

    // Cancelled while the model is asked again: the workspace stays, the change is a patch,
    // and the task's result says where.
    let mut held = multiply_steps();
    held.truncate(1);
    held.push(calls(2, &[add_multiply()]).delayed(Duration::from_secs(60)));
    let server = FakeServer::start(vec![(CHAT, held)]);
    let test = with_committed_project("calculator-python");
    let started = Instant::now();
    let output = task_client(test.path(), &server, "cancel").unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("created: working"), "{stdout}");
    assert!(stdout.contains("cancelled: cancelled"), "{stdout}");
    assert!(stdout.contains("status after: cancelled"), "{stdout}");
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "not stopped at once"
    );
    let said = stdout
        .lines()
        .find_map(|line| line.strip_prefix("said: "))
        .unwrap();
    assert!(said.contains(".patch"), "{said}");
    assert!(!test.path().join("tests/test_multiply.py").exists());
}

#[test]
fn a_workspace_outside_the_roots_or_an_empty_task_is_refused_naming_the_roots() {
    let test = with_committed_project("calculator-python");
    let mut session = crate::mcp_session::initialized(test.path());
    let refused = session.call_error(
        "delegate_task",
        json!({"task": "Add multiply", "workspace": "/etc"}),
    );
    assert!(refused.contains("outside the allowed roots"), "{refused}");
    assert!(
        refused.contains(&test.path().canonicalize().unwrap().display().to_string()),
        "{refused}"
    );
    let refused = session.call_error("delegate_to_local_coder", json!({"task": "  "}));
    assert!(refused.contains("task is empty"), "{refused}");
    // No model in the server's environment: said in its terms.
    let refused = session.call_error("delegate_task", json!({"task": "Add multiply"}));
    assert!(
        refused.contains("no model is configured for this server: set AUTOCODER_BASE_URL"),
        "{refused}"
    );
}

#[test]
fn a_model_that_refuses_the_key_is_said_in_the_result() {
    let server = FakeServer::start(vec![(
        CHAT,
        vec![Reply::json(
            401,
            r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}"#,
        )],
    )]);
    let test = with_committed_project("calculator-python");
    let mut command = Command::new("env");
    command
        .arg(format!("AUTOCODER_BASE_URL={}/v1", server.url()))
        .arg("AUTOCODER_MODEL=fake-coder")
        .arg("AUTOCODER_API_KEY=sk-wrong-key-0000")
        .arg(autocoder_bin())
        .args(["mcp", "--root"])
        .arg(test.path());
    let mut session = crate::mcp_session::Session::spawn(command);
    session.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}}),
    );
    session.send_raw(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
    let result = session.call("delegate_task", json!({"task": "Add multiply"}));
    let output = &result["structuredContent"];
    let error = output["error"].as_str().unwrap_or_default();
    assert!(error.contains("401") && error.contains("hint:"), "{result}");
    assert!(!error.contains("sk-wrong-key-0000"), "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("error: "), "{text}");
}

#[test]
fn local_coders_variables_name_its_model_and_a_large_change_is_cut_in_the_result() {
    if !have_sdk() {
        eprintln!("skipped: the MCP Python SDK is not installed (pip install mcp; .ci/run does)");
        return;
    }
    // A model our own variables name for other uses: it must get neither the code nor its key.
    let hosted = FakeServer::start(vec![]);
    let hosted_url = format!("{}/v1", hosted.url());
    let table: String = (0..3000).map(|i| format!("VALUE_{i} = {i}\n")).collect();
    let server = FakeServer::start(vec![(
        CHAT,
        vec![
            calls(
                1,
                &[("write_file", json!({"path": "table.py", "content": table}))],
            ),
            calls(2, &[("finish", json!({"summary": "the table"}))]),
        ],
    )]);
    let test = with_committed_project("calculator-python");
    let output = client(
        test.path(),
        &server,
        "delegate_to_local_coder",
        "finish",
        &[
            ("AUTOCODER_BASE_URL", &hosted_url),
            ("AUTOCODER_MODEL", "hosted-model"),
            ("AUTOCODER_API_KEY", "hosted-key-31"),
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(hosted.requests().is_empty(), "the other model was asked");
    let requests = server.requests();
    assert_eq!(requests[0].headers["authorization"], "Bearer local-key-77");
    assert!(requests.iter().all(|r| !r.body.contains("hosted-key-31")));

    let result: Value = serde_json::from_str(
        stdout
            .lines()
            .find_map(|line| line.strip_prefix("result: "))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (&result["status"], &result["applied"], &result["diff_cut"]),
        (&json!("green"), &json!(true), &json!(true)),
        "{result:#}"
    );
    let diff = result["diff"].as_str().unwrap();
    assert!(
        diff.len() <= 20_000 && diff.len() > 10_000 && diff.ends_with('\n'),
        "{} bytes",
        diff.len()
    );
    let text: String = serde_json::from_str(
        stdout
            .lines()
            .find_map(|line| line.strip_prefix("text: "))
            .unwrap(),
    )
    .unwrap();
    assert!(text.len() < 21_000, "{} bytes of text", text.len());
    assert!(
        text.contains("the whole change is in the workspace"),
        "{}",
        &text[text.len() - 200..]
    );
    assert_eq!(
        std::fs::read_to_string(test.path().join("table.py")).unwrap(),
        table
    );
}
