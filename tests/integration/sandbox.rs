//! `autocoder sandbox`: results, exit statuses, bad input, environment and toolchains.

use std::os::fd::FromRawFd;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::{autocoder_as, autocoder_bin, is_root, Test};

#[test]
fn runs_in_the_workspace_and_reports_the_result() {
    let test = Test::new();
    test.dir().write("input.txt", "hello\n");
    let run = test
        .sandbox_sh(
            &[],
            "cat input.txt; echo out >&2; pwd; echo made > output.txt",
        )
        .run()
        .expect_status(0);
    let result = run.sandbox();
    assert_eq!(result.backend, "native");
    assert_eq!(
        result.command,
        [
            "sh",
            "-c",
            "cat input.txt; echo out >&2; pwd; echo made > output.txt"
        ]
    );
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(result.signal, None);
    assert!(!result.timed_out);
    assert_eq!(result.limit_hit, None);
    assert!(result.out().starts_with("hello\n"), "{}", result.out());
    assert_eq!(result.err(), "out\n");
    assert!(!result.stdout_truncated && !result.stderr_truncated);
    let layers = &result.layers;
    assert_eq!(layers["filesystem"]["mechanism"], "landlock");
    assert_eq!(layers["network"]["allowed"], false);
    assert_eq!(layers["identity"]["capabilities"], "none");
    assert_eq!(layers["identity"]["root"], false);
    assert_eq!(layers["containment"]["pid_namespace"], true);
    assert_eq!(layers["containment"]["network_namespace"], true);
    assert_eq!(layers["network"]["mechanisms"][0], "network-namespace");
    let counted = if crate::util::is_root() {
        "cgroup"
    } else {
        "rlimit (private memory only)"
    };
    assert_eq!(layers["resources"]["memory_mechanism"], counted);
    assert_eq!(layers["degraded"], serde_json::json!([]));
    // The workspace was given as the current directory, which the test made.
    assert!(run.stdout().contains("autocoder-test-"));
}

#[test]
fn files_made_inside_belong_to_the_workspace_owner() {
    let dir = crate::util::TempDir::new();
    let run = Test::new()
        .args(["sandbox", "--workspace"])
        .args([dir.path()])
        .args(["--", "sh", "-c", "echo data > made.txt && id -u"])
        .run()
        .expect_status(0);
    let made =
        std::fs::metadata(dir.path().join("made.txt")).expect("file written inside exists outside");
    let owner = std::fs::metadata(dir.path()).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(made.uid(), owner.uid());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("made.txt")).unwrap(),
        "data\n"
    );
    if is_root() {
        assert_ne!(
            run.sandbox().out().trim(),
            "0",
            "root's command must not run as uid 0"
        );
    }
}

#[test]
fn exit_status_follows_timeout() {
    let run = Test::new().sandbox_sh(&[], "exit 3").run().expect_status(3);
    assert_eq!(run.sandbox().exit_code, Some(3));

    let run = Test::new()
        .sandbox_sh(&[], "kill -SEGV $$")
        .run()
        .expect_status(128 + 11);
    let result = run.sandbox();
    assert_eq!((result.exit_code, result.signal), (None, Some(11)));

    let run = Test::new()
        .sandbox_sh(&["--timeout", "300ms"], "sleep 30")
        .run()
        .expect_status(124);
    let result = run.sandbox();
    assert!(result.timed_out);
    assert_eq!(result.limit_hit.as_deref(), Some("time"));
}

#[test]
fn missing_command_is_127_and_not_executable_is_126() {
    let run = Test::new()
        .args(["sandbox", "--", "no-such-command-xyz"])
        .run()
        .expect_status(127);
    assert!(run.stdout().is_empty());
    assert!(
        run.stderr()
            .contains("no-such-command-xyz: command not found"),
        "{}",
        run.stderr()
    );

    let test = Test::new();
    test.dir().write("script.sh", "#!/bin/sh\necho hi\n");
    let run = test
        .args(["sandbox", "--", "./script.sh"])
        .run()
        .expect_status(126);
    assert!(run.stderr().contains("not executable"), "{}", run.stderr());
    assert!(run.stderr().contains("hint: chmod +x"), "{}", run.stderr());
}

