//! A model's script: `seal` refuses one that breaks a rule, and `load` refuses a sealed file
//! edited by hand to break one (resealed, as a forger would).

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
use tenx_artifact::{Artifact, LoadError, Provider, Rule, SealError, TrustPolicy, Turn, load, seal};

type Break = fn(&mut Artifact);

/// An edit of a sealed envelope, and whether the loader must call the result inconsistent
/// (rather than malformed).
type Edit = (&'static str, fn(&mut Value), bool);

fn demo(artifact: &mut Artifact) -> &mut tenx_artifact::Model {
    artifact.models.get_mut("demo").unwrap()
}

fn rule(pattern: &str) -> Rule {
    Rule {
        pattern: pattern.into(),
        turns: vec![Turn::Text { text: "ok".into() }],
    }
}

#[test]
fn seal_refuses_a_broken_script() {
    let cases: [(&str, Break, &str); 6] = [
        (
            "no script",
            |a| demo(a).script = None,
            "a `scripted` model must have a `script`",
        ),
        (
            "script on openai",
            |a| {
                let script = demo(a).script.clone();
                a.models.get_mut("support").unwrap().script = script;
            },
            "only a `scripted` model has a `script`",
        ),
        (
            "turns and rules",
            |a| demo(a).script.as_mut().unwrap().rules.push(rule("x")),
            "not both",
        ),
        (
            "bad regex",
            |a| {
                let script = demo(a).script.as_mut().unwrap();
                script.turns.clear();
                script.rules.push(rule("(unclosed"));
            },
            "rule 0 has an invalid regex",
        ),
        (
            "huge regex",
            |a| {
                let script = demo(a).script.as_mut().unwrap();
                script.turns.clear();
                script.rules.push(rule(r"\w{1000}\w{1000}\w{1000}"));
            },
            "rule 0 has an invalid regex",
        ),
        (
            "capture named result",
            |a| {
                let script = demo(a).script.as_mut().unwrap();
                script.turns.clear();
                script.rules.push(rule("(?<result>x)"));
            },
            "reserved for the last tool result",
        ),
    ];
    for (what, edit, expected) in cases {
        let mut artifact = sample();
        assert_eq!(demo(&mut artifact).provider, Provider::Scripted);
        edit(&mut artifact);
        match seal(artifact) {
            Err(SealError::Inconsistent(message)) => {
                assert!(
                    message.contains(expected),
                    "{what}: expected `{expected}` in `{message}`"
                );
            }
            other => panic!("{what}: expected Inconsistent, got {other:?}"),
        }
    }
}

#[test]
fn load_refuses_a_script_edited_by_hand() {
    let bytes = seal(sample()).unwrap().to_bytes();
    let edits: [Edit; 3] = [
        (
            "bad regex",
            |e| {
                e["artifact"]["models"]["demo"]["script"] =
                    json!({"turns": [], "rules": [{"match": "(", "turns": []}], "fallback": null});
            },
            true,
        ),
        (
            "untyped turn",
            |e| e["artifact"]["models"]["demo"]["script"]["turns"] = json!([{"say": "hello"}]),
            false,
        ),
        (
            "missing fallback",
            |e| {
                e["artifact"]["models"]["demo"]["script"]
                    .as_object_mut()
                    .unwrap()
                    .remove("fallback");
            },
            false,
        ),
    ];
    for (what, edit, inconsistent) in edits {
        let mut env = envelope(&bytes);
        edit(&mut env);
        reseal(&mut env);
        let error = load(&to_bytes(&env), &TrustPolicy::signature_optional()).unwrap_err();
        match (&error, inconsistent) {
            (LoadError::Inconsistent(message), true) => assert!(message.contains("invalid regex"), "{what}: {message}"),
            (LoadError::Malformed { .. }, false) => {}
            _ => panic!("{what}: unexpected {error:?}"),
        }
    }
}
