//! The docker backend against a real Docker engine (started by `.ci/run` through
//! `scripts/start-docker.sh`, with the image `autocoder-test:busybox` built offline from busybox).
//! Where no engine can run, each test says so and returns.

use crate::util::Test;

const IMAGE: &str = "autocoder-test:busybox";

fn engine_ready() -> bool {
    let ok = std::process::Command::new("docker")
        .args(["image", "inspect", IMAGE])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: no Docker engine with {IMAGE} (run scripts/start-docker.sh)");
    }
    ok
}

fn docker(flags: &[&str], script: &str) -> Test {
    Test::new()
        .args(["sandbox", "--backend", "docker", "--image", IMAGE])
        .args(flags.iter().copied())
        .args(["--", "sh", "-c", script])
}

#[test]
fn runs_with_the_same_result_shape_and_confinement() {
    if !engine_ready() {
        return;
    }
    let script =
        "echo out; echo err >&2; echo data > made.txt; cat /sys/class/net/*/address | wc -l; \
                  grep CapEff /proc/self/status; touch /etc/x 2>/dev/null && echo ROOTFS-WRITABLE; \
                  echo $HOME $TMPDIR; exit 3";
    let run = docker(&[], script).run().expect_status(3);
    let result = run.sandbox();
    assert_eq!(result.backend, "docker");
    assert_eq!(result.exit_code, Some(3));
    assert_eq!(result.err(), "err\n");
    let out = result.out();
    assert!(
        out.starts_with("out\n1\n"),
        "only the loopback interface: {out}"
    );
    assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
    assert!(!out.contains("ROOTFS-WRITABLE"), "{out}");
    assert!(out.contains("/tmp/home /tmp"), "{out}");
    assert_eq!(
        std::fs::read_to_string(run.dir.path().join("made.txt")).unwrap(),
        "data\n"
    );
    assert_eq!(result.layers["network"]["allowed"], false);
    assert_eq!(result.layers["containment"]["network_namespace"], true);
    assert_eq!(result.layers["resources"]["mechanism"], "docker");
}

/// The gid of the group that may use the engine's socket.
fn docker_group() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/var/run/docker.sock")
        .ok()
        .map(|socket| socket.gid())
        .filter(|&gid| gid != 0)
}

#[test]
fn an_ordinary_user_in_the_docker_group_runs_as_themself_with_no_privilege() {
    if !engine_ready() || !crate::util::is_root() {
        return;
    }
    let Some(group) = docker_group() else {
        eprintln!("skipped: the engine's socket has no group of its own");
        return;
    };
    // What differs from a root-started run: the user's own uid in the container, no staged or
    // id-mapped mounts (an ordinary user cannot mount), the same refusal of set-id bits.
    let script = "id -u; id -G; echo x > made; cp /bin/busybox shell; chmod 4755 shell; echo $?; \
                  grep CapEff /proc/self/status";
    let run = docker(&[], script)
        .run_as_user(1500)
        .in_group(group)
        .run()
        .expect_status(0);
    let result = run.sandbox();
    let out = result.out();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "1500", "{out}");
    assert_eq!(lines[1], "1500", "the docker group stays outside: {out}");
    assert_eq!(lines[2], "1", "chmod 4755 was allowed: {out}");
    assert_eq!(lines[3], "CapEff:\t0000000000000000", "{out}");
    assert_eq!(result.layers["identity"]["uid"], 1500);
    assert_eq!(result.layers["identity"]["root"], false);
    assert_eq!(result.layers["identity"]["idmapped_workspace"], false);
    use std::os::unix::fs::MetadataExt;
    let made = std::fs::metadata(run.dir.path().join("made")).unwrap();
    assert_eq!((made.uid(), made.gid()), (1500, 1500));
    let shell = std::fs::metadata(run.dir.path().join("shell")).unwrap();
    assert_eq!(shell.mode() & 0o6000, 0, "mode {:o}", shell.mode());
}

#[test]
fn runs_as_the_workspace_owner() {
    if !engine_ready() || !crate::util::is_root() {
        return;
    }
    let test = Test::new();
    std::process::Command::new("chown")
        .arg("1500:1500")
        .arg(test.path())
        .status()
        .unwrap();
    let run = test
        .args([
            "sandbox",
            "--backend",
            "docker",
            "--image",
            IMAGE,
            "--",
            "sh",
            "-c",
            "id -u; echo x > f",
        ])
        .run()
        .expect_status(0);
    assert_eq!(run.sandbox().out(), "1500\n");
    assert_eq!(run.sandbox().layers["identity"]["root"], false);
}

