//! What a provider client is built from: the declared model (its provider name, `base_url`,
//! `params`) and its API key as the host resolved it at load. Problems are found here, before
//! anything runs, and never print the key.

use reqwest::Url;
use serde_json::{Map, Value};
use tenx_artifact::Model;

/// A declared model, ready to build a client from.
#[derive(Clone)]
pub struct Settings {
    /// The model's key in the artifact (for errors).
    pub declared: String,
    /// The provider's model name.
    pub model: String,
    /// The base URL, if declared.
    pub base_url: Option<String>,
    /// The API key, if the model declares one.
    pub api_key: Option<String>,
    /// The declared `params`, less the ones the adapter reads itself.
    pub params: Map<String, Value>,
    /// Whether to stream (`params.stream`, default `true`).
    pub stream: bool,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Settings")
            .field("declared", &self.declared)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("params", &self.params)
            .field("stream", &self.stream)
            .finish()
    }
}

/// Why a model's client could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("model `{model}`: {reason}")]
pub struct SetupError {
    /// The model's key in the artifact.
    pub model: String,
    /// What is wrong, without the key.
    pub reason: String,
}

impl Settings {
    /// The settings of `declared` (a key of the artifact's `models`) with its resolved key.
    pub fn of(declared: &str, model: &Model, api_key: Option<&str>) -> Result<Self, SetupError> {
        let fail = |reason: &str| SetupError {
            model: declared.to_owned(),
            reason: reason.to_owned(),
        };
        let name = model
            .name
            .clone()
            .filter(|name| !name.is_empty())
            .ok_or_else(|| fail("it has no provider model `name`"))?;
        let Value::Object(mut params) = model.params.clone() else {
            return Err(fail("its `params` is not an object"));
        };
        let stream = match params.remove("stream") {
            None => true,
            Some(Value::Bool(stream)) => stream,
            Some(_) => return Err(fail("its `params.stream` is not a boolean")),
        };
        if model.api_key_env.is_some() && api_key.is_none_or(str::is_empty) {
            return Err(fail("its API key variable is not set"));
        }
        Ok(Self {
            declared: declared.to_owned(),
            model: name,
            base_url: model.base_url.clone(),
            api_key: api_key.filter(|_| model.api_key_env.is_some()).map(str::to_owned),
            params,
            stream,
        })
    }

    /// The call's URL: the base URL (or `default`) with `path` after it.
    pub fn url(&self, default: &str, path: &str) -> Result<Url, SetupError> {
        let base = self.base_url.as_deref().unwrap_or(default).trim_end_matches('/');
        match Url::parse(&format!("{base}/{path}")) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Ok(url),
            _ => Err(self.problem("its `base_url` is not an http or https URL")),
        }
    }

    /// The error for a key that cannot be sent as a header value.
    pub fn bad_key(&self) -> SetupError {
        self.problem("its API key holds characters a header cannot carry")
    }

    /// An error about this model.
    pub fn problem(&self, reason: &str) -> SetupError {
        SetupError {
            model: self.declared.clone(),
            reason: reason.to_owned(),
        }
    }
}
