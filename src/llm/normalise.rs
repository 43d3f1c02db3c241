//! What real servers answer, made one `Reply`: the text in `content` as a string or as parts,
//! reasoning in `reasoning_content` (llama.cpp, older vLLM), `reasoning` (newer vLLM, Ollama's
//! `/v1`, mlx_lm), `thinking` (Ollama's own API) or as `<think>…</think>` in the content, left
//! out; usage under OpenAI's, Ollama's or Anthropic's names; an answer cut off at the token
//! limit marked so. Tool calls come as OpenAI's `tool_calls` (arguments a JSON string, which
//! may be invalid, or an object as Ollama sends them, ids missing on some servers), the older
//! `function_call`, `<tool_call>` JSON inside the content (a server that did not parse its
//! model's calls), or Anthropic's `tool_use` blocks; they are read whatever `finish_reason`
//! says. An answer with neither text nor calls is an error that says why, never a panic.

use serde_json::{json, Value};

use super::{Reply, ToolCall};

/// Where edit blocks begin: reasoning that holds them (a server that put the whole answer in
/// its reasoning field) is the answer.
const EDIT_MARKERS: [&str; 3] = ["<<<<<<< SEARCH", "*** Begin Patch", "\n@@"];

/// A chat completion (or Ollama's native `/api/chat` answer).
pub(super) fn chat_completion(value: &Value) -> Result<Reply, String> {
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        let said = error
            .get("message")
            .and_then(Value::as_str)
            .or(error.as_str())
            .unwrap_or("an error without a message");
        return Err(format!("the server said: {said}"));
    }
    let choice = value.pointer("/choices/0");
    let message = choice
        .and_then(|choice| choice.get("message"))
        .or_else(|| value.get("message"))
        .ok_or("the answer has no `choices[0].message`")?;
    let finish = choice
        .and_then(|choice| choice.get("finish_reason"))
        .or_else(|| value.get("done_reason"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut content = text_of(message.get("content"));
    let mut tool_calls = openai_tool_calls(message);
    if tool_calls.is_empty() {
        (content, tool_calls) = calls_in_text(&content);
    }
    let reasoning = ["reasoning_content", "reasoning", "thinking"]
        .iter()
        .map(|key| text_of(message.get(*key)))
        .find(|text| !text.trim().is_empty())
        .unwrap_or_default();
    let usage = value.get("usage");
    let count = |keys: &[&str]| {
        keys.iter()
            .filter_map(|key| usage.and_then(|u| u.get(*key)).or_else(|| value.get(*key)))
            .find_map(Value::as_u64)
            .unwrap_or(0)
    };
    let text = without_thinking(&content);
    let mut turn = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { text.clone().into() }});
    if !tool_calls.is_empty() {
        turn["tool_calls"] = tool_calls
            .iter()
            .map(|call| {
                // Sent back as valid JSON whatever came: some servers parse the history's
                // arguments, and refuse the request when they cannot.
                let arguments = call.arguments.as_ref().unwrap_or(&json!({})).to_string();
                json!({"id": call.id, "type": "function",
                       "function": {"name": call.name, "arguments": arguments}})
            })
            .collect();
    }
    reply(
        Reply {
            text,
            tool_calls,
            turn,
            tokens_in: count(&["prompt_tokens", "prompt_eval_count"]),
            tokens_out: count(&["completion_tokens", "eval_count"]),
            cut_off: finish == "length",
        },
        &reasoning,
    )
}

/// A chat message's tool calls (`tool_calls`, or the older `function_call`).
fn openai_tool_calls(message: &Value) -> Vec<ToolCall> {
    let calls = match (message.get("tool_calls"), message.get("function_call")) {
        (Some(Value::Array(calls)), _) => calls.clone(),
        (_, Some(call)) if call.is_object() => vec![json!({"function": call})],
        _ => Vec::new(),
    };
    calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let function = call.get("function").unwrap_or(call);
            tool_call(
                index,
                call.get("id"),
                function.get("name"),
                function.get("arguments").or(function.get("parameters")),
            )
        })
        .collect()
}

/// Calls written as `<tool_call>{"name": ..., "arguments": ...}</tool_call>` in the text (the
/// Hermes format many local models use), and the text without them.
fn calls_in_text(content: &str) -> (String, Vec<ToolCall>) {
    const OPEN: &str = "<tool_call>";
    const CLOSE: &str = "</tool_call>";
    let mut calls = Vec::new();
    let mut text = String::new();
    let mut rest = content;
    while let Some(start) = rest.find(OPEN) {
        let Some(length) = rest[start..].find(CLOSE) else {
            break;
        };
        let inner = &rest[start + OPEN.len()..start + length];
        let Ok(call) = serde_json::from_str::<Value>(inner.trim()) else {
            break;
        };
        text.push_str(&rest[..start]);
        calls.push(tool_call(
            calls.len(),
            None,
            call.get("name"),
            call.get("arguments").or(call.get("parameters")),
        ));
        rest = &rest[start + length + CLOSE.len()..];
    }
    text.push_str(rest);
    (text, calls)
}

