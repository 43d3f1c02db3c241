//! The stdio loop: read a message, answer it (tool calls on their own threads), until EOF.

use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::{json, Value};

use super::roots;
use super::tasks::Tasks;
use super::workers::Workers;
use crate::log::warn;
use crate::tools::{self, Call, CallError, Context, ToolSpec};
use crate::workspace::jail::Roots;

/// Protocol revisions we speak, newest first: a client's is echoed when listed, otherwise the
/// newest is offered (never refused).
pub(crate) const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The stateless revision whose clients start with `server/discover`.
const DISCOVER_VERSION: &str = "2026-07-28";
const INSTRUCTIONS: &str =
    "Tools to read, search, edit and run the tests of one workspace, with git's view of it; \
paths are relative to its root, and commands run in a sandbox.";
/// How long calls still running when stdin closes may take before they are cancelled.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// The longest message read; a longer line is refused without being held in memory.
const MAX_MESSAGE: u64 = 64 << 20;

struct Shared {
    /// What tool calls work on; a client's roots narrow it.
    context: RwLock<Arc<Context>>,
    /// The roots the user allowed, (canonical, as the user spelled them): the most a client's
    /// roots can give.
    allowed: Vec<(PathBuf, Vec<PathBuf>)>,
    /// The client answers `roots/list`.
    client_has_roots: AtomicBool,
    /// The number in the id of our latest `roots/list` request; older answers are stale.
    roots_request: AtomicU64,
    /// The number of the `roots/list` request still unanswered; 0 when none is. Only that one
    /// answer is taken, once: answers to requests never sent, or sent again, are ignored.
    roots_awaited: AtomicU64,
    out: Mutex<std::io::Stdout>,
    /// Calls in progress, by request id (a task's by `task ID`): their cancellation flags.
    running: Mutex<HashMap<String, Arc<AtomicBool>>>,
    tasks: Tasks,
    /// The least severe log message the client takes (`logging/setLevel`), as a place in
    /// `LOG_LEVELS`.
    log_level: AtomicU64,
}

/// MCP's log levels, least severe first (RFC 5424's).
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

pub(crate) fn serve(context: Context) -> std::io::Result<()> {
    let shared = Arc::new(Shared {
        allowed: context
            .roots
            .spellings()
            .map(|(path, given)| (path.to_path_buf(), given.to_vec()))
            .collect(),
        context: RwLock::new(Arc::new(context)),
        client_has_roots: AtomicBool::new(false),
        roots_request: AtomicU64::new(0),
        roots_awaited: AtomicU64::new(0),
        out: Mutex::new(std::io::stdout()),
        running: Mutex::new(HashMap::new()),
        tasks: Tasks::default(),
        log_level: AtomicU64::new(1),
    });
    let mut workers = Workers::new();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut line = Vec::new();
    while read_line(&shared, &mut input, &mut line)? {
        let Some(message) = parse(&shared, &line) else {
            continue;
        };
        handle(&shared, &mut workers, message);
    }
    shut_down(&shared, workers);
    Ok(())
}

