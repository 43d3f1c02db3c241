//! The command line: every subcommand and flag, as clap derive definitions.
//!
//! Only commands that work are listed here; `generate` is hidden because it exists for packagers
//! (it writes the man pages and shell completions committed under `man/` and `completions/`).

use std::ffi::OsString;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::log::ColorChoice;
use crate::sandbox::policy::{parse_duration, parse_size, BackendKind};

/// Closed-loop code repair: reproduce, repair, review and open a pull request, one JSON step at a
/// time.
#[derive(Debug, Parser)]
#[command(name = "autocoder", version, max_term_width = 100)]
#[command(after_help = "Every command writes JSON to stdout; messages go to stderr.")]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Reads the command line (the program's name first).
    pub(crate) fn read(args: &[OsString]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(args)
    }
}

/// Flags every command accepts.
#[derive(Debug, Args, Clone)]
pub(crate) struct GlobalArgs {
    /// Run as if started in DIR.
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub directory: Option<PathBuf>,

    /// Indent the JSON written to stdout.
    #[arg(long, global = true)]
    pub pretty: bool,

    /// Print nothing on stderr but errors.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Explain each step on stderr.
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true, value_name = "WHEN")]
    pub color: ColorChoice,
}

#[derive(Debug, Subcommand)]
// Only the subcommand given is built (building all of them slows every parse down). The
// descriptions are on the variants, so that `--help` lists them all the same.
#[command(defer = true)]
pub(crate) enum Command {
    /// Fetch the issue a repair starts from, into the run document.
    ///
    /// REF is owner/repo#42, an issue or pull request URL, 42 or #42 (in a clone: the repository of
    /// its `origin` remote), a local .md file (title from front matter or the first heading), a .json
    /// file (an issue or a run document), or - for Markdown on stdin. The API is --api-url, else
    /// GITHUB_API_URL, else api.github.com (GitHub Enterprise Server: https://HOST/api/v3, implied by
    /// an issue URL on that host). The token comes from GITHUB_TOKEN or GH_TOKEN (optional for public
    /// repositories) and goes only to github.com's API or one named; an API implied by an issue's
    /// address gets GH_ENTERPRISE_TOKEN or GITHUB_ENTERPRISE_TOKEN instead, when GH_HOST names it.
    FetchIssue(FetchIssueArgs),
    /// Repair the code until the failing tests pass, with a model, in a private copy.
    ///
    /// Reads the run document (its `issue`, and its `tests` when they were run in this workspace;
    /// else the tests are run first) and writes it back with `heal`: the status (green, red,
    /// no_change, budget_exhausted), each attempt (the edits, which applied and why not, the tests'
    /// outcome, tokens, seconds), the diff and the final test run. The model is any OpenAI-
    /// compatible server or Anthropic: --model/--base-url, else AUTOCODER_MODEL/AUTOCODER_BASE_URL
    /// (then OPENAI_BASE_URL); the key from AUTOCODER_API_KEY, else OPENAI_API_KEY or
    /// ANTHROPIC_API_KEY. A key alone configures nothing. Candidates are tested in the sandbox:
    /// the failing tests first, then the whole suite; a change that breaks a passing test is
    /// undone. Only a green change is written to the workspace, and only to files nobody changed
    /// meanwhile; otherwise the change is in heal.diff and a patch file. Test files are read-only
    /// unless --allow-test-edits. Exit status: 0 green, 1 not green (the document is still
    /// written), 2 bad input, 3 the model or the environment failed.
    Heal(HealArgs),
    /// Serve autocoder's tools to editors and agents over the Model Context Protocol (stdio).
    ///
    /// The tools (list_files, read_file, search_text, edit_file, write_file, run_command,
    /// run_tests, git_status, git_diff) work inside the roots only: --root (repeatable), else
    /// ALLOWED_WORKSPACE_ROOTS (colon-separated) or ALLOWED_WORKSPACE_ROOT, else the current
    /// directory; commands and tests run in the sandbox. One JSON-RPC message per line on stdin and
    /// stdout; logs on stderr; exits when stdin ends.
    Mcp(McpArgs),
    /// Commit the repair on a branch, push it and open (or update) a pull request.
    ///
    /// Reads the run document. The commit holds exactly heal's diff, or without a heal result the
    /// tracked changes in the workspace (never untracked files, nor files that look like
    /// credentials, unless named with --add); the checkout, index and working tree are left as they
    /// are. Refuses (exit 1,
    /// nothing pushed) when heal is not green, unless --draft, and when there is nothing to commit.
    /// The token (chosen as for fetch-issue) reaches git through a credential helper, never argv.
    /// Exit status: 0, 1 when it refuses, 2 for bad input, 3 when GitHub or git fails.
    OpenPr(OpenPrArgs),
    /// Review a change: what it touches, what could go wrong, with evidence.
    ///
    /// The change is, first that applies: --diff FILE (or - for stdin), --base REF (the working
    /// tree against it), the run document's heal.diff, the working tree against HEAD; a working
    /// tree's untracked files (not ignored) are in it, marked untracked. Deterministic rules
    /// (secrets added, weakened tests, auth and crypto code, CI and build config, dependencies,
    /// migrations, generated or vendored files, large or binary changes, untested changes) give
    /// risks that cite the context snippet showing them. Writes the document with `review`, or
    /// with --format the same review as Markdown, SARIF 2.1.0 or reviewdog diagnostics. Exit
    /// status: 0, 1 when a risk at or above --fail-on is found (the output is still written), 2
    /// for bad input, 3 when git fails.
    Review(ReviewArgs),
    /// Run the project's tests in the sandbox and report the failures as data.
    ///
    /// Reads the run document from stdin when there is one and writes it back with `tests` set:
    /// the outcome (passed, tests_failed, build_failed, no_tests, timeout, error), counts, and for
    /// each failure an id the runner takes back (--tests), the file and line inside the project, the
    /// kind, a one-line message and the traceback. Exit status: 0 when all pass, 1 when tests or the
    /// build fail (the document is still written), 2 for bad input, 3 when the runner cannot start,
    /// 128+N when stopped by signal N.
    RunTests(RunTestsArgs),
    /// Run one command in a rootless sandbox that can touch nothing but the workspace.
    ///
    /// The result is written to stdout as {"sandbox": {...}}: exit code, signal, limit hit, captured
    /// output and the isolation layers that were in force. The exit status follows timeout(1): the
    /// command's own status, 124 on timeout, 125 when the sandbox failed or the flags are wrong, 126
    /// when the command cannot be executed, 127 when it is not found, 128+N when killed by signal N.
    Sandbox(SandboxArgs),
    /// Write the man pages or shell completions (for packagers; `make generate`).
    #[command(hide = true)]
    Generate(GenerateArgs),
    /// The MCP server's git reader, run in the sandbox: answers requests on stdin
    /// about the repository in its current directory.
    #[command(hide = true)]
    GitReader(GitReaderArgs),
}

