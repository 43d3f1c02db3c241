//! `node --test`'s warm runs. Node cannot fork a process it keeps warm, and before 22.8 its
//! runner starts a process for each test file under a process of its own, which doubles what
//! a run of a few milliseconds' tests costs (130 ms against 62 ms in the sandbox, Node 20).
//! So the failing tests' own files are loaded into one node process, which reports as the
//! runner does. The files come from a cold run's TAP: each failure's `location` names the file
//! that defines it (ids name no file). Heal trusts these runs only once the failing tests fail
//! in them as they did cold.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::warm::Learnt;
use super::{node_in_one_process, node_tap, policy_for, report_of, TestRequest};
use crate::error::Failure;
use crate::run_document::{Framework, TestReport};
use crate::sandbox::policy::BackendKind;

/// One workspace's `node --test` runs in one process.
pub(super) struct OneProcess {
    request: TestRequest,
    root: PathBuf,
    /// The files that define the failing tests, relative to the root.
    files: Vec<String>,
}

impl OneProcess {
    pub(super) fn new(request: TestRequest) -> Result<OneProcess, Failure> {
        let root = request.sandbox.workspace.canonicalize().map_err(|err| {
            Failure::usage(format!("{}: {err}", request.sandbox.workspace.display()))
        })?;
        Ok(OneProcess {
            request,
            root,
            files: Vec::new(),
        })
    }

    /// Runs `tests` cold, and learns the files that define them; when one of them is not
    /// known (a test that did not fail says no location), why runs in one process cannot be
    /// trusted.
    pub(super) fn learn(
        &mut self,
        tests: Vec<String>,
        limit: Duration,
    ) -> Result<(TestReport, Learnt), Failure> {
        let request = self.request_for(tests, limit);
        let (policy, command) = policy_for(Framework::Node, &request, &self.root)?;
        let result = crate::sandbox::run(&policy, BackendKind::Native)?;
        let log = result.stdout.as_deref().unwrap_or("");
        let defined_in = node_tap::failed_tests_files(log, &self.root);
        let report = report_of(
            Framework::Node,
            &request,
            &self.root,
            (policy.timeout, command),
            result,
        )?;
        let mut files = BTreeSet::new();
        let mut unsafe_reason = None;
        for id in &request.tests {
            match defined_in.get(id) {
                Some(file) => {
                    files.insert(file.clone());
                }
                None => {
                    unsafe_reason =
                        Some(format!("node did not say which file defines the test {id}"));
                }
            }
        }
        self.files = files.into_iter().collect();
        let learnt = Learnt {
            unsafe_reason,
            learnt: self.files.clone(),
        };
        Ok((report, learnt))
    }

    /// Takes the files another `OneProcess` learnt.
    pub(super) fn preload(&mut self, files: &[String]) -> Option<String> {
        self.files = files.to_vec();
        None
    }

    /// Runs `tests`, cut at `limit`, in one process that loads the files learnt.
    pub(super) fn run(&self, tests: Vec<String>, limit: Duration) -> Result<TestReport, Failure> {
        if self.files.is_empty() {
            return Err(Failure::usage(
                "node's tests run in one process only once their files are learnt",
            ));
        }
        let request = self.request_for(tests, limit);
        let (mut policy, _) = policy_for(Framework::Node, &request, &self.root)?;
        let command = node_in_one_process(&request.tests, &self.files);
        policy.command = command.iter().map(OsString::from).collect();
        let result = crate::sandbox::run(&policy, BackendKind::Native)?;
        report_of(
            Framework::Node,
            &request,
            &self.root,
            (policy.timeout, command),
            result,
        )
    }

    fn request_for(&self, tests: Vec<String>, limit: Duration) -> TestRequest {
        let mut request = self.request.clone();
        request.tests = tests;
        request.sandbox.timeout = limit;
        request
    }
}
