//! Resource limits: each one holds (as root through cgroups, as an ordinary user through rlimits)
//! and is named in `limit_hit`; each attack is bounded and has a control under the limit.

use std::os::unix::fs::MetadataExt;

use crate::util::{is_root, TempDir, Test};

fn users() -> Vec<Option<u32>> {
    if is_root() {
        vec![None, Some(1500)]
    } else {
        vec![None]
    }
}

fn test_for(user: Option<u32>) -> Test {
    match user {
        Some(uid) => Test::new().run_as_user(uid),
        None => Test::new(),
    }
}

#[test]
fn memory_limit_holds_and_is_named() {
    for user in users() {
        let grab = "x = bytearray(400 * 1024 * 1024); print('allocated')";
        let run = test_for(user)
            .args(["sandbox", "--memory", "128M", "--", "python3", "-c", grab])
            .run();
        let result = run.sandbox();
        assert!(
            !result.out().contains("allocated"),
            "user {user:?}: {}",
            result.out()
        );
        assert_eq!(
            result.limit_hit.as_deref(),
            Some("memory"),
            "user {user:?}: {:?}\n{}",
            result,
            result.err()
        );
        assert_ne!(run.status(), 0);

        let control = "x = bytearray(32 * 1024 * 1024); print('allocated')";
        let run = test_for(user)
            .args([
                "sandbox", "--memory", "128M", "--", "python3", "-c", control,
            ])
            .run();
        assert_eq!(
            run.sandbox().out(),
            "allocated\n",
            "user {user:?}: {}",
            run.sandbox().err()
        );
        assert_eq!(run.sandbox().limit_hit, None);
    }
}

#[test]
fn process_limit_holds_and_is_named() {
    for user in users() {
        // 600 forks against a limit of 50: bounded, and far beyond the limit. Without cgroups
        // (an ordinary user) the limit is recognised from the shell's complaint.
        let bomb = "for i in $(seq 1 600); do sleep 2 & done; echo spawned; jobs -p | wc -l";
        let run = test_for(user)
            .sandbox_sh(&["--pids", "50", "--timeout", "20s"], bomb)
            .run();
        let result = run.sandbox();
        let running: u32 = result
            .out()
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or(0);
        assert!(
            running < 50,
            "user {user:?}: {running} processes ran under a limit of 50"
        );
        assert_eq!(
            result.limit_hit.as_deref(),
            Some("pids"),
            "user {user:?}: {}\n{}",
            result.out(),
            result.err()
        );

        let control = "for i in $(seq 1 10); do sleep 0.1 & done; wait; echo done";
        let run = test_for(user)
            .sandbox_sh(&["--pids", "50"], control)
            .run()
            .expect_status(0);
        assert_eq!(run.sandbox().out(), "done\n");
    }
}

#[test]
fn file_size_limit_holds_and_is_named() {
    for user in users() {
        let run = test_for(user)
            .sandbox_sh(
                &["--file-size", "1M"],
                "head -c 3000000 /dev/zero > big.bin; echo after",
            )
            .run();
        let result = run.sandbox();
        assert_eq!(
            result.limit_hit.as_deref(),
            Some("file_size"),
            "user {user:?}: {result:?}"
        );
        let size = std::fs::metadata(run.dir.path().join("big.bin"))
            .unwrap()
            .len();
        assert!(size <= 1 << 20, "user {user:?}: wrote {size} bytes");

        let run = test_for(user)
            .sandbox_sh(
                &["--file-size", "1M"],
                "head -c 500000 /dev/zero > ok.bin && echo fine",
            )
            .run()
            .expect_status(0);
        assert_eq!(run.sandbox().out(), "fine\n");
    }
}

#[test]
fn output_is_capped_keeping_head_and_tail() {
    let script = "echo FIRST; head -c 200000 /dev/zero | tr '\\0' x; echo; echo LAST";
    let run = Test::new()
        .sandbox_sh(&["--max-output", "4K"], script)
        .run()
        .expect_status(0);
    let result = run.sandbox();
    assert!(result.stdout_truncated);
    assert!(!result.stderr_truncated);
    assert_eq!(result.limit_hit.as_deref(), Some("output"));
    assert!(
        result.out().starts_with("FIRST\n"),
        "{}",
        &result.out()[..40]
    );
    assert!(result.out().ends_with("LAST\n"));
    assert!(result.out().contains("bytes of output omitted"));
    assert!(result.out().len() < 4096 + 100);
}

