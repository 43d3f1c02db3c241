//! MCP tasks (protocol 2025-11-25, experimental): a `tools/call` that asks to run as a task is
//! answered at once with the task, runs on a worker like any other call, and the client then
//! polls `tasks/get`, waits on `tasks/result`, lists with `tasks/list`, or stops it with
//! `tasks/cancel`. A client that ends plain calls after a minute (Codex's `tool_timeout_sec`)
//! can so follow a delegated task to its end. Tasks are kept in memory, for the server's life
//! at most, and once ended for their `ttl` (from their creation) at most.

use std::collections::HashMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// How long an ended task is kept when the client asks for no `ttl`, and the longest it may ask.
const DEFAULT_TTL: Duration = Duration::from_secs(3600);
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
/// How often the client is asked to poll.
const POLL_INTERVAL_MS: u64 = 1000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }
}

struct Task {
    status: Status,
    message: Option<String>,
    created: SystemTime,
    updated: SystemTime,
    ttl: Duration,
    /// The call's answer once it ended: `{"result": ...}` or `{"error": ...}`.
    answer: Option<Value>,
    cancelled: Arc<AtomicBool>,
}

/// A task's fault in the client's request: the JSON-RPC error's message (code -32602).
pub(super) type Refusal = String;

#[derive(Default)]
pub(super) struct Tasks {
    table: Mutex<HashMap<String, Task>>,
    /// Signalled when a task ends (or is cancelled): `tasks/result` waits on it.
    ended: Condvar,
}

impl Tasks {
    /// A new working task for a call whose `cancelled` flag it sets on `tasks/cancel`; the
    /// client's `ttl` (milliseconds) within bounds. Returns its id and its JSON.
    pub(super) fn create(
        &self,
        ttl: Option<u64>,
        cancelled: Arc<AtomicBool>,
    ) -> std::io::Result<(String, Value)> {
        let mut random = [0u8; 16];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut random)?;
        // The id is all a client needs to reach a task: one no one can guess.
        let id: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
        let now = SystemTime::now();
        let task = Task {
            status: Status::Working,
            message: None,
            created: now,
            updated: now,
            ttl: ttl.map_or(DEFAULT_TTL, Duration::from_millis).min(MAX_TTL),
            answer: None,
            cancelled,
        };
        let shown = shown(&id, &task);
        let mut table = self.table.lock().unwrap();
        forget_expired(&mut table);
        table.insert(id.clone(), task);
        Ok((id, shown))
    }

    /// The call's answer (a JSON-RPC response) for the task: completed, or failed when the
    /// call failed or its result is an error. A cancelled task keeps its status; its answer
    /// (what the call said as it stopped) is still kept. Returns the task's JSON, to tell.
    pub(super) fn end(&self, id: &str, response: &Value) -> Option<Value> {
        let mut table = self.table.lock().unwrap();
        let task = table.get_mut(id)?;
        let answer = match (response.get("result"), response.get("error")) {
            (Some(result), _) => json!({"result": result}),
            (None, Some(error)) => json!({"error": error}),
            (None, None) => {
                json!({"error": {"code": -32603, "message": "the call gave no answer"}})
            }
        };
        if task.status == Status::Working {
            let failed = answer.get("error").is_some()
                || answer.pointer("/result/isError") == Some(&Value::Bool(true));
            task.status = if failed {
                Status::Failed
            } else {
                Status::Completed
            };
            task.message = failed.then(|| {
                answer
                    .pointer("/error/message")
                    .or_else(|| answer.pointer("/result/content/0/text"))
                    .and_then(Value::as_str)
                    .map(|text| crate::text::one_line(text, 200))
                    .unwrap_or_else(|| "the call failed".into())
            });
            task.updated = SystemTime::now();
        }
        task.answer = Some(answer);
        let shown = shown(id, task);
        self.ended.notify_all();
        Some(shown)
    }

    /// `tasks/get`.
    pub(super) fn get(&self, id: &str) -> Result<Value, Refusal> {
        let mut table = self.table.lock().unwrap();
        forget_expired(&mut table);
        table
            .get(id)
            .map(|task| shown(id, task))
            .ok_or_else(|| not_found(id))
    }

    /// `tasks/list`: every task kept, oldest first.
    pub(super) fn list(&self) -> Value {
        let mut table = self.table.lock().unwrap();
        forget_expired(&mut table);
        let mut tasks: Vec<(&String, &Task)> = table.iter().collect();
        tasks.sort_by_key(|(_, task)| task.created);
        json!({"tasks": tasks.into_iter().map(|(id, task)| shown(id, task)).collect::<Vec<_>>()})
    }

    /// `tasks/cancel`: the call is told to stop, and the task is cancelled at once.
    pub(super) fn cancel(&self, id: &str) -> Result<Value, Refusal> {
        let mut table = self.table.lock().unwrap();
        let task = table.get_mut(id).ok_or_else(|| not_found(id))?;
        if task.status != Status::Working {
            return Err(format!(
                "task {id} has ended ({}): there is nothing to cancel",
                task.status.name()
            ));
        }
        task.cancelled.store(true, Ordering::SeqCst);
        task.status = Status::Cancelled;
        task.message = Some("cancelled by the client".into());
        task.updated = SystemTime::now();
        let shown = shown(id, task);
        self.ended.notify_all();
        Ok(shown)
    }

    /// `tasks/result`: waits until the task has ended and its call has answered, then the
    /// call's answer, `{"result": ...}` (marked as the task's) or `{"error": ...}`.
    pub(super) fn result(&self, id: &str) -> Result<Value, Refusal> {
        let mut table = self.table.lock().unwrap();
        loop {
            let task = table.get(id).ok_or_else(|| not_found(id))?;
            if let Some(answer) = &task.answer {
                let mut answer = answer.clone();
                if let Some(result) = answer.get_mut("result").and_then(Value::as_object_mut) {
                    let meta = result.entry("_meta").or_insert_with(|| json!({}));
                    meta["io.modelcontextprotocol/related-task"] = json!({"taskId": id});
                }
                return Ok(answer);
            }
            table = self.ended.wait(table).unwrap();
        }
    }
}

