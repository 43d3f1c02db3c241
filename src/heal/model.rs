//! The model engine: one request per attempt, the prompt from `prompt`, the edits read from the
//! reply's text or from its calls of the catalogue's `edit_file` and `write_file` (offered as
//! the MCP server serves them; what they ask for is applied as heal applies every edit, in its
//! copy and by its rules). A reply's calls are answered in the next request, each by its id:
//! that turn is sent back after a short stand-in for the request it answered (whose state the
//! new message shows), then the results, then the new message. The call runs on a thread of its
//! own so that a signal ends the wait at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::edits::{Edit, EditKind};
use super::tree::Tree;
use super::{edits, prompt, Context, Engine, Proposal, Proposed};
use crate::error::Failure;
use crate::llm::{Message, Prompt, Reply, Session, Tool, ToolCall, ToolResult};
use crate::run_document::{Applied, Tokens};
use crate::sandbox::supervise::TerminationSignals;
use crate::tools::{edit_file, write_file, CATALOGUE};

/// Tokens a reply may take.
const REPLY_TOKENS: u32 = 4096;
/// The catalogue's tools a model may call here.
const TOOLS: [&str; 2] = ["edit_file", "write_file"];

pub(crate) struct ModelEngine {
    session: Arc<Session>,
    /// The stable prefix, made on the first attempt from the project's files.
    system: Option<String>,
    tools: Vec<Tool>,
    /// The last reply's calls, to answer in the next request.
    calls: Option<Calls>,
}

/// A reply's tool calls: the attempt, the turn to send back, and for each call its id and its
/// edit's place in the proposal, or why it made none.
struct Calls {
    attempt: u32,
    turn: Value,
    made: Vec<(String, Result<usize, String>)>,
}

impl ModelEngine {
    /// Every message goes through `session`, which withholds its secrets.
    pub(crate) fn new(session: Arc<Session>) -> ModelEngine {
        let tools = TOOLS
            .iter()
            .filter_map(|name| CATALOGUE.iter().find(|tool| tool.name == *name))
            .map(|tool| Tool {
                name: tool.name,
                description: tool.description,
                parameters: tool.input_schema(),
            })
            .collect();
        ModelEngine {
            session,
            system: None,
            tools,
            calls: None,
        }
    }

    /// The edits of `reply` to attempt `attempt` (written as text, or as tool calls, which are
    /// kept to be answered with their results next time), and what could not be read as one.
    fn edits_of(&mut self, reply: &Reply, attempt: u32) -> (Vec<Edit>, Vec<String>) {
        if reply.tool_calls.is_empty() {
            let parsed = edits::parse(&reply.text);
            return (parsed.edits, parsed.problems);
        }
        let mut edits = Vec::new();
        let mut problems = Vec::new();
        let made = reply
            .tool_calls
            .iter()
            .map(|call| {
                let made = edit_of(call).map(|edit| {
                    edits.push(edit);
                    edits.len() - 1
                });
                if let Err(why) = &made {
                    problems.push(format!("Call {} ({}): {why}", call.id, call.name));
                }
                (call.id.clone(), made)
            })
            .collect();
        self.calls = Some(Calls {
            attempt,
            turn: reply.turn.clone(),
            made,
        });
        (edits, problems)
    }
}

impl Engine for ModelEngine {
    fn name(&self) -> &'static str {
        "llm"
    }

    fn searches(&self) -> bool {
        false
    }

    fn propose(&mut self, context: &Context, tree: &Tree) -> Result<Proposed, Failure> {
        let system = self
            .system
            .get_or_insert_with(|| prompt::system(context.files))
            .as_str();
        let user = prompt::message(
            context,
            tree,
            prompt::MAX_CHARS.saturating_sub(system.len()),
        );
        let user = tree.without_copy_path(&user);
        let mut messages = Vec::new();
        let answered = self.calls.take().zip(context.previous);
        if let Some((calls, previous)) = answered.filter(|(calls, p)| calls.attempt == p.number) {
            messages.push(Message::User(format!(
                "(Attempt {}'s request; the next message shows the project's state since.)",
                calls.attempt
            )));
            messages.push(Message::Assistant(calls.turn));
            messages.push(Message::ToolResults(results(&calls.made, &previous.edits)));
        }
        let prompt_hash = super::record::prompt_hash(system, &user);
        messages.push(Message::User(user));
        let sent: usize = system.len() + messages.iter().map(Message::size).sum::<usize>();
        let asking = format!(
            "attempt {}: asking {} (~{} tokens)",
            context.number,
            self.session.model().name.as_deref().unwrap_or("the model"),
            sent / 4
        );
        crate::log::step("heal", &asking);
        let asked = Instant::now();
        let prompt = Prompt {
            system,
            messages: &messages,
            tools: &self.tools,
            max_tokens: REPLY_TOKENS,
        };
        let deadline = Some(context.deadline);
        let reply = match ask(&self.session, &prompt, context.signals, &asking, deadline) {
            Asked::Interrupted(signal) => return Ok(Proposed::Interrupted(signal)),
            Asked::Answered(reply) => reply?,
            Asked::TimedOut => return Ok(Proposed::OutOfTime),
        };
        let (edits, problems) = self.edits_of(&reply, context.number);
        Ok(Proposed::Edits(Proposal {
            edits,
            problems,
            cut_off: reply.cut_off,
            // A server that says nothing of usage is counted at about 4 characters a token, so
            // that --token-budget still holds.
            tokens: Tokens {
                input: match reply.tokens_in {
                    0 => (sent / 4) as u64,
                    counted => counted,
                },
                output: match reply.tokens_out {
                    0 => ((reply.text.len() + reply.turn.to_string().len()) / 4) as u64,
                    counted => counted,
                },
            },
            model_seconds: asked.elapsed().as_secs_f64(),
            prompt_hash: Some(prompt_hash),
            label: None,
            rank: None,
        }))
    }
}

