//! Confinement: where the roots come from, what may not be one, and that no path, link or
//! swapped directory leads outside them.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::mcp_session::{initialized, Session};
use crate::util::{autocoder_bin, TempDir};

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
fn a_directory_swapped_for_a_link_during_a_walk_shows_nothing_outside() {
    // A host directory the root must not reveal, and a sandboxed command (here a thread) that
    // keeps exchanging `sub` with a link to it while the tools walk `sub`.
    let host = TempDir::new();
    host.write("HOST-ONLY-NAME.txt", "needle on the host\n");
    let dir = TempDir::new();
    dir.write("sub/inside.txt", "needle inside\n");
    std::os::unix::fs::symlink(host.path(), dir.path().join("link")).unwrap();
    let swapper =
        crate::util::PathSwapper::start(&dir.path().join("sub"), &dir.path().join("link"));
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
    drop(swapper);
    assert!(
        leaked.is_empty(),
        "{} answers showed the host: {}",
        leaked.len(),
        leaked[0]
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
