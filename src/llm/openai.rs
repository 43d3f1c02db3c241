//! OpenAI-compatible chat completions: `POST {base}/chat/completions` with a bearer key, and
//! `GET {base}/models` for a local server's model when none is named.

use serde_json::{json, Value};

use super::{call, normalise, Model, Prompt, Reply};
use crate::error::Failure;
use crate::http::{Client, Method};

pub fn ask(http: &Client, model: &Model, prompt: &Prompt) -> Result<Reply, Failure> {
    let mut body = json!({
        "model": model.name.as_deref().unwrap_or_default(),
        "messages": [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.user},
        ],
    });
    // OpenAI's newer models refuse `max_tokens`; local servers know only it.
    let limit = if model.base_url.starts_with(super::OPENAI_URL) {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[limit] = prompt.max_tokens.into();
    let url = format!("{}/chat/completions", model.base_url);
    let auth = bearer(model);
    let value = call(
        http,
        model,
        Method::Post,
        &url,
        &auth_header(&auth),
        Some(&body.to_string()),
        "chat completion",
    )?;
    normalise::chat_completion(&value).map_err(|problem| super::no_answer(model, &problem))
}

/// The key as a bearer token, when there is one.
fn bearer(model: &Model) -> Option<String> {
    model.api_key().map(|key| format!("Bearer {key}"))
}

fn auth_header(bearer: &Option<String>) -> Vec<(&str, &str)> {
    bearer
        .as_deref()
        .map(|auth| ("Authorization", auth))
        .into_iter()
        .collect()
}

/// The first model a server lists.
pub fn first_model(http: &Client, model: &Model) -> Result<String, Failure> {
    let url = format!("{}/models", model.base_url);
    let auth = bearer(model);
    let value = call(
        http,
        model,
        Method::Get,
        &url,
        &auth_header(&auth),
        None,
        "the server's models",
    )?;
    value
        .pointer("/data/0/id")
        .or_else(|| value.pointer("/models/0/name"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            Failure::external(format!(
                "the model server at {} lists no model",
                model.base_url
            ))
            .with_hint("load a model in the server, or name one with --model")
        })
}
