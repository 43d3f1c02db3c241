//! The risk rules: each an id, a severity and a check over the changed files. Deterministic, so
//! free to run on every change; a model's judgement (`--llm`) comes on top, never instead. A
//! secret's value is never repeated in a message.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::diff::{FileChange, Kind, Status};
use crate::testmap::is_test_file;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
}

/// A rule: its id, how grave what it finds is, and what it looks for.
pub struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
}

/// Every rule, as the README's table lists them.
pub const RULES: &[Rule] = &[
    Rule { id: "secret-added", severity: Severity::High, summary: "a key, token or private key in an added line, a high-entropy value assigned to a secret-looking name, or a credential file added" },
    Rule { id: "test-weakened", severity: Severity::High, summary: "a test file deleted, assertions removed, or a skip added" },
    Rule { id: "auth-crypto", severity: Severity::Medium, summary: "authentication, cryptography or permission code changed" },
    Rule { id: "ci-build-config", severity: Severity::Medium, summary: "CI workflows or build configuration changed" },
    Rule { id: "dependencies", severity: Severity::Medium, summary: "a dependency manifest or lock file changed" },
    Rule { id: "migration", severity: Severity::Medium, summary: "a database migration or schema changed" },
    Rule { id: "generated-vendored", severity: Severity::Medium, summary: "a generated or vendored file edited by hand" },
    Rule { id: "large-change", severity: Severity::Low, summary: "more than 400 lines changed, or a binary file" },
    Rule { id: "untested-change", severity: Severity::Low, summary: "a changed source file that no test maps to (by name or import)" },
];

/// What a rule found.
#[derive(Debug, Clone, Serialize)]
pub struct Risk {
    pub rule: &'static str,
    pub severity: Severity,
    pub path: String,
    /// In the new file (the old one for what was removed).
    pub line: Option<u32>,
    /// Filled in when the context is ranked: the snippet that shows it.
    pub evidence_id: String,
    pub message: String,
}

fn severity_of(id: &str) -> Severity {
    RULES
        .iter()
        .find(|r| r.id == id)
        .map_or(Severity::Low, |r| r.severity)
}

fn risk(rule: &'static str, path: &str, line: Option<u32>, message: String) -> Risk {
    Risk {
        rule,
        severity: severity_of(rule),
        path: path.to_string(),
        line,
        evidence_id: String::new(),
        message,
    }
}

