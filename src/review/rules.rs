//! The risk rules: each an id, a severity and a check over the changed files. Deterministic, so
//! free to run on every change; a model's judgement (`--llm`) comes on top, never instead. A
//! secret's value is never repeated in a message.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use crate::git::patch::{FileDiff, Line, LineKind};
use crate::run_document::{FileStatus, Risk, Severity};
use crate::testmap::{is_test_file, named_as_test};
use crate::workspace::runs_outside::RunsOutside;

/// The rule that finds a secret: open-pr never commits a change it found one in.
pub(crate) const SECRET_ADDED: &str = "secret-added";

/// A rule: its id, how grave what it finds is, and what it looks for.
pub(crate) struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
}

/// Every rule, as the README's table lists them.
pub(crate) const RULES: &[Rule] = &[
    Rule { id: SECRET_ADDED, severity: Severity::High, summary: "a key, token or private key in an added line, a high-entropy value assigned to a secret-looking name, or a credential file added" },
    Rule { id: "runs-outside-sandbox", severity: Severity::High, summary: "a file that runs or is obeyed outside the sandbox changed: git hooks (.git, core.hooksPath), .gitattributes, .gitmodules, CI workflows, editor tasks, dev containers, direnv, hook managers" },
    Rule { id: "test-weakened", severity: Severity::High, summary: "a test file deleted, assertions removed, or a skip added" },
    Rule { id: "auth-crypto", severity: Severity::Medium, summary: "authentication, cryptography or permission code changed" },
    Rule { id: "ci-build-config", severity: Severity::Medium, summary: "build configuration changed (a Makefile, build.rs, a Dockerfile; CI's own files run outside the sandbox)" },
    Rule { id: "dependencies", severity: Severity::Medium, summary: "a dependency manifest or lock file changed" },
    Rule { id: "migration", severity: Severity::Medium, summary: "a database migration or schema changed" },
    Rule { id: "generated-vendored", severity: Severity::Medium, summary: "a generated or vendored file edited by hand" },
    Rule { id: "large-change", severity: Severity::Low, summary: "more than 400 lines changed, or a binary file" },
    Rule { id: "untested-change", severity: Severity::Low, summary: "a changed source file that no test maps to (by name or import)" },
];

fn severity_of(id: &str) -> Severity {
    RULES
        .iter()
        .find(|r| r.id == id)
        .map_or(Severity::Low, |r| r.severity)
}

fn risk(rule: &'static str, path: &str, line: Option<u32>, message: String) -> Risk {
    Risk {
        rule: rule.into(),
        severity: severity_of(rule),
        path: path.to_string(),
        line,
        evidence_id: String::new(),
        message,
    }
}

/// The risks in `files`; `untested` names the changed source files no test maps to.
pub(crate) fn check(
    files: &[FileDiff],
    untested: &[String],
    test_modules: &BTreeMap<String, u32>,
    runs_outside: &RunsOutside,
) -> Vec<Risk> {
    let mut risks = Vec::new();
    for file in files {
        let path: &str = &file.path();
        secrets_added(file, &mut risks);
        tests_weakened(file, test_modules.get(path).copied(), &mut risks);
        // Anything else a path says is less than that it runs outside the sandbox.
        let outside = [Some(path), file.old_path().as_deref()]
            .into_iter()
            .flatten()
            .any(|path| runs_outside.matches(path));
        match outside {
            true => risks.push(risk(
                "runs-outside-sandbox",
                path,
                None,
                format!("{path} runs or is obeyed outside the sandbox (git hooks and attributes, CI, editor tasks, direnv): a change here runs as the user, unreviewed by any test"),
            )),
            false => by_path(file, &mut risks),
        }
        auth_crypto(file, &mut risks);
        generated(file, &mut risks);
        if file.is_binary() {
            risks.push(risk(
                "large-change",
                path,
                None,
                format!("{path} is binary (or too large to read as text): its change cannot be reviewed as text"),
            ));
        }
    }
    let changed: usize = files.iter().map(|f| f.added() + f.removed()).sum();
    if changed > 400 {
        risks.push(risk(
            "large-change",
            &files.first().map_or(Default::default(), |f| f.path()),
            None,
            format!(
                "{changed} lines changed in {} files: a change this large is hard to review",
                files.len()
            ),
        ));
    }
    for path in untested {
        risks.push(risk(
            "untested-change",
            path,
            None,
            format!("{path} changed, and no test maps to it (by name or import)"),
        ));
    }
    risks
}

