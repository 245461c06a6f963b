//! Server-sent events of a streamed answer, decoded by `sse-stream` (the SSE framing, byte by
//! byte: `event:`/`data:`/`id:`/`retry:` lines, multi-line data, comments, LF, CR and CRLF line
//! ends, a leading BOM; the same crate `rmcp` decodes MCP's streams with), each wait for bytes
//! within the idle timeout and stoppable by the cancellation token.
//!
//! It is stricter than the HTML spec in one way: a line with a field name other than those four
//! (or without a colon), or a field given twice in one event, is an error, where the spec would
//! ignore the line. No provider this adapter speaks to sends such lines; an answer that does
//! fails as malformed (`the stream is not server-sent events`), never silently.

use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{FutureExt, Stream, StreamExt, TryStreamExt};
use sse_stream::{Error as SseError, Sse, SseStream};
use tenx_engine::ports::{ModelError, ModelErrorKind};
use tokio_util::sync::CancellationToken;

use crate::failure::Caller;
use crate::transport::{cancellable, within};

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Its type (`event:`), `message` when it has none.
    pub event: String,
    /// Its data, the lines of a multi-line `data:` joined by line breaks.
    pub data: String,
}

/// The events of one streamed answer.
pub struct Events {
    stream: Pin<Box<dyn Stream<Item = Result<Sse, SseError>> + Send>>,
    idle: Duration,
}

impl Events {
    /// The events of a 2xx answer's body.
    pub fn from_response(response: reqwest::Response, idle: Duration) -> Self {
        Self::from_bytes(response.bytes_stream(), idle)
    }

    /// The events of any byte stream (an answer's body, or bytes in memory for a benchmark).
    pub fn from_bytes<B, E>(bytes: impl Stream<Item = Result<B, E>> + Send + 'static, idle: Duration) -> Self
    where
        B: Into<Bytes> + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        Self {
            stream: Box::pin(SseStream::from_bytes_stream(bytes.map_ok(Into::into))),
            idle,
        }
    }

    /// The next event with data (events without data are skipped, as the spec says); `None`
    /// when the stream ended.
    ///
    /// An event already decoded from bytes that arrived (most of them: a network read carries
    /// several) is returned at once; only a wait for more bytes arms the idle timeout and
    /// watches the cancellation token, so a long stream does not set a timer per event.
    pub async fn next(&mut self, caller: &Caller, cancel: &CancellationToken) -> Result<Option<Event>, ModelError> {
        loop {
            if cancel.is_cancelled() {
                return Err(caller.cancelled());
            }
            let next = match self.stream.next().now_or_never() {
                Some(ready) => ready,
                None => within(caller, self.idle, cancellable(caller, cancel, self.stream.next())).await??,
            };
            match next {
                None => return Ok(None),
                Some(Ok(Sse { data: None, .. })) => {}
                Some(Ok(Sse {
                    event,
                    data: Some(data),
                    ..
                })) => {
                    return Ok(Some(Event {
                        event: event.unwrap_or_else(|| "message".to_owned()),
                        data,
                    }));
                }
                Some(Err(SseError::Body(_))) => {
                    return Err(caller.error(
                        ModelErrorKind::Connection,
                        "the stream broke before the answer was complete",
                    ));
                }
                Some(Err(SseError::Utf8Parse(_))) => return Err(caller.malformed("the stream is not UTF-8")),
                Some(Err(_)) => return Err(caller.malformed("the stream is not server-sent events")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use super::*;

    fn caller() -> Caller {
        Caller {
            provider: "openai",
            model: "m".into(),
        }
    }

    /// Every event of `pieces`, or the first error.
    async fn events(pieces: &[&'static str]) -> Result<Vec<Event>, ModelError> {
        let stream = futures_util::stream::iter(
            pieces
                .iter()
                .map(|piece| Ok::<_, Infallible>(Bytes::from_static(piece.as_bytes())))
                .collect::<Vec<_>>(),
        );
        let mut events = Events::from_bytes(stream, Duration::from_secs(5));
        let mut all = Vec::new();
        while let Some(event) = events.next(&caller(), &CancellationToken::new()).await? {
            all.push(event);
        }
        Ok(all)
    }

    fn event(event: &str, data: &str) -> Event {
        Event {
            event: event.into(),
            data: data.into(),
        }
    }

    #[tokio::test]
    async fn framing_split_anywhere_is_decoded() {
        let decoded = events(&[
            "\u{feff}data: {\"a\"",
            ":1}\n\nevent: ping\r\ndata: {}\r\n\r",
            "\n: a comment\n\nevent: message_stop\rdata: x\rdata: y\r\r",
            "event: only-a-type\n\ndata: last\n\n",
        ])
        .await
        .unwrap();
        assert_eq!(
            decoded,
            [
                event("message", "{\"a\":1}"),
                event("ping", "{}"),
                event("message_stop", "x\ny"),
                event("message", "last"),
            ]
        );
    }

    #[tokio::test]
    async fn bad_framing_and_bad_bytes_are_malformed_answers() {
        let error = events(&["data: {}\n\nnonsense\n\n"]).await.unwrap_err();
        assert_eq!(
            error.message,
            "provider `openai`, model `m`: malformed answer: the stream is not server-sent events"
        );
        let stream = futures_util::stream::iter([Ok::<_, Infallible>(Bytes::from_static(b"data: \xff\xfe\n\n"))]);
        let mut events = Events::from_bytes(stream, Duration::from_secs(5));
        let error = events.next(&caller(), &CancellationToken::new()).await.unwrap_err();
        assert_eq!(
            error.message,
            "provider `openai`, model `m`: malformed answer: the stream is not UTF-8"
        );
    }

    #[tokio::test]
    async fn a_cancelled_token_stops_before_reading() {
        let token = CancellationToken::new();
        token.cancel();
        let stream = futures_util::stream::iter([Ok::<_, Infallible>(Bytes::from_static(b"data: x\n\n"))]);
        let mut events = Events::from_bytes(stream, Duration::from_secs(5));
        let error = events.next(&caller(), &token).await.unwrap_err();
        assert_eq!(error.kind, ModelErrorKind::Cancelled);
    }
}
