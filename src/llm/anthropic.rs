//! Anthropic Messages: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`; the
//! system prompt is marked for caching, as it is the same on every attempt. Tool results go
//! back as `tool_result` blocks of the next user message.

use serde_json::{json, Value};

use super::{normalise, post, Answer, Message, Model, Prompt, Tool};
use crate::error::Failure;
use crate::http::Client;

const VERSION: &str = "2023-06-01";

pub(super) fn ask(
    http: &Client,
    model: &Model,
    prompt: &Prompt,
    tools: &[Tool],
) -> Result<Answer, Failure> {
    let mut messages: Vec<Value> = Vec::new();
    for message in prompt.messages {
        match message {
            Message::User(text) => to_user(&mut messages, json!({"type": "text", "text": text})),
            Message::Assistant(turn) => messages.push(turn.clone()),
            Message::ToolResults(results) => {
                for result in results {
                    to_user(
                        &mut messages,
                        json!({"type": "tool_result", "tool_use_id": result.call_id,
                               "content": result.content, "is_error": result.is_error}),
                    );
                }
            }
        }
    }
    let mut body = json!({
        "model": model.name.as_deref().unwrap_or_default(),
        "max_tokens": prompt.max_tokens,
        "system": [{"type": "text", "text": prompt.system, "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
    });
    // Claude thinks when asked to, within a budget of half the reply (at least the 1,024 tokens
    // the API wants); a local server speaking this API may think unless told not to.
    match model.thinking {
        Some(true) if prompt.max_tokens >= 2048 => {
            body["thinking"] = json!({"type": "enabled", "budget_tokens": prompt.max_tokens / 2});
        }
        Some(false) => body["thinking"] = json!({"type": "disabled"}),
        _ => {}
    }
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|tool| {
                json!({"name": tool.name, "description": tool.description,
                       "input_schema": tool.parameters})
            })
            .collect();
        body["tool_choice"] = json!({"type": "auto"});
    }
    let url = format!("{}/v1/messages", model.base_url.trim_end_matches("/v1"));
    let mut headers = vec![("anthropic-version", VERSION)];
    if let Some(key) = model.api_key() {
        headers.push(("x-api-key", key));
    }
    let Some(value) = post(http, model, &url, &headers, &body, tools, "message")? else {
        return Ok(Answer::ToolsRefused);
    };
    normalise::anthropic_message(&value)
        .map(Answer::Reply)
        .map_err(|problem| super::no_answer(model, &problem))
}

/// Adds `block` to the user message at the end, or as one: the API wants the roles to take
/// turns. A lone text block is sent as a plain string.
fn to_user(messages: &mut Vec<Value>, block: Value) {
    if let Some(last) = messages.last_mut().filter(|m| m["role"] == "user") {
        if let Value::String(text) = &last["content"] {
            last["content"] = json!([{"type": "text", "text": text}]);
        }
        if let Some(blocks) = last["content"].as_array_mut() {
            blocks.push(block);
        }
        return;
    }
    let content = match block["type"].as_str() {
        Some("text") => block["text"].clone(),
        _ => json!([block]),
    };
    messages.push(json!({"role": "user", "content": content}));
}
