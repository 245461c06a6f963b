//! An agent's output guards and re-ask budget: `seal` refuses a guard that names no validator,
//! one that runs a builtin which cannot read model output, and `retries` above the limit.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::sample;
use serde_json::json;
use tenx_artifact::{Artifact, MAX_RETRIES, SealError, Validator, ValidatorUse, seal};

fn refused(artifact: Artifact, expected: &str) {
    match seal(artifact) {
        Err(SealError::Inconsistent(message)) => {
            assert!(message.contains(expected), "expected `{expected}` in `{message}`");
        }
        other => panic!("expected Inconsistent, got {other:?}"),
    }
}

fn guard(validator: &str) -> ValidatorUse {
    ValidatorUse {
        validator: validator.into(),
        args: json!({}),
    }
}

#[test]
fn a_declared_or_text_reading_guard_seals() {
    let mut artifact = sample();
    let names: Vec<String> = artifact.validators.keys().cloned().collect();
    let agent = artifact.agents.get_mut("triage").unwrap();
    agent.retries = MAX_RETRIES;
    agent.output_guards = names.iter().map(|n| guard(n)).collect();
    // The sample's builtin validator reads text (`prompt_injection`).
    seal(artifact).unwrap();
}

#[test]
fn a_guard_must_exist() {
    let mut artifact = sample();
    artifact.agents.get_mut("triage").unwrap().output_guards = vec![guard("nope")];
    refused(artifact, "agent `triage`: output guard `nope` does not exist");
}

#[test]
fn message_content_cannot_guard_output() {
    let mut artifact = sample();
    artifact.validators.insert(
        "roles".into(),
        Validator::Builtin {
            name: "message_content".into(),
            args: json!({}),
        },
    );
    artifact.agents.get_mut("triage").unwrap().output_guards = vec![guard("roles")];
    refused(
        artifact,
        "runs builtin `message_content`, which cannot read model output",
    );
}

#[test]
fn guard_arguments_are_an_object() {
    let mut artifact = sample();
    let name = artifact.validators.keys().next().cloned().unwrap();
    artifact.agents.get_mut("triage").unwrap().output_guards = vec![ValidatorUse {
        validator: name,
        args: json!([1]),
    }];
    refused(artifact, "must be an object");
}

#[test]
fn retries_have_a_limit() {
    let mut artifact = sample();
    artifact.agents.get_mut("triage").unwrap().retries = MAX_RETRIES + 1;
    refused(artifact, "`retries` must be at most 10, not 11");
}
