//! `autocoder mcp` over pipes: the protocol, every tool, every escape, and a real client (the
//! official Python SDK).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{autocoder_as, autocoder_bin, git, mkfifo, TempDir};

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Session {
    fn start(root: &Path) -> Session {
        Session::start_with(&[root], None, None)
    }

    /// A server on `roots`, allowed at most `open_files` descriptors if given, run as the user
    /// `user` (from a copy of the binary in `roots[0]`) if given.
    fn start_with(roots: &[&Path], open_files: Option<u64>, user: Option<u32>) -> Session {
        let mut command = autocoder_as(user, roots[0]);
        command.arg("mcp");
        for root in roots {
            command.arg("--root").arg(root);
        }
        if let Some(limit) = open_files {
            // SAFETY: setrlimit is async-signal-safe.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
                    let rlimit = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                })
            };
        }
        Session::spawn(command)
    }

    /// A server started by `command` (which holds `autocoder mcp` and its flags).
    fn spawn(mut command: Command) -> Session {
        let mut child = command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Session {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    fn send_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{text}").unwrap();
        stdin.flush().unwrap();
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    #[track_caller]
    fn receive(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("an answer within 20 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"))
    }

    #[track_caller]
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send_raw(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let answer = self.receive();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    #[track_caller]
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))["result"].clone()
    }

    /// A tool result that must be an error: its text.
    #[track_caller]
    fn call_error(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], true, "{result}");
        result["content"][0]["text"].as_str().unwrap().to_string()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn initialized(root: &Path) -> Session {
    let mut session = Session::start(root);
    let answer = session.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}));
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    session.send_raw(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
    session
}

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
            "git_diff"
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
fn file_tools_read_list_search_edit_and_write() {
    let dir = TempDir::new();
    dir.write(
        "src/lib.py",
        "def add(a, b):\n    return a - b\n\ndef sub(a, b):\n    return a - b\n",
    );
    dir.write(".gitignore", "build/\n");
    dir.write("build/out.txt", "ignored\n");
    dir.write(".git/HEAD", "ref: refs/heads/main\n");
    dir.write(
        "big.txt",
        &(1..=5000)
            .map(|n| format!("line {n}\n"))
            .collect::<String>(),
    );
    std::fs::write(dir.path().join("blob.bin"), [0u8, 1, 2, 3]).unwrap();
    dir.write("empty.txt", "");
    std::fs::write(dir.path().join("crlf.txt"), b"one\r\ntw\xffo\r\nthree").unwrap();
    let mut session = initialized(dir.path());

    let paths = listed(&mut session, json!({"recursive": true}));
    assert!(
        paths.iter().any(|p| p == "src/lib.py") && paths.iter().any(|p| p == ".gitignore"),
        "{paths:?}"
    );
    assert!(
        !paths
            .iter()
            .any(|p| p.starts_with("build") || p.starts_with(".git/")),
        "{paths:?}"
    );
    let python = session.call("list_files", json!({"recursive": true, "glob": "**/*.py"}))
        ["structuredContent"]["entries"]
        .clone();
    assert_eq!(python.as_array().unwrap().len(), 1);

    let read = session.call(
        "read_file",
        json!({"path": "src/lib.py", "offset": 2, "limit": 2}),
    );
    assert_eq!(
        read["content"][0]["text"],
        "2\t    return a - b\n3\t\n[lines 2-3 of 5; continue with offset=4]"
    );
    assert_eq!(read["structuredContent"]["total_lines"], 5);
    assert_eq!(read["structuredContent"]["next_offset"], 4);
    let big = session.call("read_file", json!({"path": "big.txt"}))["structuredContent"].clone();
    assert_eq!(
        (big["end_line"].as_u64(), big["next_offset"].as_u64()),
        (Some(2000), Some(2001))
    );
    let text = session.call_error("read_file", json!({"path": "big.txt", "offset": 5001}));
    assert!(
        text.contains("offset 5001 is past the end of big.txt, which has 5000 lines"),
        "{text}"
    );
    let text = session.call_error(
        "read_file",
        json!({"path": "big.txt", "offset": u64::MAX, "limit": u64::MAX}),
    );
    assert!(text.contains("past the end"), "{text}");
    let whole = session.call(
        "read_file",
        json!({"path": "big.txt", "offset": 4999, "limit": u64::MAX}),
    );
    assert_eq!(
        whole["content"][0]["text"],
        "4999\tline 4999\n5000\tline 5000\n"
    );
    let empty = session.call("read_file", json!({"path": "empty.txt"}));
    assert_eq!(empty["structuredContent"]["total_lines"], 0);
    assert_eq!(empty["structuredContent"]["content"], "");
    // CRLF endings are not shown; bytes that are not UTF-8 show as U+FFFD; a last line without
    // a newline still counts.
    let crlf = session.call("read_file", json!({"path": "crlf.txt"}));
    assert_eq!(
        crlf["content"][0]["text"],
        "1\tone\n2\ttw\u{fffd}o\n3\tthree\n"
    );
    assert_eq!(crlf["structuredContent"]["total_lines"], 3);
    let text = session.call_error("read_file", json!({"path": "blob.bin"}));
    assert!(text.contains("binary file (4 bytes)"), "{text}");

    let found = session.call(
        "search_text",
        json!({"pattern": "a - b", "fixed_string": true, "glob": "*.py", "context_lines": 1}),
    )["structuredContent"]
        .clone();
    let lines: Vec<u64> = found["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2, 5]);
    assert_eq!(found["matches"][0]["before"], json!(["def add(a, b):"]));
    let text = session.call_error("search_text", json!({"pattern": "(unclosed"}));
    assert!(text.contains("pattern"), "{text}");
    // A path ending in `/` is a directory's: no file is written in its name.
    for path in ["made/", "made/."] {
        let text = session.call_error("write_file", json!({"path": path, "content": "x"}));
        assert!(text.contains("names a directory"), "{text}");
    }
    assert!(!dir.path().join("made").exists());

    let text = session.call_error(
        "edit_file",
        json!({"path": "src/lib.py", "old_string": "return a - b", "new_string": "return a + b"}),
    );
    assert!(
        text.contains("occurs 2 times") && text.contains("lines 2, 5"),
        "{text}"
    );
    let text = session.call_error(
        "edit_file",
        json!({"path": "src/lib.py", "old_string": "return a * b", "new_string": "x"}),
    );
    assert!(
        text.contains("not found") && text.contains("2\t    return a - b"),
        "{text}"
    );
    let edit = session.call("edit_file", json!({"path": "src/lib.py", "old_string": "def add(a, b):\n    return a - b", "new_string": "def add(a, b):\n    return a + b"}));
    assert_eq!(edit["isError"], false, "{edit}");
    assert!(edit["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("+    return a + b"));
    assert!(std::fs::read_to_string(dir.path().join("src/lib.py"))
        .unwrap()
        .contains("return a + b"));
    let dry = session.call("edit_file", json!({"path": "src/lib.py", "old_string": "return a - b", "new_string": "return 0", "replace_all": true, "dry_run": true}));
    assert_eq!(
        (
            dry["structuredContent"]["replacements"].as_u64(),
            dry["structuredContent"]["written"].as_bool()
        ),
        (Some(1), Some(false))
    );

    // Missing parent directories are made, as Codex's apply_patch and Claude Code's Write do.
    let written = session.call(
        "write_file",
        json!({"path": "new/deep/file.txt", "content": "hi\n"}),
    );
    assert_eq!(written["structuredContent"]["created"], true, "{written}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new/deep/file.txt")).unwrap(),
        "hi\n"
    );
    let text = session.call_error(
        "write_file",
        json!({"path": "missing/dir/f.txt", "content": "x", "create_dirs": false}),
    );
    assert!(text.contains("create_dirs"), "{text}");
    assert!(!dir.path().join("missing").exists());
    // Never outside the root: not through a link on the way, nor up from it.
    let outside = TempDir::new();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    for path in ["out/made/f.txt", "../made/f.txt", "new/../../made/f.txt"] {
        session.call_error("write_file", json!({"path": path, "content": "x"}));
    }
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert!(!dir.path().parent().unwrap().join("made").exists());
}

#[test]
fn edits_keep_line_endings_and_mode() {
    let dir = TempDir::new();
    let script = dir.write("run.sh", "#!/bin/sh\r\necho one\r\necho two\r\n");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o754)).unwrap();
    let mut session = initialized(dir.path());
    let edit = session.call("edit_file", json!({"path": "run.sh", "old_string": "echo one\necho two", "new_string": "echo 1\necho 2"}));
    assert_eq!(edit["isError"], false, "{edit}");
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        "#!/bin/sh\r\necho 1\r\necho 2\r\n"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777,
        0o754
    );
    // A setuid file left in the workspace does not stay setuid once written to.
    let setuid = dir.write("tool", "old\n");
    std::fs::set_permissions(
        &setuid,
        std::os::unix::fs::PermissionsExt::from_mode(0o6755),
    )
    .unwrap();
    let wrote = session.call(
        "write_file",
        json!({"path": "tool", "content": "#!/bin/sh\nid\n"}),
    );
    assert_eq!(wrote["isError"], false, "{wrote}");
    assert_eq!(
        std::fs::metadata(&setuid).unwrap().permissions().mode() & 0o7777,
        0o755
    );
}