/// Compiled once: a review reads every line of a change, and a history holds thousands.
static ASSERTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)(assert\w*|expect\s*\(|should(?-u:\b)|t\.(Error|Fatal)\w*|panic!)")
        .expect("a valid pattern")
});
static SKIP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(@pytest\.mark\.(skip|xfail)|@unittest\.skip|(?-u:\b)self\.skipTest\(|(?-u:\b)(it|test|describe)\.skip\(|(?-u:\b)x(it|describe|test)\(|(?-u:\b)(it|test|describe)\.only\(|#\[ignore(?-u:\b)|(?-u:\b)t\.Skip(?:f|Now)?\(|(?-u:\b)pytest\.skip\(|(?-u:\b)this\.skip\(|@Disabled(?-u:\b)|@Ignore(?-u:\b))").expect("a valid pattern")
});
/// An assertion of exact equality (`==`, `assertEqual`, `assert_eq!`, `toBe(`, `Equal(`).
static EXACT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([^=!<>]==[^=]|===|assertEquals?\(|assert_eq!|assert\.(deep)?(strict)?[Ee]qual\(|\.toBe\(|\.toEqual\(|\.toStrictEqual\(|(?-u:\b)Equal\()").expect("a valid pattern")
});
static SENSITIVE_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)((?-u:\b)hashlib(?-u:\b)|(?-u:\b)bcrypt(?-u:\b)|(?-u:\b)hmac(?-u:\b)|(?-u:\b)jwt(?-u:\b)|(?-u:\b)crypto(?-u:\b)|(?-u:\b)cipher(?-u:\b)|verify\s*=\s*false|(?-u:\b)chmod(?-u:\b)|(?-u:\b)setuid(?-u:\b)|(?-u:\b)sudo(?-u:\b)|is_admin|permission|authori[sz])").expect("a valid pattern")
});

/// The secrets `files` add (the `secret-added` rule alone): what open-pr never commits.
pub(crate) fn secrets_added_in(files: &[FileDiff]) -> Vec<Risk> {
    let mut risks = Vec::new();
    for file in files {
        secrets_added(file, &mut risks);
    }
    risks
}

/// A credential file added, and the secrets in the added lines (a provider's name on a line
/// shown just before one counts for it).
fn secrets_added(file: &FileDiff, risks: &mut Vec<Risk>) {
    use crate::secrets::scan;
    let path: &str = &file.path();
    if file.status == FileStatus::Added && crate::secrets::is_credential_file(path) {
        risks.push(risk(
            SECRET_ADDED,
            path,
            None,
            format!("{path} looks like a credential file and is added"),
        ));
    }
    // A key's body lines changed without its BEGIN line in sight (a rotated key, a diff
    // without context) count when the file is a key's by its name.
    let key_file = {
        let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
        [
            ".pem",
            ".key",
            "id_rsa",
            "id_ecdsa",
            "id_ed25519",
            "private",
        ]
        .iter()
        .any(|part| name.contains(part))
    };
    for hunk in file.hunks.iter().flatten() {
        let mut in_key = None;
        let mut before: Vec<&str> = Vec::new();
        for line in &hunk.lines {
            if scan::opens_key(&line.text) {
                in_key = Some(true);
            } else if line.text.contains("-----BEGIN ") || scan::closes_key(&line.text) {
                in_key = Some(false);
            }
            if line.kind == LineKind::Added {
                let what = scan::found(&line.text, &before).or_else(|| {
                    (in_key.unwrap_or(key_file) && scan::looks_like_key_body(&line.text))
                        .then_some("a private key's line")
                });
                if let Some(what) = what {
                    risks.push(risk(
                        SECRET_ADDED,
                        path,
                        line.new,
                        format!(
                            "{what} is added at line {} (value withheld)",
                            line.new.unwrap_or(0)
                        ),
                    ));
                }
            }
            // What the old side alone had is not shown next to what is added.
            if line.kind != LineKind::Removed {
                before.push(&line.text);
            }
        }
    }
}

/// A test deleted or left out, an assertion removed or loosened, a skip added: in a test file,
/// or below the first line of a Rust file's own tests module (`tests_from`).
/// Long: each way a test is weakened, checked in turn over the same lines in tests.
fn tests_weakened(file: &FileDiff, tests_from: Option<u32>, risks: &mut Vec<Risk>) {
    let path: &str = &file.path();
    let was_test = file.old_path().as_deref().is_some_and(named_as_test);
    if file.status == FileStatus::Renamed && was_test && !named_as_test(path) {
        risks.push(risk(
            "test-weakened",
            path,
            None,
            format!(
                "the test file {} is renamed to {path}, which runners do not collect",
                file.old_path().as_deref().unwrap_or("")
            ),
        ));
        return;
    }
    let whole = is_test_file(path);
    if !whole && tests_from.is_none() {
        return;
    }
    // Where the tests are: the whole file, or from its tests module on (a removed line is
    // placed where it was, on the new side).
    let in_tests = |line: &Line| {
        let new = line
            .new
            .or_else(|| line.old.and_then(|old| file.new_side_of(old)));
        whole || new.zip(tests_from).is_some_and(|(new, from)| new >= from)
    };
    if whole && file.status == FileStatus::Deleted {
        risks.push(risk(
            "test-weakened",
            path,
            None,
            format!("the test file {path} is deleted"),
        ));
        return;
    }
    let (assertion, skip) = (&*ASSERTION, &*SKIP);
    // A comment that says "should" asserts nothing.
    let asserts = |text: &str| {
        let code = text.trim_start();
        !code.starts_with('#') && !code.starts_with("//") && assertion.is_match(text)
    };
    let removed: Vec<_> = file
        .lines(LineKind::Removed)
        .filter(|l| in_tests(l) && asserts(&l.text))
        .collect();
    let added_lines: Vec<_> = file
        .lines(LineKind::Added)
        .filter(|l| in_tests(l) && asserts(&l.text))
        .collect();
    let added = added_lines.len();
    // As many assertions, but exact ones turned loose (`== 4` → `> 0`, `assertEqual` →
    // `assertTrue`).
    let exact = |text: &str| EXACT.is_match(text);
    let exact_removed = removed.iter().filter(|l| exact(&l.text)).count();
    let exact_added = added_lines.iter().filter(|l| exact(&l.text)).count();
    if removed.len() <= added && exact_removed > exact_added {
        if let Some(loose) = added_lines.iter().find(|l| !exact(&l.text)) {
            risks.push(risk(
                "test-weakened",
                path,
                loose.new,
                format!(
                    "an exact assertion is loosened at {path}:{} ({exact_removed} exact removed, {exact_added} added)",
                    loose.new.unwrap_or(0)
                ),
            ));
        }
    }
    if removed.len() > added {
        let line = removed[0].old.and_then(|old| file.new_side_of(old));
        risks.push(risk(
            "test-weakened",
            path,
            line,
            format!(
                "{} assertion line{} removed from {path} ({} added)",
                removed.len(),
                if removed.len() == 1 { "" } else { "s" },
                added
            ),
        ));
    }
    for line in file
        .lines(LineKind::Added)
        .filter(|l| in_tests(l) && skip.is_match(&l.text))
    {
        risks.push(risk(
            "test-weakened",
            path,
            line.new,
            format!(
                "a test is skipped, or others left out, at {path}:{}",
                line.new.unwrap_or(0)
            ),
        ));
    }
}

/// Long: three path rules, each mostly a list of file names; the lists are the length.
fn by_path(file: &FileDiff, risks: &mut Vec<Risk>) {
    let path: &str = &file.path();
    let name = path.rsplit('/').next().unwrap_or(path);
    // CI's own files run outside the sandbox: `check` said so before this.
    let build = name.starts_with("Dockerfile")
        || matches!(
            name,
            "Makefile"
                | "makefile"
                | "GNUmakefile"
                | "CMakeLists.txt"
                | "build.rs"
                | "Dockerfile"
                | "docker-compose.yml"
                | "setup.py"
                | "setup.cfg"
                | "tox.ini"
                | "noxfile.py"
                | "justfile"
        )
        || name.starts_with("webpack.config.")
        || name.starts_with("vite.config.")
        || name.starts_with("rollup.config.");
    if build {
        risks.push(risk(
            "ci-build-config",
            path,
            None,
            format!("{path} configures the build: check what it runs"),
        ));
    }
    let manifest = matches!(
        name,
        "Cargo.toml"
            | "Cargo.lock"
            | "package.json"
            | "package-lock.json"
            | "yarn.lock"
            | "pnpm-lock.yaml"
            | "npm-shrinkwrap.json"
            | "Pipfile"
            | "Pipfile.lock"
            | "poetry.lock"
            | "pyproject.toml"
            | "uv.lock"
            | "go.mod"
            | "go.sum"
            | "Gemfile"
            | "Gemfile.lock"
            | "composer.json"
            | "composer.lock"
            | "pom.xml"
            | "build.gradle"
            | "build.gradle.kts"
    ) || (name.ends_with(".txt")
        && (name.starts_with("requirements")
            || name.starts_with("constraints")
            || path.contains("requirements/")));
    if manifest {
        risks.push(risk(
            "dependencies",
            path,
            None,
            format!("{path} lists dependencies: check what is added or upgraded"),
        ));
    }
    let lower = path.to_ascii_lowercase();
    if lower.contains("migrations/")
        || lower.contains("/migrate/")
        || lower.ends_with(".sql")
        || lower.contains("alembic/")
        || name.starts_with("schema.")
    {
        risks.push(risk(
            "migration",
            path,
            None,
            format!("{path} migrates or defines a database schema: check it against existing data"),
        ));
    }
}

fn auth_crypto(file: &FileDiff, risks: &mut Vec<Risk>) {
    let path: &str = &file.path();
    if is_test_file(path) {
        return;
    }
    let sensitive_code = &*SENSITIVE_CODE;
    // By whole words of the path: `auth/`, `login.py`, `session_store.rs`; not `tokenizer.py`,
    // `oracle.py` or `AUTHORS`.
    const WORDS: &[&str] = &[
        "auth",
        "authn",
        "authz",
        "authentication",
        "authorization",
        "login",
        "logout",
        "session",
        "sessions",
        "password",
        "passwords",
        "passwd",
        "crypto",
        "crypt",
        "cryptography",
        "encryption",
        "permission",
        "permissions",
        "acl",
        "acls",
        "oauth",
        "oauth2",
        "jwt",
        "security",
        "signing",
        "signature",
        "signatures",
        "credentials",
        "rbac",
    ];
    let lower = path.to_ascii_lowercase();
    if lower
        .split(['/', '_', '.', '-'])
        .any(|word| WORDS.contains(&word))
    {
        risks.push(risk(
            "auth-crypto",
            path,
            None,
            format!("{path} is authentication, cryptography or permission code"),
        ));
        return;
    }
    let changed = file
        .hunks
        .iter()
        .flatten()
        .flat_map(|h| &h.lines)
        .find(|l| l.kind != LineKind::Context && sensitive_code.is_match(&l.text));
    if let Some(line) = changed {
        let at = line
            .new
            .or_else(|| line.old.and_then(|old| file.new_side_of(old)));
        risks.push(risk(
            "auth-crypto",
            path,
            at,
            format!(
                "a line touching authentication, cryptography or permissions changed at {path}:{}",
                at.unwrap_or(0)
            ),
        ));
    }
}

fn generated(file: &FileDiff, risks: &mut Vec<Risk>) {
    let path: &str = &file.path();
    let name = path.rsplit('/').next().unwrap_or(path);
    let vendored = ["vendor/", "third_party/", "node_modules/", "dist/"]
        .iter()
        .any(|d| path.starts_with(d) || path.contains(&format!("/{d}")));
    let generated_name = name.ends_with(".min.js")
        || name.ends_with("_pb2.py")
        || name.ends_with(".pb.go")
        || name.starts_with("zz_generated")
        || name.contains(".generated.")
        || name.contains("_generated.");
    let marked = file
        .hunks
        .iter()
        .flatten()
        .flat_map(|h| &h.lines)
        .take(400)
        .any(|l| l.text.contains("DO NOT EDIT") || l.text.contains("@generated"));
    if file.status != FileStatus::Added && (vendored || generated_name || marked) {
        risks.push(risk(
            "generated-vendored",
            path,
            None,
            format!("{path} is generated or vendored: change its source or its version instead"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::patch::parse;
    use crate::secrets::scan::redact;

    fn rules_found(diff: &str) -> Vec<String> {
        check(
            &parse(diff).unwrap(),
            &[],
            &BTreeMap::new(),
            &RunsOutside::default(),
        )
        .into_iter()
        .map(|r| r.rule)
        .collect()
    }

    fn added(path: &str, lines: &[&str]) -> String {
        let mut diff = format!(
            "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,0 +1,{} @@\n",
            lines.len()
        );
        for line in lines {
            diff.push_str(&format!("+{line}\n"));
        }
        diff
    }

    #[test]
    fn secrets_are_found_and_never_echoed() {
        let token = format!("ghp_{}", "a1B2c3D4".repeat(5));
        let diff = added("app.py", &[&format!("TOKEN = '{token}'")]);
        let risks = check(
            &parse(&diff).unwrap(),
            &[],
            &BTreeMap::new(),
            &RunsOutside::default(),
        );
        assert_eq!(risks[0].rule, "secret-added");
        assert!(!risks[0].message.contains(&token));
        assert_eq!(
            redact(&format!("TOKEN = '{token}'")),
            "TOKEN = '[withheld]'"
        );
        assert_eq!(
            redact("db_password = \"Zq8#kP2!vL9@xW4m\""),
            "db_password = \"[withheld]\""
        );
        assert_eq!(
            rules_found(&added("app.py", &["db_password = \"Zq8#kP2!vL9@xW4m\""])),
            ["secret-added"]
        );
        // Put together here, so that this file does not hold a key's first line.
        let key = format!("-----BEGIN {} PRIVATE KEY-----", "OPENSSH");
        assert_eq!(rules_found(&added("app.py", &[&key])), ["secret-added"]);
        // Negative: placeholders, low entropy, reading from the environment.
        assert!(rules_found(&added(
            "app.py",
            &[
                "password = \"changeme-changeme\"",
                "api_key = os.environ['API_KEY']",
                "token = \"aaaaaaaaaaaaaaaa\""
            ]
        ))
        .is_empty());
    }

    #[test]
    fn weakened_tests_are_found_and_new_assertions_are_not() {
        let removed = "diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1,3 +1,2 @@\n def test_a():\n-    assert f(2) == 4\n+    pass\n";
        assert_eq!(rules_found(removed), ["test-weakened"]);
        assert_eq!(
            rules_found(&added("tests/test_a.py", &["@pytest.mark.skip"])),
            ["test-weakened"]
        );
        assert_eq!(rules_found("diff --git a/tests/test_a.py b/tests/test_a.py\ndeleted file mode 100644\n--- a/tests/test_a.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"), ["test-weakened"]);
        assert!(rules_found(&added("tests/test_a.py", &["    assert f(3) == 9"])).is_empty());
    }

    #[test]
    fn paths_name_ci_dependencies_migrations_and_generated_files() {
        assert_eq!(
            rules_found(&added(".github/workflows/ci.yml", &["on: push"])),
            ["runs-outside-sandbox"]
        );
        assert_eq!(
            rules_found(&added(".gitlab-ci.yml", &["test: make"])),
            ["runs-outside-sandbox"]
        );
        assert_eq!(
            rules_found(&added("Jenkinsfile", &["pipeline {}"])),
            ["runs-outside-sandbox"]
        );
        assert_eq!(
            rules_found(&added("build.rs", &["fn main() {}"])),
            ["ci-build-config"]
        );
        assert_eq!(rules_found(&added("Cargo.lock", &["x"])), ["dependencies"]);
        assert_eq!(
            rules_found(&added("db/migrations/0002_add.sql", &["ALTER TABLE t"])),
            ["migration"]
        );
        assert_eq!(rules_found("diff --git a/api_pb2.py b/api_pb2.py\n--- a/api_pb2.py\n+++ b/api_pb2.py\n@@ -1 +1 @@\n-a\n+b\n"), ["generated-vendored"]);
        assert_eq!(
            rules_found(&added("src/auth/login.py", &["x = 1"])),
            ["auth-crypto"]
        );
        assert_eq!(
            rules_found(&added("src/net.py", &["requests.get(url, verify=False)"])),
            ["auth-crypto"]
        );
        assert!(rules_found(&added("src/pricing.py", &["return price * 2"])).is_empty());
    }

    #[test]
    fn settings_that_name_secrets_are_not_secrets() {
        assert!(rules_found(&added(
            "src/settings.py",
            &[
                "TOKEN_URL = \"https://oauth2.googleapis.com/token\"",
                "password_field = \"password_confirmation\"",
                "csrf_token_name = \"csrfmiddlewaretoken\"",
                "token_cache_path = \"/var/cache/app/tokens.db\"",
                "api_key_header = \"X-Api-Key-Version2\"",
                "spinner = \"sk-loading-spinner-container-x\"",
            ]
        ))
        .is_empty());
        for path in [
            "src/tokenizer.py",
            "src/lexer/tokens.rs",
            "src/oracle_client.py",
            "AUTHORS",
        ] {
            assert!(rules_found(&added(path, &["x = 1"])).is_empty(), "{path}");
        }
        let comment = "diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1 +1 @@\n-# the price should never be negative\n+# prices are never negative\n";
        assert!(rules_found(comment).is_empty());
    }

    #[test]
    fn secrets_in_other_shapes_are_found_and_withheld() {
        for line in [
            "password: Pq7Lm3Xz9Wk2Rt5Vb8Nc",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzQkey",
            "DATABASE_URL=postgres://admin:S3cretPass@db.internal/app",
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        ] {
            assert!(rules_found(&added("config.yml", &[line])).iter().any(|rule| rule == "secret-added"), "{line}");
            assert!(redact(line).contains("[withheld]"), "{line}");
        }
        let key = format!("+-----BEGIN {} PRIVATE KEY-----\n+MIIEowIBAAKCAQEA\n+-----END RSA PRIVATE KEY-----\n+after\n", "RSA");
        let redacted = redact(&key);
        assert!(!redacted.contains("MIIEowIBAAKCAQEA"), "{redacted}");
        assert!(redacted.ends_with("+after\n"), "{redacted}");
    }

    #[test]
    fn a_keys_lines_are_withheld_without_its_first_line_and_on_one_line() {
        let body = "MIIEowIBAAKCAQEAx7Vq3kZ9Lm2Pw8Rt5Yb1Nc4Xe6Gh0Jd3Fs7Ua9Ki2Ol5Mn8Qp";
        // A snippet that starts inside a key: the line above an edit.
        let shown = redact(&format!(
            " {body}\n {body}\n-DEBUG = False\n+DEBUG = True\n"
        ));
        assert_eq!(
            shown,
            " [withheld]\n [withheld]\n-DEBUG = False\n+DEBUG = True\n"
        );
        let begin = format!("-----BEGIN RSA {} KEY-----", "PRIVATE");
        let one_line = format!("KEY = \"{begin}\\n{body}\\n-----END RSA PRIVATE KEY-----\\n\"");
        assert_eq!(redact(&one_line), "KEY = \"[withheld]\\n\"");
        assert_eq!(
            rules_found(&added("settings.py", &[&one_line])),
            ["secret-added"]
        );
        // A rotated key's lines, shown without context: a key's by the file's name only.
        let rotated = |path: &str, context: &str| {
            let n = 1 + context.lines().count();
            format!(
                "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -2,{n} +2,{n} @@\n{context}-{body}\n+{}\n",
                body.replace('x', "y")
            )
        };
        assert_eq!(
            rules_found(&rotated("deploy.pem.txt", "")),
            ["secret-added"]
        );
        assert!(rules_found(&rotated("notes.txt", "")).is_empty());
        let certificate = format!(" -----BEGIN {}-----\n", "CERTIFICATE");
        assert!(rules_found(&rotated("deploy.pem", &certificate)).is_empty());
        assert_eq!(
            rules_found(&rotated("notes.txt", &format!(" {begin}\n"))),
            ["secret-added"]
        );
        // Not a key: a commit's hash, a long word.
        assert_eq!(
            redact(" a8f5f167f44f4964e6c998dee827110ca8f5f167\n"),
            " a8f5f167f44f4964e6c998dee827110ca8f5f167\n"
        );
    }

    #[test]
    fn keys_of_letters_and_digits_and_more_formats_are_found_and_withheld() {
        let pgp = format!("-----BEGIN PGP {} KEY BLOCK-----", "PRIVATE");
        let sendgrid = format!(
            "SG.{}.{}",
            "aB3dE5gH7jK9mN1pQ3sT5v", "wX7zA9cE1gI3kM5oQ7sU9wY1aC3eG5iK7mO9qS1uW3y"
        );
        for line in [
            "API_KEY = \"a8f5f167f44f4964e6c998dee827110c\"",
            "SECRET_KEY = \"kq3v9x2m7p4t8w1z6r5y0n3b\"",
            &pgp,
            "token = \"glpat-x8Yz3KqLm9Pw2Rt5Vb7N\"",
            &sendgrid,
            "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "conn = \"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4YWJjZA==\"",
        ] {
            assert!(rules_found(&added("app.py", &[line])).iter().any(|rule| rule == "secret-added"), "{line}");
            assert!(redact(line).contains("[withheld]"), "{line}");
        }
        // Not keys: a version, a word and a number, a hash that names no secret.
        assert!(rules_found(&added(
            "app.py",
            &[
                "token_version = \"release2024version10\"",
                "api_key_name = \"service-account-01\"",
                "commit = \"a8f5f167f44f4964e6c998dee827110c\"",
            ]
        ))
        .is_empty());
    }

    #[test]
    fn an_assertion_loosened_or_a_skip_called_weakens_a_test_and_a_stricter_one_does_not() {
        let changed = |before: &str, after: &str| {
            format!("diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1,2 +1,2 @@\n def test_a():\n-{before}\n+{after}\n")
        };
        for (before, after) in [
            ("    assert f(2) == 4", "    assert f(2) > 0"),
            ("    self.assertEqual(f(2), 4)", "    self.assertTrue(f(2))"),
            (
                "    expect(f(2)).toBe(4);",
                "    expect(f(2)).toBeDefined();",
            ),
        ] {
            assert_eq!(
                rules_found(&changed(before, after)),
                ["test-weakened"],
                "{after}"
            );
        }
        for (before, after) in [
            ("    assert f(2) > 0", "    assert f(2) == 4"),
            ("    assert f(2) == 4", "    assert f(2) == 5"),
        ] {
            assert!(rules_found(&changed(before, after)).is_empty(), "{after}");
        }
        for skip in [
            "    pytest.skip(\"later\")",
            "\tt.Skipf(\"flaky on %s\", os)",
            "  @Disabled",
            "    this.skip();",
        ] {
            assert_eq!(
                rules_found(&added("tests/test_b.py", &[skip])),
                ["test-weakened"],
                "{skip}"
            );
        }
    }

    #[test]
    fn an_assertion_removed_from_a_rust_files_own_tests_weakens_them_and_one_above_does_not() {
        // src/pricing.rs's tests module starts at line 10.
        let modules = BTreeMap::from([("src/pricing.rs".to_string(), 10)]);
        let removed_at = |line: u32| {
            format!("diff --git a/src/pricing.rs b/src/pricing.rs\n--- a/src/pricing.rs\n+++ b/src/pricing.rs\n@@ -{line},2 +{line},1 @@\n     let x = price(2);\n-    assert_eq!(x, 4);\n")
        };
        let found = |diff: &str| {
            check(
                &parse(diff).unwrap(),
                &[],
                &modules,
                &RunsOutside::default(),
            )
            .into_iter()
            .map(|r| r.rule)
            .collect::<Vec<_>>()
        };
        assert_eq!(found(&removed_at(14)), ["test-weakened"]);
        assert!(found(&removed_at(3)).is_empty());
        // Without the module's place, a source file's asserts are not a test's.
        assert!(rules_found(&removed_at(14)).is_empty());
    }

    #[test]
    fn a_large_or_binary_change_is_said_and_a_small_one_is_not() {
        let lines: Vec<String> = (0..401).map(|i| format!("x{i} = {i}")).collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert_eq!(
            rules_found(&added("src/table.py", &lines)),
            ["large-change"]
        );
        assert!(rules_found(&added("src/table.py", &lines[..400])).is_empty());
        let binary = "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\nBinary files /dev/null and b/logo.png differ\n";
        assert_eq!(rules_found(binary), ["large-change"]);
    }

    #[test]
    fn more_ways_tests_and_builds_change_are_found() {
        assert_eq!(
            rules_found(&added("tests/it.rs", &["#[ignore = \"flaky\"]"])),
            ["test-weakened"]
        );
        assert_eq!(
            rules_found(&added("src/a.test.js", &["test.only('x', () => {})"])),
            ["test-weakened"]
        );
        let renamed = "diff --git a/tests/test_other.py b/tests/other_disabled.py\nsimilarity index 100%\nrename from tests/test_other.py\nrename to tests/other_disabled.py\n";
        assert_eq!(rules_found(renamed), ["test-weakened"]);
        assert_eq!(
            rules_found(&added(".github/actions/setup/action.yml", &["x"])),
            ["runs-outside-sandbox"]
        );
        assert_eq!(
            rules_found(&added("Dockerfile.prod", &["FROM x"])),
            ["ci-build-config"]
        );
        assert_eq!(
            rules_found(&added("requirements/base.txt", &["x==1"])),
            ["dependencies"]
        );
        assert_eq!(rules_found("diff --git a/zz_generated.deepcopy.go b/zz_generated.deepcopy.go\n--- a/zz_generated.deepcopy.go\n+++ b/zz_generated.deepcopy.go\n@@ -250 +250 @@\n-a\n+b\n"), ["generated-vendored"]);
    }

    #[test]
    fn a_change_to_what_runs_outside_the_sandbox_is_high_at_any_depth_and_by_old_name() {
        let found = |diff: &str| {
            let outside = RunsOutside::default();
            check(&parse(diff).unwrap(), &[], &BTreeMap::new(), &outside)
                .into_iter()
                .map(|risk| (risk.rule.clone(), risk.severity))
                .collect::<Vec<_>>()
        };
        for path in [
            "sub/.vscode/tasks.json",
            ".githooks/../.git/hooks/pre-commit",
            "web/.husky/pre-commit",
            ".envrc",
            ".pre-commit-config.yaml",
            "lib/.gitattributes",
            ".gitmodules",
        ] {
            assert_eq!(
                found(&added(path, &["x"])),
                [("runs-outside-sandbox".to_string(), Severity::High)],
                "{path}"
            );
        }
        let renamed = "diff --git a/.envrc b/envrc.txt\nsimilarity index 100%\nrename from .envrc\nrename to envrc.txt\n";
        assert_eq!(
            found(renamed),
            [("runs-outside-sandbox".to_string(), Severity::High)]
        );
    }
}
