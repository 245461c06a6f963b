//! Validators: a graph's `input_validators` over the messages that enter a run, and an agent's
//! `output_guards` over what its model says (final answers, and tool-call arguments as
//! canonical JSON text). Pure functions of the artifact's declarations and the text.
//!
//! Validators run in the order listed, each over every message in order; the first failure
//! stops with a [`Violation`] (the API answers 422 `AGENTFLOW_VALIDATION_ERROR` with its
//! `violation_type`, and the run records nothing). A non-strict `prompt_injection` refuses
//! nothing: its findings come back as [`Logged`] entries for the run to emit.
//!
//! One module per family: [`prompt_injection`](self) (with `injection`, `encoding`,
//! `keywords`, `splitting`), `message_content`, `declared`. A validator the artifact declares
//! in a way it cannot run fails closed (`validator_misconfigured`); a host can find those at
//! load time with [`verify_input`] and [`verify_output`].

mod args;
mod declared;
mod encoding;
mod injection;
mod keywords;
mod message_content;
mod patterns;
mod prompt_injection;
mod splitting;
mod text;
mod violation;

use std::collections::BTreeMap;

use tenx_artifact::{Validator, ValidatorUse};

pub use violation::{Logged, Violation, ViolationType};

use declared::Declared;
use message_content::MessageContent;
use prompt_injection::PromptInjection;
use violation::Finding;

use crate::wire::Message;

/// Runs a graph's `input_validators`, in order, over the incoming `messages` (the engine
/// passes the client's user messages). `Err` is the first violation; `Ok` holds what
/// non-strict validators logged, in the order found.
pub fn check_input(
    uses: &[ValidatorUse],
    validators: &BTreeMap<String, Validator>,
    messages: &[Message],
) -> Result<Vec<Logged>, Violation> {
    let texts: Vec<String> = messages.iter().map(text::of).collect();
    let mut logged = Vec::new();
    for used in uses {
        let name = used.validator.as_str();
        let prepared = prepare(used, validators).map_err(|finding| finding.attribute(name, None))?;
        for (index, (message, text)) in messages.iter().zip(&texts).enumerate() {
            let outcome = match &prepared {
                Prepared::MessageContent(validator) => Outcome::refuse(validator.check(message)),
                Prepared::PromptInjection(validator) => Outcome::scan(validator, text),
                Prepared::Declared(validator) => Outcome::refuse(validator.check(text)),
            };
            outcome.settle(name, Some(index), &mut logged)?;
        }
    }
    Ok(logged)
}

/// Runs an agent's `output_guards`, in order, over one text the model produced: a final
/// answer (its text, or its JSON when the agent has an output schema) or a tool call's
/// arguments as canonical JSON text. `message_content` cannot read text and fails closed.
pub fn check_output(
    uses: &[ValidatorUse],
    validators: &BTreeMap<String, Validator>,
    text: &str,
) -> Result<Vec<Logged>, Violation> {
    let mut logged = Vec::new();
    for used in uses {
        let name = used.validator.as_str();
        let outcome = match prepare_output(used, validators).map_err(|finding| finding.attribute(name, None))? {
            Prepared::PromptInjection(validator) => Outcome::scan(&validator, text),
            Prepared::Declared(validator) => Outcome::refuse(validator.check(text)),
            Prepared::MessageContent(_) => Outcome::refuse(Some(not_a_guard())),
        };
        outcome.settle(name, None, &mut logged)?;
    }
    Ok(logged)
}

/// Whether every input validator can run as declared (names, builtins, arguments, patterns):
/// the check a host makes when it loads an artifact, so that a misdeclared validator is
/// reported before any client meets it.
pub fn verify_input(uses: &[ValidatorUse], validators: &BTreeMap<String, Validator>) -> Result<(), Violation> {
    for used in uses {
        prepare(used, validators).map_err(|finding| finding.attribute(&used.validator, None))?;
    }
    Ok(())
}

/// [`verify_input`] for an agent's output guards (which may not use `message_content`).
pub fn verify_output(uses: &[ValidatorUse], validators: &BTreeMap<String, Validator>) -> Result<(), Violation> {
    for used in uses {
        prepare_output(used, validators).map_err(|finding| finding.attribute(&used.validator, None))?;
    }
    Ok(())
}

/// A validator use, ready to run.
enum Prepared {
    PromptInjection(PromptInjection),
    MessageContent(MessageContent),
    Declared(Declared),
}

fn prepare(used: &ValidatorUse, validators: &BTreeMap<String, Validator>) -> Result<Prepared, Finding> {
    match validators.get(&used.validator) {
        None => Err(Finding::misconfigured(
            "validator",
            "the artifact declares no such validator",
        )),
        Some(Validator::Builtin { name, args }) => match name.as_str() {
            "prompt_injection" => PromptInjection::new(args, &used.args).map(Prepared::PromptInjection),
            "message_content" => MessageContent::new(args, &used.args).map(Prepared::MessageContent),
            _ => Err(Finding::misconfigured(
                "builtin",
                "the runtime has no such builtin validator",
            )),
        },
        Some(Validator::Declared {
            deny_patterns,
            deny_keywords,
            max_length,
        }) => Declared::new(deny_patterns, deny_keywords, *max_length, &used.args).map(Prepared::Declared),
    }
}

fn prepare_output(used: &ValidatorUse, validators: &BTreeMap<String, Validator>) -> Result<Prepared, Finding> {
    match prepare(used, validators)? {
        Prepared::MessageContent(_) => Err(not_a_guard()),
        prepared => Ok(prepared),
    }
}

fn not_a_guard() -> Finding {
    Finding::misconfigured(
        "builtin",
        "message_content reads client messages and cannot guard model output",
    )
}

/// What one validator made of one text.
enum Outcome {
    /// These findings refuse (at most one is used: the first).
    Refuse(Vec<Finding>),
    /// These findings are only logged.
    Log(Vec<Finding>),
}

impl Outcome {
    fn refuse(finding: Option<Finding>) -> Self {
        Self::Refuse(finding.into_iter().collect())
    }

    fn scan(validator: &PromptInjection, text: &str) -> Self {
        let findings = validator.scan(text);
        if validator.strict {
            Self::Refuse(findings)
        } else {
            Self::Log(findings)
        }
    }

    fn settle(self, validator: &str, message_index: Option<usize>, logged: &mut Vec<Logged>) -> Result<(), Violation> {
        match self {
            Self::Refuse(findings) => match findings.into_iter().next() {
                Some(finding) => Err(finding.attribute(validator, message_index)),
                None => Ok(()),
            },
            Self::Log(findings) => {
                logged.extend(
                    findings
                        .into_iter()
                        .map(|finding| Logged(finding.attribute(validator, message_index))),
                );
                Ok(())
            }
        }
    }
}
