//! Task mode (`heal --task`): a coding task carried out by a model as an agent loop over the
//! tool catalogue, called in process (the functions `mcp` serves), plus `finish`. It works in
//! heal's private copy; the change is what its `edit_file` and `write_file` calls wrote, taken to
//! the user's tree by a repair's rules, and only when the whole suite passes at the end.
//! Commands run for 60 s at most; results over 10,000 characters keep their head and tail;
//! three replies in a row without a call, four identical calls with identical results, or three
//! identical failing calls end the run as stuck; above 60% of the context window the oldest
//! results are masked.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::model::{ask, Asked};
use super::record::{new_heal, Events};
use super::tree::{Contents, Tree};
use super::{baseline, deliver, edits, prompt, Healed, Settings};
use crate::error::Failure;
use crate::llm::{Message, Prompt, Reply, Session, Tool, ToolCall, ToolResult};
use crate::run_document::{
    Heal, HealError, HealMode, HealStatus, Outcome, Summary, TaskStep, Tokens,
};
use crate::sandbox::supervise::TerminationSignals;
use crate::secrets::Secrets;
use crate::tools::{self, CallError, CATALOGUE};
use crate::workspace::jail::Roots;

/// A result is cut to its head and tail beyond this many characters.
const MAX_OBSERVATION: usize = 10_000;
/// Tokens a reply may take.
const REPLY_TOKENS: u32 = 8192;
/// Replies in a row the loop can make nothing of (no call, none readable, no answer at all)
/// that end it.
const FORMAT_ERRORS: u32 = 3;
/// A command's time at most (its processes killed after).
const COMMAND_SECONDS: u64 = 60;
/// The calls of one reply that are made at most.
const CALLS_PER_REPLY: usize = 20;
const TIME_RAN_OUT: &str = "the time budget (--timeout) ran out";

const RULES: &str = "You carry out a coding task in a software project, with tools. Work in \
steps: look at the files that matter (list_files, read_file, search_text); when the task can be \
shown by a test, write or name that test first and run it (run_tests) to see it fail; make the \
change with edit_file and write_file; run the tests until the whole suite passes; then call \
finish with a short summary of what you changed. Only what edit_file and write_file write is \
kept: files that run_command changes are not. Paths are relative to the project's root. \
Commands and tests run in a sandbox without network. Keep each call small: edit with a short \
old_string rather than rewriting a file.\n";

const FINISH: &str = "Say that the task is done, with a short summary of what was changed and \
how it was tested. Call it once, last.";

/// What the user asked for, and the loop's limits.
pub(crate) struct Task {
    pub text: String,
    /// Files or directories to look at first.
    pub paths: Vec<String>,
    pub max_steps: u32,
    /// The model's context window, in tokens.
    pub context_tokens: u64,
}

/// Why the loop ended.
enum End {
    Finished,
    Limit(String),
    Stuck(String),
    Interrupted(i32),
    Failed(Failure),
}