/// Reads the next line into `line`; false at the end of input. A line longer than
/// `MAX_MESSAGE` is skipped, and answered (to its id, when its start names one) rather than
/// held in memory; `line` is then empty.
fn read_line(
    shared: &Shared,
    input: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<bool> {
    line.clear();
    if (&mut *input).take(MAX_MESSAGE).read_until(b'\n', line)? == 0 {
        return Ok(false);
    }
    if line.len() as u64 == MAX_MESSAGE && !line.ends_with(b"\n") {
        skip_line(input)?;
        let limit = MAX_MESSAGE >> 20;
        let fault = format!("a message longer than {limit} MiB; send less at once");
        let answer = match leading_outline(line) {
            (true, _) => None,
            (false, Some(id)) => Some(error(id, -32600, &fault)),
            (false, None) => Some(error(Value::Null, -32700, &format!("parse error: {fault}"))),
        };
        if let Some(answer) = answer {
            send(shared, &answer);
        }
        line.clear();
    }
    Ok(true)
}

/// The message on `line` when it is a well-formed request or notification; anything else is
/// answered (or, a response to our `roots/list`, taken) here.
fn parse(shared: &Shared, line: &[u8]) -> Option<Value> {
    // JSON-RPC text is UTF-8; other bytes are refused, not replaced (a file written from them
    // would silently differ from what the client sent): only the outline is read.
    let text = match std::str::from_utf8(line) {
        Ok(text) => text.trim(),
        Err(err) => {
            let fault = format!("not UTF-8 (at byte {})", err.valid_up_to());
            if let Some(answer) = unreadable(shared, &String::from_utf8_lossy(line), &fault) {
                send(shared, &answer);
            }
            return None;
        }
    };
    if text.is_empty() {
        return None;
    }
    let message: Value = match serde_json::from_str(text) {
        Ok(message) => message,
        Err(err) => {
            if let Some(answer) = unreadable(shared, text, &err.to_string()) {
                send(shared, &answer);
            }
            return None;
        }
    };
    if message.is_array() {
        let fault = "batches are not supported (removed in protocol 2025-06-18)";
        send(shared, &error(Value::Null, -32600, fault));
        return None;
    }
    // A response (to our roots/list) is never answered, even a malformed one: two peers
    // answering each other's faults would never stop.
    if message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
    {
        response(shared, &message);
        return None;
    }
    if let Err(fault) = well_formed(&message) {
        let id = message
            .get("id")
            .filter(|id| id.is_string() || id.is_i64() || id.is_u64());
        send(
            shared,
            &error(id.cloned().unwrap_or(Value::Null), -32600, fault),
        );
        return None;
    }
    Some(message)
}

/// Acts on a well-formed request or notification: a tool call starts on a worker, anything
/// else is answered at once.
/// Long: a match over every MCP method; a call and tasks/result go to a worker, the rest answered here.
fn handle(shared: &Arc<Shared>, workers: &mut Workers, mut message: Value) {
    let method = message["method"].as_str().unwrap_or_default().to_string();
    let params = message
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(json!({}));
    let Some(id) = message.get_mut("id").map(Value::take) else {
        notification(shared, &method, &params);
        return;
    };
    if method == "tools/call" {
        match params.get("task") {
            Some(task) if !stateless(&params) => {
                start_task(shared, workers, id, task.clone(), params)
            }
            _ => start_call(shared, workers, id, params),
        }
        return;
    }
    let task_id = params
        .get("taskId")
        .and_then(Value::as_str)
        .map(str::to_string);
    if method == "tasks/result" {
        // It waits for the task's end: on a worker, like the call itself.
        let shared = shared.clone();
        workers.run(move || {
            let answer = match task_id {
                Some(task_id) => shared.tasks.result(&task_id),
                None => Err("tasks/result needs params.taskId".into()),
            };
            let response = match answer {
                Ok(mut answer) => {
                    answer["jsonrpc"] = json!("2.0");
                    answer["id"] = id;
                    answer
                }
                Err(refusal) => error(id, -32602, &refusal),
            };
            send(&shared, &response);
        });
        return;
    }
    let task_answer = |answer: Result<Value, String>| match answer {
        Ok(task) => result(id.clone(), task),
        Err(refusal) => error(id.clone(), -32602, &refusal),
    };
    let needs_id = || Err::<Value, String>(format!("{method} needs params.taskId"));
    let mut response = match method.as_str() {
        "initialize" => {
            let roots = params.pointer("/capabilities/roots");
            shared
                .client_has_roots
                .store(roots.is_some_and(Value::is_object), Ordering::SeqCst);
            result(id, initialize_result(&params))
        }
        "server/discover" => result(id, discover_result()),
        "ping" => result(id, json!({})),
        "tools/list" => result(
            id,
            json!({"tools": tools::CATALOGUE.iter().map(describe).collect::<Vec<_>>()}),
        ),
        "tasks/get" => task_answer(task_id.map_or_else(needs_id, |task| shared.tasks.get(&task))),
        "tasks/cancel" => {
            task_answer(task_id.map_or_else(needs_id, |task| shared.tasks.cancel(&task)))
        }
        "tasks/list" => result(id, shared.tasks.list()),
        "logging/setLevel" => {
            let level = params.get("level").and_then(Value::as_str);
            match LOG_LEVELS.iter().position(|known| Some(*known) == level) {
                Some(place) => {
                    shared.log_level.store(place as u64, Ordering::SeqCst);
                    result(id, json!({}))
                }
                None => error(
                    id,
                    -32602,
                    &format!("params.level must be one of {}", LOG_LEVELS.join(", ")),
                ),
            }
        }
        _ => error(id, -32601, &format!("method not found: {method}")),
    };
    if stateless(&params) {
        mark_complete(&mut response);
    }
    send(shared, &response);
}

/// Runs a `tools/call` on a worker, registered by its id so that a cancellation reaches it; a
/// cancelled call gets no answer (what it said, a delegated task's patch file, goes to the log).
fn start_call(shared: &Arc<Shared>, workers: &mut Workers, id: Value, params: Value) {
    let cancelled = Arc::new(AtomicBool::new(false));
    {
        let mut running = shared.running.lock().unwrap();
        if running.contains_key(&id.to_string()) {
            // A cancellation could not tell the two apart.
            let fault = format!("request id {id} is in use by a call still running; give each request an id of its own");
            drop(running);
            send(shared, &error(id, -32600, &fault));
            return;
        }
        running.insert(id.to_string(), cancelled.clone());
    }
    let shared = shared.clone();
    workers.run(move || {
        let mut response = call_tool(&shared, id.clone(), &params, cancelled.clone());
        if stateless(&params) {
            mark_complete(&mut response);
        }
        shared.running.lock().unwrap().remove(&id.to_string());
        if !cancelled.load(Ordering::SeqCst) {
            send(&shared, &response);
        } else if let Some(said) = response
            .pointer("/result/content/0/text")
            .and_then(Value::as_str)
        {
            // A cancelled call is not answered: where a delegated task's change is kept
            // reaches the client as a log message.
            let said = format!("request {id}: {said}");
            crate::log::info("mcp", &said);
            let name = params
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if name.starts_with("delegate") {
                log_to_client(&shared, "warning", &said);
            }
        }
    });
}

/// Runs a `tools/call` that asked to be a task: the task is the answer, at once; the call runs
/// on a worker, and its answer is kept for `tasks/result`.
fn start_task(shared: &Arc<Shared>, workers: &mut Workers, id: Value, task: Value, params: Value) {
    if !task.is_object() {
        send(
            shared,
            &error(
                id,
                -32602,
                "params.task must be an object ({\"ttl\": MILLISECONDS} or {})",
            ),
        );
        return;
    }
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !tools::CATALOGUE.iter().any(|tool| tool.name == name) {
        send(shared, &error(id, -32602, &format!("unknown tool: {name}")));
        return;
    }
    let cancelled = Arc::new(AtomicBool::new(false));
    let ttl = task.get("ttl").and_then(Value::as_u64);
    let (task_id, shown) = match shared.tasks.create(ttl, cancelled.clone()) {
        Ok(created) => created,
        Err(err) => {
            send(
                shared,
                &error(id, -32603, &format!("cannot make a task: {err}")),
            );
            return;
        }
    };
    let key = format!("task {task_id}");
    shared
        .running
        .lock()
        .unwrap()
        .insert(key.clone(), cancelled.clone());
    send(shared, &result(id, json!({"task": shown})));
    let shared = shared.clone();
    workers.run(move || {
        let response = call_tool(&shared, Value::Null, &params, cancelled);
        shared.running.lock().unwrap().remove(&key);
        if let Some(task) = shared.tasks.end(&task_id, &response) {
            let status =
                json!({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task});
            send(&shared, &status);
        }
    });
}

/// stdin closed: the client is shutting down. Calls still running get a moment (a script may
/// close stdin right after its last request), then are cancelled, so that their sandboxed
/// commands are stopped rather than waited for or left behind.
fn shut_down(shared: &Shared, workers: Workers) {
    workers.finish(SHUTDOWN_GRACE, || {
        for flag in shared.running.lock().unwrap().values() {
            flag.store(true, Ordering::SeqCst);
        }
    });
}

/// The answer to a line that could not be read whole (`fault` says why). JSON serde_json
/// cannot hold (a lone surrogate in a string, a number like 1e400) or bytes that are not UTF-8
/// still leave its outline readable, the rest skipped: a request gets its answer (-32602)
/// instead of none; a response (to our roots/list) and a notification get none, as ever, and a
/// notification is still acted on: a cancellation still cancels (JavaScript writes a lone
/// surrogate for half an emoji in its reason).
fn unreadable(shared: &Shared, text: &str, fault: &str) -> Option<Value> {
    use serde::de::IgnoredAny;
    use serde::Deserialize;
    #[derive(Deserialize)]
    struct Outline {
        // Present, even as null, is not absent: only a message without an id is a notification.
        #[serde(default, deserialize_with = "present")]
        id: Option<Value>,
        method: Option<IgnoredAny>,
        result: Option<IgnoredAny>,
        error: Option<IgnoredAny>,
    }
    fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<Option<Value>, D::Error> {
        Value::deserialize(value).map(Some)
    }
    #[derive(Deserialize)]
    struct Notification {
        method: String,
        params: Option<CancellationParams>,
    }
    #[derive(Deserialize)]
    struct CancellationParams {
        #[serde(rename = "requestId")]
        request_id: Option<Value>,
    }
    let Ok(outline) = serde_json::from_str::<Outline>(text.trim()) else {
        return Some(error(Value::Null, -32700, &format!("parse error: {fault}")));
    };
    if outline.method.is_none() && (outline.result.is_some() || outline.error.is_some()) {
        return None;
    }
    match outline.id {
        None if outline.method.is_some() => {
            // Acted on as far as it can be read: a cancellation needs only its requestId, the
            // other notifications nothing.
            let notification_read = serde_json::from_str::<Notification>(text.trim()).ok();
            if let Some(Notification { method, params }) = notification_read {
                let params = match params.and_then(|params| params.request_id) {
                    Some(request_id) => json!({"requestId": request_id}),
                    None => json!({}),
                };
                notification(shared, &method, &params);
            }
            None
        }
        Some(id) if id.is_string() || id.is_i64() || id.is_u64() => Some(error(
            id,
            -32602,
            &format!("cannot read the request's contents: {fault}"),
        )),
        _ => Some(error(Value::Null, -32700, &format!("parse error: {fault}"))),
    }
}

/// What the first 64 KiB of a message too long to parse say: whether it is a response (a
/// `result` or `error` and no `method`: never answered), and its top-level `"id"` when that
/// is a string or an integer, as JSON-RPC allows.
fn leading_outline(message: &[u8]) -> (bool, Option<Value>) {
    let head = String::from_utf8_lossy(&message[..message.len().min(64 << 10)]);
    let bytes = head.as_bytes();
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let (mut id, mut method, mut answer) = (None, false, false);
    for (at, &byte) in bytes.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' if depth == 1 => {
                // A key is a string followed by a colon; its value follows that.
                let key_end = head[at + 1..].find('"').map(|end| at + 1 + end);
                let value = key_end.and_then(|end| {
                    head[end + 1..]
                        .trim_start()
                        .strip_prefix(':')
                        .map(str::trim_start)
                });
                if let (Some(end), Some(value)) = (key_end, value) {
                    match &head[at + 1..end] {
                        "id" => {
                            id = serde_json::Deserializer::from_str(value)
                                .into_iter::<Value>()
                                .next()
                                .and_then(Result::ok)
                                .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
                        }
                        "method" => method = true,
                        "result" | "error" => answer = true,
                        _ => {}
                    }
                }
                in_string = true;
            }
            b'"' => in_string = true,
            _ => {}
        }
    }
    (answer && !method, id)
}

