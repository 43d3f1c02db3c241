//! The model providers heal talks to: OpenAI-compatible chat completions (OpenAI, Ollama,
//! llama.cpp, vLLM, LM Studio, mlx_lm) and Anthropic Messages: a system prompt and a short
//! conversation in, text and tool calls out (edit blocks in text beat code inside JSON for every
//! model tried, so tools are offered, never required). A server that refuses tools is asked
//! again without them, and not offered them again. What real servers send is made one shape by
//! `normalise`. The key goes only into the provider's auth header, never into a message, the
//! document or the events; every request is sent without the secrets the session knows
//! (`secrets::Secrets`), however they are spelled.

mod anthropic;
mod normalise;
mod openai;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::error::Failure;
use crate::http::{Client, HttpError, Response};
use crate::secrets::Secrets;

/// The wire format a model is spoken to in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Provider {
    /// Chat completions, as OpenAI and every local server serve them.
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
}

impl Provider {
    pub(crate) fn name(self) -> &'static str {
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
pub(crate) struct Model {
    pub provider: Provider,
    pub base_url: String,
    /// None: a local server's first model (`GET /models`), looked up on first use.
    pub name: Option<String>,
    api_key: Option<String>,
    /// Some(false): a thinking model is asked not to think (`ENABLE_THINKING=false`).
    pub thinking: Option<bool>,
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
pub(crate) struct ModelFlags {
    pub provider: Option<Provider>,
    pub model: Option<String>,
    pub base_url: Option<String>,
}

/// The model's context window as the environment says (`AUTOCODER_CONTEXT_TOKENS`, else
/// local-coder's `LOCAL_CODER_CONTEXT_TOKENS`: an MCP client's configuration sets it for
/// `delegate_task`), else 32,000 tokens, as servers do not report it.
pub(crate) fn context_window_of_env(env: impl Fn(&str) -> Option<String>) -> Result<u64, Failure> {
    for name in ["AUTOCODER_CONTEXT_TOKENS", "LOCAL_CODER_CONTEXT_TOKENS"] {
        let Some(value) = env(name).filter(|v| !v.trim().is_empty()) else {
            continue;
        };
        return match value.trim().parse::<u64>() {
            Ok(tokens) if tokens >= 4_000 => Ok(tokens),
            _ => Err(Failure::usage(format!(
                "{name}={value} is not a context window of 4000 tokens or more"
            ))
            .with_hint("give the model's context window in tokens, e.g. 32768")),
        };
    }
    Ok(32_000)
}

/// The error when `what` (a flag) needs a model and neither the flags nor the environment
/// name one.
pub(crate) fn none_configured(what: &str) -> Failure {
    Failure::usage(format!("{what} needs a model, and none is configured")).with_hint(
        "name one: --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b (Ollama), or \
         AUTOCODER_MODEL / AUTOCODER_BASE_URL; a key alone (OPENAI_API_KEY) is not enough",
    )
}

impl Model {
    /// The model the flags and `env` name: flags first, then `AUTOCODER_BASE_URL`,
    /// `AUTOCODER_MODEL` and `AUTOCODER_API_KEY`, then local-coder's `LOCAL_CODER_*` of the same
    /// names, then `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `ANTHROPIC_API_KEY`. None unless a
    /// model or a base URL is named: a key alone never sends code anywhere. A server named by
    /// `LOCAL_CODER_BASE_URL` gets `LOCAL_CODER_API_KEY` alone: no key meant for another.
    pub(crate) fn configured(
        flags: &ModelFlags,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Model>, Failure> {
        let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let autocoder = |name: &str| env(&format!("AUTOCODER_{name}"));
        let local_coder = |name: &str| env(&format!("LOCAL_CODER_{name}"));
        let ours = |name: &str| autocoder(name).or_else(|| local_coder(name));
        let local_server = flags.base_url.is_none()
            && autocoder("BASE_URL").is_none()
            && local_coder("BASE_URL").is_some();
        let name = flags.model.clone().or_else(|| ours("MODEL"));
        let named_url = flags
            .base_url
            .clone()
            .or_else(|| ours("BASE_URL"))
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
        let api_key = match local_server {
            true => local_coder("API_KEY"),
            false => autocoder("API_KEY").or_else(|| match provider {
                Provider::Openai => env("OPENAI_API_KEY"),
                Provider::Anthropic => env("ANTHROPIC_API_KEY"),
            }),
        };
        let hosted = base_url.starts_with(OPENAI_URL) || base_url.starts_with(ANTHROPIC_URL);
        if name.is_none() && hosted {
            return Err(Failure::usage(format!("{base_url} needs a model's name"))
                .with_hint("give --model NAME or set AUTOCODER_MODEL"));
        }
        let thinking = ours("ENABLE_THINKING").map(|value| {
            !matches!(
                value.trim().to_ascii_lowercase().as_str(),
                "false" | "0" | "no" | "off"
            )
        });
        Ok(Some(Model {
            provider,
            base_url,
            name,
            api_key,
            thinking,
        }))
    }

    /// The key, to withhold from anything written (prompts, events, the document).
    pub(crate) fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    /// What no request nor record may hold: the key, and a password the base URL carries
    /// (`http://user:password@host/v1`).
    pub(crate) fn secrets(&self) -> Vec<String> {
        let password = self
            .base_url
            .split_once("://")
            .and_then(|(_, rest)| rest.split('/').next()?.rsplit_once('@'))
            .and_then(|(userinfo, _)| userinfo.split_once(':'))
            .map(|(_, password)| password.to_string());
        self.api_key.iter().cloned().chain(password).collect()
    }
}

/// One request: the stable prefix (`system`, byte-identical across attempts so that providers
/// cache it), the conversation after it, and the tools the model may call.
pub(crate) struct Prompt<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [Tool],
    pub max_tokens: u32,
}

/// One message after the system prompt.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Message {
    User(String),
    /// The model's earlier turn as its provider sent it (`Reply::turn`), sent back unchanged.
    Assistant(Value),
    /// What came of that turn's tool calls, in their order.
    ToolResults(Vec<ToolResult>),
}

impl Message {
    /// About how much the message sends, in bytes of text.
    pub(crate) fn size(&self) -> usize {
        match self {
            Message::User(text) => text.len(),
            Message::Assistant(turn) => turn.to_string().len(),
            Message::ToolResults(results) => results.iter().map(|r| r.content.len()).sum(),
        }
    }
}

/// A tool the model may call: its name, what it does, and the JSON Schema of its arguments.
#[derive(Debug, Clone)]
pub(crate) struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: Value,
}

