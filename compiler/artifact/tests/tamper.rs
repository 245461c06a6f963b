//! Every way of altering a sealed file is refused, each with its own error.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::{Edit, envelope, reseal, sample, to_bytes};
use serde_json::{Value, json};
use tenx_artifact::{LoadError, PolicyViolation, SealError, TrustPolicy, generate_keypair, load, seal, sign};

fn signed_sample() -> (Vec<u8>, TrustPolicy) {
    let (secret, public) = generate_keypair().unwrap();
    let bytes = sign(sample(), &secret).unwrap().to_bytes();
    (bytes, TrustPolicy::signature_required([public]))
}

fn add_edge(envelope: &mut Value) {
    let edges = envelope["artifact"]["graphs"]["support_desk"]["edges"]
        .as_array_mut()
        .unwrap();
    edges.push(json!({"from": "triage", "to": "close", "kind": "plain"}));
}

fn allow_refunds_in_triage(envelope: &mut Value) {
    envelope["artifact"]["agents"]["triage"]["allowed_tools"] = json!(["issue_refund", "lookup_order", "now"]);
}

fn remove_refund_approval(envelope: &mut Value) {
    envelope["artifact"]["tools"]["issue_refund"]["approval"] = Value::Null;
}

/// `bytes` with the first byte of the first `needle` changed to `to`.
fn flip(bytes: &[u8], needle: &[u8], to: u8) -> Vec<u8> {
    let at = bytes.windows(needle.len()).position(|window| window == needle).unwrap();
    let mut edited = bytes.to_vec();
    edited[at] = to;
    edited
}

#[test]
fn a_flipped_byte_inside_a_string_breaks_the_seal() {
    let (bytes, policy) = signed_sample();
    let error = load(&flip(&bytes, b"Approve a refund", b'a'), &policy).unwrap_err();
    assert!(matches!(error, LoadError::SealMismatch { .. }), "{error}");
}

#[test]
fn each_edit_of_the_body_breaks_the_seal() {
    let edits: [(&str, Edit); 3] = [
        ("added edge", add_edge),
        ("changed allowed tools", allow_refunds_in_triage),
        ("removed approval", remove_refund_approval),
    ];
    for (what, edit) in edits {
        let (bytes, policy) = signed_sample();
        let mut edited = envelope(&bytes);
        edit(&mut edited);
        let error = load(&to_bytes(&edited), &policy).unwrap_err();
        assert!(matches!(error, LoadError::SealMismatch { .. }), "{what}: {error}");
        let error = load(&to_bytes(&edited), &TrustPolicy::signature_optional()).unwrap_err();
        assert!(matches!(error, LoadError::SealMismatch { .. }), "{what}: {error}");
    }
}

#[test]
fn a_recomputed_id_under_the_old_signature_is_a_bad_signature() {
    let edits: [Edit; 3] = [add_edge, allow_refunds_in_triage, remove_refund_approval];
    for edit in edits {
        let (bytes, policy) = signed_sample();
        let mut edited = envelope(&bytes);
        edit(&mut edited);
        reseal(&mut edited);
        let error = load(&to_bytes(&edited), &policy).unwrap_err();
        assert!(matches!(error, LoadError::BadSignature(_)), "{error}");
        // A host that does not require signatures still refuses a signature that does not verify.
        let error = load(&to_bytes(&edited), &TrustPolicy::signature_optional()).unwrap_err();
        assert!(matches!(error, LoadError::BadSignature(_)), "{error}");
    }
}

#[test]
fn a_consistent_reseal_without_signature_is_refused_when_signatures_are_required() {
    let edits: [Edit; 3] = [add_edge, allow_refunds_in_triage, remove_refund_approval];
    for edit in edits {
        let (bytes, policy) = signed_sample();
        let mut edited = envelope(&bytes);
        edit(&mut edited);
        edited["signature"] = Value::Null;
        reseal(&mut edited);
        let error = load(&to_bytes(&edited), &policy).unwrap_err();
        assert_eq!(error, LoadError::MissingSignature);
    }
}

