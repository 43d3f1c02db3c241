//! The run document: the JSON object that flows through a pipeline of autocoder commands.
//!
//! A stage reads it from stdin (when stdin is not a terminal and not empty), sets its own key and
//! writes the whole document back; keys it does not own pass through untouched, as they were
//! read, so users can `jq` things in between. Version 1 is marked by `"autocoder": 1`. The
//! sections are read and written as types (`Issue`, `TestReport`, `Heal`, `PullRequest`); a
//! section that does not have its type's shape is bad input, said with its key.
//!
//! ```json
//! {"autocoder": 1, "workspace": "/src/shop", "repo": "acme/shop",
//!  "issue": {"source": "github", "number": 42, "title": "...", "body": "...", "comments": []},
//!  "tests": {"framework": "pytest", "outcome": "tests_failed", "counts": {...}, "failures": [...]},
//!  "heal": {"status": "green", "diff": "..."}, "pr": {"number": 7, "branch": "...", ...}}
//! ```

mod heal;
mod issue;
mod pull_request;
mod review;
mod test_report;

use std::io::{IsTerminal, Read};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

pub(crate) use self::heal::{
    Applied, Attempt, Heal, HealError, HealMode, HealModel, HealStatus, Plausible, Summary,
    TaskStep, Tokens,
};
pub(crate) use self::issue::{Comment, Issue};
pub(crate) use self::pull_request::PullRequest;
pub(crate) use self::review::{
    FileShown, FileStatus, ModelReview, Review, Risk, Severity, Snippet, TestMapping, Verdict,
};
pub(crate) use self::test_report::{Counts, Framework, Outcome, TestFailure, TestReport};
use crate::error::Failure;

/// The document format version this build reads and writes.
pub(crate) const VERSION: u64 = 1;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunDocument {
    fields: Map<String, Value>,
}

impl Default for RunDocument {
    fn default() -> RunDocument {
        let mut fields = Map::new();
        fields.insert("autocoder".into(), Value::from(VERSION));
        RunDocument { fields }
    }
}

impl RunDocument {
    /// Reads the document a previous stage wrote, or starts a new one when stdin is a terminal or
    /// empty.
    /// `command` names the stage in the message it gives when stdin stays silent.
    pub(crate) fn from_stdin(command: &str) -> Result<RunDocument, Failure> {
        RunDocument::from_stdin_or_empty_pipe(command).map(|(document, _)| document)
    }

    /// `from_stdin`, also saying whether stdin was a pipe that closed without a byte: in a
    /// pipeline, the stage before failed (and said why), which a stage with effects beyond its
    /// output must not take as "no document".
    pub(crate) fn from_stdin_or_empty_pipe(command: &str) -> Result<(RunDocument, bool), Failure> {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return Ok((RunDocument::default(), false));
        }
        // A stage started with a pipe that stays open (`sleep 15 | autocoder run-tests`) would
        // otherwise wait without a word.
        use std::os::fd::AsFd;
        let mut ready = [nix::poll::PollFd::new(
            stdin.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        if nix::poll::poll(&mut ready, 1000u16) == Ok(0) {
            crate::log::info(
                command,
                "waiting for the run document on stdin (give < /dev/null to start without one)",
            );
        }
        let mut text = String::new();
        stdin.lock().read_to_string(&mut text).map_err(|err| {
            Failure::usage(format!("cannot read the run document from stdin: {err}"))
        })?;
        let is_pipe = nix::sys::stat::fstat(stdin.as_fd())
            .is_ok_and(|stat| crate::sys::file_kind(&stat) == nix::sys::stat::SFlag::S_IFIFO);
        Ok((RunDocument::parse(&text)?, is_pipe && text.is_empty()))
    }

    /// Parses a document; empty input starts a new one.
    pub(crate) fn parse(text: &str) -> Result<RunDocument, Failure> {
        if text.trim().is_empty() {
            return Ok(RunDocument::default());
        }
        let value: Value = serde_json::from_str(text).map_err(|err| {
            Failure::usage(format!("stdin is not a run document: {err}")).with_hint(
                "pipe the output of another autocoder command, or give no stdin (< /dev/null)",
            )
        })?;
        let Value::Object(mut fields) = value else {
            return Err(Failure::usage(
                "stdin is not a run document: expected a JSON object",
            ));
        };
        match fields.get("autocoder") {
            None => {
                fields.insert("autocoder".into(), Value::from(VERSION));
            }
            Some(Value::Number(n)) if n.as_u64() == Some(VERSION) => {}
            Some(other) => {
                return Err(Failure::usage(format!(
                    "the run document has version {other}; this autocoder reads version {VERSION}"
                ))
                .with_hint("use the same autocoder version for every stage of the pipeline"))
            }
        }
        Ok(RunDocument { fields })
    }

    /// The workspace a stage works on: the flag's, else the document's, else the current
    /// directory.
    pub(crate) fn workspace(
        &self,
        flag: Option<&std::path::Path>,
    ) -> Result<std::path::PathBuf, Failure> {
        if let Some(flag) = flag {
            return Ok(flag.to_path_buf());
        }
        match self.fields.get("workspace") {
            None => Ok(std::path::PathBuf::from(".")),
            Some(Value::String(path)) if !path.is_empty() => Ok(path.into()),
            Some(other) => Err(Failure::usage(format!(
                "the run document's workspace is {other}, not a directory's path"
            ))
            .with_hint("fix the document's `workspace`, or give --workspace DIR")),
        }
    }

    /// Whether the document has the key `key` (null or not).
    pub(crate) fn has(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }

    /// The GitHub repository the document is about (OWNER/NAME).
    pub(crate) fn repo(&self) -> Result<Option<String>, Failure> {
        self.section("repo", "OWNER/NAME")
    }

    pub(crate) fn issue(&self) -> Result<Option<Issue>, Failure> {
        self.section("issue", "an issue (fetch-issue writes one)")
    }

    pub(crate) fn tests(&self) -> Result<Option<TestReport>, Failure> {
        self.section("tests", "a test report (run-tests writes one)")
    }

    pub(crate) fn heal(&self) -> Result<Option<Heal>, Failure> {
        self.section("heal", "a repair (heal writes one)")
    }

    pub(crate) fn review(&self) -> Result<Option<Review>, Failure> {
        self.section("review", "a review (review writes one)")
    }

    pub(crate) fn pr(&self) -> Result<Option<PullRequest>, Failure> {
        self.section("pr", "a pull request (open-pr writes one)")
    }

    pub(crate) fn set_workspace(&mut self, workspace: &Path) {
        self.set("workspace", &workspace.display().to_string());
    }

    pub(crate) fn set_repo(&mut self, repo: &str) {
        self.set("repo", repo);
    }

    pub(crate) fn set_issue(&mut self, issue: &Issue) {
        self.set("issue", issue);
    }

    pub(crate) fn set_tests(&mut self, tests: &TestReport) {
        self.set("tests", tests);
    }

    pub(crate) fn set_heal(&mut self, heal: &Heal) {
        self.set("heal", heal);
    }

    pub(crate) fn set_review(&mut self, review: &Review) {
        self.set("review", review);
    }

    pub(crate) fn set_pr(&mut self, pr: &PullRequest) {
        self.set("pr", pr);
    }

    /// The whole document, as it is written.
    pub(crate) fn as_value(&self) -> &Map<String, Value> {
        &self.fields
    }

    /// The section `key` as a `T`; none when the document has none (or it is null).
    fn section<T: DeserializeOwned>(&self, key: &str, shape: &str) -> Result<Option<T>, Failure> {
        match self.fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => T::deserialize(value).map(Some).map_err(|err| {
                Failure::usage(format!("the run document's `{key}` is not {shape}: {err}"))
                    .with_hint(format!(
                        "fix or remove `{key}` in the document (jq 'del(.{key})')"
                    ))
            }),
        }
    }