#[test]
fn a_root_owned_workspace_is_written_by_a_uid_of_the_runs_own() {
    if !engine_ready() || !crate::util::is_root() {
        return;
    }
    // A set-id file made there would be root's on the host while the command runs: seccomp
    // refuses the bits, and the mount is nosuid besides.
    let script = "id -u; echo x > made; cp /bin/busybox shell; chmod 4755 shell; echo $?; \
                  awk -v ws=\"$PWD\" '$5 == ws { print $6 }' /proc/self/mountinfo";
    let run = docker(&[], script).run().expect_status(0);
    let result = run.sandbox();
    let out = result.out();
    let lines: Vec<&str> = out.lines().collect();
    let uid: u32 = lines[0].parse().unwrap();
    assert!(uid >= 2_000_000_000, "ran as {uid}: {out}");
    assert_eq!(lines[1], "1", "chmod 4755 was allowed: {out}");
    assert!(lines[2].split(',').any(|o| o == "nosuid"), "{out}");
    assert_eq!(result.layers["identity"]["uid"], uid);
    assert_eq!(result.layers["identity"]["root"], false);
    assert_eq!(result.layers["identity"]["idmapped_workspace"], true);
    use std::os::unix::fs::MetadataExt;
    let made = std::fs::metadata(run.dir.path().join("made")).unwrap();
    assert_eq!(
        (made.uid(), made.gid()),
        (0, 0),
        "what it made is the owner's"
    );
    let shell = std::fs::metadata(run.dir.path().join("shell")).unwrap();
    assert_eq!(shell.mode() & 0o6000, 0, "mode {:o}", shell.mode());
    let name = run.dir.path().file_name().unwrap().to_str().unwrap();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let left = mounts.lines().find(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        fields[3].ends_with(name) && fields[4].starts_with("/run/autocoder/docker/")
    });
    assert_eq!(left, None, "a staged mount was left behind");
}

#[test]
fn limits_hold_and_timeouts_kill_the_container() {
    if !engine_ready() {
        return;
    }
    let run = docker(&["--timeout", "1s"], "sleep 30")
        .run()
        .expect_status(124);
    let result = run.sandbox();
    assert!(result.timed_out);
    assert_eq!(result.limit_hit.as_deref(), Some("time"));
    let leftover = std::process::Command::new("docker")
        .args([
            "ps",
            "--all",
            "--quiet",
            "--filter",
            &format!("name=autocoder-{}", std::process::id()),
        ])
        .output()
        .unwrap();
    assert!(leftover.stdout.is_empty(), "containers left behind");

    let bomb = "for i in $(seq 1 600); do sleep 2 & done 2>/dev/null; jobs -p | wc -l";
    let run = docker(&["--pids", "30"], bomb).run();
    let running: u32 = run.sandbox().out().trim().parse().unwrap_or(0);
    assert!(running < 30, "{running} processes under a limit of 30");

    let run = docker(
        &["--max-output", "1K"],
        "head -c 10000 /dev/zero | tr '\\0' y",
    )
    .run()
    .expect_status(0);
    assert_eq!(run.sandbox().limit_hit.as_deref(), Some("output"));
}

#[test]
fn missing_image_is_a_clear_error() {
    if !engine_ready() {
        return;
    }
    let run = Test::new()
        .args([
            "sandbox",
            "--backend",
            "docker",
            "--image",
            "autocoder-test:no-such-tag",
            "--",
            "true",
        ])
        .run()
        .expect_status(125);
    assert!(
        run.stderr().contains("autocoder-test:no-such-tag"),
        "{}",
        run.stderr()
    );
    assert!(run.stdout().is_empty());

    // A command the image does not have, or cannot run: no result, as with the native backend.
    for (command, status, said) in [
        ("no-such-command", 127, "not found in image"),
        ("/etc/passwd", 126, "cannot execute in image"),
    ] {
        let run = Test::new()
            .args([
                "sandbox",
                "--backend",
                "docker",
                "--image",
                IMAGE,
                "--",
                command,
            ])
            .run()
            .expect_status(status);
        assert!(run.stderr().contains(said), "{}", run.stderr());
        assert!(run.stdout().is_empty(), "{}", run.stdout());
    }
    // A command that runs and exits 127 itself still has its result.
    let run = Test::new()
        .args(["sandbox", "--backend", "docker", "--image", IMAGE, "--"])
        .args(["sh", "-c", "exit 127"])
        .run()
        .expect_status(127);
    assert!(
        run.stdout().contains("\"exit_code\":127"),
        "{}",
        run.stdout()
    );
}

