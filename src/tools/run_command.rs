//! `run_command`: a command in the sandbox, in the workspace, never on the host directly. The
//! sandbox runs as a process of its own (`autocoder sandbox`), which a cancellation stops with
//! SIGTERM: it kills the command and everything it started, and cleans up.

use std::io::Write;
use std::os::fd::RawFd;
use std::process::Stdio;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{tool_error, Call, Context, ToolError};
use crate::text::json_head_and_tail;

pub(crate) const DESCRIPTION: &str = "Run a command inside the sandbox, in the workspace (network off, only the workspace \
writable, limits on memory, processes and time). Give argv (preferred) or command (a shell line run by sh -c). Returns \
the exit code, whether it timed out or hit a limit, and stdout and stderr (long output keeps its head and tail). Each \
call starts fresh: no shell state carries over.";

/// Output kept per stream, and the bytes of JSON it may take in the result.
const MAX_OUTPUT: &str = "16K";
const OUTPUT_JSON_BYTES: usize = 16 << 10;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// The program and its arguments.
    #[serde(default)]
    pub argv: Option<Vec<String>>,
    /// A shell command line, run by `sh -c` (when argv is not given).
    #[serde(default)]
    pub command: Option<String>,
    /// Directory to run in, relative to the workspace root or absolute inside any root (default:
    /// the first root). The command sees only the root it runs in.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Seconds before the command is killed (default 120, at most 3600).
    #[serde(default)]
    #[schemars(range(min = 1, max = 3600))]
    pub timeout_sec: Option<u64>,
    /// Text for the command's standard input.
    #[serde(default)]
    pub stdin: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Output {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// memory, pids, time, output or file_size.
    pub limit_hit: Option<String>,
    pub stdout: String,
    pub stderr: String,
    pub duration_ms: u64,
}

pub(crate) fn call(context: &Context, call: &Call, input: Input) -> Result<Output, ToolError> {
    let mut argv = match (input.argv, input.command) {
        (Some(argv), None) if !argv.is_empty() => argv,
        (None, Some(command)) if !command.trim().is_empty() => {
            vec!["sh".into(), "-c".into(), command]
        }
        _ => {
            return Err(tool_error(
                "give either argv (a non-empty list) or command (a shell line), not both",
            ))
        }
    };
    // The workspace is the root the command starts in.
    let mut root = context.roots.confine(".")?;
    if let Some(cwd) = &input.cwd {
        let dir = context.roots.confine(cwd)?;
        root = dir.beside(std::path::PathBuf::new());
        drop(crate::workspace::jail::open(
            &dir,
            libc::O_RDONLY | libc::O_DIRECTORY,
            0,
        )?);
        // Relative to the workspace, where the command starts.
        let relative = dir.relative.display().to_string();
        let mut wrapped = vec![
            "sh".into(),
            "-c".into(),
            "cd \"$0\" && exec \"$@\"".into(),
            if relative.is_empty() {
                ".".into()
            } else {
                format!("./{relative}")
            },
        ];
        wrapped.append(&mut argv);
        argv = wrapped;
    }
    let timeout = input.timeout_sec.unwrap_or(120).clamp(1, 3600);
    let sandbox = in_sandbox(
        std::os::fd::AsRawFd::as_raw_fd(&root.root_fd),
        &["--max-output", MAX_OUTPUT],
        argv,
        input.stdin.as_deref(),
        call,
        timeout,
    )?;
    let text = |key: &str| {
        sandbox
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    Ok(Output {
        exit_code: sandbox
            .get("exit_code")
            .and_then(Value::as_i64)
            .map(|c| c as i32),
        signal: sandbox
            .get("signal")
            .and_then(Value::as_i64)
            .map(|s| s as i32),
        timed_out: sandbox
            .get("timed_out")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        limit_hit: sandbox
            .get("limit_hit")
            .and_then(Value::as_str)
            .map(String::from),
        stdout: shown_output(text("stdout")),
        stderr: shown_output(text("stderr")),
        duration_ms: sandbox
            .get("duration_ms")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    })
}

/// A stream as the result shows it. The sandbox keeps 16 KB of it (head and tail, with a note
/// of what it left out); as JSON that can be six times more (a control character's escape), so
/// it is cut again to OUTPUT_JSON_BYTES, one note then counting both cuts.
fn shown_output(text: String) -> String {
    const NOTE: &str = "[... autocoder: ";
    let cut_by_sandbox = text.find(NOTE).and_then(|at| {
        let count = &text[at + NOTE.len()..];
        count[..count.find(' ')?].parse::<u64>().ok()
    });
    let shown = json_head_and_tail(text.clone(), OUTPUT_JSON_BYTES, 0);
    match cut_by_sandbox {
        // The sandbox's note went with the middle: its count joins the new note's.
        Some(count) if !shown.contains(NOTE) => json_head_and_tail(text, OUTPUT_JSON_BYTES, count),
        _ => shown,
    }
}

/// Runs `argv` in `autocoder sandbox` on the workspace `root` with `flags`, for at most
/// `timeout` seconds; returns the sandbox's result (exit code, output, limits).
fn in_sandbox(
    root_fd: RawFd,
    flags: &[&str],
    argv: Vec<String>,
    stdin: Option<&str>,
    call: &Call,
    timeout: u64,
) -> Result<Value, ToolError> {
    let mut args = vec![
        "sandbox".to_string(),
        "--workspace".into(),
        ".".into(),
        "--timeout".into(),
        format!("{timeout}s"),
    ];
    args.extend(flags.iter().map(|flag| flag.to_string()));
    args.push("--".into());
    args.extend(argv);
    let mut result = run_self(
        &args,
        root_fd,
        stdin,
        call,
        Duration::from_secs(timeout + 30),
        Progress::Clock,
        &[],
    )?;
    result
        .get_mut("sandbox")
        .map(Value::take)
        .ok_or_else(|| tool_error("the sandbox gave no result"))
}

/// What a run of this binary reports as its progress.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Its time so far, each second.
    Clock,
    /// Each line it writes on stderr (heal's steps), as it comes.
    StderrLines,
}

