//! `autocoder heal` with tool calling: the catalogue's `edit_file` and `write_file` offered to
//! loopback fake OpenAI and Anthropic servers, the calls they script applied in heal's copy, and
//! each call answered by its id in the next request; a server that refuses tools is asked again
//! without them.

use serde_json::{json, Value};

use crate::fake_server::{FakeServer, Reply};
use crate::heal::{heal_of, no_secret_in, pricing, shop, shop_on_anthropic, CHAT};

const DISCOUNT_OLD: &str = "    return price_cents * (100 + percent) // 100\n";
const DISCOUNT_NEW: &str = "    return price_cents * (100 - percent) // 100\n";

/// A chat completion holding `message` (its role added), finished for `finish`.
fn chat_message(message: Value, finish: &str) -> Reply {
    let mut message = message;
    message["role"] = "assistant".into();
    Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "fake-coder",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 50}})
        .to_string(),
    )
}

fn body_of(request: &crate::fake_server::Request) -> Value {
    serde_json::from_str(&request.body).unwrap()
}

#[test]
fn edit_file_calls_are_applied_and_each_is_answered_by_its_id() {
    let first = chat_message(
        json!({"content": null, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "edit_file",
             "arguments": json!({"path": "shop/pricing.py", "old_string": DISCOUNT_OLD,
                                 "new_string": DISCOUNT_NEW}).to_string()}},
            {"id": "call_b", "type": "function", "function": {"name": "read_file",
             "arguments": "{\"path\": \"shop/pricing.py\"}"}},
            {"id": "call_c", "type": "function", "function": {"name": "edit_file",
             "arguments": "{\"path\": \"shop/pricing.py\", \"old_string\": "}}]}),
        "tool_calls",
    );
    // As Ollama sends calls: arguments as an object, no id, `finish_reason: stop`.
    let second = chat_message(
        json!({"content": "", "tool_calls": [{"function": {"name": "edit_file", "arguments": {
            "path": "shop/pricing.py", "old_string": "> 50:", "new_string": ">= 50:"}}},
            {"function": {"name": "edit_file", "arguments": {
            "path": "shop/pricing.py", "old_string": "> 10:", "new_string": ">= 10:"}}}]}),
        "stop",
    );
    let server = FakeServer::start(vec![(CHAT, vec![first, second])]);
    let run = shop(&server).run().expect_status(0);
    let heal = heal_of(&run);
    assert_eq!(heal["status"], "green", "{heal:#}");
    assert!(pricing(&run).contains("(100 - percent)") && pricing(&run).contains(">= 10:"));
    let attempt = &heal["attempts"][0];
    assert_eq!(attempt["edits"][0]["applied"], true, "{attempt:#}");
    let problems = attempt["problems"].to_string();
    assert!(
        problems.contains("call_b") && problems.contains("no tool `read_file`"),
        "{problems}"
    );
    assert!(
        problems.contains("call_c") && problems.contains("not JSON"),
        "{problems}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let body = body_of(&requests[0]);
    let tools = body["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["edit_file", "write_file"]);
    // The catalogue's own schema, as the MCP server serves it.
    assert!(tools[0]["function"]["parameters"]["properties"]["old_string"].is_object());
    assert!(tools[0]["function"]["description"]
        .as_str()
        .unwrap()
        .contains("exact string"));
    assert_eq!(body["tool_choice"], "auto");

    let messages = body_of(&requests[1])["messages"]
        .as_array()
        .unwrap()
        .clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "tool",
            "user"
        ]
    );
    let calls = &messages[2]["tool_calls"];
    assert_eq!(calls[0]["id"], "call_a");
    assert_eq!(
        calls[2]["function"]["arguments"], "{}",
        "invalid arguments go back as JSON"
    );
    let result = |index: usize| {
        (
            messages[index]["tool_call_id"].clone(),
            messages[index]["content"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(result(3).0, "call_a");
    assert!(
        result(3).1.starts_with("applied to shop/pricing.py"),
        "{}",
        result(3).1
    );
    assert_eq!(result(4).0, "call_b");
    assert!(
        result(4).1.contains("no tool `read_file`"),
        "{}",
        result(4).1
    );
    assert_eq!(result(5).0, "call_c");
    assert!(result(5).1.contains("not JSON"), "{}", result(5).1);
    // The new message shows the state after the first attempt's change.
    let latest = messages[6]["content"].as_str().unwrap();
    assert!(latest.contains("(100 - percent)"), "{latest}");
    assert!(
        latest.contains("test_ten_items_get_ten_percent"),
        "{latest}"
    );
    no_secret_in(&requests);
}

#[test]
fn anthropic_tool_use_is_answered_with_tool_results_and_its_turn_sent_back_unchanged() {
    let original = std::fs::read_to_string(crate::util::testdata(
        "projects/shop-python/shop/pricing.py",
    ))
    .unwrap();
    let fixed = original
        .replace(DISCOUNT_OLD, DISCOUNT_NEW)
        .replace("> 50:", ">= 50:")
        .replace("> 10:", ">= 10:");
    let message = |content: Value, stop: &str| {
        Reply::json(
            200,
            &json!({"id": "msg_1", "type": "message", "role": "assistant", "content": content,
                "stop_reason": stop, "usage": {"input_tokens": 900, "output_tokens": 60}})
            .to_string(),
        )
    };
    let first_content = json!([
        {"type": "thinking", "thinking": "The sign is wrong.", "signature": "sig-1"},
        {"type": "text", "text": "Fixing the discount."},
        {"type": "tool_use", "id": "toolu_1", "name": "edit_file",
         "input": {"path": "shop/pricing.py", "old_string": DISCOUNT_OLD, "new_string": DISCOUNT_NEW}}]);
    let server = FakeServer::start(vec![(
        "POST /v1/messages",
        vec![
            message(first_content.clone(), "tool_use"),
            message(
                json!([{"type": "tool_use", "id": "toolu_2", "name": "write_file",
                        "input": {"path": "shop/pricing.py", "content": fixed}}]),
                "tool_use",
            ),
        ],
    )]);
    let run = shop_on_anthropic(&server).run().expect_status(0);
    let heal = heal_of(&run);
    assert_eq!(heal["status"], "green", "{heal:#}");
    assert_eq!(heal["attempts"][1]["edits"][0]["matched"], "whole_file");
    assert_eq!(pricing(&run), fixed);

    let requests = server.requests();
    let first = body_of(&requests[0]);
    assert_eq!(first["tools"][0]["name"], "edit_file");
    assert!(first["tools"][1]["input_schema"]["properties"]["content"].is_object());
    assert_eq!(first["tool_choice"], json!({"type": "auto"}));
    let messages = body_of(&requests[1])["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": first_content})
    );
    let answer = messages[2]["content"].as_array().unwrap();
    assert_eq!(answer[0]["type"], "tool_result");
    assert_eq!(answer[0]["tool_use_id"], "toolu_1");
    assert_eq!(answer[0]["is_error"], false);
    assert_eq!(answer[1]["type"], "text");
    assert!(answer[1]["text"]
        .as_str()
        .unwrap()
        .contains("(100 - percent)"));
    no_secret_in(&requests);
}

