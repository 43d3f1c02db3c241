//! A small GitHub REST client: the issue and all its comments (following `Link` pages), the
//! repository, and pull requests, with the headers GitHub asks for, over `http::Client` (timeouts,
//! retries, rate limits waited out up to a minute; beyond it the error says when to retry). The
//! token is sent as a header only; it never appears in a URL, a message or the output.

use std::time::Duration;

use serde_json::Value;

use crate::error::Failure;
use crate::http::{self, origin, without_userinfo, HttpError, Method, Request};

/// The longest wait for a rate limit to lift before giving up with the time to retry.
const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);

pub(crate) struct GitHub {
    http: http::Client,
    api: String,
    token: Option<String>,
}

/// An API base URL: http or https, with a host and no credentials (`--api-url`'s and
/// `GITHUB_API_URL`'s rule).
pub(crate) fn api_url(text: &str) -> Result<String, String> {
    let host = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .unwrap_or_default();
    if host
        .split('/')
        .next()
        .is_some_and(|authority| authority.contains('@'))
    {
        return Err(
            "the URL holds credentials; give the token in GITHUB_TOKEN or GH_TOKEN instead".into(),
        );
    }
    if host.is_empty() || host.starts_with('/') {
        return Err(format!(
            "`{text}` is not an http(s) URL, e.g. https://github.example.com/api/v3"
        ));
    }
    Ok(text.to_string())
}

/// The API to call and the token it may be given (optional for public repositories).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Api {
    pub url: String,
    pub token: Option<String>,
}

impl Api {
    /// The API `--api-url` names, else the one an issue's address on another host implies
    /// (GitHub Enterprise Server), else `GITHUB_API_URL`, else github.com's.
    ///
    /// `GITHUB_TOKEN` or `GH_TOKEN` goes to github.com's API and to one the user named. An API
    /// only implied by an address gets `GH_ENTERPRISE_TOKEN` or `GITHUB_ENTERPRISE_TOKEN`, as
    /// with gh, and only when `GH_HOST` names its host: an issue's address may come from
    /// anywhere, and must not carry a token off to its host.
    ///
    /// `GITHUB_API_URL` must be an API address as `--api-url` must (no credentials in it).
    pub(crate) fn choose(named: Option<&str>, implied: Option<&str>) -> Result<Api, Failure> {
        if let Ok(url) = std::env::var("GITHUB_API_URL") {
            if !url.trim().is_empty() {
                api_url(&url).map_err(|problem| {
                    let problem = problem.replace(&url, &without_userinfo(&url));
                    Failure::usage(format!("GITHUB_API_URL: {problem}"))
                        .with_hint("set GITHUB_API_URL to the API's address, e.g. https://github.example.com/api/v3")
                })?;
            }
        }
        Ok(Api::choose_with(named, implied, &|name| {
            std::env::var(name).ok()
        }))
    }

    fn choose_with(
        named: Option<&str>,
        implied: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Api {
        let token_from = |names: &[&str]| {
            names
                .iter()
                .find_map(|name| env(name).filter(|t| !t.trim().is_empty()))
        };
        let named_in_env = env("GITHUB_API_URL").filter(|url| !url.trim().is_empty());
        let github_token = || token_from(&["GITHUB_TOKEN", "GH_TOKEN"]);
        let same_api = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
        let (url, token) = match (named, implied) {
            (Some(url), _) => (url.to_string(), github_token()),
            (None, Some(url))
                if named_in_env
                    .as_deref()
                    .is_some_and(|env| same_api(env, url)) =>
            {
                (url.to_string(), github_token())
            }
            (None, Some(url)) => {
                // Only to the host the user named for gh (GH_HOST).
                let trusted = env("GH_HOST").is_some_and(|host| {
                    origin(url) == Some(format!("https://{}", host.trim()).to_ascii_lowercase())
                });
                let token = trusted
                    .then(|| token_from(&["GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"]))
                    .flatten();
                (url.to_string(), token)
            }
            (None, None) => (
                named_in_env.unwrap_or_else(|| super::GITHUB_API.to_string()),
                github_token(),
            ),
        };
        Api { url, token }
    }
}

impl GitHub {
    pub(crate) fn new(api: &Api) -> GitHub {
        GitHub {
            http: http::Client::new("github", Duration::from_secs(60), MAX_RATE_LIMIT_WAIT),
            api: api.url.trim_end_matches('/').to_string(),
            token: api.token.clone(),
        }
    }

