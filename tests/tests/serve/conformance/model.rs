//! The model of the probe graph: the program's scripted rules, plus the two behaviours of the
//! reference's Python node that no scripted model can express. A real model may call a tool
//! name it was never shown ("missing" calls `no_such_tool`, which `tenxc check` refuses in a
//! script) and may take long ("slow" answers after 6 s, unless the run is stopped).

use std::time::Duration;

use async_trait::async_trait;
use tenx_engine::ScriptedModel;
use tenx_engine::ports::{DeltaSink, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, ModelToolCall};
use tenx_engine::wire::Role;
use tokio_util::sync::CancellationToken;

/// How long "slow" thinks, as the reference's node sleeps.
const SLOW: Duration = Duration::from_secs(6);

/// The scripted model of `reference_graph.tenx`, with "missing" and "slow" played here.
#[derive(Debug, Default)]
pub struct ReferenceModel {
    scripted: ScriptedModel,
}

#[async_trait]
impl ModelClient for ReferenceModel {
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        deltas: &mut dyn DeltaSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let after_tool = request
            .messages
            .last()
            .is_some_and(|message| message.role == Role::Tool);
        match request.run_input {
            "missing" if after_tool => Ok(text(&format!(
                "tool said: {}",
                request
                    .messages
                    .last()
                    .map(|message| tool_text(message))
                    .unwrap_or_default()
            ))),
            "missing" => Ok(ModelReply {
                tool_calls: vec![ModelToolCall {
                    id: "call_missing".to_owned(),
                    name: "no_such_tool".to_owned(),
                    arguments: "{}".to_owned(),
                }],
                ..ModelReply::default()
            }),
            "slow" => {
                tokio::select! {
                    () = tokio::time::sleep(SLOW) => Ok(text("slow done")),
                    () = cancel.cancelled() => Err(ModelError {
                        kind: ModelErrorKind::Cancelled,
                        message: "stopped while thinking".to_owned(),
                    }),
                }
            }
            _ => self.scripted.complete(request, deltas, cancel).await,
        }
    }
}

/// A final answer.
fn text(answer: &str) -> ModelReply {
    ModelReply {
        text: answer.to_owned(),
        ..ModelReply::default()
    }
}

/// The text of a tool message's result, as the reference's `Message.text()` gives it.
fn tool_text(message: &tenx_engine::wire::Message) -> String {
    serde_json::to_value(message)
        .ok()
        .and_then(|json| {
            json["content"].as_array().and_then(|blocks| {
                blocks
                    .iter()
                    .find(|block| block["type"] == "tool_result")
                    .map(|block| match &block["output"] {
                        serde_json::Value::String(text) => text.clone(),
                        other => other.to_string(),
                    })
            })
        })
        .unwrap_or_default()
}
