//! Real clients: the official Python and TypeScript SDKs drive the server as editors do, and
//! Claude Code starts it as the README says to configure it.

use std::path::Path;
use std::process::Command;

use crate::git_fixtures::commit_everything;
use crate::util::{autocoder_bin, typescript_sdk, TempDir};

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
