//! What a validator reports: a [`Violation`] (the input is refused, or a guarded answer is
//! dropped), or a [`Logged`] finding (a non-strict `prompt_injection` lets the input through
//! and the run emits it). Messages name the rule that fired and never echo the text it matched,
//! which may be an attack.

use serde::Serialize;
use serde_json::json;

use crate::error::{ErrorCode, RunError};
use crate::ports::Event;

/// The kind of a violation, written on the wire as its `as_str` (the API's `violation_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationType {
    /// The text is longer than the validator's `max_length` (characters).
    LengthExceeded,
    /// A built-in injection pattern or a `blocked_patterns` entry matched.
    InjectionPattern,
    /// Encoded or disguised text: base64 hiding an attack, hidden or look-alike characters,
    /// runs of `\xNN` escapes.
    EncodingAttack,
    /// Three or more distinct suspicious keywords in one text.
    SuspiciousKeywords,
    /// Markers of an attack split across messages ("part 1 of 3", "[SPLIT 1/2]").
    PayloadSplitting,
    /// A message whose role is not in `allowed_roles`.
    InvalidRole,
    /// A message with more than `max_blocks` content blocks.
    TooManyBlocks,
    /// A declared validator's `deny_patterns` entry matched.
    DeniedPattern,
    /// A declared validator's `deny_keywords` entry occurs.
    DeniedKeyword,
    /// The validator cannot run as the artifact declares it (unknown validator or builtin, bad
    /// arguments, a pattern that does not compile): it fails closed.
    ValidatorMisconfigured,
}

impl ViolationType {
    /// The wire name, e.g. `injection_pattern`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::LengthExceeded => "length_exceeded",
            Self::InjectionPattern => "injection_pattern",
            Self::EncodingAttack => "encoding_attack",
            Self::SuspiciousKeywords => "suspicious_keywords",
            Self::PayloadSplitting => "payload_splitting",
            Self::InvalidRole => "invalid_role",
            Self::TooManyBlocks => "too_many_blocks",
            Self::DeniedPattern => "denied_pattern",
            Self::DeniedKeyword => "denied_keyword",
            Self::ValidatorMisconfigured => "validator_misconfigured",
        }
    }
}

impl std::fmt::Display for ViolationType {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A validator refused a text: the first failure of a list of validators.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The validator as the graph or agent uses it (a key of the artifact's `validators`).
    pub validator: String,
    /// What kind of violation.
    pub violation_type: ViolationType,
    /// The rule that fired: a built-in rule name (`instruction_override`, `base64_payload`), or
    /// a declared entry by position (`deny_patterns[1]`, `blocked_patterns[0]`).
    pub rule: String,
    /// For people: names the rule, never the matched text.
    pub message: String,
    /// The position of the offending message among the messages checked; `None` for an output
    /// guard (one text).
    pub message_index: Option<usize>,
}

impl Violation {
    /// The API's answer to a refused input: 422 `AGENTFLOW_VALIDATION_ERROR`, with the
    /// violation in `details`.
    pub fn to_error(&self) -> RunError {
        RunError::new(ErrorCode::ValidationRefused, self.message.clone()).with_details(json!({
            "validator": self.validator,
            "violation_type": self.violation_type.as_str(),
            "rule": self.rule,
            "message_index": self.message_index,
        }))
    }

    /// The rejection event a refused input publishes.
    pub fn to_event(&self) -> Event {
        Event::Rejected {
            violation_type: self.violation_type.as_str().to_owned(),
            message: self.message.clone(),
        }
    }
}

impl From<Violation> for RunError {
    fn from(violation: Violation) -> Self {
        violation.to_error()
    }
}

/// A finding of a non-strict `prompt_injection`: the text goes through, and the run emits the
/// finding. It has the shape of the violation it would have been in strict mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Logged(pub Violation);

/// What one check found, before it is attributed to a validator and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Finding {
    pub(super) violation_type: ViolationType,
    pub(super) rule: String,
    pub(super) message: String,
}

impl Finding {
    pub(super) fn new(violation_type: ViolationType, rule: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            violation_type,
            rule: rule.into(),
            message: message.into(),
        }
    }

    pub(super) fn attribute(self, validator: &str, message_index: Option<usize>) -> Violation {
        Violation {
            validator: validator.to_owned(),
            violation_type: self.violation_type,
            rule: self.rule,
            message: self.message,
            message_index,
        }
    }

    /// A validator that cannot run as declared; `rule` names the part at fault.
    pub(super) fn misconfigured(rule: impl Into<String>, why: &str) -> Self {
        let rule = rule.into();
        Self {
            violation_type: ViolationType::ValidatorMisconfigured,
            message: format!("Validator cannot run as declared ({rule}): {why}"),
            rule,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_violation_becomes_a_422_naming_its_type() {
        let violation = Finding::new(
            ViolationType::InjectionPattern,
            "role_switch",
            "Potential prompt injection detected: role switch",
        )
        .attribute("prompt_injection", Some(0));
        let error = violation.to_error();
        assert_eq!(error.code, ErrorCode::ValidationRefused);
        assert_eq!(error.code.status(), 422);
        assert_eq!(error.code.as_str(), "AGENTFLOW_VALIDATION_ERROR");
        assert_eq!(error.details["violation_type"], "injection_pattern");
        assert_eq!(error.details["validator"], "prompt_injection");
        assert_eq!(error.details["message_index"], 0);
        assert_eq!(
            violation.to_event(),
            Event::Rejected {
                violation_type: "injection_pattern".into(),
                message: "Potential prompt injection detected: role switch".into()
            }
        );
    }
}
