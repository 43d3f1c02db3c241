//! git_status and git_diff: what git shows, read by the git reader in the sandbox, which nothing
//! the repository holds can steer outside it.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::git_fixtures::{commit_everything, conflict, repository};
use crate::mcp_session::{initialized, Session};
use crate::util::{autocoder_bin, git, mkfifo, TempDir};

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
    // Where the filter says it ran: not `.git`, read-only to the sandbox, and ignored.
    dir.write(".gitignore", "tried\n");
    commit_everything(dir.path());
    let forged = r#"{"id":"","ok":{"branch":"FORGED","clean":true,"files":[]}}"#;
    git(
        dir.path(),
        &[
            "config",
            "filter.forge.clean",
            &format!("[ -e tried ] || {{ touch tried; echo '{forged}' > /proc/$PPID/fd/1; }}; cat"),
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
    assert!(dir.path().join("tried").exists(), "the filter never ran");
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