impl Command {
    /// The name used in messages: `autocoder <name>: error: ...`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Command::FetchIssue(_) => "fetch-issue",
            Command::Heal(_) => "heal",
            Command::Mcp(_) => "mcp",
            Command::OpenPr(_) => "open-pr",
            Command::Review(_) => "review",
            Command::RunTests(_) => "run-tests",
            Command::Sandbox(_) => "sandbox",
            Command::Generate(_) => "generate",
            Command::GitReader(_) => "git-reader",
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct GitReaderArgs {
    /// The linked worktree's own git directory, checked by the server; its `.git` file is not
    /// followed.
    #[arg(long, value_name = "DIR")]
    pub git_dir: Option<PathBuf>,
}

// The flags of `autocoder sandbox`: no doc comment, which would replace the description on
// `Command::Sandbox`.
#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Examples:\n  autocoder sandbox -- make test\n  autocoder sandbox --timeout 60s --memory 1G -- python3 -m pytest -x\n  autocoder sandbox --stream --env CI -- cargo test\n  autocoder sandbox --backend docker --image python:3.12 -- python3 -V"
)]
pub(crate) struct SandboxArgs {
    /// The directory the command can read and write, and starts in [default: the current
    /// directory].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    #[command(flatten)]
    pub limits: LimitArgs<SandboxDefaults>,