#[test]
fn a_server_that_refuses_tools_is_asked_again_without_them_and_not_offered_them_again() {
    let refusal = Reply::json(
        500,
        r#"{"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}}"#,
    );
    let text = |text: &str| chat_message(json!({"content": text}), "stop");
    let fix_discount = format!(
        "shop/pricing.py\n```python\n<<<<<<< SEARCH\n{DISCOUNT_OLD}=======\n{DISCOUNT_NEW}>>>>>>> REPLACE\n```\n"
    );
    let fix_bulk = "shop/pricing.py\n```python\n<<<<<<< SEARCH\n    if quantity > 50:\n        return 20\n    if quantity > 10:\n=======\n    if quantity >= 50:\n        return 20\n    if quantity >= 10:\n>>>>>>> REPLACE\n```\n";
    let server = FakeServer::start(vec![(
        CHAT,
        vec![refusal, text(&fix_discount), text(fix_bulk)],
    )]);
    let run = shop(&server).run().expect_status(0);
    assert_eq!(heal_of(&run)["status"], "green", "{}", run.stderr());
    assert!(
        run.stderr().contains("refused tool calling"),
        "{}",
        run.stderr()
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(body_of(&requests[0])["tools"].is_array());
    for request in &requests[1..] {
        let body = body_of(request);
        assert!(
            body.get("tools").is_none() && body.get("tool_choice").is_none(),
            "{body}"
        );
    }
}
