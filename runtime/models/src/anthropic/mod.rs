//! `provider = anthropic`: the messages API. `POST {base_url}/v1/messages` (the base URL
//! defaults to [`DEFAULT_BASE_URL`]), the key as `x-api-key`, `anthropic-version:
//! 2023-06-01`.
//!
//! Layout: [`request`] (the body), [`stream`] (a streamed message reassembled), [`reply`] (a
//! whole message), [`parts`] (both into a [`ModelReply`]).

pub mod parts;
pub mod reply;
pub mod request;
pub mod stream;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};
use tenx_engine::ports::{DeltaSink, ModelClient, ModelError, ModelReply, ModelRequest};
use tokio_util::sync::CancellationToken;

use crate::failure::Caller;
use crate::setup::{Settings, SetupError};
use crate::sse::Events;
use crate::transport::{Endpoint, MAX_BODY_BYTES, Transport, within};
pub use stream::StreamAssembler;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// A messages-API model.
#[derive(Debug, Clone)]
pub struct AnthropicModel {
    transport: Transport,
    endpoint: Endpoint,
    caller: Caller,
    params: Map<String, Value>,
    stream: bool,
}

impl AnthropicModel {
    /// The client of one declared model.
    pub fn new(settings: Settings, transport: Transport) -> Result<Self, SetupError> {
        let url = settings.url(DEFAULT_BASE_URL, "v1/messages")?;
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        if let Some(key) = &settings.api_key {
            let mut value = HeaderValue::from_str(key).map_err(|_| settings.bad_key())?;
            value.set_sensitive(true);
            headers.insert(HeaderName::from_static("x-api-key"), value);
        }
        Ok(Self {
            transport,
            endpoint: Endpoint { url, headers },
            caller: Caller {
                provider: "anthropic",
                model: settings.model.clone(),
            },
            params: settings.params,
            stream: settings.stream,
        })
    }

    /// One call, without the total timeout.
    async fn call(
        &self,
        request: &ModelRequest<'_>,
        deltas: &mut dyn DeltaSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let caller = &self.caller;
        let prepared = request::body(&caller.model, &self.params, request, self.stream);
        let body =
            serde_json::to_vec(&prepared.body).map_err(|_| caller.malformed("the request could not be encoded"))?;
        let response = self.transport.post(caller, &self.endpoint, &body, cancel).await?;
        let output = prepared.output.as_ref();
        if !self.stream {
            let body = self
                .transport
                .read(caller, response, MAX_BODY_BYTES, false, cancel)
                .await?;
            return reply::read(caller, &body, output, deltas);
        }
        let mut events = Events::from_response(response, self.transport.options().timeouts.idle);
        let mut assembler = StreamAssembler::new();
        while let Some(event) = events.next(caller, cancel).await? {
            assembler.push(caller, &event.data, deltas)?;
            if assembler.is_done() {
                break;
            }
        }
        assembler.finish(caller, output, deltas)
    }
}

#[async_trait]
impl ModelClient for AnthropicModel {
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
