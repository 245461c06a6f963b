//! The compiler and the engine read expressions alike: a program is checked and lowered by
//! `tenx-compiler`, and the engine's `expr` functions render its templates, evaluate its route
//! and risk rules and write its state paths exactly as `docs/language.md` says. What `tenxc check`
//! proves about a template or a condition is what the runtime does with the sealed text.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

use serde_json::{Map, Value, json};
use tenx_artifact::{Artifact, Risk, TrustPolicy, load, seal};
use tenx_compiler::LintLevels;
use tenx_engine::expr::{call_risk, choose, render, render_tree, write_path};

/// A refund desk: a tool with risk rules and an approval, an agent whose prompt escapes braces,
/// an interrupt with a `value`, and a route with label and condition arms.
const PROGRAM: &str = r#"import std.approval.yes_no

model desk_model {
  provider = scripted
}

tool issue_refund(order_id: string "The order", amount_cents: int(min: 1) "The amount, in cents") -> string {
  description = "Refund part or all of an order."
  risk = low
  risk_rules {
    high   = "amount_cents > 1000"
    medium = "amount_cents >= 500 or order_id in [\"vip-1\", \"vip-2\"]"
  }
  approval {
    message   = "Refund {amount_cents} cents for order {order_id}? It costs \$, see \{policy\}."
    approvers = [role("support_lead")]
    target    = "order {order_id}"
  }
  idempotency_key = "refund-{order_id}-{amount_cents}"
  run = http(POST, "${PAYMENTS_URL}/refunds", timeout: 10s)
}

agent triage {
  model  = desk_model
  prompt = """
    Customer {customer.name} (tier {customer.tier}) asks: {question}
    Answer like \{"verdict": "refund"\}.
    """
  output = {
    "type": "object",
    "properties": { "verdict": { "enum": ["refund", "answer", "escalate"] } },
    "required": ["verdict"]
  }
  tools  = [issue_refund]
}

agent closer {
  model  = desk_model
  prompt = "Close the case of {customer.name}: \u{1F600} {question}"
}

interrupt human {
  message   = "Escalate \"{question}\" for {customer.name}?"
  value     = { question: "{question}", customer: "{customer}", line: "tier {customer.tier}", score: "{score}" }
  response  = yes_no
}

graph desk {
  entry = triage
  nodes = [triage, human, closer]

  state {
    question: string "What the customer asks"
    customer: {
      "type": "object",
      "properties": { "name": { "type": "string" }, "tier": { "type": "string" } }
    } "Who asks"
    score: number = 0.5 "How sure triage is"
    verdict?: enum("refund", "answer", "escalate") "What triage decided"
  }

  route triage by verdict {
    "refund"                                          -> closer
    when customer.tier == "gold" and not score < 0.2 -> human
    "escalate"                                        -> human
    else                                              -> END
  }
  human  -> closer
  closer -> END
}
"#;

