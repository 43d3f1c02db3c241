//! Attacks on the native sandbox, each bounded and paired with a control that shows the
//! legitimate operation still works. Run as root, and as an ordinary user where that differs.

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;

use crate::util::{autocoder_bin, git, is_root, Test};

/// A directory outside /tmp, our home and the system directories: visible inside the sandbox's
/// mount namespace, so only Landlock stands between the command and it. (The checkout itself
/// may lie under /tmp, which the sandbox hides.)
fn visible_scratch(name: &str) -> PathBuf {
    let base = if is_root() {
        PathBuf::from("/var")
    } else {
        PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
    };
    let dir = base.join(format!("autocoder-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn users() -> Vec<Option<u32>> {
    if is_root() {
        vec![None, Some(1500)]
    } else {
        vec![None]
    }
}

#[test]
fn nothing_outside_the_workspace_can_be_written() {
    for user in users() {
        let marker = format!(
            "autocoder-escape-{}-{}",
            std::process::id(),
            user.unwrap_or(0)
        );
        let visible = visible_scratch(&format!("write-{}", user.unwrap_or(0)));
        if let Some(uid) = user {
            std::process::Command::new("chown")
                .arg(format!("{uid}"))
                .arg(&visible)
                .status()
                .unwrap();
        }
        let targets = [
            format!("/etc/{marker}"),
            format!("/usr/{marker}"),
            format!("/var/{marker}"),
            format!("/root/{marker}"),
            format!("{}/{marker}", visible.display()),
            format!("/tmp/{marker}"),
            format!("/dev/shm/{marker}"),
        ];
        let script = format!(
            "for p in {}; do if echo x > $p; then echo \"wrote $p\"; fi; done 2>/dev/null; echo ok > control.txt && cat control.txt",
            targets.join(" ")
        );
        let mut test = Test::new();
        if let Some(uid) = user {
            test = test.run_as_user(uid);
        }
        let run = test.sandbox_sh(&[], &script).run().expect_status(0);
        let result = run.sandbox();
        // Writes to the private /tmp and /dev/shm succeed inside but never reach the host.
        for target in &targets {
            assert!(
                !PathBuf::from(target).exists(),
                "user {user:?}: {target} reached the host: {}",
                result.out()
            );
        }
        for target in &targets[..5] {
            assert!(
                !result.out().contains(&format!("wrote {target}")),
                "user {user:?}: {}",
                result.out()
            );
        }
        assert!(
            result.out().ends_with("ok\n"),
            "control failed for {user:?}: {}",
            result.err()
        );
        let _ = std::fs::remove_dir_all(visible);
    }
}

#[test]
fn secrets_outside_stay_unreadable_also_through_links() {
    for user in users() {
        let visible = visible_scratch(&format!("secret-{}", user.unwrap_or(0)));
        let secret = visible.join("secret.txt");
        std::fs::write(&secret, "TOPSECRET-visible\n").unwrap();
        let tmp_secret = PathBuf::from(format!(
            "/tmp/autocoder-secret-{}-{}",
            std::process::id(),
            user.unwrap_or(0)
        ));
        std::fs::write(&tmp_secret, "TOPSECRET-tmp\n").unwrap();
        let workspace = visible.join("ws");
        std::fs::create_dir(&workspace).unwrap();
        std::fs::write(workspace.join("mine.txt"), "mine\n").unwrap();
        if let Some(uid) = user {
            // Owned by the user, so only the sandbox (not file permissions) can refuse it.
            std::process::Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{uid}"))
                .arg(&visible)
                .status()
                .unwrap();
            std::process::Command::new("chown")
                .arg(format!("{uid}:{uid}"))
                .arg(&tmp_secret)
                .status()
                .unwrap();
        }
        // Outside the view the secrets are absent; /etc is in it, so a hardlink to one of its
        // files is what Landlock and the mount boundary must refuse.
        let script = format!(
            "cat {s} {t} /root/.bashrc; ln -s {s} sym; cat sym; ln {s} hard && cat hard; ln -s {t} tsym; cat tsym; \
             ln /etc/hostname etc-link && echo LINKED; echo x >> /etc/hostname && echo APPENDED; \
             cat mine.txt; head -c 5 /etc/os-release; echo",
            s = secret.display(),
            t = tmp_secret.display()
        );
        let mut test = Test::new();
        if let Some(uid) = user {
            test = test.run_as_user(uid);
        }
        let run = test
            .args(["sandbox", "--workspace"])
            .args([&workspace])
            .args(["--", "sh", "-c", &script])
            .run();
        let result = run.sandbox();
        assert!(
            !result.out().contains("TOPSECRET"),
            "user {user:?} read a secret: {}",
            result.out()
        );
        assert!(result.out().contains("mine\n"), "control: {}", result.err());
        assert!(
            result.out().contains("PRETT") || result.out().contains("NAME="),
            "control: {}",
            result.out()
        );
        assert!(
            !result.out().contains("LINKED") && !result.out().contains("APPENDED"),
            "{}",
            result.out()
        );
        assert!(
            result.err().contains("No such file or directory"),
            "{}",
            result.err()
        );
        let _ = std::fs::remove_dir_all(visible);
        let _ = std::fs::remove_file(tmp_secret);
    }
}

/// A Python script run inside the sandbox that prints one `name: blocked|open` line per probe.
const NETWORK_PROBES: &str = r#"
import socket, sys
def probe(name, make, use=lambda s: None):
    try:
        s = make()
        use(s)
        print(name + ": open")
    except OSError as e:
        print(name + ": blocked")
host_tcp, host_udp, unix_tmp, unix_run, abstract = sys.argv[1:6]
probe("tcp", lambda: socket.create_connection(("127.0.0.1", int(host_tcp)), timeout=2))
probe("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM),
      lambda s: s.sendto(b"x", ("127.0.0.1", int(host_udp))))
probe("tcp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
probe("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
probe("icmp-dgram", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP))
probe("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
probe("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE))
probe("mptcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262))
def connect_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(path)
    return s
probe("unix-tmp", lambda: connect_unix(unix_tmp))
if unix_run != "-":
    probe("unix-run", lambda: connect_unix(unix_run))
probe("unix-abstract", lambda: connect_unix("\0" + abstract))
probe("docker-sock", lambda: connect_unix("/run/docker.sock"))
# Controls: local IPC inside the sandbox keeps working, and so does a server on its loopback.
a, b = socket.socketpair()
a.sendall(b"ping"); print("socketpair: " + b.recv(4).decode())
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); srv.bind("inside.sock"); srv.listen(1)
c = connect_unix("inside.sock"); print("unix-inside: open")
for family, host in [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]:
    local = socket.socket(family); local.bind((host, 0)); local.listen(1)
    socket.create_connection((host, local.getsockname()[1]), timeout=2)
    print("loopback-" + host + ": open")
"#;

struct HostListeners {
    tcp: TcpListener,
    udp: UdpSocket,
    unix_tmp: (UnixListener, PathBuf),
    unix_run: Option<(UnixListener, PathBuf)>,
    abstract_name: String,
    _abstract: std::os::unix::net::UnixListener,
}

impl HostListeners {
    fn start(tag: &str) -> HostListeners {
        use std::os::linux::net::SocketAddrExt;
        let unique = format!("{tag}-{}", std::process::id());
        let tmp_path = PathBuf::from(format!("/tmp/autocoder-test-{unique}.sock"));
        let _ = std::fs::remove_file(&tmp_path);
        let unix_tmp = UnixListener::bind(&tmp_path).unwrap();
        // World-writable, like an X11 socket: only the sandbox can refuse the connection.
        std::fs::set_permissions(
            &tmp_path,
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let unix_run = is_root().then(|| {
            let path = PathBuf::from(format!("/run/autocoder-test-{unique}.sock"));
            let _ = std::fs::remove_file(&path);
            let listener = UnixListener::bind(&path).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o777))
                .unwrap();
            (listener, path)
        });
        let abstract_name = format!("autocoder-test-{unique}");
        let addr =
            std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        let abstract_listener = UnixListener::bind_addr(&addr).unwrap();
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_nonblocking(true).unwrap();
        HostListeners {
            tcp: TcpListener::bind("127.0.0.1:0").unwrap(),
            udp,
            unix_tmp: (unix_tmp, tmp_path),
            unix_run,
            abstract_name,
            _abstract: abstract_listener,
        }
    }

    fn args(&self) -> Vec<String> {
        vec![
            self.tcp.local_addr().unwrap().port().to_string(),
            self.udp.local_addr().unwrap().port().to_string(),
            self.unix_tmp.1.display().to_string(),
            self.unix_run
                .as_ref()
                .map_or("-".into(), |(_, p)| p.display().to_string()),
            self.abstract_name.clone(),
        ]
    }

    fn udp_received(&self) -> bool {
        let mut buf = [0u8; 8];
        self.udp.recv(&mut buf).is_ok()
    }
}

impl Drop for HostListeners {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.unix_tmp.1);
        if let Some((_, path)) = &self.unix_run {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[test]
fn no_network_and_no_host_sockets_without_the_flag() {
    for user in users() {
        let listeners = HostListeners::start(&format!("net{}", user.unwrap_or(0)));
        let mut test = Test::new();
        if let Some(uid) = user {
            test = test.run_as_user(uid);
        }
        let run = test
            .args(["sandbox", "--", "python3", "-c", NETWORK_PROBES])
            .args(listeners.args())
            .run();
        let result = run.sandbox();
        let out = result.out();
        assert_eq!(
            result.exit_code,
            Some(0),
            "user {user:?}: {out}\n{}",
            result.err()
        );
        // Sockets of its own namespace may be made (a UDP datagram to 127.0.0.1 goes to the
        // command's own lo): what matters is that nothing outside is reached.
        let inside_only = [
            "udp",
            "tcp6",
            "icmp-dgram",
            "mptcp",
            "socketpair",
            "unix-inside",
            "loopback-",
        ];
        for line in out.lines() {
            let allowed = inside_only.iter().any(|probe| line.starts_with(probe));
            assert!(
                allowed || line.ends_with(": blocked"),
                "user {user:?}: {line}\n{out}"
            );
        }
        assert!(
            out.contains("socketpair: ping")
                && out.contains("unix-inside: open")
                && out.contains("loopback-127.0.0.1: open")
                && out.contains("loopback-::1: open"),
            "controls: {out}"
        );
        assert_eq!(result.layers["containment"]["network_namespace"], true);
        assert!(!listeners.udp_received(), "a UDP datagram reached the host");
        listeners.tcp.set_nonblocking(true).unwrap();
        assert!(
            listeners.tcp.accept().is_err(),
            "a TCP connection reached the host"
        );
    }
}

#[test]
fn network_flag_opens_the_network() {
    let listeners = HostListeners::start("netflag");
    let script = "import socket,sys\ns=socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)\n\
                  s.sendall(b'hello')\nu=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
                  u.sendto(b'x', ('127.0.0.1', int(sys.argv[2])))\nprint('sent')";
    let run = Test::new()
        .args(["sandbox", "--network", "--", "python3", "-c", script])
        .args(&listeners.args()[..2])
        .run()
        .expect_status(0);
    assert_eq!(run.sandbox().out(), "sent\n");
    let (mut conn, _) = listeners.tcp.accept().unwrap();
    let mut got = String::new();
    conn.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hello");
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(listeners.udp_received());
    assert_eq!(run.sandbox().layers["network"]["allowed"], true);
}

#[test]
fn no_capabilities_no_root_no_privilege_gain() {
    let test = Test::new();
    if is_root() {
        // A setuid-root copy of `id`: inside, it must not make anyone root.
        let copy = test.path().join("suid-id");
        std::fs::copy("/usr/bin/id", &copy).unwrap();
        std::fs::set_permissions(&copy, std::os::unix::fs::PermissionsExt::from_mode(0o4755))
            .unwrap();
    }
    let script = "grep -E '^(Uid|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status; \
                  if [ -x ./suid-id ]; then ./suid-id -u; fi; \
                  mknod dev c 1 3 2>/dev/null && echo MKNOD; \
                  echo ok > writable.txt && cat writable.txt";
    let run = test.sandbox_sh(&[], script).run().expect_status(0);
    let out = run.sandbox().out().to_string();
    let field = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
            .unwrap()
    };
    assert_ne!(field("Uid:"), "0", "{out}");
    for cap in ["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"] {
        assert_eq!(field(cap), "0000000000000000", "{cap}\n{out}");
    }
    assert_eq!(field("NoNewPrivs:"), "1");
    assert_eq!(field("Seccomp:"), "2");
    assert!(!out.contains("MKNOD"), "{out}");
    if is_root() {
        assert!(
            !out.lines().any(|l| l == "0"),
            "setuid copy became root: {out}"
        );
    }
    assert!(out.ends_with("ok\n"), "{out}");
}

/// Whether any process on the host has `marker` in its command line.
fn process_with(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
    })
}

/// A `sleep` duration no other test process uses: the markers below are looked for among all
/// the host's processes, and test runs may overlap.
fn marker(n: u32) -> String {
    format!("31{n}.{}", std::process::id())
}

#[test]
fn no_process_survives_the_sandbox() {
    let (m1, m2, m3) = (marker(1), marker(2), marker(3));
    for (flags, script, status) in [
        (
            vec![],
            format!("setsid sleep {m1} </dev/null >/dev/null 2>&1 & (sleep {m2} &) ; echo started"),
            0,
        ),
        (
            vec!["--timeout", "700ms"],
            format!("setsid sleep {m3} </dev/null >/dev/null 2>&1 & sleep 30"),
            124,
        ),
    ] {
        let run = Test::new()
            .sandbox_sh(&flags, &script)
            .run()
            .expect_status(status);
        drop(run);
        for marker in [&m1, &m2, &m3] {
            assert!(
                !process_with(&format!("sleep\0{marker}")),
                "sleep {marker} outlived the sandbox"
            );
        }
    }
}

#[test]
fn outside_processes_cannot_be_seen_signalled_or_traced() {
    let outside = std::process::id();
    let script = format!(
        "kill -0 {outside} 2>/dev/null && echo SIGNALLED; cat /proc/{outside}/environ 2>/dev/null && echo READ; \
         ls /proc | grep -cE '^[0-9]+$'; \
         python3 -c 'import ctypes; l=ctypes.CDLL(None); print(\"ptrace\", l.ptrace(16, {outside}, 0, 0))'"
    );
    let run = Test::new().sandbox_sh(&[], &script).run().expect_status(0);
    let out = run.sandbox().out().to_string();
    assert!(!out.contains("SIGNALLED") && !out.contains("READ"), "{out}");
    let visible: u32 = out.lines().next().unwrap().trim().parse().unwrap();
    assert!(visible <= 4, "the sandbox sees {visible} processes: {out}");
    assert!(out.contains("ptrace -1"), "{out}");
}

#[test]
fn a_layer_that_cannot_be_applied_stops_the_run_unless_degraded_is_allowed() {
    // Inside the sandbox, namespaces cannot be created: a nested sandbox must refuse to run.
    let bin = autocoder_bin();
    let bin_dir = bin.parent().unwrap();
    let nested = |extra: &[&str]| {
        let mut inner = vec![bin.display().to_string(), "sandbox".to_string()];
        inner.extend(extra.iter().map(|s| s.to_string()));
        inner.extend([
            "--".into(),
            "sh".into(),
            "-c".into(),
            "echo inner ran; python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>/dev/null && echo UNIX-SOCKET; true".into(),
        ]);
        Test::new()
            .args(["sandbox", "--ro"])
            .args([bin_dir])
            .arg("--")
            .args(inner)
            .run()
    };
    let run = nested(&[]);
    let result = run.sandbox();
    assert_eq!(
        result.exit_code,
        Some(125),
        "{}\n{}",
        result.out(),
        result.err()
    );
    assert!(result.out().is_empty(), "{}", result.out());
    assert!(
        result
            .err()
            .contains("cannot create the sandbox's namespaces"),
        "{}",
        result.err()
    );
    assert!(
        result.err().contains("--allow-degraded"),
        "{}",
        result.err()
    );

    let run = nested(&["--allow-degraded"]);
    let result = run.sandbox();
    assert_eq!(
        result.exit_code,
        Some(0),
        "{}\n{}",
        result.out(),
        result.err()
    );
    let inner: serde_json::Value = serde_json::from_str(result.out()).unwrap();
    assert_eq!(
        inner["sandbox"]["stdout"], "inner ran\n",
        "no UNIX socket may be made without a view"
    );
    let degraded = inner["sandbox"]["layers"]["degraded"].as_array().unwrap();
    assert!(
        degraded.iter().any(|d| d["layer"] == "containment"),
        "{degraded:?}"
    );
    assert_eq!(
        inner["sandbox"]["layers"]["containment"]["pid_namespace"],
        false
    );
}

#[test]
fn registry_tokens_in_cargo_home_stay_unreadable() {
    let cargo_home = visible_scratch("cargo-home");
    std::fs::create_dir_all(cargo_home.join("bin")).unwrap();
    std::fs::write(cargo_home.join("bin/tool"), "#!/bin/sh\necho tool ran\n").unwrap();
    std::fs::set_permissions(
        cargo_home.join("bin/tool"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(
        cargo_home.join("credentials.toml"),
        "[registry]\ntoken = \"cio-SECRET\"\n",
    )
    .unwrap();
    let run = Test::new()
        .env("CARGO_HOME", &cargo_home)
        .sandbox_sh(
            &[],
            "cat \"$CARGO_HOME/credentials.toml\"; \"$CARGO_HOME/bin/tool\"",
        )
        .run();
    let result = run.sandbox();
    assert!(!result.out().contains("cio-SECRET"), "{}", result.out());
    assert_eq!(result.out(), "tool ran\n", "{}", result.err());
    let _ = std::fs::remove_dir_all(cargo_home);
}

/// Starts `autocoder sandbox` on a command that marks its start with a file, and waits for it.
fn start_long_command(dir: &std::path::Path, marker: &str) -> std::process::Child {
    let child = std::process::Command::new(autocoder_bin())
        .args(["sandbox", "--workspace"])
        .arg(dir)
        .args(["--", "sh", "-c", &format!("touch started; sleep {marker}")])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", std::env::var_os("HOME").unwrap())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::util::wait_until_exists(&dir.join("started"), "the command");
    child
}

/// Waits (bounded) until no host process has `marker` in its command line.
fn gone_within(marker: &str, limit: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while process_with(marker) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    true
}

#[test]
fn terminating_the_sandbox_stops_the_command_and_cleans_up() {
    let dir = crate::util::TempDir::new();
    let m8 = marker(8);
    let child = start_long_command(dir.path(), &m8);
    let sandbox_pid = child.id();
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(sandbox_pid as i32, libc::SIGTERM) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(128 + libc::SIGTERM),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["sandbox"]["signal"], libc::SIGKILL);
    assert!(
        !process_with(&format!("sleep\0{m8}")),
        "the command outlived the sandbox"
    );
    if is_root() {
        // The run's cgroups are named after the sandbox's pid, under the pids hierarchy's copy of
        // our own cgroup.
        let parent = crate::util::own_cgroup("pids").unwrap();
        let prefix = format!("autocoder-{sandbox_pid}-");
        let left: Vec<_> = std::fs::read_dir(parent)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .collect();
        assert!(left.is_empty(), "cgroups left behind: {left:?}");
    }
}

#[test]
fn killing_the_sandbox_outright_still_kills_the_command() {
    let dir = crate::util::TempDir::new();
    let m9 = marker(9);
    let mut child = start_long_command(dir.path(), &m9);
    let sandbox = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        gone_within(&format!("sleep\0{m9}"), std::time::Duration::from_secs(5)),
        "the command outlived a killed sandbox"
    );
    // Its cgroups (made as root) could not be removed by it; the next run removes them.
    let memory_cgroup = crate::util::own_cgroup("memory");
    let left = |path: &std::path::Path| {
        std::fs::read_dir(path)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| {
                        e.file_name()
                            .to_string_lossy()
                            .starts_with(&format!("autocoder-{sandbox}-"))
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    if let Some(path) = memory_cgroup.filter(|path| left(path) > 0) {
        Test::new().sandbox_sh(&[], "true").run().expect_status(0);
        assert_eq!(left(&path), 0, "the killed sandbox's cgroup is still there");
    }
}

#[test]
fn no_setuid_files_can_be_made_in_the_workspace() {
    // As root they would be setuid-root on the host; as an ordinary user, other users could run
    // code as that user. O_TMPFILE creates without O_CREAT, and linkat names the file after.
    let script = "cp /usr/bin/id myid; chmod 4755 myid && echo SETUID; chmod 2755 . && echo SETGID-DIR; \
                  python3 -c \"import os; os.open('made', os.O_CREAT | os.O_WRONLY, 0o6755)\" 2>/dev/null && echo CREATED-SETUID; \
                  python3 -c \"import os; os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o6755)\" 2>/dev/null && echo TMPFILE-SETUID; \
                  mkdir -m 2755 gdir 2>/dev/null && echo SETGID-MKDIR; chmod 755 myid && echo plain chmod ok; \
                  python3 -c \"import os; os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o755)\" && echo plain tmpfile ok";
    for user in users() {
        let mut test = Test::new().sandbox_sh(&[], script);
        if let Some(uid) = user {
            test = test.run_as_user(uid);
        }
        let run = test.run().expect_status(0);
        let out = run.sandbox().out().to_string();
        assert_eq!(
            out,
            "plain chmod ok\nplain tmpfile ok\n",
            "user {user:?}: {}",
            run.sandbox().err()
        );
        use std::os::unix::fs::PermissionsExt;
        for name in ["myid", "."] {
            let mode = std::fs::metadata(run.dir.path().join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o6000, 0, "user {user:?}: {name} has mode {mode:o}");
        }
    }
}

#[test]
fn only_the_allow_list_is_in_view() {
    // A workspace script whose real location is elsewhere must not bring that place into view,
    // nor may a workspace directly in /tmp bring in the host's /tmp.
    let secret_dir = visible_scratch("elsewhere");
    std::fs::create_dir_all(secret_dir.join("bin")).unwrap();
    std::fs::write(secret_dir.join("secret.txt"), "TOPSECRET\n").unwrap();
    let tool = secret_dir.join("bin/tool");
    std::fs::write(&tool, "#!/bin/sh\ncat \"$0\"/../../secret.txt 2>/dev/null; echo tool ran; echo leak > /tmp/host-marker-$PPID\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let test = Test::new();
    std::os::unix::fs::symlink(&tool, test.path().join("run.sh")).unwrap();
    // The symlink's target is not in view: the command is not found there.
    let run = test
        .args(["sandbox", "--", "./run.sh"])
        .run()
        .expect_status(127);
    assert!(!run.stdout().contains("TOPSECRET") && !run.stderr().contains("TOPSECRET"));
    let leftovers: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("host-marker-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "wrote into the host's /tmp: {leftovers:?}"
    );
    let _ = std::fs::remove_dir_all(secret_dir);

    // Nothing but the view: no /run, /home, /srv; of our home only the toolchains.
    let run = Test::new()
        .sandbox_sh(
            &[],
            "ls / | tr '\\n' ' '; echo; ls -A ~root 2>/dev/null | tr '\\n' ' '",
        )
        .run()
        .expect_status(0);
    let out = run.sandbox().out().to_string();
    let (listing, home) = out.split_once('\n').unwrap();
    for absent in [" run ", " home ", " srv ", " mnt "] {
        assert!(
            !format!(" {listing}").contains(absent),
            "{absent} is in view: {listing}"
        );
    }
    assert!(
        listing.contains("usr") && listing.contains("tmp") && listing.contains("proc"),
        "{listing}"
    );
    for entry in home.split_whitespace() {
        assert!(
            [".cargo", ".rustup", ".pyenv"].contains(&entry),
            "{entry} of our home is in view: {home}"
        );
    }
}

#[test]
fn read_only_paths_stay_read_only_even_below_tmp_and_for_their_owner() {
    for user in users() {
        let test = Test::new();
        let ro = test.path().join("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::write(ro.join("f"), "original\n").unwrap();
        let mut test = test;
        if let Some(uid) = user {
            test = test.run_as_user(uid);
        }
        let workspace = test.path().join("ws");
        std::fs::create_dir(&workspace).unwrap();
        let script = format!(
            "echo changed > {f} && echo WROTE; chmod 666 {f} && echo CHMOD; touch -d 2000-01-01 {f} && echo UTIME; cat {f}; \
             echo out > /dev/stdout; echo err > /dev/stderr",
            f = ro.join("f").display()
        );
        let run = test
            .args(["sandbox", "--workspace"])
            .args([&workspace])
            .args(["--ro"])
            .args([&ro])
            .args(["--", "sh", "-c", &script])
            .run();
        let result = run.sandbox();
        assert_eq!(
            result.out(),
            "original\nout\n",
            "user {user:?}: {}",
            result.err()
        );
        assert!(
            result.err().ends_with("err\n"),
            "user {user:?}: {}",
            result.err()
        );
        assert_eq!(std::fs::read_to_string(ro.join("f")).unwrap(), "original\n");
    }
}

#[test]
fn a_workspace_below_a_closed_directory_is_writable() {
    if !is_root() {
        return;
    }
    let closed = visible_scratch("closed");
    std::fs::set_permissions(&closed, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let workspace = closed.join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let run = Test::new()
        .args(["sandbox", "--workspace"])
        .args([&workspace])
        .args(["--", "sh", "-c", "echo hi > f && cat f"])
        .run()
        .expect_status(0);
    assert_eq!(run.sandbox().out(), "hi\n", "{}", run.sandbox().err());
    let _ = std::fs::remove_dir_all(closed);
}

#[test]
fn host_sockets_outside_tmp_and_run_are_out_of_reach() {
    if !is_root() {
        return;
    }
    let dir = visible_scratch("sock");
    let path = dir.join("s");
    let _listener = UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let probe = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ntry:\n    s.connect({:?})\n    print('connected')\nexcept OSError as e:\n    print('blocked', e.errno)",
        path.display().to_string()
    );
    let run = Test::new()
        .args(["sandbox", "--", "python3", "-c", &probe])
        .run()
        .expect_status(0);
    assert!(
        run.sandbox().out().starts_with("blocked"),
        "{}",
        run.sandbox().out()
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_path_directory_the_sandbox_turned_into_a_link_is_not_mounted() {
    // A previous run replaced the project's `.venv/bin` (on PATH) with a link to a host
    // directory; the next run must not bring that directory into view.
    let secrets = visible_scratch("pathlink");
    std::fs::write(secrets.join("secret.txt"), "HOST-SECRET\n").unwrap();
    let tools = visible_scratch("pathtools");
    let tool = tools.join("hello-tool");
    std::fs::write(&tool, "#!/bin/sh\necho tool ran\n").unwrap();
    for dir in [&secrets, &tools] {
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for user in users() {
        let test = Test::new();
        std::fs::create_dir(test.path().join(".venv")).unwrap();
        std::os::unix::fs::symlink(&secrets, test.path().join(".venv/bin")).unwrap();
        let path = format!(
            "{}:{}:/usr/bin:/bin",
            test.path().join(".venv/bin").display(),
            tools.display()
        );
        let mut test = test.env("PATH", &path).args([
            "sandbox",
            "--",
            "sh",
            "-c",
            &format!(
                "hello-tool; cat {}/secret.txt || echo unreadable",
                secrets.display()
            ),
        ]);
        if let Some(uid) = user {
            test = test.run_as_user(uid);
        }
        let run = test.run().expect_status(0);
        let sandbox = run.sandbox();
        let out = sandbox.out();
        // Control: a real directory on PATH outside the workspace is still there.
        assert!(out.starts_with("tool ran\n"), "user {user:?}: {out}");
        assert!(
            out.ends_with("unreadable\n") && !out.contains("HOST-SECRET"),
            "user {user:?}: {out}"
        );
    }

    // A --rw path through such a link is refused outright.
    let test = Test::new();
    std::os::unix::fs::symlink(&secrets, test.path().join("cache")).unwrap();
    let run = test
        .args(["sandbox", "--rw", "cache", "--", "true"])
        .run()
        .expect_status(125);
    let refused = "a symbolic link in a place the sandbox can write";
    assert!(run.stderr().contains(refused), "{}", run.stderr());
    // And so is a --ro path through a link inside a --rw directory.
    let cache = visible_scratch("rwcache");
    std::os::unix::fs::symlink(&secrets, cache.join("tools")).unwrap();
    let run = Test::new()
        .args(["sandbox", "--rw"])
        .args([&cache])
        .args(["--ro"])
        .args([cache.join("tools")])
        .args(["--", "true"])
        .run()
        .expect_status(125);
    assert!(run.stderr().contains(refused), "{}", run.stderr());
    // And a --rw path through a link inside another --rw directory.
    let run = Test::new()
        .args(["sandbox", "--rw"])
        .args([&cache])
        .args(["--rw"])
        .args([cache.join("tools")])
        .args(["--", "true"])
        .run()
        .expect_status(125);
    assert!(run.stderr().contains(refused), "{}", run.stderr());
    let _ = std::fs::remove_dir_all(cache);
    let _ = std::fs::remove_dir_all(secrets);
    let _ = std::fs::remove_dir_all(tools);
}

/// Compiles a C probe with gcc, into a temp dir that lives as long as the first value.
fn build_probe(source: &str) -> (crate::util::TempDir, PathBuf) {
    let dir = crate::util::TempDir::new();
    let source = dir.write("probe.c", source);
    let binary = dir.path().join("probe");
    let built = std::process::Command::new("gcc")
        .arg("-O1")
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .output()
        .expect("gcc is installed (.ci/run)");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    (dir, binary)
}

/// A C program that makes each call the syscall filter refuses, and a few it allows, and prints
/// `NAME ERRNO` for each (0: the call succeeded).
const SYSCALL_PROBE: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *name, long ret) {
    printf("%s %d\n", name, ret < 0 ? errno : 0);
}

/* Calls clone(flags); a child that is made exits at once. */
static long clone_with(unsigned long flags) {
    long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid(pid, 0, 0);
    return pid;
}

int main(void) {
    char buffer[64] = {0};
    show("io_uring_setup", syscall(SYS_io_uring_setup, 1, buffer));
    show("keyctl", syscall(SYS_keyctl, 0, -3, 0));
    show("bpf", syscall(SYS_bpf, 0, buffer, 0));
    show("perf_event_open", syscall(SYS_perf_event_open, buffer, 0, -1, -1, 0));
    show("userfaultfd", syscall(SYS_userfaultfd, 0));
    show("unshare", unshare(CLONE_NEWUSER));
    show("clone-newuser", clone_with(CLONE_NEWUSER));
    show("clone-newnet", clone_with(CLONE_NEWNET));
    show("clone-plain", clone_with(0));
    show("clone3", syscall(SYS_clone3, buffer, 64));
    show("openat2", syscall(SYS_openat2, AT_FDCWD, ".", buffer, 24));
    /* open_tree_attr (467, Linux 6.15): without OPEN_TREE_CLONE no capability is asked. */
    show("open_tree_attr", syscall(467, AT_FDCWD, ".", 0, 0, 0));
    show("chroot", chroot("/"));
    show("socket-inet", socket(AF_INET, SOCK_DGRAM, 0));
    show("socket-netlink", socket(AF_NETLINK, SOCK_RAW, 0));
    show("socket-unix", socket(AF_UNIX, SOCK_STREAM, 0));
    show("tiocsti", ioctl(0, TIOCSTI, "x"));
    show("x32-getpid", syscall(0x40000000 | SYS_getpid));
    fflush(stdout);
    /* A 32-bit system call from a 64-bit process: the filter kills it. */
    pid_t child = fork();
    if (child == 0) {
        int eax = 20; /* getpid in the i386 table */
        __asm__ volatile("int $0x80" : "+a"(eax));
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("int80-signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 0;
}
"#;

#[test]
fn the_syscall_filter_refuses_what_it_lists_and_nothing_else() {
    let (_probe_dir, binary) = build_probe(SYSCALL_PROBE);
    let (eperm, enosys) = (libc::EPERM.to_string(), libc::ENOSYS.to_string());
    let expected = [
        ("io_uring_setup", &eperm),
        ("keyctl", &eperm),
        ("bpf", &eperm),
        ("perf_event_open", &eperm),
        ("userfaultfd", &eperm),
        ("unshare", &eperm),
        ("clone-newuser", &eperm),
        ("clone-newnet", &eperm),
        ("clone-plain", &"0".to_string()),
        ("clone3", &enosys),
        ("openat2", &enosys),
        ("open_tree_attr", &eperm),
        ("chroot", &eperm),
        // IPv4 and IPv6 sockets reach nothing but the command's own namespace.
        ("socket-inet", &"0".to_string()),
        ("socket-netlink", &eperm),
        ("socket-unix", &"0".to_string()),
        ("tiocsti", &eperm),
        ("x32-getpid", &enosys),
        ("int80-signal", &libc::SIGSYS.to_string()),
    ];
    for user in users() {
        let mut test = Test::new();
        std::fs::copy(&binary, test.path().join("probe")).unwrap();
        test = test.args(["sandbox", "--", "./probe"]);
        if let Some(uid) = user {
            test = test.run_as_user(uid);
        }
        let run = test.run().expect_status(0);
        let out = run.sandbox().out().to_string();
        let got: Vec<(&str, &str)> = out.lines().filter_map(|l| l.split_once(' ')).collect();
        let want: Vec<(&str, &str)> = expected.iter().map(|(n, e)| (*n, e.as_str())).collect();
        assert_eq!(got, want, "user {user:?}: {out}{}", run.sandbox().err());
    }
}

/// Asks the kernel about the mount above the sandbox's root: `statmount` and `listmount` of it,
/// by the unique id `statmount` gives for the root's parent. Prints the errno of each, or `none`
/// when the root has no parent (it is the namespace's own root) or the kernel has neither call
/// (before Linux 6.8).
const MOUNT_PROBE: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct mnt_id_req { uint32_t size, spare; uint64_t mnt_id, param; };
/* The head of struct statmount (linux/mount.h), up to the parent's id. */
struct statmount_head {
    uint32_t size, mnt_opts; uint64_t mask; uint32_t dev_major, dev_minor; uint64_t magic;
    uint32_t sb_flags, fs_type; uint64_t mnt_id, mnt_parent_id;
};

static long statmount_of(uint64_t id, void *buffer, size_t size) {
    struct mnt_id_req req = { sizeof req, 0, id, 0x2 /* STATMOUNT_MNT_BASIC */ };
    return syscall(457, &req, buffer, size, 0);
}

int main(void) {
    struct statx root;
    static uint64_t buffer[512];
    if (statx(AT_FDCWD, "/", 0, 0x4000 /* STATX_MNT_ID_UNIQUE */, &root) != 0) {
        printf("statx %d\n", errno);
        return 1;
    }
    if (!(root.stx_mask & 0x4000) || (statmount_of(root.stx_mnt_id, buffer, sizeof buffer) != 0
                                      && errno == ENOSYS)) {
        printf("outside-statmount none\noutside-listmount none\n");
        return 0;
    }
    if (statmount_of(root.stx_mnt_id, buffer, sizeof buffer) != 0) {
        printf("statmount-root %d\n", errno);
        return 1;
    }
    uint64_t parent = ((struct statmount_head *)buffer)->mnt_parent_id;
    if (parent == root.stx_mnt_id) {
        printf("outside-statmount none\noutside-listmount none\n");
        return 0;
    }
    long got = statmount_of(parent, buffer, sizeof buffer);
    printf("outside-statmount %d\n", got < 0 ? errno : 0);
    struct mnt_id_req req = { sizeof req, 0, parent, 0 };
    got = syscall(458, &req, buffer, 64, 0);
    printf("outside-listmount %d\n", got < 0 ? errno : 0);
    return 0;
}
"#;

#[test]
fn the_hosts_mounts_stay_out_of_reach() {
    let (_probe_dir, binary) = build_probe(MOUNT_PROBE);
    let script = "./probe; \
                  echo mountinfo; cat /proc/self/mountinfo; echo end; \
                  for up in /.. /proc/../.. /usr/../../.. /tmp/.. \"$PWD/../../../../..\"; do \
                    [ \"$(stat -c %d:%i \"$up\")\" = \"$(stat -c %d:%i /)\" ] || echo \"climbed $up\"; \
                  done; \
                  ls /usr/bin/env >/dev/null && echo control";
    for user in users() {
        let mut test = Test::new();
        std::fs::copy(&binary, test.path().join("probe")).unwrap();
        test = test.sandbox_sh(&[], script);
        if let Some(uid) = user {
            test = test.run_as_user(uid);
        }
        let run = test.run().expect_status(0);
        let out = run.sandbox().out().to_string();
        for call in ["outside-statmount", "outside-listmount"] {
            let errno = out
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{call} ")))
                .unwrap_or_else(|| panic!("no {call} line: {out}"));
            assert!(
                errno == "none" || errno == libc::EPERM.to_string(),
                "user {user:?}: the mount above the root answered {call}: {out}"
            );
        }
        // The mount table lists the view alone: its root is the sandbox's tmpfs, and every other
        // mount hangs below one listed.
        let table = out.split("mountinfo\n").nth(1).unwrap();
        let table = table.split("end\n").next().unwrap();
        let mounts: Vec<Vec<&str>> = table.lines().map(|l| l.split(' ').collect()).collect();
        let ids: Vec<&str> = mounts.iter().map(|m| m[0]).collect();
        let root = mounts.iter().find(|m| m[4] == "/").expect("a mount at /");
        assert_eq!(root[root.len() - 3], "tmpfs", "user {user:?}: {table}");
        for mount in mounts.iter().filter(|m| m[4] != "/") {
            assert!(
                ids.contains(&mount[1]),
                "user {user:?}: {} hangs below a mount not in view: {table}",
                mount[4]
            );
        }
        assert!(!out.contains("climbed"), "user {user:?}: {out}");
        assert!(out.ends_with("control\n"), "user {user:?}: {out}");
    }
}

/// Undoes the host mounts and loop device a test made, whatever happens to it.
struct HostMounts {
    mounts: Vec<PathBuf>,
    loop_device: Option<String>,
}

impl Drop for HostMounts {
    fn drop(&mut self) {
        for mount in self.mounts.iter().rev() {
            let _ = std::process::Command::new("umount").arg(mount).status();
        }
        if let Some(device) = &self.loop_device {
            let _ = std::process::Command::new("losetup")
                .args(["-d", device])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

#[test]
fn a_filesystem_the_host_unmounts_during_a_run_is_let_go() {
    if !is_root() {
        eprintln!("skipped: mounting a loop device takes root");
        return;
    }
    let run = |program: &str, args: &[&std::ffi::OsStr]| -> String {
        crate::util::stdout_of(std::process::Command::new(program).args(args))
            .trim()
            .to_string()
    };
    let scratch = crate::util::TempDir::new();
    let shared = scratch.path().join("shared");
    let inner = shared.join("inner");
    let image = scratch.path().join("fs.img");
    let mut host = HostMounts {
        mounts: Vec::new(),
        loop_device: None,
    };
    // A shared mount, as systemd makes them all: the sandbox's copy of it follows the host's
    // unmounts below it.
    std::fs::create_dir(&shared).unwrap();
    run(
        "mount",
        &[
            "-t".as_ref(),
            "tmpfs".as_ref(),
            "tmpfs".as_ref(),
            shared.as_os_str(),
        ],
    );
    host.mounts.push(shared.clone());
    run("mount", &["--make-shared".as_ref(), shared.as_os_str()]);
    std::fs::create_dir(&inner).unwrap();
    std::fs::File::create(&image)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    run("mkfs.ext4", &["-q".as_ref(), image.as_os_str()]);
    let device = run(
        "losetup",
        &["-f".as_ref(), "--show".as_ref(), image.as_os_str()],
    );
    host.loop_device = Some(device.clone());
    run("mount", &[device.as_ref(), inner.as_os_str()]);
    host.mounts.push(inner.clone());

    let workspace = crate::util::TempDir::new();
    let mut sandbox = start_long_command(workspace.path(), "30.4313");
    run("umount", &[inner.as_os_str()]);
    host.mounts.pop();
    // Detached while mounted somewhere, a loop device goes once its last mount is gone.
    run("losetup", &["-d".as_ref(), device.as_ref()]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let held = || run("losetup", &["-l".as_ref()]).contains(image.to_str().unwrap());
    while held() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let still_held = held();
    // SAFETY: signalling the sandbox we started; it stops its command and cleans up.
    unsafe { libc::kill(sandbox.id() as libc::pid_t, libc::SIGTERM) };
    let _ = sandbox.wait();
    assert!(
        !still_held,
        "the sandbox kept {device} (unmounted on the host) in use while it ran"
    );
    // Control: the command ran all along.
    assert!(workspace.path().join("started").exists());
}

#[test]
fn a_workspace_swapped_with_a_link_during_the_checks_never_leads_elsewhere() {
    // What a second sandboxed run can do where the next one's workspace is looked for: swap a
    // directory and a link to somewhere else, over and over, while the victim starts.
    let test = Test::new();
    let secret = test.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::create_dir(test.path().join("ws")).unwrap();
    std::os::unix::fs::symlink(&secret, test.path().join("link")).unwrap();
    let swapper =
        crate::util::PathSwapper::start(&test.path().join("ws"), &test.path().join("link"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let (mut ran, mut refused) = (0, 0);
    while ran + refused < 300 && std::time::Instant::now() < deadline {
        let run = Test::new_like(&test)
            .args(["sandbox", "--workspace"])
            .arg(test.path().join("ws"))
            .args(["--", "touch", "planted"])
            .run();
        match run.status() {
            0 => ran += 1,
            _ => refused += 1,
        }
        if secret.join("planted").exists() {
            break;
        }
    }
    // Stopped before anything is asserted, so that the test's directory can be removed.
    drop(swapper);
    assert!(
        !secret.join("planted").exists(),
        "a run wrote into the directory the link leads to (after {ran} runs, {refused} refused)"
    );
    assert!(
        ran > 0,
        "no run got through ({refused} refused): the test proves nothing"
    );
}

#[test]
fn a_bind_mount_of_the_root_or_the_home_is_no_workspace() {
    if !is_root() {
        eprintln!("skipped: needs root to bind-mount / (unshare -m)");
        return;
    }
    let dir = crate::util::TempDir::new();
    let home = crate::util::TempDir::new();
    for (source, flag) in [
        ("/", "--workspace"),
        ("/etc", "--workspace"),
        (home.path().to_str().unwrap(), "--workspace"),
        ("/", "--rw"),
    ] {
        let script = format!(
            "mkdir -p x && mount --bind {source} x && HOME={home} {bin} sandbox {flag} x -- \
             sh -c 'echo planted > x-planted'; echo \"status $?\"; \
             test -e {source}/x-planted && echo WROTE && rm -f {source}/x-planted",
            home = home.path().display(),
            bin = autocoder_bin().display(),
        );
        let run = crate::util::sh_in_private_mounts(dir.path(), &script);
        let out = String::from_utf8_lossy(&run.stdout);
        let err = String::from_utf8_lossy(&run.stderr);
        assert_eq!(out, "status 125\n", "{source} as {flag}: {err}");
        assert!(
            err.contains("the command could write everything in it"),
            "{source} as {flag}: {err}"
        );
    }
    // The control: a project's directory bound elsewhere is one.
    let script = format!(
        "mkdir -p project x && mount --bind project x && {bin} sandbox --workspace x -- touch made >/dev/null && ls project",
        bin = autocoder_bin().display(),
    );
    let run = crate::util::sh_in_private_mounts(dir.path(), &script);
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "made\n",
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn a_home_on_path_is_not_mounted() {
    // `PATH=~:...` (or a directory holding the home, or one holding keys) must not bring the
    // home into view: its .ssh with it.
    let home = crate::util::TempDir::new();
    let key = home.write(".ssh/id_ed25519", "PRIVATE KEY\n");
    let keys_elsewhere = crate::util::TempDir::new();
    keys_elsewhere.write(".aws/credentials", "AWS KEY\n");
    let tools = crate::util::TempDir::new();
    tools.write("hello-tool", "#!/bin/sh\necho tool ran\n");
    std::fs::set_permissions(
        tools.path().join("hello-tool"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}:{}:/usr/bin:/bin",
        home.path().display(),
        keys_elsewhere.path().display(),
        tools.path().display()
    );
    let run = Test::new()
        .env("HOME", home.path())
        .env("PATH", &path)
        .args(["sandbox", "--", "sh", "-c"])
        .arg(format!(
            "hello-tool; cat {} {}/.aws/credentials 2>/dev/null || echo unreadable",
            key.display(),
            keys_elsewhere.path().display()
        ))
        .run()
        .expect_status(0);
    let result = run.sandbox();
    assert_eq!(result.out(), "tool ran\nunreadable\n", "{}", result.err());
    let left_out = result.layers["filesystem"]["left_out"].to_string();
    assert!(
        left_out.contains("the home directory") && left_out.contains("it holds .aws"),
        "{left_out}"
    );
    assert!(
        !left_out.contains(tools.path().to_str().unwrap()),
        "{left_out}"
    );
}

#[test]
fn the_hosts_network_is_out_of_sight_and_its_abstract_sockets_out_of_reach() {
    use std::os::linux::net::SocketAddrExt;
    for user in users() {
        let tag = format!(
            "autocoder-test-abstract-{}-{}",
            std::process::id(),
            user.unwrap_or(0)
        );
        // A host listener the command must not see in /proc/net.
        let host = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = format!("{:04X}", host.local_addr().unwrap().port());
        let script = format!(
            "import socket, os, time\n\
             s = socket.socket(socket.AF_UNIX); s.bind('\\0{tag}'); s.listen(1)\n\
             tcp = open('/proc/net/tcp').read(); unix = open('/proc/net/unix').read()\n\
             print('host-tcp' if ':{port} ' in tcp else 'no-host-tcp')\n\
             print('host-unix' if 'docker.sock' in unix or '/run/' in unix else 'no-host-unix')\n\
             print(' '.join(sorted(os.listdir('/sys/class/net'))), flush=True)\n\
             time.sleep(3)"
        );
        let mut test = Test::new();
        if let Some(uid) = user {
            test = test.run_as_user(uid);
        }
        // Meanwhile, from the host: the name the command binds is not there.
        let name = tag.clone();
        let knocker = std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_millis(2500);
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
            let mut reached = false;
            while std::time::Instant::now() < deadline {
                reached |= std::os::unix::net::UnixStream::connect_addr(&addr).is_ok();
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            reached
        });
        let run = test.args(["sandbox", "--", "python3", "-c", &script]).run();
        let result = run.sandbox();
        assert!(
            !knocker.join().unwrap(),
            "user {user:?}: the host connected to the command's abstract socket"
        );
        assert_eq!(
            result.out(),
            "no-host-tcp\nno-host-unix\nlo\n",
            "user {user:?}: {}",
            result.err()
        );
        drop(host);
    }
}

/// Both ends of a TCP connection on the loopback: (ours to give, the peer's).
fn connection() -> (std::net::TcpStream, std::net::TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (server, _) = listener.accept().unwrap();
    (client, server)
}

/// `autocoder sandbox ARGS` started on `stdin`, in a directory of its own: its result.
fn sandbox_on(stdin: std::net::TcpStream, args: &[&str]) -> serde_json::Value {
    let run = std::process::Command::new(autocoder_bin())
        .arg("sandbox")
        .args(args)
        .stdin(std::process::Stdio::from(std::os::fd::OwnedFd::from(stdin)))
        .current_dir(crate::util::TempDir::new().path())
        .output()
        .unwrap();
    serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&run.stderr)))
}

#[test]
fn a_network_socket_on_stdin_is_no_way_out() {
    use std::io::Write;
    // Started on a connection (inetd, a CI agent's socket), the command must not write to it
    // with the network off; what comes in on it still reaches the command.
    let (client, mut server) = connection();
    server.write_all(b"from the peer\n").unwrap();
    server.shutdown(std::net::Shutdown::Write).unwrap();
    let result = sandbox_on(client, &["--", "sh", "-c", "echo LEAKED >&0; cat"]);
    assert_eq!(result["sandbox"]["stdout"], "from the peer\n", "{result}");
    server
        .set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .unwrap();
    let mut got = Vec::new();
    let _ = server.read_to_end(&mut got);
    assert!(
        !String::from_utf8_lossy(&got).contains("LEAKED"),
        "the command wrote to the connection: {}",
        String::from_utf8_lossy(&got)
    );
}

#[test]
fn a_silent_connection_on_stdin_does_not_hold_the_command() {
    // The peer sends nothing and keeps the connection open: the command, which does not read
    // its stdin, ends at once (a relay splicing from the socket held the pipe, and the command
    // with it, until the peer spoke or closed: past the timeout).
    let (client, server) = connection();
    // Closed when the run is over, or after 30 s: a run held by it ends then (bounded).
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let peer = std::thread::spawn(move || {
        let _ = wait.recv_timeout(std::time::Duration::from_secs(30));
        let _ = server.shutdown(std::net::Shutdown::Both);
    });
    let result = sandbox_on(client, &["--timeout", "10s", "--", "true"]);
    let _ = done.send(());
    peer.join().unwrap();
    assert_eq!(result["sandbox"]["timed_out"], false, "{result}");
    assert_eq!(result["sandbox"]["exit_code"], 0, "{result}");
}

/// Issue 39: what git on the host obeys in the workspace is read-only to a sandboxed command:
/// `.git`, a submodule's `.git` file, the hooks directory and an included config file the
/// repository's config names, none of whose directories can be renamed away; what it names and
/// is missing, when the command makes it, is moved away after; and the command cannot read ours
/// (`--env KEY=SECRET`) in `/proc/1/cmdline`, its init being a copy of us.
#[test]
fn what_git_obeys_is_read_only_and_our_command_line_is_not_shown() {
    for user in [None, Some(4243)] {
        let test = match user {
            Some(uid) => Test::new().run_as_user(uid),
            None => Test::new(),
        };
        let dir = test.path().to_path_buf();
        test.dir().write("tools/hooks/pre-commit", "#!/bin/sh\n");
        test.dir().write("conf/shared.gitconfig", "[core]\n");
        test.dir().write(
            ".gitmodules",
            "[submodule \"sub\"]\n\tpath = sub\n\turl = ../sub\n",
        );
        test.dir()
            .write("sub/.git", "gitdir: ../.git/modules/sub\n");
        git(&dir, &["init", "-q"]);
        git(&dir, &["config", "core.hooksPath", "tools/hooks"]);
        git(
            &dir,
            &["config", "include.path", "../conf/shared.gitconfig"],
        );
        git(
            &dir,
            &["config", "--add", "include.path", "../local.gitconfig"],
        );
        let script =
            "for f in .git/config tools/hooks/pre-commit conf/shared.gitconfig sub/.git; do \
                      echo pwned >> $f && echo wrote $f; done; \
                      for d in tools conf sub; do mv $d $d.old && echo moved $d; done; \
                      printf '[core]\\n\\tfsmonitor = x\\n' > local.gitconfig; echo ok > mine; \
                      tr '\\0' ' ' < /proc/1/cmdline";
        let run = test
            .args([
                "sandbox",
                "--env",
                "PLANTED_TOKEN=do-not-show-0123456789",
                "--",
            ])
            .args(["sh", "-c", script])
            .run()
            .expect_status(0);
        let result = run.sandbox();
        assert!(
            !result.out().contains("wrote"),
            "user {user:?}: {}",
            result.out()
        );
        assert!(
            !result.out().contains("moved"),
            "user {user:?}: {}",
            result.out()
        );
        assert!(
            !result.out().contains("do-not-show"),
            "user {user:?}: {}",
            result.out()
        );
        assert!(
            dir.join("mine").exists(),
            "the workspace itself stays writable"
        );
        for file in [
            "tools/hooks/pre-commit",
            "conf/shared.gitconfig",
            "sub/.git",
        ] {
            assert!(
                !std::fs::read_to_string(dir.join(file))
                    .unwrap()
                    .contains("pwned"),
                "user {user:?}: {file}"
            );
        }
        let read_only = result.layers["filesystem"]["read_only"].to_string();
        for held in [".git", "tools/hooks", "conf/shared.gitconfig", "sub/.git"] {
            assert!(
                read_only.contains(&format!("{}\"", dir.join(held).display())),
                "{held}: {read_only}"
            );
        }
        // What it made where git would look is moved away, and said.
        assert!(!dir.join("local.gitconfig").exists(), "user {user:?}");
        assert!(dir.join("local.gitconfig.autocoder-quarantine").exists());
        assert_eq!(
            result.quarantined,
            [
                serde_json::json!({"path": "local.gitconfig", "moved_to": "local.gitconfig.autocoder-quarantine"})
            ]
        );
        assert!(
            run.stderr().contains("which git on the host would obey"),
            "{}",
            run.stderr()
        );
    }
}

/// A `.git` made in a workspace that has none (a package of a monorepo, or no repository at
/// all) would be the repository git finds there: it is moved away after the command.
#[test]
fn a_git_directory_made_where_there_was_none_is_moved_away() {
    let test = Test::new();
    let repo = test.path().to_path_buf();
    test.dir().write("pkg/a.py", "x = 1\n");
    git(&repo, &["init", "-q"]);
    let run = test
        .args(["sandbox", "--workspace", "pkg", "--"])
        .args([
            "sh",
            "-c",
            "git init -q . 2>/dev/null || mkdir .git; echo x > .git/config",
        ])
        .run()
        .expect_status(0);
    assert!(!repo.join("pkg/.git").exists());
    assert!(repo.join("pkg/.git.autocoder-quarantine").exists());
    assert_eq!(run.sandbox().quarantined.len(), 1);
}
