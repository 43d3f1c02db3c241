//! The run document's wire format, written out field by field: each section a stage writes is
//! parsed into a struct that denies unknown fields, so a field added, renamed or dropped fails
//! here and every change to what users' `jq` filters read is a deliberate one (ripgrep's
//! `tests/json.rs` does the same for its JSON lines). Optional fields are `Option` or defaulted
//! as the writer skips them; the values are the tests' business, the shape is this file's.

#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// Parses the section `key` a stage wrote into its strict shape; panics naming the field that
/// did not fit.
#[track_caller]
pub(crate) fn check_section(key: &str, value: &Value) {
    let parsed = match key {
        "issue" => Issue::deserialize(value).map(drop),
        "tests" => TestReport::deserialize(value).map(drop),
        "heal" => Heal::deserialize(value).map(drop),
        "review" => Review::deserialize(value).map(drop),
        "pr" => PullRequest::deserialize(value).map(drop),
        other => panic!("no stage writes a section `{other}`"),
    };
    if let Err(err) = parsed {
        panic!("the document's `{key}` is not its shape: {err}\n{value:#}");
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Issue {
    source: String,
    repo: Option<String>,
    number: Option<u64>,
    url: Option<String>,
    path: Option<String>,
    title: String,
    body: String,
    labels: Vec<String>,
    state: Option<String>,
    author: Option<String>,
    pull_request: Option<bool>,
    comments: Vec<Comment>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Comment {
    author: String,
    body: String,
    created_at: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestReport {
    framework: String,
    framework_reason: String,
    command: Vec<String>,
    outcome: String,
    exit_code: Option<i32>,
    counts: Counts,
    failures: Vec<TestFailure>,
    failures_omitted: u64,
    #[serde(default)]
    running: Vec<String>,
    reason: Option<String>,
    hint: Option<String>,
    build_error: Option<String>,
    duration_ms: u64,
    output_tail: String,
    sandbox: Option<SandboxResult>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Counts {
    passed: u64,
    failed: u64,
    errors: u64,
    skipped: u64,
    xfailed: u64,
    xpassed: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestFailure {
    id: String,
    file: Option<String>,
    line: Option<u32>,
    kind: Option<String>,
    message: String,
    details: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxResult {
    backend: String,
    command: Vec<String>,
    exit_code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    limit_hit: Option<String>,
    duration_ms: u64,
    stdout: Option<String>,
    stderr: Option<String>,
    stdout_truncated: bool,
    stderr_truncated: bool,
    layers: Layers,
    disk: Option<Value>,
    #[serde(default)]
    quarantined: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Layers {
    filesystem: FilesystemLayer,
    network: NetworkLayer,
    identity: IdentityLayer,
    resources: ResourceLayer,
    containment: ContainmentLayer,
    environment: EnvironmentLayer,
    degraded: Vec<Degradation>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilesystemLayer {
    mechanism: String,
    abi: Option<u32>,
    read_write: Vec<String>,
    read_only: Vec<String>,
    view: String,
    left_out: Vec<String>,
    environments: Vec<String>,
    git_directory: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkLayer {
    allowed: bool,
    mechanisms: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdentityLayer {
    uid: u32,
    gid: u32,
    root: bool,
    capabilities: String,
    no_new_privs: bool,
    user_namespace: bool,
    idmapped_workspace: bool,
    seccomp: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceLayer {
    mechanism: String,
    memory_bytes: u64,
    pids: u32,
    cpus: f64,
    cpu_mechanism: String,
    memory_mechanism: String,
    cgroups_refused: Option<String>,
    file_size_bytes: u64,
    disk_bytes: Option<u64>,
    open_files: u64,
    timeout_ms: u64,
    max_output_bytes: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContainmentLayer {
    pid_namespace: bool,
    mount_namespace: bool,
    ipc_namespace: bool,
    network_namespace: bool,
    new_session: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvironmentLayer {
    passed: Vec<String>,
    withheld: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Degradation {
    layer: String,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Heal {
    mode: String,
    status: String,
    engine: Option<String>,
    model: Option<HealModel>,
    reason: String,
    attempts: Vec<Attempt>,
    candidates_tried: u64,
    #[serde(default)]
    plausible: Vec<Plausible>,
    flaky: Vec<String>,
    failing_before: Vec<String>,
    diff: String,
    files_changed: Vec<String>,
    applied: bool,
    patch_file: Option<String>,
    tokens: Tokens,
    error: Option<HealError>,
    tests: Option<TestReport>,
    summary: Option<Summary>,
    #[serde(default)]
    steps: Vec<TaskStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HealModel {
    provider: String,
    name: String,
    base_url: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tokens {
    #[serde(rename = "in")]
    input: u64,
    #[serde(rename = "out")]
    output: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HealError {
    message: String,
    hint: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Attempt {
    number: u32,
    engine: String,
    change: Option<String>,
    edits: Vec<Applied>,
    #[serde(default)]
    problems: Vec<String>,
    #[serde(default)]
    cut_off: bool,
    outcome: Option<String>,
    counts: Option<Counts>,
    whole_suite: bool,
    still_failing: Vec<String>,
    regressions: Vec<String>,
    kept: bool,
    tokens: Tokens,
    model_seconds: f64,
    test_seconds: f64,
    #[serde(default)]
    warm: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Applied {
    path: String,
    applied: bool,
    matched: Option<String>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Plausible {
    change: String,
    tier: u8,
    lines: usize,
    found_after: u64,
    diff: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Summary {
    by: String,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskStep {
    step: u32,
    tool: String,
    arguments: Value,
    result_chars: usize,
    is_error: bool,
    seconds: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Review {
    verdict: String,
    summary: String,
    files: Vec<FileShown>,
    risks: Vec<Risk>,
    test_mapping: TestMapping,
    context: Vec<Snippet>,
    findings: Vec<Risk>,
    model: Option<ModelReview>,
    posted: Option<Value>,
    human_review_required: bool,
    #[serde(default)]
    markdown: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShown {
    path: String,
    status: String,
    old_path: Option<String>,
    added: usize,
    removed: usize,
    language: Option<String>,
    #[serde(default)]
    binary: bool,
    #[serde(default)]
    untracked: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Risk {
    rule: String,
    severity: String,
    path: String,
    line: Option<u32>,
    evidence_id: String,
    message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestMapping {
    covered: BTreeMap<String, Vec<String>>,
    untested: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Snippet {
    evidence_id: String,
    path: String,
    kind: String,
    start_line: u32,
    end_line: u32,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelReview {
    model: String,
    dropped: usize,
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PullRequest {
    #[serde(default)]
    dry_run: bool,
    number: Option<u64>,
    url: Option<String>,
    branch: String,
    base: String,
    commit: String,
    created: Option<bool>,
    updated: Option<bool>,
    draft: bool,
    request: Option<Value>,
}