/// A call the model made. Servers that give no id get one made up (`call_1`, ...), which the
/// turn sent back carries too.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as an object, or why they could not be read (invalid JSON).
    pub arguments: Result<Value, String>,
}

/// What a call did, for the model's next request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

/// The model's answer, made one shape.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Reply {
    /// The answer's text, without reasoning (`<think>` and the servers' reasoning fields).
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    /// The answer as an assistant message of its provider's wire format, to send back when its
    /// tool calls are answered (Anthropic's thinking blocks must come back unchanged).
    pub turn: Value,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// The answer was cut off at `max_tokens`.
    pub cut_off: bool,
}

/// A provider's answer to one request.
enum Answer {
    Reply(Reply),
    /// The server refused the request because it offered tools.
    ToolsRefused,
}

/// A client for one model.
pub(crate) struct Session {
    model: Model,
    http: Client,
    /// The server refused tools once: they are not offered again.
    without_tools: AtomicBool,
    /// Withheld from every request, however spelled, with whatever looks like a secret by its
    /// shape: every text a model is sent passes here.
    secrets: Secrets,
}

impl Session {
    /// A session with `model`, whose server is known to answer: a local server unnamed model
    /// is asked for, otherwise the server is connected to, so that a server not started is said
    /// before any test runs.
    pub(crate) fn new(mut model: Model, timeout: Duration) -> Result<Session, Failure> {
        let http = Client::new("model", timeout, Duration::from_secs(120));
        if model.name.is_none() {
            model.name = Some(openai::first_model(&http, &model)?);
        } else {
            listens(&model)?;
        }
        let secrets = Secrets::of(model.secrets());
        Ok(Session {
            model,
            http,
            without_tools: AtomicBool::new(false),
            secrets,
        })
    }

    /// The session, withholding `secrets` (which hold the key) from every request.
    pub(crate) fn withholding(mut self, secrets: Secrets) -> Session {
        self.secrets = secrets;
        self
    }

    pub(crate) fn model(&self) -> &Model {
        &self.model
    }

    /// What every request is sent without.
    pub(crate) fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// Whether tools are still offered (the server has not refused them).
    pub(crate) fn offers_tools(&self) -> bool {
        !self.without_tools.load(Ordering::Relaxed)
    }

