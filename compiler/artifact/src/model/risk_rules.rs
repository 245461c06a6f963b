//! Argument-dependent risk: rules over a call's arguments that give the call a risk other than
//! the tool's base risk. `Tool.risk` stays the worst case, so every policy proof holds unchanged.

use super::{Condition, Risk};
use serde::{Deserialize, Serialize};

/// A tool's risk rules: the first rule whose condition holds on the validated, normalised
/// arguments gives the call's risk; `base` when none holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskRules {
    /// The risk of a call no rule matches.
    pub base: Risk,
    /// The rules, in the order they are tried.
    pub rules: Vec<RiskRule>,
}

/// One risk rule: `risk` when `condition` holds on the arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskRule {
    /// A condition whose fields are paths into the arguments (`["amount_cents"]`).
    pub condition: Condition,
    /// The call's risk when the condition holds: never `prohibited`.
    pub risk: Risk,
}

impl RiskRules {
    /// The highest risk any call can have: the base or any rule's.
    pub fn worst_case(&self) -> Risk {
        self.rules.iter().map(|r| r.risk).fold(self.base, Ord::max)
    }
}