    /// `GET /repos/{owner}/{repo}/issues/{number}`.
    pub(crate) fn issue(&self, owner: &str, repo: &str, number: u64) -> Result<Value, Failure> {
        let url = format!("{}/repos/{owner}/{repo}/issues/{number}", self.api);
        let what = format!("issue {owner}/{repo}#{number}");
        self.get(&url, &what).map(|(value, _)| value)
    }

    /// Every comment of an issue, page after page (`Link: <...>; rel="next"`, followed verbatim
    /// while it stays at the API's address: the token goes nowhere else).
    pub(crate) fn comments(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
    ) -> Result<Vec<Value>, Failure> {
        let mut url = Some(format!(
            "{}/repos/{owner}/{repo}/issues/{number}/comments?per_page=100",
            self.api
        ));
        let what = format!("the comments of {owner}/{repo}#{number}");
        let mut comments = Vec::new();
        // A bound on pages, in case a server links pages in a circle.
        for _ in 0..1000 {
            let Some(current) = url.take() else { break };
            let (page, next) = self.get(&current, &what)?;
            match page {
                Value::Array(items) => comments.extend(items),
                _ => {
                    return Err(Failure::external(format!(
                        "GitHub sent something other than a list for {what}"
                    )))
                }
            }
            if let Some(next) = &next {
                if origin(next) != origin(&self.api) {
                    return Err(Failure::external(format!(
                        "the next page of {what} is at another address ({}); not followed, so that the token goes nowhere but the API",
                        without_userinfo(next)
                    ))
                    .with_hint("check the API address (--api-url, GITHUB_API_URL), or pass --no-comments"));
                }
            }
            url = next;
        }
        Ok(comments)
    }

    /// One GET; returns the JSON body and the next page's URL.
    fn get(&self, url: &str, what: &str) -> Result<(Value, Option<String>), Failure> {
        let response = self.send(Method::Get, url, None, what)?;
        if response.status == 422 {
            return Err(Failure::external(format!(
                "GitHub refused {what} (422): {}",
                api_message(&response.body)
            )));
        }
        Ok((response.body, response.next))
    }

    /// `GET /repos/{owner}/{repo}`: for its default branch.
    pub(crate) fn repository(&self, owner: &str, repo: &str) -> Result<Value, Failure> {
        self.get(
            &format!("{}/repos/{owner}/{repo}", self.api),
            &format!("repository {owner}/{repo}"),
        )
        .map(|(value, _)| value)
    }

    /// The open pull request whose head is `owner:branch`, if any.
    pub(crate) fn pull_for_head(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
    ) -> Result<Option<Value>, Failure> {
        let url = format!(
            "{}/repos/{owner}/{repo}/pulls?state=open&head={owner}:{branch}",
            self.api
        );
        let (pulls, _) = self.get(&url, &format!("the pull requests of {owner}/{repo}"))?;
        Ok(pulls.as_array().and_then(|p| p.first()).cloned())
    }

    /// `POST /repos/{owner}/{repo}/pulls`: Ok with 201 and the pull request, or 422 and GitHub's
    /// reasons (one already exists, no commits between the branches, ...). A network failure is
    /// not retried here: the caller must look for the pull request first, or make a second one.
    pub(crate) fn create_pull(
        &self,
        owner: &str,
        repo: &str,
        request: &Value,
    ) -> Result<ApiResponse, Failure> {
        let url = format!("{}/repos/{owner}/{repo}/pulls", self.api);
        self.send(
            Method::Post,
            &url,
            Some(request),
            &format!("a pull request in {owner}/{repo}"),
        )
    }