/// Runs `task` in a copy of the request's workspace with `session`'s model.
pub(crate) fn run(
    request: Settings,
    task: &Task,
    session: &Arc<Session>,
    events: &mut Events,
) -> Result<Healed, Failure> {
    let secrets = session.secrets();
    // What the tests are given holds no credential the model's commands could print.
    let request = Settings {
        env: crate::secrets::withheld_env(&request.env),
        ..request
    };
    let signals = TerminationSignals::block()?;
    let deadline = Instant::now() + request.timeout;
    // The tools run tests and commands in the copy by themselves: its build outputs are copied,
    // and its credential files hold no secret the model's commands could read out encoded.
    let mut tree = withheld_copy(&request, false, secrets)?;
    let files = crate::testmap::project_files(tree.path(), 10_000);
    let context = tools::Context {
        roots: Roots::new(&[tree.path().to_path_buf()])
            .map_err(|err| Failure::external(format!("heal's copy: {err}")))?,
        test_env: request.env.clone(),
        caches_of: Some(request.workspace.clone()),
        secrets: Default::default(),
    };
    let mut report = Heal {
        engine: Some("llm".into()),
        ..new_heal(HealMode::Task, Some(session))
    };
    let tools = offered_tools();
    let tools_chars: usize = tools
        .iter()
        .map(|tool| tool.name.len() + tool.description.len() + tool.parameters.to_string().len())
        .sum();
    let mut agent = Agent {
        session,
        secrets,
        tools,
        system: format!("{RULES}{}", prompt::file_list(&files)),
        messages: vec![Message::User(first_message(task))],
        last_tests: None,
        context: &context,
        tree: &mut tree,
        report: &mut report,
        events,
        signals: &signals,
        history: Vec::new(),
        format_errors: 0,
        // 60% of the context for the conversation, the tools' schemas counted, about 4
        // characters a token; a reply has a quarter of it at most.
        budget_chars: ((task.context_tokens as f64 * 0.6 * 4.0) as usize)
            .saturating_sub(tools_chars),
        reply_tokens: REPLY_TOKENS.min(task.context_tokens as u32 / 4),
        deadline,
        test_seconds: request.test_timeout.as_secs().max(1),
    };
    let mut end = End::Limit(format!("all {} steps were taken", task.max_steps));
    for step in 1..=task.max_steps {
        if let Some(signal) = signals.take() {
            end = End::Interrupted(signal);
            break;
        }
        if Instant::now() >= deadline {
            end = End::Limit(TIME_RAN_OUT.into());
            break;
        }
        let used = agent.report.tokens.input + agent.report.tokens.output;
        if let Some(limit) = request.token_budget.filter(|limit| used >= *limit) {
            end = End::Limit(format!("the token budget ({limit}) is spent ({used} used)"));
            break;
        }
        if let Some(ended) = agent.step(step) {
            end = ended;
            break;
        }
    }
    drop(agent);
    conclude(&request, &tree, secrets, report, end)
}

/// The loop's state.
struct Agent<'a> {
    session: &'a Arc<Session>,
    /// The session's: withheld from the document's record of the steps too.
    secrets: &'a Secrets,
    tools: Vec<Tool>,
    system: String,
    messages: Vec<Message>,
    context: &'a tools::Context,
    tree: &'a mut Tree,
    report: &'a mut Heal,
    events: &'a mut Events,
    signals: &'a TerminationSignals,
    /// Each call made: (its name and arguments, its result, whether it failed).
    history: Vec<(String, String, bool)>,
    /// Replies in a row the loop could make nothing of.
    format_errors: u32,
    /// The longest reply asked for.
    reply_tokens: u32,
    /// What the last test run the model asked for came to, in a line.
    last_tests: Option<String>,
    /// The conversation's size, in characters, above which old results are masked.
    budget_chars: usize,
    deadline: Instant,
    /// One test run's time at most (`--test-timeout`).
    test_seconds: u64,
}