#[test]
fn cpu_limit_holds() {
    if !is_root() {
        eprintln!("skipped: the CPU quota needs cgroups (root)");
        return;
    }
    // Two busy threads for a second of wall time would use two seconds of CPU; half a core
    // allows about half a second. Only the upper bound is asserted: a busy machine lowers it.
    let busy = "import threading, time, os\n\
                def spin():\n    end = time.time() + 1.0\n    while time.time() < end: pass\n\
                ts = [threading.Thread(target=spin) for _ in range(2)]\n\
                [t.start() for t in ts]; [t.join() for t in ts]\n\
                print(os.times().user + os.times().system)";
    let run = Test::new()
        .args(["sandbox", "--cpus", "0.5", "--", "python3", "-c", busy])
        .run()
        .expect_status(0);
    let result = run.sandbox();
    let cpu: f64 = result.out().trim().parse().unwrap();
    assert!(
        cpu < 0.9,
        "used {cpu}s of CPU in about 1s under a 0.5 CPU limit"
    );
    assert_eq!(result.layers["resources"]["cpu_mechanism"], "cfs-quota");
}

#[test]
fn time_limit_holds_for_ordinary_users_too() {
    for user in users() {
        let run = test_for(user)
            .sandbox_sh(&["--timeout", "500ms"], "sleep 20")
            .run()
            .expect_status(124);
        let result = run.sandbox();
        assert!(
            result.timed_out && result.duration_ms < 10_000,
            "user {user:?}: {result:?}"
        );
        assert_eq!(result.limit_hit.as_deref(), Some("time"));
    }
}

#[test]
fn filling_the_private_tmp_is_a_memory_limit_hit() {
    if !is_root() {
        eprintln!(
            "skipped: the private /tmp counts against the memory limit through cgroups (root)"
        );
        return;
    }
    let run = Test::new()
        .sandbox_sh(
            &["--memory", "64M"],
            "head -c 40M /dev/zero > /tmp/a && head -c 40M /dev/zero > /dev/shm/b && echo survived",
        )
        .run();
    let result = run.sandbox();
    assert_eq!(result.limit_hit.as_deref(), Some("memory"), "{result:?}");
    // The kernel's OOM killer took one of the writers (or the shell): not both files were made.
    assert!(!result.out().contains("survived"), "{result:?}");
}

#[test]
fn the_command_may_use_the_cpus_its_caller_may() {
    // As root the parent moves the child to another CPU while it starts (to work beside it);
    // the command must still get exactly the caller's CPUs, all of them or the few it was given.
    // The child takes them back only after the move, which races with its start: many runs.
    // (Ordinary users' commands get the first --cpus of them: the next test.)
    if !is_root() {
        return;
    }
    let allowed = |status: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
            .map(|list| list.trim().to_string())
            .unwrap()
    };
    let outside = allowed(&std::fs::read_to_string("/proc/self/status").unwrap());
    let script = "grep Cpus_allowed_list /proc/self/status";
    let dir = crate::util::TempDir::new();
    let last = outside.rsplit([',', '-']).next().unwrap().to_string();
    for (pin, expected) in [(None, &outside), (Some(&last), &last)] {
        for round in 0..30 {
            let mut command = match pin {
                Some(cpu) => {
                    let mut taskset = std::process::Command::new("taskset");
                    taskset.args(["-c", cpu]).arg(crate::util::autocoder_bin());
                    taskset
                }
                None => std::process::Command::new(crate::util::autocoder_bin()),
            };
            let run = command
                .args(["sandbox", "--", "sh", "-c", script])
                .current_dir(dir.path())
                .output()
                .unwrap();
            let result: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
            let inside = allowed(result["sandbox"]["stdout"].as_str().unwrap());
            assert_eq!(&inside, expected, "run {round} pinned to {pin:?}: {result}");
        }
    }
}

#[test]
fn without_cgroups_the_cpu_limit_cannot_be_undone() {
    if !is_root() {
        return;
    }
    let script = "import os\ntry:\n    os.sched_setaffinity(0, {0, 1})\n    print('widened')\nexcept PermissionError:\n    print('refused')\nprint(len(os.sched_getaffinity(0)))";
    let run = Test::new()
        .run_as_user(1500)
        .args(["sandbox", "--cpus", "1", "--", "python3", "-c", script])
        .run()
        .expect_status(0);
    assert_eq!(
        run.sandbox().out(),
        "refused\n1\n",
        "{}",
        run.sandbox().err()
    );
    assert_eq!(
        run.sandbox().layers["resources"]["cpu_mechanism"],
        "affinity"
    );
}

