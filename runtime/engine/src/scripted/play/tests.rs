use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::wire::{ContentBlock, Message, Role};

fn script(value: Value) -> Script {
    serde_json::from_value(value).unwrap()
}

fn fixed() -> Script {
    script(json!({
        "turns": [{"kind": "text", "text": "one"}, {"kind": "tool", "tool": "lookup", "arguments": {"id": "7"}}],
        "rules": [],
        "fallback": null
    }))
}

fn refunds() -> Script {
    script(json!({
        "turns": [],
        "rules": [{
            "match": "(?i)refund order (?<order>[0-9]+),? *(?<amount>[0-9]+(?:\\.[0-9]{1,2})?)",
            "turns": [
                {"kind": "tool", "tool": "issue_refund", "arguments": {"order_id": "{order}", "amount_cents": "{amount:cents}"}},
                {"kind": "text", "text": "{result}"}
            ]
        }, {
            "match": "hello",
            "turns": [{"kind": "text", "text": "hi"}]
        }],
        "fallback": {"kind": "text", "text": "Write: Refund order 1042, 59.00"}
    }))
}

fn text(turn: &Turn) -> &str {
    match turn {
        Turn::Text { text } => text,
        Turn::Tool { .. } => panic!("expected a text turn, got {turn:?}"),
    }
}

#[test]
fn fixed_turns_play_in_order_across_runs() {
    let script = fixed();
    let (first, cursor) = play(&script, Cursor::default(), "run_1", "a", None).unwrap();
    assert_eq!(text(&first), "one");
    assert_eq!(
        cursor,
        Cursor {
            turn: 1,
            calls: 0,
            run: None
        }
    );
    // A new run does not restart fixed turns.
    let (second, cursor) = play(&script, cursor, "run_2", "b", None).unwrap();
    assert_eq!(
        second,
        Turn::Tool {
            tool: "lookup".into(),
            arguments: json!({"id": "7"}).as_object().unwrap().clone()
        }
    );
    assert_eq!(cursor.turn, 2);
}

#[test]
fn fixed_turns_run_out_with_a_clear_error() {
    let error = play(
        &fixed(),
        Cursor {
            turn: 2,
            calls: 1,
            run: None,
        },
        "run_1",
        "a",
        None,
    )
    .unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::ScriptExhausted);
    assert_eq!(
        error.message,
        "has no turn left: its 2 fixed turn(s) are all played in this thread, and model call 3 asked for another"
    );
}

#[test]
fn fixed_turns_restart_after_a_rule_cursor() {
    let cursor = Cursor {
        turn: 1,
        calls: 4,
        run: Some(RunPlay {
            id: "run_1".into(),
            rule: Some(0),
            captures: BTreeMap::new(),
        }),
    };
    let (turn, next) = play(&fixed(), cursor, "run_1", "a", None).unwrap();
    assert_eq!(text(&turn), "one");
    assert_eq!(
        next,
        Cursor {
            turn: 1,
            calls: 4,
            run: None
        }
    );
}

#[test]
fn a_rule_is_chosen_when_a_run_starts_and_its_turns_play_in_that_run() {
    let script = refunds();
    let (call, cursor) = play(&script, Cursor::default(), "run_1", "Refund order 1042, 59.5", None).unwrap();
    assert_eq!(
        call,
        Turn::Tool {
            tool: "issue_refund".into(),
            arguments: json!({"order_id": "1042", "amount_cents": 5950})
                .as_object()
                .unwrap()
                .clone()
        }
    );
    let run = cursor.run.clone().unwrap();
    assert_eq!((run.id.as_str(), run.rule, cursor.turn), ("run_1", Some(0), 1));
    assert_eq!(run.captures.get("order").map(String::as_str), Some("1042"));
    // The second call of the run: the rule's next turn, whatever `run_input` says now.
    let (answer, cursor) = play(&script, cursor, "run_1", "ignored", Some("refunded")).unwrap();
    assert_eq!(text(&answer), "refunded");
    assert_eq!(cursor.turn, 2);
}

#[test]
fn a_new_run_matches_the_rules_again() {
    let script = refunds();
    let (_, cursor) = play(&script, Cursor::default(), "run_1", "Refund order 1, 2", None).unwrap();
    let (turn, cursor) = play(&script, cursor, "run_2", "hello there", None).unwrap();
    assert_eq!(text(&turn), "hi");
    assert_eq!(cursor.run.unwrap().rule, Some(1));
}

#[test]
fn the_same_message_twice_is_two_runs() {
    let script = refunds();
    let (_, cursor) = play(&script, Cursor::default(), "run_1", "hello", None).unwrap();
    assert!(play(&script, cursor.clone(), "run_1", "hello", None).is_err());
    let (turn, _) = play(&script, cursor, "run_2", "hello", None).unwrap();
    assert_eq!(text(&turn), "hi");
}

#[test]
fn no_match_plays_the_fallback_once() {
    let script = refunds();
    let (turn, cursor) = play(&script, Cursor::default(), "run_1", "what can you do?", None).unwrap();
    assert_eq!(text(&turn), "Write: Refund order 1042, 59.00");
    assert_eq!(cursor.run.clone().unwrap().rule, None);
    let error = play(&script, cursor, "run_1", "what can you do?", None).unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::ScriptExhausted);
    assert_eq!(
        error.message,
        "has no turn left: the fallback has 1 turn(s), all played in this run, and model call 2 of the run asked for another"
    );
}

