//! The model providers heal talks to: OpenAI-compatible chat completions (OpenAI, Ollama,
//! llama.cpp, vLLM, LM Studio, mlx_lm) and Anthropic Messages, one system prompt and one user
//! message in, plain text out (edit blocks in text beat code inside JSON for every model tried).
//! What real servers send is made one shape by `normalise`. The key goes only into the
//! provider's auth header, never into a message, the document or the events.

mod anthropic;
mod normalise;
mod openai;

use std::time::Duration;

use crate::error::Failure;
use crate::http::{Client, HttpError, Response};

/// The wire format a model is spoken to in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Provider {
    /// Chat completions, as OpenAI and every local server serve them.
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::Openai => "openai",
            Provider::Anthropic => "anthropic",
        }
    }
}

const OPENAI_URL: &str = "https://api.openai.com/v1";
const ANTHROPIC_URL: &str = "https://api.anthropic.com";

/// A configured model: where it is served, its name and the key for it.
#[derive(Clone)]
pub struct Model {
    pub provider: Provider,
    pub base_url: String,
    /// None: a local server's first model (`GET /models`), looked up on first use.
    pub name: Option<String>,
    api_key: Option<String>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// What the flags say about the model; the environment fills in the rest.
#[derive(Debug, Default, Clone)]
pub struct ModelFlags {
    pub provider: Option<Provider>,
    pub model: Option<String>,
    pub base_url: Option<String>,
}

impl Model {
    /// The model the flags and `env` name: flags first, then `AUTOCODER_BASE_URL`,
    /// `AUTOCODER_MODEL` and `AUTOCODER_API_KEY`, then `OPENAI_BASE_URL`, `OPENAI_API_KEY` and
    /// `ANTHROPIC_API_KEY`. None unless a model or a base URL is named: a key alone never sends
    /// code anywhere.
    pub fn configured(
        flags: &ModelFlags,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Model>, Failure> {
        let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let name = flags.model.clone().or_else(|| env("AUTOCODER_MODEL"));
        let named_url = flags
            .base_url
            .clone()
            .or_else(|| env("AUTOCODER_BASE_URL"))
            .or_else(|| env("OPENAI_BASE_URL"));
        if name.is_none() && named_url.is_none() {
            return Ok(None);
        }
        let provider = flags.provider.unwrap_or_else(|| match &named_url {
            Some(url) if url.contains("anthropic.com") => Provider::Anthropic,
            Some(_) => Provider::Openai,
            None if name.as_deref().is_some_and(|n| n.starts_with("claude")) => Provider::Anthropic,
            None => Provider::Openai,
        });
        let base_url = named_url
            .unwrap_or_else(|| match provider {
                Provider::Openai => OPENAI_URL.into(),
                Provider::Anthropic => ANTHROPIC_URL.into(),
            })
            .trim_end_matches('/')
            .to_string();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(Failure::usage(format!(
                "the model's base URL `{base_url}` is not an http:// or https:// URL"
            ))
            .with_hint(
                "give --base-url http://127.0.0.1:11434/v1 (Ollama) or the provider's URL",
            ));
        }
        let api_key = env("AUTOCODER_API_KEY").or_else(|| match provider {
            Provider::Openai => env("OPENAI_API_KEY"),
            Provider::Anthropic => env("ANTHROPIC_API_KEY"),
        });
        let hosted = base_url.starts_with(OPENAI_URL) || base_url.starts_with(ANTHROPIC_URL);
        if name.is_none() && hosted {
            return Err(Failure::usage(format!("{base_url} needs a model's name"))
                .with_hint("give --model NAME or set AUTOCODER_MODEL"));
        }
        Ok(Some(Model {
            provider,
            base_url,
            name,
            api_key,
        }))
    }

    /// The key, to withhold from anything written (prompts, events, the document).
    pub fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }
}

/// One request: the stable prefix (`system`, byte-identical across attempts so that providers
/// cache it) and this attempt's message.
pub struct Prompt<'a> {
    pub system: &'a str,
    pub user: &'a str,
    pub max_tokens: u32,
}

/// The model's answer, made one shape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// The answer's text, without reasoning (`<think>` and the servers' reasoning fields).
    pub text: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// The answer was cut off at `max_tokens`.
    pub cut_off: bool,
}

/// A client for one model.
pub struct Session {
    model: Model,
    http: Client,
}