/// The edit a call asks for, read with the catalogue's own argument types; or why it is none.
fn edit_of(call: &ToolCall) -> Result<Edit, String> {
    let arguments = call.arguments.clone()?;
    let bad = |err: serde_json::Error| format!("its arguments do not fit {}: {err}", call.name);
    match call.name.as_str() {
        "edit_file" => {
            let input: edit_file::Input = serde_json::from_value(arguments).map_err(bad)?;
            edit_file::check(&input).map_err(|err| err.0)?;
            if input.dry_run {
                return Err("dry_run is not taken here: every edit is applied and tested, and undone when it breaks a test; call edit_file without it".into());
            }
            Ok(Edit {
                path: input.path,
                search: input.old_string,
                replace: input.new_string,
                kind: match input.replace_all {
                    true => EditKind::Every,
                    false => EditKind::Once,
                },
            })
        }
        "write_file" => {
            let input: write_file::Input = serde_json::from_value(arguments).map_err(bad)?;
            Ok(Edit {
                path: input.path,
                search: String::new(),
                replace: input.content,
                kind: EditKind::WholeFile,
            })
        }
        other => Err(format!(
            "there is no tool `{other}` here: change files with edit_file or write_file, or with SEARCH/REPLACE blocks"
        )),
    }
}

/// Each call's result: what became of its edit, or why it made none.
fn results(made: &[(String, Result<usize, String>)], applied: &[Applied]) -> Vec<ToolResult> {
    made.iter()
        .map(|(id, made)| {
            let (content, is_error) = match made.as_ref().map(|index| applied.get(*index)) {
                Err(why) => (why.clone(), true),
                Ok(Some(Applied {
                    applied: true,
                    path,
                    ..
                })) => (
                    format!("applied to {path}; the tests' outcome is in the next message"),
                    false,
                ),
                Ok(Some(Applied { reason, .. })) => (
                    format!("not applied: {}", reason.as_deref().unwrap_or("refused")),
                    true,
                ),
                Ok(None) => ("not applied".into(), true),
            };
            ToolResult {
                call_id: id.clone(),
                content,
                is_error,
            }
        })
        .collect()
}

pub(super) enum Asked {
    Answered(Result<Reply, Failure>),
    Interrupted(i32),
    /// The deadline passed first.
    TimedOut,
}

/// Asks the model on a thread of its own, so that a signal ends the wait at once (the thread is
/// left to its request; no sandbox is started after an interruption, so no fork sees it). The
/// live line says `asking` and the seconds waited. Past `deadline`, the wait ends too.
pub(super) fn ask(
    session: &Arc<Session>,
    prompt: &Prompt,
    signals: &TerminationSignals,
    asking: &str,
    deadline: Option<Instant>,
) -> Asked {
    let (sender, receiver) = std::sync::mpsc::channel();
    let session = Arc::clone(session);
    let (system, messages, tools) = (
        prompt.system.to_string(),
        prompt.messages.to_vec(),
        prompt.tools.to_vec(),
    );
    let max_tokens = prompt.max_tokens;
    std::thread::spawn(move || {
        let reply = session.ask(&Prompt {
            system: &system,
            messages: &messages,
            tools: &tools,
            max_tokens,
        });
        let _ = sender.send(reply);
    });
    let started = Instant::now();
    let mut shown = 0;
    loop {
        let waited = started.elapsed().as_secs();
        if waited > shown {
            shown = waited;
            crate::log::step_update("heal", &format!("{asking} · {waited} s"));
        }
        match receiver.recv_timeout(Duration::from_millis(100)) {
            Ok(reply) => return Asked::Answered(reply),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Asked::Answered(Err(Failure::external(
                    "the model call ended without an answer",
                )))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Some(signal) = signals.take() {
                    return Asked::Interrupted(signal);
                }
                if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                    return Asked::TimedOut;
                }
            }
        }
    }
}