#[test]
fn bad_input_is_a_clear_error_with_status_125() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["sandbox", "--frobnicate", "--", "true"],
            "unexpected argument '--frobnicate'",
        ),
        (&["sandbox", "true"], "unexpected argument 'true'"),
        (
            &["sandbox", "--memory", "1G", "ls", "-la"],
            "hint: the command goes after `--`: autocoder sandbox [OPTIONS] -- ls ...",
        ),
        (&["sandbox"], "required arguments were not provided"),
        (
            &["sandbox", "--workspace", "/no/such/dir", "--", "true"],
            "--workspace /no/such/dir",
        ),
        (
            &["sandbox", "--memory", "lots", "--", "true"],
            "`lots` is not a size",
        ),
        (
            &["sandbox", "--timeout", "10 parsecs", "--", "true"],
            "is not a duration",
        ),
        (
            &["sandbox", "--cpus", "0", "--", "true"],
            "is not a CPU count",
        ),
        (&["sandbox", "--pids", "1", "--", "true"], "1 is not in 2.."),
        (
            &["sandbox", "--image", "busybox", "--", "true"],
            "--image is only used with --backend docker",
        ),
        (
            &["sandbox", "--backend", "docker", "--", "true"],
            "--backend docker needs --image",
        ),
        (&["sandbox", "--env", "=x", "--", "true"], "--env =x"),
        (
            &["sandbox", "--env", "BAD KEY=1", "--", "true"],
            "--env BAD KEY=1",
        ),
        (
            &["sandbox", "--workspace", "/", "--", "true"],
            "the workspace cannot be /",
        ),
    ];
    for (args, message) in cases {
        let run = Test::new().args(args.iter().copied()).run();
        assert_eq!(run.status(), 125, "{args:?}: {}", run.stderr());
        assert!(run.stdout().is_empty(), "{args:?}");
        assert!(
            run.stderr().contains(message),
            "{args:?}: expected {message:?} in\n{}",
            run.stderr()
        );
    }
}

#[test]
fn environment_is_cleared_but_for_the_allow_list_and_env_flags() {
    let run = Test::new()
        .env("GITHUB_TOKEN", "ghp_secretvalue")
        .env("OPENAI_API_KEY", "sk-secret")
        .env("SOME_SETTING", "plain")
        .env("LC_GITHUB_TOKEN", "ghp_inlocale")
        .env("PASS_ME", "passed")
        .sandbox_sh(
            &[
                "--env",
                "PASS_ME",
                "--env",
                "SET_ME=set",
                "--env",
                "OPENAI_API_KEY",
            ],
            "env | sort",
        )
        .run()
        .expect_status(0);
    let result = run.sandbox();
    let env = result.out();
    assert!(
        !env.contains("ghp_secretvalue") && !env.contains("GITHUB_TOKEN"),
        "{env}"
    );
    assert!(!env.contains("SOME_SETTING"), "{env}");
    assert!(
        !env.contains("ghp_inlocale"),
        "a credential passed as a locale variable: {env}"
    );
    assert!(env.contains("PASS_ME=passed\n"), "{env}");
    assert!(env.contains("SET_ME=set\n"), "{env}");
    assert!(
        env.contains("OPENAI_API_KEY=sk-secret\n"),
        "named explicitly, so passed: {env}"
    );
    assert!(
        env.contains("HOME=/tmp/home\n") && env.contains("TMPDIR=/tmp\n"),
        "{env}"
    );
    assert!(env.contains("PATH="), "{env}");
    // The result names what was withheld, never the value.
    assert_eq!(
        result.layers["environment"]["withheld"],
        serde_json::json!(["GITHUB_TOKEN", "LC_GITHUB_TOKEN"])
    );
    assert!(!run.stdout().contains("ghp_secretvalue") && !run.stderr().contains("ghp_secretvalue"));
}

