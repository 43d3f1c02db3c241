//! `autocoder fetch-issue`: against a loopback fake GitHub that asserts what it receives, and
//! from local files.

use serde_json::{json, Value};

use crate::fake_server::{FakeServer, Reply};
use crate::util::{Run, Test};

const ISSUE: &str = r#"{"number": 42, "title": "Discount doubles", "body": "Buying 10 costs less than 9.",
  "state": "open", "html_url": "https://github.com/acme/shop/issues/42", "user": {"login": "ann"},
  "labels": [{"name": "bug"}, {"name": "pricing"}], "comments": 3}"#;

/// The document a run wrote; its issue checked against its shape on the wire, but for a JSON
/// issue's, which keeps the keys of its own.
#[track_caller]
fn document(run: &Run) -> Value {
    let document: Value = serde_json::from_slice(&run.output.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout(), run.stderr()));
    if document["issue"]["source"] != "json" && document["issue"].is_object() {
        crate::wire::check_section("issue", &document["issue"]);
    }
    document
}

fn comment(author: &str, body: &str) -> String {
    format!(
        r#"{{"user": {{"login": "{author}"}}, "body": "{body}", "created_at": "2026-11-01T10:00:00Z"}}"#
    )
}

#[test]
fn fetches_the_issue_and_every_comment_page() {
    let github = FakeServer::start(vec![
        ("GET /repos/acme/shop/issues/42", vec![Reply::json(200, ISSUE)]),
        (
            "GET /repos/acme/shop/issues/42/comments?per_page=100",
            vec![Reply::json(200, &format!("[{}, {}]", comment("bob", "Seen it too"), comment("ann", "Still there")))
                .header("link", r#"<{base}/repositories/9/issues/42/comments?page=2>; rel="next", <{base}/repositories/9/issues/42/comments?page=2>; rel="last""#)],
        ),
        ("GET /repositories/9/issues/42/comments?page=2", vec![Reply::json(200, &format!("[{}]", comment("cy", "Fixed?")))]),
    ]);
    let run = Test::new()
        .env("GITHUB_TOKEN", "ghp_testsecret123")
        .stdin(r#"{"autocoder": 1, "custom": "kept"}"#)
        .args(["fetch-issue", "acme/shop#42", "--api-url", github.url()])
        .run()
        .expect_status(0);
    let doc = document(&run);
    assert_eq!(doc["custom"], "kept");
    assert_eq!(doc["repo"], "acme/shop");
    let issue = &doc["issue"];
    assert_eq!(issue["source"], "github");
    assert_eq!(issue["number"], 42);
    assert_eq!(issue["title"], "Discount doubles");
    assert_eq!(issue["labels"], json!(["bug", "pricing"]));
    assert_eq!(issue["author"], "ann");
    assert_eq!(issue["pull_request"], false);
    let authors: Vec<&str> = issue["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["author"].as_str().unwrap())
        .collect();
    assert_eq!(authors, ["bob", "ann", "cy"]);
    for request in github.requests() {
        assert_eq!(request.headers["accept"], "application/vnd.github+json");
        assert_eq!(request.headers["x-github-api-version"], "2022-11-28");
        assert!(request.headers["user-agent"].starts_with("autocoder/"));
        assert_eq!(request.headers["authorization"], "Bearer ghp_testsecret123");
    }
    assert!(
        !run.stdout().contains("ghp_testsecret123") && !run.stderr().contains("ghp_testsecret123")
    );
}

#[test]
fn a_pull_request_is_flagged_and_comments_can_be_skipped() {
    let pull = ISSUE.replace(r#""comments": 3"#, r#""pull_request": {"url": "x"}"#);
    let github = FakeServer::start(vec![(
        "GET /repos/acme/shop/issues/42",
        vec![Reply::json(200, &pull)],
    )]);
    let run = Test::new()
        .args([
            "fetch-issue",
            "https://github.com/acme/shop/pull/42",
            "--no-comments",
            "--api-url",
            github.url(),
        ])
        .run()
        .expect_status(0);
    let issue = &document(&run)["issue"];
    assert_eq!(issue["pull_request"], true);
    assert_eq!(issue["comments"], json!([]));
    assert!(
        github
            .requests()
            .iter()
            .all(|r| !r.headers.contains_key("authorization")),
        "no token, no header"
    );
}

#[test]
fn errors_say_what_happened_and_what_to_do() {
    // An API address with credentials in it is refused, and the password is not repeated.
    let run = Test::new()
        .args([
            "fetch-issue",
            "acme/shop#1",
            "--api-url",
            "http://me:hunter2@127.0.0.1:9",
        ])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("holds credentials") && !run.stderr().contains("hunter2"),
        "{}",
        run.stderr()
    );
    // The same in GITHUB_API_URL, which must not become Basic auth to that host.
    for url in [
        "http://me:hunter2@127.0.0.1:9",
        "ftp://me:hunter2@127.0.0.1:9",
    ] {
        let run = Test::new()
            .env("GITHUB_API_URL", url)
            .args(["fetch-issue", "acme/shop#1"])
            .run()
            .expect_status(2);
        assert!(
            run.stderr().contains("GITHUB_API_URL") && !run.stderr().contains("hunter2"),
            "{}",
            run.stderr()
        );
    }
    let github = FakeServer::start(vec![
        (
            "GET /repos/acme/private/issues/1",
            vec![Reply::json(404, r#"{"message": "Not Found"}"#)],
        ),
        (
            "GET /repos/acme/shop/issues/2",
            vec![Reply::json(401, r#"{"message": "Bad credentials"}"#)],
        ),
        (
            "GET /repos/acme/shop/issues/3",
            vec![Reply::json(
                403,
                r#"{"message": "Resource not accessible by integration"}"#,
            )],
        ),
    ]);
    let run = Test::new()
        .args(["fetch-issue", "acme/private#1", "--api-url", github.url()])
        .run()
        .expect_status(3);
    assert!(run.stdout().is_empty());
    assert!(
        run.stderr().contains("not found") && run.stderr().contains("private"),
        "{}",
        run.stderr()
    );
    let run = Test::new()
        .env("GH_TOKEN", "ghp_x")
        .args(["fetch-issue", "acme/shop#2", "--api-url", github.url()])
        .run()
        .expect_status(3);
    assert!(
        run.stderr().contains("rejected the token") && run.stderr().contains("GH_TOKEN"),
        "{}",
        run.stderr()
    );
    let run = Test::new()
        .args(["fetch-issue", "acme/shop#3", "--api-url", github.url()])
        .run()
        .expect_status(3);
    assert!(
        run.stderr().contains("refused access") && run.stderr().contains("Resource not accessible"),
        "{}",
        run.stderr()
    );

    for bad in ["acme/shop", "acme/shop#zero", "0"] {
        let run = Test::new()
            .args(["fetch-issue", bad])
            .run()
            .expect_status(2);
        assert!(
            run.stderr().contains("is not an issue reference"),
            "{bad}: {}",
            run.stderr()
        );
    }
    let run = Test::new()
        .args([
            "fetch-issue",
            "acme/shop#1",
            "--api-url",
            "http://127.0.0.1:1",
        ])
        .run()
        .expect_status(3);
    assert!(
        run.stderr().contains("cannot reach GitHub"),
        "{}",
        run.stderr()
    );
}

#[test]
fn rate_limits_are_waited_out_or_reported_with_when_to_retry() {
    let github = FakeServer::start(vec![
        (
            "GET /repos/acme/shop/issues/42",
            vec![
                Reply::json(403, r#"{"message": "API rate limit exceeded"}"#)
                    .header("retry-after", "1")
                    .header("x-ratelimit-remaining", "0"),
                Reply::json(200, ISSUE),
            ],
        ),
        (
            "GET /repos/acme/shop/issues/42/comments?per_page=100",
            vec![Reply::json(500, "oops"), Reply::json(200, "[]")],
        ),
        (
            "GET /repos/acme/shop/issues/43",
            vec![
                Reply::json(429, r#"{"message": "API rate limit exceeded"}"#)
                    .header("x-ratelimit-remaining", "0")
                    .header("x-ratelimit-reset", "4102444800"),
            ],
        ),
        (
            "GET /repos/acme/shop/issues/44",
            vec![
                Reply::json(429, r#"{"message": "API rate limit exceeded"}"#)
                    .header("x-ratelimit-remaining", "0")
                    .header("x-ratelimit-reset", "4102444800"),
            ],
        ),
    ]);
    let run = Test::new()
        .args(["fetch-issue", "acme/shop#42", "--api-url", github.url()])
        .run()
        .expect_status(0);
    assert_eq!(document(&run)["issue"]["title"], "Discount doubles");
    assert!(
        run.stderr().contains("rate limited; waiting 1 s"),
        "{}",
        run.stderr()
    );

    let run = Test::new()
        .args(["fetch-issue", "acme/shop#43", "--api-url", github.url()])
        .run()
        .expect_status(3);
    assert!(
        run.stderr().contains("rate limit") && run.stderr().contains("retry after"),
        "{}",
        run.stderr()
    );
    assert!(
        run.stderr().contains("set GITHUB_TOKEN"),
        "{}",
        run.stderr()
    );
    // With a token already set, a token is no advice.
    let run = Test::new()
        .env("GITHUB_TOKEN", "ghp_test")
        .args(["fetch-issue", "acme/shop#44", "--api-url", github.url()])
        .run()
        .expect_status(3);
    assert!(
        run.stderr().contains("retry after") && !run.stderr().contains("set GITHUB_TOKEN"),
        "{}",
        run.stderr()
    );
}

#[test]
fn an_issue_number_uses_the_origin_remote() {
    let github = FakeServer::start(vec![
        (
            "GET /repos/acme/shop/issues/7",
            vec![Reply::json(200, &ISSUE.replace("42", "7"))],
        ),
        (
            "GET /repos/acme/shop/issues/7/comments?per_page=100",
            vec![Reply::json(200, "[]")],
        ),
    ]);
    let test = Test::new();
    let git = |args: &[&str]| {
        assert!(std::process::Command::new("git")
            .args(args)
            .current_dir(test.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap()
            .success())
    };
    git(&["init", "-q"]);
    git(&["remote", "add", "origin", "git@github.com:acme/shop.git"]);
    // A FIFO that sandboxed code included into the config is not read (it would never end).
    crate::util::mkfifo(&test.path().join(".git/wait"));
    git(&["config", "include.path", "wait"]);
    // From a subdirectory of the clone, as git would be: the workspace is the clone's top.
    std::fs::create_dir(test.path().join("sub")).unwrap();
    let top = test.path().canonicalize().unwrap();
    let run = test
        .env("GITHUB_API_URL", github.url())
        .args(["-C", "sub", "fetch-issue", "#7"])
        .run()
        .expect_status(0);
    let doc = document(&run);
    assert_eq!(doc["repo"], "acme/shop");
    assert_eq!(doc["issue"]["number"], 7);
    assert_eq!(doc["workspace"], top.display().to_string());

    let run = Test::new()
        .args(["fetch-issue", "7"])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("no GitHub `origin` remote"),
        "{}",
        run.stderr()
    );

    // An origin on another host: its issue 7 is not github.com's, unless the API is named.
    let elsewhere = |remote: &str| {
        let test = Test::new();
        for args in [&["init", "-q"][..], &["remote", "add", "origin", remote]] {
            assert!(std::process::Command::new("git")
                .args(args)
                .current_dir(test.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .status()
                .unwrap()
                .success());
        }
        test.args(["fetch-issue", "7"])
    };
    // Credentials in the remote's address are never shown.
    let run = elsewhere("https://oauth2:glpat_SECRET@gitlab.example/acme/shop.git")
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("on gitlab.example, not github.com")
            && run
                .stderr()
                .contains("https://gitlab.example/acme/shop/issues/N")
            && !run.stderr().contains("SECRET"),
        "{}",
        run.stderr()
    );
    assert_eq!(github.requests().len(), 2);
    elsewhere("https://gitlab.example/acme/shop.git")
        .env("GITHUB_API_URL", github.url())
        .run()
        .expect_status(0);
    // A github.com remote with a token in it is still github.com's.
    elsewhere("https://ghp_SECRET:x-oauth-basic@github.com/acme/shop.git")
        .env("GITHUB_API_URL", github.url())
        .run()
        .expect_status(0);
}

#[test]
fn the_token_goes_to_the_api_alone() {
    // A next page on another server is not followed: the token would go with it.
    let elsewhere = FakeServer::start(vec![]);
    let github = FakeServer::start(vec![
        (
            "GET /repos/acme/shop/issues/42",
            vec![Reply::json(200, ISSUE)],
        ),
        (
            "GET /repos/acme/shop/issues/42/comments?per_page=100",
            vec![Reply::json(200, "[]").header(
                "link",
                &format!(r#"<{}/comments?page=2>; rel="next""#, elsewhere.url()),
            )],
        ),
    ]);
    let run = Test::new()
        .env("GITHUB_TOKEN", "ghp_testsecret123")
        .args(["fetch-issue", "acme/shop#42", "--api-url", github.url()])
        .run()
        .expect_status(3);
    assert!(
        run.stderr().contains("is at another address") && run.stderr().contains("--no-comments"),
        "{}",
        run.stderr()
    );
    assert!(
        elsewhere.requests().is_empty(),
        "{:?}",
        elsewhere.requests()
    );
    assert!(!run.stderr().contains("ghp_testsecret123"));
}

#[test]
fn issues_from_files_and_stdin() {
    let test = Test::new();
    test.dir().write(
        "bug.md",
        "---\ntitle: Crash on empty cart\nlabels: [bug]\n---\nSteps:\n1. open the cart\n",
    );
    let run = test.args(["fetch-issue", "bug.md"]).run().expect_status(0);
    let issue = &document(&run)["issue"];
    assert_eq!(
        (issue["title"].as_str(), issue["source"].as_str()),
        (Some("Crash on empty cart"), Some("markdown"))
    );
    assert_eq!(issue["body"], "Steps:\n1. open the cart");

    let test = Test::new();
    test.dir()
        .write("issue.json", r#"{"title": "From JSON", "body": "details"}"#);
    let run = test
        .args(["fetch-issue", "issue.json"])
        .run()
        .expect_status(0);
    assert_eq!(document(&run)["issue"]["title"], "From JSON");

    let run = Test::new()
        .stdin("# Typed in\nwith a body\n")
        .args(["fetch-issue", "-"])
        .run()
        .expect_status(0);
    let issue = &document(&run)["issue"];
    assert_eq!(
        (issue["title"].as_str(), issue["body"].as_str()),
        (Some("Typed in"), Some("with a body"))
    );

    // The first heading, whatever its level.
    let run = Test::new()
        .stdin("Intro line\n## Checkout fails\ndetails\n")
        .args(["fetch-issue", "-"])
        .run()
        .expect_status(0);
    assert_eq!(document(&run)["issue"]["title"], "Checkout fails");
    // GitHub's own JSON without repository_url (as `gh issue view --json` saves it).
    let test = Test::new();
    test.dir().write(
        "gh.json",
        r#"{"title": "Saved", "body": "b", "number": 9, "html_url": "https://github.com/acme/shop/issues/9", "user": {"login": "ann"}}"#,
    );
    let run = test.args(["fetch-issue", "gh.json"]).run().expect_status(0);
    assert_eq!(
        document(&run)["issue"]["repo"],
        "acme/shop",
        "{}",
        run.stdout()
    );

    let run = Test::new()
        .stdin("no heading at all\n")
        .args(["fetch-issue", "-"])
        .run()
        .expect_status(2);
    assert!(run.stderr().contains("has no title"), "{}", run.stderr());
    let run = Test::new()
        .args(["fetch-issue", "missing.md"])
        .run()
        .expect_status(2);
    assert!(
        run.stderr().contains("cannot read missing.md"),
        "{}",
        run.stderr()
    );
}
