//! What heal writes beside its section (`run_document::Heal`): the section's start, the
//! `--events` file, one JSON line per step, and the summary line said at the end. Neither the
//! section nor the file holds a prompt's text, only its hash.

use std::io::Write;
use std::time::Instant;

use serde_json::{json, Value};

use crate::llm::Session;
use crate::run_document::{Heal, HealMode, HealModel, HealStatus};
use crate::secrets::Secrets;

/// A section of `mode` with nothing found yet, for `session`'s model.
pub(crate) fn new_heal(mode: HealMode, session: Option<&Session>) -> Heal {
    Heal {
        mode,
        status: Some(HealStatus::NoChange),
        model: session.map(|session| {
            let model = session.model();
            HealModel {
                provider: model.provider.name().to_string(),
                name: model.name.clone().unwrap_or_default(),
                base_url: crate::http::without_userinfo(&model.base_url),
            }
        }),
        ..Heal::default()
    }
}

/// The last line said: the status and why, and what the repair took.
pub(crate) fn summary(report: &Heal, took: std::time::Duration) -> String {
    let status = report.status.map_or("unknown", HealStatus::name);
    let mut line = match report.reason.starts_with(status) {
        true => report.reason.clone(),
        false => format!("{status}: {}", report.reason),
    };
    let attempts = report.attempts.len();
    if attempts > 0 && report.candidates_tried == 0 && !line.contains("attempt") {
        line.push_str(&format!(
            " · {attempts} attempt{}",
            if attempts == 1 { "" } else { "s" }
        ));
    }
    if !report.steps.is_empty() {
        line.push_str(&format!(" · {} tool calls", report.steps.len()));
    }
    let tokens = report.tokens.input + report.tokens.output;
    if tokens > 0 {
        line.push_str(&format!(" · {tokens} tokens"));
    }
    line.push_str(&format!(" · {:.1} s", took.as_secs_f64()));
    crate::text::sanitize_for_terminal(&line)
}

/// The `--events` file: one JSON object per line, each with the milliseconds since heal began,
/// and none with a secret (however spelled) in it.
pub(crate) struct Events {
    out: Option<std::fs::File>,
    started: Instant,
    secrets: Secrets,
}

impl Events {
    pub(crate) fn new(out: Option<std::fs::File>, secrets: Secrets) -> Events {
        Events {
            out,
            started: Instant::now(),
            secrets,
        }
    }

    /// When heal began, which every event's milliseconds count from.
    pub(crate) fn origin(&self) -> Instant {
        self.started
    }

    pub(crate) fn emit(&mut self, event: &str, mut fields: Value) {
        let Some(out) = &mut self.out else {
            return;
        };
        let mut line = json!({"event": event, "ms": self.started.elapsed().as_millis() as u64});
        if let (Some(line), Some(fields)) = (line.as_object_mut(), fields.as_object_mut()) {
            line.append(fields);
        }
        self.secrets.withhold_json(&mut line);
        // An events file that cannot be written must not end the repair.
        let _ = writeln!(out, "{line}");
    }
}

/// A short, stable hash of a prompt (FNV-1a, 64 bits): equal prompts have equal hashes.
pub(crate) fn prompt_hash(system: &str, user: &str) -> String {
    let bytes = system.bytes().chain([0]).chain(user.bytes());
    format!("{:016x}", crate::text::fnv1a(bytes))
}