#[test]
fn no_match_and_no_fallback_is_exhausted() {
    let script = script(
        json!({"turns": [], "rules": [{"match": "x", "turns": [{"kind": "text", "text": "y"}]}], "fallback": null}),
    );
    let error = play(&script, Cursor::default(), "run_1", "nothing", None).unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::ScriptExhausted);
    assert!(error.message.contains("no rule matches"), "{}", error.message);
}

#[test]
fn a_rule_runs_out_of_turns() {
    let script = refunds();
    let cursor = Cursor {
        turn: 2,
        calls: 1,
        run: Some(RunPlay {
            id: "run_1".into(),
            rule: Some(0),
            captures: BTreeMap::new(),
        }),
    };
    let error = play(&script, cursor, "run_1", "", Some("x")).unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::ScriptExhausted);
    assert!(error.message.contains("rule 0 has 2 turn(s)"), "{}", error.message);
}

#[test]
fn a_cursor_naming_a_missing_rule_is_refused() {
    let cursor = Cursor {
        turn: 0,
        calls: 0,
        run: Some(RunPlay {
            id: "run_1".into(),
            rule: Some(9),
            captures: BTreeMap::new(),
        }),
    };
    let error = play(&refunds(), cursor, "run_1", "", None).unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert!(error.message.contains("rule Some(9)"), "{}", error.message);
    // The fallback named by a script without one.
    let script = script(json!({"turns": [], "rules": [{"match": "x", "turns": []}], "fallback": null}));
    let cursor = Cursor {
        turn: 0,
        calls: 0,
        run: Some(RunPlay {
            id: "run_1".into(),
            rule: None,
            captures: BTreeMap::new(),
        }),
    };
    assert_eq!(
        play(&script, cursor, "run_1", "", None).unwrap_err().kind,
        ModelErrorKind::Refused
    );
}

#[test]
fn result_before_any_tool_result_is_refused() {
    let script = script(json!({"turns": [{"kind": "text", "text": "got {result}"}], "rules": [], "fallback": null}));
    let error = play(&script, Cursor::default(), "run_1", "", None).unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert!(error.message.contains("before any tool result"), "{}", error.message);
}

#[test]
fn a_capture_that_does_not_convert_is_refused() {
    let script = script(json!({
        "turns": [],
        "rules": [{"match": "n=(?<n>\\S+)", "turns": [{"kind": "tool", "tool": "t", "arguments": {"n": "{n:int}"}}]}],
        "fallback": null
    }));
    let error = play(&script, Cursor::default(), "run_1", "n=99999999999999999999", None).unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert!(
        error.message.starts_with("cannot play turn 0 of rule 0"),
        "{}",
        error.message
    );
}

#[test]
fn a_bad_regex_is_refused() {
    let script = script(json!({"turns": [], "rules": [{"match": "(", "turns": []}], "fallback": null}));
    let error = play(&script, Cursor::default(), "run_1", "x", None).unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert!(error.message.starts_with("cannot choose a rule"), "{}", error.message);
}

fn message(role: Role, text: &str) -> Message {
    Message::text("m", role, text, 0.0)
}

fn tool_message(output: Value) -> Message {
    let mut message = message(Role::Tool, "");
    message.content = vec![ContentBlock::ToolResult {
        call_id: "c".into(),
        output,
        is_error: false,
        status: None,
    }];
    message
}

#[test]
fn the_last_result_is_the_last_tool_message_of_the_run() {
    let messages = vec![
        message(Role::User, "first"),
        tool_message(json!("old")),
        message(Role::Assistant, "done"),
        message(Role::User, "second"),
        tool_message(json!("a")),
        tool_message(json!({"ok": true})),
        message(Role::Assistant, ""),
    ];
    let messages: Vec<Arc<Message>> = messages.into_iter().map(Arc::new).collect();
    assert_eq!(last_result(&messages, "second").as_deref(), Some(r#"{"ok":true}"#));
    // A run whose tools have not answered yet has no result, even if an older run's did.
    let fresh = [messages.as_slice(), &[Arc::new(message(Role::User, "third"))]].concat();
    assert_eq!(last_result(&fresh, "third"), None);
    // Without the run's message in view, the whole conversation counts.
    assert_eq!(last_result(&messages, "unknown").as_deref(), Some(r#"{"ok":true}"#));
    assert_eq!(last_result(&[], "x"), None);
}

#[test]
fn call_ids_name_the_model_and_count() {
    assert_eq!(call_id("demo", 1), "call_demo_1");
    assert_eq!(call_id("a_1", 2), "call_a_1_2");
}

#[test]
fn pieces_concatenate_to_the_text() {
    for text in [
        "",
        "x",
        "Refund declined.",
        "I can refund an order. Write, for example: Refund order 1042",
        "ééé ü 日本語のテキスト",
    ] {
        for count in 1..5 {
            let parts = pieces(text, count);
            assert_eq!(parts.concat(), text);
            assert!(parts.len() <= count, "{text:?} in {count}: {parts:?}");
            assert!(parts.iter().all(|p| !p.is_empty()));
        }
    }
    assert_eq!(
        pieces("I can refund an order today", 3),
        vec!["I can refund ", "an order ", "today"]
    );
    assert!(pieces("abc", 0).is_empty());
}
