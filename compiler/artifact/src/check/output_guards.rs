//! An agent's output guards and re-ask budget: every guard names a validator of the artifact,
//! with an object of arguments, and a builtin one reads text ([`OUTPUT_GUARD_BUILTINS`]: never
//! `message_content`, which reads client messages); `retries` is at most [`MAX_RETRIES`].

use super::Problems;
use crate::model::{Agent, Artifact, MAX_RETRIES, OUTPUT_GUARD_BUILTINS, Validator};

/// Checks `output_guards` and `retries` of the agent `name`.
pub(super) fn check(artifact: &Artifact, name: &str, agent: &Agent, problems: &mut Problems) {
    if agent.retries > MAX_RETRIES {
        problems.push(format!(
            "agent `{name}`: `retries` must be at most {MAX_RETRIES}, not {}",
            agent.retries
        ));
    }
    for used in &agent.output_guards {
        match artifact.validators.get(&used.validator) {
            None => problems.push(format!(
                "agent `{name}`: output guard `{}` does not exist",
                used.validator
            )),
            Some(Validator::Builtin { name: handler, .. }) if !OUTPUT_GUARD_BUILTINS.contains(&handler.as_str()) => {
                problems.push(format!(
                    "agent `{name}`: output guard `{}` runs builtin `{handler}`, which cannot read model output",
                    used.validator
                ));
            }
            Some(_) => {}
        }
        if !used.args.is_object() {
            problems.push(format!(
                "agent `{name}`: arguments of output guard `{}` must be an object",
                used.validator
            ));
        }
    }
}
