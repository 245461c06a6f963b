use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::*;
use crate::wire::{ContentBlock, FunctionCall, Message, Role, ToolCall};

/// A message of `role` with `text`, added by `node` when there is one.
fn said(id: &str, role: Role, text: &str, node: Option<&str>) -> Arc<Message> {
    Arc::new(message(id, role, text, node))
}

fn message(id: &str, role: Role, text: &str, node: Option<&str>) -> Message {
    let mut message = Message::text(id, role, text, 1.0);
    if let Some(node) = node {
        message.metadata.insert("node".to_owned(), json!(node));
    }
    message
}

/// An assistant message of `node` making the calls `ids`.
fn calling(id: &str, node: &str, ids: &[&str]) -> Arc<Message> {
    let mut message = message(id, Role::Assistant, "", Some(node));
    message.content.clear();
    message.tools_calls = Some(
        ids.iter()
            .map(|call| ToolCall {
                id: (*call).to_owned(),
                kind: "function".to_owned(),
                function: FunctionCall {
                    name: "lookup".to_owned(),
                    arguments: "{}".to_owned(),
                },
            })
            .collect(),
    );
    Arc::new(message)
}

/// The result of the call `call`, added by `node`.
fn result(id: &str, node: &str, call: &str) -> Arc<Message> {
    let mut message = message(id, Role::Tool, "", Some(node));
    message.content = vec![ContentBlock::ToolResult {
        call_id: call.to_owned(),
        output: json!("done"),
        is_error: false,
        status: None,
    }];
    message.metadata.insert("tool_call_id".to_owned(), json!(call));
    Arc::new(message)
}

/// The ids of what is shown, in order.
fn ids(shown: &[Arc<Message>]) -> Vec<&str> {
    shown.iter().map(|message| message.message_id.as_str()).collect()
}

/// A conversation: the client's message, `first`'s call, its result and its answer, the
/// client's next message, `first`'s answer to it; then `second`'s own turn so far: a call and
/// its result.
fn conversation() -> Vec<Arc<Message>> {
    vec![
        said("u1", Role::User, "hello", None),
        calling("a1", "first", &["c1"]),
        result("t1", "first", "c1"),
        said("a2", Role::Assistant, "found it", Some("first")),
        said("u2", Role::User, "and then?", None),
        said("a3", Role::Assistant, "then this", Some("first")),
        calling("b1", "second", &["c2"]),
        result("t2", "second", "c2"),
    ]
}

fn show(input: &AgentInput, context: &[Arc<Message>]) -> Vec<String> {
    let mut state = Map::new();
    state.insert("topic".to_owned(), Value::String("tides".to_owned()));
    shown(input, context, "second", "Check it.", &state, 2.0)
        .iter()
        .map(|message| format!("{}:{}", message.message_id, message.text_content()))
        .collect()
}

#[test]
fn conversation_is_everything_as_it_is() {
    let context = conversation();
    let shown = shown(
        &AgentInput::Conversation,
        &context,
        "second",
        "Check it.",
        &Map::new(),
        2.0,
    );
    assert!(matches!(shown, Cow::Borrowed(_)), "nothing is copied");
    assert_eq!(ids(&shown), ids(&context));
}

#[test]
fn none_is_the_own_turn_led_by_the_prompt() {
    let context = conversation();
    assert_eq!(show(&AgentInput::None, &context), ["input:Check it.", "b1:", "t2:done"]);
    // Before its first call, the agent sees its prompt as the one user message.
    let fresh = context.get(..6).unwrap();
    assert_eq!(show(&AgentInput::None, fresh), ["input:Check it."]);
}

#[test]
fn last_counts_back_from_the_own_turn() {
    let context = conversation();
    // The last message before the turn is `first`'s answer, not a user message: led by the prompt.
    assert_eq!(
        show(&AgentInput::Last { count: 1 }, &context),
        ["input:Check it.", "a3:then this", "b1:", "t2:done"]
    );
    // Starting at a user message: shown as it is, without a copy.
    let shown = shown(
        &AgentInput::Last { count: 2 },
        &context,
        "second",
        "Check it.",
        &Map::new(),
        2.0,
    );
    assert!(matches!(shown, Cow::Borrowed(_)));
    assert_eq!(ids(&shown), ["u2", "a3", "b1", "t2"]);
    // More than there is: everything.
    assert_eq!(
        ids(&super::shown(
            &AgentInput::Last { count: 1000 },
            &context,
            "second",
            "",
            &Map::new(),
            2.0
        )),
        ids(&context)
    );
}

#[test]
fn last_never_starts_with_a_result_whose_call_was_cut_off() {
    let context = conversation();
    // The last 4 before the turn would start at `t1`, the result of `c1`: the window reaches
    // back to `a1`, which holds the call.
    assert_eq!(
        show(&AgentInput::Last { count: 4 }, &context),
        [
            "input:Check it.",
            "a1:",
            "t1:done",
            "a2:found it",
            "u2:and then?",
            "a3:then this",
            "b1:",
            "t2:done"
        ]
    );
}

#[test]
fn a_window_reaches_back_past_several_calls_and_drops_a_result_with_no_call() {
    let context = vec![
        said("u1", Role::User, "hello", None),
        calling("a1", "first", &["c1", "c2"]),
        result("t1", "first", "c1"),
        result("t2", "first", "c2"),
        said("a2", Role::Assistant, "both done", Some("first")),
    ];
    // From `t2`: its call is in `a1`, so `t1` is shown as well.
    assert_eq!(
        ids(&shown(
            &AgentInput::Last { count: 2 },
            &context,
            "second",
            "p",
            &Map::new(),
            2.0
        )),
        ["input", "a1", "t1", "t2", "a2"]
    );
    let orphaned = vec![
        result("t9", "first", "gone"),
        said("a2", Role::Assistant, "done", Some("first")),
    ];
    assert_eq!(
        ids(&shown(
            &AgentInput::Last { count: 2 },
            &orphaned,
            "second",
            "p",
            &Map::new(),
            2.0
        )),
        ["input", "a2"]
    );
}

#[test]
fn a_template_is_one_user_message_from_the_state_then_the_own_turn() {
    let context = conversation();
    let template = AgentInput::Template {
        template: "Look into {topic}".to_owned(),
    };
    assert_eq!(show(&template, &context), ["input:Look into tides", "b1:", "t2:done"]);
    let shown = shown(&template, &context, "second", "Check it.", &Map::new(), 2.0);
    assert_eq!(shown.first().map(|message| message.role), Some(Role::User));
}

#[test]
fn the_own_turn_is_only_the_trailing_messages_of_this_node() {
    // `second` spoke earlier, but the client spoke after it: that was another visit.
    let context = vec![
        said("u1", Role::User, "hello", None),
        said("b0", Role::Assistant, "earlier", Some("second")),
        said("u2", Role::User, "again", None),
    ];
    assert_eq!(own_turn_start(&context, "second"), 3);
    assert_eq!(show(&AgentInput::None, &context), ["input:Check it."]);
    assert_eq!(own_turn_start(&conversation(), "second"), 6);
    assert_eq!(own_turn_start(&[], "second"), 0);
}
