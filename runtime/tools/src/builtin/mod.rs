//! The builtin tools of the standard library (`std.tools`, `run = builtin(NAME)`):
//! `current_time`, `calculator` and `random_id`. Each reads the arguments its declaration in
//! `stdlib/std/tools.tenx` gives it; a call with other arguments is refused with
//! `ToolErrorKind::Failed` (the engine validated them already: this is defence in depth).

mod calculator;
mod current_time;
mod random_id;

use std::sync::Arc;

use serde_json::Value;
use tenx_engine::ports::{Clock, ToolError, ToolErrorKind};

pub use calculator::{CalculatorError, MAX_DEPTH, MAX_LENGTH, evaluate};
pub use current_time::current_time;
pub use random_id::random_id;

/// A builtin the runner knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    /// `current_time(timezone?: string) -> string`.
    CurrentTime,
    /// `calculator(expression: string) -> number`.
    Calculator,
    /// `random_id() -> string`.
    RandomId,
}

impl Builtin {
    /// The builtin named `name`, if there is one (the names of `tenx_artifact::BUILTIN_TOOLS`).
    pub(crate) fn named(name: &str) -> Option<Self> {
        match name {
            "current_time" => Some(Self::CurrentTime),
            "calculator" => Some(Self::Calculator),
            "random_id" => Some(Self::RandomId),
            _ => None,
        }
    }

    /// Runs the builtin on `arguments`.
    pub(crate) fn call(self, arguments: &Value, clock: &Arc<dyn Clock>) -> Result<Value, ToolError> {
        match self {
            Self::CurrentTime => {
                let zone = optional_string(arguments, "timezone")?;
                current_time(clock.now(), zone)
                    .map(Value::String)
                    .map_err(|error| failed(error.to_string()))
            }
            Self::Calculator => {
                let expression = optional_string(arguments, "expression")?
                    .ok_or_else(|| failed("the argument `expression` is required".into()))?;
                evaluate(expression).map_err(|error| failed(error.to_string()))
            }
            Self::RandomId => random_id()
                .map(Value::String)
                .map_err(|error| failed(error.to_string())),
        }
    }
}

/// The string argument `name` (`None` when absent or `null`), or an error for any other type.
fn optional_string<'a>(arguments: &'a Value, name: &str) -> Result<Option<&'a str>, ToolError> {
    let object = match arguments {
        Value::Object(object) => object,
        Value::Null => return Ok(None),
        _ => return Err(failed("the arguments are not an object".into())),
    };
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(failed(format!("the argument `{name}` is not a string"))),
    }
}

fn failed(message: String) -> ToolError {
    ToolError {
        kind: ToolErrorKind::Failed,
        message,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tenx_engine::testing::ManualClock;

    use super::*;

    fn clock(now: u64) -> Arc<dyn Clock> {
        Arc::new(ManualClock::new(now))
    }

    #[test]
    fn every_artifact_builtin_is_known() {
        for name in tenx_artifact::BUILTIN_TOOLS {
            assert!(Builtin::named(name).is_some(), "{name}");
        }
        assert_eq!(Builtin::named("shell"), None);
    }

    #[test]
    fn builtins_read_their_declared_arguments() {
        let clock = clock(1_774_747_800_000);
        assert_eq!(
            Builtin::CurrentTime.call(&json!({}), &clock),
            Ok(json!("2026-03-29T01:30:00+00:00"))
        );
        assert_eq!(
            Builtin::CurrentTime.call(&json!({"timezone": "Europe/Berlin"}), &clock),
            Ok(json!("2026-03-29T03:30:00+02:00"))
        );
        assert_eq!(
            Builtin::CurrentTime.call(&json!({"timezone": null}), &clock),
            Ok(json!("2026-03-29T01:30:00+00:00"))
        );
        assert_eq!(
            Builtin::Calculator.call(&json!({"expression": "6*7"}), &clock),
            Ok(json!(42))
        );
        let id = Builtin::RandomId.call(&json!({}), &clock).unwrap();
        assert_eq!(id.as_str().map(str::len), Some(36));
    }

    #[test]
    fn wrong_arguments_are_refused() {
        let clock = clock(0);
        let refusal = |arguments: Value, builtin: Builtin| builtin.call(&arguments, &clock).unwrap_err();
        assert_eq!(
            refusal(json!({}), Builtin::Calculator),
            failed("the argument `expression` is required".into())
        );
        assert_eq!(
            refusal(json!({"expression": 4}), Builtin::Calculator),
            failed("the argument `expression` is not a string".into())
        );
        assert_eq!(
            refusal(json!([1]), Builtin::CurrentTime),
            failed("the arguments are not an object".into())
        );
        assert_eq!(
            refusal(json!({"expression": "1/0"}), Builtin::Calculator).message,
            "division by zero"
        );
        assert_eq!(
            refusal(json!({"timezone": "Nowhere"}), Builtin::CurrentTime).kind,
            ToolErrorKind::Failed
        );
    }
}