    /// `PATCH /repos/{owner}/{repo}/pulls/{number}`.
    pub(crate) fn update_pull(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        changes: &Value,
    ) -> Result<Value, Failure> {
        let url = format!("{}/repos/{owner}/{repo}/pulls/{number}", self.api);
        let what = format!("pull request {owner}/{repo}#{number}");
        let response = self.send(Method::Patch, &url, Some(changes), &what)?;
        if response.status == 422 {
            return Err(Failure::external(format!(
                "GitHub refused to update {what}: {}",
                api_message(&response.body)
            )));
        }
        Ok(response.body)
    }

    /// `POST /repos/{owner}/{repo}/pulls/{number}/reviews`: the review, or GitHub's reasons for
    /// refusing it (a comment on a line outside the diff fails the whole review).
    pub(crate) fn create_review(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        review: &Value,
    ) -> Result<Value, Failure> {
        let url = format!("{}/repos/{owner}/{repo}/pulls/{number}/reviews", self.api);
        let what = format!("a review of {owner}/{repo}#{number}");
        let response = self.send(Method::Post, &url, Some(review), &what)?;
        if response.status == 422 {
            return Err(Failure::external(format!(
                "GitHub refused {what}: {}",
                api_message(&response.body)
            )));
        }
        Ok(response.body)
    }

    /// One request (retried unless it is a POST, which may have been carried out unanswered):
    /// 2xx and 422 come back; every other answer is an error that says what to do.
    /// Long: one request and every way it can fail, each with its own message and hint.
    fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        what: &str,
    ) -> Result<ApiResponse, Failure> {
        let token = self.token.as_ref().map(|token| format!("Bearer {token}"));
        let mut headers = vec![
            ("Accept", "application/vnd.github+json"),
            ("X-GitHub-Api-Version", "2022-11-28"),
        ];
        if let Some(token) = &token {
            headers.push(("Authorization", token));
        }
        let json = body.map(Value::to_string);
        let request = Request {
            method,
            url,
            headers: &headers,
            body: json.as_deref(),
            retry: method != Method::Post,
            final_error: None,
            what,
        };
        let response = match self.http.send(&request) {
            Ok(response) => response,
            Err(HttpError::Unreachable(err)) => {
                return Err(Failure::new(
                    crate::error::Kind::External,
                    NetworkError(format!("cannot reach GitHub for {what}: {err}")),
                )
                .with_hint("check the network, or the API address (--api-url, GITHUB_API_URL)"))
            }
            Err(HttpError::RateLimited { wait, response }) => {
                let message = api_message_text(&response.body);
                let retry = http::clock_time_in(wait);
                return Err(Failure::external(format!(
                    "GitHub's rate limit for {what} lifts in {} s ({message})",
                    wait.as_secs()
                ))
                .with_hint(match self.token {
                    None => format!("retry after {retry}, or set GITHUB_TOKEN for a higher limit"),
                    Some(_) => format!("retry after {retry}"),
                }));
            }
        };
        let status = response.status;
        // A server may echo the request, token and all.
        let text = &match &self.token {
            Some(token) if !token.is_empty() => response
                .body
                .replace(token.as_str(), crate::secrets::WITHHELD),
            _ => response.body.clone(),
        };
        match status {
            200..=299 | 422 => {
                let next = response.header("link").and_then(next_page);
                let body = if text.trim().is_empty() {
                    Value::Null
                } else {
                    serde_json::from_str(text).map_err(|err| {
                        Failure::external(format!("GitHub sent invalid JSON for {what}: {err}"))
                    })?
                };
                Ok(ApiResponse { status, body, next })
            }
            403 | 429 => Err(Failure::external(format!(
                "GitHub refused access to {what} ({status}): {}",
                api_message_text(text)
            ))
            .with_hint("the token needs access to this repository (issues read; contents and pull requests write to open one)")),
            401 => Err(Failure::external(format!("GitHub rejected the token for {what} (401)"))
                .with_hint("check GITHUB_TOKEN or GH_TOKEN; it may have expired")),
            404 | 410 => Err(Failure::external(format!(
                "{what} was not found ({status}): it does not exist, or the repository is private and {}",
                if self.token.is_some() { "the token cannot see it" } else { "no token was given" }
            ))
            .with_hint("check the reference; for a private repository set GITHUB_TOKEN or GH_TOKEN")),
            _ => Err(Failure::external(format!(
                "GitHub answered {status} for {what}: {}",
                api_message_text(text)
            ))),
        }
    }
}

