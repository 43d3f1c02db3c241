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
    "PASSPHRASE",
    "CONNECTION_STRING",
    "CONN_STR",
];
/// Endings that name a credential too (`AZURE_OPENAI_KEY`, `DB_PASS`, `MYSQL_PWD`,
/// `GITLAB_PAT`).
const ENDINGS: &[&str] = &["_KEY", "_PASS", "_PWD", "_PAT"];

/// Whether a variable's name looks like it holds a credential.
pub(crate) fn is_credential_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    MARKERS.iter().any(|marker| upper.contains(marker))
        || ENDINGS.iter().any(|ending| upper.ends_with(ending))
}

/// Whether a variable holds a credential, by its name or by its value (a URL with a password,
/// `REDIS_URL=redis://:pw@host`, or a token by its shape).
pub(super) fn is_credential(name: &str, value: &str) -> bool {
    is_credential_name(name) || super::scan::found(value, &[name]).is_some()
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
            "MYSQL_PWD",
            "GPG_PASSPHRASE",
            "AZURE_STORAGE_CONNECTION_STRING",
        ] {
            assert!(is_credential_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "CARGO_HOME", "PWD", "OLDPWD"] {
            assert!(!is_credential_name(name), "{name}");
        }
    }

    #[test]
    fn a_value_says_it_is_a_credential_whatever_its_name() {
        assert!(is_credential(
            "REDIS_URL",
            "redis://:Sup3rS3cr3tPw@cache:6379/0"
        ));
        assert!(is_credential(
            "CI_HELPER",
            &["ghp_", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9aB3dE5gH7j"].concat()
        ));
        assert!(!is_credential("REDIS_URL", "redis://cache:6379/0"));
        assert!(!is_credential("LANG", "C.UTF-8"));
    }
}
