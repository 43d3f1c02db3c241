//! Real clients: the official Python and TypeScript SDKs drive the server as editors do.

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
