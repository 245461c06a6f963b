//! The `scripted` model: a [`ModelClient`] that plays a model's `script` from the artifact (or a
//! script a host substitutes for a declared provider), per thread, with no network.
//!
//! Fixed `turns` play in order, one per model call, across the thread; `rules` are matched
//! against the run's input when a run starts and the chosen rule's turns play one per model call
//! of that run (the `fallback` turn when none matches). The position is returned in
//! [`ModelReply::cursor`] and read back from [`ModelRequest::cursor`], so it is part of the
//! thread's checkpoint: every thread plays the same script, and a resumed thread continues where
//! it paused. The model plays what is written, whatever tools the request offers: refusing a
//! call outside them is the engine's job, and a steered script is how tests prove it.

mod cursor;
mod patterns;
mod play;

use async_trait::async_trait;
use serde_json::Value;
use tenx_artifact::{Script, Turn};
use tokio_util::sync::CancellationToken;

use crate::ports::{DeltaSink, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, ModelToolCall};
use cursor::Cursor;

/// How many pieces a text answer is streamed in, at most.
pub const DELTA_PIECES: usize = 3;

/// Plays scripted turns. Stateless: the position lives in the request's cursor.
#[derive(Debug, Clone, Default)]
pub struct ScriptedModel {
    /// A script that replaces the request's model script (a substitution), if any.
    script: Option<Script>,
}

impl ScriptedModel {
    /// Plays the script of the model each request names (`Model::script` of a `scripted` model).
    pub fn new() -> Self {
        Self::default()
    }

    /// Plays `script` whatever model the request names: a host (a test above all) substitutes
    /// it for a declared provider, and the engine records the substitution on the thread.
    pub fn with_script(script: Script) -> Self {
        Self { script: Some(script) }
    }
}

#[async_trait]
impl ModelClient for ScriptedModel {
    /// A substituted script stands in for the model (`scripted`); the model's own does not.
    fn substitution(&self) -> Option<String> {
        self.script.as_ref().map(|_| "scripted".to_owned())
    }

    async fn complete(
        &self,
        request: ModelRequest<'_>,
        deltas: &mut dyn DeltaSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let model = request.model_name;
        let fail = |kind: ModelErrorKind, message: String| ModelError {
            kind,
            message: format!("scripted model `{model}` {message}"),
        };
        if cancel.is_cancelled() {
            return Err(fail(
                ModelErrorKind::Cancelled,
                "was cancelled before it answered".into(),
            ));
        }
        let script = self.script.as_ref().or(request.model.script.as_ref()).ok_or_else(|| {
            fail(
                ModelErrorKind::Refused,
                "has no script: its provider is not `scripted`".into(),
            )
        })?;
        let cursor = Cursor::read(request.cursor).map_err(|message| fail(ModelErrorKind::Refused, message))?;
        let result = play::last_result(request.messages, request.run_input);
        let (turn, mut next) = play::play(script, cursor, request.run_id, request.run_input, result.as_deref())
            .map_err(|error| fail(error.kind, error.message))?;
        let mut reply = ModelReply::default();
        match turn {
            Turn::Text { text } => {
                for piece in play::pieces(&text, DELTA_PIECES) {
                    if cancel.is_cancelled() {
                        return Err(fail(
                            ModelErrorKind::Cancelled,
                            "was cancelled while it answered".into(),
                        ));
                    }
                    deltas.text(piece);
                }
                reply.text = text;
            }
            Turn::Tool { tool, arguments } => {
                next.calls = next.calls.saturating_add(1);
                reply.tool_calls.push(ModelToolCall {
                    id: play::call_id(model, next.calls),
                    name: tool,
                    arguments: Value::Object(arguments).to_string(),
                });
            }
        }
        if cancel.is_cancelled() {
            return Err(fail(
                ModelErrorKind::Cancelled,
                "was cancelled while it answered".into(),
            ));
        }
        reply.cursor = Some(next.into_value());
        Ok(reply)
    }
}

#[cfg(test)]
mod tests;
