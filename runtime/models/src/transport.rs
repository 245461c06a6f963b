//! The HTTP side of a provider call: one shared `reqwest` client (rustls with the ring provider,
//! no OpenSSL, no proxy, no redirects), a POST with retries, timeouts and cancellation, and
//! bounded body reads.
//!
//! An attempt is tried again only when it fails **before the answer's body starts** with HTTP
//! 429, a 5xx or a connection failure ([`crate::options::RetryPolicy`]); once a body is being
//! read nothing is retried here, so no streamed piece is ever sent twice.

use std::future::Future;
use std::time::Duration;

use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{Client, Response, Url};
use tenx_engine::ports::ModelError;
use tokio_util::sync::CancellationToken;

use crate::backoff;
use crate::failure::{Caller, is_retryable};
use crate::options::ProviderOptions;

/// The largest answer body read whole (a non-streamed answer or an error body).
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The most of an error body read for its identifiers.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Where a provider's requests go: the URL and the headers (the key's header marked sensitive).
#[derive(Clone)]
pub struct Endpoint {
    /// The full URL of the call.
    pub url: Url,
    /// Headers sent with every call.
    pub headers: HeaderMap,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Endpoint")
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The shared client with the host's options.
#[derive(Debug, Clone)]
pub struct Transport {
    client: Client,
    options: ProviderOptions,
}

/// The HTTP client could not be built (no TLS provider, say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientUnavailable;

impl Transport {
    /// A client with `options`' connect timeout.
    pub fn new(options: ProviderOptions) -> Result<Self, ClientUnavailable> {
        // Install ring as the process's rustls provider unless one is installed already (then
        // that one is used; this crate never enables aws-lc or OpenSSL).
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
        let client = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(options.timeouts.connect)
            .user_agent(concat!("tenx/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|_| ClientUnavailable)?;
        Ok(Self { client, options })
    }

    /// The options.
    pub fn options(&self) -> &ProviderOptions {
        &self.options
    }

    /// POSTs `body` (JSON bytes) to `endpoint` until an attempt answers 2xx, the policy gives up
    /// or `cancel` fires. Returns the 2xx answer with its body unread.
    pub async fn post(
        &self,
        caller: &Caller,
        endpoint: &Endpoint,
        body: &[u8],
        cancel: &CancellationToken,
    ) -> Result<Response, ModelError> {
        let policy = self.options.retry;
        let attempts = policy.attempts.max(1);
        let mut attempt = 1_u32;
        loop {
            let sent = self
                .client
                .post(endpoint.url.clone())
                .headers(endpoint.headers.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_vec())
                .send();
            // Not reqwest's own `timeout`: that one also covers the body, and a stream may
            // rightly last longer than the wait for its headers.
            let headers_timeout = self.options.timeouts.headers;
            let (failure, retry_after) =
                match cancellable(caller, cancel, within(caller, headers_timeout, sent)).await?? {
                    Ok(response) if response.status().is_success() => return Ok(response),
                    Ok(response) => {
                        let status = response.status();
                        let retry_after = retry_after(response.headers());
                        let error_body = self
                            .read(caller, response, MAX_ERROR_BODY_BYTES, true, cancel)
                            .await
                            .unwrap_or_default();
                        let failure = caller.status(status, &error_body, attempt, retry_after);
                        if !is_retryable(status) {
                            return Err(failure);
                        }
                        (failure, retry_after)
                    }
                    Err(transport) => {
                        let failure = caller.transport(&transport, attempt);
                        if transport.is_timeout() || !(transport.is_connect() || transport.is_request()) {
                            return Err(failure);
                        }
                        (failure, None)
                    }
                };
            if attempt >= attempts {
                return Err(failure);
            }
            let Some(wait) = backoff::wait(&policy, attempt, retry_after) else {
                return Err(failure);
            };
            cancellable(caller, cancel, tokio::time::sleep(wait)).await?;
            attempt = attempt.saturating_add(1);
        }
    }

    /// Reads a whole body, at most `limit` bytes (`truncate`: stop there quietly; otherwise a
    /// larger body is an error), each piece within the idle timeout.
    pub async fn read(
        &self,
        caller: &Caller,
        mut response: Response,
        limit: usize,
        truncate: bool,
        cancel: &CancellationToken,
    ) -> Result<Vec<u8>, ModelError> {
        let idle = self.options.timeouts.idle;
        let mut body = Vec::new();
        loop {
            let piece = within(caller, idle, cancellable(caller, cancel, response.chunk())).await??;
            let Some(piece) = piece.map_err(|failure| caller.transport(&failure, 1))? else {
                return Ok(body);
            };
            if body.len().saturating_add(piece.len()) > limit {
                if truncate {
                    let room = limit.saturating_sub(body.len());
                    body.extend(piece.iter().take(room));
                    return Ok(body);
                }
                return Err(caller.malformed(format!("the answer is larger than {limit} bytes")));
            }
            body.extend_from_slice(&piece);
        }
    }
}

/// `Retry-After` of an answer, when it is readable.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(backoff::retry_after)
}

/// Runs `work` unless `cancel` fires first.
pub async fn cancellable<T>(
    caller: &Caller,
    cancel: &CancellationToken,
    work: impl Future<Output = T>,
) -> Result<T, ModelError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(caller.cancelled()),
        done = work => Ok(done),
    }
}

/// Runs `work` within `limit`, else a timeout error.
pub async fn within<T>(caller: &Caller, limit: Duration, work: impl Future<Output = T>) -> Result<T, ModelError> {
    tokio::time::timeout(limit, work).await.map_err(|_| {
        caller.error(
            tenx_engine::ports::ModelErrorKind::Timeout,
            format!("no answer within {} ms", limit.as_millis()),
        )
    })
}
