//! One provider call, the same for every provider: encode the body, POST it (retries,
//! timeouts, cancellation: [`crate::transport`]), then read either the whole answer or the
//! stream of events into the provider's [`Assembler`]. A provider says only what differs, as a
//! [`Protocol`]: its body, its whole-answer reader and its stream assembler.

use async_trait::async_trait;
use serde_json::Value;
use tenx_engine::ports::{DeltaSink, ModelClient, ModelError, ModelReply, ModelRequest};
use tokio_util::sync::CancellationToken;

use crate::failure::Caller;
use crate::sse::Events;
use crate::transport::{Endpoint, MAX_BODY_BYTES, Transport, within};

/// Gathers a streamed answer, one event's data at a time.
pub trait Assembler: Send {
    /// What the request left for reading the answer (the agent's output shape).
    type Output;

    /// Reads one event's data, forwarding text pieces to `deltas` as they come.
    fn push(&mut self, caller: &Caller, data: &str, deltas: &mut dyn DeltaSink) -> Result<(), ModelError>;

    /// Whether the answer's end was seen (the rest of the stream, if any, is not read).
    fn is_done(&self) -> bool;

    /// The whole answer, once the stream ended (a stream cut short is an error).
    fn finish(
        self,
        caller: &Caller,
        output: Option<&Self::Output>,
        deltas: &mut dyn DeltaSink,
    ) -> Result<ModelReply, ModelError>;
}

/// What a provider's API adds to the common call.
pub trait Protocol: Send + Sync {
    /// What encoding a request leaves for reading its answer (the output shape).
    type Output: Send + Sync;
    /// The provider's stream assembler.
    type Assembler: Assembler<Output = Self::Output>;

    /// The JSON body of `request` (streamed or not), and what reading its answer needs; an error
    /// (named for `caller`) when the conversation holds what the API cannot take (media).
    fn body(
        &self,
        caller: &Caller,
        request: &ModelRequest<'_>,
        stream: bool,
    ) -> Result<(Value, Option<Self::Output>), ModelError>;

    /// The reply of a whole (not streamed) answer's body; its text goes to `deltas` as one piece.
    fn read(
        &self,
        caller: &Caller,
        body: &[u8],
        output: Option<&Self::Output>,
        deltas: &mut dyn DeltaSink,
    ) -> Result<ModelReply, ModelError>;

    /// An assembler for a streamed answer.
    fn assembler(&self, output: Option<&Self::Output>) -> Self::Assembler;
}

/// A model behind a provider's API: the [`ModelClient`] of `provider = openai` and `anthropic`.
#[derive(Debug, Clone)]
pub struct ProviderModel<P> {
    pub(crate) protocol: P,
    pub(crate) transport: Transport,
    pub(crate) endpoint: Endpoint,
    pub(crate) caller: Caller,
    pub(crate) stream: bool,
}

impl<P: Protocol> ProviderModel<P> {
    /// One call, without the total timeout.
    async fn call(
        &self,
        request: &ModelRequest<'_>,
        deltas: &mut dyn DeltaSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let caller = &self.caller;
        let (body, output) = self.protocol.body(caller, request, self.stream)?;
        let body = serde_json::to_vec(&body).map_err(|_| caller.malformed("the request could not be encoded"))?;
        let response = self.transport.post(caller, &self.endpoint, &body, cancel).await?;
        let output = output.as_ref();
        if !self.stream {
            let body = self
                .transport
                .read(caller, response, MAX_BODY_BYTES, false, cancel)
                .await?;
            return self.protocol.read(caller, &body, output, deltas);
        }
        let events = Events::from_response(response, self.transport.options().timeouts.idle);
        assemble(caller, events, self.protocol.assembler(output), output, deltas, cancel).await
    }
}

/// Reads `events` into `assembler` until the answer's end (or the stream's), then finishes it.
pub async fn assemble<A: Assembler>(
    caller: &Caller,
    mut events: Events,
    mut assembler: A,
    output: Option<&A::Output>,
    deltas: &mut dyn DeltaSink,
    cancel: &CancellationToken,
) -> Result<ModelReply, ModelError> {
    while let Some(event) = events.next(caller, cancel).await? {
        assembler.push(caller, &event.data, deltas)?;
        if assembler.is_done() {
            break;
        }
    }
    assembler.finish(caller, output, deltas)
}

#[async_trait]
impl<P: Protocol> ModelClient for ProviderModel<P> {
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        deltas: &mut dyn DeltaSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        if cancel.is_cancelled() {
            return Err(self.caller.cancelled());
        }
        let total = self.transport.options().timeouts.total;
        within(&self.caller, total, self.call(&request, deltas, cancel)).await?
    }
}
