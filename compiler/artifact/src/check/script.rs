//! Self-checks of a model's script: a `scripted` model has one and no other model does, a model
//! with rules or a fallback has no fixed turns, and every rule's regex compiles within
//! [`crate::script::REGEX_SIZE_LIMIT`] with no capture named `result`.

use super::Problems;
use crate::model::{Model, Provider};
use crate::script::{RESULT, compile};

pub(super) fn check(name: &str, model: &Model, problems: &mut Problems) {
    let Some(script) = &model.script else {
        if model.provider == Provider::Scripted {
            problems.push(format!("model `{name}`: a `scripted` model must have a `script`"));
        }
        return;
    };
    if model.provider != Provider::Scripted {
        problems.push(format!("model `{name}`: only a `scripted` model has a `script`"));
    }
    if !script.turns.is_empty() && (!script.rules.is_empty() || script.fallback.is_some()) {
        problems.push(format!(
            "model `{name}`: a script has either fixed `turns` or `rules` and a `fallback`, not both"
        ));
    }
    for (index, rule) in script.rules.iter().enumerate() {
        match compile(&rule.pattern) {
            Ok(regex) => {
                if regex.capture_names().flatten().any(|c| c == RESULT) {
                    problems.push(format!(
                        "model `{name}`: rule {index} names a capture `{RESULT}`, which is reserved for the last tool result"
                    ));
                }
            }
            Err(e) => problems.push(format!("model `{name}`: rule {index} has an invalid regex: {e}")),
        }
    }
}
