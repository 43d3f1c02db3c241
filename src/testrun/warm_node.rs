//! `node --test`'s warm runs. Node cannot fork a process it keeps warm, and before 22.8 its
//! runner starts a process for each test file under a process of its own, which doubles what
//! a run of a few milliseconds' tests costs (130 ms against 62 ms in the sandbox, Node 20).
//! So when the failing tests are defined in one file, that file is run as node's program, as
//! the process the runner starts for it would run it, and it reports as the runner does. The
//! file comes from a cold run's TAP: each failure's `location` names the file that defines it
//! (ids name no file). Tests of several files stay cold: loaded into one process, they would
//! share their modules and `process.argv`, which the runner keeps apart. Heal trusts these runs
//! only once the failing tests fail in them as they did cold.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::warm::Learnt;
use super::{node_file_run, node_tap, policy_for, report_of, TestRequest};
use crate::error::Failure;
use crate::run_document::{Framework, TestReport};
use crate::sandbox::policy::BackendKind;

/// One workspace's `node --test` runs of one test file, in one process.
pub(super) struct OneProcess {
    request: TestRequest,
    root: PathBuf,
    /// The file that defines the failing tests, relative to the root, once learnt.
    file: Option<String>,
}

impl OneProcess {
    pub(super) fn new(request: TestRequest) -> Result<OneProcess, Failure> {
        let root = request.sandbox.workspace.canonicalize().map_err(|err| {
            Failure::usage(format!("{}: {err}", request.sandbox.workspace.display()))
        })?;
        Ok(OneProcess {
            request,
            root,
            file: None,
        })
    }

    /// Runs `tests` cold, and learns the file that defines them; when it is not one file (or
    /// a test did not say where it is defined), why one process would not run them as the
    /// runner does.
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
        if files.len() > 1 {
            unsafe_reason = Some(format!(
                "the failing tests are defined in {} files, which node --test runs each in a \
                 process of its own",
                files.len()
            ));
        }
        self.file = files.into_iter().next().filter(|_| unsafe_reason.is_none());
        let learnt = Learnt {
            unsafe_reason,
            learnt: self.file.iter().cloned().collect(),
        };
        Ok((report, learnt))
    }

    /// Takes the file another `OneProcess` learnt.
    pub(super) fn preload(&mut self, learnt: &[String]) -> Option<String> {
        self.file = learnt.first().cloned();
        None
    }

    /// Runs `tests`, cut at `limit`, in one process: the file learnt, as node's program.
    pub(super) fn run(&self, tests: Vec<String>, limit: Duration) -> Result<TestReport, Failure> {
        let Some(file) = &self.file else {
            return Err(Failure::usage(
                "node's tests run in one process only once their file is learnt",
            ));
        };
        let request = self.request_for(tests, limit);
        let (mut policy, _) = policy_for(Framework::Node, &request, &self.root)?;
        let command = node_file_run(&request.tests, file);
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
