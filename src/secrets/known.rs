//! The secrets this run knows (the values of credential-looking variables, of those given to the
//! tests, of the workspace's credential files, and the model's key), and every text that goes to
//! a model or into a trace without them. A secret is withheld however it is spelled: as it is, as
//! a JSON string spells it, reversed, in hex, URL-encoded, and in base64 (standard and URL-safe,
//! at each of the three places a value can start in a base64 stream), so that a test that prints
//! `base64 .env` shows nothing a model could decode.

use std::path::Path;

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine;
use serde_json::Value;

use super::files::{credential_files, values_in};
use super::names::is_credential;

/// What a secret is replaced by in everything a model is sent.
pub(crate) const WITHHELD: &str = "[withheld]";

/// Secrets shorter than this are not withheld, so that a `TOKEN=1` does not blank every 1.
const SHORTEST: usize = 8;

/// The known secrets, and a matcher of every spelling of each.
#[derive(Clone, Default)]
pub(crate) struct Secrets {
    values: Vec<String>,
    /// Every spelling of every value, found leftmost-longest; None when there is none.
    spellings: Option<AhoCorasick>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} withheld)", self.values.len())
    }
}

impl Secrets {
    /// The secrets to withhold: the values of this environment's credential-looking variables
    /// and of those given to the tests (`--env KEY=VALUE`), the values in the workspace's
    /// credential files (at any depth), and the model's (`model`: its key, its URL's password).
    pub(crate) fn collect(model: &[String], env_flags: &[String], workspace: &Path) -> Secrets {
        Secrets::collect_in(model, env_flags, &[workspace])
    }

    /// `collect`, for several workspaces (an MCP server's roots).
    pub(crate) fn collect_in(
        model: &[String],
        env_flags: &[String],
        workspaces: &[&Path],
    ) -> Secrets {
        let values = std::env::vars()
            .filter(|(name, value)| is_credential(name, value))
            .map(|(_, value)| value)
            .chain(env_flags.iter().filter_map(|flag| {
                let (name, value) = flag.split_once('=')?;
                is_credential(name, value).then(|| value.to_string())
            }))
            .chain(
                workspaces
                    .iter()
                    .flat_map(|workspace| credential_files(workspace))
                    .flat_map(|(_, text)| values_in(&text).collect::<Vec<_>>()),
            )
            .chain(model.iter().cloned());
        Secrets::of(values)
    }

    /// These values, each of `SHORTEST` characters or more, withheld.
    pub(crate) fn of(values: impl IntoIterator<Item = String>) -> Secrets {
        let mut values: Vec<String> = values
            .into_iter()
            .filter(|value| value.len() >= SHORTEST)
            .collect();
        values.sort();
        values.dedup();
        let spellings: Vec<String> = values
            .iter()
            .flat_map(|value| spellings_of(value))
            .filter(|spelling| spelling.len() >= SHORTEST)
            .collect();
        let spellings = match spellings.is_empty() {
            true => None,
            // Leftmost-longest: a secret that contains another is replaced whole.
            false => AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&spellings)
                .ok(),
        };
        Secrets { values, spellings }
    }

    /// `text` with every spelling of every secret replaced by the stand-in.
    pub(crate) fn withhold(&self, text: &str) -> String {
        match &self.spellings {
            Some(spellings) if spellings.is_match(text) => {
                spellings.replace_all(text, &vec![WITHHELD; spellings.patterns_len()])
            }
            _ => text.to_string(),
        }
    }

    /// `text` without the secrets known here, however spelled, nor any that looks like one by its
    /// shape (a token in a file no name marks, a key in a command's output): what a model (or an
    /// MCP client, a model's agent) may be sent.
    pub(crate) fn without_secrets(&self, text: &str) -> String {
        self.withhold(&super::scan::redact(text))
    }

    /// `without_secrets` for every string in `value`.
    pub(crate) fn without_secrets_json(&self, value: &mut Value) {
        match value {
            Value::String(text) => {
                let cleared = self.without_secrets(text);
                if cleared != *text {
                    *text = cleared;
                }
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|item| self.without_secrets_json(item)),
            Value::Object(map) => map
                .values_mut()
                .for_each(|item| self.without_secrets_json(item)),
            _ => {}
        }
    }

    /// `value` with every string in it (object keys too) withheld, before it is written as JSON.
    pub(crate) fn withhold_json(&self, value: &mut Value) {
        if self.spellings.is_none() {
            return;
        }
        match value {
            Value::String(text) => {
                let withheld = self.withhold(text);
                if withheld != *text {
                    *text = withheld;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.withhold_json(item)),
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    let mut item = map.remove(&key).unwrap_or_default();
                    self.withhold_json(&mut item);
                    map.insert(self.withhold(&key), item);
                }
            }
            _ => {}
        }
    }

    /// Replaces the secrets in the credential files of `copy` (a private copy of a workspace) by
    /// the stand-in: what the tests and the commands a model chose read there, and print however
    /// encoded, holds none. Whether a file changed.
    pub(crate) fn withhold_in_files(&self, copy: &Path) -> std::io::Result<bool> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut changed = false;
        for (path, text) in credential_files(copy) {
            let blanked = self.withhold(&text);
            if blanked != text {
                // A link (to a file of the copy's or the host's) becomes a file of the copy's.
                if path.symlink_metadata()?.file_type().is_symlink() {
                    std::fs::remove_file(&path)?;
                }
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&path)?
                    .write_all(blanked.as_bytes())?;
                changed = true;
            }
        }
        Ok(changed)
    }
}