#[test]
fn common_toolchains_work_with_default_flags() {
    let test = Test::new();
    test.dir()
        .write("hello.rs", "fn main() { println!(\"rust ok\"); }\n");
    test.dir().write("Makefile", "all:\n\t@echo make ok\n");
    test.dir()
        .write("test_x.py", "def test_one():\n    assert 1 + 1 == 2\n");
    let script = r#"set -e
python3 -c 'print("python ok")'
node -e 'console.log("node ok")'
rustc --edition 2021 hello.rs -o hello && ./hello
cargo --version >/dev/null && echo cargo ok
java -version 2>&1 | head -1 | grep -q version && echo java ok
git init -q repo && git -C repo -c user.name=t -c user.email=t@e commit -q --allow-empty -m init && echo git ok
make
if python3 -c 'import pytest' 2>/dev/null; then python3 -m pytest -q -p no:cacheprovider test_x.py | tail -1; fi
"#;
    let run = test
        .sandbox_sh(
            &["--timeout", "5m", "--memory", "2G", "--pids", "400"],
            script,
        )
        .run();
    let result = run.sandbox();
    assert_eq!(
        result.exit_code,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        result.out(),
        result.err()
    );
    for tool in [
        "python ok",
        "node ok",
        "rust ok",
        "cargo ok",
        "java ok",
        "git ok",
        "make ok",
    ] {
        assert!(
            result.out().contains(tool),
            "{tool} missing:\n{}\n{}",
            result.out(),
            result.err()
        );
    }
    if result.out().contains("passed") {
        assert!(result.out().contains("1 passed"), "{}", result.out());
    }
}

#[test]
fn stream_mode_passes_output_through_and_reports_on_stderr() {
    let run = Test::new()
        .sandbox_sh(&["--stream"], "echo live; echo err >&2; exit 4")
        .run()
        .expect_status(4);
    assert_eq!(run.stdout(), "live\n");
    let stderr = run.stderr();
    let (command_err, result_line) = stderr.split_once('\n').unwrap();
    assert_eq!(command_err, "err");
    let result: serde_json::Value = serde_json::from_str(result_line.trim()).unwrap();
    assert_eq!(result["sandbox"]["exit_code"], 4);
    assert_eq!(result["sandbox"]["stdout"], serde_json::Value::Null);
}

#[test]
fn streamed_output_goes_through_pipes_and_the_result_keeps_its_own_line() {
    // The command gets pipes, not our descriptors: it cannot truncate the file our output is
    // appended to (nor read or reconfigure a terminal there).
    let test = Test::new();
    let log = test.path().join("log.txt");
    std::fs::write(&log, "earlier\n").unwrap();
    let script =
        "readlink /proc/self/fd/1; python3 -c 'import os; os.ftruncate(1, 0)' 2>/dev/null; \
                  echo after; printf 'junk without a newline' >&2";
    let status = Command::new(autocoder_bin())
        .args(["sandbox", "--stream", "--", "sh", "-c", script])
        .current_dir(test.path())
        .stdout(std::fs::OpenOptions::new().append(true).open(&log).unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.starts_with("earlier\npipe:["), "{logged}");
    assert!(logged.ends_with("]\nafter\n"), "{logged}");
    let stderr = String::from_utf8(status.stderr).unwrap();
    let (said, result_line) = stderr.trim_end().rsplit_once('\n').unwrap();
    assert_eq!(said, "junk without a newline");
    let result: serde_json::Value = serde_json::from_str(result_line).unwrap();
    assert_eq!(result["sandbox"]["exit_code"], 0);
}

