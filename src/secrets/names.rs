//! Names that say a variable holds a credential (`GITHUB_TOKEN`, `DB_PASSWORD`): such variables
//! never reach a sandboxed command unless named, and their values are withheld from models.

/// Name fragments that mark a variable as a credential.
const MARKERS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "APIKEY",
    "PRIVATE_KEY",
    "ACCESS_KEY",
    "CREDENTIAL",
    "AUTH",
    "SESSION",
    "COOKIE",
    "DSN",
    "WEBHOOK",
    "DATABASE_URL",
];
/// Endings that name a credential too (`AZURE_OPENAI_KEY`, `DB_PASS`, `GITLAB_PAT`).
const ENDINGS: &[&str] = &["_KEY", "_PASS", "_PAT"];

/// Whether a variable's name looks like it holds a credential.
pub fn is_credential_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    MARKERS.iter().any(|marker| upper.contains(marker))
        || ENDINGS.iter().any(|ending| upper.ends_with(ending))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names() {
        for name in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "aws_secret_access_key",
            "DB_PASSWORD",
            "AZURE_OPENAI_KEY",
            "DB_PASS",
            "GITLAB_PAT",
            "DATABASE_URL",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
        ] {
            assert!(is_credential_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "CARGO_HOME"] {
            assert!(!is_credential_name(name), "{name}");
        }
    }
}
