//! The envelope and body are read strictly: format versions, JSON shape, strict body fields.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::{envelope, reseal, sample, to_bytes};
use serde_json::{Value, json};
use tenx_artifact::{LoadError, TrustPolicy, generate_keypair, load, seal, sign};

fn optional() -> TrustPolicy {
    TrustPolicy::signature_optional()
}

fn unsigned_envelope() -> Value {
    envelope(&seal(sample()).unwrap().to_bytes())
}

#[test]
fn a_newer_format_is_too_new_before_anything_else_is_checked() {
    for format in [
        "tenx-graph/4",
        "tenx-graph/10",
        "tenx-graph/123456789012345678901234567890",
    ] {
        // Even with a body this build could not read, and a wrong id.
        let file = json!({"format": format, "id": "whatever", "payload": {"future": true}});
        let error = load(&to_bytes(&file), &optional()).unwrap_err();
        assert_eq!(error, LoadError::FormatTooNew { found: format.into() });
        assert!(error.to_string().contains("upgrade the runtime"), "{error}");
    }
}

#[test]
fn a_newer_format_is_refused_even_when_signed() {
    let (secret, public) = generate_keypair().unwrap();
    let mut file = envelope(&sign(sample(), &secret).unwrap().to_bytes());
    file["format"] = json!("tenx-graph/4");
    let error = load(&to_bytes(&file), &TrustPolicy::signature_required([public])).unwrap_err();
    assert!(matches!(error, LoadError::FormatTooNew { .. }), "{error}");
}

#[test]
fn an_older_format_is_refused_with_a_rebuild_message() {
    // A `tenx-graph/1` body cannot say who may approve or what an answer means, so it is never
    // read, whatever it holds, signed or not.
    let (secret, public) = generate_keypair().unwrap();
    let mut file = envelope(&sign(sample(), &secret).unwrap().to_bytes());
    // A `tenx-graph/2` body cannot say where branches fork and join: read as a graph without
    // them, a fork's node would have no way on.
    for old in ["tenx-graph/1", "tenx-graph/2"] {
        file["format"] = json!(old);
        for policy in [optional(), TrustPolicy::signature_required([public.clone()])] {
            let error = load(&to_bytes(&file), &policy).unwrap_err();
            assert_eq!(error, LoadError::FormatTooOld { found: old.into() });
            assert!(error.to_string().contains("rebuild it with `tenxc build`"), "{error}");
        }
    }
}

#[test]
fn other_formats_are_unknown() {
    for format in [
        "tenx-graph/0",
        "tenx-graph/01",
        "tenx-graph/1.1",
        "tenx-graph/",
        "langgraph/1",
        "",
    ] {
        let mut file = unsigned_envelope();
        file["format"] = json!(format);
        let error = load(&to_bytes(&file), &optional()).unwrap_err();
        assert_eq!(error, LoadError::UnknownFormat { found: format.into() }, "{format}");
    }
}