#[test]
fn edits_match_mixed_line_endings_as_written() {
    let dir = TempDir::new();
    let mixed = dir.write("mixed.txt", "a\r\nb\nc\n");
    let mut session = initialized(dir.path());
    let mut edit = |old: &str, new: &str, expected: &str| {
        let edit = session.call(
            "edit_file",
            json!({"path": "mixed.txt", "old_string": old, "new_string": new}),
        );
        assert_eq!(edit["isError"], false, "{edit}");
        assert_eq!(std::fs::read_to_string(&mixed).unwrap(), expected);
    };
    // Found as written, in the LF part; the replacement keeps LF there.
    edit("b\nc", "B\nC", "a\r\nB\nC\n");
    // A replacement takes the line ending of the line it goes in.
    edit("a", "A\nX", "A\r\nX\r\nB\nC\n");
    // Written with `\n`, a CRLF stretch is still found.
    edit("A\nX", "a", "a\r\nB\nC\n");
    // Overlapping occurrences, one of each ending, are twice too.
    std::fs::write(&mixed, "a\r\na\na").unwrap();
    let overlapping = session.call_error(
        "edit_file",
        json!({"path": "mixed.txt", "old_string": "a\na", "new_string": "b"}),
    );
    assert!(overlapping.contains("occurs 2 times"), "{overlapping}");
    // Both stretches count: twice is not once, and replace_all takes each with its ending.
    std::fs::write(&mixed, "a\r\nb\r\nx\na\nb\n").unwrap();
    let twice = session.call_error(
        "edit_file",
        json!({"path": "mixed.txt", "old_string": "a\nb", "new_string": "c\nd"}),
    );
    assert!(twice.contains("occurs 2 times"), "{twice}");
    let all = session.call(
        "edit_file",
        json!({"path": "mixed.txt", "old_string": "a\nb", "new_string": "c\nd", "replace_all": true}),
    );
    assert_eq!(all["structuredContent"]["replacements"], 2, "{all}");
    assert_eq!(
        std::fs::read_to_string(&mixed).unwrap(),
        "c\r\nd\r\nx\nc\nd\n"
    );
    // Overlapping occurrences with the same ending (closing braces) are twice as well, and the
    // file is left as it was.
    std::fs::write(&mixed, "}\n}\n}\n").unwrap();
    let braces = session.call_error(
        "edit_file",
        json!({"path": "mixed.txt", "old_string": "}\n}", "new_string": "X"}),
    );
    assert!(
        braces.contains("occurs 2 times") && braces.contains("lines 1, 2"),
        "{braces}"
    );
    assert_eq!(std::fs::read_to_string(&mixed).unwrap(), "}\n}\n}\n");
    let all = session.call(
        "edit_file",
        json!({"path": "mixed.txt", "old_string": "}\n}", "new_string": "X", "replace_all": true}),
    );
    assert_eq!(std::fs::read_to_string(&mixed).unwrap(), "X\n}\n", "{all}");
    // Two on one line are one line number; a long text that repeats itself is answered at once
    // (looking again after every character made this quadratic: minutes here).
    std::fs::write(&mixed, "a".repeat(200_000)).unwrap();
    for old in ["aa", &"a".repeat(150_000)] {
        let many = session.call_error(
            "edit_file",
            json!({"path": "mixed.txt", "old_string": old, "new_string": "b"}),
        );
        assert!(
            many.contains("times in mixed.txt (lines 1)") || many.contains("(lines 1, ...)"),
            "{many}"
        );
    }
}

#[test]
fn file_tools_write_only_what_their_user_may_write() {
    let dir = TempDir::new();
    dir.write("root-owned.txt", "root's\n");
    let read_only = dir.write("read-only.txt", "kept\n");
    dir.write("closed/inside.txt", "x\n");
    use std::os::unix::fs::{chown, PermissionsExt};
    chown(&read_only, Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(
        dir.path().join("closed"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    chown(dir.path(), Some(65534), Some(65534)).unwrap();
    let mut session = Session::start_with(&[dir.path()], None, Some(65534));
    session.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    // The directory is theirs, so a rename would replace the files: they are refused as a
    // write in place would be.
    for (tool, arguments) in [
        (
            "edit_file",
            json!({"path": "root-owned.txt", "old_string": "root's", "new_string": "mine"}),
        ),
        (
            "write_file",
            json!({"path": "root-owned.txt", "content": "mine\n"}),
        ),
        (
            "edit_file",
            json!({"path": "read-only.txt", "old_string": "kept", "new_string": "gone"}),
        ),
        (
            "write_file",
            json!({"path": "read-only.txt", "content": "gone\n"}),
        ),
    ] {
        let text = session.call_error(tool, arguments);
        assert!(text.contains("Permission denied"), "{tool}: {text}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("root-owned.txt")).unwrap(),
        "root's\n"
    );
    assert_eq!(std::fs::read_to_string(&read_only).unwrap(), "kept\n");
    let text = session.call_error(
        "write_file",
        json!({"path": "closed/deeper/new.txt", "content": "x", "create_dirs": true}),
    );
    assert!(text.contains("Permission denied"), "{text}");
    // A file of their own they may replace.
    let wrote = session.call("write_file", json!({"path": "new.txt", "content": "ok\n"}));
    assert_eq!(wrote["isError"], false, "{wrote}");
}

#[test]
fn a_file_replaced_as_root_keeps_its_owner() {
    if !crate::util::is_root() {
        eprintln!("skipped: needs root to give a file to another user");
        return;
    }
    use std::os::unix::fs::{chown, MetadataExt, PermissionsExt};
    let dir = TempDir::new();
    let theirs = dir.write("theirs.txt", "one\n");
    chown(&theirs, Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o664)).unwrap();
    let mut session = initialized(dir.path());
    for (tool, arguments) in [
        (
            "edit_file",
            json!({"path": "theirs.txt", "old_string": "one", "new_string": "two"}),
        ),
        (
            "write_file",
            json!({"path": "theirs.txt", "content": "three\n"}),
        ),
    ] {
        let done = session.call(tool, arguments);
        assert_eq!(done["isError"], false, "{done}");
        let meta = std::fs::metadata(&theirs).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid(), meta.mode() & 0o7777),
            (65534, 65534, 0o664),
            "{tool}"
        );
    }
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "three\n");
}

#[test]
fn writes_ask_for_permission_where_faccessat2_is_refused() {
    // Older kernels lack faccessat2 and older container profiles refuse it: strace makes it
    // fail as they do, and the permission is asked with faccessat.
    if !crate::util::is_root() {
        eprintln!("skipped: needs root to run the server as another user");
        return;
    }
    let dir = TempDir::new();
    dir.write("root-owned.txt", "root's\n");
    let bin = dir.path().join("autocoder");
    std::fs::copy(autocoder_bin(), &bin).unwrap();
    std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
    for errno in ["ENOSYS", "EPERM"] {
        let mut command = Command::new("strace");
        command
            .args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=faccessat2"])
            .arg(format!("--inject=faccessat2:error={errno}"))
            .args([
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--",
            ])
            .arg(&bin)
            .args(["mcp", "--root"])
            .arg(dir.path());
        let mut session = Session::spawn(command);
        session.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        let text = session.call_error(
            "write_file",
            json!({"path": "root-owned.txt", "content": "mine\n"}),
        );
        assert!(text.contains("Permission denied"), "{errno}: {text}");
        let wrote = session.call("write_file", json!({"path": "new.txt", "content": "1\n"}));
        assert_eq!(wrote["isError"], false, "{errno}: {wrote}");
        let wrote = session.call("write_file", json!({"path": "new.txt", "content": "2\n"}));
        assert_eq!(wrote["isError"], false, "{errno}: {wrote}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("root-owned.txt")).unwrap(),
        "root's\n"
    );
}

#[test]
fn roots_come_from_the_environment_when_none_are_given() {
    let first = TempDir::new();
    first.write("one.txt", "1\n");
    let second = TempDir::new();
    second.write("two.txt", "2\n");
    let serve = |variable: &str, value: String| {
        let mut child = Command::new(autocoder_bin())
            .arg("mcp")
            .current_dir("/")
            .env(variable, value)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_files", "arguments": {}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": second.path().join("two.txt")}}}),
        ];
        let mut stdin = child.stdin.take().unwrap();
        for request in requests {
            // A server that refused its roots may be gone already.
            let _ = writeln!(stdin, "{request}");
        }
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let mut answers: Vec<Value> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        // Calls are answered as they finish.
        answers.sort_by_key(|answer| answer["id"].as_u64());
        (output.status.code(), answers, stderr)
    };
    // Empty entries (a doubled or trailing colon) name nothing and are passed over.
    let (status, answers, stderr) = serve(
        "ALLOWED_WORKSPACE_ROOTS",
        format!("{}::{}:", first.path().display(), second.path().display()),
    );
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(
        answers[1]["result"]["structuredContent"]["entries"][0]["path"],
        "one.txt"
    );
    assert_eq!(
        answers[2]["result"]["structuredContent"]["content"], "1\t2\n",
        "{answers:?}"
    );
    // One root: the second is out of reach.
    let (status, answers, stderr) =
        serve("ALLOWED_WORKSPACE_ROOT", first.path().display().to_string());
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(answers[2]["result"]["isError"], true, "{answers:?}");
    // A root that is not there: a usage error that names it.
    let (status, answers, stderr) = serve("ALLOWED_WORKSPACE_ROOTS", "/nonexistent-root".into());
    assert_eq!((status, answers.len()), (Some(2), 0), "{stderr}");
    assert!(stderr.contains("/nonexistent-root"), "{stderr}");
}

#[test]
fn the_whole_machine_and_the_home_are_no_roots() {
    let home = TempDir::new();
    let project = home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    for root in [
        Path::new("/"),
        Path::new("/etc/ssh"),
        Path::new("/usr"),
        home.path(),
    ] {
        let output = Command::new(autocoder_bin())
            .args(["mcp", "--root"])
            .arg(root)
            .env("HOME", home.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{}: {said}", root.display());
        assert!(
            said.contains(&format!("a root cannot be {}", root.display())),
            "{said}"
        );
    }
    // A project in the home is one.
    let output = Command::new(autocoder_bin())
        .args(["mcp", "--root"])
        .arg(&project)
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_root_given_through_a_link_takes_absolute_paths_spelled_either_way() {
    let base = TempDir::new();
    let root = base.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("ok.txt"), "fine\n").unwrap();
    let link = base.path().join("link");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    std::fs::create_dir(base.path().join("link-evil")).unwrap();
    std::fs::write(base.path().join("link-evil/secret.txt"), "SECRET\n").unwrap();
    std::fs::write(base.path().join("outside.txt"), "SECRET\n").unwrap();
    let mut session = Session::start(&link);
    session.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {}}, "clientInfo": {"name": "t", "version": "1"}}));
    session.send_raw(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
    let asked = session.receive();
    assert_eq!(asked["method"], "roots/list", "{asked}");
    let readable = |session: &mut Session| {
        for spelled in [&link, &root.canonicalize().unwrap()] {
            let path = spelled.join("ok.txt").display().to_string();
            let read = session.call("read_file", json!({"path": path}));
            assert_eq!(read["structuredContent"]["path"], "ok.txt", "{read}");
        }
        for path in [
            format!("{}-evil/secret.txt", link.display()),
            format!("{}/../outside.txt", link.display()),
        ] {
            let text = session.call_error("read_file", json!({"path": path}));
            assert!(!text.contains("SECRET"), "{path}: {text}");
        }
    };
    readable(&mut session);
    // The roots the client lists (here the same, named canonically) keep the user's spelling.
    let listed = json!([{"uri": format!("file://{}", root.canonicalize().unwrap().display())}]);
    session.send_raw(
        &json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": listed}}).to_string(),
    );
    readable(&mut session);
}

