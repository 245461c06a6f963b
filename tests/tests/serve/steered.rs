//! A steered model for serve tests: it answers from a queue the test fills, free to call any
//! tool name at all (the compiler refuses a scripted turn that calls a tool its agent cannot
//! see, so a model that tries has to come from outside the program), or to take its time
//! over an answer and give up when the run is cancelled.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tenx_engine::ports::{DeltaSink, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, ModelToolCall};
use tokio_util::sync::CancellationToken;

/// One queued answer.
enum Turn {
    Reply(ModelReply),
    /// Answers `text` after `delay`, unless the run is cancelled first.
    Slow(Duration, String),
}

/// A model that plays what the test queued, one answer per call.
#[derive(Default, Clone)]
pub struct Steered {
    turns: Arc<Mutex<VecDeque<Turn>>>,
    /// The tool names each call was shown.
    pub seen_tools: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Steered {
    pub fn text(&self, text: &str) -> &Self {
        self.push(Turn::Reply(ModelReply {
            text: text.to_owned(),
            ..ModelReply::default()
        }))
    }

    /// A turn that calls each `(id, name, arguments)`.
    pub fn calls(&self, calls: &[(&str, &str, Value)]) -> &Self {
        let tool_calls = calls
            .iter()
            .map(|(id, name, args)| ModelToolCall {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                arguments: args.to_string(),
            })
            .collect();
        self.push(Turn::Reply(ModelReply {
            tool_calls,
            ..ModelReply::default()
        }))
    }

    /// A turn that answers `text` after `delay` (or gives up when the run is cancelled).
    pub fn slow(&self, delay: Duration, text: &str) -> &Self {
        self.push(Turn::Slow(delay, text.to_owned()))
    }

    fn push(&self, turn: Turn) -> &Self {
        self.turns.lock().unwrap().push_back(turn);
        self
    }

    /// As a model client for [`super::harness::Setup`].
    pub fn client(&self) -> Option<Arc<dyn ModelClient>> {
        Some(Arc::new(self.clone()))
    }
}

#[async_trait]
impl ModelClient for Steered {
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        _: &mut dyn DeltaSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        self.seen_tools
            .lock()
            .unwrap()
            .push(request.tools.iter().map(|tool| tool.name.clone()).collect());
        let turn = self.turns.lock().unwrap().pop_front();
        match turn {
            Some(Turn::Reply(reply)) => Ok(reply),
            Some(Turn::Slow(delay, text)) => tokio::select! {
                () = tokio::time::sleep(delay) => Ok(ModelReply { text, ..ModelReply::default() }),
                () = cancel.cancelled() => Err(ModelError {
                    kind: ModelErrorKind::Cancelled,
                    message: "cancelled".to_owned(),
                }),
            },
            None => Err(ModelError {
                kind: ModelErrorKind::ScriptExhausted,
                message: "the steered model has no answer left".to_owned(),
            }),
        }
    }
}