fn not_found(id: &str) -> Refusal {
    format!("no task {id}: it never was, or it ended more than its ttl ago")
}

/// Ended tasks past their ttl are forgotten; a running one is kept whatever its age.
fn forget_expired(table: &mut HashMap<String, Task>) {
    let now = SystemTime::now();
    table.retain(|_, task| {
        task.answer.is_none() || now.duration_since(task.created).unwrap_or_default() < task.ttl
    });
}

/// A task as the protocol shows it.
fn shown(id: &str, task: &Task) -> Value {
    let mut shown = json!({
        "taskId": id,
        "status": task.status.name(),
        "createdAt": utc(task.created),
        "lastUpdatedAt": utc(task.updated),
        "ttl": task.ttl.as_millis() as u64,
        "pollInterval": POLL_INTERVAL_MS,
    });
    if let Some(message) = &task.message {
        shown["statusMessage"] = json!(message);
    }
    shown
}

/// `2026-12-03T07:40:12.345Z`.
fn utc(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
    let of_day = seconds % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60,
        since.subsec_millis()
    )
}

/// The Gregorian date `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_in_utc() {
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_millis(951_827_696_789);
        assert_eq!(utc(leap), "2000-02-29T12:34:56.789Z");
        let later = UNIX_EPOCH + Duration::from_secs(1_796_283_212);
        assert_eq!(utc(later), "2026-12-03T07:33:32.000Z");
    }

    #[test]
    fn a_task_ends_with_its_calls_answer_and_a_cancelled_one_keeps_its_status() {
        let tasks = Tasks::default();
        let flag = Arc::new(AtomicBool::new(false));
        let (id, shown) = tasks.create(Some(60_000), flag.clone()).unwrap();
        assert_eq!(
            (shown["status"].as_str(), shown["ttl"].as_u64()),
            (Some("working"), Some(60_000))
        );
        let ended = tasks
            .end(&id, &json!({"result": {"content": [{"type": "text", "text": "no such file"}], "isError": true}}))
            .unwrap();
        assert_eq!(ended["status"], "failed");
        assert_eq!(ended["statusMessage"], "no such file");
        let answer = tasks.result(&id).unwrap();
        assert_eq!(
            answer["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            json!(id)
        );
        assert!(tasks
            .cancel(&id)
            .unwrap_err()
            .contains("has ended (failed)"));

        let (id, _) = tasks.create(None, flag.clone()).unwrap();
        assert_eq!(tasks.cancel(&id).unwrap()["status"], "cancelled");
        assert!(flag.load(Ordering::SeqCst));
        tasks.end(&id, &json!({"result": {"content": [], "isError": false}}));
        assert_eq!(tasks.get(&id).unwrap()["status"], "cancelled");
        assert_eq!(tasks.list()["tasks"].as_array().unwrap().len(), 2);
        assert!(tasks.get("nope").unwrap_err().contains("no task nope"));
    }
}