    /// Largest file the command may write, e.g. 64M, 1G.
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_size)]
    pub file_size: u64,

    /// Most all the files the command writes in the workspace may take together, e.g. 100M
    /// (native backend). Its changes reach the workspace when it ends by itself within it; a
    /// run that fills it, or times out or is interrupted before the command ends, changes
    /// nothing.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub disk: Option<u64>,

    /// Also allow reading and writing PATH.
    #[arg(long, value_name = "PATH")]
    pub rw: Vec<PathBuf>,

    /// Output kept per stream; beyond it the head and the tail are kept, e.g. 1M, 64K.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_size)]
    pub max_output: u64,

    /// Let the command's output through live; the result goes to stderr as one JSON line (or to
    /// --result).
    #[arg(long)]
    pub stream: bool,

    /// Write the result to FILE instead of stdout (or stderr with --stream).
    #[arg(long, value_name = "FILE")]
    pub result: Option<PathBuf>,

    /// Where the command runs.
    #[arg(long, value_enum, default_value_t = BackendKind::Native)]
    pub backend: BackendKind,

    /// The image for --backend docker.
    #[arg(long, value_name = "IMG")]
    pub image: Option<String>,

    /// Run even when an isolation layer cannot be applied (the result says which were in force).
    #[arg(long)]
    pub allow_degraded: bool,

    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
}

// The flags of `autocoder fetch-issue`: no doc comment, which would replace the description on
// `Command::FetchIssue`.
#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Examples:\n  autocoder fetch-issue acme/shop#42\n  autocoder fetch-issue https://github.com/acme/shop/issues/42\n  autocoder fetch-issue '#42' | autocoder run-tests\n  autocoder fetch-issue bug.md"
)]
pub(crate) struct FetchIssueArgs {
    /// The issue: owner/repo#N, a URL, N, a .md or .json file, or -.
    #[arg(value_name = "REF")]
    pub reference: String,

    /// The GitHub API base URL.
    #[arg(long, value_name = "URL", value_parser = crate::forge::github::api_url)]
    pub api_url: Option<String>,

    /// Skip the issue's comments.
    #[arg(long)]
    pub no_comments: bool,
}

/// Which engine makes the changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Engine {
    /// The offline engine first, then the model when one is configured.
    Auto,
    /// A language model.
    Llm,
    /// The offline engine (mutations of the failing code; no model).
    Mutate,
}

// The flags of `autocoder heal`: no doc comment, which would replace the description on
// `Command::Heal`.
#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Examples:\n  autocoder fetch-issue acme/shop#42 | autocoder heal | autocoder open-pr\n  autocoder heal --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b < /dev/null\n  ANTHROPIC_API_KEY=... autocoder heal --model claude-sonnet-4-5 --max-attempts 2\n  autocoder run-tests | autocoder heal --events heal.jsonl --patch-out fix.patch"
)]
pub(crate) struct HealArgs {
    /// The project to repair [default: the run document's workspace, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// The engine that makes the changes.
    #[arg(long, value_enum, default_value_t = Engine::Auto)]
    pub engine: Engine,

    #[command(flatten)]
    pub model: ModelArgs,

    /// The model's attempts at most.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_attempts: u32,

    /// The offline engine's candidates at most, a safety cap under --mutate-time (the
    /// alternatives tested beside a green one, at most 8, come on top).
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_candidates: u32,

    /// The offline engine's candidates tested at once, each in a copy of its own [default: the
    /// cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: Option<u32>,

    /// The offline engine's time: its candidates are tried until it is spent, then a model has
    /// its turn when one is configured.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = parse_duration)]
    pub mutate_time: Duration,

    /// Tokens (in and out, all attempts) at most.
    #[arg(long, value_name = "N")]
    pub token_budget: Option<u64>,

    /// The whole repair's wall time at most, e.g. 10m.
    #[arg(long, value_name = "DUR", default_value = "30m", value_parser = parse_duration)]
    pub timeout: Duration,

