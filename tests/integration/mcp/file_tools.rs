//! The file tools (list_files, read_file, search_text, edit_file, write_file): what they read
//! and write, line endings, owners and permissions, and staying bounded on odd trees and files.

use std::process::Command;

use serde_json::{json, Value};

use crate::mcp_session::{initialized, Session};
use crate::util::{autocoder_bin, git, mkfifo, TempDir};

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

/// The paths list_files gives for `arguments`.
fn listed(session: &mut Session, arguments: Value) -> Vec<String> {
    session.call("list_files", arguments)["structuredContent"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_string())
        .collect()
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

/// What git on the host obeys is never a file tool's to write: `.git` in any form and case, the
/// hooks directory and the config files the repository's config names.
#[test]
fn file_tools_write_nothing_git_obeys() {
    let dir = TempDir::new();
    dir.write("a.py", "x = 1\n");
    dir.write(".githooks/pre-commit", "#!/bin/sh\n");
    dir.write("shared.gitconfig", "[core]\n\tautocrlf = false\n");
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["config", "core.hooksPath", ".githooks"]);
    git(
        dir.path(),
        &["config", "include.path", "../shared.gitconfig"],
    );
    let config = std::fs::read_to_string(dir.path().join(".git/config")).unwrap();
    let mut session = initialized(dir.path());
    for path in [
        ".git/config",
        "sub/.GIT/config",
        ".githooks/pre-commit",
        "shared.gitconfig",
    ] {
        let written = session.call(
            "write_file",
            json!({"path": path, "content": "[core]\n\tfsmonitor = \"id > /tmp/x\"\n"}),
        );
        assert_eq!(written["isError"], true, "{path}: {written}");
        assert!(
            written.to_string().contains("git obeys it"),
            "{path}: {written}"
        );
    }
    let edited = session.call(
        "edit_file",
        json!({"path": "shared.gitconfig", "old_string": "false", "new_string": "true"}),
    );
    assert_eq!(edited["isError"], true, "{edited}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".git/config")).unwrap(),
        config
    );
    assert!(!dir.path().join("sub").exists());
    // A file beside them is written.
    let written = session.call("write_file", json!({"path": "a.py", "content": "x = 2\n"}));
    assert_ne!(written["isError"], true, "{written}");
}

/// The MCP client is a model's agent: no result holds a secret, the workspace's credential
/// files' values or a token by its shape, and a file written back from a result that withheld
/// one keeps it.
#[test]
fn no_result_holds_a_secret_and_none_is_overwritten_with_its_stand_in() {
    let dir = TempDir::new();
    let token = ["ghp_", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9aB3dE5gH7j"].concat();
    dir.write(".env", "DB_PASSWORD=Zq8WnR4tYb6uPd2s\n");
    dir.write(
        "settings.py",
        &format!("DEPLOY = \"{token}\"\nDEBUG = False\n"),
    );
    let mut session = initialized(dir.path());
    let read = session
        .call("read_file", json!({"path": ".env"}))
        .to_string();
    assert!(!read.contains("Zq8WnR4tYb6uPd2s"), "{read}");
    assert!(read.contains("[withheld]"), "{read}");
    let found = session
        .call("search_text", json!({"pattern": "DEPLOY"}))
        .to_string();
    assert!(!found.contains(&token), "{found}");
    let listed = session
        .call("run_command", json!({"command": "cat settings.py .env"}))
        .to_string();
    assert!(
        !listed.contains(&token) && !listed.contains("Zq8WnR4tYb6uPd2s"),
        "{listed}"
    );
    // The file as the agent saw it, written back with a change: refused, the secret kept.
    let written = session.call(
        "write_file",
        json!({"path": "settings.py", "content": "DEPLOY = \"[withheld]\"\nDEBUG = True\n"}),
    );
    assert_eq!(written["isError"], true, "{written}");
    assert!(std::fs::read_to_string(dir.path().join("settings.py"))
        .unwrap()
        .contains(&token));
}
