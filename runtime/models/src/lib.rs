//! Model providers for the tenx runtime: the engine's [`ModelClient`] port for
//! `provider = openai` (chat completions: OpenAI, vLLM, Ollama, llama.cpp, LiteLLM) and
//! `provider = anthropic` (the messages API), each behind its cargo feature.
//!
//! A host builds one client per declared model with [`client_for`], from the artifact's
//! [`Model`] and the API key it resolved at load, and puts it in the engine's
//! `Ports::models`. Every call streams (unless `params.stream = false`), forwards text pieces as
//! they arrive, reassembles tool calls, records usage, and fails with a [`ModelError`] whose
//! message names the provider, the model and the HTTP status, never the key or the prompt.
//!
//! [ModelError]: tenx_engine::ports::ModelError
//!
//! Layout, common parts: [`call`] (one call, the same for every provider, behind a provider's
//! [`call::Protocol`] and stream [`call::Assembler`]), [`options`] (timeouts, retry policy),
//! [`setup`] (a declared model read and checked), [`transport`] (the HTTP client, retries, cancellation), [`backoff`] (jittered
//! waits, `Retry-After`), [`sse`] (server-sent events), [`failure`] (error messages),
//! [`conversation`] (reading the engine's messages), [`media`] (media blocks read and checked
//! for sending), [`output`] (output schemas as providers
//! take them). Providers: [`openai`], [`anthropic`]. With the `test-support` feature,
//! `test_support` runs a local fake provider.
//!
//! This is an adapter crate: it does network IO and reads the clock (for `Retry-After` dates)
//! and a random source (for jitter); the engine stays pure.

#[cfg(feature = "anthropic")]
pub mod anthropic;
pub mod backoff;
pub mod call;
pub mod conversation;
pub mod failure;
pub mod media;
#[cfg(feature = "openai")]
pub mod openai;
pub mod options;
pub mod output;
pub mod setup;
pub mod sse;
#[cfg(feature = "test-support")]
pub mod test_support;
pub mod transport;

use std::sync::Arc;

use tenx_artifact::{Model, Provider};
use tenx_engine::ports::ModelClient;

pub use options::{ProviderOptions, RetryPolicy, Timeouts};
pub use setup::{Settings, SetupError};
pub use transport::Transport;

/// The client of the model declared as `declared` (`model`), with its resolved `api_key`
/// (`None` when it declares no `api_key_env`). `scripted` models are the engine's own
/// (`tenx_engine::ScriptedModel`) and are refused here, as is a provider whose feature is off.
pub fn client_for(
    declared: &str,
    model: &Model,
    api_key: Option<&str>,
    transport: &Transport,
) -> Result<Arc<dyn ModelClient>, SetupError> {
    let refuse = |reason: &str| SetupError {
        model: declared.to_owned(),
        reason: reason.to_owned(),
    };
    match model.provider {
        #[cfg(feature = "openai")]
        Provider::Openai => Ok(Arc::new(openai::OpenAiModel::new(
            Settings::of(declared, model, api_key)?,
            transport.clone(),
        )?)),
        #[cfg(feature = "anthropic")]
        Provider::Anthropic => Ok(Arc::new(anthropic::AnthropicModel::new(
            Settings::of(declared, model, api_key)?,
            transport.clone(),
        )?)),
        Provider::Scripted => Err(refuse("a scripted model is played by the engine's `ScriptedModel`")),
        #[allow(unreachable_patterns, reason = "reached when a provider's feature is off")]
        _ => {
            let _ = (api_key, transport);
            Err(refuse("this runtime was built without its provider's feature"))
        }
    }
}