#[test]
fn a_reseal_that_breaks_structure_is_inconsistent() {
    let (bytes, _) = signed_sample();
    let mut edited = envelope(&bytes);
    edited["artifact"]["tools"]["close_account"]["approved_by"] = json!([]);
    edited["signature"] = Value::Null;
    reseal(&mut edited);
    let error = load(&to_bytes(&edited), &TrustPolicy::signature_optional()).unwrap_err();
    let LoadError::Inconsistent(what) = &error else {
        panic!("expected Inconsistent, got {error}");
    };
    assert!(
        what.contains("interrupt `manager_review` approves tool `close_account`, but the tool does not list"),
        "{what}"
    );

    // The compiler side refuses to seal the same artifact.
    let mut artifact = sample();
    artifact.tools.get_mut("close_account").unwrap().approved_by.clear();
    let error = seal(artifact).unwrap_err();
    assert!(matches!(error, SealError::Inconsistent(_)), "{error}");
}

#[test]
fn a_reseal_without_a_required_approval_breaks_the_risk_policy() {
    let (bytes, _) = signed_sample();
    let mut edited = envelope(&bytes);
    remove_refund_approval(&mut edited);
    edited["signature"] = Value::Null;
    reseal(&mut edited);
    let error = load(&to_bytes(&edited), &TrustPolicy::signature_optional()).unwrap_err();
    let expected = PolicyViolation::HighRiskWithoutApproval {
        tool: "issue_refund".into(),
    };
    assert_eq!(
        error,
        LoadError::PolicyViolation {
            violation: expected.clone(),
            more: 0
        }
    );
    let mut artifact = sample();
    artifact.tools.get_mut("issue_refund").unwrap().approval = None;
    let error = seal(artifact).unwrap_err();
    assert_eq!(
        error,
        SealError::PolicyViolation {
            violation: expected,
            more: 0
        }
    );
}

#[test]
fn an_added_edge_that_makes_two_ways_on_is_inconsistent() {
    let mut edited = envelope(&seal(sample()).unwrap().to_bytes());
    add_edge(&mut edited);
    reseal(&mut edited);
    let error = load(&to_bytes(&edited), &TrustPolicy::signature_optional()).unwrap_err();
    let LoadError::Inconsistent(what) = &error else {
        panic!("expected Inconsistent, got {error}");
    };
    assert!(what.contains("`triage` has 2 plain edges"), "{what}");
}

#[test]
fn an_allowed_tool_list_out_of_order_or_naming_an_unknown_tool_is_inconsistent() {
    let lists = [
        (json!(["now", "lookup_order"]), "sorted"),
        (
            json!(["lookup_order", "now", "steal_money"]),
            "unknown tool `steal_money`",
        ),
    ];
    for (list, expected) in lists {
        let mut edited = envelope(&seal(sample()).unwrap().to_bytes());
        edited["artifact"]["agents"]["triage"]["allowed_tools"] = list;
        reseal(&mut edited);
        let error = load(&to_bytes(&edited), &TrustPolicy::signature_optional()).unwrap_err();
        let LoadError::Inconsistent(what) = &error else {
            panic!("expected Inconsistent, got {error}");
        };
        assert!(what.contains(expected), "{what}");
    }
}

#[test]
fn a_valid_signature_by_an_untrusted_key_is_refused() {
    let (stranger, _) = generate_keypair().unwrap();
    let (_, trusted) = generate_keypair().unwrap();
    let bytes = sign(sample(), &stranger).unwrap().to_bytes();
    let error = load(&bytes, &TrustPolicy::signature_required([trusted.clone()])).unwrap_err();
    let LoadError::UntrustedKey { fingerprint } = &error else {
        panic!("expected UntrustedKey, got {error}");
    };
    assert_eq!(fingerprint, &stranger.public_key().fingerprint());
    // A policy that names trusted keys refuses other signers even when signatures are optional.
    let policy = TrustPolicy::signature_optional().trust(trusted);
    let error = load(&bytes, &policy).unwrap_err();
    assert!(matches!(error, LoadError::UntrustedKey { .. }), "{error}");
    // With no keys named, any valid signature is accepted and reported.
    let loaded = load(&bytes, &TrustPolicy::signature_optional()).unwrap();
    assert_eq!(loaded.signer, Some(stranger.public_key()));
}