/// Runs `script` in a container on `test`'s workspace; once the script has made `ready`,
/// `meanwhile` runs on the host, and then the container ends.
fn with_host_meanwhile(
    test: Test,
    flags: &[&str],
    script: &str,
    meanwhile: impl FnOnce(&std::path::Path),
) -> crate::util::Run {
    let dir = test.path().to_path_buf();
    let script = format!(
        "{script}; touch ready; i=0; while [ ! -e go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done"
    );
    let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    let runner = std::thread::spawn(move || {
        test.args(["sandbox", "--backend", "docker", "--image", IMAGE])
            .args(flags.iter().map(String::as_str))
            .args(["--", "sh", "-c", &script])
            .run()
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !dir.join("ready").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    meanwhile(&dir);
    std::fs::write(dir.join("go"), "").unwrap();
    runner.join().unwrap()
}

#[test]
fn no_setuid_file_outlives_a_root_container() {
    if !engine_ready() || !crate::util::is_root() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let run = docker(&[], "cp /bin/busybox rootshell; chmod 4755 rootshell; mkdir -m 2755 d; chmod 6755 rootshell; echo $?")
        .run()
        .expect_status(0);
    assert_eq!(run.sandbox().out(), "1\n", "{}", run.sandbox().err());
    let mode = std::fs::metadata(run.dir.path().join("rootshell"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o6000, 0, "rootshell kept mode {mode:o}");

    // The second line, for bits that came another way while the container ran (here, set by
    // the host): deeper than PATH_MAX (19 levels of 250-byte names), where a walk by full paths
    // stops short.
    let level = "d".repeat(250);
    let script = format!(
        "(i=0; while [ $i -lt 19 ]; do mkdir {level} && cd -P ./{level} || exit 1; i=$((i+1)); done)"
    );
    let run = with_host_meanwhile(Test::new(), &[], &script, |dir| {
        let mut current = std::os::fd::OwnedFd::from(std::fs::File::open(dir).unwrap());
        for _ in 0..19 {
            current = open_beneath(&current, &level);
        }
        make_set_id_beneath(&current, "deepshell");
    });
    let dir = std::fs::File::open(run.dir.path()).unwrap();
    let mut current = std::os::fd::OwnedFd::from(dir);
    for _ in 0..19 {
        current = open_beneath(&current, &level);
    }
    let shell = open_beneath(&current, "deepshell");
    let mode = std::fs::File::from(shell)
        .metadata()
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o6000, 0, "the deep file kept mode {mode:o}");
    assert!(
        run.stderr().contains("removed the setuid/setgid bits"),
        "{}",
        run.stderr()
    );
    // The tree is removed by descriptors too (rm -rf cannot take paths that long here).
    let removed = std::process::Command::new("rm")
        .args(["-rf", &level])
        .current_dir(run.dir.path())
        .status()
        .unwrap();
    assert!(removed.success());
}

/// Makes `name` beneath `dir` a setuid and setgid file, as the host's root.
fn make_set_id_beneath(dir: &std::os::fd::OwnedFd, name: &str) {
    use std::os::fd::{AsRawFd, FromRawFd};
    let c_name = std::ffi::CString::new(name).unwrap();
    // SAFETY: openat of a new name in a directory we hold.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
            0o755,
        )
    };
    assert!(fd >= 0, "{name}: {}", std::io::Error::last_os_error());
    // SAFETY: the kernel just gave us this descriptor.
    let file = std::fs::File::from(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) });
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o6755))
        .unwrap();
}

/// The entry `name` of the directory open at `dir`, opened without following a link.
fn open_beneath(dir: &std::os::fd::OwnedFd, name: &str) -> std::os::fd::OwnedFd {
    use std::os::fd::{AsRawFd, FromRawFd};
    let name = std::ffi::CString::new(name).unwrap();
    // SAFETY: openat of a name in a directory we hold.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    assert!(fd >= 0, "{name:?}: {}", std::io::Error::last_os_error());
    // SAFETY: the kernel just gave us this descriptor.
    unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }
}

