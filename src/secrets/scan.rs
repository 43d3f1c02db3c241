//! Secrets by their shape, in text no one told us about (a change under review, a commit about
//! to be made): providers' token formats, private keys, and high-entropy values assigned to
//! secret-looking names. The providers and shapes are learnt from a dedicated scanner's published
//! rule set (gitleaks' `config/gitleaks.toml`), written here as our own rules: each a prefix or
//! structure distinctive enough to flag on its own, or, for keys that are only random characters
//! (an AWS secret key, a Twilio auth token), one that also needs its provider's name on the line
//! or on one of the lines just before it. A value that is base64 or URL-encoded is decoded once and
//! looked at again (`Authorization: Basic dXNlcjpnaHBf…` holds a GitHub token).

use std::sync::LazyLock;

use base64::Engine;
use regex::{Regex, RegexSet};

use super::known::WITHHELD;

/// A token format: what it is called, its shape (its first group, where it has one, is the
/// secret), the words one of which must be near it, and what makes a match a secret.
struct Format {
    what: &'static str,
    pattern: &'static str,
    near: &'static [&'static str],
    check: Check,
}

/// What makes a format's match a secret beyond its shape.
#[derive(Clone, Copy, PartialEq)]
enum Check {
    /// Not one character over and over, nor a published stand-in.
    Shape,
    /// Random characters (letters and digits, hex or both cases), near its provider's name.
    Random,
    /// The structure says it (`-u user:PASSWORD`, `<password>…</password>`): any value that
    /// is not a placeholder, however short or plain.
    Structure,
    /// A literal assigned to a password's name: not a placeholder, two kinds of characters or
    /// more (letters and digits, or symbols), not a name or an expression.
    Password,
}

/// A format its shape alone says.
const fn shape(what: &'static str, pattern: &'static str) -> Format {
    Format {
        what,
        pattern,
        near: &[],
        check: Check::Shape,
    }
}

/// A format of random characters that needs one of `near` on its line or just before.
const fn named(what: &'static str, pattern: &'static str, near: &'static [&'static str]) -> Format {
    Format {
        what,
        pattern,
        near,
        check: Check::Random,
    }
}

/// A value its place in a structure says is a secret.
const fn structure(what: &'static str, pattern: &'static str) -> Format {
    Format {
        what,
        pattern,
        near: &[],
        check: Check::Structure,
    }
}