#[test]
fn a_signature_from_another_key_on_the_same_id_is_untrusted_not_accepted() {
    let (owner, owner_public) = generate_keypair().unwrap();
    let (stranger, _) = generate_keypair().unwrap();
    let original = envelope(&sign(sample(), &owner).unwrap().to_bytes());
    let mut swapped = envelope(&sign(sample(), &stranger).unwrap().to_bytes());
    assert_eq!(original["id"], swapped["id"]);
    swapped["artifact"] = original["artifact"].clone();
    let error = load(&to_bytes(&swapped), &TrustPolicy::signature_required([owner_public])).unwrap_err();
    assert!(matches!(error, LoadError::UntrustedKey { .. }), "{error}");
}

#[test]
fn a_mangled_signature_block_is_a_bad_signature() {
    let (bytes, policy) = signed_sample();
    let cases = [
        ("algorithm", json!("rsa"), "unsupported algorithm `rsa`"),
        ("public_key", json!("not base64!"), "public key"),
        ("public_key", json!("AAAA"), "32 bytes"),
        ("signature", json!("AAAA"), "64 bytes"),
        ("signature", json!(base64_of_zeros(64)), "does not match"),
    ];
    for (field, value, expected) in cases {
        let mut edited = envelope(&bytes);
        edited["signature"][field] = value;
        let error = load(&to_bytes(&edited), &policy).unwrap_err();
        let LoadError::BadSignature(reason) = &error else {
            panic!("expected BadSignature, got {error}");
        };
        assert!(reason.contains(expected), "{field}: {reason}");
    }
}

#[test]
fn a_swapped_public_key_is_a_bad_signature() {
    let (bytes, policy) = signed_sample();
    let (_, other) = generate_keypair().unwrap();
    let mut edited = envelope(&bytes);
    let other_text = other.to_text();
    let other_base64 = other_text.trim().trim_start_matches("tenx-ed25519-public:");
    edited["signature"]["public_key"] = json!(other_base64);
    let error = load(&to_bytes(&edited), &policy).unwrap_err();
    assert!(matches!(error, LoadError::BadSignature(_)), "{error}");
}

fn base64_of_zeros(count: usize) -> String {
    // 64 zero bytes: 21 groups of "AAAA" (63 bytes) and "AA==" (1 byte).
    assert_eq!(count, 64);
    format!("{}AA==", "AAAA".repeat(21))
}

#[test]
fn a_large_artifact_loads_and_a_flipped_byte_in_it_breaks_the_seal() {
    // Over 1 MiB, the loader hashes on a second thread while it deserialises; the outcome must
    // be the same as for a small file.
    let mut artifact = sample();
    let template = artifact.tools["now"].clone();
    for index in 0..3000 {
        let mut tool = template.clone();
        tool.name = format!("extra_{index}");
        tool.description = format!("Extra tool number {index}. {}", "Padding text. ".repeat(20));
        artifact.tools.insert(tool.name.clone(), tool);
    }
    let (secret, public) = generate_keypair().unwrap();
    let sealed = sign(artifact, &secret).unwrap();
    let bytes = sealed.to_bytes();
    assert!(bytes.len() > 1 << 20, "{} bytes", bytes.len());
    let policy = TrustPolicy::signature_required([public]);
    let loaded = load(&bytes, &policy).unwrap();
    assert_eq!(&loaded.artifact, sealed.artifact());

    let error = load(&flip(&bytes, b"Extra tool number 2999", b'e'), &policy).unwrap_err();
    assert!(matches!(error, LoadError::SealMismatch { .. }), "{error}");
}
