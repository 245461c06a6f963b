//! [`ListenClient`]: the HTTP client of a streamable-HTTP connection, and the standalone `GET`
//! stream it keeps open (the "listen" stream, on which a server sends what is not the answer
//! to a request, such as a `notifications/tools/list_changed` it makes on its own).
//!
//! Every request is reqwest's, exactly as rmcp makes it, with the headers of the host's
//! configuration (never anything of the caller's). rmcp opens the listen stream once, after
//! the handshake, and takes a `405 Method Not Allowed` as "not offered"; what it does not do
//! (this connection turns its resumption retries off, so that a broken answer fails its call
//! at once) is open the stream again when it drops. Here, a listen stream that ends or breaks
//! is opened again, with backoff, for as long as the connection lives; an answer that says it
//! never will be (405, a refused credential, an unknown session, any other 4xx) ends it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::time::Instant;

use crate::server::backoff;

/// A stream open this long (or that delivered an event) was healthy: the backoff starts over.
const HEALTHY: Duration = Duration::from_secs(30);

type Events = BoxStream<'static, Result<Sse, SseError>>;
type Failure = StreamableHttpError<reqwest::Error>;

/// reqwest, with a listen stream that is opened again when it drops.
#[derive(Debug, Clone)]
pub(crate) struct ListenClient {
    http: reqwest::Client,
}

impl ListenClient {
    pub(crate) fn new(http: reqwest::Client) -> Self {
        Self { http }
    }
}

impl StreamableHttpClient for ListenClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.http
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.http
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.http
            .post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Failure> {
        self.http
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, Failure> {
        let first = self
            .http
            .get_stream_with_max_sse_event_size(
                Arc::clone(&uri),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
            .await;
        // rmcp opens the listen stream with a session and no event id; a `GET` with an event
        // id resumes the answer stream of a request, which stays rmcp's to handle.
        let (Some(session_id), None) = (session_id, last_event_id) else {
            return first;
        };
        let listen = Listen {
            http: self.http.clone(),
            uri,
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
            last_event_id: None,
            server_retry: None,
        };
        match first {
            Ok(events) => Ok(listen.reopening(Some(events))),
            // Not offered (405), or refused for good: as rmcp would, without the stream.
            Err(failure) if gives_up(&failure) => Err(failure),
            // Offered, but not open yet (the server busy, the connection reset): try again.
            Err(_) => Ok(listen.reopening(None)),
        }
    }
}

/// What it takes to open the listen stream of one session again.
struct Listen {
    http: reqwest::Client,
    uri: Arc<str>,
    session_id: Arc<str>,
    auth_header: Option<String>,
    custom_headers: HashMap<HeaderName, HeaderValue>,
    max_sse_event_size: usize,
    /// The id of the last event received, sent back as `Last-Event-ID` (a server that keeps
    /// events sends what was missed).
    last_event_id: Option<String>,
    /// The wait the server asked for (an event's `retry` field), at least this long.
    server_retry: Option<Duration>,
}

/// Where the listen stream is.
struct State {
    listen: Listen,
    events: Option<Events>,
    /// Drops (or failed attempts) in a row since the last healthy stream.
    failures: u32,
    /// When the current stream opened, and whether it delivered an event.
    opened: Instant,
    delivered: bool,
}

impl Listen {
    /// The listen stream as rmcp reads it: every event of every stream opened in turn; it ends
    /// only when the server says it never will be open again (or when rmcp drops it, with the
    /// connection).
    fn reopening(self, events: Option<Events>) -> Events {
        let state = State {
            failures: u32::from(events.is_none()),
            listen: self,
            events,
            opened: Instant::now(),
            delivered: false,
        };
        stream::unfold(state, |mut state| async move {
            loop {
                if let Some(events) = state.events.as_mut() {
                    match events.next().await {
                        Some(Ok(mut event)) => {
                            if let Some(id) = &event.id {
                                state.listen.last_event_id = Some(id.clone());
                            }
                            // Honoured here; rmcp, given it, would reopen the stream itself.
                            if let Some(millis) = event.retry.take() {
                                state.listen.server_retry = Some(Duration::from_millis(millis));
                            }
                            state.delivered = true;
                            return Some((Ok(event), state));
                        }
                        Some(Err(_)) | None => {
                            state.events = None;
                            if state.delivered || state.opened.elapsed() >= HEALTHY {
                                state.failures = 0;
                            }
                            state.failures = state.failures.saturating_add(1);
                        }
                    }
                }
                let wait = backoff(state.failures).max(state.listen.server_retry.unwrap_or_default());
                tokio::time::sleep(wait).await;
                match state.listen.open().await {
                    Ok(events) => {
                        state.events = Some(events);
                        state.opened = Instant::now();
                        state.delivered = false;
                    }
                    Err(failure) if gives_up(&failure) => return None,
                    Err(_) => state.failures = state.failures.saturating_add(1),
                }
            }
        })
        .boxed()
    }

    /// One `GET`, with the headers rmcp gave (the host's configuration and the protocol's).
    async fn open(&self) -> Result<Events, Failure> {
        self.http
            .get_stream_with_max_sse_event_size(
                Arc::clone(&self.uri),
                Some(Arc::clone(&self.session_id)),
                self.last_event_id.clone(),
                self.auth_header.clone(),
                self.custom_headers.clone(),
                self.max_sse_event_size,
            )
            .await
    }
}

/// Whether an answer to the `GET` says the stream will not be open again: 405 (not offered),
/// a refused credential, an unknown session (the connection is made again at the next call),
/// any other 4xx but 408, 409 (one already open) and 429, or a stream of the wrong type.
/// Network failures and 5xx are tried again.
fn gives_up(failure: &Failure) -> bool {
    match failure {
        StreamableHttpError::Client(error) => error
            .status()
            .is_some_and(|status| status.is_client_error() && ![408, 409, 429].contains(&status.as_u16())),
        StreamableHttpError::HttpStatus(_)
        | StreamableHttpError::Io(_)
        | StreamableHttpError::Sse(_)
        | StreamableHttpError::UnexpectedEndOfStream => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_answers_that_say_never_again_end_the_stream() {
        assert!(gives_up(&StreamableHttpError::ServerDoesNotSupportSse));
        assert!(gives_up(&StreamableHttpError::SessionExpired));
        assert!(gives_up(&StreamableHttpError::UnexpectedContentType(None)));
        assert!(!gives_up(&StreamableHttpError::UnexpectedEndOfStream));
        assert!(!gives_up(&StreamableHttpError::Io(std::io::Error::from(
            std::io::ErrorKind::ConnectionReset
        ))));
    }
}
