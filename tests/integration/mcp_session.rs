//! An MCP client session over pipes, for the tests: `autocoder mcp` started with a scrubbed
//! environment, one JSON-RPC message per line each way, answers awaited with a time limit.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::autocoder_as;

pub(crate) struct Session {
    pub child: Child,
    /// None once closed (the server then winds down).
    pub stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Session {
    pub(crate) fn start(root: &Path) -> Session {
        Session::start_with(&[root], None, None)
    }

    /// A server on `roots`, allowed at most `open_files` descriptors if given, run as the user
    /// `user` (from a copy of the binary in `roots[0]`) if given.
    pub(crate) fn start_with(
        roots: &[&Path],
        open_files: Option<u64>,
        user: Option<u32>,
    ) -> Session {
        let mut command = autocoder_as(user, roots[0]);
        command.arg("mcp");
        for root in roots {
            command.arg("--root").arg(root);
        }
        if let Some(limit) = open_files {
            // SAFETY: setrlimit is async-signal-safe.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
                    let rlimit = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                })
            };
        }
        Session::spawn(command)
    }

    /// A server started by `command` (which holds `autocoder mcp` and its flags).
    pub(crate) fn spawn(mut command: Command) -> Session {
        let mut child = command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Session {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    pub(crate) fn send_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{text}").unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    #[track_caller]
    pub(crate) fn receive(&self) -> Value {
        let line = self
            .lines
            // A guard against a hang, not a measure: a loaded machine runs a test suite slowly.
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer within 60 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"))
    }

    #[track_caller]
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send_raw(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let answer = self.receive();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    #[track_caller]
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))["result"].clone()
    }

    /// A tool result that must be an error: its text.
    #[track_caller]
    pub(crate) fn call_error(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], true, "{result}");
        result["content"][0]["text"].as_str().unwrap().to_string()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// A session past the handshake (protocol 2025-11-25).
pub(crate) fn initialized(root: &Path) -> Session {
    let mut session = Session::start(root);
    let answer = session.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}));
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    session.send_raw(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
    session
}