#[test]
fn an_invalid_envelope_says_what_is_wrong() {
    let id = seal(sample()).unwrap().id().to_string();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not json".to_vec(), "not valid JSON"),
        (b"".to_vec(), "not valid JSON"),
        (b"[1, 2]".to_vec(), "expected a JSON object"),
        (br#"{"id": "x"}"#.to_vec(), "missing field `format`"),
        (br#"{"format": 1}"#.to_vec(), "`format` must be a string"),
        (
            format!(r#"{{"format":"tenx-graph/3","format":"tenx-graph/3","id":"{id}"}}"#).into_bytes(),
            "duplicate key `format`",
        ),
        (
            to_bytes(&json!({"format": "tenx-graph/3", "id": id, "artifact": {}, "signature": null, "note": 1})),
            "unknown field `note`",
        ),
        (
            to_bytes(&json!({"format": "tenx-graph/3", "id": id, "artifact": {}})),
            "missing field `signature`",
        ),
        (
            to_bytes(&json!({"format": "tenx-graph/3", "id": "sha256:XYZ", "artifact": {}, "signature": null})),
            "`id`",
        ),
    ];
    for (bytes, expected) in cases {
        let error = load(&bytes, &optional()).unwrap_err();
        let LoadError::InvalidEnvelope(what) = &error else {
            panic!("expected InvalidEnvelope for {expected}, got {error}");
        };
        assert!(what.contains(expected), "expected `{expected}` in `{what}`");
    }
}

#[test]
fn a_duplicate_key_inside_the_body_is_refused() {
    let bytes = seal(sample()).unwrap().to_bytes();
    let text = String::from_utf8(bytes).unwrap();
    let edited = text.replacen(
        r#""recursion_limit":25"#,
        r#""recursion_limit":25,"recursion_limit":9999"#,
        1,
    );
    assert_ne!(text, edited);
    let error = load(edited.as_bytes(), &optional()).unwrap_err();
    assert!(
        matches!(&error, LoadError::InvalidEnvelope(what) if what.contains("duplicate key `recursion_limit`")),
        "{error}"
    );
}

#[test]
fn whitespace_and_key_order_of_the_file_do_not_matter() {
    let sealed = seal(sample()).unwrap();
    let pretty = serde_json::to_vec_pretty(&envelope(&sealed.to_bytes())).unwrap();
    assert_ne!(pretty, sealed.to_bytes());
    let loaded = load(&pretty, &optional()).unwrap();
    assert_eq!(&loaded.id, sealed.id());
}

fn malformed(edit: impl FnOnce(&mut Value)) -> (String, String) {
    let mut file = unsigned_envelope();
    edit(&mut file["artifact"]);
    reseal(&mut file);
    match load(&to_bytes(&file), &optional()).unwrap_err() {
        LoadError::Malformed { path, message } => (path, message),
        other => panic!("expected Malformed, got {other}"),
    }
}

#[test]
fn a_resealed_body_of_the_wrong_shape_is_malformed_with_its_path() {
    let (path, message) = malformed(|body| body["tools"]["issue_refund"]["colour"] = json!("red"));
    assert_eq!(path, "tools.issue_refund.colour");
    assert!(message.contains("unknown field `colour`"), "{message}");

    let (path, message) = malformed(|body| body["graphs"]["support_desk"]["recursion_limit"] = json!("25"));
    assert_eq!(path, "graphs.support_desk.recursion_limit");
    assert!(message.contains("expected u64"), "{message}");

    let (path, message) = malformed(|body| {
        body["agents"]["triage"]
            .as_object_mut()
            .unwrap()
            .remove("output_schema");
    });
    assert_eq!(path, "agents.triage");
    assert!(message.contains("missing field `output_schema`"), "{message}");

    let (path, message) = malformed(|body| body["tools"]["now"]["risk"] = json!("harmless"));
    assert_eq!(path, "tools.now.risk");
    assert!(message.contains("unknown variant `harmless`"), "{message}");

    let (path, message) = malformed(|body| body["format"] = json!("tenx-graph/2"));
    assert_eq!(path, "format");
    assert!(message.contains("differs from the envelope"), "{message}");
}

#[test]
fn error_messages_follow_the_house_style() {
    let errors = [
        LoadError::InvalidEnvelope("expected a JSON object".into()),
        LoadError::FormatTooNew {
            found: "tenx-graph/3".into(),
        },
        LoadError::FormatTooOld {
            found: "tenx-graph/1".into(),
        },
        LoadError::UnknownFormat { found: "x".into() },
        LoadError::SealMismatch {
            recorded: "a".into(),
            computed: "b".into(),
        },
        LoadError::MissingSignature,
        LoadError::BadSignature("signature must be 64 bytes, found 3".into()),
        LoadError::UntrustedKey {
            fingerprint: "ed25519:0011".into(),
        },
        LoadError::Malformed {
            path: "tools".into(),
            message: "invalid type".into(),
        },
        LoadError::Inconsistent("graph `g`: entry `x` is not a node".into()),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for error in errors {
        let text = error.to_string();
        let first = text.chars().next().unwrap();
        assert!(first.is_lowercase(), "{text}");
        assert!(!text.ends_with('.') && !text.contains('\n'), "{text}");
        assert!(seen.insert(text.split(':').next().unwrap().to_owned()), "{text}");
    }
}