#[test]
fn cgroups_that_refuse_the_limits_give_way_to_rlimits() {
    if !is_root() {
        return;
    }
    // Under a cpu cgroup capped at half a CPU, a run cgroup may not be given the default one
    // CPU (cgroup v1 refuses a child quota above its parent's): the run goes on with rlimits.
    let Some(own) = crate::util::own_cgroup("cpu") else {
        eprintln!("skipped: no cgroup v1 cpu hierarchy");
        return;
    };
    let capped = own.join(format!("autocoder-test-capped-{}", std::process::id()));
    std::fs::create_dir(&capped).unwrap();
    std::fs::write(capped.join("cpu.cfs_period_us"), "100000").unwrap();
    std::fs::write(capped.join("cpu.cfs_quota_us"), "50000").unwrap();
    let script = format!("echo $$ > {}/tasks && exec \"$0\" \"$@\"", capped.display());
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(&script)
        .arg(crate::util::autocoder_bin())
        .args([
            "sandbox",
            "-v",
            "--",
            "sh",
            "-c",
            "echo ran; cat /proc/self/cgroup",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap());
    let output = command.output().unwrap();
    let _ = std::fs::remove_dir(&capped);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let sandbox = &result["sandbox"];
    assert!(
        sandbox["stdout"].as_str().unwrap().starts_with("ran\n"),
        "{sandbox}"
    );
    assert_eq!(
        sandbox["layers"]["resources"]["mechanism"], "rlimit",
        "{sandbox}"
    );
    assert!(stderr.contains("using rlimits"), "{stderr}");
    assert!(!capped.exists(), "{} left behind", capped.display());
}

#[test]
fn no_cgroup_hierarchy_gives_way_to_rlimits() {
    if !is_root() {
        return;
    }
    // With an empty /sys/fs/cgroup (a private mount namespace), the run's cgroups have nowhere
    // to go: the run uses rlimits.
    let output = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c"])
        .arg("mount -t tmpfs none /sys/fs/cgroup && exec \"$0\" \"$@\"")
        .arg(crate::util::autocoder_bin())
        .args(["sandbox", "-v", "--", "sh", "-c", "echo ran"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let sandbox = &result["sandbox"];
    assert_eq!(sandbox["stdout"], "ran\n", "{sandbox}");
    assert_eq!(
        sandbox["layers"]["resources"]["mechanism"], "rlimit",
        "{sandbox}"
    );
    assert!(
        stderr.contains("no cgroup v1 memory hierarchy") && stderr.contains("using rlimits"),
        "{stderr}"
    );
}

#[test]
fn concurrent_runs_started_by_root_do_not_share_per_user_limits() {
    if !crate::util::is_root() {
        eprintln!(
            "skipped: as an ordinary user every run is that user (per-user limits are theirs)"
        );
        return;
    }
    // One run takes every inotify instance its uid may have (fs.inotify.max_user_instances),
    // and holds them; another, meanwhile, must still get one.
    let greedy = "import ctypes, time\nlibc = ctypes.CDLL(None, use_errno=True)\n\
                  held = []\nwhile True:\n    fd = libc.inotify_init()\n    if fd < 0: break\n    held.append(fd)\n\
                  open('greedy-ready', 'w').write(str(len(held)))\ntime.sleep(4)\n";
    let first = Test::new();
    let ready = first.path().join("greedy-ready");
    let hog =
        std::thread::spawn(move || first.args(["sandbox", "--", "python3", "-c", greedy]).run());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !ready.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(ready.exists(), "the greedy run did not start");
    let modest = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n\
                  print('got one' if libc.inotify_init() >= 0 else 'none left')";
    let second = Test::new()
        .args(["sandbox", "--", "python3", "-c", modest])
        .run();
    let hog = hog.join().unwrap();
    assert_eq!(
        second.sandbox().out(),
        "got one\n",
        "{}",
        second.sandbox().err()
    );
    let uid = |run: &crate::util::Run| run.sandbox().layers["identity"]["uid"].as_u64().unwrap();
    assert_ne!(uid(&hog), uid(&second), "both runs had the same uid");
    assert!(uid(&second) >= 2_000_000_000, "{}", uid(&second));
}

#[test]
fn disk_limit_holds_and_changes_within_it_are_written_back() {
    use std::os::unix::fs::PermissionsExt;
    for user in users() {
        let prepare = |test: &Test| {
            let dir = test.path();
            std::fs::write(dir.join("keep"), "keep\n").unwrap();
            std::fs::write(dir.join("old"), "old\n").unwrap();
            for sub in ["olddir", "dir"] {
                std::fs::create_dir(dir.join(sub)).unwrap();
                std::fs::write(dir.join(sub).join("x"), "x\n").unwrap();
            }
        };
        // Filling the limit: nothing the command did reaches the workspace.
        let test = test_for(user);
        prepare(&test);
        let run = test
            .sandbox_sh(
                &["--disk", "4M"],
                "echo changed > keep; head -c 8000000 /dev/zero > big; echo after",
            )
            .run();
        let result = run.sandbox();
        assert_eq!(
            result.limit_hit.as_deref(),
            Some("disk"),
            "user {user:?}: {result:?}"
        );
        assert_eq!(
            std::fs::read_to_string(run.dir.path().join("keep")).unwrap(),
            "keep\n"
        );
        assert!(!run.dir.path().join("big").exists(), "user {user:?}");

        // Within it: written back, removals and a directory replaced whole included.
        let test = test_for(user);
        prepare(&test);
        let script = "echo kept > keep && echo hi > a && mkdir d && echo f > d/f && rm old && \
                      rm -r olddir && ln -s a link && rm -r dir && mkdir dir && echo n > dir/n && \
                      printf '#!/bin/sh\\n' > run.sh && chmod 755 run.sh && echo done";
        let run = test
            .sandbox_sh(&["--disk", "8M"], script)
            .run()
            .expect_status(0);
        let result = run.sandbox();
        assert_eq!(result.out(), "done\n", "user {user:?}: {}", result.err());
        assert_eq!(result.limit_hit, None);
        assert_eq!(result.layers["resources"]["disk_bytes"], 8 << 20);
        let dir = run.dir.path();
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        assert_eq!(read("keep"), "kept\n");
        assert_eq!(read("a"), "hi\n");
        assert_eq!(read("d/f"), "f\n");
        assert_eq!(read("dir/n"), "n\n");
        assert!(
            !dir.join("dir/x").exists(),
            "user {user:?}: the old dir/x stayed"
        );
        assert!(!dir.join("old").exists() && !dir.join("olddir").exists());
        assert_eq!(
            std::fs::read_link(dir.join("link")).unwrap().to_str(),
            Some("a")
        );
        let mode = std::fs::metadata(dir.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);

        // Directories the workspace keeps set-gid or read-only are written too, and a FIFO in
        // place of a file removes the file.
        let test = test_for(user);
        prepare(&test);
        std::fs::create_dir(test.path().join("kept")).unwrap();
        std::fs::write(test.path().join("kept/f"), "f\n").unwrap();
        std::fs::set_permissions(
            test.path().join("kept"),
            std::fs::Permissions::from_mode(0o555),
        )
        .unwrap();
        std::fs::create_dir(test.path().join("shared")).unwrap();
        std::fs::set_permissions(
            test.path().join("shared"),
            std::fs::Permissions::from_mode(0o2775),
        )
        .unwrap();
        let script = "echo s > shared/s && mkdir -p pkg/m && echo g > pkg/m/a.go && \
                      chmod -R a-w pkg && rm old && mkfifo old && chmod u+w kept && \
                      echo k > kept/k && chmod 555 kept && echo done";
        let run = test
            .sandbox_sh(&["--disk", "8M"], script)
            .run()
            .expect_status(0);
        assert_eq!(
            run.sandbox().out(),
            "done\n",
            "user {user:?}: {}",
            run.sandbox().err()
        );
        let dir = run.dir.path();
        assert_eq!(
            std::fs::read_to_string(dir.join("shared/s")).unwrap(),
            "s\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("pkg/m/a.go")).unwrap(),
            "g\n"
        );
        let mode = std::fs::metadata(dir.join("pkg/m"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o555, "user {user:?}");
        assert!(
            !dir.join("old").exists(),
            "user {user:?}: the file a FIFO replaced stayed"
        );
        assert_eq!(std::fs::read_to_string(dir.join("kept/k")).unwrap(), "k\n");
        let mode = std::fs::metadata(dir.join("kept"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o555, "user {user:?}");
        let _ = std::process::Command::new("chmod")
            .args(["-R", "u+w"])
            .arg(dir.join("pkg"))
            .arg(dir.join("kept"))
            .status();

        // What the host makes meanwhile is not the command's to remove, though it looked the
        // name up before it was there.
        let test = test_for(user);
        let workspace = test.path().to_path_buf();
        let maker = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(700));
            std::fs::write(workspace.join("hostnew"), "host\n").unwrap();
        });
        let run = test
            .sandbox_sh(&["--disk", "8M"], "ls hostnew; sleep 2; touch mine")
            .run();
        maker.join().unwrap();
        assert!(run.dir.path().join("mine").exists(), "user {user:?}");
        assert!(
            run.dir.path().join("hostnew").exists(),
            "user {user:?}: the host's file went"
        );

        // Stopped by the clock: nothing reaches the workspace either.
        let run = test_for(user)
            .sandbox_sh(
                &["--disk", "8M", "--timeout", "1s"],
                "echo x > late; sleep 10",
            )
            .run();
        assert_eq!(run.sandbox().limit_hit.as_deref(), Some("time"));
        assert!(!run.dir.path().join("late").exists(), "user {user:?}");
    }
    // Where it could not cover the workspace whole, it refuses: a --rw path inside it, or a
    // filesystem mounted inside it.
    let test = Test::new();
    std::fs::create_dir(test.path().join("sub")).unwrap();
    let inside = test.path().join("sub");
    let run = test
        .args(["sandbox", "--disk", "1M", "--rw"])
        .arg(&inside)
        .args(["--", "true"])
        .run()
        .expect_status(125);
    assert!(
        run.stderr().contains("the workspace or inside it"),
        "{}",
        run.stderr()
    );
    if is_root() {
        let test = Test::new();
        let point = test.path().join("mnt");
        std::fs::create_dir(&point).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "autocoder-test"])
            .arg(&point)
            .status()
            .unwrap();
        assert!(mounted.success());
        let run = test.sandbox_sh(&["--disk", "1M"], "true").run();
        let _ = std::process::Command::new("umount").arg(&point).status();
        assert_eq!(run.status(), 125);
        assert!(
            run.stderr().contains("mounted inside the workspace"),
            "{}",
            run.stderr()
        );
    }
}

