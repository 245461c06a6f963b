//! The pure rules of thread writes, apart from the thread's lock and store: how a state write's
//! typed fields merge into the thread's (the reference's merge: objects deep-merged, `null`
//! ignored), which client messages are new (a message the thread already holds, unchanged, is
//! skipped; a different message under a taken id is refused), and which messages belong to a
//! tool call and its result (never deleted alone).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::wire::{ContentBlock, Message, Role};
use crate::{ErrorCode, RunError};

/// `given` merged into `current`: a `null` keeps the current value, an object merges into an
/// object key by key (recursively), anything else replaces.
pub(crate) fn merge_fields(current: &Map<String, Value>, given: Map<String, Value>) -> Map<String, Value> {
    let mut merged = current.clone();
    for (key, value) in given {
        merge_into(&mut merged, key, value);
    }
    merged
}

fn merge_into(target: &mut Map<String, Value>, key: String, value: Value) {
    match value {
        Value::Null => {}
        Value::Object(given) => match target.get_mut(&key) {
            Some(Value::Object(current)) => {
                for (inner_key, inner_value) in given {
                    merge_into(current, inner_key, inner_value);
                }
            }
            _ => {
                let mut fresh = Map::new();
                for (inner_key, inner_value) in given {
                    merge_into(&mut fresh, inner_key, inner_value);
                }
                target.insert(key, Value::Object(fresh));
            }
        },
        other => {
            target.insert(key, other);
        }
    }
}

/// The messages of `given` the thread does not hold yet, each with its index in `given`. A
/// message whose id the thread (or an earlier message of `given`) already has is skipped when
/// it is exactly that message, and refused (`MESSAGE_ID_TAKEN`) when it differs: a thread's
/// history is never rewritten. Blank ids are new messages (the engine gives them ids).
pub(crate) fn new_messages(
    existing: &[Arc<Message>],
    given: Vec<Message>,
    label: &str,
) -> Result<Vec<(usize, Message)>, RunError> {
    let mut fresh: Vec<(usize, Message)> = Vec::new();
    let mut ids: BTreeSet<String> = BTreeSet::new();
    for (index, message) in given.into_iter().enumerate() {
        if message.message_id.trim().is_empty() {
            fresh.push((index, message));
            continue;
        }
        if let Some(held) = existing.iter().find(|held| held.message_id == message.message_id) {
            if **held == message {
                continue;
            }
            return Err(id_taken(label, index, &message.message_id));
        }
        if !ids.insert(message.message_id.clone()) {
            return Err(id_taken(label, index, &message.message_id));
        }
        fresh.push((index, message));
    }
    Ok(fresh)
}

fn id_taken(label: &str, index: usize, id: &str) -> RunError {
    RunError::new(
        ErrorCode::MessageIdTaken,
        format!(
            "{label}[{index}] has id '{id}', which another message of this thread has; messages are never rewritten"
        ),
    )
}

/// Whether a message is half of a tool exchange: an assistant message that calls tools, or a
/// tool result. Deleting one alone would leave a call without its result or a result without
/// its call.
pub(crate) fn in_tool_exchange(message: &Message) -> bool {
    message.role == Role::Tool
        || message.tools_calls.as_ref().is_some_and(|calls| !calls.is_empty())
        || message
            .content
            .iter()
            .any(|block| block.is_tool_call() || matches!(block, ContentBlock::ToolResult { .. }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn user(id: &str, text: &str) -> Message {
        Message::text(id, Role::User, text, 1.0)
    }

    #[test]
    fn merge_deep_merges_objects_ignores_null_and_replaces_the_rest() {
        let current = object(json!({"a": 1, "tier": {"name": "gold", "since": 2020}, "tags": ["x"]}));
        let given = object(json!({"a": null, "tier": {"since": 2021, "extra": null}, "tags": ["y"], "b": "new"}));
        let merged = merge_fields(&current, given);
        assert_eq!(
            Value::Object(merged),
            json!({"a": 1, "tier": {"name": "gold", "since": 2021}, "tags": ["y"], "b": "new"})
        );
    }

    #[test]
    fn merge_of_an_object_over_a_scalar_replaces_it_without_its_nulls() {
        let current = object(json!({"a": 3}));
        let merged = merge_fields(&current, object(json!({"a": {"k": 1, "gone": null}})));
        assert_eq!(Value::Object(merged), json!({"a": {"k": 1}}));
    }

    #[test]
    fn held_messages_are_skipped_and_a_rewrite_under_a_taken_id_is_refused() {
        let existing = vec![Arc::new(user("m1", "hello"))];
        let fresh = new_messages(
            &existing,
            vec![user("m1", "hello"), user("", "new"), user("m2", "two")],
            "messages",
        );
        let fresh = fresh.map_err(|error| error.message).unwrap_or_default();
        let indexes: Vec<usize> = fresh.iter().map(|(index, _)| *index).collect();
        assert_eq!(indexes, vec![1, 2]);

        let refused = new_messages(&existing, vec![user("m1", "changed")], "state.context");
        let error = refused.err().map(|error| (error.code, error.message));
        assert_eq!(
            error,
            Some((
                ErrorCode::MessageIdTaken,
                "state.context[0] has id 'm1', which another message of this thread has; messages are never rewritten"
                    .to_owned()
            ))
        );
        let twice = new_messages(&[], vec![user("m3", "a"), user("m3", "a")], "messages");
        assert_eq!(twice.err().map(|error| error.code), Some(ErrorCode::MessageIdTaken));
    }

    #[test]
    fn calls_and_results_are_tool_exchanges_and_plain_text_is_not() {
        let mut call = Message::text("a1", Role::Assistant, "", 1.0);
        call.content = vec![ContentBlock::ToolCall {
            id: "c1".to_owned(),
            name: "t".to_owned(),
            args: json!({}),
            tool_type: None,
        }];
        let mut result = Message::text("r1", Role::Tool, "", 1.0);
        result.content = vec![ContentBlock::ToolResult {
            call_id: "c1".to_owned(),
            output: json!("ok"),
            is_error: false,
            status: None,
        }];
        assert!(in_tool_exchange(&call));
        assert!(in_tool_exchange(&result));
        assert!(!in_tool_exchange(&user("u1", "hi")));
        assert!(!in_tool_exchange(&Message::text("a2", Role::Assistant, "done", 1.0)));
        let fresh = new_messages(&[call.clone().into()], vec![call], "state.context");
        assert_eq!(fresh.map(|fresh| fresh.len()).ok(), Some(0));
    }
}