impl Session {
    pub fn new(mut model: Model, timeout: Duration) -> Result<Session, Failure> {
        let http = Client::new("model", timeout, Duration::from_secs(120));
        if model.name.is_none() {
            model.name = Some(openai::first_model(&http, &model)?);
        }
        Ok(Session { model, http })
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Asks once (retrying what the HTTP layer retries) and reads the answer.
    pub fn ask(&self, prompt: &Prompt) -> Result<Reply, Failure> {
        match self.model.provider {
            Provider::Openai => openai::ask(&self.http, &self.model, prompt),
            Provider::Anthropic => anthropic::ask(&self.http, &self.model, prompt),
        }
    }
}

/// Sends one request (retried on network and server errors) and reads its answer as JSON.
fn call(
    http: &Client,
    model: &Model,
    method: crate::http::Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
    what: &str,
) -> Result<serde_json::Value, Failure> {
    let sent = http.send(&crate::http::Request {
        method,
        url,
        headers,
        body,
        retry: true,
        what,
    });
    json_body(&answered(sent, model)?, model)
}

/// A request's answer, or the failure to say: unreachable, a refused key (with a hint about
/// it), rate limits that would not lift, any other status with the server's own message.
fn answered(sent: Result<Response, HttpError>, model: &Model) -> Result<Response, Failure> {
    let shown = crate::http::without_userinfo(&model.base_url);
    let response = match sent {
        Ok(response) => response,
        Err(HttpError::Unreachable(err)) => {
            return Err(Failure::external(format!(
                "the model server at {shown} did not answer: {err}"
            ))
            .with_hint("start the server, or check --base-url / AUTOCODER_BASE_URL"))
        }
        Err(HttpError::RateLimited { wait, .. }) => {
            return Err(Failure::external(format!(
                "the model server at {shown} is rate limiting; retry after {}",
                crate::http::clock_time_in(wait)
            )))
        }
    };
    if (200..300).contains(&response.status) {
        return Ok(response);
    }
    let said = server_message(&response.body);
    let failure = Failure::external(format!(
        "the model server at {shown} answered {}: {said}",
        response.status
    ));
    Err(match response.status {
        401 | 403 => failure.with_hint(match model.provider {
            Provider::Openai => "check the key in AUTOCODER_API_KEY or OPENAI_API_KEY",
            Provider::Anthropic => "check the key in AUTOCODER_API_KEY or ANTHROPIC_API_KEY",
        }),
        404 => failure.with_hint("check the model's name (--model) and the base URL's path (OpenAI-compatible servers serve /v1)"),
        429 => failure.with_hint("the quota or rate limit is spent; wait, or use another key"),
        _ => failure,
    })
}

/// The server's own words for an error: `error.message`, `error` as a string, `message`, or the
/// body's first line.
fn server_message(body: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let said = value
        .pointer("/error/message")
        .or_else(|| value.get("error").filter(|e| e.is_string()))
        .or_else(|| value.get("message"))
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| body.lines().next().unwrap_or("").to_string());
    if said.trim().is_empty() {
        "(no message)".into()
    } else {
        crate::text::one_line(&said, 300)
    }
}

/// An answer with nothing heal can use in it, and what was wrong.
fn no_answer(model: &Model, problem: &str) -> Failure {
    Failure::external(format!(
        "the model {} gave no usable answer: {problem}",
        model.name.as_deref().unwrap_or("(unnamed)")
    ))
    .with_hint("try again, or another model; a thinking model may need a larger budget")
}

/// The body as JSON, or an error that says the server sent something else.
fn json_body(response: &Response, model: &Model) -> Result<serde_json::Value, Failure> {
    serde_json::from_str(&response.body).map_err(|err| {
        Failure::external(format!(
            "the model server at {} sent an answer that is not JSON ({err}): {}",
            crate::http::without_userinfo(&model.base_url),
            crate::text::one_line(&response.body, 200)
        ))
        .with_hint("check that --base-url points at the API (OpenAI-compatible servers serve /v1)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configured(flags: ModelFlags, vars: &[(&str, &str)]) -> Option<Model> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Model::configured(&flags, |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
        .unwrap()
    }

    #[test]
    fn a_key_alone_configures_no_model() {
        assert!(configured(ModelFlags::default(), &[("OPENAI_API_KEY", "sk-x")]).is_none());
        assert!(configured(ModelFlags::default(), &[("ANTHROPIC_API_KEY", "x")]).is_none());
    }

    #[test]
    fn flags_come_before_autocoder_variables_and_those_before_openai_ones() {
        let model = configured(
            ModelFlags {
                model: Some("qwen".into()),
                ..Default::default()
            },
            &[
                ("AUTOCODER_MODEL", "other"),
                ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1/"),
                ("AUTOCODER_API_KEY", "k1"),
                ("OPENAI_API_KEY", "k2"),
            ],
        )
        .unwrap();
        assert_eq!(model.name.as_deref(), Some("qwen"));
        assert_eq!(model.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(model.api_key(), Some("k1"));
        assert_eq!(model.provider, Provider::Openai);
    }

    #[test]
    fn a_claude_model_or_anthropic_url_speaks_anthropic_with_its_key() {
        let model = configured(
            ModelFlags {
                model: Some("claude-sonnet-4-5".into()),
                ..Default::default()
            },
            &[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")],
        )
        .unwrap();
        assert_eq!(model.provider, Provider::Anthropic);
        assert_eq!(model.base_url, ANTHROPIC_URL);
        assert_eq!(model.api_key(), Some("a"));
    }

    #[test]
    fn a_hosted_api_needs_a_model_name_and_a_url_must_be_http() {
        let flags = ModelFlags {
            base_url: Some(OPENAI_URL.into()),
            ..Default::default()
        };
        assert!(Model::configured(&flags, |_| None).is_err());
        let flags = ModelFlags {
            base_url: Some("localhost:11434".into()),
            ..Default::default()
        };
        assert!(Model::configured(&flags, |_| None).is_err());
    }

    #[test]
    fn the_servers_message_is_found_where_each_puts_it() {
        assert_eq!(
            server_message(r#"{"error": {"message": "Incorrect API key"}}"#),
            "Incorrect API key"
        );
        assert_eq!(
            server_message(r#"{"error": "model not found"}"#),
            "model not found"
        );
        assert_eq!(server_message("Bad Gateway\n<html>"), "Bad Gateway");
    }
}