#[test]
fn streamed_output_to_one_file_keeps_its_order_and_a_gone_reader_stops_the_command() {
    // stdout and stderr to one place (2>&1, a terminal): the lines keep their order, and the
    // result, after output that did not end its line, still starts a line of its own.
    let test = Test::new();
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} sandbox --stream -- sh -c 'echo out1; echo err1 >&2; echo out2; printf abc >&2' 2>&1",
            autocoder_bin().display()
        ))
        .current_dir(test.path())
        .output()
        .unwrap();
    let all = String::from_utf8(output.stdout).unwrap();
    let (said, result_line) = all.trim_end().rsplit_once('\n').unwrap();
    assert_eq!(said, "out1\nerr1\nout2\nabc");
    let result: serde_json::Value = serde_json::from_str(result_line).unwrap();
    assert_eq!(result["sandbox"]["exit_code"], 0);

    // A reader that goes away: the command gets SIGPIPE at once, as without the sandbox.
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} sandbox --stream --timeout 20s --result result.json -- yes | head -1",
            autocoder_bin().display()
        ))
        .current_dir(test.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "y\n");
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(test.path().join("result.json")).unwrap()).unwrap();
    assert_eq!(
        (
            result["sandbox"]["signal"].as_i64(),
            result["sandbox"]["timed_out"].as_bool()
        ),
        (Some(i64::from(libc::SIGPIPE)), Some(false)),
        "{result}"
    );
}

#[test]
fn a_terminal_nobody_reads_does_not_stop_the_clock_and_the_result_knows_its_stream() {
    // A pseudo-terminal whose other side is never read (Ctrl-S, a stalled ssh session).
    // SAFETY: plain libc calls on the descriptors they return.
    let (master, slave) = unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0 && libc::grantpt(master) == 0 && libc::unlockpt(master) == 0);
        let name = std::ffi::CStr::from_ptr(libc::ptsname(master)).to_owned();
        let slave = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        assert!(slave >= 0);
        (master, std::fs::File::from_raw_fd(slave))
    };
    let test = Test::new();
    // As root the terminal can be opened again, non-blocking; as another user it cannot (it is
    // root's, mode 620), and the inherited descriptor is used.
    let users: &[Option<u32>] = if is_root() {
        &[None, Some(65534)]
    } else {
        &[None]
    };
    let workspace = test.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(test.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&workspace, std::fs::Permissions::from_mode(0o777)).unwrap();
    for &user in users {
        let mut command = autocoder_as(user, test.path());
        let mut child = command
            .args(["sandbox", "--stream", "--timeout", "2s", "--workspace"])
            .arg(&workspace)
            .args(["--", "yes"])
            .stdout(slave.try_clone().unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("user {user:?}: the sandbox hung on a terminal nobody reads");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert_eq!(status.code(), Some(124), "user {user:?}");
    }
    // SAFETY: closing our own descriptor.
    unsafe { libc::close(master) };

    // Stderr's last line unfinished, stdout's finished later: the result still starts its own.
    let output = Command::new(autocoder_bin())
        .args([
            "sandbox",
            "--stream",
            "--",
            "sh",
            "-c",
            "printf abc >&2; sleep 0.3; echo x",
        ])
        .current_dir(test.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("abc\n{\"sandbox\""), "{stderr}");
}

#[test]
fn result_file_takes_the_document() {
    let test = Test::new();
    let result_path = test.path().join("result.json");
    let run = test
        .args(["sandbox", "--result"])
        .args([&result_path])
        .args(["--", "sh", "-c", "echo hi"])
        .run()
        .expect_status(0);
    assert!(run.stdout().is_empty());
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&result_path).unwrap()).unwrap();
    assert_eq!(written["sandbox"]["stdout"], "hi\n");
}

