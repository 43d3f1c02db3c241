//! Credential files: which paths hold keys and tokens by their name (`.env`, `*.pem`,
//! `.docker/config.json`), where a workspace has them, and the values they hold. Such files are
//! never committed unless named, never shown to a model nor changed by heal, and heal's copies
//! of them hold the stand-in instead of their secrets.

use std::path::{Path, PathBuf};

/// Whether `path` (from a project's root, `/`-separated) looks like it holds credentials.
pub fn is_credential_file(path: &str) -> bool {
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

/// The workspace's credential files at any depth, ignored by git or not, with their text:
/// regular files only, reached through no link. Not in `.git`, build outputs and installed
/// packages (`node_modules`, a directory with a CACHEDIR.TAG, a virtual environment), whose key
/// files are others' (certifi's `cacert.pem`).
pub fn credential_files(workspace: &Path) -> Vec<(PathBuf, String)> {
    let walk = ignore::WalkBuilder::new(workspace)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|entry| {
            let path = entry.path();
            !entry.file_type().is_some_and(|t| t.is_dir())
                || !(entry.file_name() == ".git"
                    || entry.file_name() == "node_modules"
                    || path.join("CACHEDIR.TAG").exists()
                    || path.join("pyvenv.cfg").exists())
        })
        .build();
    let mut found = Vec::new();
    for entry in walk.filter_map(Result::ok).take(MAX_WALKED) {
        let Ok(relative) = entry.path().strip_prefix(workspace) else {
            continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file())
            || !is_credential_file(&relative.to_string_lossy())
        {
            continue;
        }
        if let Some(text) = crate::workspace::read_regular_file(entry.path(), 1 << 20) {
            found.push((entry.path().to_path_buf(), text));
        }
    }
    found
}

/// The values in a credential file's text: each `KEY=VALUE` (or `KEY: VALUE`) line's value,
/// unquoted, and every other line (a key file's).
pub fn values_in(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            line.split_once('=')
                .or_else(|| line.split_once(": "))
                .map_or(line, |(_, value)| value)
                .trim()
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
            ["deploy/.docker/config.json", "services/api/conf/.env"]
        );
    }

    #[test]
    fn a_files_values_are_its_assignments_and_its_other_lines() {
        let values: Vec<String> =
            values_in("# a comment\nA=\"one\"\nB: 'two'\n\nMIIEkeyline\n").collect();
        assert_eq!(values, ["one", "two", "MIIEkeyline"]);
    }
}