    /// One test run's time at most.
    #[arg(long, value_name = "DUR", default_value = "10m", value_parser = parse_duration)]
    pub test_timeout: Duration,

    /// Run the offline engine's candidates cold, each as the runner runs it (by default
    /// pytest's, unittest's, jest's and vitest's run in a worker that loaded the runner once, and
    /// node --test's without the runner's own process).
    #[arg(long)]
    pub cold: bool,

    /// Let the model edit test files too (read-only otherwise).
    #[arg(long)]
    pub allow_test_edits: bool,

    /// Write one JSON line per step (model call, edit, test run) to FILE.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,

    /// Write the change as a patch to FILE [default: when it is not applied, a file in the
    /// workspace's .git/autocoder].
    #[arg(long, value_name = "FILE")]
    pub patch_out: Option<PathBuf>,

    /// Pass an environment variable to the tests: KEY=VALUE sets it, KEY copies it.
    #[arg(long, value_name = "KEY[=VALUE]")]
    pub env: Vec<String>,

    /// Task mode: carry out TEXT (a feature, a change) with the model and the tool catalogue,
    /// tests first, instead of repairing failing tests.
    #[arg(long, value_name = "TEXT")]
    pub task: Option<String>,

    /// With --task: files or directories to look at first.
    #[arg(long, value_name = "PATH", num_args = 1.., requires = "task")]
    pub paths: Vec<String>,

    /// With --task: the model's steps (replies) at most.
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_steps: u32,

    /// With --task: the model's context window in tokens (else AUTOCODER_CONTEXT_TOKENS or
    /// LOCAL_CODER_CONTEXT_TOKENS, else 32000); above 60% of it, older tool results are masked.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(4_000..))]
    pub context_tokens: Option<u64>,
}

/// What `review` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ReviewFormat {
    /// The run document, with `review`.
    Json,
    /// Markdown, for a pull request's body.
    Markdown,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// reviewdog's diagnostics, one JSON object per line.
    Rdjsonl,
}

/// The least severe risk that makes `review` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FailOn {
    High,
    Medium,
    Low,
    Never,
}

// The flags of `autocoder review`: no doc comment, which would replace the description on
// `Command::Review`.
#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Examples:\n  autocoder fetch-issue acme/shop#42 | autocoder heal | autocoder review | autocoder open-pr\n  autocoder review --base main --format markdown\n  git diff HEAD~3 | autocoder review --diff - --format sarif > review.sarif\n  autocoder review --format rdjsonl | reviewdog -f=rdjsonl -reporter=github-pr-review"
)]
#[command(mut_group("ModelArgs", |group| group.requires("llm")))]
pub(crate) struct ReviewArgs {
    /// The project [default: the run document's workspace, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// Review the working tree against REF.
    #[arg(long, value_name = "REF", conflicts_with = "diff")]
    pub base: Option<String>,

    /// Review the unified diff in FILE (- for stdin).
    #[arg(long, value_name = "FILE")]
    pub diff: Option<PathBuf>,

    /// What to write.
    #[arg(long, value_enum, default_value_t = ReviewFormat::Json)]
    pub format: ReviewFormat,

    /// The context's size at most, in characters.
    #[arg(long, value_name = "CHARS", default_value_t = 20_000)]
    pub budget: usize,

    /// Exit 1 when a risk at least this severe is found.
    #[arg(long, value_enum, default_value_t = FailOn::High)]
    pub fail_on: FailOn,

    /// Ask the configured model for findings too (each must cite the context's evidence); the
    /// model is chosen as for heal: --provider, --model and --base-url, else the environment.
    #[arg(long)]
    pub llm: bool,

    #[command(flatten)]
    pub model: ModelArgs,

    /// Post the review on the pull request, its risks as comments on the lines of the diff.
    #[arg(long)]
    pub post: bool,

    /// With --post: the pull request's number [default: the run document's pr.number].
    #[arg(long, value_name = "N", requires = "post", value_parser = clap::value_parser!(u64).range(1..))]
    pub pr: Option<u64>,

