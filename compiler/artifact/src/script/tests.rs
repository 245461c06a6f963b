//! Unit tests of rule selection, templates and conversions.

use serde_json::{Value, json};

use super::*;
use crate::model::Rule;

fn refund_script() -> Script {
    let turns = serde_json::from_value(json!([
        {"kind": "tool", "tool": "issue_refund",
         "arguments": {"order_id": "{order}", "amount_cents": "{amount:cents}", "note": ["for {order}"]}},
        {"kind": "text", "text": "{result}"}
    ]))
    .unwrap();
    Script {
        turns: Vec::new(),
        rules: vec![Rule {
            pattern: r"(?i)refund order (?<order>[0-9]+),? *(?<amount>[0-9]+(?:\.[0-9]{1,2})?)".into(),
            turns,
        }],
        fallback: Some(Turn::Text {
            text: "I can refund an order.".into(),
        }),
    }
}

#[test]
fn a_matching_rule_fills_captures_and_converts_cents() {
    let script = refund_script();
    let selection = select(&script, "Refund order 1042, 59.00").unwrap();
    assert_eq!(selection.rule, Some(0));
    let turn = selection.render(0, None).unwrap();
    assert_eq!(
        serde_json::to_value(&turn).unwrap(),
        json!({"kind": "tool", "tool": "issue_refund",
               "arguments": {"order_id": "1042", "amount_cents": 5900, "note": ["for 1042"]}})
    );
    let text = selection.render(1, Some("Refunded 5900 cents")).unwrap();
    assert_eq!(
        text,
        Turn::Text {
            text: "Refunded 5900 cents".into()
        }
    );
    assert_eq!(
        selection.render(2, None),
        Err(ScriptError::OutOfTurns { count: 2, index: 2 })
    );
}

#[test]
fn no_match_plays_the_fallback_or_fails_without_one() {
    let mut script = refund_script();
    let selection = select(&script, "hello").unwrap();
    assert_eq!(selection.rule, None);
    assert_eq!(
        selection.render(0, None).unwrap(),
        Turn::Text {
            text: "I can refund an order.".into()
        }
    );
    script.fallback = None;
    assert_eq!(select(&script, "hello"), Err(ScriptError::NoRuleMatches));
}

#[test]
fn fixed_turns_have_no_captures() {
    let script = Script {
        turns: vec![Turn::Text {
            text: "{result}".into(),
        }],
        rules: Vec::new(),
        fallback: None,
    };
    let selection = select(&script, "anything").unwrap();
    assert_eq!(selection.render(0, None), Err(ScriptError::NoResult));
    assert_eq!(
        selection.render(0, Some("done")).unwrap(),
        Turn::Text { text: "done".into() }
    );
}

#[test]
fn conversions() {
    let cents = |s: &str| Conversion::Cents.convert(s);
    assert_eq!(cents("59.00"), Some(json!(5900)));
    assert_eq!(cents("59"), Some(json!(5900)));
    assert_eq!(cents("59.5"), Some(json!(5950)));
    assert_eq!(cents("0.07"), Some(json!(7)));
    for bad in ["59.", ".5", "59.001", "-1", "5x", "", "99999999999999999999"] {
        assert_eq!(cents(bad), None, "{bad}");
    }
    assert_eq!(Conversion::Int.convert(" 42 "), Some(json!(42)));
    assert_eq!(Conversion::Int.convert("4.2"), None);
    assert_eq!(Conversion::Number.convert("4.25"), Some(json!(4.25)));
    assert_eq!(Conversion::Number.convert("7"), Some(json!(7)));
    assert_eq!(Conversion::Number.convert("NaN"), None);
    assert_eq!(Conversion::from_name("euros"), None);
    assert!(Conversion::Cents.fits("integer") && !Conversion::Number.fits("integer"));
}

#[test]
fn templates_read_escapes_and_leave_other_braces_alone() {
    assert_eq!(
        pieces(r"a \{b} {c} {d:int} {not a name} {"),
        vec![
            Piece::Literal("a {b} ".into()),
            Piece::Placeholder {
                name: "c",
                conversion: None
            },
            Piece::Literal(" ".into()),
            Piece::Placeholder {
                name: "d",
                conversion: Some("int")
            },
            Piece::Literal(" {not a name} {".into()),
        ]
    );
    assert_eq!(whole_placeholder("{x:cents}"), Some(("x", Some("cents"))));
    assert_eq!(whole_placeholder(" {x}"), None);
}

#[test]
fn errors_at_play_time() {
    let script = Script {
        turns: Vec::new(),
        rules: vec![Rule {
            pattern: "(?<n>[a-z]+)".into(),
            turns: vec![
                Turn::Text { text: "{n:int}".into() },
                Turn::Tool {
                    tool: "t".into(),
                    arguments: [("n".to_string(), Value::from("{n:int}"))].into_iter().collect(),
                },
                Turn::Text {
                    text: "{missing}".into(),
                },
            ],
        }],
        fallback: None,
    };
    let selection = select(&script, "abc").unwrap();
    assert!(matches!(
        selection.render(0, None),
        Err(ScriptError::BadConversion { .. })
    ));
    assert!(matches!(
        selection.render(1, None),
        Err(ScriptError::DoesNotConvert { .. })
    ));
    assert_eq!(
        selection.render(2, None),
        Err(ScriptError::UnknownCapture("missing".into()))
    );
    let bad = Script {
        turns: Vec::new(),
        rules: vec![Rule {
            pattern: "(".into(),
            turns: Vec::new(),
        }],
        fallback: None,
    };
    assert!(matches!(select(&bad, "x"), Err(ScriptError::BadRegex { rule: 0, .. })));
}
