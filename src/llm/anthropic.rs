//! Anthropic Messages: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`; the
//! system prompt is marked for caching, as it is the same on every attempt.

use serde_json::json;

use super::{call, normalise, Model, Prompt, Reply};
use crate::error::Failure;
use crate::http::{Client, Method};

const VERSION: &str = "2023-06-01";

pub fn ask(http: &Client, model: &Model, prompt: &Prompt) -> Result<Reply, Failure> {
    let body = json!({
        "model": model.name.as_deref().unwrap_or_default(),
        "max_tokens": prompt.max_tokens,
        "system": [{"type": "text", "text": prompt.system, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": prompt.user}],
    })
    .to_string();
    let url = format!("{}/v1/messages", model.base_url.trim_end_matches("/v1"));
    let mut headers = vec![("anthropic-version", VERSION)];
    if let Some(key) = model.api_key() {
        headers.push(("x-api-key", key));
    }
    let value = call(
        http,
        model,
        Method::Post,
        &url,
        &headers,
        Some(&body),
        "message",
    )?;
    normalise::anthropic_message(&value).map_err(|problem| super::no_answer(model, &problem))
}
