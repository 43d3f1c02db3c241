//! Secrets kept from every model: what they are (the values of this environment's
//! credential-looking variables and of those given to the tests, the values in the workspace's
//! credential files, the model's key) and how a text is sent without them. Shared by heal's
//! prompts and tool results and by review's model packet.

use std::path::Path;

/// What a secret is replaced by in everything the model is sent.
pub const WITHHELD: &str = "[withheld]";

/// `text` with each secret replaced: the values of variables whose names look like they hold
/// credentials, and the model's own key; also as a JSON string spells them (a result sent as
/// JSON escapes their quotes and backslashes).
pub fn withheld(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets {
        let quoted = serde_json::to_string(secret).unwrap_or_default();
        let escaped = quoted.get(1..quoted.len() - 1).unwrap_or_default();
        for spelling in [secret.as_str(), escaped] {
            if !spelling.is_empty() && out.contains(spelling) {
                out = out.replace(spelling, WITHHELD);
            }
        }
    }
    out
}

/// The secrets to withhold from everything the model is sent: the values of this
/// environment's credential-looking variables and of those given to the tests (`--env
/// KEY=VALUE`), the values in the workspace's credential files (`.env`, `*.pem`, ...; at any
/// depth), and the key. Each of 8 characters or more, so that a `TOKEN=1` does not blank
/// every 1.
pub fn collect(api_key: Option<&str>, env_flags: &[String], workspace: &Path) -> Vec<String> {
    let looks_secret = crate::sandbox::environment::looks_like_secret;
    let mut secrets: Vec<String> = std::env::vars()
        .filter(|(name, _)| looks_secret(name))
        .map(|(_, value)| value)
        .chain(env_flags.iter().filter_map(|flag| {
            let (name, value) = flag.split_once('=')?;
            looks_secret(name).then(|| value.to_string())
        }))
        .chain(secret_file_values(workspace))
        .chain(api_key.map(str::to_string))
        .filter(|value| value.len() >= 8)
        .collect();
    // The longest first: a secret that contains another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

/// Entries of a workspace looked at, at most, for its credential files.
const MAX_WALKED: usize = 100_000;

/// The workspace's credential files (`.env`, `*.pem`, `.docker/config.json`, ...) at any depth,
/// ignored by git or not, with their text: regular files only, reached through no link. Not
/// in `.git`, build outputs and installed packages (`node_modules`, a directory with a
/// CACHEDIR.TAG, a virtual environment), whose key files are others' (certifi's `cacert.pem`).
fn credential_files(workspace: &Path) -> Vec<(std::path::PathBuf, String)> {
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
            || !crate::git::commit::looks_like_secret(&relative.to_string_lossy())
        {
            continue;
        }
        if let Some(text) = crate::workspace::read_regular_file(entry.path(), 1 << 20) {
            found.push((entry.path().to_path_buf(), text));
        }
    }
    found
}

/// The values in the workspace's credential files: each `KEY=VALUE` (or `KEY: VALUE`) line's
/// value, unquoted, and every other line (a key file's).
fn secret_file_values(workspace: &Path) -> Vec<String> {
    let mut values = Vec::new();
    for (_, text) in credential_files(workspace) {
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let value = line
                .split_once('=')
                .or_else(|| line.split_once(": "))
                .map_or(line, |(_, value)| value)
                .trim()
                .trim_matches(|c| c == '"' || c == '\'');
            values.push(value.to_string());
        }
    }
    values
}

/// Replaces the secrets in the credential files of `copy` (a private copy of a workspace) by
/// the stand-in: what commands a model chose run there, and their output, however encoded
/// (`base64 .env`), must hold no secret.
pub fn withhold_in_files(copy: &Path, secrets: &[String]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    for (path, text) in credential_files(copy) {
        let blanked = withheld(&text, secrets);
        if blanked != text {
            std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)?
                .write_all(blanked.as_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_taken_out_however_a_result_spells_them() {
        assert_eq!(
            withheld("key sk-abcdefgh in sk-abcdefgh!", &["sk-abcdefgh".into()]),
            "key [withheld] in [withheld]!"
        );
        // As a JSON string spells it, too.
        let secret = "a\"b\\c-0123456789".to_string();
        let json = serde_json::to_string(&serde_json::json!({"stdout": secret})).unwrap();
        assert_eq!(withheld(&json, &[secret]), r#"{"stdout":"[withheld]"}"#);
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
        let secrets = collect(None, &[], workspace.path());
        assert!(secrets.contains(&"sk_live_DEEPSECRET_abcdef123".to_string()));
    }
}
