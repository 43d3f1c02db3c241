//! HTTP for the clients of remote APIs (GitHub's now; the model providers' next): one ureq agent
//! with timeouts, bounded retries with backoff on network failures and server errors, and waits
//! for rate limits (`retry-after`, `x-ratelimit-remaining` and `-reset`), up to a cap. Every
//! answer the server gave comes back to the caller, which knows what its statuses mean; only
//! what never got one, or a rate limit that would not lift in time, is an error here. Headers
//! (a token among them) are never logged; a URL is shown without its `user:password@`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Attempts for one request when the network or the server fails.
const ATTEMPTS: u32 = 3;
/// Rate limits waited out for one request at most, before giving up with the time to retry.
const RATE_LIMIT_WAITS: u32 = 2;
/// The longest body read.
const MAX_BODY: u64 = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Patch,
}

/// One request. Retried on a network failure or a server error only when `retry` is set: a
/// request that creates something (a pull request) may have been carried out unanswered.
pub(crate) struct Request<'a> {
    pub method: Method,
    pub url: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    /// A JSON body.
    pub body: Option<&'a str>,
    pub retry: bool,
    /// Server errors this picks out are answers, returned without a retry (a model server
    /// refusing the tools a request offered).
    pub final_error: Option<fn(&Response) -> bool>,
    /// What the request is for, in messages: "issue acme/shop#42".
    pub what: &'a str,
}

/// What the server answered.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    /// The headers, names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    /// The value of header `name` (lowercase).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// What kept a request from an answer the caller can use.
#[derive(Debug)]
pub(crate) enum HttpError {
    /// No answer (connection refused, timeout, TLS): a request sent without `retry` may or may
    /// not have been carried out.
    Unreachable(String),
    /// Still rate limited after the waits allowed: the limit lifts in `wait`.
    RateLimited { wait: Duration, response: Response },
}

/// An HTTP client for one API: its name (in messages), timeouts and rate-limit cap.
pub(crate) struct Client {
    agent: ureq::Agent,
    name: &'static str,
    max_rate_limit_wait: Duration,
}

impl Client {
    /// A client named `name` in messages ("github"), whose requests take at most `timeout`
    /// each, and which waits out a rate limit only when it lifts within `max_rate_limit_wait`.
    pub(crate) fn new(
        name: &'static str,
        timeout: Duration,
        max_rate_limit_wait: Duration,
    ) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(timeout))
            .user_agent(format!("autocoder/{}", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Client {
            agent,
            name,
            max_rate_limit_wait,
        }
    }

    /// Sends `request`, retrying and waiting as the module says; returns the first answer that
    /// is neither a server error (when retried) nor a rate limit.
    pub(crate) fn send(&self, request: &Request) -> Result<Response, HttpError> {
        let shown = without_userinfo(request.url);
        crate::log::note(
            self.name,
            &format!("{:?} {shown} ({})", request.method, request.what),
        );
        let mut attempt = 0;
        let mut rate_waits = 0;
        loop {
            attempt += 1;
            let response = match self.send_once(request) {
                Ok(response) => response,
                Err(err) if request.retry && attempt < ATTEMPTS => {
                    crate::log::note(self.name, &format!("{}: {err}; retrying", request.what));
                    std::thread::sleep(backoff(attempt));
                    continue;
                }
                Err(err) => return Err(HttpError::Unreachable(err.to_string())),
            };
            if let Some(wait) = rate_limit_wait(&response) {
                if wait > self.max_rate_limit_wait || rate_waits >= RATE_LIMIT_WAITS {
                    return Err(HttpError::RateLimited { wait, response });
                }
                rate_waits += 1;
                crate::log::warn(
                    self.name,
                    &format!("rate limited; waiting {} s", wait.as_secs().max(1)),
                );
                std::thread::sleep(wait);
                attempt = 0;
                continue;
            }
            let retried = request.retry && !request.final_error.is_some_and(|f| f(&response));
            if response.status >= 500 && retried && attempt < ATTEMPTS {
                std::thread::sleep(backoff(attempt));
                continue;
            }
            return Ok(response);
        }
    }

    fn send_once(&self, request: &Request) -> Result<Response, ureq::Error> {
        macro_rules! with_headers {
            ($builder:expr) => {{
                let mut builder = $builder;
                for (name, value) in request.headers {
                    builder = builder.header(*name, *value);
                }
                builder
            }};
        }
        let body = request.body.unwrap_or_default();
        let mut response = match request.method {
            Method::Get => with_headers!(self.agent.get(request.url)).call()?,
            Method::Post => with_headers!(self.agent.post(request.url))
                .header("Content-Type", "application/json")
                .send(body)?,
            Method::Patch => with_headers!(self.agent.patch(request.url))
                .header("Content-Type", "application/json")
                .send(body)?,
        };
        let headers = response
            .headers()
            .iter()
            .filter_map(|(name, value)| {
                Some((
                    name.as_str().to_ascii_lowercase(),
                    value.to_str().ok()?.to_string(),
                ))
            })
            .collect();
        // A body cut off (the connection closed mid-answer) is a failure to retry, never an
        // empty answer.
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_string()?;
        Ok(Response {
            status: response.status().as_u16(),
            headers,
            body,
        })
    }
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(250 << attempt.min(4))
}