/// Why a change of `path` from `before` to `after` may not be made: it writes the stand-in for a
/// secret its writer was not shown (a model, an MCP client), which would take the secret's place.
pub(crate) fn writes_stand_in(path: &str, before: &str, after: &str) -> Option<String> {
    (after.matches(WITHHELD).count() > before.matches(WITHHELD).count()).then(|| {
        format!(
            "the change to {path} writes {WITHHELD}, which stands for a secret you were not shown: leave the lines that hold it as they are"
        )
    })
}

/// `--env` requests as the tests get them while a model is in the loop: each credential's value
/// (by its name or its value) replaced by the stand-in (`KEY` alone, which copies ours, too).
pub(crate) fn withheld_env(flags: &[String]) -> Vec<String> {
    flags
        .iter()
        .map(|flag| {
            let (name, value) = match flag.split_once('=') {
                Some((name, value)) => (name, value.to_string()),
                None => (flag.as_str(), std::env::var(flag).unwrap_or_default()),
            };
            match is_credential(name, &value) {
                true => format!("{name}={WITHHELD}"),
                false => flag.clone(),
            }
        })
        .collect()
}

/// Every way a text that carries `secret` may spell it.
fn spellings_of(secret: &str) -> Vec<String> {
    let bytes = secret.as_bytes();
    let quoted = serde_json::to_string(secret).unwrap_or_default();
    let mut spellings = vec![
        secret.to_string(),
        quoted[1..quoted.len() - 1].to_string(),
        secret.chars().rev().collect(),
        hex(bytes, false),
        hex(bytes, true),
        url_encoded(bytes, false),
        url_encoded(bytes, true),
    ];
    for engine in [
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ] {
        for offset in 0..3 {
            spellings.push(base64_core(&engine, bytes, offset));
        }
    }
    for offset in 0..5 {
        let core = base32_core(bytes, offset);
        spellings.push(core.to_ascii_lowercase());
        spellings.push(core);
    }
    spellings.push(rot13(secret));
    spellings.sort();
    spellings.dedup();
    spellings
}

/// The base64 characters that `bytes` alone decide when they start `offset` bytes (0 to 2) into
/// a 3-byte group: the same in every stream that holds them there, whatever comes around them.
fn base64_core(engine: &impl Engine, bytes: &[u8], offset: usize) -> String {
    let mut padded = vec![0u8; offset];
    padded.extend_from_slice(bytes);
    let encoded = engine.encode(&padded);
    // Each character holds 6 bits; the secret's bits are those from 8 * offset to
    // 8 * (offset + len).
    let first = (8 * offset).div_ceil(6);
    let end = 8 * (offset + bytes.len()) / 6;
    encoded.get(first..end).unwrap_or_default().to_string()
}

/// As `base64_core`, for base32 (RFC 4648's alphabet): 5-byte groups, 5 bits a character.
fn base32_core(bytes: &[u8], offset: usize) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut padded = vec![0u8; offset];
    padded.extend_from_slice(bytes);
    let bits = padded.len() * 8;
    let bit = |at: usize| (padded[at / 8] >> (7 - at % 8)) & 1;
    let first = (8 * offset).div_ceil(5);
    let end = bits / 5;
    (first..end)
        .map(|char_at| {
            let value = (0..5).fold(0usize, |value, i| {
                value << 1 | bit(char_at * 5 + i) as usize
            });
            ALPHABET[value] as char
        })
        .collect()
}

/// ROT13: letters turned 13 places, the rest as it is.
fn rot13(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
            'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
            other => other,
        })
        .collect()
}

fn hex(bytes: &[u8], upper: bool) -> String {
    bytes
        .iter()
        .map(|byte| match upper {
            true => format!("{byte:02X}"),
            false => format!("{byte:02x}"),
        })
        .collect()
}