#[test]
fn no_path_escapes_the_root() {
    let base = TempDir::new();
    let root = base.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(base.path().join("root-evil")).unwrap();
    std::fs::write(base.path().join("root-evil/secret.txt"), "SECRET\n").unwrap();
    std::fs::write(base.path().join("outside.txt"), "SECRET\n").unwrap();
    std::os::unix::fs::symlink(base.path().join("outside.txt"), root.join("link")).unwrap();
    std::os::unix::fs::symlink(base.path().join("nowhere.txt"), root.join("dangling")).unwrap();
    std::os::unix::fs::symlink(base.path(), root.join("updir")).unwrap();
    std::os::unix::fs::symlink("../outside.txt", root.join("relative-link")).unwrap();
    std::fs::write(root.join("ok.txt"), "fine\n").unwrap();
    let mut session = initialized(&root);
    let evil = format!("{}-evil/secret.txt", root.canonicalize().unwrap().display());
    for path in [
        "../outside.txt",
        "/etc/passwd",
        evil.as_str(),
        "link",
        "relative-link",
        "updir/outside.txt",
        "a\u{0}b",
    ] {
        let text = session.call_error("read_file", json!({"path": path}));
        assert!(!text.contains("SECRET"), "{path}: {text}");
    }
    for path in ["dangling", "link", "updir/new.txt", "../new.txt"] {
        session.call_error("write_file", json!({"path": path, "content": "x"}));
    }
    assert!(!base.path().join("nowhere.txt").exists() && !base.path().join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(base.path().join("outside.txt")).unwrap(),
        "SECRET\n"
    );
    session.call_error(
        "edit_file",
        json!({"path": "link", "old_string": "SECRET", "new_string": "x"}),
    );
    session.call_error("list_files", json!({"path": "updir"}));
    let search = session.call("search_text", json!({"pattern": "SECRET"}));
    assert_eq!(
        search["structuredContent"]["matches"],
        json!([]),
        "{search}"
    );
    // Control: inside the root all is well.
    assert_eq!(
        session.call("read_file", json!({"path": "ok.txt"}))["content"][0]["text"],
        "1\tfine\n"
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
fn the_official_python_sdk_can_use_the_server() {
    let have_sdk = Command::new("python3")
        .args(["-c", "import mcp"])
        .status()
        .is_ok_and(|s| s.success());
    if !have_sdk {
        eprintln!("skipped: the MCP Python SDK is not installed (pip install mcp; .ci/run does)");
        return;
    }
    let dir = TempDir::new();
    dir.write("hello.py", "print('hello')\n");
    dir.write("test_hello.py", "def test_ok():\n    assert True\n");
    commit_everything(dir.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(autocoder_bin())
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("tools: list_files read_file search_text edit_file write_file run_command run_tests git_status git_diff"),
        "{stdout}"
    );
    assert!(stdout.contains("ran: 0 hello"), "{stdout}");
    assert!(stdout.contains("tested: passed"), "{stdout}");
    assert!(
        stdout.contains("status: [('hello.py', 'modified'), ('notes/todo.txt', 'untracked')]"),
        "{stdout}"
    );
    assert!(stdout.contains("diff shows the edit: True"), "{stdout}");
    assert!(stdout.contains("edited: True"), "{stdout}");
    assert!(stdout.contains("escape refused: True"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("hello.py")).unwrap(),
        "print('hello, world')\n"
    );
}

#[test]
fn the_official_typescript_sdk_can_use_the_server() {
    let sdk = Command::new("npm")
        .args(["root", "--global"])
        .output()
        .ok()
        .map(|out| {
            Path::new(String::from_utf8_lossy(&out.stdout).trim()).join("@modelcontextprotocol/sdk")
        })
        .filter(|sdk| sdk.join("package.json").exists());
    let Some(sdk) = sdk else {
        eprintln!("skipped: the MCP TypeScript SDK is not installed (npm install --global @modelcontextprotocol/sdk; .ci/run does)");
        return;
    };
    let dir = TempDir::new();
    std::fs::create_dir(dir.path().join("repo")).unwrap();
    dir.write("repo/app.py", "def answer():\n    return 1\n");
    dir.write("secret.txt", "not for the client\n");
    commit_everything(&dir.path().join("repo"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.mjs");
    let output = Command::new("node")
        .arg(script)
        .arg(&sdk)
        .arg(autocoder_bin())
        .arg(dir.path().canonicalize().unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("tools: list_files read_file search_text edit_file write_file run_command run_tests git_status git_diff"),
        "{stdout}"
    );
    for tool in [
        "list_files",
        "read_file",
        "search_text",
        "edit_file",
        "write_file",
        "run_command",
        "git_status",
        "git_diff",
    ] {
        assert!(
            stdout.contains(&format!("\n{tool}: ok\n")),
            "{tool}: {stdout}\n{stderr}"
        );
    }
    for line in [
        "ran in the narrowed root: true",
        "outside the client's roots refused: true",
        "roots asked: 1",
        "progress increasing: true",
        "cancelled: true",
        "serving after the cancellation: true",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}\n{stderr}");
    }
    // The SDK's schema validator met nothing it did not understand.
    assert!(!stderr.contains("unknown format"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("repo/app.py")).unwrap(),
        "def answer():\n    return 2\n"
    );
    assert!(dir.path().join("repo/new.txt").exists());
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

/// The paths list_files gives for `arguments`.
fn listed(session: &mut Session, arguments: Value) -> Vec<String> {
    session.call("list_files", arguments)["structuredContent"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_string())
        .collect()
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
    let mut listed: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    let mut given: Vec<&String> = report.as_object().unwrap().keys().collect();
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

/// Makes `dir` a repository whose one commit on main holds everything in it.
fn commit_everything(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

/// Leaves `file` with unresolved conflicts: main and a branch `other` change it differently,
/// and other is merged into main.
fn conflict(dir: &TempDir, file: &str) {
    git(dir.path(), &["checkout", "-q", "-b", "other"]);
    dir.write(file, "theirs\n");
    git(dir.path(), &["commit", "-q", "-am", "theirs"]);
    git(dir.path(), &["checkout", "-q", "main"]);
    dir.write(file, "ours\n");
    git(dir.path(), &["commit", "-q", "-am", "ours"]);
    let merge = Command::new("git")
        .args(["merge", "-q", "other"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge should conflict");
}

/// A repository in `dir` with one commit on main: a.txt and old.txt.
fn repository(dir: &TempDir) {
    dir.write("a.txt", "one\ntwo\n");
    dir.write("old.txt", "stays the same\n");
    commit_everything(dir.path());
}

#[test]
fn git_tools_report_status_and_diffs() {
    let dir = TempDir::new();
    repository(&dir);
    dir.write("a.txt", "one\ntwo\nthree\n");
    dir.write("b.txt", "new\n");
    git(dir.path(), &["add", "b.txt"]);
    git(dir.path(), &["mv", "old.txt", "new name.txt"]);
    dir.write("untracked.txt", "?\n");
    let mut session = initialized(dir.path());

    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    assert_eq!(status["branch"], "main");
    assert_eq!(
        status["head"],
        git(dir.path(), &["rev-parse", "HEAD"]).trim()
    );
    assert_eq!(status["clean"], false);
    assert_eq!(
        status["files"],
        json!([
            {"path": "a.txt", "staged": null, "unstaged": "modified", "orig_path": null},
            {"path": "b.txt", "staged": "added", "unstaged": null, "orig_path": null},
            {"path": "new name.txt", "staged": "renamed", "unstaged": null, "orig_path": "old.txt"},
            {"path": "untracked.txt", "staged": null, "unstaged": "untracked", "orig_path": null},
        ])
    );

    let unstaged = session.call("git_diff", json!({}));
    assert_eq!(
        unstaged["structuredContent"]["files"],
        json!([{"path": "a.txt", "orig_path": null, "added": 1, "deleted": 0}])
    );
    let text = unstaged["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("diff --git a/a.txt b/a.txt"), "{text}");
    assert!(text.contains("\n+three"), "{text}");

    let staged = session.call("git_diff", json!({"staged": true, "context_lines": 0}));
    assert_eq!(
        staged["structuredContent"]["files"],
        json!([
            {"path": "b.txt", "orig_path": null, "added": 1, "deleted": 0},
            {"path": "new name.txt", "orig_path": "old.txt", "added": 0, "deleted": 0},
        ])
    );

    let against_head = session.call(
        "git_diff",
        json!({"base": "HEAD", "paths": ["a.txt"], "stat_only": true}),
    )["structuredContent"]
        .clone();
    assert_eq!(against_head["files"].as_array().unwrap().len(), 1);
    assert_eq!(against_head["diff"], "");

    let refused = session.call_error("git_diff", json!({"base": "--output=/tmp/autocoder-pwned"}));
    assert!(refused.contains("not a revision"), "{refused}");
    assert!(!Path::new("/tmp/autocoder-pwned").exists());
    let outside = session.call_error("git_diff", json!({"paths": ["../elsewhere"]}));
    assert!(outside.contains("may not leave the root"), "{outside}");
    let unknown = session.call_error("git_diff", json!({"base": "no-such-branch"}));
    assert!(unknown.contains("no-such-branch"), "{unknown}");

    // The git tools need the repository's top as the root: the sandbox shows git nothing above.
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let mut inner = initialized(&dir.path().join("sub"));
    let error = inner.call_error("git_status", json!({}));
    assert!(error.contains("not the top of a git repository"), "{error}");
}

/// git_diff's text is git's own, byte for byte, for every side it compares and every kind of
/// change: modified (with hunks far apart and a function line above), deleted, mode and kind
/// changes, renames, intent-to-add, binary (by content and by attribute), no newline at the
/// end, names git quotes or ends with a tab, line endings converted by core.autocrlf, and a
/// file with unresolved conflicts.
#[test]
fn git_diff_shows_what_git_diff_shows() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new();
    let functions: String = (0..30)
        .map(|n| format!("int f{n}(void) {{\n  return {n};\n}}\n\n"))
        .collect();
    dir.write("code.c", &functions);
    dir.write("gone.txt", "bye\n");
    dir.write("run.sh", "#!/bin/sh\necho hi\n");
    dir.write("kind.txt", "a file\n");
    let lines: String = (0..20).map(|n| format!("line {n}\n")).collect();
    dir.write("moved.txt", &lines);
    dir.write("was.txt", &lines.replace("line", "row"));
    dir.write("bin.dat", "\0\u{1}\u{2}binary\n");
    dir.write("text.bin", "text, but binary by its attributes\n");
    dir.write(".gitattributes", "*.bin binary\n");
    dir.write("nonl.txt", "last line");
    dir.write("dir/inner.txt", "inner\n");
    dir.write("with space.txt", "s\n");
    dir.write("ünï.txt", "u\n");
    dir.write("crlf.txt", "one\ntwo\n");
    dir.write("conflict.txt", "base\n");
    // Lines that Myers and histogram diff pair differently.
    dir.write("algorithm.txt", "b\nb\n}\nx\n{\n{\nx\nx\n");
    commit_everything(dir.path());
    conflict(&dir, "conflict.txt");

    dir.write(
        "code.c",
        &functions
            .replace("return 3;", "return 33;")
            .replace("return 20;", "return -20;\n  /* more */"),
    );
    std::fs::remove_file(dir.path().join("gone.txt")).unwrap();
    std::fs::set_permissions(dir.path().join("run.sh"), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::remove_file(dir.path().join("kind.txt")).unwrap();
    std::os::unix::fs::symlink("target", dir.path().join("kind.txt")).unwrap();
    git(dir.path(), &["mv", "moved.txt", "renamed.txt"]);
    dir.write("renamed.txt", &lines.replace("line 5\n", "line five\n"));
    git(dir.path(), &["add", "renamed.txt"]);
    dir.write("bin.dat", "\0\u{1}\u{3}binary\n");
    dir.write("text.bin", "text, but binary by its attributes, changed\n");
    dir.write("nonl.txt", "last line\nmore");
    dir.write("dir/inner.txt", "inner changed\n");
    dir.write("with space.txt", "s2\n");
    dir.write("ünï.txt", "u2\n");
    git(dir.path(), &["config", "core.autocrlf", "true"]);
    dir.write("crlf.txt", "one\r\ntwo\r\nthree\r\n");
    dir.write("empty.txt", "");
    git(dir.path(), &["add", "empty.txt"]);
    dir.write("intended.txt", "intent\n");
    git(dir.path(), &["add", "-N", "intended.txt"]);
    // Moved on disk and only intended to be added under the new name: git finds the rename.
    std::fs::rename(dir.path().join("was.txt"), dir.path().join("now.txt")).unwrap();
    git(dir.path(), &["add", "-N", "now.txt"]);
    dir.write("staged.txt", "staged\n");
    git(dir.path(), &["add", "staged.txt"]);
    dir.write("algorithm.txt", "b\nb\n}\nb\n{\ny\n}\na\n}\n");

    let objects_before = git(dir.path(), &["count-objects"]);
    let mut session = initialized(dir.path());
    for (arguments, git_arguments) in [
        (json!({"staged": true}), vec!["--cached"]),
        (json!({"base": "HEAD"}), vec!["HEAD"]),
        (
            json!({"base": "HEAD~1", "staged": true}),
            vec!["--cached", "HEAD~1"],
        ),
        (
            json!({"base": "HEAD", "context_lines": 0}),
            vec!["-U0", "HEAD"],
        ),
        (
            json!({"base": "HEAD", "context_lines": 1}),
            vec!["-U1", "HEAD"],
        ),
        (
            json!({"staged": true, "paths": ["dir", "renamed.txt", "conflict.txt"]}),
            vec!["--cached", "--", "dir", "renamed.txt", "conflict.txt"],
        ),
        (
            json!({"base": "HEAD", "paths": ["dir", "nonl.txt"]}),
            vec!["HEAD", "--", "dir", "nonl.txt"],
        ),
        // The root names every file.
        (
            json!({"base": "HEAD", "paths": ["."]}),
            vec!["HEAD", "--", "."],
        ),
    ] {
        let mut command = vec!["diff", "--no-color"];
        command.extend(git_arguments);
        let expected = git(dir.path(), &command);
        let answer = session.call("git_diff", arguments.clone());
        assert_eq!(
            answer["structuredContent"]["diff"]
                .as_str()
                .unwrap_or_default(),
            expected,
            "{arguments}: {answer}"
        );
    }
    // Against the index, a file with conflicts is listed in its place (where git shows a
    // combined diff).
    let unstaged = session.call("git_diff", json!({}))["structuredContent"].clone();
    let expected = git(
        dir.path(),
        &["diff", "--no-color", "--", ".", ":!conflict.txt"],
    )
    .replace(
        "diff --git a/crlf.txt",
        "* Unmerged path conflict.txt\ndiff --git a/crlf.txt",
    );
    assert_eq!(unstaged["diff"], expected);
    let counts: Vec<_> = unstaged["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| format!("{}\t{}\t{}", file["added"], file["deleted"], file["path"]))
        .collect();
    assert_eq!(
        counts,
        [
            "5\t4\t\"algorithm.txt\"",
            "null\tnull\t\"bin.dat\"",
            "3\t2\t\"code.c\"",
            "0\t0\t\"conflict.txt\"",
            "1\t0\t\"crlf.txt\"",
            "1\t1\t\"dir/inner.txt\"",
            "0\t1\t\"gone.txt\"",
            "1\t0\t\"intended.txt\"",
            "1\t1\t\"kind.txt\"",
            "2\t1\t\"nonl.txt\"",
            "0\t0\t\"now.txt\"",
            "0\t0\t\"run.sh\"",
            "null\tnull\t\"text.bin\"",
            "1\t1\t\"with space.txt\"",
            "1\t1\t\"ünï.txt\"",
        ]
    );
    // Working-tree files were hashed in memory: nothing was written to the repository.
    assert_eq!(git(dir.path(), &["count-objects"]), objects_before);

    // diff.algorithm is honoured.
    let only = json!({"paths": ["algorithm.txt"]});
    let myers = session.call("git_diff", only.clone())["structuredContent"]["diff"].clone();
    git(dir.path(), &["config", "diff.algorithm", "histogram"]);
    let histogram = session.call("git_diff", only)["structuredContent"]["diff"].clone();
    assert_ne!(myers, histogram);
    assert_eq!(histogram, git(dir.path(), &["diff", "--", "algorithm.txt"]));

    // So are the settings that change how names are written: non-ASCII names unquoted, and no
    // a/ b/ prefixes.
    git(dir.path(), &["config", "core.quotePath", "false"]);
    git(dir.path(), &["config", "diff.noprefix", "true"]);
    let answer = session.call("git_diff", json!({"base": "HEAD"}));
    let diff = answer["structuredContent"]["diff"]
        .as_str()
        .unwrap_or_default();
    assert!(diff.contains("diff --git ünï.txt ünï.txt\n"), "{diff}");
    assert_eq!(diff, git(dir.path(), &["diff", "--no-color", "HEAD"]));
    git(dir.path(), &["config", "diff.noprefix", "false"]);
    git(dir.path(), &["config", "diff.mnemonicPrefix", "true"]);
    // And the default context; the call's context_lines come first, as -U does.
    git(dir.path(), &["config", "diff.context", "1"]);
    for (arguments, git_arguments) in [
        (json!({"base": "HEAD"}), vec!["HEAD"]),
        (json!({"staged": true}), vec!["--cached"]),
        (json!({"paths": ["dir"]}), vec!["--", "dir"]),
        (
            json!({"base": "HEAD", "context_lines": 3}),
            vec!["-U3", "HEAD"],
        ),
    ] {
        let answer = session.call("git_diff", arguments.clone());
        let mut command = vec!["diff", "--no-color"];
        command.extend(git_arguments);
        assert_eq!(
            answer["structuredContent"]["diff"],
            git(dir.path(), &command),
            "{arguments}"
        );
    }
    assert_ne!(
        git(dir.path(), &["diff", "--no-color", "HEAD"]),
        git(dir.path(), &["diff", "--no-color", "-U3", "HEAD"]),
        "diff.context changes nothing here"
    );
}

/// A root that is a linked worktree (`git worktree add`, as agents use for parallel work): the
/// reader is given the main repository's directory to read, and only when the worktree's
/// `.git` file and what it names check out. One rewritten by code in the workspace is refused,
/// with the same words whatever it names.
#[test]
fn git_tools_work_in_a_linked_worktree() {
    let main = TempDir::new();
    repository(&main);
    // A submodule entry, whose checkout the workspace can point at any repository.
    let recorded = git(main.path(), &["rev-parse", "HEAD:a.txt"]);
    let cacheinfo = format!("160000,{},sub", recorded.trim());
    git(
        main.path(),
        &["update-index", "--add", "--cacheinfo", &cacheinfo],
    );
    main.write(
        ".gitmodules",
        "[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n",
    );
    git(main.path(), &["add", ".gitmodules"]);
    git(main.path(), &["commit", "-q", "-m", "a submodule"]);
    let elsewhere = TempDir::new();
    let worktree = elsewhere.path().join("wt");
    git(
        main.path(),
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            worktree.to_str().unwrap(),
        ],
    );
    std::fs::write(worktree.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(worktree.join("b.txt"), "new\n").unwrap();
    git(&worktree, &["add", "b.txt"]);

    let mut session = initialized(&worktree);
    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    assert_eq!(status["branch"], "side", "{status}");
    assert_eq!(
        status["files"],
        json!([
            {"path": "a.txt", "staged": null, "unstaged": "modified", "orig_path": null},
            {"path": "b.txt", "staged": "added", "unstaged": null, "orig_path": null},
        ])
    );
    for (arguments, git_arguments) in [
        (json!({}), vec![]),
        (json!({"staged": true}), vec!["--cached"]),
        (json!({"base": "main"}), vec!["main"]),
    ] {
        let mut command = vec!["diff", "--no-color"];
        command.extend(git_arguments);
        let answer = session.call("git_diff", arguments.clone());
        assert_eq!(
            answer["structuredContent"]["diff"],
            git(&worktree, &command),
            "{arguments}"
        );
    }

    // A submodule's `.git` naming the main repository: gix is not made to open it (what its
    // refs hold would show as the submodule's commit).
    let main_head = git(main.path(), &["rev-parse", "HEAD"]);
    std::fs::write(
        worktree.join("sub/.git"),
        format!("gitdir: {}\n", main.path().join(".git").display()),
    )
    .unwrap();
    let mut fresh = initialized(&worktree);
    let diff = fresh.call("git_diff", json!({})).to_string();
    assert!(!diff.contains(main_head.trim()), "{diff}");
    let status = fresh.call("git_status", json!({}))["structuredContent"].clone();
    assert_eq!(status["files"].as_array().unwrap().len(), 2, "{status}");
    std::fs::remove_file(worktree.join("sub/.git")).unwrap();

    // Rewritten to name: a directory the workspace made itself, with a link back and a common
    // directory above the root; the real one by a path that resolves elsewhere in the reader's
    // sandbox (/proc/self is the reader there) or by a relative one; a directory outside,
    // existing or not. All are refused alike.
    let pointer = std::fs::read_to_string(worktree.join(".git")).unwrap();
    let real = pointer.strip_prefix("gitdir:").unwrap().trim().to_string();
    let forged = worktree.join("forged/worktrees/x");
    std::fs::create_dir_all(&forged).unwrap();
    std::fs::write(
        forged.join("gitdir"),
        format!("{}\n", worktree.join(".git").display()),
    )
    .unwrap();
    std::fs::write(forged.join("commondir"), "../../..\n").unwrap();
    let secrets = TempDir::new();
    secrets.write("config", "[core]\n\tbare = false\n");
    let mut refusals = Vec::new();
    for target in [
        forged.display().to_string(),
        format!("/proc/self/root{real}"),
        format!("../../..{real}"),
        secrets.path().display().to_string(),
        "/nonexistent/worktrees/x".to_string(),
    ] {
        std::fs::write(worktree.join(".git"), format!("gitdir: {target}\n")).unwrap();
        refusals.push(session.call_error("git_status", json!({})));
    }
    assert!(
        refusals[0].contains("not the top of a git repository"),
        "{refusals:?}"
    );
    assert!(
        refusals.iter().all(|refusal| refusal == &refusals[0]),
        "{refusals:?}"
    );
    std::fs::write(worktree.join(".git"), pointer).unwrap();
    let status = session.call("git_status", json!({}));
    assert_eq!(status["isError"], false, "{status}");

    // Another root is the workspace's to write too: one at `.../worktrees/NAME` cannot pose as
    // the worktree's directory and make its grandparent the repository.
    let home = TempDir::new();
    let other = home.path().join("worktrees/feature");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::create_dir_all(home.path().join("objects")).unwrap();
    std::fs::create_dir_all(home.path().join("refs")).unwrap();
    let other = other.canonicalize().unwrap();
    std::fs::write(
        other.join("gitdir"),
        format!("{}\n", worktree.join(".git").display()),
    )
    .unwrap();
    std::fs::write(other.join("commondir"), "../..\n").unwrap();
    std::fs::write(
        worktree.join(".git"),
        format!("gitdir: {}\n", other.display()),
    )
    .unwrap();
    let mut session = Session::start_with(&[&worktree, &other], None, None);
    session.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}));
    let refused = session.call_error("git_status", json!({}));
    assert_eq!(refused, refusals[0]);
}

/// A script that sends its git calls and closes stdin at once gets every answer: the thread
/// that started the git reader ending (its death signal stops the reader) must wait until the
/// calls still using it are done.
#[test]
fn git_calls_sent_just_before_stdin_closes_are_all_answered() {
    let dir = TempDir::new();
    repository(&dir);
    dir.write("a.txt", "one\ntwo\nthree\n");
    let mut session = initialized(dir.path());
    let calls = [
        ("git_diff", json!({})),
        ("git_status", json!({})),
        ("git_diff", json!({"base": "HEAD"})),
        ("git_status", json!({})),
    ];
    for (id, (tool, arguments)) in (100..).zip(&calls) {
        session.send_raw(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}})
            .to_string(),
        );
    }
    drop(session.stdin.take());
    for _ in &calls {
        let answer = session.receive();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
}

/// The kinds of change `git status --porcelain=v2` tells apart, as git itself names them.
#[test]
fn git_status_names_every_kind_of_change_as_git_does() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new();
    for name in [
        "a.txt",
        "b.txt",
        "c.txt",
        "d.txt",
        "e.txt",
        "exec.sh",
        "link-me.txt",
    ] {
        dir.write(name, &format!("{name}\n"));
    }
    dir.write(".gitignore", "ignored.log\n");
    commit_everything(dir.path());
    conflict(&dir, "c.txt");
    git(dir.path(), &["mv", "a.txt", "a2.txt"]);
    dir.write("a2.txt", "a.txt\nmore\n");
    std::fs::remove_file(dir.path().join("b.txt")).unwrap();
    dir.write("d.txt", "staged\n");
    git(dir.path(), &["add", "d.txt"]);
    dir.write("d.txt", "staged\nthen not\n");
    git(dir.path(), &["rm", "-q", "e.txt"]);
    let exec = dir.path().join("exec.sh");
    std::fs::set_permissions(&exec, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(dir.path().join("link-me.txt")).unwrap();
    std::os::unix::fs::symlink("a2.txt", dir.path().join("link-me.txt")).unwrap();
    dir.write("new.txt", "new\n");
    git(dir.path(), &["add", "-N", "new.txt"]);
    dir.write("dir/sub/untracked.txt", "?\n");
    dir.write("ignored.log", "not shown\n");
    // The repository's own excludes file, which git reads through its config.
    dir.write(".git/more-excludes", "hidden-*\n");
    git(
        dir.path(),
        &["config", "core.excludesFile", ".git/more-excludes"],
    );
    dir.write("hidden-too.txt", "not shown\n");
    dir.write("nested/inner.txt", "a repository of its own\n");
    git(&dir.path().join("nested"), &["init", "-q"]);

    let mut session = initialized(dir.path());
    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    let change = |path: &str, staged: Option<&str>, unstaged: Option<&str>| json!({"path": path, "staged": staged, "unstaged": unstaged, "orig_path": null});
    let mut renamed = change("a2.txt", Some("renamed"), Some("modified"));
    renamed["orig_path"] = json!("a.txt");
    assert_eq!(
        status["files"],
        json!([
            renamed,
            change("b.txt", None, Some("deleted")),
            change("c.txt", Some("unmerged"), Some("unmerged")),
            change("d.txt", Some("modified"), Some("modified")),
            change("e.txt", Some("deleted"), None),
            change("exec.sh", None, Some("modified")),
            change("link-me.txt", None, Some("type_changed")),
            change("new.txt", None, Some("added")),
            change("dir/sub/untracked.txt", None, Some("untracked")),
            change("nested/", None, Some("untracked")),
        ]),
        "git says:\n{}",
        git(
            dir.path(),
            &["status", "--porcelain=v2", "--untracked-files=all"]
        )
    );
}

#[test]
fn git_status_reads_sha256_repositories() {
    let dir = TempDir::new();
    dir.write("a.txt", "one\n");
    git(
        dir.path(),
        &["init", "-q", "-b", "main", "--object-format=sha256"],
    );
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-q", "-m", "first"]);
    dir.write("a.txt", "two\n");
    let mut session = initialized(dir.path());
    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    assert_eq!(
        status["head"],
        git(dir.path(), &["rev-parse", "HEAD"]).trim()
    );
    assert_eq!(status["files"][0]["unstaged"], "modified", "{status}");
}

/// The repository is read in the sandbox: objects borrowed from a repository outside (an
/// alternate the workspace's code wrote) are not there.
#[test]
fn git_status_reads_no_repository_outside_the_workspace() {
    let private = TempDir::new();
    private.write("private-plans.txt", "not for the model\n");
    commit_everything(private.path());
    let private_head = git(private.path(), &["rev-parse", "HEAD"]);

    let dir = TempDir::new();
    repository(&dir);
    let objects = private.path().join(".git/objects");
    dir.write(
        ".git/objects/info/alternates",
        &format!("{}\n", objects.display()),
    );
    git(
        dir.path(),
        &["update-ref", "refs/heads/main", private_head.trim()],
    );
    // The attack is real: git on the host lists the private tree's files.
    assert!(git(dir.path(), &["status", "--porcelain"]).contains("private-plans.txt"));

    let mut session = initialized(dir.path());
    let answer = session.call("git_status", json!({})).to_string();
    assert!(!answer.contains("private-plans"), "{answer}");
}

/// gix follows links and paths in `.git` that the workspace's code wrote; in the sandbox's view
/// the host's files are not there at all, so whether one exists cannot be told from the answer.
#[test]
fn git_status_tells_nothing_of_host_files_that_git_is_pointed_at() {
    let host = TempDir::new();
    host.write("exists/file", "on the host only\n");
    let answer = |setup: &dyn Fn(&TempDir)| {
        let dir = TempDir::new();
        repository(&dir);
        // Each repository's commit has its own id (its time is in it).
        let head = git(dir.path(), &["rev-parse", "HEAD"]);
        setup(&dir);
        let mut session = initialized(dir.path());
        let answer = session.call("git_status", json!({})).to_string();
        answer
            .replace(&dir.path().display().to_string(), "WORKSPACE")
            .replace(head.trim(), "HEAD")
    };
    let exclude_to = |target: &str| {
        let target = host.path().join(target);
        move |dir: &TempDir| {
            let exclude = dir.path().join(".git/info/exclude");
            let _ = std::fs::remove_file(&exclude);
            std::os::unix::fs::symlink(&target, &exclude).unwrap();
        }
    };
    let existing = answer(&exclude_to("exists/file"));
    assert_eq!(existing, answer(&exclude_to("missing/file")));
    assert!(existing.contains(r#""isError":false"#), "{existing}");

    let common_dir_through = |target: &str| {
        let target = host.path().join(target);
        move |dir: &TempDir| {
            let up = format!(
                "{}/../../{}",
                target.display(),
                dir.path().join(".git").display()
            );
            dir.write(".git/commondir", &up);
        }
    };
    // The error names the path the workspace itself wrote, and nothing more.
    assert_eq!(
        answer(&common_dir_through("exists/x")).replace("exists/x", "TARGET"),
        answer(&common_dir_through("missing/x")).replace("missing/x", "TARGET")
    );
}

/// A program the repository has gix start (a clean filter) runs in the reader's sandbox; it
/// cannot write an answer of its own where the server reads the reader's.
#[test]
fn nothing_the_repository_starts_answers_for_the_git_reader() {
    let dir = TempDir::new();
    dir.write("a.txt", "one\n");
    dir.write(".gitattributes", "a.txt filter=forge\n");
    commit_everything(dir.path());
    let forged = r#"{"id":"","ok":{"branch":"FORGED","clean":true,"files":[]}}"#;
    git(
        dir.path(),
        &[
            "config",
            "filter.forge.clean",
            &format!("[ -e .git/tried ] || {{ touch .git/tried; echo '{forged}' > /proc/$PPID/fd/1; }}; cat"),
        ],
    );
    // Its time changed, a.txt goes through the filter on every call.
    std::thread::sleep(Duration::from_millis(20));
    dir.write("a.txt", "one\n");
    let mut session = initialized(dir.path());
    for call in 1..=3 {
        let status = session.call("git_status", json!({}));
        let files: Vec<_> = status["structuredContent"]["files"]
            .as_array()
            .unwrap_or_else(|| panic!("call {call}: {status}"))
            .iter()
            .map(|file| file["path"].as_str().unwrap().to_string())
            .collect();
        let expected: Vec<_> = (1..call).map(|n| format!("new{n}")).collect();
        assert_eq!(status["structuredContent"]["branch"], "main", "{status}");
        assert_eq!(files, expected, "call {call}: {status}");
        dir.write(&format!("new{call}"), "\n");
    }
    assert!(
        dir.path().join(".git/tried").exists(),
        "the filter never ran"
    );
}

/// Calls for one root in a burst share its one reader (a sandbox each would cost more than
/// the calls).
#[test]
fn a_burst_of_git_status_calls_shares_one_reader() {
    let dir = TempDir::new();
    repository(&dir);
    let mut session = initialized(dir.path());
    for id in 500..512 {
        session.send_raw(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "git_status", "arguments": {}}})
            .to_string(),
        );
    }
    for _ in 500..512 {
        let answer = session.receive();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    assert_eq!(server_children(&session).len(), 1);

    // A repository git cannot read: errors, from the same reader.
    dir.write(".git/HEAD", "nowhere\n");
    let mut seen = Vec::new();
    for _ in 0..2 {
        let error = session.call_error("git_status", json!({}));
        assert!(error.contains("HEAD"), "{error}");
        seen.push(server_children(&session));
    }
    assert_eq!(seen[0].len(), 1);
    assert_eq!(
        seen[0], seen[1],
        "the reader was replaced after an error it reported"
    );
}

/// Waits up to 10 s for the number of the server's git readers to satisfy `wanted`.
#[track_caller]
fn wait_for_readers(session: &Session, wanted: impl Fn(usize) -> bool, failure: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !wanted(server_children(session).len()) {
        assert!(std::time::Instant::now() < deadline, "{failure}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The server's children's pids: each git reader is a sandbox it started.
fn server_children(session: &Session) -> Vec<String> {
    let server = session.child.id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let parent = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .to_string();
            (parent == server).then(|| entry.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

/// The server's executable replaced while it runs (a rebuild): readers start from the new one.
#[test]
fn git_status_works_after_the_executable_is_replaced() {
    let dir = TempDir::new();
    repository(&dir);
    let bin = TempDir::new();
    let exe = bin.path().join("autocoder");
    std::fs::copy(autocoder_bin(), &exe).unwrap();
    let mut server = crate::util::spawn_fresh_copy(
        Command::new(&exe)
            .args(["mcp", "--root"])
            .arg(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let mut input = server.stdin.take().unwrap();
    writeln!(input, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#).unwrap();
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let mut output = BufReader::new(server.stdout.take().unwrap()).lines();
    output.next().unwrap().unwrap();
    std::fs::copy(autocoder_bin(), bin.path().join("new")).unwrap();
    std::fs::rename(bin.path().join("new"), &exe).unwrap();
    writeln!(input, r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"git_status","arguments":{{}}}}}}"#).unwrap();
    let answer: Value = serde_json::from_str(&output.next().unwrap().unwrap()).unwrap();
    assert_eq!(
        answer["result"]["structuredContent"]["branch"], "main",
        "{answer}"
    );
    drop(input);
    server.wait().unwrap();
}

/// A FIFO where git expects a file blocks whatever reads it; the reader is a process the server
/// kills when the call is cancelled, and the next call gets a new one.
#[test]
fn a_git_status_blocked_on_a_fifo_is_stopped_by_cancelling_it() {
    let dir = TempDir::new();
    repository(&dir);
    let fifo = dir.path().join(".gitignore");
    mkfifo(&fifo);
    let mut session = initialized(dir.path());
    session.send_raw(
        r#"{"jsonrpc": "2.0", "id": 700, "method": "tools/call", "params": {"name": "git_status", "arguments": {}}}"#,
    );
    wait_for_readers(&session, |readers| readers > 0, "no git reader started");
    std::thread::sleep(Duration::from_millis(300));
    session.send_raw(
        r#"{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 700}}"#,
    );
    wait_for_readers(
        &session,
        |readers| readers == 0,
        "the blocked git reader is still running",
    );

    std::fs::remove_file(&fifo).unwrap();
    dir.write("a.txt", "changed\n");
    let status = session.call("git_status", json!({}));
    assert_eq!(
        status["structuredContent"]["files"][0]["path"], "a.txt",
        "{status}"
    );
}

/// Calls for a root whose reader hangs wait their turn, a bounded number of them: the others
/// are refused at once, and the server's workers stay free for the other tools.
#[test]
fn a_hung_git_reader_leaves_room_for_the_other_tools() {
    let dir = TempDir::new();
    repository(&dir);
    mkfifo(&dir.path().join(".gitignore"));
    let mut session = initialized(dir.path());
    let status = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "git_status", "arguments": {}}})
        .to_string()
    };
    session.send_raw(&status(800));
    wait_for_readers(&session, |readers| readers > 0, "no git reader started");
    for id in 801..=820 {
        session.send_raw(&status(id));
    }
    // 16 wait; the other 4 are refused at once.
    for _ in 0..4 {
        let refused = session.receive();
        assert_eq!(refused["result"]["isError"], true, "{refused}");
        let text = refused["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("busy"), "{text}");
    }
    let read = session.request(
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "a.txt"}}),
    );
    assert_eq!(
        read["result"]["structuredContent"]["total_lines"], 2,
        "{read}"
    );
    for id in 800..=820 {
        session.send_raw(&format!(
            r#"{{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {{"requestId": {id}}}}}"#
        ));
    }
    let pong = session.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");
}

/// The server keeps the repository open between calls; what changes in `.git` still shows.
#[test]
fn git_status_sees_upstream_and_config_changes_between_calls() {
    let dir = TempDir::new();
    repository(&dir);
    let first = git(dir.path(), &["rev-parse", "HEAD"]);
    dir.write("a.txt", "ahead\n");
    git(dir.path(), &["commit", "-q", "-am", "ahead"]);
    let mut session = initialized(dir.path());
    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    assert_eq!(
        (&status["upstream"], &status["ahead"], &status["clean"]),
        (&json!(null), &json!(null), &json!(true)),
        "{status}"
    );
    // A staged file, with the index's time set back to what it was: still seen.
    let index = dir.path().join(".git/index");
    let reference = dir.path().join(".git/index-time");
    let touch = |args: &[&Path]| {
        let status = Command::new("touch").arg("-r").args(args).status().unwrap();
        assert!(status.success());
    };
    touch(&[&index, &reference]);
    dir.write("staged.txt", "new\n");
    git(dir.path(), &["add", "staged.txt"]);
    touch(&[&reference, &index]);
    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    assert_eq!(status["files"][0]["staged"], "added", "{status}");
    git(dir.path(), &["rm", "-q", "--cached", "staged.txt"]);
    std::fs::remove_file(dir.path().join("staged.txt")).unwrap();

    // An upstream one commit behind, then one that has a commit of its own as well.
    for (key, value) in [
        ("remote.origin.url", "https://example.com/o/r.git"),
        ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
        ("branch.main.remote", "origin"),
        ("branch.main.merge", "refs/heads/main"),
    ] {
        git(dir.path(), &["config", key, value]);
    }
    git(
        dir.path(),
        &["update-ref", "refs/remotes/origin/main", first.trim()],
    );
    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    assert_eq!(status["upstream"], "origin/main", "{status}");
    assert_eq!(
        (&status["ahead"], &status["behind"]),
        (&json!(1), &json!(0))
    );

    let tree = git(
        dir.path(),
        &["rev-parse", &format!("{}^{{tree}}", first.trim())],
    );
    let theirs = git(
        dir.path(),
        &[
            "commit-tree",
            tree.trim(),
            "-p",
            first.trim(),
            "-m",
            "theirs",
        ],
    );
    git(
        dir.path(),
        &["update-ref", "refs/remotes/origin/main", theirs.trim()],
    );
    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    assert_eq!(
        (&status["ahead"], &status["behind"]),
        (&json!(1), &json!(1))
    );
    assert!(
        git(dir.path(), &["status", "--porcelain=v2", "--branch"]).contains("# branch.ab +1 -1")
    );

    // A rename, then the same with renames switched off for status.
    git(dir.path(), &["mv", "old.txt", "moved.txt"]);
    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    assert_eq!(status["files"][0]["orig_path"], "old.txt", "{status}");
    git(dir.path(), &["config", "status.renames", "false"]);
    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    let staged: Vec<_> = status["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| {
            (
                file["path"].as_str().unwrap(),
                file["staged"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(staged, [("moved.txt", "added"), ("old.txt", "deleted")]);

    // A new .git altogether (the old one moved away) is read afresh.
    std::fs::rename(dir.path().join(".git"), dir.path().join("old-git")).unwrap();
    git(dir.path(), &["init", "-q", "-b", "fresh"]);
    let status = session.call("git_status", json!({}))["structuredContent"].clone();
    assert_eq!(status["branch"], "fresh", "{status}");
    assert_eq!(status["head"], json!(null));
}

#[test]
fn git_tools_run_nothing_on_the_host_and_show_nothing_outside() {
    // Outside the workspace: a program git started on the host could write here.
    let host = TempDir::new();
    let marker = host.path().join("ran");
    let program = format!("touch '{}'", marker.display());
    let append_config = |dir: &TempDir, text: &str| {
        let config = dir.path().join(".git/config");
        let mut all = std::fs::read_to_string(&config).unwrap();
        all.push_str(text);
        std::fs::write(&config, all).unwrap();
    };

    // Drivers (one with dots in its name), fsmonitor and a submodule diff setting, as sandboxed
    // code could write them.
    let drivers = TempDir::new();
    repository(&drivers);
    for driver in ["evil", "dotted.name"] {
        append_config(&drivers, &format!(
            "[filter \"{driver}\"]\n\tclean = \"{program}; cat\"\n\tsmudge = \"{program}; cat\"\n\trequired = true\n[diff \"{driver}\"]\n\ttextconv = \"{program}; cat\"\n\tcommand = \"{program}; true\"\n"
        ));
    }
    append_config(
        &drivers,
        &format!("[core]\n\tfsmonitor = \"{program}; true\"\n[diff]\n\tsubmodule = diff\n"),
    );
    drivers.write(
        ".gitattributes",
        "a.txt filter=evil diff=evil\nold.txt filter=dotted.name diff=dotted.name\n",
    );
    drivers.write("a.txt", "one\ntwo\nchanged\n");
    drivers.write("old.txt", "changed too\n");
    // The attack is real: plain git runs the program.
    git(drivers.path(), &["diff", "--stat"]);
    assert!(marker.exists(), "plain git diff should have run the filter");
    std::fs::remove_file(&marker).unwrap();
    let mut session = initialized(drivers.path());
    let status = session.call("git_status", json!({}));
    assert_eq!(status["isError"], false, "{status}");
    let diff = session.call("git_diff", json!({}));
    assert_eq!(diff["isError"], false, "{diff}");
    assert_eq!(
        diff["structuredContent"]["files"].as_array().unwrap().len(),
        2,
        "{diff}"
    );
    let staged = session.call("git_diff", json!({"staged": true, "base": "HEAD"}));
    assert_eq!(staged["isError"], false, "{staged}");

    // A partial clone whose missing blob would be fetched through a remote's upload-pack.
    let lazy = TempDir::new();
    repository(&lazy);
    let blob = git(lazy.path(), &["rev-parse", "HEAD:a.txt"]);
    let blob = blob.trim();
    std::fs::remove_file(
        lazy.path()
            .join(format!(".git/objects/{}/{}", &blob[..2], &blob[2..])),
    )
    .unwrap();
    git(
        lazy.path(),
        &["config", "core.repositoryformatversion", "1"],
    );
    append_config(&lazy, &format!(
        "[extensions]\n\tpartialClone = origin\n[remote \"origin\"]\n\turl = {}\n\tpromisor = true\n\tuploadpack = \"{program};\"\n",
        host.path().display()
    ));
    lazy.write("a.txt", "one\n");
    let mut session = initialized(lazy.path());
    session.call("git_status", json!({}));
    session.call("git_diff", json!({"base": "HEAD"}));

    // A work tree moved outside the workspace, and a .git file naming another repository: what
    // lies there is never shown.
    let secrets = TempDir::new();
    secrets.write("id_rsa", "SECRET-KEY-MATERIAL\n");
    secrets.write("other-file", "x\n");
    let moved = TempDir::new();
    repository(&moved);
    let placeholder = git(moved.path(), &["hash-object", "-w", "a.txt"]);
    git(
        moved.path(),
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{},id_rsa", placeholder.trim()),
        ],
    );
    git(
        moved.path(),
        &[
            "config",
            "core.worktree",
            &secrets.path().display().to_string(),
        ],
    );
    let mut session = initialized(moved.path());
    for (tool, arguments) in [
        ("git_status", json!({})),
        ("git_diff", json!({})),
        ("git_diff", json!({"base": "HEAD"})),
    ] {
        let answer = session.call(tool, arguments).to_string();
        assert!(
            !answer.contains("SECRET-KEY-MATERIAL") && !answer.contains("other-file"),
            "{tool}: {answer}"
        );
    }
    let pointer = TempDir::new();
    pointer.write(
        ".git",
        &format!("gitdir: {}\n", moved.path().join(".git").display()),
    );
    let mut session = initialized(pointer.path());
    let refused = session.call_error("git_diff", json!({"base": "HEAD"}));
    assert!(
        refused.contains("not the top of a git repository"),
        "{refused}"
    );

    assert!(
        !marker.exists(),
        "a program the workspace named ran on the host"
    );
}

#[test]
fn client_roots_only_narrow_the_allowed_roots() {
    let dir = TempDir::new();
    std::fs::create_dir(dir.path().join("my project")).unwrap();
    dir.write("top.txt", "top\n");
    dir.write("my project/inner.txt", "inner\n");
    let root = dir.path().canonicalize().unwrap();
    let inner = root.join("my project");
    let uri = |path: &Path| format!("file://{}", path.display().to_string().replace(' ', "%20"));

    let mut session = Session::start(&root);
    session.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": true}}, "clientInfo": {"name": "t", "version": "1"}}));
    session.send_raw(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
    // The server asks; the client answers with a directory inside the allowed root.
    let answer_roots = |session: &mut Session, roots: Value| {
        let asked = session.receive();
        assert_eq!(asked["method"], "roots/list", "{asked}");
        session.send_raw(
            &json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": roots}}).to_string(),
        );
    };
    answer_roots(
        &mut session,
        json!([{"uri": uri(&inner), "name": "project"}]),
    );
    let read = session.call("read_file", json!({"path": "inner.txt"}));
    assert_eq!(read["structuredContent"]["content"], "1\tinner\n", "{read}");
    let refused = session.call_error("read_file", json!({"path": root.join("top.txt")}));
    assert!(refused.contains("outside the allowed roots"), "{refused}");

    // A wider root, or one elsewhere, gives nothing beyond what was allowed.
    for roots in [
        json!([{"uri": "file:///"}]),
        json!([{"uri": uri(&std::env::temp_dir())}, {"uri": "https://example.com/"}]),
        json!([]),
    ] {
        session.send_raw(r#"{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}"#);
        answer_roots(&mut session, roots.clone());
        let read = session.call("read_file", json!({"path": "top.txt"}));
        assert_eq!(
            read["structuredContent"]["content"], "1\ttop\n",
            "{roots}: {read}"
        );
        let escape = session.call_error("read_file", json!({"path": "../x"}));
        assert!(escape.contains("may not leave the root"), "{escape}");
        let inside = session.call_error("read_file", json!({"path": "sub/../top.txt"}));
        assert!(inside.contains("without it"), "{inside}");
        let slashed = session.call_error("read_file", json!({"path": "top.txt/"}));
        assert!(slashed.contains("names a directory"), "{slashed}");
    }
}

#[test]
fn fifos_devices_and_huge_ignore_files_do_not_hang_the_tools() {
    let dir = TempDir::new();
    dir.write("src/app.py", "print('needle')\n");
    // What a sandboxed command could leave: FIFOs where ignore files and sources are read, and
    // an ignore file that never ends.
    mkfifo(&dir.path().join("src/.gitignore"));
    mkfifo(&dir.path().join("pipe.txt"));
    std::os::unix::fs::symlink("/dev/zero", dir.path().join(".ignore")).unwrap();
    let mut session = initialized(dir.path());
    let listed = session.call("list_files", json!({"recursive": true}))["structuredContent"]
        ["entries"]
        .clone();
    assert!(listed.to_string().contains("src/app.py"), "{listed}");
    let found = session.call("search_text", json!({"pattern": "needle"}))["structuredContent"]
        ["matches"]
        .clone();
    assert_eq!(found[0]["path"], "src/app.py", "{found}");
    for (tool, arguments) in [
        ("read_file", json!({"path": "pipe.txt"})),
        (
            "edit_file",
            json!({"path": "pipe.txt", "old_string": "a", "new_string": "b"}),
        ),
        ("search_text", json!({"pattern": "a", "path": "pipe.txt"})),
    ] {
        let text = session.call_error(tool, arguments);
        assert!(text.contains("not a regular"), "{tool}: {text}");
    }
    let entries = session.call("list_files", json!({}))["structuredContent"]["entries"].clone();
    let pipe = entries
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["path"] == "pipe.txt")
        .cloned();
    assert_eq!(
        pipe.map(|p| p["kind"].clone()),
        Some(json!("other")),
        "{entries}"
    );
}

#[test]
fn a_directory_swapped_for_a_link_during_a_walk_shows_nothing_outside() {
    // A host directory the root must not reveal, and a sandboxed command (here a thread) that
    // keeps exchanging `sub` with a link to it while the tools walk `sub`.
    let host = TempDir::new();
    host.write("HOST-ONLY-NAME.txt", "needle on the host\n");
    let dir = TempDir::new();
    dir.write("sub/inside.txt", "needle inside\n");
    std::os::unix::fs::symlink(host.path(), dir.path().join("link")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let sub = std::ffi::CString::new(dir.path().join("sub").to_str().unwrap()).unwrap();
        let link = std::ffi::CString::new(dir.path().join("link").to_str().unwrap()).unwrap();
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // SAFETY: two valid NUL-terminated paths. By number: musl has no wrapper.
                unsafe {
                    libc::syscall(
                        libc::SYS_renameat2,
                        libc::AT_FDCWD,
                        sub.as_ptr(),
                        libc::AT_FDCWD,
                        link.as_ptr(),
                        libc::RENAME_EXCHANGE,
                    )
                };
            }
        })
    };
    let mut session = initialized(dir.path());
    let mut leaked = Vec::new();
    for _ in 0..300 {
        for (tool, arguments) in [
            ("list_files", json!({"path": "sub", "recursive": true})),
            ("search_text", json!({"pattern": "needle", "path": "sub"})),
        ] {
            let answer =
                session.request("tools/call", json!({"name": tool, "arguments": arguments}));
            if answer.to_string().contains("HOST-ONLY-NAME")
                || answer.to_string().contains("on the host")
            {
                leaked.push(answer);
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(
        leaked.is_empty(),
        "{} answers showed the host: {}",
        leaked.len(),
        leaked[0]
    );
}

#[test]
fn search_text_streams_files_and_takes_back_a_late_binary_ones_matches() {
    let dir = TempDir::new();
    let lines = [
        "1", "2", "hit 3", "hit 4", "5", "6", "7", "8", "hit 9", "10",
    ];
    dir.write("context.txt", &(lines.join("\n") + "\n"));
    // Binary only after its matches: none of them is kept, nor counted against max_results.
    dir.write("a-late.bin", &format!("{}\0\n", "hit\n".repeat(5)));
    dir.write("b.txt", "hit b\n");
    // A big file of empty lines (each was once kept as a string of its own).
    dir.write("newlines.txt", &"\n".repeat((16 << 20) - 1));
    let mut session = initialized(dir.path());
    let found = session.call(
        "search_text",
        json!({"pattern": "hit", "path": "context.txt", "context_lines": 2}),
    )["structuredContent"]
        .clone();
    let shown: Vec<_> = found["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["line"].clone(), m["before"].clone(), m["after"].clone()))
        .collect();
    assert_eq!(
        shown,
        [
            (json!(3), json!(["1", "2"]), json!(["hit 4", "5"])),
            (json!(4), json!(["2", "hit 3"]), json!(["5", "6"])),
            (json!(9), json!(["7", "8"]), json!(["10"])),
        ]
    );
    let found = session.call(
        "search_text",
        json!({"pattern": "hit", "glob": "[ab]*", "max_results": 2}),
    )["structuredContent"]
        .clone();
    assert_eq!(found["matches"].as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found["matches"][0]["path"], "b.txt");
    assert_eq!(found["truncated"], false);
    // Nor against the room in the result, even when its matches filled it.
    let wide = format!("hit {}\n", "w".repeat(990));
    dir.write("a-late.bin", &format!("{}\0\n", wide.repeat(100)));
    let found = session.call("search_text", json!({"pattern": "hit", "glob": "[ab]*"}))
        ["structuredContent"]
        .clone();
    assert_eq!(found["matches"].as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found["truncated"], false);
    let found = session.call(
        "search_text",
        json!({"pattern": "x", "path": "newlines.txt"}),
    );
    assert_eq!(found["structuredContent"]["matches"], json!([]));
    let status = std::fs::read_to_string(format!("/proc/{}/status", session.child.id())).unwrap();
    let peak_kb: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches(" kB").parse().ok())
        .unwrap();
    assert!(peak_kb < 64 << 10, "peak RSS {peak_kb} kB");
}

#[test]
fn walks_hold_few_descriptors_and_search_every_root() {
    // A wide tree under a low descriptor limit: every file is walked, listed and searched.
    let dir = TempDir::new();
    for n in 0..600 {
        dir.write(&format!("d{n:03}/f{n}.txt"), &format!("needle {n}\n"));
    }
    let other = TempDir::new();
    other.write("only-here.txt", "needle in the second root\n");
    other.write("sub/here.txt", "in sub\n");
    let mut session = Session::start_with(&[dir.path(), other.path()], Some(128), None);
    session.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let every_tenth = listed(&mut session, json!({"recursive": true, "glob": "f*0.txt"}));
    assert_eq!(every_tenth.len(), 60, "{every_tenth:?}");
    let found = session.call(
        "search_text",
        json!({"pattern": "needle (599|0)$", "max_results": 5000}),
    )["structuredContent"]
        .clone();
    assert_eq!(found["matches"].as_array().unwrap().len(), 2, "{found}");
    // What is found in another root is named so that it can be given back: absolute.
    let other_root = other.path().canonicalize().unwrap();
    let found = session.call(
        "search_text",
        json!({"pattern": "needle", "path": other.path().to_str().unwrap()}),
    )["structuredContent"]
        .clone();
    let path = found["matches"][0]["path"].as_str().unwrap().to_string();
    assert_eq!(path, other_root.join("only-here.txt").to_str().unwrap());
    let read = session.call("read_file", json!({"path": path}));
    assert_eq!(read["content"][0]["text"], "1\tneedle in the second root\n");
    let listed_there = listed(
        &mut session,
        json!({"path": other.path().to_str().unwrap(), "recursive": true}),
    );
    assert!(
        listed_there.contains(
            &other_root
                .join("sub/here.txt")
                .to_str()
                .unwrap()
                .to_string()
        ),
        "{listed_there:?}"
    );
    // A command given a directory of another root runs there, with that root as its workspace.
    let ran = session.call(
        "run_command",
        json!({"command": "pwd; cat here.txt; ls ..", "cwd": other_root.join("sub").to_str().unwrap()}),
    )["structuredContent"]
        .clone();
    assert_eq!(
        ran["stdout"],
        format!(
            "{}\nin sub\nonly-here.txt\nsub\n",
            other_root.join("sub").display()
        ),
        "{ran}"
    );
    // Reading, editing and writing name their file the same way: absolute in another root,
    // relative in the first, whichever way the request named it.
    let first_root = dir.path().canonicalize().unwrap();
    for (arguments, tool) in [
        (json!({"path": path}), "read_file"),
        (
            json!({"path": path, "old_string": "needle", "new_string": "pin", "dry_run": true}),
            "edit_file",
        ),
        (
            json!({"path": other_root.join("new.txt"), "content": "x"}),
            "write_file",
        ),
        (json!({"path": "d000/f0.txt"}), "read_file"),
        (
            json!({"path": first_root.join("d001/f1.txt"), "old_string": "needle", "new_string": "pin"}),
            "edit_file",
        ),
        (json!({"path": "new.txt", "content": "x"}), "write_file"),
    ] {
        let named = session.call(tool, arguments.clone())["structuredContent"]["path"].clone();
        let expected = match arguments["path"].as_str().unwrap() {
            given if given.starts_with(other_root.to_str().unwrap()) => given.to_string(),
            given => given
                .strip_prefix(&format!("{}/", first_root.display()))
                .unwrap_or(given)
                .to_string(),
        };
        assert_eq!(named, expected, "{tool} {arguments}");
    }
}

#[test]
fn ignore_files_apply_as_git_and_ripgrep_weigh_them() {
    // The root is a subdirectory of a repository: the ignore files above it count too.
    let repo = TempDir::new();
    git(repo.path(), &["init", "-q"]);
    repo.write(".gitignore", "*.log\n");
    repo.write(".git/info/exclude", "excluded.txt\n");
    repo.write(".ignore", "*.gen\n");
    repo.write("sub/.gitignore", "!kept.gen\nbuild/\n/anchored.txt\n");
    for name in [
        "a.log",
        "excluded.txt",
        "kept.gen",
        "b.gen",
        "build/out.txt",
        "anchored.txt",
        "deeper/anchored.txt",
        "plain.txt",
    ] {
        repo.write(&format!("sub/{name}"), "x\n");
    }
    let mut session = initialized(&repo.path().join("sub"));
    let paths = listed(&mut session, json!({"recursive": true}));
    // `.ignore` wins over `.gitignore`: its `*.gen` holds against sub/.gitignore's `!kept.gen`.
    assert_eq!(
        paths,
        [".gitignore", "deeper", "deeper/anchored.txt", "plain.txt"]
    );
}

#[test]
fn commands_run_in_the_root_held_even_if_its_name_now_leads_elsewhere() {
    // Sandboxed code with the parent writable can move the root away and put a link to a host
    // directory under its name; commands must still run in the directory the server holds.
    let base = TempDir::new();
    let host = TempDir::new();
    host.write("host-file.txt", "host\n");
    base.write("shop/mine.txt", "mine\n");
    let mut session = initialized(&base.path().join("shop"));
    std::fs::rename(base.path().join("shop"), base.path().join("shop.real")).unwrap();
    std::os::unix::fs::symlink(host.path(), base.path().join("shop")).unwrap();
    let ran = session.call("run_command", json!({"command": "ls; touch written"}))
        ["structuredContent"]
        .clone();
    assert_eq!(ran["stdout"], "mine.txt\n", "{ran}");
    assert!(base.path().join("shop.real/written").exists());
    assert!(!host.path().join("written").exists());
    let tested = session.call("run_tests", json!({}));
    assert!(!tested.to_string().contains("host-file"), "{tested}");
}

#[test]
fn deep_trees_long_lines_and_huge_ignore_files_stay_bounded() {
    let dir = TempDir::new();
    // A chain of 300 directories: walked to 256 levels, without failing.
    let deep: String = (0..300).map(|_| "d/").collect();
    dir.write(&format!("{deep}bottom.txt"), "needle\n");
    // A line of 5,000 characters with the match far into it: found, shown cut.
    dir.write(
        "long.txt",
        &format!("{}needle{}\n", "a".repeat(3000), "b".repeat(2000)),
    );
    // An ignore file of 80,000 patterns: only its first 5,000 are used.
    let mut patterns: String = (0..80_000)
        .map(|n| format!("nothing{n}/**/*.tmp\n"))
        .collect();
    patterns.insert_str(0, "early.txt\n");
    patterns.push_str("late.txt\n");
    dir.write(".gitignore", &patterns);
    dir.write("early.txt", "x\n");
    dir.write("late.txt", "x\n");
    let mut session = initialized(dir.path());
    let at_depth = |levels: usize| vec!["d"; levels].join("/");
    assert_eq!(
        listed(
            &mut session,
            json!({"recursive": true, "glob": at_depth(256)})
        ),
        [at_depth(256)]
    );
    let below = session.call(
        "list_files",
        json!({"recursive": true, "glob": at_depth(257)}),
    )["structuredContent"]
        .clone();
    assert_eq!(below["entries"], json!([]));
    assert_eq!(below["truncated"], true);
    let paths = listed(&mut session, json!({}));
    assert!(
        paths.iter().any(|p| p == "late.txt") && !paths.iter().any(|p| p == "early.txt"),
        "{paths:?}"
    );
    let found = session.call("search_text", json!({"pattern": "needle"}))["structuredContent"]
        ["matches"]
        .clone();
    let text = found[0]["text"].as_str().unwrap();
    assert_eq!(found[0]["path"], "long.txt", "{found}");
    assert!(
        text.starts_with("[2500 bytes before] …")
            && text.contains("needle")
            && text.ends_with("… [line cut at 1000 characters]")
            && text.len() < 1100,
        "{text}"
    );
}

#[test]
fn directories_the_server_cannot_read_are_skipped() {
    if !crate::util::is_root() {
        eprintln!("skipped: needs root to make a directory another user cannot read");
        return;
    }
    let dir = TempDir::new();
    dir.write("open/hi.txt", "hi\n");
    dir.write("locked/secret.txt", "hi\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(
        dir.path().join("locked"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    let mut session = Session::start_with(&[dir.path()], None, Some(65534));
    session.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let listed = session.call("list_files", json!({"recursive": true}))["structuredContent"]
        ["entries"]
        .clone();
    assert!(listed.to_string().contains("open/hi.txt"), "{listed}");
    let found = session.call("search_text", json!({"pattern": "hi", "glob": "**/*.txt"}))
        ["structuredContent"]["matches"]
        .clone();
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
}

#[test]
fn concurrent_edits_long_lines_and_big_files_answer_truthfully() {
    let dir = TempDir::new();
    dir.write("shared.txt", "start\n");
    dir.write("minified.js", &format!("{}\n", "x".repeat(100_000)));
    let big = dir.path().join("big.log");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(20 << 20)
        .unwrap();
    let mut session = initialized(dir.path());
    // 20 edits of the same text at once: exactly one may succeed, and the file shows it.
    for id in 0..20 {
        session.send_raw(&json!({"jsonrpc": "2.0", "id": 500 + id, "method": "tools/call",
            "params": {"name": "edit_file", "arguments": {"path": "shared.txt", "old_string": "start", "new_string": format!("E{id}")}}}).to_string());
    }
    let mut written = Vec::new();
    for _ in 0..20 {
        let answer = session.receive();
        if answer["result"]["isError"] == false {
            written.push(answer["id"].as_i64().unwrap() - 500);
        }
    }
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("shared.txt")).unwrap(),
        format!("E{}\n", written[0])
    );
    // A 100,000-character line is shown cut, in the text and in structuredContent.
    let read = session.call("read_file", json!({"path": "minified.js"}));
    let content = read["structuredContent"]["content"].as_str().unwrap();
    assert!(
        content.len() < 3_000 && content.contains("[line cut: 100000 bytes in all]"),
        "{}",
        &content[..100]
    );
    // A file too big to search, named: said so, not an empty result.
    let text = session.call_error("search_text", json!({"pattern": "x", "path": "big.log"}));
    assert!(text.contains("more than search_text reads"), "{text}");
    // A big text file is read a window at a time, every line counted; a line split across the
    // reads is whole, its CR dropped.
    let mut log = String::with_capacity(24 << 20);
    let mut n = 0;
    while log.len() < 20 << 20 {
        n += 1;
        log.push_str(&format!("entry {n} {}\r\n", "z".repeat(n % 97)));
    }
    dir.write("huge.log", &log);
    let read = session.call("read_file", json!({"path": "huge.log", "offset": n - 1}));
    let structured = &read["structuredContent"];
    assert_eq!(structured["total_lines"], n, "{structured}");
    assert_eq!(
        structured["content"],
        format!(
            "{}\tentry {} {}\n{n}\tentry {n} {}\n",
            n - 1,
            n - 1,
            "z".repeat((n - 1) % 97),
            "z".repeat(n % 97)
        )
    );
    // Lines after the window are counted too, the last one whether or not a newline ends it.
    for (name, ending, lines) in [("counted.log", "", n), ("open.log", "tail", n + 1)] {
        dir.write(name, &format!("{log}{ending}"));
        let read = session.call("read_file", json!({"path": name, "limit": 2}));
        let structured = &read["structuredContent"];
        assert_eq!(structured["total_lines"], lines, "{structured}");
        assert_eq!(structured["next_offset"], 3, "{structured}");
        assert_eq!(structured["content"], "1\tentry 1 z\n2\tentry 2 zz\n");
    }
    let text = session.call_error("read_file", json!({"path": ""}));
    assert!(text.contains("path is empty"), "{text}");
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

#[test]
fn nested_ignore_files_do_not_use_up_the_walk() {
    // 2,101 sibling packages, each with its own .gitignore: each one's rules are given back
    // when the walk leaves it, so the last is applied like the first.
    let dir = TempDir::new();
    for n in 0..2101 {
        let rules: String = (0..9).map(|k| format!("other{k}.tmp\n")).collect();
        dir.write(&format!("pkg{n:04}/.gitignore"), &format!("{rules}.env\n"));
        dir.write(&format!("pkg{n:04}/.env"), "SECRET=1\n");
    }
    let mut session = initialized(dir.path());
    let found = session.call(
        "search_text",
        json!({"pattern": "SECRET", "max_results": 5000}),
    )["structuredContent"]["matches"]
        .clone();
    assert_eq!(found.as_array().unwrap().len(), 0, "{found}");
}

#[test]
fn a_pattern_longer_than_any_real_one_is_left_out() {
    let dir = TempDir::new();
    dir.write(
        ".gitignore",
        &format!("{}\nsecret.txt\n", "*".repeat(100_000)),
    );
    dir.write("secret.txt", "x\n");
    dir.write("kept.txt", "x\n");
    let mut session = initialized(dir.path());
    assert_eq!(listed(&mut session, json!({})), [".gitignore", "kept.txt"]);
}