    /// Sets a stage's key, replacing what an earlier run of the same stage wrote.
    fn set<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        let value = serde_json::to_value(value).expect("a section serializes");
        self.fields.insert(key.to_string(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_unknown_keys_and_replaces_its_own() {
        let mut doc = RunDocument::parse(
            r#"{"autocoder":1,"custom":{"a":1},"repo":"acme/shop","issue":{"title":"T","x":2}}"#,
        )
        .unwrap();
        let mut issue = doc.issue().unwrap().unwrap();
        assert_eq!(issue.other["x"], 2);
        issue.title = "New".into();
        doc.set_issue(&issue);
        assert_eq!(doc.repo().unwrap().as_deref(), Some("acme/shop"));
        assert_eq!(
            Value::Object(doc.as_value().clone()),
            serde_json::json!({"autocoder": 1, "custom": {"a": 1}, "repo": "acme/shop",
                "issue": {"source": "", "title": "New", "body": "", "labels": [], "comments": [], "x": 2}})
        );
    }

    #[test]
    fn sections_are_read_as_their_types() {
        let doc = RunDocument::parse(
            r#"{"tests": {"framework": "pytest", "outcome": "tests_failed", "counts": {"failed": 1},
                "failures": [{"id": "t::a", "message": "boom"}]},
                "heal": {"status": "green", "diff": "--- a\n", "attempts": [{"number": 1}],
                         "note": "kept"}}"#,
        )
        .unwrap();
        let tests = doc.tests().unwrap().unwrap();
        assert_eq!(tests.outcome, Outcome::TestsFailed);
        assert_eq!(
            (tests.counts.failed, tests.failures[0].id.as_str()),
            (1, "t::a")
        );
        let heal = doc.heal().unwrap().unwrap();
        assert_eq!(heal.status, Some(HealStatus::Green));
        assert_eq!(
            (heal.attempts[0].number, heal.diff.as_str()),
            (1, "--- a\n")
        );
        assert_eq!(heal.other["note"], "kept");
        assert_eq!(doc.pr().unwrap(), None);
        let wrong = RunDocument::parse(r#"{"heal": {"status": "blue"}}"#).unwrap();
        let err = wrong.heal().unwrap_err();
        assert!(
            format!("{:#}", err.error).contains("`heal`"),
            "{:#}",
            err.error
        );
    }

    #[test]
    fn empty_input_starts_a_document() {
        assert_eq!(RunDocument::parse("  \n").unwrap(), RunDocument::default());
    }

    #[test]
    fn rejects_other_versions_and_non_objects() {
        assert!(RunDocument::parse(r#"{"autocoder":2}"#).is_err());
        assert!(RunDocument::parse("[1]").is_err());
        assert!(RunDocument::parse("{").is_err());
    }
}