#[test]
fn a_result_file_is_checked_first_and_cannot_be_redirected_by_the_command() {
    // A path that cannot be written: refused before the command runs.
    let test = Test::new();
    let run = test
        .args([
            "sandbox",
            "--result",
            "no/such/dir/r.json",
            "--",
            "touch",
            "ran",
        ])
        .run()
        .expect_status(125);
    assert!(
        run.stderr().contains("cannot write --result"),
        "{}",
        run.stderr()
    );
    assert!(!run.dir.path().join("ran").exists());

    // The command writes into the file and then swaps it for a link to a file outside.
    let test = Test::new();
    let outside = test
        .path()
        .parent()
        .unwrap()
        .join(format!("autocoder-result-outside-{}", std::process::id()));
    std::fs::write(&outside, "untouched\n").unwrap();
    let script = format!(
        "head -c 5000 /dev/zero > result.json; ln -sf {} result.json",
        outside.display()
    );
    let run = test
        .sandbox_sh(&["--result", "result.json"], &script)
        .run()
        .expect_status(0);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "untouched\n");
    let _ = std::fs::remove_file(&outside);
    assert!(
        run.stderr().contains("was replaced while the command ran"),
        "{}",
        run.stderr()
    );
    let printed: serde_json::Value = serde_json::from_str(run.stdout().trim()).unwrap();
    assert_eq!(printed["sandbox"]["exit_code"], 0);

    // A link already at the path (a previous run's) is not followed, not even to truncate.
    let test = Test::new();
    let victim = test
        .path()
        .parent()
        .unwrap()
        .join(format!("autocoder-result-victim-{}", std::process::id()));
    std::fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, test.path().join("result.json")).unwrap();
    let run = test
        .args(["sandbox", "--result", "result.json", "--", "true"])
        .run()
        .expect_status(125);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let _ = std::fs::remove_file(&victim);
    assert!(
        run.stderr().contains("a link where the sandbox can write"),
        "{}",
        run.stderr()
    );
    // Nor a link outside that leads to one inside.
    let test = Test::new();
    let outer = test
        .path()
        .parent()
        .unwrap()
        .join(format!("autocoder-result-outer-{}", std::process::id()));
    std::fs::create_dir_all(&outer).unwrap();
    std::os::unix::fs::symlink(test.path().join("r.json"), outer.join("out.json")).unwrap();
    std::os::unix::fs::symlink(&victim, test.path().join("r.json")).unwrap();
    let run = test
        .args(["sandbox", "--result"])
        .args([outer.join("out.json")])
        .args(["--", "true"])
        .run()
        .expect_status(125);
    assert!(!victim.exists(), "root created the link's target");
    let _ = std::fs::remove_dir_all(&outer);
    assert!(
        run.stderr().contains("a link where the sandbox can write"),
        "{}",
        run.stderr()
    );
    // A FIFO a previous run left there is refused, not waited on.
    let test = Test::new();
    crate::util::mkfifo(&test.path().join("f.json"));
    let run = test
        .args(["sandbox", "--result", "f.json", "--", "true"])
        .run()
        .expect_status(125);
    assert!(
        run.stderr().contains("not a regular file"),
        "{}",
        run.stderr()
    );
    // Links elsewhere are followed, and devices are written as they are, without a warning.
    for device in ["/dev/null", "/dev/stderr"] {
        let run = Test::new()
            .args(["sandbox", "--result", device, "--", "true"])
            .run()
            .expect_status(0);
        assert_eq!(run.stdout(), "");
        assert!(!run.stderr().contains("replaced"), "{}", run.stderr());
    }

    // Junk written into the file is replaced by the result alone.
    let test = Test::new();
    let run = test
        .sandbox_sh(
            &["--result", "result.json"],
            "head -c 5000 /dev/zero > result.json",
        )
        .run()
        .expect_status(0);
    let written = std::fs::read(run.dir.path().join("result.json")).unwrap();
    let parsed: serde_json::Value = serde_json::from_slice(&written).unwrap();
    assert_eq!(parsed["sandbox"]["exit_code"], 0);
}

#[test]
fn stdin_is_passed_to_the_command() {
    let run = Test::new()
        .stdin("piped text\n")
        .args(["sandbox", "--", "cat"])
        .run()
        .expect_status(0);
    assert_eq!(run.sandbox().out(), "piped text\n");
}