impl Agent<'_> {
    /// One reply and its calls; the end, when this step ends the loop.
    fn step(&mut self, step: u32) -> Option<End> {
        self.mask_old_results();
        let sent = self.system.len() + self.messages.iter().map(Message::size).sum::<usize>();
        let asking = format!(
            "step {step}: asking {} (~{} tokens)",
            self.session.model().name.as_deref().unwrap_or("the model"),
            sent / 4
        );
        crate::log::step("heal", &asking);
        let asked = Instant::now();
        let prompt = Prompt {
            system: &self.system,
            messages: &self.messages,
            tools: &self.tools,
            max_tokens: self.reply_tokens,
        };
        let reply = match ask(
            self.session,
            &prompt,
            self.signals,
            &asking,
            Some(self.deadline),
        ) {
            Asked::Interrupted(signal) => return Some(End::Interrupted(signal)),
            Asked::TimedOut => return Some(End::Limit(TIME_RAN_OUT.into())),
            Asked::Answered(Err(failure))
                if failure
                    .error
                    .downcast_ref::<crate::llm::NoAnswer>()
                    .is_some() =>
            {
                // Empty, or cut off while it reasoned: said to the model, as a reply without a
                // call is. What was sent counts against the budget all the same (estimated:
                // such an answer's usage is not read).
                self.report.tokens.input += (sent / 4) as u64;
                let said = format!(
                    "The server gave no usable reply ({}). Think less and call a tool: one small call at a time.",
                    failure.error
                );
                return self.format_error(step, said);
            }
            Asked::Answered(Err(failure)) => return Some(End::Failed(failure)),
            Asked::Answered(Ok(reply)) => reply,
        };
        let tokens = Tokens {
            input: match reply.tokens_in {
                0 => (sent / 4) as u64,
                counted => counted,
            },
            output: match reply.tokens_out {
                0 => (reply.turn.to_string().len() / 4) as u64,
                counted => counted,
            },
        };
        self.report.tokens.input += tokens.input;
        self.report.tokens.output += tokens.output;
        self.events.emit(
            "model_call",
            json!({"step": step, "tokens_in": tokens.input, "tokens_out": tokens.output,
                   "latency_ms": asked.elapsed().as_millis() as u64,
                   "tool_calls": reply.tool_calls.len(), "cut_off": reply.cut_off}),
        );
        if !self.session.offers_tools() {
            let server = crate::http::without_userinfo(&self.session.model().base_url);
            return Some(End::Failed(
                Failure::external(format!(
                    "the model server at {server} does not take tool calls, which task mode needs"
                ))
                .with_hint("turn tool calling on (llama.cpp: --jinja; vLLM: --enable-auto-tool-choice --tool-call-parser NAME), or use a model that has it"),
            ));
        }
        self.messages.push(Message::Assistant(reply.turn.clone()));
        if reply.tool_calls.is_empty() {
            return self.no_call(step, &reply);
        }
        self.run_calls(step, &reply)
    }

    /// The calls of a reply, `finish` last; the end, when they end the loop.
    fn run_calls(&mut self, step: u32, reply: &Reply) -> Option<End> {
        let readable = reply.tool_calls.iter().any(|call| call.arguments.is_ok());
        let mut results = Vec::new();
        let mut finished = false;
        for (index, call) in reply.tool_calls.iter().enumerate() {
            let not_run = |why: String| ToolResult {
                call_id: call.id.clone(),
                content: format!("not run: {why}"),
                is_error: true,
            };
            if finished {
                results.push(not_run("finish was called before it".into()));
                continue;
            }
            if index >= CALLS_PER_REPLY {
                results.push(not_run(format!(
                    "a reply's first {CALLS_PER_REPLY} calls are made, no more; call it again"
                )));
                continue;
            }
            if call.name == "finish" {
                let summary = call
                    .arguments
                    .as_ref()
                    .ok()
                    .and_then(|arguments| arguments.get("summary"))
                    .and_then(Value::as_str)
                    .filter(|summary| !summary.trim().is_empty());
                let Some(summary) = summary else {
                    results.push(not_run(
                        "finish needs a summary of what was changed and how it was tested".into(),
                    ));
                    continue;
                };
                self.report.summary = Some(Summary {
                    by: "model".into(),
                    text: self.secrets.withhold(summary),
                });
                results.push(ToolResult {
                    call_id: call.id.clone(),
                    content: "finished".into(),
                    is_error: false,
                });
                finished = true;
                continue;
            }
            let (result, interrupted) = self.call(step, call);
            results.push(result);
            if let Some(signal) = interrupted {
                self.messages.push(Message::ToolResults(results));
                return Some(End::Interrupted(signal));
            }
        }
        self.messages.push(Message::ToolResults(results));
        if finished {
            return Some(End::Finished);
        }
        if !readable {
            return self.count_format_error();
        }
        self.format_errors = 0;
        self.stuck()
    }

    /// A reply without a call: told to call one.
    fn no_call(&mut self, step: u32, reply: &Reply) -> Option<End> {
        let said = match reply.cut_off {
            true => "Your reply was cut off at the token limit before it called a tool. Make smaller calls: edit_file with a short old_string, one file at a time.",
            false => "Your reply called no tool. Work with the tools; when the task is done and the tests pass, call finish.",
        };
        self.format_error(step, said.into())
    }

    /// A reply the loop could make nothing of: the model is told `said`; the third in a row
    /// ends the loop.
    fn format_error(&mut self, step: u32, said: String) -> Option<End> {
        crate::log::info("heal", &format!("step {step}: the reply called no tool"));
        let ended = self.count_format_error();
        if ended.is_none() {
            self.messages.push(Message::User(said));
        }
        ended
    }

    /// One more reply in a row the loop could make nothing of; the third ends it.
    fn count_format_error(&mut self) -> Option<End> {
        self.format_errors += 1;
        (self.format_errors >= FORMAT_ERRORS).then(|| {
            End::Stuck(format!(
                "{FORMAT_ERRORS} replies in a row called no tool the loop could read"
            ))
        })
    }

    /// Makes one call (a signal ends it at once) and keeps its record; its result, and the
    /// signal that interrupted it.
    fn call(&mut self, step: u32, call: &ToolCall) -> (ToolResult, Option<i32>) {
        let started = Instant::now();
        let writes = matches!(call.name.as_str(), "edit_file" | "write_file");
        let path = call
            .arguments
            .as_ref()
            .ok()
            .and_then(|arguments| arguments.get("path"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let refused = match (&path, writes) {
            (Some(path), true) => self.refusal(path),
            _ => None,
        };
        let written = match (&path, writes, &refused) {
            (Some(path), true, None) => self.tree.will_write(path).ok(),
            _ => None,
        };
        crate::log::step(
            "heal",
            &format!(
                "step {step}: {}{}",
                call.name,
                path.as_deref().map(|p| format!(" {p}")).unwrap_or_default()
            ),
        );
        let (outcome, interrupted) = match (&call.arguments, refused) {
            (_, Some(reason)) => (Err(reason), None),
            (Err(why), None) => (Err(why.clone()), None),
            (Ok(arguments), None) => self.invoke(
                &call.name,
                bounded(&call.name, arguments, self.test_seconds),
            ),
        };
        if let (Some(relative), Ok(_)) = (&written, &outcome) {
            if let Err(err) = self.tree.wrote(relative) {
                crate::log::warn("heal", &format!("cannot read back {relative}: {err}"));
            }
        }
        let is_error = outcome.is_err();
        let text = match outcome {
            Ok(text) | Err(text) => text,
        };
        let text = self.tree.without_copy_path(&text);
        if call.name == "run_tests" {
            self.last_tests = Some(tests_line(&text, is_error));
        }
        let content = observation(&text);
        let seconds = started.elapsed().as_secs_f64();
        self.events.emit(
            "tool_call",
            json!({"step": step, "tool": call.name, "is_error": is_error,
                   "result_chars": text.chars().count(), "duration_ms": (seconds * 1000.0) as u64}),
        );
        let arguments = call.arguments.clone().unwrap_or(Value::Null);
        self.history.push((
            format!("{} {arguments}", call.name),
            content.clone(),
            is_error,
        ));
        self.report.steps.push(TaskStep {
            step,
            tool: call.name.clone(),
            arguments: shown_arguments(&arguments, self.secrets),
            result_chars: text.chars().count(),
            is_error,
            seconds,
        });
        let result = ToolResult {
            call_id: call.id.clone(),
            content,
            is_error,
        };
        (result, interrupted)
    }

    /// Why a write to `path` is refused by a repair's rules (not `.git`, credential files, what
    /// runs outside the sandbox, a path through a link; tests may change). The tools refuse
    /// the stand-in for a secret themselves.
    fn refusal(&self, path: &str) -> Option<String> {
        let rules = edits::Rules {
            allow_test_edits: true,
            ..Default::default()
        };
        edits::refusal(self.tree, path, &rules)
    }

    /// Calls tool `name` on a thread of its own while this one watches for signals: a signal
    /// cancels the call (the sandbox it started is stopped and cleaned up).
    fn invoke(&self, name: &str, arguments: Value) -> (Result<String, String>, Option<i32>) {
        let cancelled = Arc::new(AtomicBool::new(false));
        let handle = tools::Call::new(Arc::clone(&cancelled), None);
        let mut interrupted = None;
        let (context, handle) = (self.context, &handle);
        let outcome = std::thread::scope(|scope| {
            let running = scope.spawn(move || tools::invoke(context, handle, name, arguments));
            while !running.is_finished() {
                if let Some(signal) = self.signals.take() {
                    interrupted = Some(signal);
                    cancelled.store(true, Ordering::SeqCst);
                }
                if Instant::now() >= self.deadline {
                    cancelled.store(true, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            running.join()
        });
        let outcome = match outcome {
            Ok(Ok(output)) => Ok(output.text),
            Ok(Err(CallError::UnknownTool(name))) => Err(format!(
                "there is no tool `{name}`; the tools are: {}",
                self.tools
                    .iter()
                    .map(|tool| tool.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Ok(Err(CallError::Tool(error))) => Err(error.0),
            Ok(Err(CallError::Panicked)) | Err(_) => {
                Err("the tool failed (a bug in autocoder; it was reported on stderr)".into())
            }
        };
        let outcome = match outcome {
            Ok(text) if text.trim().is_empty() => Ok("(the result is empty)".into()),
            Ok(text) if name == "run_command" && printed_nothing(&text) => {
                Ok(format!("{text}\n(the command printed nothing)"))
            }
            other => other,
        };
        (outcome, interrupted)
    }

    /// Stuck: the same call with the same result four times in a row, or the same failing call
    /// three times in a row.
    fn stuck(&self) -> Option<End> {
        // The last `n` calls, when they are one call made `n` times.
        let repeated = |n: usize| {
            let tail = self.history.get(self.history.len().checked_sub(n)?..)?;
            tail.iter()
                .all(|entry| entry.0 == tail[0].0)
                .then_some(tail)
        };
        // A run's result says how long it took: the same result apart from that.
        let same = |a: &str, b: &str| without_durations(a) == without_durations(b);
        if repeated(4).is_some_and(|tail| tail.iter().all(|entry| same(&entry.1, &tail[0].1))) {
            return Some(End::Stuck(
                "the same call gave the same result four times in a row".into(),
            ));
        }
        if repeated(3).is_some_and(|tail| tail.iter().all(|entry| entry.2)) {
            return Some(End::Stuck(
                "the same call failed three times in a row".into(),
            ));
        }
        None
    }

    /// Above the context budget, the oldest tool results and the long arguments of the oldest
    /// calls (all but the last two replies' and their results) are replaced by a line saying
    /// what they were, and the task's message ends with a short account of the work so far.
    fn mask_old_results(&mut self) {
        let mut size = self.system.len() + self.messages.iter().map(Message::size).sum::<usize>();
        let replies: Vec<usize> = (0..self.messages.len())
            .filter(|&index| matches!(self.messages[index], Message::Assistant(_)))
            .collect();
        let Some(&kept) = replies.iter().rev().nth(1) else {
            return;
        };
        // Once begun, the account is kept up to date.
        let summarised =
            matches!(self.messages.first(), Some(Message::User(task)) if task.contains(SO_FAR));
        if size <= self.budget_chars && !summarised {
            return;
        }
        let so_far = self.so_far();
        if let Some(Message::User(task)) = self.messages.first_mut() {
            let asked = task.split(SO_FAR).next().unwrap_or_default();
            *task = format!("{asked}{SO_FAR}{so_far}");
        }
        for message in &mut self.messages[1..kept] {
            if size <= self.budget_chars {
                return;
            }
            let before = message.size();
            match message {
                Message::ToolResults(results) => {
                    for result in results
                        .iter_mut()
                        .filter(|r| !r.content.starts_with("[masked"))
                    {
                        result.content = masked(result.content.chars().count(), "result");
                    }
                }
                Message::Assistant(turn) => mask_long_arguments(turn),
                Message::User(_) => {}
            }
            size = size.saturating_sub(before) + message.size();
        }
    }
}

/// Whether a run_command result says its command printed nothing, on stdout or stderr.
fn printed_nothing(result: &str) -> bool {
    serde_json::from_str::<Value>(result).is_ok_and(|output| {
        ["stdout", "stderr"]
            .iter()
            .all(|stream| output[stream].as_str().is_some_and(str::is_empty))
    })
}

/// `text` without the times it gives (`"duration_ms":812`, pytest's `in 0.81s`).
fn without_durations(text: &str) -> String {
    static DURATION: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"("[a-z_]*(?:ms|seconds|duration)[a-z_]*"\s*:\s*)[0-9.]+|\bin [0-9.]+s\b"#,
        )
        .expect("a valid pattern")
    });
    DURATION.replace_all(text, "${1}_").into_owned()
}

/// What starts the account of the work so far, once older results are masked.
const SO_FAR: &str = "\n## So far (older results are masked)\n";

impl Agent<'_> {
    /// The work so far, in a few lines: the calls made, the files changed, the last test run.
    fn so_far(&self) -> String {
        let changed: Vec<String> = self.tree.contents().into_keys().collect();
        let mut out = format!(
            "{} calls made. Files changed: {}.\n",
            self.report.steps.len(),
            match changed.is_empty() {
                true => "none".to_string(),
                false => changed.join(", "),
            }
        );
        if let Some(tests) = &self.last_tests {
            out.push_str(&format!("Last test run: {tests}\n"));
        }
        out
    }
}

/// A run_tests result in a line: its outcome, counts and the first failing tests.
fn tests_line(result: &str, is_error: bool) -> String {
    let Some(report) = serde_json::from_str::<Value>(result)
        .ok()
        .filter(|_| !is_error)
    else {
        return "it could not be run".into();
    };
    let count = |key: &str| report["counts"][key].as_u64().unwrap_or(0);
    let failing: Vec<&str> = report["failures"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|failure| failure["id"].as_str())
        .take(5)
        .collect();
    let mut line = format!(
        "{}, {} passed, {} failed",
        report["outcome"].as_str().unwrap_or("unknown"),
        count("passed"),
        count("failed") + count("errors")
    );
    if !failing.is_empty() {
        line.push_str(&format!(" ({})", failing.join(", ")));
    }
    line
}

/// What stands in for something masked to save context.
fn masked(chars: usize, what: &str) -> String {
    format!("[masked to save context: a {what} of {chars} characters; call the tool again if it is needed]")
}

/// A model's turn with its calls' long string arguments (a whole file written) masked: the
/// arguments of OpenAI's calls (a JSON string) and the input of Anthropic's `tool_use` blocks.
fn mask_long_arguments(turn: &mut Value) {
    fn shorten(value: &mut Value) {
        match value {
            Value::String(text) if text.chars().count() > 200 => {
                *text = masked(text.chars().count(), "text");
            }
            Value::Array(items) => items.iter_mut().for_each(shorten),
            Value::Object(map) => map.values_mut().for_each(shorten),
            _ => {}
        }
    }
    // `get_mut`, not indexing: an index would add the key it looks for.
    if let Some(calls) = turn.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for arguments in calls
            .iter_mut()
            .filter_map(|call| call.pointer_mut("/function/arguments"))
        {
            if let Some(mut parsed) = arguments
                .as_str()
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
            {
                shorten(&mut parsed);
                *arguments = Value::String(parsed.to_string());
            }
        }
    }
    if let Some(blocks) = turn.get_mut("content").and_then(Value::as_array_mut) {
        for block in blocks.iter_mut() {
            if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                if let Some(input) = block.get_mut("input") {
                    shorten(input);
                }
            }
        }
    }
}

/// `arguments` for `tool`, its time cut: a command's to `COMMAND_SECONDS`, a test run's to
/// `test_seconds`.
fn bounded(tool: &str, arguments: &Value, test_seconds: u64) -> Value {
    let most = match tool {
        "run_command" => COMMAND_SECONDS,
        "run_tests" => test_seconds,
        _ => return arguments.clone(),
    };
    let mut arguments = arguments.clone();
    if let Some(map) = arguments.as_object_mut() {
        let asked = map.get("timeout_sec").and_then(Value::as_u64);
        map.insert(
            "timeout_sec".into(),
            asked.map_or(most, |asked| asked.min(most)).into(),
        );
    }
    arguments
}

/// The tools offered: the catalogue but its delegates (a task handed on to this very loop) and
/// its git tools (the copy has no `.git`), and `finish`.
fn offered_tools() -> Vec<Tool> {
    let mut offered: Vec<Tool> = CATALOGUE
        .iter()
        .filter(|tool| !tool.name.starts_with("delegate") && !tool.name.starts_with("git_"))
        .map(|tool| Tool {
            name: tool.name,
            description: tool.description,
            parameters: tool.input_schema(),
        })
        .collect();
    offered.push(Tool {
        name: "finish",
        description: FINISH,
        parameters: json!({"type": "object", "properties": {"summary": {"type": "string",
            "description": "What was changed, and how it was tested."}}, "required": ["summary"]}),
    });
    offered
}

fn first_message(task: &Task) -> String {
    let mut out = format!("## The task\n{}\n", task.text.trim());
    if !task.paths.is_empty() {
        out.push_str(&format!("\nLook first at: {}\n", task.paths.join(", ")));
    }
    out
}

/// A result as the model sees it: whole up to `MAX_OBSERVATION` characters, else its head and
/// tail with what was left out said.
fn observation(text: &str) -> String {
    let length = text.chars().count();
    if length <= MAX_OBSERVATION {
        return text.to_string();
    }
    let half = MAX_OBSERVATION / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(length - half).collect();
    format!(
        "{head}\n[... {} characters left out: ask for less (read_file with offset and limit, search_text with a path or glob, run_command piped through head or grep)]\n{tail}",
        length - 2 * half
    )
}

/// Arguments for the document: strings over 200 characters cut, secrets withheld.
fn shown_arguments(arguments: &Value, secrets: &Secrets) -> Value {
    match arguments {
        Value::String(text) => {
            let text = secrets.withhold(text);
            match text.chars().count() > 200 {
                true => format!("{}…", text.chars().take(200).collect::<String>()).into(),
                false => text.into(),
            }
        }
        Value::Array(items) => items.iter().map(|v| shown_arguments(v, secrets)).collect(),
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| (key.clone(), shown_arguments(value, secrets)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => other.clone(),
    }
}

/// The end: the whole suite run on the change, the status, and the change taken to the user's
/// tree (green) or to a patch.
/// Long: the end's reason is amended by the suite's run, and both decide the status; they share the locals.
fn conclude(
    request: &Settings,
    tree: &Tree,
    secrets: &Secrets,
    mut report: Heal,
    end: End,
) -> Result<Healed, Failure> {
    let contents = tree.contents();
    report.diff = tree.diff_of(&contents);
    report.files_changed = contents.keys().cloned().collect();
    let (finished, limit, mut reason, mut interrupted) = match end {
        End::Finished => (true, false, "the model finished".to_string(), None),
        End::Limit(why) => (false, true, why, None),
        End::Stuck(why) => (false, false, format!("stuck: {why}"), None),
        End::Interrupted(signal) => (
            false,
            false,
            format!("interrupted by signal {signal}; nothing was written to the workspace"),
            Some(signal),
        ),
        End::Failed(failure) => {
            report.error = Some(HealError {
                message: format!("{:#}", failure.error),
                hint: failure.hint.clone(),
            });
            (false, false, "the model failed".to_string(), None)
        }
    };
    // The suite decides, whatever the model said of it; not run after an interruption. It runs
    // on the change alone, in a fresh copy: what run_command changed in heal's copy is not
    // applied, so it must not be tested either.
    let mut passed = false;
    if interrupted.is_none() {
        let shown = "running the whole suite on the change";
        crate::log::step("heal", shown);
        let live = baseline::Live {
            shown: shown.into(),
            total: None,
        };
        let ran = change_alone(request, secrets, &contents).and_then(|fresh| {
            baseline::run(
                request,
                &fresh,
                Vec::new(),
                request.test_timeout,
                Some(live),
            )
        });
        match ran {
            Ok(tests)
                if tests
                    .sandbox
                    .as_ref()
                    .is_some_and(|s| s.interrupted.is_some()) =>
            {
                let signal = tests
                    .sandbox
                    .as_ref()
                    .and_then(|s| s.interrupted)
                    .unwrap_or(2);
                reason = format!("interrupted by signal {signal} while the tests ran; nothing was written to the workspace");
                interrupted = Some(signal);
                report.tests = Some(tests);
            }
            Ok(tests) => {
                passed = tests.outcome == Outcome::Passed;
                if !passed {
                    let failed = tests.counts.failed + tests.counts.errors;
                    reason.push_str(&match tests.outcome {
                        Outcome::TestsFailed => format!("; {failed} tests fail"),
                        _ => format!("; the tests did not pass ({})", tests.outcome.name()),
                    });
                }
                report.tests = Some(tests);
            }
            Err(failure) => {
                reason.push_str(&format!("; the tests could not run: {:#}", failure.error));
            }
        }
    }
    report.status = Some(match (report.diff.is_empty(), finished && passed, limit) {
        (true, _, _) => HealStatus::NoChange,
        (false, true, _) => HealStatus::Green,
        (false, false, true) => HealStatus::BudgetExhausted,
        (false, false, false) => HealStatus::Red,
    });
    report.reason = reason;
    deliver(request, tree, &contents, &mut report)?;
    Ok(Healed {
        failed: report.error.is_some(),
        report,
        interrupted,
    })
}

/// A private copy of the workspace whose credential files hold no secret (`layered`: its
/// build outputs shown to the tests, not copied).
fn withheld_copy(request: &Settings, layered: bool, secrets: &Secrets) -> Result<Tree, Failure> {
    let tree = Tree::copy_of(&request.workspace, layered)?;
    secrets.withhold_in_files(tree.path()).map_err(|err| {
        Failure::external(format!("cannot withhold the secrets in heal's copy: {err}"))
    })?;
    Ok(tree)
}

/// A fresh copy of the workspace, withheld as heal's is, with `contents` (the files edit_file
/// and write_file wrote) in it.
fn change_alone(
    request: &Settings,
    secrets: &Secrets,
    contents: &Contents,
) -> Result<Tree, Failure> {
    let mut fresh = withheld_copy(request, true, secrets)?;
    fresh.restore(contents).map_err(|err| {
        Failure::external(format!(
            "the change cannot be made in a fresh copy of the workspace: {}",
            fresh.without_copy_path(&err)
        ))
    })?;
    Ok(fresh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commands_time_is_cut_to_a_minute_and_a_test_runs_to_the_test_timeout() {
        let cut =
            |tool: &str, arguments: Value| bounded(tool, &arguments, 300)["timeout_sec"].clone();
        assert_eq!(
            cut(
                "run_command",
                json!({"argv": ["sleep", "999"], "timeout_sec": 600})
            ),
            60
        );
        assert_eq!(cut("run_command", json!({"command": "ls"})), 60);
        assert_eq!(
            cut("run_command", json!({"command": "ls", "timeout_sec": 5})),
            5
        );
        assert_eq!(cut("run_tests", json!({"timeout_sec": 600})), 300);
        assert_eq!(
            bounded("read_file", &json!({"path": "a"}), 300),
            json!({"path": "a"})
        );
    }

    #[test]
    fn long_arguments_of_old_calls_are_masked_in_either_wire_format() {
        let long = "x".repeat(5_000);
        let mut openai = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c",
            "function": {"name": "write_file", "arguments": json!({"path": "a.py", "content": long}).to_string()}}]});
        mask_long_arguments(&mut openai);
        let arguments: Value = serde_json::from_str(
            openai["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(arguments["path"], "a.py");
        assert!(arguments["content"]
            .as_str()
            .unwrap()
            .starts_with("[masked to save context: a text of 5000"));
        let mut anthropic = json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": long, "signature": "s"},
            {"type": "tool_use", "id": "t", "name": "write_file", "input": {"path": "a.py", "content": long}}]});
        mask_long_arguments(&mut anthropic);
        assert_eq!(
            anthropic["content"][0]["thinking"], long,
            "a thinking block goes back unchanged"
        );
        assert!(anthropic["content"][1]["input"]["content"]
            .as_str()
            .unwrap()
            .starts_with("[masked"));
        assert!(anthropic.get("tool_calls").is_none());
    }

    #[test]
    fn a_long_result_keeps_its_head_and_tail_and_says_what_was_left_out() {
        let text = format!("{}{}", "a".repeat(8_000), "é".repeat(8_000));
        let shown = observation(&text);
        assert!(shown.starts_with(&"a".repeat(5_000)) && shown.ends_with(&"é".repeat(5_000)));
        assert!(
            shown.contains("[... 6000 characters left out: ask for less"),
            "{}",
            &shown[4_990..5_200]
        );
        assert_eq!(observation("short"), "short");
    }
}
