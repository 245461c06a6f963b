//! Server-sent events of a streamed answer, decoded by `eventsource-stream` (the SSE framing:
//! `event:`/`data:` lines, multi-line data, comments, CRLF), each within the idle timeout and
//! stoppable by the cancellation token.

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use tenx_engine::ports::ModelError;
use tokio_util::sync::CancellationToken;

use crate::failure::Caller;
use crate::transport::{cancellable, within};

/// A stream of events of bytes that may fail with `E`.
type EventStream<E> = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<E>>> + Send>>;

/// The events of one streamed answer.
pub struct Events<E> {
    stream: EventStream<E>,
    idle: Duration,
}

impl Events<reqwest::Error> {
    /// The events of a 2xx answer's body.
    pub fn from_response(response: reqwest::Response, idle: Duration) -> Self {
        Self::from_bytes(response.bytes_stream(), idle)
    }
}

impl<E: Send + 'static> Events<E> {
    /// The events of any byte stream (an answer's body, or bytes in memory for a benchmark).
    pub fn from_bytes<B: AsRef<[u8]>>(
        bytes: impl Stream<Item = Result<B, E>> + Send + 'static,
        idle: Duration,
    ) -> Self {
        Self {
            stream: Box::pin(bytes.eventsource()),
            idle,
        }
    }

    /// The next event; `None` when the stream ended.
    pub async fn next(&mut self, caller: &Caller, cancel: &CancellationToken) -> Result<Option<Event>, ModelError> {
        let next = within(caller, self.idle, cancellable(caller, cancel, self.stream.next())).await??;
        match next {
            None => Ok(None),
            Some(Ok(event)) => Ok(Some(event)),
            Some(Err(EventStreamError::Transport(_))) => Err(caller.error(
                tenx_engine::ports::ModelErrorKind::Connection,
                "the stream broke before the answer was complete",
            )),
            Some(Err(EventStreamError::Utf8(_))) => Err(caller.malformed("the stream is not UTF-8")),
            Some(Err(EventStreamError::Parser(_))) => Err(caller.malformed("the stream is not server-sent events")),
        }
    }
}
