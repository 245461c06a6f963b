//! `http` tools: prepared once at load (URL and declared headers filled from the environment,
//! checked), then called with one shared client.
//!
//! A call makes exactly one attempt (retries are the engine's decision, from the error's kind),
//! follows no redirect, uses no proxy, and sends:
//!
//! - `POST`/`PUT`/`PATCH`: the arguments as a JSON body (`Content-Type: application/json`);
//!   `GET`/`DELETE`: the arguments as a query string ([`request::with_query`]), no body;
//! - the declared headers, `Accept: application/json` unless declared, `Idempotency-Key`, and
//!   the identity headers ([`request::add_runtime_headers`]).

pub mod request;
pub mod response;

use std::time::Duration;

use reqwest::header::{ACCEPT, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Method, Url};
use serde_json::Value;
use tenx_artifact::{HttpMethod, Run, Schema, Tool};
use tenx_engine::ports::{Timestamp, ToolError, ToolInvocation};

use crate::env_template::{self, Variables};
use crate::load_error::LoadProblem;
use request::IDENTITY_HEADER_PREFIX;
use response::{MAX_BODY_BYTES, decode, is_json_type, status_error, too_large, transport_error};

/// The shared client: rustls with the ring provider, no redirects, no proxy.
pub fn client() -> Result<Client, LoadProblem> {
    // Install ring as the process's rustls provider unless one is installed already (then that
    // one is used; this crate never enables aws-lc or OpenSSL).
    let _already_installed = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(concat!("tenx/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|_| LoadProblem::HttpClient)
}

/// An `http` tool ready to call. Its `Debug` shows no URL and no header value.
pub struct HttpTool {
    method: Method,
    url: Url,
    headers: HeaderMap,
    timeout_ms: u64,
    string_result: bool,
}

impl std::fmt::Debug for HttpTool {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("HttpTool")
            .field("method", &self.method)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("timeout_ms", &self.timeout_ms)
            .finish_non_exhaustive()
    }
}

/// Whether a result schema is a string type (`{"type": "string", …}`).
fn is_string_schema(result: Option<&Schema>) -> bool {
    result.is_some_and(|schema| schema.to_value().get("type").and_then(Value::as_str) == Some("string"))
}

impl HttpTool {
    /// Prepares the `http` tool declared as `tool`, filling `${NAME}` from `variables`; every
    /// problem is pushed to `problems` (`None` then, and for a tool that is not `http`).
    pub fn prepare(
        tool: &str,
        declaration: &Tool,
        variables: &dyn Variables,
        problems: &mut Vec<LoadProblem>,
    ) -> Option<Self> {
        let Run::Http {
            method,
            url,
            timeout_ms,
            headers,
        } = &declaration.run
        else {
            return None;
        };
        let before = problems.len();
        let url = match env_template::fill(url, variables) {
            Ok(filled) => match Url::parse(&filled) {
                Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Some(url),
                _ => {
                    problems.push(LoadProblem::InvalidUrl { tool: tool.to_string() });
                    None
                }
            },
            Err(error) => {
                problems.push(LoadProblem::Template {
                    tool: tool.to_string(),
                    part: "its URL".into(),
                    error,
                });
                None
            }
        };
        let mut header_map = HeaderMap::new();
        for (name, template) in headers {
            if let Some((name, value)) = prepare_header(tool, name, template, variables, problems) {
                header_map.insert(name, value);
            }
        }
        if !header_map.contains_key(ACCEPT) {
            header_map.insert(ACCEPT, HeaderValue::from_static("application/json"));
        }
        let url = url?;
        (problems.len() == before).then(|| Self {
            method: match method {
                HttpMethod::Get => Method::GET,
                HttpMethod::Post => Method::POST,
                HttpMethod::Put => Method::PUT,
                HttpMethod::Patch => Method::PATCH,
                HttpMethod::Delete => Method::DELETE,
            },
            url,
            headers: header_map,
            timeout_ms: (*timeout_ms).max(1),
            string_result: is_string_schema(declaration.result.as_ref()),
        })
    }

    /// Sends one call and reads its answer.
    pub async fn call(
        &self,
        client: &Client,
        invocation: &ToolInvocation<'_>,
        now: Timestamp,
    ) -> Result<Value, ToolError> {
        let sends_body = matches!(self.method, Method::POST | Method::PUT | Method::PATCH);
        let url = if sends_body {
            self.url.clone()
        } else {
            request::with_query(self.url.clone(), invocation.arguments)
        };
        let mut headers = self.headers.clone();
        request::add_runtime_headers(&mut headers, invocation.idempotency_key, invocation.identity);
        let mut builder = client
            .request(self.method.clone(), url)
            .headers(headers)
            .timeout(Duration::from_millis(self.timeout_ms));
        if sends_body {
            builder = builder.json(invocation.arguments);
        }
        let mut answer = builder
            .send()
            .await
            .map_err(|failure| transport_error(&failure, self.timeout_ms))?;
        let status = answer.status();
        if !status.is_success() {
            return Err(status_error(status, answer.headers(), now));
        }
        let json_type = is_json_type(answer.headers());
        let mut body = Vec::new();
        while let Some(chunk) = answer
            .chunk()
            .await
            .map_err(|failure| transport_error(&failure, self.timeout_ms))?
        {
            if body.len().saturating_add(chunk.len()) > MAX_BODY_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        decode(status, &body, json_type, self.string_result)
    }
}

/// One declared header, filled and checked.
fn prepare_header(
    tool: &str,
    name: &str,
    template: &str,
    variables: &dyn Variables,
    problems: &mut Vec<LoadProblem>,
) -> Option<(HeaderName, HeaderValue)> {
    let invalid = |reason: &str| LoadProblem::InvalidHeader {
        tool: tool.to_string(),
        name: name.to_string(),
        reason: reason.to_string(),
    };
    let is_identity = name
        .get(..IDENTITY_HEADER_PREFIX.len())
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case(IDENTITY_HEADER_PREFIX));
    if is_identity || tenx_artifact::binding::is_reserved_header(name) {
        problems.push(invalid("the runtime writes this header itself"));
        return None;
    }
    let Ok(header_name) = HeaderName::from_bytes(name.as_bytes()) else {
        problems.push(invalid("it is not an HTTP header name"));
        return None;
    };
    let filled = match env_template::fill(template, variables) {
        Ok(filled) => filled,
        Err(error) => {
            problems.push(LoadProblem::Template {
                tool: tool.to_string(),
                part: format!("header `{name}`"),
                error,
            });
            return None;
        }
    };
    if !tenx_artifact::binding::is_header_value(&filled) {
        problems.push(invalid("its value, once filled in, holds a control character"));
        return None;
    }
    let Ok(mut value) = HeaderValue::from_str(&filled) else {
        problems.push(invalid("its value, once filled in, is not a valid header value"));
        return None;
    };
    value.set_sensitive(true);
    Some((header_name, value))
}
