//! `provider = openai`: the chat-completions API of OpenAI and of every server that speaks it
//! (vLLM, Ollama, llama.cpp's server, LiteLLM). `POST {base_url}/chat/completions`, the key (if
//! the model declares one) as `Authorization: Bearer …`.
//!
//! Layout: [`request`] (the body), [`strict`] (whether a schema can be strict), [`stream`] (a
//! streamed answer reassembled), [`reply`] (a whole answer), [`parts`] (both into a
//! [`ModelReply`]).

pub mod parts;
pub mod reply;
pub mod request;
pub mod stream;
pub mod strict;

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Map, Value};
use tenx_engine::ports::{DeltaSink, ModelClient, ModelError, ModelReply, ModelRequest};
use tokio_util::sync::CancellationToken;

use crate::failure::Caller;
use crate::setup::{Settings, SetupError};
use crate::sse::Events;
use crate::transport::{Endpoint, MAX_BODY_BYTES, Transport, within};
pub use stream::StreamAssembler;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A chat-completions model.
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    transport: Transport,
    endpoint: Endpoint,
    caller: Caller,
    params: Map<String, Value>,
    stream: bool,
}

impl OpenAiModel {
    /// The client of one declared model.
    pub fn new(settings: Settings, transport: Transport) -> Result<Self, SetupError> {
        let url = settings.url(DEFAULT_BASE_URL, "chat/completions")?;
        let mut headers = HeaderMap::new();
        if let Some(key) = &settings.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| settings.bad_key())?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(Self {
            transport,
            endpoint: Endpoint { url, headers },
            caller: Caller {
                provider: "openai",
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
        let mut assembler = StreamAssembler::new(output);
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
impl ModelClient for OpenAiModel {
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