/// The formats, most specific first. Each has a real-looking sample in the tests.
#[rustfmt::skip]
const FORMATS: &[Format] = &[
    shape("a private key", r"-----BEGIN (?:[A-Z0-9_-]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    shape("an AWS access key", r"(?-u:\b)(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?-u:\b)"),
    named("an AWS secret key", r"(?-u:\b)[A-Za-z0-9/+]{40}(?-u:\b)", &["aws", "amazon"]),
    shape("a GitHub token", r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})(?-u:\b)"),
    shape("a GitLab token", r"(?-u:\b)(?:gl(?:pat|dt|ptt|rt|cbt|imt|oas|soat|ft|ffct|agent)-[A-Za-z0-9_.-]{20,}|GR1348941[A-Za-z0-9_-]{20})"),
    shape("a Slack token", r"(?-u:\b)xox[abeoprs]-[A-Za-z0-9-]{10,}|(?-u:\b)xapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+"),
    shape("a Slack webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}"),
    shape("a Discord webhook", r"discord(?:app)?\.com/api(?:/v\d+)?/webhooks/\d{5,}/[A-Za-z0-9_-]{30,}"),
    shape("a Microsoft Teams webhook", r"\.webhook\.office\.com/webhookb2/[A-Za-z0-9@-]{20,}/IncomingWebhook/[A-Za-z0-9]{32}"),
    shape("a Twilio API key", r"(?-u:\b)SK[0-9a-fA-F]{32}(?-u:\b)"),
    named("a Twilio auth token", r"(?-u:\b)[0-9a-f]{32}(?-u:\b)", &["twilio"]),
    shape("a Telegram bot token", r"(?-u:\b)\d{8,10}:AA[A-Za-z0-9_-]{33}(?-u:\b)"),
    shape("a Google OAuth client secret", r"(?-u:\b)GOCSPX-[A-Za-z0-9_-]{28}(?-u:\b)"),
    shape("a Stripe key", r"(?-u:\b)(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}"),
    // Keys mix cases and digits; a CSS class such as `sk-loading-spinner` does not.
    shape("an OpenAI or Anthropic key", r"(?-u:\b)sk-(?:ant-(?:api\d+-|admin\d+-)?|proj-|svcacct-|admin-)?[A-Za-z0-9_-]*[A-Z][A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*|(?-u:\b)sk-(?:ant-(?:api\d+-|admin\d+-)?|proj-|svcacct-|admin-)?[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*[A-Z][A-Za-z0-9_-]*"),
    shape("a Perplexity key", r"(?-u:\b)pplx-[A-Za-z0-9]{48}(?-u:\b)"),
    shape("a Google API key", r"(?-u:\b)AIza[0-9A-Za-z_-]{35}(?-u:\b)"),
    shape("a Google service account's key", r#""private_key_id"\s*:\s*"[0-9a-f]{40}""#),
    shape("a JSON web token", r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    named("a bearer token", r"(?i)(?-u:\b)bearer\s+([A-Za-z0-9._~+/=-]{20,})", &["bearer"]),
    named("a password after its name", r"(?i)(?:^|\s)(?:password|passwd)\s+(\S{8,})", &["pass"]),
    shape("a password in a URL", r"(?-u:\b)[a-z][a-z0-9+.-]*://[^/\s:@]*:[^/\s@]{3,}@"),
    structure("a basic-auth header", r#"(?i)authorization\\?["']?\s*[:=]\s*\\?["']?basic\s+([A-Za-z0-9+/]{6,}={0,2})"#),
    structure("a password given to curl", r#"(?-u:\b)curl(?:\s.*?)?\s(?:-u\s*|--user[=\s]+)\\?["']?[^\s:"'\\]+:([^\s"'@\\]+)"#),
    structure("a password in markup", r"(?i)<(?:password|passwd|pwd|secret|token|api[_-]?key|private[_-]?key)>\s*([^<\s][^<]*?)\s*</"),
    Format { what: "a password assigned", pattern: r#"(?i)(?:^|[^a-z0-9_])(?:[a-z0-9]+[_.-])*(?:password|passwd|pwd|pass)\\?["']?\s*[:=]\s*\\?["']([^"'\\\s]{8,})\\?["']"#, near: &[], check: Check::Password },
    Format { what: "a password assigned", pattern: r"(?m)^\s*(?:export\s+)?[A-Za-z0-9_]*(?:PASSWORD|PASSWD|PWD|PASS)\s*=\s*([^\s\x22'#$]{6,})\s*$", near: &[], check: Check::Password },
    shape("a SendGrid key", r"(?-u:\b)SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    shape("a Brevo key", r"(?-u:\b)xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    shape("a Mailgun key", r"(?-u:\b)key-[0-9a-f]{32}(?-u:\b)"),
    shape("a Mailchimp key", r"(?-u:\b)[0-9a-f]{32}-us\d{1,2}(?-u:\b)"),
    shape("an npm token", r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)"),
    shape("a PyPI token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    shape("a RubyGems key", r"(?-u:\b)rubygems_[a-f0-9]{48}(?-u:\b)"),
    shape("a Docker Hub token", r"(?-u:\b)dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}"),
    shape("a JFrog key", r"(?-u:\b)AKCp[A-Za-z0-9]{69}(?-u:\b)"),
    shape("a Hugging Face token", r"(?-u:\b)(?:hf_|api_org_)[A-Za-z0-9]{30,}"),
    shape("a Shopify token", r"(?-u:\b)shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?-u:\b)"),
    shape("a Square token", r"(?-u:\b)(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_-]{22,60}"),
    shape("a Heroku key", r"(?-u:\b)HRKU-AA[A-Za-z0-9_-]{58}"),
    named("a Heroku key", r"(?-u:\b)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?-u:\b)", &["heroku"]),
    shape("a DigitalOcean token", r"(?-u:\b)do[opr]_v1_[a-f0-9]{64}(?-u:\b)"),
    shape("a Doppler token", r"(?-u:\b)dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    shape("a Databricks token", r"(?-u:\b)dapi[a-f0-9]{32}(?:-\d)?(?-u:\b)"),
    shape("an Atlassian token", r"(?-u:\b)ATATT3[A-Za-z0-9_=-]{180,}"),
    shape("a Linear key", r"(?-u:\b)lin_api_[A-Za-z0-9]{40}(?-u:\b)"),
    shape("a Postman key", r"(?-u:\b)PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}(?-u:\b)"),
    shape("a Pulumi token", r"(?-u:\b)pul-[a-f0-9]{40}(?-u:\b)"),
    shape("a Grafana token", r"(?-u:\b)(?:glc_[A-Za-z0-9+/]{32,}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,}={0,3})"),
    shape("a New Relic key", r"(?-u:\b)NR(?:AK|II|JS|RA)-[A-Za-z0-9-]{19,32}(?-u:\b)"),
    shape("a Sentry token", r"(?-u:\b)sntry[su]_[A-Za-z0-9+/=_-]{40,}"),
    shape("a HashiCorp Vault token", r"(?-u:\b)hv[sbr]\.[A-Za-z0-9_-]{24,}"),
    shape("a Terraform Cloud token", r"(?-u:\b)[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"),
    named("an Okta token", r"(?-u:\b)00[A-Za-z0-9_=-]{40}(?-u:\b)", &["okta"]),
    named("a Datadog key", r"(?-u:\b)[a-z0-9]{40}(?-u:\b)", &["datadog", "dd_api_key", "dd_app_key"]),
    named("a Cloudflare key", r"(?-u:\b)[A-Za-z0-9_-]{40}(?-u:\b)", &["cloudflare"]),
    shape("an Alibaba Cloud key", r"(?-u:\b)LTAI[A-Za-z0-9]{20}(?-u:\b)"),
    shape("a Facebook token", r"(?-u:\b)EAA[MC][A-Za-z0-9]{100,}"),
    shape("an age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    shape("an Azure storage key", r"AccountKey=[A-Za-z0-9+/]{40,}={0,2}"),
    shape("an Azure AD client secret", r"(?-u:\b)[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"),
];

/// Published values that stand for no one's secret: AWS's documented key ids and keys end in
/// EXAMPLE, and the Azure storage emulator's key is in Microsoft's documentation.
const PUBLISHED: &[&str] = &[
    "EXAMPLE",
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
];

/// The lines before a line where a provider's name still counts as near it.
pub(crate) const NEAR_LINES: usize = 3;

/// Compiled once: a review reads every line of a change, and a history holds thousands.
static SCANNER: LazyLock<Scanner> = LazyLock::new(Scanner::new);

struct Scanner {
    /// All of them at once: most lines hold none, and one pass tells.
    any: RegexSet,
    formats: Vec<(&'static Format, Regex)>,
    /// A value after a secret-looking name, quoted or not (`password: x`, `API_KEY=x`).
    assignment: Regex,
    /// A PEM block's first and last lines.
    pem_begin: Regex,
    pem_end: Regex,
    /// A private key written on one line (`"-----BEGIN…\nMIIE…\n-----END…"`), to its end.
    pem_inline: Regex,
    /// Runs that may be base64 of something (20 characters or more), and percent-escapes.
    base64_run: Regex,
    percent: Regex,
}

impl Scanner {
    fn new() -> Scanner {
        let compile = |pattern: &str| Regex::new(pattern).expect("a valid pattern");
        let formats: Vec<(&'static Format, Regex)> = FORMATS
            .iter()
            .map(|format| (format, compile(format.pattern)))
            .collect();
        let assignment = compile(
            r#"(?i)(?-u:\b)[\w.-]*(?:password|passwd|secret|token|api_?key|private_?key|access_?key|credential|auth_?token|_auth)[\w.-]*\\?["']?\s*[:=]\s*(?:\\?["'])?([^"'\s,;)\\]{12,})"#,
        );
        let any = RegexSet::new(
            formats
                .iter()
                .map(|(_, pattern)| pattern.as_str())
                .chain([assignment.as_str()]),
        )
        .expect("valid patterns");
        Scanner {
            any,
            formats,
            assignment,
            pem_begin: compile(r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----"),
            pem_end: compile(r"-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----"),
            pem_inline: compile(
                r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|.*)",
            ),
            base64_run: compile(r"[A-Za-z0-9+/_-]{20,}={0,2}"),
            percent: compile(r"%[0-9A-Fa-f]{2}"),
        }
    }

    /// What secret `line` holds as written, if any; `near` is the text around it.
    fn found_as_is(&self, line: &str, near: &str) -> Option<&'static str> {
        if !self.any.is_match(line) {
            return None;
        }
        let near = near.to_ascii_lowercase();
        for (format, pattern) in &self.formats {
            let close = format.near.is_empty() || format.near.iter().any(|w| near.contains(w));
            if close
                && pattern
                    .captures_iter(line)
                    .any(|c| counts(format, secret_of(&c)))
            {
                return Some(format.what);
            }
        }
        self.assignment
            .captures(line)
            .and_then(|c| c.get(1))
            .filter(|value| looks_random(value.as_str()))
            .map(|_| "a high-entropy value assigned to a secret-looking name")
    }

    /// The texts a line's encoded values decode to: each base64 run that is text, and the line
    /// URL-decoded when it holds percent-escapes.
    fn decoded(&self, line: &str) -> Vec<(std::ops::Range<usize>, String)> {
        let mut decoded = Vec::new();
        for run in self.base64_run.find_iter(line) {
            let text = run.as_str().trim_end_matches('=');
            let engines = [
                base64::engine::general_purpose::STANDARD_NO_PAD,
                base64::engine::general_purpose::URL_SAFE_NO_PAD,
            ];
            let plain = engines
                .iter()
                .find_map(|engine| engine.decode(text).ok())
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .filter(|plain| plain.chars().all(|c| !c.is_control() || c == '\n'));
            if let Some(plain) = plain {
                decoded.push((run.range(), plain));
            }
        }
        // A JSON string's escaped slashes (`hooks.slack.com\/services\/...`).
        if line.contains("\\/") {
            decoded.push((0..line.len(), line.replace("\\/", "/")));
        }
        if self.percent.is_match(line) {
            let bytes = percent_decoded(line);
            if let Ok(plain) = String::from_utf8(bytes) {
                decoded.push((0..line.len(), plain));
            }
        }
        decoded
    }
}

/// What secret `line` holds, if any, as written or once decoded: a known format's name, or an
/// assignment's. `before` are the lines just before it (a provider's name there counts).
pub(crate) fn found(line: &str, before: &[&str]) -> Option<&'static str> {
    let scanner = &*SCANNER;
    let near = near_text(line, before);
    scanner.found_as_is(line, &near).or_else(|| {
        scanner
            .decoded(line)
            .into_iter()
            .find_map(|(_, plain)| scanner.found_as_is(&plain, &format!("{near}\n{plain}")))
    })
}

/// The line and the `NEAR_LINES` lines before it, where a provider's name counts.
fn near_text(line: &str, before: &[&str]) -> String {
    let from = before.len().saturating_sub(NEAR_LINES);
    let mut near = before[from..].join("\n");
    near.push('\n');
    near.push_str(line);
    near
}

/// Whether the line opens a private key's block, or closes one.
pub(crate) fn opens_key(line: &str) -> bool {
    SCANNER.pem_begin.is_match(line)
}

pub(crate) fn closes_key(line: &str) -> bool {
    SCANNER.pem_end.is_match(line)
}

/// `text` with every secret it holds replaced by the stand-in: what a snippet of a change shows.
/// A private key's body lines (between its BEGIN and END lines, or lines that look like one) go
/// whole; an encoded value that decodes to a secret goes whole.
pub(crate) fn redact(text: &str) -> String {
    let scanner = &*SCANNER;
    // One pass over the whole text first: most hold nothing a line needs looking at for.
    let keys = text.contains("-----BEGIN ");
    let scan = scanner.any.is_match(text) || may_be_encoded(text);
    let mut out = String::with_capacity(text.len());
    let mut in_key = false;
    let mut before: Vec<&str> = Vec::new();
    for line in text.split_inclusive('\n') {
        let ending = if line.ends_with('\n') { "\n" } else { "" };
        let body = line.strip_suffix('\n').unwrap_or(line);
        // A key's line (inside its block, or one that looks like it) goes whole, its diff
        // mark kept.
        let whole_line = if in_key {
            in_key = !scanner.pem_end.is_match(body);
            true
        } else {
            if keys && scanner.pem_begin.is_match(body) {
                in_key = !scanner.pem_end.is_match(body);
            }
            looks_like_key_body(body)
        };
        if whole_line {
            let mark: String = body
                .chars()
                .take(1)
                .filter(|c| matches!(c, '+' | '-' | ' '))
                .collect();
            out.push_str(&format!("{mark}{WITHHELD}{ending}"));
        } else if scan && (scanner.any.is_match(body) || may_be_encoded(body)) {
            out.push_str(&redact_line(body, &near_text(body, &before)));
            out.push_str(ending);
        } else {
            out.push_str(line);
        }
        before.push(body);
    }
    out
}

/// Whether `text` may hold an encoded value worth decoding (see `Scanner::decoded`).
fn may_be_encoded(text: &str) -> bool {
    let scanner = &*SCANNER;
    scanner.base64_run.is_match(text) || scanner.percent.is_match(text) || text.contains("\\/")
}

/// One line with its secrets replaced; `near` the text around it.
fn redact_line(line: &str, near: &str) -> String {
    let scanner = &*SCANNER;
    let lowered = near.to_ascii_lowercase();
    let mut redacted = line.to_string();
    if scanner.any.is_match(line) {
        redacted = scanner
            .pem_inline
            .replace_all(&redacted, WITHHELD)
            .into_owned();
        for (format, pattern) in &scanner.formats {
            let close = format.near.is_empty() || format.near.iter().any(|w| lowered.contains(w));
            if !close {
                continue;
            }
            redacted = pattern
                .replace_all(&redacted, |found: &regex::Captures| {
                    let secret = secret_of(found);
                    match counts(format, secret) {
                        // What the format matched around the secret (`Bearer `) stays.
                        true => found[0].replacen(secret, WITHHELD, 1),
                        false => found[0].to_string(),
                    }
                })
                .into_owned();
        }
        let values: Vec<String> = scanner
            .assignment
            .captures_iter(&redacted)
            .filter_map(|c| c.get(1))
            .map(|value| value.as_str().to_string())
            .filter(|value| looks_random(value))
            .collect();
        for value in values {
            redacted = redacted.replace(&value, WITHHELD);
        }
    }
    // Encoded values that hide one go whole (the line URL-decoded: the whole line).
    for (range, plain) in scanner.decoded(&redacted) {
        if scanner
            .found_as_is(&plain, &format!("{near}\n{plain}"))
            .is_some()
        {
            return match range == (0..redacted.len()) {
                true => WITHHELD.to_string(),
                false => format!(
                    "{}{WITHHELD}{}",
                    &redacted[..range.start],
                    redact_line(&redacted[range.end..], near)
                ),
            };
        }
    }
    redacted
}

fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escaped = (bytes[at] == b'%')
            .then(|| bytes.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                at += 3;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    out
}

/// Whether a line (a diff's mark, quotes and a `\n` around it allowed) is base64 of random
/// bytes, as a PEM block's body lines are: such a line is withheld wherever it is shown, since
/// the block's BEGIN line may lie outside what is shown.
pub(crate) fn looks_like_key_body(line: &str) -> bool {
    let body = line
        .trim_start_matches(['+', '-'])
        .trim()
        .trim_matches(['"', '\'', ',', ';'])
        .trim_end_matches("\\n")
        .trim_matches(['"', '\'']);
    body.len() >= 40
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
        && body.bytes().any(|b| b.is_ascii_uppercase())
        && body.bytes().any(|b| b.is_ascii_lowercase())
        && body.bytes().any(|b| b.is_ascii_digit())
        && entropy(body) >= 4.5
}

/// What a format's match holds as the secret: its first group where it has one (the token after
/// `Bearer `), else all of it.
fn secret_of<'a>(found: &regex::Captures<'a>) -> &'a str {
    found
        .get(1)
        .unwrap_or_else(|| found.get(0).expect("a match"))
        .as_str()
}

/// Whether what `format` matched is a secret: not a published stand-in nor all one character
/// (`AKIAXXXXXXXXXXXXXXXX`), and, for a format that needs its provider's name, random too.
fn counts(format: &Format, found: &str) -> bool {
    let shaped =
        || !PUBLISHED.iter().any(|published| found.contains(published)) && entropy(found) >= 2.0;
    match format.check {
        Check::Shape => shaped(),
        Check::Random => shaped() && random(found),
        Check::Structure => {
            !found.is_empty() && !placeholder(found) && !found.starts_with(['$', '%'])
        }
        Check::Password => {
            let kinds = [
                found.bytes().any(|b| b.is_ascii_alphabetic()),
                found.bytes().any(|b| b.is_ascii_digit()),
                found.bytes().any(|b| !b.is_ascii_alphanumeric()),
            ];
            kinds.iter().filter(|kind| **kind).count() >= 2
                && !placeholder(found)
                && !found.contains(['(', '[', '{', '.'])
        }
    }
}

/// Whether a value a rule that needs its provider's name matched is random enough to be a key:
/// letters and digits, hex (dashes aside) or of both cases, and not a placeholder (`…EXAMPLE…`).
fn random(value: &str) -> bool {
    let hex = value.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    let both_cases = value.bytes().any(|b| b.is_ascii_uppercase())
        && value.bytes().any(|b| b.is_ascii_lowercase());
    value.bytes().any(|b| b.is_ascii_digit())
        && (hex || both_cases)
        && entropy(value) >= 3.0
        && !placeholder(value)
}

/// Whether an assigned value looks like a secret rather than a setting: long, random (by its
/// entropy), of three kinds of characters or more (or, at 20 characters and more random still,
/// letters and digits alone: a hex or base-32 key), and neither a placeholder, a URL, a path
/// nor an identifier (`password_confirmation`, `X-Api-Key-Version2`).
fn looks_random(value: &str) -> bool {
    let kinds = [
        value.chars().any(|c| c.is_ascii_lowercase()),
        value.chars().any(|c| c.is_ascii_uppercase()),
        value.chars().any(|c| c.is_ascii_digit()),
        value.chars().any(|c| !c.is_ascii_alphanumeric()),
    ];
    // Words, each maybe numbered, or numbers (`service-account-01`, `v2.3.1`).
    let identifier = value.split(['-', '_', '.']).count() > 1
        && value.chars().any(|c| c.is_ascii_alphabetic())
        && value.split(['-', '_', '.']).all(|part| {
            let letters = part.trim_end_matches(|c: char| c.is_ascii_digit());
            !part.is_empty() && letters.chars().all(|c| c.is_ascii_alphabetic())
        });
    let kinds = kinds.iter().filter(|k| **k).count();
    let random = match kinds {
        3.. => entropy(value) >= 3.5,
        _ => letters_and_digits_at_random(value),
    };
    random
        && !placeholder(value)
        && !identifier
        && !value.contains("://")
        && !value.starts_with(['/', '.', '$', '%'])
}

/// Whether a value of letters and digits alone is a key rather than words and numbers: hex of
/// 24 digits or more (`a8f5f167…`), or 20 characters or more with digits throughout, never
/// five letters in a row (`kq3v9x2m…`, not `production2024release`).
fn letters_and_digits_at_random(value: &str) -> bool {
    if !value.chars().all(|c| c.is_ascii_alphanumeric()) {
        return false;
    }
    let digits = value.chars().filter(char::is_ascii_digit).count();
    let hex = value.chars().all(|c| c.is_ascii_hexdigit());
    let longest_word = value
        .split(|c: char| c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    (hex && value.len() >= 24 && digits > 0 && digits < value.len() && entropy(value) >= 3.0)
        || (value.len() >= 20 && digits >= 3 && longest_word < 5 && entropy(value) >= 3.7)
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
        "password",
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

#[cfg(test)]
mod tests {
    use super::*;

    /// (what it is, a line, the lines before it).
    type Sample = (&'static str, String, Vec<&'static str>);

    const HEX32: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
    const MIXED: &str = "Q7v2Xk9Lp4Zr8Tw1Mb6N";

    fn hex64() -> String {
        format!("{HEX32}{}", "a1b2c3d4e5f60718293a4b5c6d7e8f90")
    }

    /// `n` letters and digits.
    fn long(n: usize) -> String {
        "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9"
            .chars()
            .cycle()
            .take(n)
            .collect()
    }

    fn join(parts: &[&str]) -> String {
        parts.concat()
    }

    /// A sample of each format, made up (after gitleaks' own fixtures' shapes), put together
    /// here so that this file holds no token whole.
    fn samples() -> Vec<Sample> {
        let mut samples = first_samples();
        samples.extend(structural_samples());
        samples.extend(more_samples());
        samples
    }

    fn first_samples() -> Vec<Sample> {
        let (hex32, mixed) = (HEX32, MIXED);
        vec![
            (
                "a private key",
                join(&["-----BEGIN OPENSSH ", "PRIVATE KEY-----"]),
                vec![],
            ),
            (
                "an AWS access key",
                join(&["AKIA", "QX4RZ7TB2MLK5WNP"]),
                vec![],
            ),
            (
                "an AWS secret key",
                format!(
                    "    \"{}\",",
                    join(&["wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYzzQkey1234"])
                ),
                vec!["[profile prod]", "aws_secret_access_key = <<EOF"],
            ),
            ("a GitHub token", join(&["ghp_", &long(36)]), vec![]),
            (
                "a GitLab token",
                join(&["glpat-", "x8Yz3KqLm9Pw2Rt5Vb7N"]),
                vec![],
            ),
            (
                "a Slack token",
                join(&["xoxb-", "1234567890-1234567890123-", mixed]),
                vec![],
            ),
            (
                "a Slack webhook",
                join(&[
                    "https://hooks.slack.com/services/",
                    "T024BE7LD/B01ABCDE2FG/",
                    &long(24),
                ]),
                vec![],
            ),
            (
                "a Discord webhook",
                join(&[
                    "https://discord.com/api/webhooks/",
                    "123456789012345678/",
                    &long(68),
                ]),
                vec![],
            ),
            (
                "a Microsoft Teams webhook",
                join(&[
                    "https://acme.webhook.office.com/webhookb2/",
                    "01234567-89ab-cdef-0123-456789abcdef@01234567-89ab-cdef-0123-456789abcdef",
                    "/IncomingWebhook/",
                    hex32,
                    "/01234567-89ab-cdef-0123-456789abcdef",
                ]),
                vec![],
            ),
            ("a Twilio API key", join(&["SK", hex32]), vec![]),
            (
                "a Twilio auth token",
                format!("auth = \"{hex32}\""),
                vec!["client = twilio.rest.Client(sid,"],
            ),
            (
                "a Telegram bot token",
                join(&["TELEGRAM_BOT = \"123456789:AA", &long(33), "\""]),
                vec![],
            ),
            (
                "a Google OAuth client secret",
                join(&["GOCSPX-", &long(28)]),
                vec![],
            ),
        ]
    }

    /// Secrets known by the words around them, and a few formats more.
    /// Long: a table of sample secrets, an entry or two per kind.
    fn structural_samples() -> Vec<Sample> {
        let (hex32, hex64) = (HEX32, hex64());
        vec![
            (
                "a basic-auth header",
                "{\"Authorization\": \"Basic YWRtaW46cHc=\"}".into(),
                vec![],
            ),
            (
                "a password given to curl",
                "curl -s -u admin:pw https://api.internal/".into(),
                vec![],
            ),
            (
                "a password given to curl",
                "curl -u admin:pw https://api.internal/".into(),
                vec![],
            ),
            (
                "a password in markup",
                "<password>Ws6yH3jK8nPq</password>".into(),
                vec![],
            ),
            (
                "a password assigned",
                "    pw = \"x\"; db_password = \"Ya2mlPassw0rd\"".into(),
                vec![],
            ),
            (
                "a password assigned",
                "export DB_PASS=Sup3r!pw".into(),
                vec![],
            ),
            ("a Stripe key", join(&["sk_live_", &long(24)]), vec![]),
            (
                "an OpenAI or Anthropic key",
                join(&["sk-proj-", &long(48)]),
                vec![],
            ),
            ("a Perplexity key", join(&["pplx-", &long(48)]), vec![]),
            ("a Google API key", join(&["AIza", "Sy", &long(33)]), vec![]),
            (
                "a Google service account's key",
                format!("\"private_key_id\": \"{}\",", &hex64[..40]),
                vec![],
            ),
            (
                "a JSON web token",
                join(&[
                    "eyJhbGciOiJIUzI1NiJ9",
                    ".eyJzdWIiOiIxMjM0NTY3ODkwIn0",
                    ".dozjgNryP4J3jVmNHl0w5N",
                ]),
                vec![],
            ),
            (
                "a password in a URL",
                join(&["postgres://admin:", "S3cretPass", "@db.internal/app"]),
                vec![],
            ),
            (
                "a password in a URL",
                join(&["redis://:", "Sup3rS3cr3tPw", "@cache:6379/0"]),
                vec![],
            ),
            (
                "a bearer token",
                format!("curl -H 'Authorization: Bearer {hex32}' https://api.internal/v1"),
                vec![],
            ),
            (
                "a password after its name",
                format!("machine api.internal login ci password {hex32}"),
                vec![],
            ),
            (
                "a SendGrid key",
                join(&["SG.", &long(22), ".", &long(43)]),
                vec![],
            ),
            (
                "a Brevo key",
                join(&["xkeysib-", &hex64, "-", &long(16)]),
                vec![],
            ),
            ("a Mailgun key", join(&["key-", hex32]), vec![]),
            ("a Mailchimp key", join(&[hex32, "-us21"]), vec![]),
            ("an npm token", join(&["npm_", &long(36)]), vec![]),
        ]
    }

    /// Long: a table of sample secrets, an entry or two per kind.
    fn more_samples() -> Vec<Sample> {
        let (hex32, hex64) = (HEX32, hex64());
        vec![
            (
                "a PyPI token",
                join(&["pypi-", "AgEIcHlwaS5vcmc", &long(60)]),
                vec![],
            ),
            ("a RubyGems key", join(&["rubygems_", &hex64[..48]]), vec![]),
            (
                "a Docker Hub token",
                join(&["dckr_pat_", &long(27)]),
                vec![],
            ),
            ("a JFrog key", join(&["AKCp", &long(69)]), vec![]),
            ("a Hugging Face token", join(&["hf_", &long(34)]), vec![]),
            ("a Shopify token", join(&["shpat_", hex32]), vec![]),
            ("a Square token", join(&["sq0atp-", &long(22)]), vec![]),
            ("a Heroku key", join(&["HRKU-AA", &long(58)]), vec![]),
            (
                "a Heroku key",
                "HEROKU_API_KEY=01234567-89ab-cdef-0123-456789abcdef".into(),
                vec![],
            ),
            ("a DigitalOcean token", join(&["dop_v1_", &hex64]), vec![]),
            ("a Doppler token", join(&["dp.pt.", &long(43)]), vec![]),
            ("a Databricks token", join(&["dapi", hex32]), vec![]),
            ("an Atlassian token", join(&["ATATT3", &long(186)]), vec![]),
            ("a Linear key", join(&["lin_api_", &long(40)]), vec![]),
            (
                "a Postman key",
                join(&["PMAK-", &hex32[..24], "-", &hex64[..34]]),
                vec![],
            ),
            ("a Pulumi token", join(&["pul-", &hex64[..40]]), vec![]),
            (
                "a Grafana token",
                join(&["glsa_", &long(32), "_", &hex32[..8]]),
                vec![],
            ),
            ("a New Relic key", join(&["NRAK-", &long(27)]), vec![]),
            ("a Sentry token", join(&["sntryu_", &hex64]), vec![]),
            (
                "a HashiCorp Vault token",
                join(&["hvs.", &long(90)]),
                vec![],
            ),
            (
                "a Terraform Cloud token",
                join(&[&long(14), ".atlasv1.", &long(64)]),
                vec![],
            ),
            (
                "an Okta token",
                format!("token = \"00{}\"", long(40)),
                vec!["OKTA_ORG = 'acme'"],
            ),
            (
                "a Datadog key",
                format!("DD_APP_KEY = \"{}\"", &hex64[..40]),
                vec![],
            ),
            (
                "a Cloudflare key",
                format!("key = \"{}\"", long(40)),
                vec!["# cloudflare"],
            ),
            ("an Alibaba Cloud key", join(&["LTAI", &long(20)]), vec![]),
            ("a Facebook token", join(&["EAAM", &long(108)]), vec![]),
            (
                "an age secret key",
                join(&[
                    "AGE-SECRET-KEY-1",
                    &"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".repeat(2)[..58],
                ]),
                vec![],
            ),
            (
                "an Azure storage key",
                join(&["AccountKey=", &long(86), "=="]),
                vec![],
            ),
            (
                "an Azure AD client secret",
                join(&["client_secret: ab18Q~", &long(34)]),
                vec![],
            ),
        ]
    }

    #[test]
    fn every_format_finds_its_sample_and_withholds_it() {
        let samples = samples();
        for format in FORMATS {
            assert!(
                samples.iter().any(|(what, _, _)| *what == format.what),
                "no sample of {}",
                format.what
            );
        }
        for (what, line, before) in &samples {
            assert_eq!(found(line, before), Some(*what), "{line}");
            let text = format!("{}\n{line}\n", before.join("\n"));
            assert!(
                redact(&text).lines().last().unwrap().contains(WITHHELD),
                "{what}: {}",
                redact(&text)
            );
        }
    }

    #[test]
    fn keys_of_random_characters_need_their_providers_name_near() {
        let aws = "    \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzQkey1234\",";
        assert_eq!(found(aws, &[]), None);
        // Too far above.
        assert_eq!(
            found(aws, &["aws_secret_access_key = <<EOF", "a", "b", "c"]),
            None
        );
        assert_eq!(
            found("sha = \"0f1e2d3c4b5a69788796a5b4c3d2e1f0\"", &[]),
            None
        );
        // Published stand-ins and one character over and over are no one's.
        assert_eq!(found("AKIAIOSFODNN7EXAMPLE", &[]), None);
        assert_eq!(found("AKIAXXXXXXXXXXXXXXXX", &[]), None);
    }

    #[test]
    fn escaped_and_bare_shapes_of_config_files_are_found() {
        let webhook = [
            "https:\\/\\/hooks.slack.com\\/services\\/",
            "T024BE7LD\\/B01ABCDE2FG\\/aB3dE5gH7jK9mN1pQ3sT5vW7",
        ]
        .concat();
        let json = format!("{{\"url\": \"{webhook}\"}}");
        assert_eq!(found(&json, &[]), Some("a Slack webhook"));
        assert_eq!(redact(&json), "[withheld]");
        assert_eq!(
            found(
                "//registry.npmjs.org/:_auth=Y2k6UTd2MlhrOUxwNFpyOFR3MU1iNk4=",
                &[]
            ),
            Some("a high-entropy value assigned to a secret-looking name")
        );
        // Code that handles a password holds none.
        for code in [
            "password = request.form[\"password\"]",
            "user.set_password(\"password123\")",
            "DB_PASS=${DB_PASS}",
            "password: str = field(default=\"\")",
            "<password>${PASSWORD}</password>",
            "curl -u \"$USER:$PASS\" https://x",
            "curl --user=ci:$CI_PASS https://x",
        ] {
            assert_eq!(found(code, &[]), None, "{code}");
        }
        // The word `bearer` and a short or plain value are not a token.
        assert_eq!(found("the bearer token is sent in a header", &[]), None);
        assert_eq!(found("password required to continue", &[]), None);
    }

    #[test]
    fn encoded_secrets_are_found_once_decoded_and_withheld_whole() {
        use base64::engine::general_purpose::STANDARD;
        let token = ["ghp_", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9aB3dE5gH7j"].concat();
        let encoded = format!("data = \"{}\"", STANDARD.encode(format!("ci:{token}")));
        assert_eq!(found(&encoded, &[]), Some("a GitHub token"));
        assert_eq!(redact(&encoded), "data = \"[withheld]\"");
        let escaped = format!("url = \"https://x/?t={}\"", token.replace('_', "%5F"));
        assert_eq!(found(&escaped, &[]), Some("a GitHub token"));
        assert!(
            !redact(&escaped).contains(&token[4..]),
            "{}",
            redact(&escaped)
        );
        // Base64 of nothing secret is left as it is.
        let plain = format!(
            "logo = \"{}\"",
            STANDARD.encode("just an ordinary sentence here")
        );
        assert_eq!(found(&plain, &[]), None);
        assert_eq!(redact(&plain), plain);
    }
}
