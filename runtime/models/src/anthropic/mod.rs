//! `provider = anthropic`: the messages API. `POST {base_url}/v1/messages` (the base URL
//! defaults to [`DEFAULT_BASE_URL`]), the key as `x-api-key`, `anthropic-version:
//! 2023-06-01`.
//!
//! Layout: [`request`] (the body), [`media`] (a user message's blocks, media included), [`stream`] (a streamed message reassembled), [`reply`] (a
//! whole message), [`parts`] (both into a [`ModelReply`]).

pub mod media;
pub mod parts;
pub mod reply;
pub mod request;
pub mod stream;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};
use tenx_engine::ports::{DeltaSink, ModelError, ModelReply, ModelRequest};

use crate::call::{Protocol, ProviderModel};
use crate::failure::Caller;
use crate::output::OutputShape;
use crate::setup::{Settings, SetupError};
use crate::transport::{Endpoint, Transport};
pub use stream::StreamAssembler;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// A messages-API model.
pub type AnthropicModel = ProviderModel<Messages>;

/// The messages API of one declared model: its provider name and declared `params`.
#[derive(Debug, Clone)]
pub struct Messages {
    model: String,
    params: Map<String, Value>,
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
            protocol: Messages {
                model: settings.model.clone(),
                params: settings.params,
            },
            transport,
            endpoint: Endpoint { url, headers },
            caller: Caller {
                provider: "anthropic",
                model: settings.model,
            },
            stream: settings.stream,
        })
    }
}

impl Protocol for Messages {
    /// The output tool's name and the schema's shape.
    type Output = (String, OutputShape);
    type Assembler = StreamAssembler;

    fn body(
        &self,
        caller: &Caller,
        request: &ModelRequest<'_>,
        stream: bool,
    ) -> Result<(Value, Option<(String, OutputShape)>), ModelError> {
        let prepared =
            request::body(&self.model, &self.params, request, stream).map_err(|fault| fault.to_error(caller))?;
        Ok((prepared.body, prepared.output))
    }

    fn read(
        &self,
        caller: &Caller,
        body: &[u8],
        output: Option<&(String, OutputShape)>,
        deltas: &mut dyn DeltaSink,
    ) -> Result<ModelReply, ModelError> {
        reply::read(caller, body, output, deltas)
    }

    fn assembler(&self, _: Option<&(String, OutputShape)>) -> StreamAssembler {
        StreamAssembler::new()
    }
}
