//! `provider = openai`: the chat-completions API of OpenAI and of every server that speaks it
//! (vLLM, Ollama, llama.cpp's server, LiteLLM). `POST {base_url}/chat/completions`, the key (if
//! the model declares one) as `Authorization: Bearer …`.
//!
//! Layout: [`request`] (the body), [`media`] (a user message's media as content parts), [`strict`] (whether a schema can be strict), [`stream`] (a
//! streamed answer reassembled), [`reply`] (a whole answer), [`parts`] (both into a
//! [`ModelReply`]).

pub mod media;
pub mod parts;
pub mod reply;
pub mod request;
pub mod stream;
pub mod strict;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Map, Value};
use tenx_engine::ports::{DeltaSink, ModelError, ModelReply, ModelRequest};

use crate::call::{Protocol, ProviderModel};
use crate::failure::Caller;
use crate::output::OutputShape;
use crate::setup::{Settings, SetupError};
use crate::transport::{Endpoint, Transport};
pub use stream::StreamAssembler;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A chat-completions model.
pub type OpenAiModel = ProviderModel<ChatCompletions>;

/// The chat-completions API of one declared model: its provider name and declared `params`.
#[derive(Debug, Clone)]
pub struct ChatCompletions {
    model: String,
    params: Map<String, Value>,
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
            protocol: ChatCompletions {
                model: settings.model.clone(),
                params: settings.params,
            },
            transport,
            endpoint: Endpoint { url, headers },
            caller: Caller {
                provider: "openai",
                model: settings.model,
            },
            stream: settings.stream,
        })
    }
}

impl Protocol for ChatCompletions {
    type Output = OutputShape;
    type Assembler = StreamAssembler;

    fn body(
        &self,
        caller: &Caller,
        request: &ModelRequest<'_>,
        stream: bool,
    ) -> Result<(Value, Option<OutputShape>), ModelError> {
        let prepared =
            request::body(&self.model, &self.params, request, stream).map_err(|fault| fault.to_error(caller))?;
        Ok((prepared.body, prepared.output))
    }

    fn read(
        &self,
        caller: &Caller,
        body: &[u8],
        output: Option<&OutputShape>,
        deltas: &mut dyn DeltaSink,
    ) -> Result<ModelReply, ModelError> {
        reply::read(caller, body, output, deltas)
    }

    fn assembler(&self, output: Option<&OutputShape>) -> StreamAssembler {
        StreamAssembler::new(output)
    }
}