/// How long to wait before retrying, when `response` is a rate limit: a 429 or 403 that says
/// when to (`retry-after`, or no requests remaining until `x-ratelimit-reset`), or GitHub's
/// "secondary rate limit", which says nothing of when. None for any other answer (a 429 for a
/// spent quota is no wait).
fn rate_limit_wait(response: &Response) -> Option<Duration> {
    if !matches!(response.status, 403 | 429) {
        return None;
    }
    if let Some(seconds) = response
        .header("retry-after")
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return Some(Duration::from_secs(seconds));
    }
    if response.header("x-ratelimit-remaining").map(str::trim) == Some("0") {
        if let Some(reset) = response
            .header("x-ratelimit-reset")
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            return Some(Duration::from_secs(reset.saturating_sub(now()) + 1));
        }
    }
    response
        .body
        .to_ascii_lowercase()
        .contains("secondary rate limit")
        .then_some(Duration::from_secs(60))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The UTC time of day `wait` from now, for "retry after 14:05:09 UTC".
pub(crate) fn clock_time_in(wait: Duration) -> String {
    let day = (now() + wait.as_secs()) % 86_400;
    format!(
        "{:02}:{:02}:{:02} UTC",
        day / 3600,
        day % 3600 / 60,
        day % 60
    )
}

/// `scheme://host[:port]` of a URL, lowercased: what a token is given to.
pub(crate) fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    Some(format!("{scheme}://{host}").to_ascii_lowercase())
}

/// `url` without a `user:password@` part, for showing.
pub(crate) fn without_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host_end = rest.find('/').unwrap_or(rest.len());
            match rest[..host_end].rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://{host}{}", &rest[host_end..]),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
            body: body.to_string(),
        }
    }

    #[test]
    fn rate_limits_are_told_from_refusals() {
        let wait = |status, headers: &[(&str, &str)], body| {
            rate_limit_wait(&answer(status, headers, body))
        };
        assert_eq!(
            wait(403, &[("retry-after", "3")], ""),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            wait(
                403,
                &[("x-ratelimit-remaining", "5"), ("x-ratelimit-reset", "0")],
                "Resource not accessible"
            ),
            None
        );
        assert_eq!(
            wait(403, &[], "You have exceeded a secondary rate limit"),
            Some(Duration::from_secs(60))
        );
        assert_eq!(wait(429, &[], "You exceeded your current quota"), None);
        assert_eq!(wait(500, &[("retry-after", "3")], ""), None);
        let soon = (now() + 10).to_string();
        let limited = wait(
            403,
            &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", &soon)],
            "",
        )
        .unwrap();
        assert!(limited >= Duration::from_secs(9) && limited <= Duration::from_secs(12));
    }

    #[test]
    fn credentials_in_urls_are_not_shown() {
        assert_eq!(
            without_userinfo("http://x-access-token:ghp_SECRET@127.0.0.1:9/api/v3/x"),
            "http://127.0.0.1:9/api/v3/x"
        );
        assert_eq!(
            without_userinfo("https://api.github.com/repos/a/b"),
            "https://api.github.com/repos/a/b"
        );
    }

    #[test]
    fn origins() {
        let api = origin("https://api.github.com");
        assert_eq!(api.as_deref(), Some("https://api.github.com"));
        assert_eq!(origin("HTTPS://API.github.com/repos/x?page=2#y"), api);
        assert_eq!(origin("https://user:pw@api.github.com/x"), api);
        for other in [
            "http://api.github.com/x",
            "https://api.github.com:8443/x",
            "https://api.github.com.evil.example/x",
            "https://evil.example/api.github.com",
        ] {
            assert_ne!(origin(other), api, "{other}");
        }
        assert_eq!(origin("/relative?page=2"), None);
    }
}