#[test]
fn global_flags_pretty_directory_and_quiet() {
    let run = Test::new()
        .args(["--pretty", "sandbox", "--", "true"])
        .run()
        .expect_status(0);
    assert!(
        run.stdout().starts_with("{\n  \"sandbox\": {\n"),
        "{}",
        run.stdout()
    );

    let test = Test::new();
    std::fs::create_dir(test.path().join("sub")).unwrap();
    let run = test
        .args(["-C", "sub", "sandbox", "--", "pwd"])
        .run()
        .expect_status(0);
    assert!(
        run.sandbox().out().ends_with("/sub\n"),
        "{}",
        run.sandbox().out()
    );

    let run = Test::new()
        .args(["sandbox", "--env", "AUTOCODER_UNSET_VAR", "--", "true"])
        .run()
        .expect_status(0);
    assert!(
        run.stderr()
            .contains("warning: --env AUTOCODER_UNSET_VAR: not set"),
        "{}",
        run.stderr()
    );
    let run = Test::new()
        .args([
            "-q",
            "sandbox",
            "--env",
            "AUTOCODER_UNSET_VAR",
            "--",
            "true",
        ])
        .run()
        .expect_status(0);
    assert_eq!(run.stderr(), "");
}

/// Issue 20, item 14: pip meets the read-only interpreter prefix; the user is told where
/// the package went and how to install it so that it stays, and that way works.
#[test]
fn an_install_into_the_read_only_toolchain_says_how_to_install_into_the_workspace() {
    // A wheel made on the spot, so that pip needs no index.
    let make_wheel = r#"
import zipfile
files = {
    "tinypkg/__init__.py": "X = 1\n",
    "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
with zipfile.ZipFile("tinypkg-1.0-py3-none-any.whl", "w") as wheel:
    for name, text in files.items():
        wheel.writestr(name, text)
    wheel.writestr("tinypkg-1.0.dist-info/RECORD", "".join(f"{n},,\n" for n in files))
"#;
    let test = Test::new();
    test.dir().write("make_wheel.py", make_wheel);
    let script = "python3 make_wheel.py
python3 -m pip install -q --no-index --disable-pip-version-check tinypkg-1.0-py3-none-any.whl
python3 -m venv .venv && .venv/bin/pip install -q --no-index --disable-pip-version-check \
tinypkg-1.0-py3-none-any.whl && .venv/bin/python -c 'import tinypkg; print(\"venv ok\")'";
    let run = test.sandbox_sh(&["--timeout", "2m"], script).run();
    let result = run.sandbox();
    assert!(
        result.out().contains("venv ok"),
        "the advised way must work:\n{}\n{}",
        result.out(),
        result.err()
    );
    let advice = run.stderr();
    assert!(
        advice.contains("the interpreter's prefix is read-only in the sandbox")
            && advice.contains("python3 -m venv .venv"),
        "{advice}"
    );
}

#[test]
fn works_as_an_ordinary_user() {
    if !is_root() {
        eprintln!("skipped: needs root to switch to an ordinary user with setpriv");
        return;
    }
    let run = Test::new()
        .run_as_user(1500)
        .sandbox_sh(&[], "id -u; echo data > mine.txt; cat mine.txt; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status")
        .run()
        .expect_status(0);
    let result = run.sandbox();
    assert_eq!(
        result.out(),
        "1500\ndata\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\n",
        "{}",
        result.err()
    );
    assert_eq!(result.layers["identity"]["user_namespace"], true);
    assert_eq!(result.layers["resources"]["mechanism"], "rlimit");
    // What rlimits cannot count is said, not left for the user to find out.
    assert_eq!(
        result.layers["resources"]["memory_mechanism"],
        "rlimit (private memory only)"
    );
}

#[test]
fn the_command_can_name_its_user_whether_started_as_root_or_as_an_ordinary_user() {
    // Tests that ask who runs them (getpass, `~`, pwd) fail where the uid has no account.
    let script = "import getpass, os, pwd\n\
                  account = pwd.getpwuid(os.getuid())\n\
                  print(getpass.getuser(), account.pw_dir, os.path.expanduser('~'))\n";
    let mut users = vec![None];
    if is_root() {
        users.push(Some(1500));
    }
    for user in users {
        let mut test = Test::new().args(["sandbox", "--", "python3", "-c", script]);
        if let Some(uid) = user {
            test = test.run_as_user(uid);
        }
        let run = test.run().expect_status(0);
        let result = run.sandbox();
        assert_eq!(
            result.out(),
            "autocoder /tmp/home /tmp/home\n",
            "{user:?}: {}",
            result.err()
        );
    }
    // The host's accounts are all still there, and nothing else is left in the view's root.
    let run = Test::new()
        .sandbox_sh(&[], "grep -c '^root:' /etc/passwd; ls -A /")
        .run()
        .expect_status(0);
    let result = run.sandbox();
    let out = result.out();
    assert!(out.starts_with("1\n"), "{out}");
    assert!(!out.contains(".etc-"), "{out}");
}

#[test]
fn workspaces_that_would_hand_over_too_much_are_refused() {
    // A link an earlier run left where the next workspace is looked for (`packages/web` made a
    // link to /root) is not followed.
    let test = Test::new();
    std::os::unix::fs::symlink("/etc", test.path().join("web")).unwrap();
    let run = test
        .args(["sandbox", "--workspace", "web", "--", "touch", "planted"])
        .run()
        .expect_status(125);
    assert!(
        run.stderr().contains("goes through") && run.stderr().contains("a symbolic link"),
        "{}",
        run.stderr()
    );
    assert!(!Path::new("/etc/planted").exists());
    let run = Test::new()
        .args(["run-tests", "--framework", "make", "--workspace"])
        .arg(run.dir.path().join("web"))
        .run()
        .expect_status(2);
    assert!(run.stderr().contains("a symbolic link"), "{}", run.stderr());
    // The machine's own directories and the home directory (or one holding it).
    let home = crate::util::TempDir::new();
    for workspace in [
        Path::new("/etc"),
        Path::new("/etc/ssh"),
        Path::new("/usr"),
        Path::new("/usr/lib"),
        home.path(),
        Path::new("/tmp"),
        Path::new("/var/tmp"),
    ] {
        let run = Test::new()
            .env("HOME", home.path())
            .args(["sandbox", "--workspace"])
            .arg(workspace)
            .args(["--", "true"])
            .run()
            .expect_status(125);
        assert!(
            run.stderr().contains("the workspace cannot be")
                || run.stderr().contains("the sandbox provides its own /tmp"),
            "{}: {}",
            workspace.display(),
            run.stderr()
        );
    }
    // The same for --rw paths (as root they would be written through the id mapping).
    for path in ["/etc", "/opt", "/usr/lib", "/etc/hosts"] {
        let run = Test::new()
            .env("HOME", home.path())
            .args(["sandbox", "--rw", path, "--", "sh", "-c"])
            .arg(format!("touch {path}/planted-by-a-test"))
            .run()
            .expect_status(125);
        assert!(
            run.stderr()
                .contains("the command could write everything in it"),
            "{path}: {}",
            run.stderr()
        );
    }
    assert!(!Path::new("/opt/planted-by-a-test").exists());
}

#[test]
fn mounts_made_for_the_view_never_reach_the_callers_namespace() {
    if !is_root() {
        eprintln!("skipped: needs root to make a shared mount (unshare -m)");
        return;
    }
    // The view's mounts are copies of the caller's; a copy of a shared mount is its peer unless
    // made private, and the workspace mounted inside it would then appear in the caller's
    // namespace too, and stay after the run.
    let dir = crate::util::TempDir::new();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let script = format!(
        "mount -t tmpfs tmpfs {shared} && mount --make-shared {shared} && mkdir {shared}/ws && \
         {bin} sandbox --ro {shared} --workspace {shared}/ws -- touch made-inside >/dev/null && \
         ls {shared}/ws && grep -c ' {shared}/ws ' /proc/self/mountinfo",
        shared = shared.display(),
        bin = autocoder_bin().display(),
    );
    let run = crate::util::sh_in_private_mounts(dir.path(), &script);
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "made-inside\n0\n",
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn a_view_that_cannot_be_built_is_never_half_used() {
    if !is_root() {
        eprintln!("skipped: needs root to set up the failing mounts (unshare -m)");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    // Two ways a view fails to build: as root, a workspace on a filesystem without id-mapped
    // mounts (ramfs); as an ordinary user, a /proc with a directory masked (as in containers),
    // which no user namespace may mount again.
    // Root's command runs as a sandbox uid all the same (one of its own, which the workspace
    // is opened to here); an ordinary user's as that user.
    for (uid, prepare, opened_to) in [
        (0, "mount -t ramfs ramfs ws && chmod 777 ws", "anyone"),
        (
            1500,
            "mount -t tmpfs -o ro tmpfs /proc/acpi && chown 1500:1500 ws",
            "1500",
        ),
    ] {
        let dir = crate::util::TempDir::new();
        let secret = dir.write("secret/key.txt", "s3cret\n");
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        let bin = dir.path().join("autocoder");
        std::fs::copy(crate::util::autocoder_bin(), &bin).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        crate::util::chown_tree(&dir.path().join("ws"), uid);
        crate::util::chown_tree(&dir.path().join("secret"), uid);
        let run = |flags: &str| {
            let script = format!(
                "{prepare} && cd ws && exec setpriv --reuid={uid} --regid={uid} --clear-groups {bin} sandbox {flags} -- \
                 sh -c 'cat {secret} ; head -1 /etc/shadow ; echo x > {escape} ; id -u > inside && cat inside'",
                bin = bin.display(),
                secret = secret.display(),
                escape = dir.path().join("escape").display(),
            );
            crate::util::sh_in_private_mounts(dir.path(), &script)
        };
        let refused = run("");
        assert_eq!(
            refused.status.code(),
            Some(125),
            "uid {uid}: {}",
            String::from_utf8_lossy(&refused.stderr)
        );
        assert!(String::from_utf8_lossy(&refused.stderr).contains("--allow-degraded"));
        // Allowed: run again without namespaces, the host in view but Landlock holding it.
        let degraded = run("--allow-degraded");
        let stderr = String::from_utf8_lossy(&degraded.stderr);
        assert_eq!(degraded.status.code(), Some(0), "uid {uid}: {stderr}");
        let result: serde_json::Value = serde_json::from_slice(&degraded.stdout).unwrap();
        let result = &result["sandbox"];
        let runs_as = result["layers"]["identity"]["uid"].as_u64().unwrap();
        assert_eq!(
            result["stdout"],
            format!("{runs_as}\n"),
            "uid {uid}: {result}"
        );
        match opened_to {
            "anyone" => assert!(runs_as >= 2_000_000_000, "uid {uid} ran as {runs_as}"),
            own => assert_eq!(runs_as.to_string(), own, "{result}"),
        }
        assert!(!result.to_string().contains("s3cret"), "{result}");
        assert!(
            !dir.path().join("escape").exists(),
            "uid {uid}: wrote outside"
        );
        assert_eq!(result["layers"]["filesystem"]["view"], "host", "{result}");
        assert_eq!(result["layers"]["containment"]["mount_namespace"], false);
        assert!(
            !result["layers"]["network"]["mechanisms"]
                .to_string()
                .contains("mount-namespace"),
            "{result}"
        );
        // Landlock held the filesystem: what was missing is the namespaces' containment.
        assert_eq!(
            result["layers"]["filesystem"]["mechanism"], "landlock",
            "{result}"
        );
        assert_eq!(
            result["layers"]["degraded"][0]["layer"], "containment",
            "{result}"
        );
        assert!(
            result["layers"]["degraded"][0]["reason"]
                .as_str()
                .unwrap()
                .contains("cannot build the private view"),
            "{result}"
        );
    }
}

#[test]
fn an_ignored_sigchld_inherited_from_the_caller_changes_nothing() {
    // Ignored signals stay ignored across exec; with SIGCHLD ignored the kernel would reap the
    // sandbox's children before it could wait for them.
    let dir = crate::util::TempDir::new();
    let script = "import os, signal, sys\n\
                  signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n\
                  os.execv(sys.argv[1], sys.argv[1:])\n";
    let output = Command::new("python3")
        .args(["-c", script])
        .arg(autocoder_bin())
        .args(["sandbox", "--workspace"])
        .arg(dir.path())
        .args(["--", "sh", "-c", "echo ok > made && cat made"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["sandbox"]["stdout"], "ok\n", "{result}");
}
