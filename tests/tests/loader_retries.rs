//! Retry policies in the sealed artifact: what the compiler writes for a tool's own `retry` and
//! a graph's `retry` (defaults filled in, classes sorted, one policy per node), and that an
//! artifact edited by hand and resealed with a correct id cannot sneak a retry past the rules
//! `tenxc check` enforces: ranges, error classes, nodes, and above all that only a call that
//! cannot act twice is retried (`load` refuses it, as `seal` does).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

use serde_json::{Value, json};
use tenx_artifact::seal;
use tenx_compiler::LintLevels;

const PROGRAM: &str = r#"
import std.approval.yes_no

model team_model {
  provider = scripted
}

tool read_order(order_id: string "The order number") -> object {
  description = "Read an order."
  run   = http(GET, "${ORDERS_URL}/orders/lookup", timeout: 5s)
  retry = { attempts: 4, backoff: 500ms, max_backoff: 10s, on: [rate_limited, timeout] }
}

tool refund(order_id: string "The order number") -> string {
  description     = "Refund an order."
  idempotency_key = "refund-{order_id}"
  run             = http(POST, "${ORDERS_URL}/refunds", timeout: 10s)
  retry           = {}
}

agent support {
  model  = team_model
  prompt = "Answer questions about orders."
  tools  = [read_order]
}

interrupt confirm {
  message  = "Refund order {order_id}?"
  response = yes_no
}

graph desk {
  entry = support
  nodes = [support, confirm, refund]
  retry = { support: { attempts: 2, backoff: 2s }, refund: { attempts: 5, on: [server_error] } }

  state {
    order_id: string "The order"
  }

  support -> confirm
  confirm -> refund
  refund  -> END
}
"#;

/// [`PROGRAM`], checked, lowered and sealed, as an envelope to edit.
fn built() -> Value {
    let (mut sources, file, _) = tenx_tests::load_text("retries.tenx", PROGRAM, tenxc::disk::MAX_SOURCE_BYTES);
    let checked = tenx_compiler::check(&mut sources, file, &LintLevels::default());
    let found: Vec<String> = checked
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.code.as_str(), d.message))
        .collect();
    assert!(found.is_empty(), "{found:#?}");
    let facts = tenx_compiler::check::Facts::new(&checked.program, &sources);
    let artifact = tenx_compiler::lower::lower(&facts);
    serde_json::from_slice(&seal(artifact).unwrap().to_bytes()).unwrap()
}

/// An edit of the artifact body.
type Edit = fn(&mut Value);

/// Applies `edit` to a fresh build and returns why `load` refuses the result.
fn refused(edit: impl FnOnce(&mut Value)) -> String {
    let mut envelope = built();
    edit(&mut envelope["artifact"]);
    tenx_tests::reseal_and_load(envelope).expect("the edited artifact loaded")
}

#[test]
fn the_compiler_writes_each_policy_with_its_defaults() {
    let envelope = built();
    let artifact = &envelope["artifact"];
    assert_eq!(
        artifact["tools"]["read_order"]["retry"],
        json!({"attempts": 4, "backoff_ms": 500, "max_backoff_ms": 10000, "on": ["timeout", "rate_limited"]})
    );
    assert_eq!(
        artifact["tools"]["refund"]["retry"],
        json!({"attempts": 3, "backoff_ms": 1000, "max_backoff_ms": 30000,
               "on": ["timeout", "connection", "rate_limited", "server_error"]})
    );
    assert_eq!(
        artifact["graphs"]["desk"]["retries"],
        json!([
            {"node": "refund", "policy": {"attempts": 5, "backoff_ms": 1000, "max_backoff_ms": 30000, "on": ["server_error"]}},
            {"node": "support", "policy": {"attempts": 2, "backoff_ms": 2000, "max_backoff_ms": 30000,
                "on": ["timeout", "connection", "rate_limited", "server_error"]}}
        ])
    );
    assert_eq!(tenx_tests::reseal_and_load(envelope), None);
}

#[test]
fn an_edit_that_retries_a_call_that_could_act_twice_is_refused() {
    // The key dropped: the tool's own policy and the node's policy are both refused.
    let error = refused(|a| a["tools"]["refund"]["idempotency_key"] = Value::Null);
    assert!(
        error.contains("tool `refund` has a retry policy, but it has no `idempotency_key`"),
        "{error}"
    );
    assert!(error.contains("(and 1 more problem)"), "{error}");

    // A safe `GET` turned into a `POST`.
    let error = refused(|a| a["tools"]["read_order"]["run"]["method"] = json!("POST"));
    assert!(error.contains("tool `read_order` has a retry policy"), "{error}");

    // A `GET` whose risk is raised: only a `low` risk call is retried without a key.
    let error = refused(|a| a["tools"]["read_order"]["risk"] = json!("high"));
    assert!(error.contains("tool `read_order` has a retry policy"), "{error}");

    // Run by the client: never retried, even with a key.
    let error = refused(|a| a["tools"]["refund"]["run"] = json!({"kind": "remote"}));
    assert!(error.contains("the client runs it (`remote`)"), "{error}");

    // A policy added at a tool node whose tool has no key (the tool's own policy removed).
    let error = refused(|a| {
        a["tools"]["refund"]["retry"] = Value::Null;
        a["tools"]["refund"]["idempotency_key"] = Value::Null;
    });
    assert!(
        error.contains("graph `desk`: tool node `refund` has a retry policy, but its tool `refund` may not be retried"),
        "{error}"
    );
}

#[test]
fn an_edit_out_of_range_or_at_the_wrong_node_is_refused() {
    let cases: [(Edit, &str); 9] = [
        (
            |a| a["tools"]["read_order"]["retry"]["attempts"] = json!(1),
            "`attempts` must be 2 to 10, not 1",
        ),
        (
            |a| a["tools"]["read_order"]["retry"]["attempts"] = json!(11),
            "`attempts` must be 2 to 10, not 11",
        ),
        (
            |a| a["tools"]["read_order"]["retry"]["backoff_ms"] = json!(0),
            "`backoff_ms` must be at least 1",
        ),
        (
            |a| a["tools"]["read_order"]["retry"]["max_backoff_ms"] = json!(100),
            "`max_backoff_ms` (100) must be at least `backoff_ms` (500)",
        ),
        (
            |a| a["tools"]["read_order"]["retry"]["on"] = json!([]),
            "`on` must name at least one error class",
        ),
        (
            |a| a["tools"]["read_order"]["retry"]["on"] = json!(["rate_limited", "timeout"]),
            "`on` must be sorted and without repeats",
        ),
        (
            |a| a["graphs"]["desk"]["retries"][0]["node"] = json!("confirm"),
            "interrupt node `confirm` has a retry policy",
        ),
        (
            |a| a["graphs"]["desk"]["retries"][0]["node"] = json!("ghost"),
            "retry policy of unknown node `ghost`",
        ),
        (
            |a| a["graphs"]["desk"]["retries"][1]["node"] = json!("refund"),
            "node `refund` has two retry policies",
        ),
    ];
    for (edit, expected) in cases {
        let error = refused(edit);
        assert!(error.contains(expected), "expected {expected:?} in {error}");
    }
    // An error class the format does not know is not a policy at all.
    let error = refused(|a| a["tools"]["read_order"]["retry"]["on"] = json!(["timeout", "sometimes"]));
    assert!(error.contains("sometimes"), "{error}");
}