#[test]
fn an_ordinary_users_run_says_why_it_makes_no_cgroups() {
    if !is_root() {
        return;
    }
    let refused = |run: &crate::util::Run| {
        run.sandbox().layers["resources"]["cgroups_refused"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let run = Test::new().sandbox_sh(&[], "true").run().expect_status(0);
    assert_eq!(
        run.sandbox().layers["resources"]["cgroups_refused"],
        serde_json::Value::Null
    );
    let run = Test::new()
        .run_as_user(1500)
        .sandbox_sh(&[], "true")
        .run()
        .expect_status(0);
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let Some(v2) = mounts.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        right
            .starts_with("cgroup2 ")
            .then(|| left.split(' ').nth(4))
            .flatten()
    }) else {
        assert!(
            refused(&run).contains("no cgroup v2 hierarchy"),
            "{}",
            refused(&run)
        );
        return;
    };
    assert!(
        refused(&run).contains("is not delegated to you"),
        "{}",
        refused(&run)
    );

    // A subtree of the user's own, as systemd delegates one: what it lacks is said.
    let test = Test::new();
    let cgroup = std::path::Path::new(v2).join(format!("autocoder-test-{}", std::process::id()));
    std::fs::create_dir(&cgroup).unwrap();
    crate::util::chown_tree(&cgroup, 1500);
    let bin = test.path().join(".bin");
    std::fs::create_dir(&bin).unwrap();
    let home = TempDir::new();
    crate::util::chown_tree(home.path(), 1500);
    std::fs::copy(crate::util::autocoder_bin(), bin.join("autocoder")).unwrap();
    crate::util::chown_tree(test.path(), 1500);
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec setpriv --reuid 1500 --regid 1500 --clear-groups \
         env HOME={} {}/autocoder sandbox -- true",
        cgroup.display(),
        home.path().display(),
        bin.display()
    );
    let output = std::process::Command::new("sh")
        .args(["-c", &script])
        .current_dir(test.path())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir(&cgroup);
    let document: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&output.stderr)));
    let said = document["sandbox"]["layers"]["resources"]["cgroups_refused"]
        .as_str()
        .unwrap_or_default();
    let controllers =
        std::fs::read_to_string(std::path::Path::new(v2).join("cgroup.subtree_control"))
            .unwrap_or_default();
    if controllers.contains("memory") && controllers.contains("pids") {
        assert!(
            said.contains("is delegated to you with the memory and pids"),
            "{said}"
        );
    } else {
        assert!(said.contains("your delegated cgroup"), "{said}");
        assert!(said.contains("has no"), "{said}");
    }
}