/// One call made one shape: an id made up when none came, the arguments read from a JSON
/// string (even one encoded twice) or taken as they are.
fn tool_call(
    index: usize,
    id: Option<&Value>,
    name: Option<&Value>,
    arguments: Option<&Value>,
) -> ToolCall {
    let id = id
        .and_then(Value::as_str)
        .filter(|id| !id.trim().is_empty())
        .map_or_else(|| format!("call_{}", index + 1), str::to_string);
    let name = name.and_then(Value::as_str).unwrap_or_default().to_string();
    let from_text = |text: &str| -> Result<Value, String> {
        if text.trim().is_empty() {
            return Ok(json!({}));
        }
        match serde_json::from_str(text) {
            Ok(Value::String(inner)) => serde_json::from_str(&inner)
                .map_err(|err| format!("the arguments are not a JSON object ({err})")),
            Ok(value) => Ok(value),
            Err(err) => Err(format!("the arguments are not JSON ({err})")),
        }
    };
    let arguments = match arguments {
        None | Some(Value::Null) => Ok(json!({})),
        Some(Value::String(text)) => from_text(text),
        Some(value) => Ok(value.clone()),
    };
    ToolCall {
        id,
        name,
        arguments,
    }
}

/// An Anthropic message: its text blocks (thinking blocks left out).
pub(super) fn anthropic_message(value: &Value) -> Result<Reply, String> {
    if value.get("type").and_then(Value::as_str) == Some("error") {
        let said = value
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("an error without a message");
        return Err(format!("the server said: {said}"));
    }
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or("the answer has no `content` blocks")?;
    let block_text = |kind: &str, key: &str| {
        blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some(kind))
            .filter_map(|block| block.get(key).and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let usage = |key: &str| {
        value
            .pointer(&format!("/usage/{key}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    // The turn goes back as it came, but for what the API would refuse in it: a call without
    // an id (its result names the one made up) or whose input is not an object.
    let mut tool_calls = Vec::new();
    let mut sent_back = blocks.clone();
    for block in &mut sent_back {
        if block.get("type").and_then(Value::as_str) != Some("tool_use") {
            continue;
        }
        let call = tool_call(
            tool_calls.len(),
            block.get("id"),
            block.get("name"),
            block.get("input"),
        );
        block["id"] = call.id.clone().into();
        if !block.get("input").is_some_and(Value::is_object) {
            block["input"] = json!({});
        }
        tool_calls.push(call);
    }
    reply(
        Reply {
            text: without_thinking(&block_text("text", "text")),
            tool_calls,
            turn: json!({"role": "assistant", "content": sent_back}),
            tokens_in: usage("input_tokens")
                + usage("cache_creation_input_tokens")
                + usage("cache_read_input_tokens"),
            tokens_out: usage("output_tokens"),
            cut_off: value.get("stop_reason").and_then(Value::as_str) == Some("max_tokens"),
        },
        &block_text("thinking", "thinking"),
    )
}

/// `reply`, its text taken from the reasoning when only that holds edit blocks; an error when
/// it has neither text nor calls.
fn reply(mut reply: Reply, reasoning: &str) -> Result<Reply, String> {
    if reply.text.trim().is_empty() && EDIT_MARKERS.iter().any(|m| reasoning.contains(m)) {
        reply.text = without_thinking(reasoning);
    }
    if reply.text.trim().is_empty() && reply.tool_calls.is_empty() {
        return Err(if reply.cut_off {
            "it was cut off at the token limit before it answered (while reasoning)".into()
        } else {
            "the answer is empty".into()
        });
    }
    Ok(reply)
}

/// A content field as text: a string, or the text of its parts.
fn text_of(field: Option<&Value>) -> String {
    match field {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str).or(part.as_str()))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// `text` without `<think>…</think>` (and without what comes before a lone `</think>`, whose
/// opening tag the server's chat template put into the prompt; and without an unclosed
/// `<think>` and all after it, which is reasoning cut off).
fn without_thinking(text: &str) -> String {
    let mut rest = text;
    if let Some(end) = rest.find("</think>") {
        if !rest[..end].contains("<think>") {
            rest = &rest[end + "</think>".len()..];
        }
    }
    let mut out = String::with_capacity(rest.len());
    while let Some(start) = rest.find("<think>") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</think>") {
            Some(end) => rest = &rest[start + end + "</think>".len()..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_comes_as_a_string_or_parts_and_reasoning_fields_are_left_out() {
        let reply = chat_completion(&json!({"choices": [{"message": {"content": "fix",
            "reasoning_content": "hmm"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3}}))
        .unwrap();
        assert_eq!(
            (reply.text.as_str(), reply.tokens_in, reply.tokens_out),
            ("fix", 10, 3)
        );
        let reply = chat_completion(&json!({"choices": [{"message": {"content":
            [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}]}))
        .unwrap();
        assert_eq!(reply.text, "ab");
    }

    #[test]
    fn think_tags_are_removed_however_they_come() {
        assert_eq!(without_thinking("<think>x</think>\nanswer"), "answer");
        assert_eq!(without_thinking("reasoning</think>answer"), "answer");
        assert_eq!(without_thinking("answer <think>cut off"), "answer");
        assert_eq!(
            without_thinking("a<think>1</think>b<think>2</think>c"),
            "abc"
        );
    }

    #[test]
    fn edit_blocks_left_in_a_reasoning_field_are_the_answer() {
        let reply = chat_completion(&json!({"choices": [{"message": {"content": "",
            "reasoning": "x.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE"}}]}))
        .unwrap();
        assert!(reply.text.starts_with("x.py"));
    }

    #[test]
    fn an_empty_answer_says_why() {
        let cut = chat_completion(&json!({"choices": [{"message": {"content": null,
            "reasoning_content": "thinking..."}, "finish_reason": "length"}]}));
        assert!(cut.unwrap_err().contains("cut off"));
        assert!(chat_completion(&json!({"choices": []})).is_err());
        assert!(
            chat_completion(&json!({"error": {"message": "overloaded"}}))
                .unwrap_err()
                .contains("overloaded")
        );
    }

    #[test]
    fn tool_calls_are_read_however_servers_send_them() {
        // Arguments as a string, as an object without an id (Ollama), as invalid JSON, and
        // encoded twice; with `finish_reason: stop` and no content.
        let reply = chat_completion(&json!({"choices": [{"message": {"content": null,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "edit_file",
                 "arguments": "{\"path\": \"a.py\"}"}},
                {"function": {"name": "write_file", "arguments": {"path": "b.py"}}},
                {"id": "", "function": {"name": "edit_file", "arguments": "{\"path\": "}},
                {"id": "c4", "function": {"name": "edit_file", "arguments": "\"{}\""}}]},
            "finish_reason": "stop"}]}))
        .unwrap();
        let calls = &reply.tool_calls;
        assert_eq!(calls.len(), 4);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("c1", "edit_file")
        );
        assert_eq!(calls[0].arguments, Ok(json!({"path": "a.py"})));
        assert_eq!(calls[1].id, "call_2");
        assert_eq!(calls[1].arguments, Ok(json!({"path": "b.py"})));
        assert_eq!(calls[2].id, "call_3");
        assert!(calls[2]
            .arguments
            .as_ref()
            .unwrap_err()
            .contains("not JSON"));
        assert_eq!(calls[3].arguments, Ok(json!({})));
        // The turn sent back carries the ids made up and arguments that are JSON.
        let turn = &reply.turn["tool_calls"];
        assert_eq!(turn[1]["id"], "call_2");
        assert_eq!(turn[1]["function"]["arguments"], "{\"path\":\"b.py\"}");
        assert_eq!(turn[2]["function"]["arguments"], "{}");
        assert!(reply.turn["content"].is_null());
    }

    #[test]
    fn calls_written_in_the_text_and_the_older_function_call_are_read() {
        let reply = chat_completion(&json!({"choices": [{"message": {"content":
            "Fixing it.\n<tool_call>\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"x\"}}\n</tool_call>"}}]}))
        .unwrap();
        assert_eq!(reply.text, "Fixing it.");
        assert_eq!(reply.tool_calls[0].name, "edit_file");
        assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"path": "x"})));
        let reply = chat_completion(&json!({"choices": [{"message": {"content": "",
            "function_call": {"name": "write_file", "arguments": "{}"}}}]}))
        .unwrap();
        assert_eq!(reply.tool_calls[0].name, "write_file");
        let reply = anthropic_message(&json!({"content": [{"type": "thinking", "thinking": "t",
            "signature": "s"}, {"type": "tool_use", "id": "toolu_1", "name": "edit_file",
            "input": {"path": "y"}}], "stop_reason": "tool_use"}))
        .unwrap();
        assert_eq!(reply.tool_calls[0].id, "toolu_1");
        // Thinking blocks go back unchanged.
        assert_eq!(reply.turn["content"][0]["signature"], "s");
        // A call without an id or an object for its input goes back with both.
        let reply = anthropic_message(&json!({"content": [{"type": "tool_use", "name": "finish",
            "input": "oops"}]}))
        .unwrap();
        assert_eq!(reply.tool_calls[0].id, "call_1");
        assert_eq!(reply.turn["content"][0]["id"], "call_1");
        assert_eq!(reply.turn["content"][0]["input"], json!({}));
    }

    #[test]
    fn ollamas_own_api_and_anthropics_messages_are_read() {
        let reply = chat_completion(&json!({"message": {"role": "assistant", "content": "ok",
            "thinking": "..."}, "done_reason": "stop", "prompt_eval_count": 7, "eval_count": 2}))
        .unwrap();
        assert_eq!(
            (reply.text.as_str(), reply.tokens_in, reply.tokens_out),
            ("ok", 7, 2)
        );
        let reply = anthropic_message(&json!({"content": [{"type": "thinking", "thinking": "hm",
            "signature": "s"}, {"type": "text", "text": "done"}], "stop_reason": "max_tokens",
            "usage": {"input_tokens": 5, "cache_read_input_tokens": 100, "output_tokens": 9}}))
        .unwrap();
        assert_eq!(reply.text, "done");
        assert!(reply.cut_off);
        assert_eq!((reply.tokens_in, reply.tokens_out), (105, 9));
    }
}
