//! Credential files: which paths hold keys and tokens by their name (`.env`, `*.pem`,
//! `.docker/config.json`), where a workspace has them, and the values they hold. Such files are
//! never committed unless named, never shown to a model nor changed by heal, and heal's copies
//! of them hold the stand-in instead of their secrets.

use std::path::{Path, PathBuf};

/// Whether `path` (from a project's root, `/`-separated) looks like it holds credentials.
pub(crate) fn is_credential_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    const EXACT: &[&str] = &[
        ".env",
        ".netrc",
        ".npmrc",
        ".pypirc",
        "credentials",
        "credentials.json",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        ".git-credentials",
        "secrets.json",
        "secrets.yml",
        "secrets.yaml",
        "secrets.toml",
        "credentials.toml",
        ".envrc",
        ".pgpass",
        ".htpasswd",
        ".dev.vars",
        "local.settings.json",
        "service-account.json",
        ".vault-token",
        ".s3cfg",
        ".boto",
    ];
    const SUFFIXES: &[&str] = &[
        ".env",
        ".pem",
        ".key",
        ".p12",
        ".pfx",
        ".keystore",
        ".jks",
        ".tfvars",
        ".tfstate",
        ".tfstate.backup",
    ];
    // Configuration files named for what they configure, whose name alone says nothing.
    const PATHS: &[&str] = &[".docker/config.json", ".kube/config"];
    let path = path.to_ascii_lowercase();
    EXACT.contains(&name.as_str())
        || name.starts_with(".env.")
        || SUFFIXES.iter().any(|s| name.ends_with(s))
        || PATHS
            .iter()
            .any(|p| path == *p || path.ends_with(&format!("/{p}")))
}

/// Entries of a workspace looked at, at most, for its credential files.
const MAX_WALKED: usize = 100_000;

/// The workspace's credential files at any depth, ignored by git or not, with their text: each
/// a regular file, or a link to one (the link is then the one given: what the tests read through
/// it is the file's, wherever it is). Not in `.git`, nor in build outputs and installed packages (`node_modules`, cargo's
/// `target`, a virtual environment, `site-packages`), whose key files are others' (certifi's
/// `cacert.pem`): told by their names and markers together, so that a marker planted beside a
/// credential file does not hide it.
pub(super) fn credential_files(workspace: &Path) -> Vec<(PathBuf, String)> {
    let walk = ignore::WalkBuilder::new(workspace)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|entry| {
            !entry.file_type().is_some_and(|t| t.is_dir()) || !installed(entry.path())
        })
        .build();
    let mut found = Vec::new();
    for entry in walk.filter_map(Result::ok).take(MAX_WALKED) {
        let Ok(relative) = entry.path().strip_prefix(workspace) else {
            continue;
        };
        let kind = entry.file_type();
        if !kind.is_some_and(|t| t.is_file() || t.is_symlink())
            || !is_credential_file(&relative.to_string_lossy())
        {
            continue;
        }
        let text = match kind.is_some_and(|t| t.is_symlink()) {
            true => entry
                .path()
                .canonicalize()
                .ok()
                .and_then(|target| crate::workspace::read_regular_file(&target, 1 << 20)),
            false => crate::workspace::read_regular_file(entry.path(), 1 << 20),
        };
        if let Some(text) = text {
            found.push((entry.path().to_path_buf(), text));
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Whether `dir` holds others' installed files: git's, packages', build outputs.
fn installed(dir: &Path) -> bool {
    let name = dir.file_name().and_then(|name| name.to_str()).unwrap_or("");
    match name {
        ".git" | "node_modules" | "site-packages" | "dist-packages" => true,
        ".tox" | ".nox" => true,
        "target" => dir.join("CACHEDIR.TAG").exists(),
        ".venv" | "venv" => dir.join("pyvenv.cfg").exists(),
        _ => false,
    }
}

/// The values in a credential file's text: each `KEY=VALUE`, `KEY: VALUE` or `"key": "value"`
/// line's value, unquoted (a base64 value's `=` padding kept), and every other line (a key
/// file's).
pub(super) fn values_in(text: &str) -> impl Iterator<Item = String> + '_ {
    static ASSIGNED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"^(?:export\s+)?["']?[A-Za-z_][\w.-]*["']?\s*(?:=|:)\s*(.*)$"#)
            .expect("a valid pattern")
    });
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let value = ASSIGNED
                .captures(line)
                .and_then(|found| found.get(1))
                .map_or(line, |value| value.as_str());
            value
                .trim()
                .trim_end_matches(',')
                .trim_matches(|c| c == '"' || c == '\'')
                .to_string()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_paths() {
        for path in [
            ".env",
            "config/.env.production",
            "certs/server.pem",
            "deploy/id_rsa",
            "x/credentials.json",
            ".envrc",
            "infra/prod.tfvars",
            "home/.docker/config.json",
            ".kube/config",
            ".cargo/credentials.toml",
        ] {
            assert!(is_credential_file(path), "{path}");
        }
        for path in [
            "src/env.rs",
            "README.md",
            "keys.py",
            "environment.yml",
            "docker/config.json",
        ] {
            assert!(!is_credential_file(path), "{path}");
        }
    }

    #[test]
    fn credential_files_are_found_at_any_depth_but_not_in_installed_packages() {
        let workspace = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = workspace.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "services/api/conf/.env",
            "STRIPE_KEY=sk_live_DEEPSECRET_abcdef123\n",
        );
        write(
            "deploy/.docker/config.json",
            "{\"auths\": \"c2VjcmV0LWF1dGgtdG9rZW4=\"}\n",
        );
        write("node_modules/pkg/.env", "TOKEN=from-a-package-0001\n");
        write(".venv/pyvenv.cfg", "home = /usr/bin\n");
        // A marker planted beside a credential file does not hide it.
        write("svc/pyvenv.cfg", "home = /usr/bin\n");
        write(
            "svc/CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        );
        write("svc/.env", "SVC_TOKEN=svc-secret-000111\n");
        write("config/production.conf", "PASSWORD=linked-secret-222\n");
        std::os::unix::fs::symlink(
            "../config/production.conf",
            workspace.path().join("deploy/.env"),
        )
        .unwrap();
        write(
            ".venv/lib/certifi/cacert.pem",
            "PUBLICCERTIFICATELINE0001\n",
        );
        write("app.py", "x = 1\n");
        let mut found: Vec<String> = credential_files(workspace.path())
            .into_iter()
            .map(|(path, _)| {
                let path = path.strip_prefix(workspace.path()).unwrap();
                path.to_string_lossy().into_owned()
            })
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                "deploy/.docker/config.json",
                "deploy/.env",
                "services/api/conf/.env",
                "svc/.env"
            ]
        );
    }

    #[test]
    fn a_files_values_are_its_assignments_and_its_other_lines() {
        let values: Vec<String> = values_in(
            "# a comment\nA=\"one\"\nexport B: 'two'\n\nMIIEkeyline\n  \"auth\": \"Ym90OmdocA==\",\nclient-key-data: LS0tLS1C==\n",
        )
        .collect();
        assert_eq!(
            values,
            ["one", "two", "MIIEkeyline", "Ym90OmdocA==", "LS0tLS1C=="]
        );
    }
}