/// Consumes input up to and including the next newline (or to the end).
fn skip_line(input: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            return Ok(());
        }
        if let Some(newline) = memchr::memchr(b'\n', buffer) {
            input.consume(newline + 1);
            return Ok(());
        }
        let length = buffer.len();
        input.consume(length);
    }
}

/// Whether `message` is a JSON-RPC 2.0 request or notification as MCP allows them
/// (ids are strings or integers, never null); what is wrong with it when not.
fn well_formed(message: &Value) -> Result<(), &'static str> {
    let Some(object) = message.as_object() else {
        return Err("not a JSON-RPC message: expected an object");
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("not a JSON-RPC 2.0 message: \"jsonrpc\" must be \"2.0\"");
    }
    if let Some(id) = object.get("id") {
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            return Err("the id must be a string or an integer");
        }
    }
    match object.get("method") {
        Some(Value::String(_)) => Ok(()),
        Some(_) => Err("the method must be a string"),
        None => Err("not a JSON-RPC request: no method"),
    }
}

fn notification(shared: &Shared, method: &str, params: &Value) {
    match method {
        "notifications/cancelled" => {
            if let Some(flag) = params
                .get("requestId")
                .and_then(|id| shared.running.lock().unwrap().get(&id.to_string()).cloned())
            {
                flag.store(true, Ordering::SeqCst);
            }
        }
        "notifications/initialized" | "notifications/roots/list_changed"
            if shared.client_has_roots.load(Ordering::SeqCst) =>
        {
            let number = shared.roots_request.fetch_add(1, Ordering::SeqCst) + 1;
            shared.roots_awaited.store(number, Ordering::SeqCst);
            send(
                shared,
                &json!({"jsonrpc": "2.0", "id": roots_request_id(number), "method": "roots/list"}),
            );
        }
        _ => {}
    }
}

