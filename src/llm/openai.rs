//! OpenAI-compatible chat completions: `POST {base}/chat/completions` with a bearer key, tools
//! as `functions` and their results as `tool` messages; and `GET {base}/models` for a local
//! server's model when none is named.

use serde_json::{json, Value};

use super::{call, normalise, post, Answer, Message, Model, Prompt, Tool};
use crate::error::Failure;
use crate::http::{Client, Method};

pub(super) fn ask(
    http: &Client,
    model: &Model,
    prompt: &Prompt,
    tools: &[Tool],
) -> Result<Answer, Failure> {
    let mut messages = vec![json!({"role": "system", "content": prompt.system})];
    for message in prompt.messages {
        match message {
            Message::User(text) => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant(turn) => messages.push(turn.clone()),
            Message::ToolResults(results) => messages.extend(results.iter().map(|result| {
                json!({"role": "tool", "tool_call_id": result.call_id, "content": result.content})
            })),
        }
    }
    let mut body = json!({
        "model": model.name.as_deref().unwrap_or_default(),
        "messages": messages,
    });
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {"name": tool.name,
                    "description": tool.description, "parameters": tool.parameters}})
            })
            .collect();
        body["tool_choice"] = "auto".into();
    }
    // vLLM, SGLang, llama.cpp and mlx_lm pass these to the model's chat template, where
    // Qwen's and others' read `enable_thinking`; OpenAI's API refuses them.
    let hosted = model.base_url.starts_with(super::OPENAI_URL);
    if let Some(thinking) = model.thinking.filter(|_| !hosted) {
        body["chat_template_kwargs"] = json!({"enable_thinking": thinking});
        // llama.cpp's budget for one request: none for a model asked not to think.
        if !thinking {
            body["thinking_budget_tokens"] = 0.into();
        }
    }
    // OpenAI's newer models refuse `max_tokens`; local servers know only it.
    let limit = if hosted {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[limit] = prompt.max_tokens.into();
    let url = format!("{}/chat/completions", model.base_url);
    let auth = bearer(model);
    let Some(value) = post(
        http,
        model,
        &url,
        &auth_header(&auth),
        &body,
        tools,
        "chat completion",
    )?
    else {
        return Ok(Answer::ToolsRefused);
    };
    normalise::chat_completion(&value)
        .map(Answer::Reply)
        .map_err(|problem| super::no_answer(model, &problem))
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
pub(super) fn first_model(http: &Client, model: &Model) -> Result<String, Failure> {
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
