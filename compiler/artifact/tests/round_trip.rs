//! Sealing and loading give back the same artifact, and sealing is deterministic.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::{edge, envelope, sample};
use serde_json::Value;
use tenx_artifact::{
    ArtifactId, EdgeKind, PublicKey, SecretKey, TrustPolicy, canonical_json, generate_keypair, load, seal, sign,
};

#[test]
fn sealed_artifact_loads_back_equal() {
    let sealed = seal(sample()).unwrap();
    let loaded = load(&sealed.to_bytes(), &TrustPolicy::signature_optional()).unwrap();
    assert_eq!(&loaded.id, sealed.id());
    assert_eq!(&loaded.artifact, sealed.artifact());
    assert_eq!(loaded.signer, None);
    // Loading and sealing again is a fixed point.
    let again = seal(loaded.artifact).unwrap();
    assert_eq!(again.to_bytes(), sealed.to_bytes());
}

#[test]
fn signed_artifact_loads_under_a_policy_that_trusts_its_key() {
    let (secret, public) = generate_keypair().unwrap();
    let sealed = sign(sample(), &secret).unwrap();
    let policy = TrustPolicy::signature_required([public.clone()]);
    let loaded = load(&sealed.to_bytes(), &policy).unwrap();
    assert_eq!(loaded.signer, Some(public));
    assert_eq!(&loaded.artifact, sealed.artifact());
    // A host that does not require signatures still accepts (and reports) a valid one.
    let loaded = load(&sealed.to_bytes(), &TrustPolicy::signature_optional()).unwrap();
    assert_eq!(loaded.signer.as_ref(), Some(secret.public_key()).as_ref());
}

#[test]
fn signing_does_not_change_the_id() {
    let (secret, _) = generate_keypair().unwrap();
    let unsigned = seal(sample()).unwrap();
    let signed = unsigned.clone().signed_by(&secret);
    assert_eq!(signed.id(), unsigned.id());
    assert_eq!(signed.body_bytes(), unsigned.body_bytes());
    assert_ne!(signed.to_bytes(), unsigned.to_bytes());
}

#[test]
fn the_file_is_the_canonical_form_of_the_envelope() {
    let (secret, _) = generate_keypair().unwrap();
    for sealed in [seal(sample()).unwrap(), sign(sample(), &secret).unwrap()] {
        let bytes = sealed.to_bytes();
        assert_eq!(canonical_json(&envelope(&bytes)).unwrap(), bytes);
        let body: Value = serde_json::from_slice(sealed.body_bytes()).unwrap();
        assert_eq!(&ArtifactId::of_body(&body).unwrap(), sealed.id());
        assert_eq!(envelope(&bytes)["artifact"], body);
    }
}

#[test]
fn the_same_program_built_in_any_order_seals_to_identical_bytes() {
    let first = sample();
    // Rebuild every map by inserting in reverse order, and shuffle every unordered list.
    let mut second = sample();
    second.tools = second.tools.into_iter().rev().collect();
    second.agents = second.agents.into_iter().rev().collect();
    second.source_map = second.source_map.into_iter().rev().collect();
    for graph in second.graphs.values_mut() {
        graph.nodes = std::mem::take(&mut graph.nodes).into_iter().rev().collect();
        graph.edges.reverse();
        graph.edges.push(edge("close", "END", EdgeKind::Plain));
    }
    for agent in second.agents.values_mut() {
        agent.allowed_tools.reverse();
    }
    for tool in second.tools.values_mut() {
        tool.tags.reverse();
    }
    let first = seal(first).unwrap();
    let second = seal(second).unwrap();
    assert_eq!(first.to_bytes(), second.to_bytes());
    assert_eq!(first.id(), second.id());
    // And sealing twice in a row is stable.
    assert_eq!(seal(sample()).unwrap().to_bytes(), first.to_bytes());
}

#[test]
fn the_artifact_body_has_one_json_shape() {
    let sealed = seal(sample()).unwrap();
    let body: Value = serde_json::from_slice(sealed.body_bytes()).unwrap();
    assert_eq!(body["format"], "tenx-graph/3");
    let node = &body["graphs"]["support_desk"]["nodes"]["review"];
    assert_eq!(node, &serde_json::json!({"kind": "interrupt", "ref": "manager_review"}));
    let run = &body["tools"]["issue_refund"]["run"];
    assert_eq!(
        run,
        &serde_json::json!({"kind": "http", "method": "POST", "url": "${PAYMENTS_URL}/refund",
                            "timeout_ms": 10000, "headers": {"Authorization": "Bearer ${PAY_TOKEN}"}})
    );
    // Optional fields are written as null, never left out.
    assert!(body["agents"]["triage"]["output_schema"].is_null());
    assert!(
        body["agents"]["triage"]
            .as_object()
            .unwrap()
            .contains_key("output_schema")
    );
}

#[test]
fn key_files_round_trip_and_sign_the_same() {
    let (secret, public) = generate_keypair().unwrap();
    let secret = SecretKey::from_text(&secret.to_text()).unwrap();
    let public = PublicKey::from_text(&format!("  {}  ", public.to_text())).unwrap();
    let sealed = sign(sample(), &secret).unwrap();
    let policy = TrustPolicy::signature_required([public]);
    assert!(load(&sealed.to_bytes(), &policy).is_ok());
}

#[test]
fn a_reformatted_file_loads_to_the_same_artifact_as_the_file_as_written() {
    // The file as written takes the fast path (its body bytes hash to the id); the same content
    // pretty-printed takes the full path (canonicalise, then hash). Both must agree.
    let sealed = seal(sample()).unwrap();
    let as_written = sealed.to_bytes();
    let value: Value = serde_json::from_slice(&as_written).unwrap();
    let pretty = serde_json::to_vec_pretty(&value).unwrap();
    assert_ne!(pretty, as_written);
    let fast = load(&as_written, &TrustPolicy::signature_optional()).unwrap();
    let full = load(&pretty, &TrustPolicy::signature_optional()).unwrap();
    assert_eq!(fast, full);
    assert_eq!(fast.id, *sealed.id());
}

#[test]
fn a_body_holding_the_envelopes_own_text_loads_as_written() {
    // The fast path finds the end of the body by the envelope text that follows it
    // (`,"format":`). The body holds that text too: its own `format` key, and here a parameter
    // named `format` in every tool; strings hold it escaped. It must still load whole, signed or
    // not, and agree with the full path.
    let mut artifact = sample();
    let tail = r#"","format":"tenx-graph/3","id":"sha256:00","signature":null}"#;
    for tool in artifact.tools.values_mut() {
        tool.description = format!("{{\"artifact\":{tail}{tail}");
        let mut parameters = tool.parameters.to_value();
        parameters["properties"]["format"] = serde_json::json!({"type": "string", "description": tail});
        tool.parameters = parameters.into();
    }
    let (secret, public) = generate_keypair().unwrap();
    for sealed in [
        seal(artifact.clone()).unwrap(),
        sign(artifact.clone(), &secret).unwrap(),
    ] {
        let as_written = sealed.to_bytes();
        let policy = TrustPolicy::signature_optional().trust(public.clone());
        let fast = load(&as_written, &policy).unwrap();
        assert_eq!(&fast.artifact, sealed.artifact());
        let pretty = serde_json::to_vec_pretty(&serde_json::from_slice::<Value>(&as_written).unwrap()).unwrap();
        assert_eq!(load(&pretty, &policy).unwrap(), fast);
    }
}