    /// With --post: the GitHub repository OWNER/NAME [default: the run document's repo, else
    /// its pull request's].
    #[arg(long, value_name = "OWNER/NAME", requires = "post")]
    pub repo: Option<String>,

    /// With --post: the GitHub API base URL [default: GITHUB_API_URL, else
    /// https://api.github.com].
    #[arg(long, value_name = "URL", requires = "post", value_parser = crate::forge::github::api_url)]
    pub api_url: Option<String>,
}

// The flags of `autocoder mcp`: no doc comment, which would replace the description on
// `Command::Mcp`.
#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Examples:\n  autocoder mcp --root ~/src/shop\n  claude mcp add --transport stdio autocoder -- autocoder mcp --root ."
)]
pub(crate) struct McpArgs {
    /// A directory the tools may work in (repeatable); relative paths are taken from the first.
    #[arg(long, value_name = "DIR")]
    pub root: Vec<PathBuf>,
}

// The flags of `autocoder open-pr`: no doc comment, which would replace the description on
// `Command::OpenPr`.
#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Examples:\n  autocoder fetch-issue acme/shop#42 | autocoder run-tests | autocoder open-pr --dry-run\n  autocoder open-pr --dry-run < run.json\n  autocoder open-pr --repo acme/shop --base develop --draft"
)]
pub(crate) struct OpenPrArgs {
    /// The project: the repository's clone or a directory in it [default: the run document's
    /// workspace, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// The GitHub repository [default: the run document's repo, else its issue's; never the
    /// workspace's remote, which sandboxed code can change].
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,

    /// The remote to push to.
    #[arg(long, value_name = "NAME", default_value = "origin")]
    pub remote: String,

    /// The branch to merge into [default: the repository's default branch].
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,

    /// The branch to push [default: autocoder/issue-N-title].
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,

    /// The pull request's title [default: fix: <issue title>].
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    /// Also commit this file, named from the workspace (repeatable): an untracked one, or one
    /// that looks like credentials.
    #[arg(long = "add", value_name = "PATH")]
    pub add: Vec<String>,

    /// Open a draft pull request (also when heal is not green).
    #[arg(long)]
    pub draft: bool,

    /// Do everything local (the commit, in refs/autocoder/dry-run/BRANCH) and print the request
    /// that would be sent; push nothing, call no API.
    #[arg(long)]
    pub dry_run: bool,

    /// The GitHub API base URL [default: the issue's host, else GITHUB_API_URL, else
    /// https://api.github.com].
    #[arg(long, value_name = "URL", value_parser = crate::forge::github::api_url)]
    pub api_url: Option<String>,
}

// The flags of `autocoder run-tests`: no doc comment, which would replace the description on
// `Command::RunTests`.
#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Examples:\n  autocoder run-tests\n  autocoder run-tests --framework pytest --tests 'tests/test_x.py::test_y'\n  autocoder run-tests --command 'make check' --framework make\n  autocoder run-tests --parse pytest.log --framework pytest\n  autocoder run-tests | jq -r '.tests.failures[].id'"
)]
pub(crate) struct RunTestsArgs {
    /// The project [default: the run document's workspace, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// The test runner [default: detected from the project's files].
    #[arg(long, value_enum, value_name = "NAME")]
    pub framework: Option<crate::run_document::Framework>,

    /// Run this instead of the runner's usual command (shell syntax runs under sh -c).
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,

    /// Run only this test (repeatable), by the id a report gives.
    #[arg(long = "tests", value_name = "ID")]
    pub tests: Vec<String>,

    /// Read a saved log or JUnit XML report instead of running anything.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["command", "tests"])]
    pub parse: Option<PathBuf>,

    #[command(flatten)]
    pub limits: LimitArgs<TestDefaults>,

    /// The workspace whose toolchain caches the run shares: heal's copy gives its original.
    #[arg(long, value_name = "DIR", hide = true)]
    pub caches_of: Option<PathBuf>,
}