fn roots_request_id(number: u64) -> String {
    format!("autocoder-roots-{number}")
}

/// A client's answer to a request of ours: only `roots/list` is ever asked.
/// Long: the client's roots in steps (awaited, narrowed to the allowed, spellings kept), sharing lists.
fn response(shared: &Shared, message: &Value) {
    let awaited = shared.roots_awaited.load(Ordering::SeqCst);
    if awaited == 0
        || message.get("id").and_then(Value::as_str) != Some(roots_request_id(awaited).as_str())
        || shared
            .roots_awaited
            .compare_exchange(awaited, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
    {
        return;
    }
    let Some(result) = message.get("result") else {
        warn(
            "mcp",
            &format!("the client could not list its roots: {}", message["error"]),
        );
        return;
    };
    let (client_spelled, skipped) = roots::client_roots(result);
    let client: Vec<PathBuf> = client_spelled
        .iter()
        .map(|(path, _)| path.clone())
        .collect();
    if !skipped.is_empty() {
        warn(
            "mcp",
            &format!(
                "ignoring client roots that are not local directories: {}",
                skipped.join(", ")
            ),
        );
    }
    let allowed: Vec<PathBuf> = shared
        .allowed
        .iter()
        .map(|(path, _)| path.clone())
        .collect();
    let mut narrowed = roots::narrow(&allowed, &client);
    if narrowed.is_empty() {
        if !client.is_empty() {
            warn(
                "mcp",
                &format!(
                    "the client's roots ({}) are outside the allowed ones; working in {}",
                    roots::shown(&client),
                    roots::shown(&allowed)
                ),
            );
        }
        narrowed = allowed;
    }
    // Each keeps the client's spelling and the user's: requests may name files through them.
    let spelled: Vec<(PathBuf, Vec<PathBuf>)> = narrowed
        .iter()
        .map(|path| {
            let client = client_spelled
                .iter()
                .filter(|(canonical, _)| canonical == path);
            let user = shared
                .allowed
                .iter()
                .filter(|(canonical, _)| canonical == path);
            let given = client
                .map(|(_, given)| given.clone())
                .chain(user.flat_map(|(_, given)| given.iter().cloned()))
                .collect();
            (path.clone(), given)
        })
        .collect();
    match Roots::spelled(&spelled) {
        Ok(roots) => {
            crate::log::note("mcp", &format!("working in {}", roots::shown(&narrowed)));
            *shared.context.write().unwrap() = Arc::new(Context {
                roots,
                test_env: Vec::new(),
                caches_of: None,
                secrets: Default::default(),
            });
        }
        Err(err) => warn("mcp", &format!("keeping the roots as they were: {err}")),
    }
}

fn initialize_result(params: &Value) -> Value {
    let asked = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let version = VERSIONS
        .iter()
        .find(|v| **v == asked)
        .copied()
        .unwrap_or(VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": {"listChanged": false},
            "logging": {},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        },
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}

fn discover_result() -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": std::iter::once(DISCOVER_VERSION).chain(VERSIONS.iter().copied()).collect::<Vec<_>>(),
        "capabilities": {"tools": {"listChanged": false}},
        "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}

/// Whether a request comes from a stateless (2026-07-28) client, which names its revision in
/// every request's `_meta` instead of initializing.
fn stateless(params: &Value) -> bool {
    params
        .pointer("/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str)
        == Some(DISCOVER_VERSION)
}

/// Stateless clients expect every result to say whether it is complete; ours always are.
fn mark_complete(response: &mut Value) {
    if let Some(result) = response.get_mut("result").and_then(Value::as_object_mut) {
        result.insert("resultType".into(), json!("complete"));
    }
}

fn server_info() -> Value {
    json!({"name": "autocoder", "title": "autocoder", "version": env!("CARGO_PKG_VERSION")})
}

fn call_tool(shared: &Arc<Shared>, id: Value, params: &Value, cancelled: Arc<AtomicBool>) -> Value {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return error(id, -32602, "tools/call needs params.name");
    };
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    // Progress goes out only when the request asked for it, strictly increasing.
    let progress = params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        // MCP's tokens are strings or integers; another kind would make invalid notifications.
        .filter(|token| token.is_string() || token.is_i64() || token.is_u64())
        .cloned()
        .map(|token| {
            let shared = shared.clone();
            Box::new(move |done: f64, message: &str| {
                let notification = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": done, "message": message}});
                send(&shared, &notification);
            }) as tools::ProgressSink
        });
    let call = Call::new(cancelled, progress);
    let context = shared.context.read().unwrap().clone();
    // The client is a model's agent: nothing it is sent holds a secret.
    let secrets = context.secrets();
    match tools::invoke(&context, &call, name, arguments) {
        Ok(mut output) => {
            secrets.without_secrets_json(&mut output.structured);
            let text = secrets.without_secrets(&output.text);
            result(
                id,
                json!({"content": [{"type": "text", "text": text}], "structuredContent": output.structured, "isError": false}),
            )
        }
        Err(CallError::Tool(err)) => result(
            id,
            json!({"content": [{"type": "text", "text": secrets.without_secrets(&err.0)}], "isError": true}),
        ),
        Err(CallError::UnknownTool(name)) => error(id, -32602, &format!("unknown tool: {name}")),
        Err(CallError::Panicked) => error(
            id,
            -32603,
            &format!("internal error in {name}; see the server's log"),
        ),
    }
}

/// A tool as `tools/list` describes it.
fn describe(tool: &ToolSpec) -> Value {
    json!({
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema(),
        "outputSchema": tool.output_schema(),
        "annotations": {
            "title": tool.title,
            "readOnlyHint": tool.annotations.read_only,
            "destructiveHint": tool.annotations.destructive,
            "idempotentHint": tool.annotations.idempotent,
            "openWorldHint": tool.annotations.open_world,
        },
        // Any call may run as a task: the long ones (a delegated task, a test run) outlive
        // clients that end a plain call after a minute.
        "execution": {"taskSupport": "optional"},
    })
}

fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A `notifications/message` to the client, when it takes messages of `level`.
fn log_to_client(shared: &Shared, level: &str, data: &str) {
    let place = LOG_LEVELS
        .iter()
        .position(|known| *known == level)
        .unwrap_or(0) as u64;
    if place >= shared.log_level.load(Ordering::SeqCst) {
        send(
            shared,
            &json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": level, "logger": "autocoder", "data": data}}),
        );
    }
}

fn send(shared: &Shared, message: &Value) {
    // Serialized whole first: one write per message, whole, however many threads send.
    let mut line = Vec::with_capacity(4096);
    serde_json::to_writer(&mut line, message).expect("a JSON value serializes");
    line.push(b'\n');
    let mut out = shared.out.lock().unwrap();
    let _ = out.write_all(&line);
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outline_of_a_message_too_long_to_parse() {
        let outline = |text: &str| leading_outline(text.as_bytes());
        assert_eq!(
            outline(r#"{"jsonrpc": "2.0", "id": "big", "params": {"x": "#),
            (false, Some(json!("big")))
        );
        assert_eq!(
            outline(r#"{"method": "id", "params": {"id": 3}, "id": 7, "x": "#),
            (false, Some(json!(7)))
        );
        assert_eq!(
            outline(r#"{"params": {"text": "\"id\": 5"}, "id": -2, "#),
            (false, Some(json!(-2)))
        );
        assert_eq!(outline(r#"{"id": "a\"b", "#), (false, Some(json!("a\"b"))));
        assert_eq!(outline(r#"{"id": 1.5, "#), (false, None));
        assert_eq!(outline(r#"{"id": null, "#), (false, None));
        assert!(outline(r#"{"id": "autocoder-roots-1", "result": {"roots": ["#).0);
    }
}