    /// Asks once (retrying what the HTTP layer retries) and reads the answer; a server that
    /// refuses the tools is asked again without them.
    pub(crate) fn ask(&self, prompt: &Prompt) -> Result<Reply, Failure> {
        let system = self.secrets.without_secrets(prompt.system);
        let messages: Vec<Message> = prompt
            .messages
            .iter()
            .map(|message| self.withheld(message))
            .collect();
        let prompt = &Prompt {
            system: &system,
            messages: &messages,
            ..*prompt
        };
        let tools = match self.without_tools.load(Ordering::Relaxed) {
            true => &[][..],
            false => prompt.tools,
        };
        if let Answer::Reply(reply) = self.ask_with(prompt, tools)? {
            return Ok(reply);
        }
        crate::log::info(
            "heal",
            "the model server refused tool calling; asking for edit blocks in text",
        );
        self.without_tools.store(true, Ordering::Relaxed);
        match self.ask_with(prompt, &[])? {
            Answer::Reply(reply) => Ok(reply),
            Answer::ToolsRefused => Err(no_answer(&self.model, "the server refused the request")),
        }
    }

    /// `message` with the secrets withheld from each of its texts.
    fn withheld(&self, message: &Message) -> Message {
        match message {
            Message::User(text) => Message::User(self.secrets.without_secrets(text)),
            Message::Assistant(turn) => {
                let mut turn = turn.clone();
                self.secrets.withhold_json(&mut turn);
                Message::Assistant(turn)
            }
            Message::ToolResults(results) => Message::ToolResults(
                results
                    .iter()
                    .map(|result| ToolResult {
                        content: self.secrets.without_secrets(&result.content),
                        ..result.clone()
                    })
                    .collect(),
            ),
        }
    }

    fn ask_with(&self, prompt: &Prompt, tools: &[Tool]) -> Result<Answer, Failure> {
        match self.model.provider {
            Provider::Openai => openai::ask(&self.http, &self.model, prompt, tools),
            Provider::Anthropic => anthropic::ask(&self.http, &self.model, prompt, tools),
        }
    }
}

/// Whether the model's server takes connections (checked within a few seconds). Not checked
/// through a proxy, which the HTTP client would use and this would not.
fn listens(model: &Model) -> Result<(), Failure> {
    const PROXIES: [&str; 6] = [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ];
    if PROXIES.iter().any(|name| std::env::var_os(name).is_some()) {
        return Ok(());
    }
    let (scheme, rest) = model.base_url.split_once("://").unwrap_or(("http", ""));
    let authority = rest.split('/').next().unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let default_port = if scheme == "https" { 443 } else { 80 };
    let with_port = match host_port.rsplit_once(':') {
        Some((_, port)) if !port.is_empty() && !port.contains(']') => host_port.to_string(),
        _ => format!("{host_port}:{default_port}"),
    };
    let unreachable = |err: String| {
        Failure::external(format!(
            "the model server at {} does not answer: {err}",
            crate::http::without_userinfo(&model.base_url)
        ))
        .with_hint("start the server, or check --base-url / AUTOCODER_BASE_URL")
    };
    let addresses = std::net::ToSocketAddrs::to_socket_addrs(&with_port.as_str())
        .map_err(|err| unreachable(err.to_string()))?;
    let mut last = String::from("its name resolves to no address");
    for address in addresses {
        match std::net::TcpStream::connect_timeout(&address, Duration::from_secs(5)) {
            Ok(_) => return Ok(()),
            Err(err) => last = err.to_string(),
        }
    }
    Err(unreachable(last))
}

/// Sends one request and reads its answer as JSON.
fn call(
    http: &Client,
    model: &Model,
    method: crate::http::Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
    what: &str,
) -> Result<Value, Failure> {
    let sent = http.send(&crate::http::Request {
        method,
        url,
        headers,
        body,
        retry: true,
        final_error: None,
        what,
    });
    json_body(&answered(sent, model)?, model)
}

/// Posts a request that may offer `tools` and reads its answer as JSON; None when the server
/// refused it for the tools (llama.cpp without `--jinja`, vLLM without a tool parser, an Ollama
/// model without tool support: each answers 4xx or 5xx naming tools), to be asked again
/// without them.
fn post(
    http: &Client,
    model: &Model,
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
    tools: &[Tool],
    what: &str,
) -> Result<Option<Value>, Failure> {
    let offered = !tools.is_empty();
    let sent = http.send(&crate::http::Request {
        method: crate::http::Method::Post,
        url,
        headers,
        body: Some(&body.to_string()),
        retry: true,
        final_error: offered.then_some(refuses_tools as fn(&Response) -> bool),
        what,
    });
    if offered && sent.as_ref().is_ok_and(refuses_tools) {
        return Ok(None);
    }
    Ok(Some(json_body(&answered(sent, model)?, model)?))
}

