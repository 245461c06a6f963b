//! A whole (not streamed) chat completion: `choices[0].message` with its `content`, `refusal`
//! and `tool_calls`, and the `usage`.

use serde::Deserialize;
use tenx_engine::ports::{DeltaSink, ModelError, ModelReply};

use super::parts::{PartialCall, Parts, Usage};
use crate::failure::Caller;
use crate::output::OutputShape;

/// A chat completion.
#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

/// A choice.
#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u64,
    message: Answer,
    #[serde(default)]
    finish_reason: Option<String>,
}

/// The assistant's message.
#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<Call>>,
}

/// A tool call.
#[derive(Deserialize)]
struct Call {
    #[serde(default)]
    id: Option<String>,
    function: Function,
}

/// A call's function.
#[derive(Deserialize)]
struct Function {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// The reply of a whole answer's body; its text goes to `deltas` as one piece.
pub fn read(
    caller: &Caller,
    body: &[u8],
    output: Option<&OutputShape>,
    deltas: &mut dyn DeltaSink,
) -> Result<ModelReply, ModelError> {
    let completion: Completion =
        serde_json::from_slice(body).map_err(|_| caller.malformed("the answer is not a chat completion"))?;
    let Some(choice) = completion.choices.into_iter().find(|choice| choice.index == 0) else {
        return Err(caller.malformed("the answer has no choice"));
    };
    let mut parts = Parts {
        text: choice.message.content.unwrap_or_default(),
        refusal: choice.message.refusal.unwrap_or_default(),
        usage: completion.usage.as_ref().map(Usage::to_tokens),
        finish_reason: choice.finish_reason,
        ..Parts::default()
    };
    for (index, call) in choice.message.tool_calls.into_iter().flatten().enumerate() {
        parts.calls.insert(
            u64::try_from(index).unwrap_or(u64::MAX),
            PartialCall {
                id: call.id.unwrap_or_default(),
                name: call.function.name.unwrap_or_default(),
                arguments: call.function.arguments.unwrap_or_default(),
            },
        );
    }
    let wrapped = output.is_some_and(|shape| shape.wrapped);
    if !wrapped && !parts.text.is_empty() {
        deltas.text(&parts.text);
    } else if !wrapped && parts.calls.is_empty() && !parts.refusal.is_empty() {
        deltas.text(&parts.refusal);
    }
    parts.into_reply(caller, output, deltas)
}