// The model a command asks: `heal` always, `review` with `--llm`. (No doc comment, here or on
// the groups below: it would replace the description of the commands that flatten them.)
#[derive(Debug, Args, Clone)]
pub(crate) struct ModelArgs {
    /// The model's wire format [default: anthropic for api.anthropic.com or a claude-* model
    /// without a base URL, else openai].
    #[arg(long, value_enum)]
    pub provider: Option<crate::llm::Provider>,

    /// The model's name [default: AUTOCODER_MODEL; with a local server's URL, its first model].
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,

    /// The API's base URL, e.g. http://127.0.0.1:11434/v1 [default: AUTOCODER_BASE_URL, else
    /// OPENAI_BASE_URL, else the provider's].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
}

// What a command run in the sandbox may use and reach: the same flags for `sandbox` and
// `run-tests`, with defaults of their own (one command versus a whole test suite).
#[derive(Debug, Args, Clone)]
pub(crate) struct LimitArgs<D: LimitDefaults> {
    /// Wall-clock limit, e.g. 90s, 10m, 1h30m, 1500ms; plain numbers are seconds.
    #[arg(long, value_name = "DUR", default_value = D::TIMEOUT, value_parser = parse_duration)]
    pub timeout: Duration,

    /// Memory limit for all the processes together, e.g. 512M, 2G.
    #[arg(long, value_name = "SIZE", default_value = D::MEMORY, value_parser = parse_size)]
    pub memory: u64,

    /// Limit on the number of processes and threads (at least 2; where rlimits hold it, the
    /// sandbox's own init counts too).
    #[arg(long, value_name = "N", default_value = D::PIDS, value_parser = clap::value_parser!(u32).range(2..))]
    pub pids: u32,

    /// CPU cores that may be used, e.g. 1, 2, 0.5, or all.
    #[arg(long, value_name = "N", default_value = D::CPUS, value_parser = parse_cpus)]
    pub cpus: f64,

    /// Allow network access (off by default: no TCP, UDP, raw, netlink or host UNIX sockets).
    #[arg(long)]
    pub network: bool,

    /// Pass an environment variable: KEY=VALUE sets it, KEY copies it from this environment.
    #[arg(long, value_name = "KEY[=VALUE]")]
    pub env: Vec<String>,

    /// Also allow reading (and executing) PATH, e.g. a module a Go `replace` directive points to.
    #[arg(long, value_name = "PATH")]
    pub ro: Vec<PathBuf>,

    #[arg(skip)]
    pub defaults: PhantomData<D>,
}

/// The defaults of [`LimitArgs`], as flag values.
pub(crate) trait LimitDefaults {
    const TIMEOUT: &'static str;
    const MEMORY: &'static str;
    const PIDS: &'static str;
    const CPUS: &'static str;
}

/// One command of the user's: small limits.
#[derive(Debug, Clone)]
pub(crate) struct SandboxDefaults;

impl LimitDefaults for SandboxDefaults {
    const TIMEOUT: &'static str = "10m";
    const MEMORY: &'static str = "512M";
    const PIDS: &'static str = "100";
    const CPUS: &'static str = "1";
}

/// A whole test suite: a runner and the workers it starts.
#[derive(Debug, Clone)]
pub(crate) struct TestDefaults;

impl LimitDefaults for TestDefaults {
    const TIMEOUT: &'static str = "30m";
    const MEMORY: &'static str = "4G";
    const PIDS: &'static str = "1000";
    const CPUS: &'static str = "all";
}

fn parse_cpus(text: &str) -> Result<f64, String> {
    if text.trim() == "all" {
        return Ok(std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64));
    }
    match text.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 && n <= 1024.0 => Ok(n),
        _ => Err(format!(
            "`{text}` is not a CPU count: use a positive number such as 1, 2 or 0.5, or all"
        )),
    }
}

// The flags of `autocoder generate`: no doc comment, which would replace the description on
// `Command::Generate`.
#[derive(Debug, Args, Clone)]
pub(crate) struct GenerateArgs {
    /// What to write.
    #[arg(value_enum)]
    pub what: GenerateWhat,

    /// The directory to write into.
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum GenerateWhat {
    Man,
    Completions,
}
