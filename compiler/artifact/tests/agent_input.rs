//! An agent's `input`: `seal` takes every kind, refuses a `last` count outside 1 to
//! `MAX_INPUT_LAST`, and a sealed file carries the input as written.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::sample;
use tenx_artifact::{AgentInput, MAX_INPUT_LAST, SealError, TrustPolicy, load, seal};

fn with_input(input: AgentInput) -> tenx_artifact::Artifact {
    let mut artifact = sample();
    artifact.agents.get_mut("triage").unwrap().input = input;
    artifact
}

#[test]
fn every_kind_seals_and_loads_as_written() {
    for input in [
        AgentInput::Conversation,
        AgentInput::None,
        AgentInput::Last { count: 1 },
        AgentInput::Last { count: MAX_INPUT_LAST },
        AgentInput::Template {
            template: "Section {topic}".into(),
        },
    ] {
        let sealed = seal(with_input(input.clone())).unwrap();
        let loaded = load(&sealed.to_bytes(), &TrustPolicy::signature_optional()).unwrap();
        assert_eq!(loaded.artifact.agents["triage"].input, input);
    }
}

#[test]
fn a_last_count_is_one_to_the_limit() {
    for count in [0, MAX_INPUT_LAST + 1] {
        match seal(with_input(AgentInput::Last { count })) {
            Err(SealError::Inconsistent(message)) => {
                assert!(
                    message.contains("agent `triage`: `input`: `count` must be 1 to 1000"),
                    "{message}"
                );
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}
