//! Real clients: the official Python and TypeScript SDKs drive the server as editors do, and
//! Claude Code and Codex start it as the README says to configure them.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::delegate::multiply_steps;
use crate::fake_server::FakeServer;
use crate::git_fixtures::commit_everything;
use crate::heal::CHAT;
use crate::util::{autocoder_bin, typescript_sdk, with_committed_project, TempDir};

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
    let Some(sdk) = typescript_sdk() else {
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
        "task stream: taskCreated, status working, status completed, result",
        "task result: later",
        "waited for: waited true",
        "failed task: failed",
        "cancelled task: cancelled cancelled true",
        "tasks listed: 4 completed completed failed cancelled",
        "unknown task refused: true",
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

/// Claude Code (its own binary, installed by install-test-tools.sh), configured both ways the
/// README gives, starts the server and connects (`claude mcp list` checks each server's health);
/// a server that cannot start is said to have failed, so the check is a real one.
#[test]
fn claude_code_connects_as_the_readme_configures_it() {
    let found = Command::new("claude")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        eprintln!("skipped: Claude Code is not installed (npm install --global @anthropic-ai/claude-code; .ci/run does)");
        return;
    }
    let dir = TempDir::new();
    let (home, project) = (dir.path().join("home"), dir.path().join("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("app.py"), "x = 1\n").unwrap();
    commit_everything(&project);
    let path = format!(
        "{}:{}",
        autocoder_bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let claude = |args: &[&str]| {
        let out = Command::new("claude")
            .args(args)
            .current_dir(&project)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", &home)
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "claude {args:?}: {said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        said
    };
    // The README's command, word for word, and a server that cannot start.
    claude(&[
        "mcp",
        "add",
        "--transport",
        "stdio",
        "autocoder",
        "--",
        "autocoder",
        "mcp",
        "--root",
        ".",
    ]);
    claude(&[
        "mcp",
        "add",
        "--transport",
        "stdio",
        "broken",
        "--",
        "autocoder",
        "mcp",
        "--root",
        "/nonexistent",
    ]);
    // The README's .mcp.json, approved as the trust dialog of a first `claude` run would.
    // (named apart from the first, the same entry otherwise).
    std::fs::write(
        project.join(".mcp.json"),
        r#"{"mcpServers": {"from-json": {"type": "stdio", "command": "autocoder", "args": ["mcp", "--root", "."]}}}"#,
    )
    .unwrap();
    let config = home.join(".claude.json");
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let projects = settings["projects"].as_object_mut().unwrap();
    let entry = projects.values_mut().next().expect("the project's entry");
    entry["hasTrustDialogAccepted"] = true.into();
    entry["enabledMcpjsonServers"] = serde_json::json!(["from-json"]);
    std::fs::write(&config, settings.to_string()).unwrap();

    let listed = claude(&["mcp", "list"]);
    let line = |name: &str| {
        listed
            .lines()
            .find(|line| line.starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("{name} not listed: {listed}"))
            .to_string()
    };
    assert!(line("autocoder").ends_with("Connected"), "{listed}");
    assert!(line("from-json").ends_with("Connected"), "{listed}");
    assert!(line("broken").contains("Failed"), "{listed}");
}

/// The README's Codex snippets (each a whole `[mcp_servers.autocoder]` table).
fn readme_codex_snippets() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    readme
        .split("```toml\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("```").map(|(block, _)| block.to_string()))
        .filter(|block| block.contains("[mcp_servers.autocoder]"))
        .collect()
}

/// A Codex app server (the JSON-RPC service its editor extensions drive) on its own home.
struct CodexAppServer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl CodexAppServer {
    fn start(codex_home: &Path, project: &Path, path: &str) -> CodexAppServer {
        let mut child = Command::new("codex")
            .arg("app-server")
            .current_dir(project)
            .env_clear()
            .env("PATH", path)
            .env("HOME", codex_home)
            .env("CODEX_HOME", codex_home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = CodexAppServer {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        server.request(
            "initialize",
            json!({"clientInfo": {"name": "autocoder-tests", "version": "0"}}),
        );
        server.send(&json!({"method": "initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The result of `method`, the notifications and requests Codex sends meanwhile passed over.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("Codex did not answer {method}"));
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }
}

impl Drop for CodexAppServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Codex (its own binary, installed by install-test-tools.sh) configured with each of the
/// README's snippets: its app server starts ours, lists our tools and calls them, with no model
/// of its own; the second snippet's variables name the model a delegated task is done with.
#[test]
fn codex_lists_and_calls_the_tools_as_the_readme_configures_it() {
    let found = Command::new("codex")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        eprintln!(
            "skipped: Codex is not installed (npm install --global @openai/codex; .ci/run does)"
        );
        return;
    }
    let snippets = readme_codex_snippets();
    assert_eq!(snippets.len(), 2, "{snippets:?}");
    let model = FakeServer::start(vec![(CHAT, multiply_steps())]);
    let test = with_committed_project("calculator-python");
    let project = test.path().canonicalize().unwrap();
    let homes = TempDir::new();
    let path = format!(
        "{}:{}",
        autocoder_bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (n, (snippet, timeout)) in snippets.iter().zip([600.0, 2400.0]).enumerate() {
        assert!(snippet.contains("\"/home/me/src/shop\""), "{snippet}");
        let config = snippet
            .replace("/home/me/src/shop", &project.display().to_string())
            .replace("http://127.0.0.1:8080/v1", &format!("{}/v1", model.url()));
        let home: PathBuf = homes.path().join(format!("codex-{n}"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.toml"), config).unwrap();

        let listed = Command::new("codex")
            .args(["mcp", "list", "--json"])
            .env("CODEX_HOME", &home)
            .output()
            .unwrap();
        assert!(listed.status.success(), "{listed:?}");
        let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
        assert_eq!(listed[0]["name"], "autocoder", "{listed}");
        assert_eq!(listed[0]["enabled"], true, "{listed}");
        assert_eq!(listed[0]["tool_timeout_sec"], timeout, "{listed}");

        let mut codex = CodexAppServer::start(&home, &project, &path);
        let status = codex.request("mcpServerStatus/list", json!({}));
        let server = &status["data"][0];
        assert_eq!(server["name"], "autocoder", "{status}");
        let mut tools: Vec<&str> = server["tools"]
            .as_object()
            .unwrap_or_else(|| panic!("no tools: {status}"))
            .keys()
            .map(String::as_str)
            .collect();
        tools.sort_unstable();
        assert_eq!(
            tools,
            [
                "delegate_task",
                "delegate_to_local_coder",
                "edit_file",
                "git_diff",
                "git_status",
                "list_files",
                "read_file",
                "run_command",
                "run_tests",
                "search_text",
                "write_file"
            ]
        );
        let thread = codex.request("thread/start", json!({"cwd": project}));
        let call = |codex: &mut CodexAppServer, tool: &str, arguments: Value| {
            codex.request(
                "mcpServer/tool/call",
                json!({
                    "server": "autocoder",
                    "threadId": thread["thread"]["id"],
                    "tool": tool,
                    "arguments": arguments,
                }),
            )
        };
        if n == 0 {
            let result = call(&mut codex, "list_files", json!({}));
            assert_eq!(result["isError"], false, "{result}");
            let entries = result["structuredContent"]["entries"].to_string();
            assert!(entries.contains("\"calculator.py\""), "{result}");
        } else {
            let result = call(
                &mut codex,
                "delegate_task",
                json!({"task": "add multiply(a, b) to calculator.py, with a test"}),
            );
            assert_eq!(result["isError"], false, "{result}");
            assert_eq!(result["structuredContent"]["status"], "green", "{result}");
            let asked: Value = serde_json::from_str(&model.requests()[0].body).unwrap();
            assert_eq!(asked["model"], "qwen3-coder");
        }
    }
    assert!(std::fs::read_to_string(project.join("calculator.py"))
        .unwrap()
        .contains("def multiply"));
}