/// Runs this binary with `args` in the root open at `root_fd` (`sandbox::reexec`), reporting
/// progress at the start and then as `progress` says, and stopping it (SIGTERM) when the call is
/// cancelled or `limit` passes, without the variables `hidden`; returns the JSON document it
/// wrote.
pub(crate) fn run_self(
    args: &[String],
    root_fd: RawFd,
    stdin: Option<&str>,
    call: &Call,
    limit: Duration,
    progress: Progress,
    hidden: &[&str],
) -> Result<Value, ToolError> {
    let mut command = crate::sandbox::reexec::own_command(root_fd).map_err(ToolError)?;
    for name in hidden {
        command.env_remove(name);
    }
    let mut child = command
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| tool_error(format!("cannot start the sandbox: {err}")))?;
    let (out_reader, err_reader, lines) = start_readers(&mut child, stdin, progress);
    let mut lines_seen = 0;
    // A thread waits for the exit, so that it is seen at once; this one watches the clock and the
    // cancellation meanwhile.
    let pid = child.id() as i32;
    let (exited, exit) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = exited.send(child.wait());
    });
    let started = Instant::now();
    let mut last_report = Instant::now();
    let mut stopped = false;
    call.progress(0.0, "started");
    let status = loop {
        match exit.recv_timeout(Duration::from_millis(20)) {
            Ok(status) => break status.map_err(|err| tool_error(err.to_string()))?,
            Err(RecvTimeoutError::Disconnected) => return Err(tool_error("lost the sandbox")),
            Err(RecvTimeoutError::Timeout) => {}
        }
        if !stopped && (call.is_cancelled() || started.elapsed() > limit) {
            // SAFETY: signalling our own child, not yet reaped (its exit was not received).
            unsafe { libc::kill(pid, libc::SIGTERM) };
            stopped = true;
        }
        for line in lines.try_iter() {
            lines_seen += 1;
            call.progress(lines_seen as f64, &line);
        }
        if progress == Progress::Clock && last_report.elapsed() >= Duration::from_secs(1) {
            call.progress(
                started.elapsed().as_secs_f64(),
                &format!("running for {} s", started.elapsed().as_secs()),
            );
            last_report = Instant::now();
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    document_of(args, &stdout, &stderr, status, call.is_cancelled())
}

/// Writes `stdin` to the child (a thread of its own) and reads its stdout whole and its stderr
/// by lines, each line also sent on the channel returned when `progress` is by lines.
fn start_readers(
    child: &mut std::process::Child,
    stdin: Option<&str>,
    progress: Progress,
) -> (
    std::thread::JoinHandle<String>,
    std::thread::JoinHandle<String>,
    std::sync::mpsc::Receiver<String>,
) {
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("piped");
        let text = text.to_string();
        std::thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        });
    }
    let mut stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    let (line_sender, lines) = std::sync::mpsc::channel::<String>();
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
            let Ok(line) = line else { break };
            if progress == Progress::StderrLines {
                let _ = line_sender.send(line.clone());
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    (out_reader, err_reader, lines)
}

/// The document `autocoder ARGS` wrote on stdout; what it said on stderr when there is none,
/// and where a cancelled repair left its change.
fn document_of(
    args: &[String],
    stdout: &str,
    stderr: &str,
    status: std::process::ExitStatus,
    cancelled: bool,
) -> Result<Value, ToolError> {
    if cancelled {
        // A repair stopped keeps what it found in a patch: said, as no result is sent.
        let patch = serde_json::from_str::<Value>(stdout.trim())
            .ok()
            .and_then(|document| document.pointer("/heal/patch_file").cloned())
            .and_then(|path| path.as_str().map(str::to_string));
        return Err(tool_error(match patch {
            Some(path) => format!("cancelled; the change so far is in {path}"),
            None => "cancelled".into(),
        }));
    }
    serde_json::from_str(stdout.trim()).map_err(|_| {
        tool_error(format!(
            "autocoder {} failed (exit {}): {}",
            args.first().map_or("", String::as_str),
            status.code().unwrap_or(-1),
            crate::text::cut(stderr.trim(), 2000)
        ))
    })
}