/// The risks in `files`; `untested` names the changed source files no test maps to.
pub fn check(files: &[FileChange], untested: &[String]) -> Vec<Risk> {
    let secrets = &*SECRETS;
    let mut risks = Vec::new();
    for file in files {
        let path = file.path();
        secrets.check(file, &mut risks);
        tests_weakened(file, &mut risks);
        by_path(file, &mut risks);
        auth_crypto(file, &mut risks);
        generated(file, &mut risks);
        if file.binary {
            risks.push(risk(
                "large-change",
                path,
                None,
                format!("{path} is a binary file: its change cannot be reviewed as text"),
            ));
        }
    }
    let changed: usize = files.iter().map(|f| f.added() + f.removed()).sum();
    if changed > 400 {
        risks.push(risk(
            "large-change",
            files.first().map_or("", |f| f.path()),
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
static SECRETS: LazyLock<SecretPatterns> = LazyLock::new(SecretPatterns::new);
static ASSERTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(assert\w*|expect\s*\(|should\b|t\.(Error|Fatal)\w*|panic!)")
        .expect("a valid pattern")
});
static SKIP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(@pytest\.mark\.(skip|xfail)|@unittest\.skip|\bself\.skipTest\(|\b(it|test|describe)\.skip\(|\bx(it|describe|test)\(|#\[ignore\]|\bt\.Skip\()").expect("a valid pattern")
});
static SENSITIVE_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(auth|login|logout|session|passw|crypt|permission|acl|oauth|jwt|token|secur|signing|signature)").expect("a valid pattern")
});
static SENSITIVE_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(\bhashlib\b|\bbcrypt\b|\bhmac\b|\bjwt\b|\bcrypto\b|\bcipher\b|verify\s*=\s*false|\bchmod\b|\bsetuid\b|\bsudo\b|is_admin|permission|authori[sz])").expect("a valid pattern")
});

struct SecretPatterns {
    formats: Vec<(&'static str, Regex)>,
    assignment: Regex,
}

impl SecretPatterns {
    fn new() -> SecretPatterns {
        let formats = [
            ("an AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
            (
                "a GitHub token",
                r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b",
            ),
            ("a Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
            ("a Stripe secret key", r"\b[sr]k_live_[A-Za-z0-9]{16,}"),
            (
                "an OpenAI or Anthropic key",
                r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}",
            ),
            ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
            ("a private key", r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
        ]
        .into_iter()
        .map(|(what, pattern)| (what, Regex::new(pattern).expect("a valid pattern")))
        .collect();
        let assignment = Regex::new(
            r#"(?i)\b[\w.-]*(?:password|passwd|secret|token|api_?key|private_?key|access_?key|credential)[\w.-]*["']?\s*[:=]\s*["']([^"'\s]{12,})["']"#,
        )
        .expect("a valid pattern");
        SecretPatterns {
            formats,
            assignment,
        }
    }

    fn check(&self, file: &FileChange, risks: &mut Vec<Risk>) {
        let path = file.path();
        if file.status == Status::Added && crate::git::commit::looks_like_secret(path) {
            risks.push(risk(
                "secret-added",
                path,
                None,
                format!("{path} looks like a credential file and is added"),
            ));
        }
        for line in file.lines(Kind::Added) {
            if let Some((what, _)) = self
                .formats
                .iter()
                .find(|(_, pattern)| pattern.is_match(&line.text))
            {
                risks.push(risk(
                    "secret-added",
                    path,
                    line.new,
                    format!(
                        "{what} is added at line {} (value withheld)",
                        line.new.unwrap_or(0)
                    ),
                ));
                continue;
            }
            if let Some(value) = self.assignment.captures(&line.text).and_then(|c| c.get(1)) {
                if entropy(value.as_str()) >= 3.5 && !placeholder(value.as_str()) {
                    risks.push(risk("secret-added", path, line.new, format!("a high-entropy value is assigned to a secret-looking name at line {} (value withheld)", line.new.unwrap_or(0))));
                }
            }
        }
    }
}

/// `text` with every secret it holds replaced by `[withheld]`: what a snippet of the change
/// shows.
pub fn redact(text: &str) -> String {
    let patterns = &*SECRETS;
    let mut out = text.to_string();
    for (_, pattern) in &patterns.formats {
        out = pattern.replace_all(&out, "[withheld]").into_owned();
    }
    let mut values: Vec<String> = patterns
        .assignment
        .captures_iter(&out)
        .filter_map(|c| c.get(1))
        .map(|value| value.as_str().to_string())
        .filter(|value| entropy(value) >= 3.5 && !placeholder(value))
        .collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    for value in values {
        out = out.replace(&value, "[withheld]");
    }
    out
}

/// Shannon entropy in bits per character.
fn entropy(text: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in text.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let total = text.chars().count() as f64;
    counts
        .values()
        .map(|&n| {
            let p = n as f64 / total;
            -p * p.log2()
        })
        .sum()
}

/// A value that stands for a secret rather than being one.
fn placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    [
        "changeme",
        "example",
        "placeholder",
        "your",
        "xxxx",
        "dummy",
        "redacted",
        "${",
        "{{",
        "<",
    ]
    .iter()
    .any(|marker| lower.contains(marker))
}

fn tests_weakened(file: &FileChange, risks: &mut Vec<Risk>) {
    let path = file.path();
    if !is_test_file(path) {
        return;
    }
    if file.status == Status::Deleted {
        risks.push(risk(
            "test-weakened",
            path,
            None,
            format!("the test file {path} is deleted"),
        ));
        return;
    }
    let (assertion, skip) = (&*ASSERTION, &*SKIP);
    let removed: Vec<_> = file
        .lines(Kind::Removed)
        .filter(|l| assertion.is_match(&l.text))
        .collect();
    let added = file
        .lines(Kind::Added)
        .filter(|l| assertion.is_match(&l.text))
        .count();
    if removed.len() > added {
        let line = removed[0].old;
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
    for line in file.lines(Kind::Added).filter(|l| skip.is_match(&l.text)) {
        risks.push(risk(
            "test-weakened",
            path,
            line.new,
            format!("a test is skipped at {path}:{}", line.new.unwrap_or(0)),
        ));
    }
}

fn by_path(file: &FileChange, risks: &mut Vec<Risk>) {
    let path = file.path();
    let name = path.rsplit('/').next().unwrap_or(path);
    let ci = path.starts_with(".github/workflows/")
        || path.starts_with(".circleci/")
        || matches!(
            name,
            ".gitlab-ci.yml" | "Jenkinsfile" | "azure-pipelines.yml" | ".travis.yml"
        )
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
    if ci {
        risks.push(risk(
            "ci-build-config",
            path,
            None,
            format!("{path} configures CI or the build: it runs outside the project's tests"),
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
    ) || (name.starts_with("requirements") && name.ends_with(".txt"));
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

fn auth_crypto(file: &FileChange, risks: &mut Vec<Risk>) {
    let path = file.path();
    if is_test_file(path) {
        return;
    }
    let (sensitive_path, sensitive_code) = (&*SENSITIVE_PATH, &*SENSITIVE_CODE);
    if sensitive_path.is_match(path) {
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
        .flat_map(|h| &h.lines)
        .find(|l| l.kind != Kind::Context && sensitive_code.is_match(&l.text));
    if let Some(line) = changed {
        risks.push(risk(
            "auth-crypto",
            path,
            line.new.or(line.old),
            format!(
                "a line touching authentication, cryptography or permissions changed at {path}:{}",
                line.new.or(line.old).unwrap_or(0)
            ),
        ));
    }
}

fn generated(file: &FileChange, risks: &mut Vec<Risk>) {
    let path = file.path();
    let name = path.rsplit('/').next().unwrap_or(path);
    let vendored = ["vendor/", "third_party/", "node_modules/", "dist/"]
        .iter()
        .any(|d| path.starts_with(d) || path.contains(&format!("/{d}")));
    let generated_name = name.ends_with(".min.js")
        || name.ends_with("_pb2.py")
        || name.ends_with(".pb.go")
        || name.contains(".generated.");
    let marked = file
        .hunks
        .iter()
        .flat_map(|h| &h.lines)
        .take(400)
        .any(|l| l.text.contains("DO NOT EDIT") || l.text.contains("@generated"));
    if file.status != Status::Added && (vendored || generated_name || marked) {
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
    use super::super::diff::parse;
    use super::*;

    fn rules_found(diff: &str) -> Vec<&'static str> {
        check(&parse(diff).unwrap(), &[])
            .iter()
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
        let risks = check(&parse(&diff).unwrap(), &[]);
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
}
