//! The model engine: one request per attempt, the prompt from `prompt`, the edits read from the
//! reply's text. The call runs on a thread of its own so that a signal ends the wait at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::record::Tokens;
use super::tree::Tree;
use super::{edits, prompt, Context, Engine, Proposal, Proposed};
use crate::error::Failure;
use crate::llm::{Prompt, Reply, Session};
use crate::sandbox::supervise::TerminationSignals;

/// Tokens a reply may take.
const REPLY_TOKENS: u32 = 4096;

pub struct ModelEngine {
    session: Arc<Session>,
    /// The stable prefix, made on the first attempt from the project's files.
    system: Option<String>,
    secrets: Vec<String>,
}

impl ModelEngine {
    /// `secrets` are withheld from every message (`prompt::secrets`).
    pub fn new(session: Arc<Session>, secrets: Vec<String>) -> ModelEngine {
        ModelEngine {
            session,
            system: None,
            secrets,
        }
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
        let secrets = &self.secrets;
        let system = self
            .system
            .get_or_insert_with(|| prompt::withheld(&prompt::system(context.files), secrets))
            .as_str();
        let user = prompt::message(
            context,
            tree,
            prompt::MAX_CHARS.saturating_sub(system.len()),
        );
        let user = prompt::withheld(&tree.without_copy_path(&user), &self.secrets);
        crate::log::info(
            "heal",
            &format!(
                "attempt {}: asking {} (~{} tokens)",
                context.number,
                self.session.model().name.as_deref().unwrap_or("the model"),
                (system.len() + user.len()) / 4
            ),
        );
        let asked = Instant::now();
        let reply = match ask(&self.session, system, &user, context.signals) {
            Asked::Interrupted(signal) => return Ok(Proposed::Interrupted(signal)),
            Asked::Answered(reply) => reply?,
        };
        let parsed = edits::parse(&reply.text);
        Ok(Proposed::Edits(Proposal {
            edits: parsed.edits,
            problems: parsed.problems,
            cut_off: reply.cut_off,
            // A server that says nothing of usage is counted at about 4 characters a token, so
            // that --token-budget still holds.
            tokens: Tokens {
                input: match reply.tokens_in {
                    0 => ((system.len() + user.len()) / 4) as u64,
                    counted => counted,
                },
                output: match reply.tokens_out {
                    0 => (reply.text.len() / 4) as u64,
                    counted => counted,
                },
            },
            model_seconds: asked.elapsed().as_secs_f64(),
            prompt_hash: Some(super::record::prompt_hash(system, &user)),
            label: None,
        }))
    }
}

enum Asked {
    Answered(Result<Reply, Failure>),
    Interrupted(i32),
}

/// Asks the model on a thread of its own, so that a signal ends the wait at once (the thread is
/// left to its request; no sandbox is started after an interruption, so no fork sees it).
fn ask(session: &Arc<Session>, system: &str, user: &str, signals: &TerminationSignals) -> Asked {
    let (sender, receiver) = std::sync::mpsc::channel();
    let (session, system, user) = (Arc::clone(session), system.to_string(), user.to_string());
    std::thread::spawn(move || {
        let reply = session.ask(&Prompt {
            system: &system,
            user: &user,
            max_tokens: REPLY_TOKENS,
        });
        let _ = sender.send(reply);
    });
    loop {
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
            }
        }
    }
}
