//! The protocol itself: the handshake, discovery, the tool list, JSON-RPC faults, budgets, and
//! the end of input.

use serde_json::{json, Value};

use crate::mcp_session::{initialized, Session};
use crate::util::TempDir;

#[test]
fn handshake_negotiates_versions_and_answers_discovery() {
    let dir = TempDir::new();
    for (asked, answered) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2031-01-01", "2025-11-25"),
    ] {
        let mut session = Session::start(dir.path());
        let answer = session.request("initialize", json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}));
        assert_eq!(answer["result"]["protocolVersion"], answered);
        assert_eq!(answer["result"]["serverInfo"]["name"], "autocoder");
        assert_eq!(
            answer["result"]["capabilities"]["tools"],
            json!({"listChanged": false})
        );
    }
    let mut session = Session::start(dir.path());
    let discovered = session.request("server/discover", json!({}));
    assert!(discovered["result"]["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2025-11-25")));
    assert_eq!(discovered["result"]["resultType"], "complete");
    assert_eq!(
        discovered["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "autocoder"
    );
    // A stateless client names its revision in each request instead of initializing.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let listed = session.request("tools/list", json!({"_meta": meta}));
    assert_eq!(listed["result"]["resultType"], "complete");
    assert!(listed["result"]["tools"].as_array().unwrap().len() > 5);
    let called = session.request(
        "tools/call",
        json!({"name": "list_files", "arguments": {}, "_meta": meta}),
    );
    assert_eq!(called["result"]["resultType"], "complete", "{called}");
    assert_eq!(called["result"]["isError"], false, "{called}");
    // A client may still initialize after discovering.
    let answer = session.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}));
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(session.request("ping", json!({}))["result"], json!({}));
    // Log messages: the client chooses the least severe level sent.
    assert_eq!(answer["result"]["capabilities"]["logging"], json!({}));
    let set = session.request("logging/setLevel", json!({"level": "error"}));
    assert_eq!(set["result"], json!({}), "{set}");
    let refused = session.request("logging/setLevel", json!({"level": "loud"}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[test]
fn tools_are_listed_in_a_stable_order_with_schemas_and_annotations() {
    let dir = TempDir::new();
    let mut session = initialized(dir.path());
    let tools = session.request("tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "list_files",
            "read_file",
            "search_text",
            "edit_file",
            "write_file",
            "run_command",
            "run_tests",
            "git_status",
            "git_diff",
            "delegate_task",
            "delegate_to_local_coder"
        ]
    );
    for tool in tools.as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().unwrap().len() > 80);
        assert!(tool["annotations"]["readOnlyHint"].is_boolean());
    }
    let edit = &tools[3];
    assert_eq!(edit["annotations"]["destructiveHint"], true);
    // A delegate may send the code to a remote model; local-coder's name takes its arguments.
    assert_eq!(tools[9]["annotations"]["openWorldHint"], true);
    assert_eq!(tools[9]["inputSchema"], tools[10]["inputSchema"]);
    let properties = tools[10]["inputSchema"]["properties"].as_object().unwrap();
    for argument in ["task", "workspace", "max_steps", "paths"] {
        assert!(properties.contains_key(argument), "{argument}");
    }
    assert!(edit["inputSchema"]["required"]
        .as_array()
        .unwrap()
        .contains(&json!("old_string")));
}