/// The program checked (warnings only), lowered, sealed and loaded back, as the runtime gets it.
fn artifact() -> Artifact {
    let name = "tests/expr_agreement.tenx";
    let (mut sources, file, _) = tenx_tests::load_text(name, PROGRAM, tenxc::disk::MAX_SOURCE_BYTES);
    let checked = tenx_compiler::check(&mut sources, file, &LintLevels::default());
    assert!(
        !checked.diagnostics.iter().any(|d| d.is_error()),
        "{:?}",
        checked.diagnostics
    );
    let facts = tenx_compiler::check::Facts::new(&checked.program, &sources);
    let bytes = seal(tenx_compiler::lower::lower(&facts)).unwrap().to_bytes();
    load(&bytes, &TrustPolicy::signature_optional()).unwrap().artifact
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn state() -> Map<String, Value> {
    object(json!({
        "question": "Where is {my} refund?",
        "customer": { "name": "Zoë", "tier": "gold" },
        "score": 0.5
    }))
}

#[test]
fn templates_render_as_the_compiler_checked_them() {
    let artifact = artifact();
    let s = state();
    assert_eq!(
        render(&artifact.agents["triage"].prompt, &s).unwrap(),
        "Customer Zoë (tier gold) asks: Where is {my} refund?\nAnswer like {\"verdict\": \"refund\"}."
    );
    assert_eq!(
        render(&artifact.agents["closer"].prompt, &s).unwrap(),
        "Close the case of Zoë: \u{1F600} Where is {my} refund?"
    );
    let approval = artifact.tools["issue_refund"].approval.as_ref().unwrap();
    let arguments = object(json!({ "order_id": "A-7", "amount_cents": 1500 }));
    assert_eq!(
        render(&approval.message, &arguments).unwrap(),
        "Refund 1500 cents for order A-7? It costs $, see {policy}."
    );
    assert_eq!(
        render(approval.target.as_ref().unwrap(), &arguments).unwrap(),
        "order A-7"
    );
    let key = artifact.tools["issue_refund"].idempotency_key.as_ref().unwrap();
    assert_eq!(render(key, &arguments).unwrap(), "refund-A-7-1500");
    // An integral float renders like the integer, so the key does not depend on how it was written.
    let as_float = object(json!({ "order_id": "A-7", "amount_cents": 1500.0 }));
    assert_eq!(render(key, &as_float).unwrap(), "refund-A-7-1500");
}

#[test]
fn an_interrupt_value_keeps_json_types_and_shows_unset_as_null() {
    let artifact = artifact();
    let interrupt = &artifact.interrupts["human"];
    assert_eq!(
        render(&interrupt.message, &state()).unwrap(),
        "Escalate \"Where is {my} refund?\" for Zoë?"
    );
    let mut s = state();
    s.remove("score");
    let value = render_tree(interrupt.value.as_ref().unwrap(), &s).unwrap();
    assert_eq!(
        value,
        json!({
            "question": "Where is {my} refund?",
            "customer": { "name": "Zoë", "tier": "gold" },
            "line": "tier gold",
            "score": null
        })
    );
}

#[test]
fn the_route_takes_the_first_matching_arm() {
    let artifact = artifact();
    let route = &artifact.graphs["desk"].routes[0];
    let cases = [
        (json!({ "verdict": "refund" }), "closer"),
        (json!({ "verdict": "answer" }), "human"),
        (json!({ "verdict": "answer", "score": 0.1 }), "END"),
        (json!({ "verdict": "escalate", "score": 0.1 }), "human"),
        (json!({ "verdict": "answer", "customer": { "tier": "silver" } }), "END"),
        // An unset field makes `score < 0.2` false, so `not` of it is true.
        (json!({ "verdict": null, "score": null }), "human"),
        (json!({ "customer": null }), "END"),
    ];
    for (changes, expected) in cases {
        let mut s = state();
        for (key, value) in object(changes.clone()) {
            s.insert(key, value);
        }
        assert_eq!(choose(route, &s), Some(expected), "{changes}");
    }
}

#[test]
fn risk_rules_give_each_call_its_risk() {
    let artifact = artifact();
    let tool = &artifact.tools["issue_refund"];
    assert_eq!(tool.risk, Risk::High, "the artifact's risk is the worst case");
    let cases = [
        (json!({ "order_id": "A-1", "amount_cents": 100 }), (Risk::Low, None)),
        (
            json!({ "order_id": "A-1", "amount_cents": 500 }),
            (Risk::Medium, Some(1)),
        ),
        (
            json!({ "order_id": "vip-2", "amount_cents": 1 }),
            (Risk::Medium, Some(1)),
        ),
        (
            json!({ "order_id": "vip-2", "amount_cents": 1001 }),
            (Risk::High, Some(0)),
        ),
        (json!({ "order_id": "A-1" }), (Risk::Low, None)),
    ];
    for (arguments, expected) in cases {
        assert_eq!(call_risk(tool, &arguments), expected, "{arguments}");
    }
}

#[test]
fn a_result_written_into_an_object_field_keeps_its_siblings() {
    let mut s = state();
    write_path(&mut s, &["customer".into(), "order".into()], json!({ "id": "1042" })).unwrap();
    write_path(&mut s, &["ticket".into(), "order".into()], json!("new")).unwrap();
    assert_eq!(
        s["customer"],
        json!({ "name": "Zoë", "tier": "gold", "order": { "id": "1042" } })
    );
    assert_eq!(s["ticket"], json!({ "order": "new" }));
}
