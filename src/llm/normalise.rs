//! What real servers answer, made one `Reply`: the text in `content` as a string or as parts,
//! reasoning in `reasoning_content` (llama.cpp, older vLLM), `reasoning` (newer vLLM, Ollama's
//! `/v1`, mlx_lm), `thinking` (Ollama's own API) or as `<think>…</think>` in the content, left
//! out; usage under OpenAI's, Ollama's or Anthropic's names; an answer cut off at the token
//! limit marked so. An answer with no text is an error that says why, never a panic.

use serde_json::Value;

use super::Reply;

/// Where edit blocks begin: reasoning that holds them (a server that put the whole answer in
/// its reasoning field) is the answer.
const EDIT_MARKERS: [&str; 3] = ["<<<<<<< SEARCH", "*** Begin Patch", "\n@@"];

/// A chat completion (or Ollama's native `/api/chat` answer).
pub fn chat_completion(value: &Value) -> Result<Reply, String> {
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
    let content = text_of(message.get("content"));
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
    reply(
        without_thinking(&content),
        &reasoning,
        finish == "length",
        count(&["prompt_tokens", "prompt_eval_count"]),
        count(&["completion_tokens", "eval_count"]),
    )
}

/// An Anthropic message: its text blocks (thinking blocks left out).
pub fn anthropic_message(value: &Value) -> Result<Reply, String> {
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
    let cut_off = value.get("stop_reason").and_then(Value::as_str) == Some("max_tokens");
    reply(
        without_thinking(&block_text("text", "text")),
        &block_text("thinking", "thinking"),
        cut_off,
        usage("input_tokens")
            + usage("cache_creation_input_tokens")
            + usage("cache_read_input_tokens"),
        usage("output_tokens"),
    )
}

fn reply(
    text: String,
    reasoning: &str,
    cut_off: bool,
    tokens_in: u64,
    tokens_out: u64,
) -> Result<Reply, String> {
    let text = if text.trim().is_empty() && EDIT_MARKERS.iter().any(|m| reasoning.contains(m)) {
        without_thinking(reasoning)
    } else {
        text
    };
    if text.trim().is_empty() {
        return Err(if cut_off {
            "it was cut off at the token limit before it answered (while reasoning)".into()
        } else {
            "the answer is empty".into()
        });
    }
    Ok(Reply {
        text,
        tokens_in,
        tokens_out,
        cut_off,
    })
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