/// Percent-encoding of all but RFC 3986's unreserved characters.
fn url_encoded(bytes: &[u8], upper: bool) -> String {
    bytes
        .iter()
        .map(|&byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (byte as char).to_string()
            }
            _ if upper => format!("%{byte:02X}"),
            _ => format!("%{byte:02x}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};

    const SECRET: &str = "sk_live_DEEPSECRET/abc+123?x=y";

    fn secrets() -> Secrets {
        Secrets::of([SECRET.to_string(), "short".to_string()])
    }

    #[test]
    fn secrets_are_taken_out_however_a_result_spells_them() {
        let secrets = secrets();
        assert_eq!(
            secrets.withhold(&format!("key {SECRET} in {SECRET}!")),
            "key [withheld] in [withheld]!"
        );
        // As a JSON string spells it, too.
        let secret = "a\"b\\c-0123456789".to_string();
        let json = serde_json::to_string(&serde_json::json!({"stdout": secret})).unwrap();
        assert_eq!(
            Secrets::of([secret]).withhold(&json),
            r#"{"stdout":"[withheld]"}"#
        );
        // Shorter than 8 characters: left.
        assert_eq!(secrets.withhold("short"), "short");
    }

    #[test]
    fn every_common_encoding_is_withheld_wherever_the_secret_starts() {
        let secrets = secrets();
        let reversed: String = SECRET.chars().rev().collect();
        let shown = |text: &str| {
            let withheld = secrets.withhold(text);
            assert!(withheld.contains(WITHHELD), "not withheld: {text}");
            withheld
        };
        shown(&reversed);
        shown(&hex(SECRET.as_bytes(), false));
        shown(&hex(SECRET.as_bytes(), true));
        shown(&url_encoded(SECRET.as_bytes(), true));
        shown(&url_encoded(SECRET.as_bytes(), false));
        shown(&rot13(SECRET));
        // base32 as Python's base64.b32encode writes it, its padding bits left out.
        assert_eq!(base32_core(b"hello world", 0), "NBSWY3DPEB3W64TMM");
        // base32 of a whole file.
        for before in ["", "K", "KE", "KEY", "KEY="] {
            let file = format!("{before}{SECRET}\n");
            let encoded = base32_core(file.as_bytes(), 0);
            shown(&encoded);
        }
        // In base64 of a whole file, whatever comes before the value and after it.
        for before in ["", "K", "KE", "KEY=", "STRIPE_KEY="] {
            for engine in [STANDARD, URL_SAFE] {
                let file = format!("{before}{SECRET}\nOTHER=1\n");
                let encoded = engine.encode(file.as_bytes());
                let withheld = shown(&encoded);
                // All of the secret's characters but the two it shares with its neighbours.
                let taken = encoded.len() + WITHHELD.len() - withheld.len();
                assert!(taken + 2 >= SECRET.len() * 4 / 3, "{before:?}: {withheld}");
            }
        }
    }

    #[test]
    fn json_is_withheld_string_by_string_and_stays_json() {
        let secrets = secrets();
        let mut value =
            serde_json::json!({"message": format!("got n{SECRET}"), SECRET: [1, SECRET]});
        secrets.withhold_json(&mut value);
        assert_eq!(
            value,
            serde_json::json!({"message": "got n[withheld]", "[withheld]": [1, "[withheld]"]})
        );
    }

    #[test]
    fn writing_the_stand_in_for_a_secret_is_refused() {
        assert!(writes_stand_in("a.py", "TOKEN = 1", "TOKEN = \"[withheld]\"").is_some());
        // Kept where it was, it is not written anew.
        assert!(
            writes_stand_in("a.py", "x = \"[withheld]\"", "x = \"[withheld]\"\ny = 2").is_none()
        );
        assert!(writes_stand_in("a.py", "x = 1", "x = 2").is_none());
    }

    #[test]
    fn credential_variables_given_to_the_tests_hold_the_stand_in() {
        assert_eq!(
            withheld_env(&[
                "API_TOKEN=abc".into(),
                "GITHUB_TOKEN".into(),
                "LANG=C".into(),
                "REDIS_URL=redis://:Sup3rS3cr3tPw@cache/0".into()
            ]),
            [
                "API_TOKEN=[withheld]",
                "GITHUB_TOKEN=[withheld]",
                "LANG=C",
                "REDIS_URL=[withheld]"
            ]
        );
    }

    #[test]
    fn a_workspaces_credential_values_are_collected() {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(workspace.path().join("conf")).unwrap();
        std::fs::write(
            workspace.path().join("conf/.env"),
            "STRIPE_KEY=sk_live_DEEPSECRET_abcdef123\n",
        )
        .unwrap();
        let secrets = Secrets::collect(&["sk-model-key-1234".into()], &[], workspace.path());
        assert!(secrets
            .values
            .contains(&"sk_live_DEEPSECRET_abcdef123".to_string()));
        assert!(secrets.values.contains(&"sk-model-key-1234".to_string()));
    }
}
