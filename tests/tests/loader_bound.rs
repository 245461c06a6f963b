//! Bound arguments survive sealing as written, and a sealed artifact edited by hand so that a
//! binding names no parameter, a state field a graph lacks, a malformed claim or an unknown
//! caller attribute is refused by `load`: the runtime never fills an argument from nothing.

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
use tenx_tests::repo_root;

const FIXTURE: &str = "tests/fixtures/bound/caller_and_state.tenx";

/// The fixture, checked (without errors), lowered and sealed, as an envelope to edit.
fn built() -> Value {
    let text = std::fs::read_to_string(repo_root().join(FIXTURE)).unwrap();
    let (mut sources, file, _) = tenx_tests::load_text(FIXTURE, &text, tenxc::disk::MAX_SOURCE_BYTES);
    let checked = tenx_compiler::check(&mut sources, file, &LintLevels::default());
    assert!(
        !checked.diagnostics.iter().any(|d| d.is_error()),
        "{:?}",
        checked.diagnostics
    );
    let facts = tenx_compiler::check::Facts::new(&checked.program, &sources);
    let artifact = tenx_compiler::lower::lower(&facts);
    serde_json::from_slice(&seal(artifact).unwrap().to_bytes()).unwrap()
}

#[test]
fn bindings_are_sealed_as_written_and_the_parameters_keep_them() {
    let envelope = built();
    let refund = &envelope["artifact"]["tools"]["refund"];
    assert_eq!(
        refund["bindings"],
        json!({
            "order_id": {"state": "order_id"},
            "roles": {"caller": "roles"},
            "tenant": {"claim": "https://example.com/tenant"},
            "user_id": {"caller": "user_id"},
        })
    );
    // The artifact keeps the full schema; the model's is derived from it.
    let parameters = &refund["parameters"];
    assert!(parameters["properties"]["user_id"].is_object());
    let seen = tenx_artifact::bound::model_parameters(parameters, ["order_id", "roles", "tenant", "user_id"]);
    assert_eq!(
        seen["properties"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["amount_cents"]
    );
    assert_eq!(seen["required"], json!(["amount_cents"]));
    assert_eq!(
        envelope["artifact"]["tools"]["list_orders"]["bindings"],
        json!({"owner": {"caller": "user_id"}})
    );
}

#[test]
fn an_edited_binding_is_refused() {
    let mut envelope = built();
    envelope["artifact"]["tools"]["refund"]["bindings"]["note"] = json!({"caller": "user_id"});
    let error = reseal_and_load(envelope);
    assert!(
        error.contains("tool `refund`: binds `note`, which is not a parameter"),
        "{error}"
    );

    // The tool node's graph loses the field its binding reads.
    let mut envelope = built();
    let state = &mut envelope["artifact"]["graphs"]["batch"]["state_schema"];
    state["properties"].as_object_mut().unwrap().remove("order_id");
    state["required"] = json!(["amount_cents"]);
    let error = reseal_and_load(envelope);
    assert!(
        error.contains("`order_id` is bound to state field `order_id`, which graph `batch`"),
        "{error}"
    );

    let mut envelope = built();
    envelope["artifact"]["tools"]["refund"]["bindings"]["tenant"] = json!({"claim": "a claim"});
    let error = reseal_and_load(envelope);
    assert!(error.contains("is bound to claim `a claim`"), "{error}");

    let mut envelope = built();
    envelope["artifact"]["tools"]["refund"]["bindings"]["user_id"] = json!({"caller": "token"});
    let error = reseal_and_load(envelope);
    assert!(error.contains("token"), "{error}");
}

/// Reseals the edited envelope and loads it: the error (the edit must be refused).
fn reseal_and_load(envelope: Value) -> String {
    tenx_tests::reseal_and_load(envelope).expect("the edited artifact loaded")
}