/// `--disk` while the user edits the workspace: what the host changed meanwhile stays, the run's
/// version beside it; a file the run only touched is not written; the rest is written back.
fn disk_keeps_what_the_host_changed_meanwhile(user: Option<u32>) {
    let test = test_for(user);
    let dir = test.path().to_path_buf();
    for (name, text) in [
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        ("c.txt", "c\n"),
        ("e.txt", "e\n"),
        ("x.txt", "x\n"),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    std::fs::create_dir(dir.join("kept")).unwrap();
    std::fs::write(dir.join("kept/k"), "k\n").unwrap();
    let sync = TempDir::new();
    if let Some(uid) = user {
        crate::util::chown_tree(sync.path(), uid);
    }
    let started = sync.path().join("started");
    let go = sync.path().join("go");
    let script = format!(
        "echo run > a.txt; touch b.txt; rm c.txt; echo run > e.txt; echo new > d.txt; \
         mkdir sub; echo f > sub/f; echo run > x.txt; echo run > kept/k; : > {started}; \
         while [ ! -e {go} ]; do sleep 0.05; done",
        started = started.display(),
        go = go.display()
    );
    let b_inode = std::fs::metadata(dir.join("b.txt")).unwrap().ino();
    let host = {
        let (dir, started, go) = (dir.clone(), started.clone(), go.clone());
        std::thread::spawn(move || {
            crate::util::wait_until_exists(&started, "the command");
            std::fs::write(dir.join("a.txt"), "mine\n").unwrap();
            std::fs::write(dir.join("c.txt"), "mine too\n").unwrap();
            // Removed and renamed on the host: not brought back.
            std::fs::remove_file(dir.join("x.txt")).unwrap();
            std::fs::rename(dir.join("kept"), dir.join("moved")).unwrap();
            std::fs::write(&go, "").unwrap();
        })
    };
    let run = test
        .args(["sandbox", "--disk", "8M", "--rw"])
        .arg(sync.path())
        .args(["--", "sh", "-c", &script])
        .run()
        .expect_status(0);
    host.join().unwrap();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert_eq!(read("a.txt"), "mine\n", "user {user:?}");
    assert_eq!(read("a.txt.autocoder-run"), "run\n");
    assert_eq!(read("c.txt"), "mine too\n");
    assert_eq!(read("b.txt"), "b\n");
    assert_eq!(
        std::fs::metadata(dir.join("b.txt")).unwrap().ino(),
        b_inode,
        "a file the run only touched was written back"
    );
    assert_eq!(read("e.txt"), "run\n");
    assert_eq!(read("d.txt"), "new\n");
    assert_eq!(read("sub/f"), "f\n");
    assert!(!dir.join("x.txt").exists() && !dir.join("kept").exists());
    assert_eq!(read("x.txt.autocoder-run"), "run\n");
    assert_eq!(read("kept.autocoder-run/k"), "run\n");
    assert_eq!(read("moved/k"), "k\n");
    let result = run.sandbox();
    let mut conflicts = result.disk.unwrap()["conflicts"]
        .as_array()
        .unwrap()
        .clone();
    conflicts.sort_by_key(|c| c["path"].as_str().unwrap().to_string());
    assert_eq!(
        conflicts,
        [
            serde_json::json!({"path": "a.txt", "beside": "a.txt.autocoder-run"}),
            serde_json::json!({"path": "c.txt", "beside": null}),
            serde_json::json!({"path": "kept", "beside": "kept.autocoder-run"}),
            serde_json::json!({"path": "x.txt", "beside": "x.txt.autocoder-run"}),
        ],
        "user {user:?}"
    );
    assert!(
        run.stderr()
            .contains("a.txt changed on the host while the command ran"),
        "{}",
        run.stderr()
    );
}

#[test]
fn disk_keeps_what_the_host_changed_meanwhile_as_root() {
    disk_keeps_what_the_host_changed_meanwhile(None);
}

#[test]
fn disk_keeps_what_the_host_changed_meanwhile_as_a_user() {
    disk_keeps_what_the_host_changed_meanwhile(Some(4242));
}