fn refuses_tools(response: &Response) -> bool {
    matches!(response.status, 400 | 422 | 500 | 501)
        && response.body.to_ascii_lowercase().contains("tool")
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
    // A server may echo the request, key and all.
    let mut said = server_message(&response.body);
    if let Some(key) = model.api_key().filter(|key| !key.is_empty()) {
        said = said.replace(key, crate::secrets::WITHHELD);
    }
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
    let value: Value = serde_json::from_str(body).unwrap_or_default();
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

/// The server answered, with nothing usable in the answer (empty, refused, cut off while
/// reasoning): a caller may go on without it, as it could not without a server.
#[derive(Debug)]
pub(crate) struct NoAnswer(String);

impl std::fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoAnswer {}

/// An answer with nothing heal can use in it, and what was wrong.
fn no_answer(model: &Model, problem: &str) -> Failure {
    Failure::new(
        crate::error::Kind::External,
        NoAnswer(format!(
            "the model {} gave no usable answer: {problem}",
            model.name.as_deref().unwrap_or("(unnamed)")
        )),
    )
    .with_hint("try again, or another model; a thinking model may need a larger budget")
}

/// The body as JSON, or an error that says the server sent something else.
fn json_body(response: &Response, model: &Model) -> Result<Value, Failure> {
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

    #[test]
    fn the_context_window_is_autocoders_else_local_coders_else_32000() {
        let window = |vars: &[(&str, &str)]| {
            context_window_of_env(|name| {
                vars.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            })
        };
        assert_eq!(window(&[]).unwrap(), 32_000);
        assert_eq!(
            window(&[("LOCAL_CODER_CONTEXT_TOKENS", "8192")]).unwrap(),
            8192
        );
        let both = [
            ("AUTOCODER_CONTEXT_TOKENS", "65536"),
            ("LOCAL_CODER_CONTEXT_TOKENS", "8192"),
        ];
        assert_eq!(window(&both).unwrap(), 65536);
        let said = window(&[("AUTOCODER_CONTEXT_TOKENS", "100")]).unwrap_err();
        assert!(format!("{:#}", said.error).contains("4000 tokens or more"));
    }

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
    fn local_coders_variables_come_after_autocoders() {
        let model = configured(
            ModelFlags::default(),
            &[
                ("LOCAL_CODER_BASE_URL", "http://127.0.0.1:8080/v1"),
                ("LOCAL_CODER_MODEL", "qwen3-coder"),
                ("LOCAL_CODER_API_KEY", "local"),
                ("LOCAL_CODER_ENABLE_THINKING", "false"),
                ("OPENAI_API_KEY", "o"),
            ],
        )
        .unwrap();
        assert_eq!(model.name.as_deref(), Some("qwen3-coder"));
        assert_eq!(model.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(
            (model.api_key(), model.thinking),
            (Some("local"), Some(false))
        );
        let model = configured(
            ModelFlags::default(),
            &[("AUTOCODER_MODEL", "a"), ("LOCAL_CODER_MODEL", "b")],
        )
        .unwrap();
        assert_eq!((model.name.as_deref(), model.thinking), (Some("a"), None));
        // local-coder's server gets no key meant for another server.
        let model = configured(
            ModelFlags::default(),
            &[
                ("LOCAL_CODER_BASE_URL", "http://127.0.0.1:8080/v1"),
                ("AUTOCODER_API_KEY", "a"),
                ("OPENAI_API_KEY", "o"),
            ],
        )
        .unwrap();
        assert_eq!(model.api_key(), None);
    }

    #[test]
    fn the_key_and_a_password_in_the_base_url_are_the_models_secrets() {
        let model = configured(
            ModelFlags::default(),
            &[
                (
                    "AUTOCODER_BASE_URL",
                    "http://proxy:Pr0xyPassw0rd@127.0.0.1:9/v1",
                ),
                ("AUTOCODER_MODEL", "m"),
                ("AUTOCODER_API_KEY", "sk-key-0123456789"),
            ],
        )
        .unwrap();
        assert_eq!(model.secrets(), ["sk-key-0123456789", "Pr0xyPassw0rd"]);
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