/// A response the caller interprets (2xx or 422).
#[derive(Debug)]
pub(crate) struct ApiResponse {
    pub status: u16,
    pub body: Value,
    pub next: Option<String>,
}

/// The request never got an answer (connection refused, timeout): for a POST, it may or may
/// not have been carried out.
#[derive(Debug)]
pub(crate) struct NetworkError(String);

impl std::fmt::Display for NetworkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NetworkError {}

/// GitHub's `message` (and its `errors[].message`, objects or strings) from a JSON body.
pub(crate) fn api_message(body: &Value) -> String {
    let mut message = body
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(errors) = body.get("errors").and_then(Value::as_array) {
        for error in errors {
            let text = error.as_str().map(String::from).or_else(|| {
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(String::from)
            });
            if let Some(text) = text {
                message.push_str(": ");
                message.push_str(&text);
            }
        }
    }
    message
}

/// GitHub's `{"message": ...}` from a raw body, or the start of the body.
fn api_message_text(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(String::from))
        .unwrap_or_else(|| crate::text::one_line(body, 200))
}

/// The `rel="next"` URL of a `Link` header.
fn next_page(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string()
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_github_token_goes_only_to_github_or_an_api_the_user_named() {
        use super::Api;
        let env = |vars: &'static [(&str, &str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            }
        };
        let tokens = env(&[
            ("GITHUB_TOKEN", "gh"),
            ("GH_ENTERPRISE_TOKEN", "ghe"),
            ("GH_HOST", "GHE.example"),
        ]);
        let api = |named, implied, env: &dyn Fn(&str) -> Option<String>| {
            let api = Api::choose_with(named, implied, env);
            (api.url, api.token)
        };
        let ghe = "https://ghe.example/api/v3";
        let owned = |url: &str, token: &str| (url.to_string(), Some(token.to_string()));
        assert_eq!(
            api(None, None, &tokens),
            owned("https://api.github.com", "gh")
        );
        assert_eq!(
            api(Some("http://127.0.0.1:9"), None, &tokens),
            owned("http://127.0.0.1:9", "gh")
        );
        assert_eq!(
            api(Some("http://127.0.0.1:9"), Some(ghe), &tokens),
            owned("http://127.0.0.1:9", "gh")
        );
        // Implied by an issue's address: the enterprise token for GH_HOST, else none.
        assert_eq!(api(None, Some(ghe), &tokens), owned(ghe, "ghe"));
        let elsewhere = "https://evil.example/api/v3";
        assert_eq!(
            api(None, Some(elsewhere), &tokens),
            (elsewhere.to_string(), None)
        );
        let no_host = env(&[("GITHUB_TOKEN", "gh"), ("GH_ENTERPRISE_TOKEN", "ghe")]);
        assert_eq!(api(None, Some(ghe), &no_host), (ghe.to_string(), None));
        assert_eq!(
            api(None, Some(ghe), &env(&[("GITHUB_TOKEN", "gh")])),
            (ghe.to_string(), None)
        );
        // Unless it is the API the environment names.
        let named = env(&[
            ("GITHUB_TOKEN", "gh"),
            ("GITHUB_API_URL", "https://ghe.example/api/v3/"),
        ]);
        assert_eq!(api(None, Some(ghe), &named), owned(ghe, "gh"));
        assert_eq!(
            api(None, None, &named),
            owned("https://ghe.example/api/v3/", "gh")
        );
    }

    #[test]
    fn link_headers() {
        let link = r#"<https://api.github.com/repositories/1/issues/2/comments?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last""#;
        assert_eq!(
            next_page(link).as_deref(),
            Some("https://api.github.com/repositories/1/issues/2/comments?page=2")
        );
        assert_eq!(next_page(r#"<https://x/?page=1>; rel="prev""#), None);
    }
}