#[test]
fn disk_limit_is_refused_with_the_docker_backend() {
    let run = Test::new()
        .args(["sandbox", "--backend", "docker", "--image", IMAGE])
        .args(["--disk", "10M", "--", "true"])
        .run()
        .expect_status(125);
    assert!(
        run.stderr()
            .contains("--disk is not available with --backend docker"),
        "{}",
        run.stderr()
    );
}

#[test]
fn the_commands_variables_do_not_reach_the_docker_client() {
    if !engine_ready() {
        return;
    }
    // A PATH or LD_PRELOAD meant for the command would choose what the client runs.
    let planted = crate::util::TempDir::new();
    let marker = planted.path().join("ran");
    let fake = planted.path().join("docker");
    std::fs::write(&fake, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("PATH={}:/bin", planted.path().display());
    let run = docker(
        &["--env", &path, "--env", "LD_PRELOAD=/nowhere/evil.so"],
        "echo \"$LD_PRELOAD\"",
    )
    .run()
    .expect_status(0);
    assert_eq!(run.sandbox().out(), "/nowhere/evil.so\n");
    assert!(
        !marker.exists(),
        "the command's PATH chose the docker client"
    );
    assert!(!run.stderr().contains("evil.so"), "{}", run.stderr());
}

#[test]
fn set_id_bits_go_from_a_writable_file_and_stay_on_files_the_container_never_touched() {
    if !engine_ready() || !crate::util::is_root() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let outside = crate::util::TempDir::new();
    let tool = outside.path().join("tool");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let writable = outside.path().join("writable");
    std::fs::write(&writable, "x\n").unwrap();
    let test = Test::new();
    std::fs::hard_link(&tool, test.path().join("link")).unwrap();
    // Older than the run: the host set those bits, not the container.
    std::thread::sleep(std::time::Duration::from_millis(100));
    let rw = writable.display().to_string();
    let run = with_host_meanwhile(test, &["--rw", &rw], "true", |_| {
        std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o4755)).unwrap();
    });
    assert_eq!(run.status(), 0, "{}", run.stderr());
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode();
    assert_eq!(mode(&writable) & 0o6000, 0, "{}", run.stderr());
    assert_eq!(
        mode(&tool) & 0o7777,
        0o4755,
        "a file the container never touched changed"
    );
}

#[test]
fn a_timeout_before_the_container_exists_still_stops_it() {
    if !engine_ready() {
        return;
    }
    // The first `docker kill` comes before the engine has made the container: asked again.
    let run = docker(&["--timeout", "1ms"], "sleep 3; touch later")
        .run()
        .expect_status(124);
    assert!(!run.dir.path().join("later").exists(), "the command ran on");
    assert!(run.sandbox().duration_ms < 3000);
}

#[test]
fn a_killed_autocoder_leaves_no_container_mount_or_file_behind() {
    if !engine_ready() {
        return;
    }
    let workspace = crate::util::TempDir::new();
    let temp = crate::util::TempDir::new();
    workspace.write("keep.txt", "work\n");
    let mut autocoder = std::process::Command::new(crate::util::autocoder_bin())
        .args(["sandbox", "--backend", "docker", "--image", IMAGE, "--"])
        .args(["sh", "-c", "touch started; sleep 60"])
        .current_dir(workspace.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", temp.path())
        .env("TMPDIR", temp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    crate::util::wait_until_exists(&workspace.path().join("started"), "the container");
    let prefix = format!("autocoder-{}-", autocoder.id());
    let containers = || {
        crate::util::stdout_of(std::process::Command::new("docker").args([
            "ps",
            "--all",
            "--quiet",
            "--filter",
            &format!("name={prefix}"),
        ]))
    };
    assert!(!containers().trim().is_empty(), "the container runs");
    autocoder.kill().unwrap();
    autocoder.wait().unwrap();

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !containers().trim().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the container outlived autocoder by 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let staged = |name: &str| name.contains(&prefix);
    loop {
        let files: Vec<_> = std::fs::read_dir(temp.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| staged(name))
            .collect();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let staging = std::fs::read_dir("/run/autocoder/docker")
            .map(|dir| dir.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()))
            .into_iter()
            .flatten()
            .filter(|name| staged(name))
            .count();
        if files.is_empty() && !mounts.lines().any(staged) && staging == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "left behind: files {files:?}, staged {staging}, mounts {:?}",
            mounts.lines().filter(|l| staged(l)).collect::<Vec<_>>()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // What the workspace held stays.
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("keep.txt")).unwrap(),
        "work\n"
    );
    assert!(workspace.path().join("started").exists());
}