#[test]
fn protocol_faults_are_json_rpc_errors() {
    let dir = TempDir::new();
    let mut session = initialized(dir.path());
    session.send_raw("{not json");
    assert_eq!(session.receive()["error"]["code"], -32700);
    session.send_raw(r#"[{"jsonrpc": "2.0", "id": 9, "method": "ping"}]"#);
    assert_eq!(session.receive()["error"]["code"], -32600);
    // Bytes that are not UTF-8 are refused, not replaced: a request's to its id; a response
    // or a notification is not answered. A message past 64 MiB is refused without being
    // kept, and the next one is answered.
    session.send_bytes(b"{\"jsonrpc\": \"2.0\", \"id\": \"x\", \"result\": {\"a\": \"\xff\"}}\n");
    session.send_bytes(
        b"{\"jsonrpc\": \"2.0\", \"method\": \"notifications/x\", \"params\": {\"a\": \"\xff\"}}\n",
    );
    session.send_bytes(b"{\"jsonrpc\": \"2.0\", \"id\": 11, \"method\": \"ping\", \"params\": {\"x\": \"\xff\"}}\n");
    let refused = session.receive();
    assert_eq!(
        (&refused["id"], &refused["error"]["code"]),
        (&json!(11), &json!(-32602)),
        "{refused}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not UTF-8"),
        "{refused}"
    );
    // JSON serde_json cannot hold: a request is answered by what can be read of it.
    for (message, id, code) in [
        (
            r#"{"jsonrpc": "2.0", "id": 9, "method": 5, "params": {"x": "\ud800"}}"#,
            json!(9),
            -32602,
        ),
        (
            r#"{"jsonrpc": "2.0", "id": null, "method": "ping", "params": {"x": "\ud800"}}"#,
            json!(null),
            -32700,
        ),
    ] {
        session.send_raw(message);
        let refused = session.receive();
        assert_eq!(
            (&refused["id"], &refused["error"]["code"]),
            (&id, &json!(code)),
            "{refused}"
        );
    }
    let mut huge = vec![b' '; (64 << 20) + 10];
    huge.push(b'\n');
    session.send_bytes(&huge);
    let refused = session.receive();
    assert_eq!(refused["error"]["code"], -32700, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("longer than 64 MiB"), "{refused}");
    // One that names its id at the start gets its answer to that id.
    let mut named =
        br#"{"jsonrpc": "2.0", "id": "big", "method": "ping", "params": {"x": ""#.to_vec();
    named.resize((64 << 20) + 10, b' ');
    named.push(b'\n');
    session.send_bytes(&named);
    let refused = session.receive();
    assert_eq!(
        (refused["id"].as_str(), refused["error"]["code"].as_i64()),
        (Some("big"), Some(-32600)),
        "{refused}"
    );
    session.send_raw(&format!(
        "{{\"jsonrpc\": \"2.0\", \"id\": 10, \"method\": \"ping\", \"params\": {{\"x\": \"{}\"}}}}",
        "\u{1F600}"
    ));
    assert_eq!(session.receive()["id"], 10);
    assert_eq!(
        session.request("resources/list", json!({}))["error"]["code"],
        -32601
    );
    assert_eq!(
        session.request(
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}})
        )["error"]["code"],
        -32602
    );
    // Arguments the model got wrong are a tool error it can read and fix.
    let text = session.call_error("read_file", json!({"paht": "x"}));
    assert!(text.contains("invalid arguments for read_file"), "{text}");
    // Named, not in order (serde would take a struct from an array).
    let text = session.call_error("read_file", json!(["a.txt", 1, 2]));
    assert!(text.contains("expected an object"), "{text}");
    // Null arguments are no arguments.
    let listed = session.request(
        "tools/call",
        json!({"name": "list_files", "arguments": null}),
    );
    assert_eq!(listed["result"]["isError"], false, "{listed}");
    // Messages that are not JSON-RPC 2.0 as MCP allows it.
    for (message, id, fault) in [
        (
            r#"{"jsonrpc": "2.0", "id": null, "method": "ping"}"#,
            json!(null),
            "id must be",
        ),
        (
            r#"{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}"#,
            json!(null),
            "id must be",
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}"#,
            json!(null),
            "id must be",
        ),
        (
            r#"{"jsonrpc": "1.0", "id": 11, "method": "ping"}"#,
            json!(11),
            "2.0",
        ),
        (
            r#"{"id": "twelve", "method": "ping"}"#,
            json!("twelve"),
            "2.0",
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 13, "method": 7}"#,
            json!(13),
            "method must be a string",
        ),
        (r#"{"jsonrpc": "2.0", "id": 14}"#, json!(14), "no method"),
        ("42", json!(null), "expected an object"),
    ] {
        session.send_raw(message);
        let answer = session.receive();
        assert_eq!(answer["error"]["code"], -32600, "{message}: {answer}");
        assert_eq!(answer["id"], id, "{message}: {answer}");
        let text = answer["error"]["message"].as_str().unwrap();
        assert!(text.contains(fault), "{message}: {text}");
    }
    // A response, even a malformed one, is never answered.
    session
        .send_raw(r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "x"}}"#);
    session.send_raw(r#"{"jsonrpc": "2.0", "id": "unknown", "result": {}}"#);
    // Still serving.
    assert_eq!(session.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn long_results_stay_within_budget_as_text_and_as_structure() {
    // Codex hands the model the structured result: it is bounded as the text is, and says what
    // was left out.
    let dir = TempDir::new();
    for n in 0..1200 {
        dir.write(
            &format!("a-file-with-a-rather-long-name-number-{n:04}.txt"),
            "",
        );
    }
    let long_line = format!("match {}\n", "y".repeat(990));
    for n in 0..5 {
        dir.write(&format!("wide{n}.txt"), &long_line.repeat(200));
    }
    dir.write(
        "many.txt",
        &(1..=3000).map(|n| format!("{n}\n")).collect::<String>(),
    );
    let mut session = initialized(dir.path());
    let bounded = |result: &Value| {
        let structured = result["structuredContent"].to_string().len();
        let text = result["content"][0]["text"].as_str().unwrap().len();
        assert!(structured < 40_000 && text < 41_000, "{structured} {text}");
        result["structuredContent"].clone()
    };
    let listed = bounded(&session.call("list_files", json!({})));
    let entries = listed["entries"].as_array().unwrap().len();
    assert!((300..1000).contains(&entries), "{entries}");
    assert_eq!(listed["truncated"], true);
    for arguments in [
        json!({"pattern": "match"}),
        json!({"pattern": "match", "context_lines": 20, "max_results": 1000}),
    ] {
        let found = bounded(&session.call("search_text", arguments));
        assert!(!found["matches"].as_array().unwrap().is_empty());
        assert_eq!(found["truncated"], true);
    }
    // The text a model reads says where the window stopped.
    let read = session.call("read_file", json!({"path": "many.txt"}));
    assert!(
        read["content"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with("2000\t2000\n[lines 1-2000 of 3000; continue with offset=2001]"),
        "{read}"
    );
    // JSON escapes a control character in six bytes: the budgets count them so.
    let ran = bounded(&session.call(
        "run_command",
        json!({"command": "head -c 12000 /dev/zero | tr '\\0' '\\1'; head -c 12000 /dev/zero | tr '\\0' '\\2' >&2"}),
    ));
    assert!(
        ran["stdout"].as_str().unwrap().contains("bytes cut ..."),
        "{ran}"
    );
    // Output the sandbox already cut, cut again as JSON: one note, counting both cuts.
    let ran = bounded(&session.call("run_command", json!({"argv": ["seq", "1", "200000"]})));
    let stdout = ran["stdout"].as_str().unwrap();
    let total = (1..=200_000u64)
        .map(|n| n.to_string().len() as u64 + 1)
        .sum::<u64>();
    let cut: u64 = stdout
        .split("[... ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("no note in {stdout}"));
    // What is shown plus what the note counts is the whole output, give or take the notes.
    assert!(
        cut > total - 40_000 && cut < total,
        "{cut} of {total}: {stdout}"
    );
    let control = format!("a{}\n", "\u{1}".repeat(1900)).repeat(200);
    dir.write("control.txt", &control);
    let read = bounded(&session.call("read_file", json!({"path": "control.txt"})));
    assert!(read["next_offset"].as_u64().is_some(), "{read}");
    // A run with many long failures: as many as fit, the others counted.
    let failing: String = (0..120)
        .map(|n| format!("def test_{n}():\n    assert 'x' * 3000 == 'y{n}'\n\n"))
        .collect();
    dir.write("test_many.py", &failing);
    let tested = bounded(&session.call("run_tests", json!({})));
    let listed = tested["failures"].as_array().unwrap().len() as u64;
    assert!(listed > 0 && listed < 120, "{listed}");
    assert_eq!(
        listed + tested["failures_omitted"].as_u64().unwrap(),
        120,
        "{tested}"
    );
}

#[test]
fn exits_when_stdin_ends() {
    let dir = TempDir::new();
    let mut session = initialized(dir.path());
    drop(session.stdin.take());
    let status = session.child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn odd_but_valid_requests_get_their_answers() {
    let dir = TempDir::new();
    dir.write("sub/inner.txt", "inner\n");
    dir.write("top.txt", "top\n");
    let mut session = initialized(dir.path());
    // JSON that serde_json cannot hold still gets an answer, to its id.
    session.send_raw(r#"{"jsonrpc": "2.0", "id": 70, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "\udcff.txt"}}}"#);
    let answer = session.receive();
    assert_eq!(
        (answer["id"].as_i64(), answer["error"]["code"].as_i64()),
        (Some(70), Some(-32602)),
        "{answer}"
    );
    session
        .send_raw(r#"{"jsonrpc": "2.0", "id": "big", "method": "ping", "params": {"x": 1e400}}"#);
    assert_eq!(session.receive()["id"], "big");
    // A response serde cannot hold is not answered either (two peers would answer forever).
    session.send_raw(r#"{"jsonrpc": "2.0", "id": "autocoder-roots-9", "result": {"x": "\udcff"}}"#);
    assert_eq!(session.request("ping", json!({}))["result"], json!({}));
    // A progress token of a kind MCP does not allow gets no progress, but the answer.
    session.send_raw(&json!({"jsonrpc": "2.0", "id": 71, "method": "tools/call",
        "params": {"name": "run_command", "arguments": {"argv": ["sleep", "1.2"]}, "_meta": {"progressToken": null}}}).to_string());
    let answer = session.receive();
    assert_eq!(answer["id"], 71, "{answer}");
    // An answer to a roots/list we never sent (this client has no roots) changes nothing.
    session.send_raw(
        &json!({"jsonrpc": "2.0", "id": "autocoder-roots-0",
        "result": {"roots": [{"uri": format!("file://{}", dir.path().join("sub").display())}]}})
        .to_string(),
    );
    let listed = session.call("list_files", json!({}))["structuredContent"]["entries"].clone();
    assert!(listed.to_string().contains("top.txt"), "{listed}");
    // Concurrent writes of one file, and a name near the length limit.
    for id in 100..120 {
        session.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "write_file", "arguments": {"path": "same.txt", "content": format!("{id}\n")}}}).to_string());
    }
    for _ in 100..120 {
        let answer = session.receive();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    let long = "n".repeat(250);
    let wrote = session.call("write_file", json!({"path": long, "content": "x"}));
    assert_eq!(wrote["isError"], false, "{wrote}");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("autocoder"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn more_calls_than_workers_all_get_their_answers() {
    let dir = TempDir::new();
    let mut session = initialized(dir.path());
    for id in 0..40 {
        session.send_raw(
            &json!({"jsonrpc": "2.0", "id": 700 + id, "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"argv": ["sleep", "0.3"]}}})
            .to_string(),
        );
    }
    let mut answered: Vec<i64> = (0..40)
        .map(|_| session.receive()["id"].as_i64().unwrap())
        .collect();
    answered.sort_unstable();
    assert_eq!(answered, (700..740).collect::<Vec<_>>());
}
