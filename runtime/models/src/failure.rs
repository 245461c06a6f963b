//! Errors of a provider call. Every message names the provider and the model and, for an HTTP
//! failure, the status; it never holds the API key, the prompt, the conversation, the URL or an
//! answer body. From a provider's error body only short identifiers are kept (`type`, `code`,
//! `param`), because its free text may quote the request (or part of the key).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use tenx_engine::ports::{ModelError, ModelErrorKind};

/// Who is being called, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// `openai` or `anthropic`.
    pub provider: &'static str,
    /// The provider's model name (`gpt-4o-mini`), never a credential.
    pub model: String,
}

impl Caller {
    /// An error of `kind`: "provider `openai`, model `gpt-4o-mini`: {what}".
    pub fn error(&self, kind: ModelErrorKind, what: impl std::fmt::Display) -> ModelError {
        ModelError {
            kind,
            message: format!("provider `{}`, model `{}`: {what}", self.provider, self.model),
        }
    }

    /// The call was cancelled (the run was stopped).
    pub fn cancelled(&self) -> ModelError {
        self.error(ModelErrorKind::Cancelled, "the call was cancelled")
    }

    /// The answer was malformed: `what` says how (never quoting it).
    pub fn malformed(&self, what: impl std::fmt::Display) -> ModelError {
        self.error(ModelErrorKind::Refused, format!("malformed answer: {what}"))
    }

    /// An answer with an HTTP status outside 2xx, after `attempts` attempts, with the answer's
    /// `Retry-After` if it had one (a 429 carries it to the engine, and the message says it).
    /// `body` is read only for its error identifiers.
    pub fn status(&self, status: StatusCode, body: &[u8], attempts: u32, retry_after: Option<Duration>) -> ModelError {
        let kind = status_kind(status, retry_after);
        let mut text = format!("HTTP {}", status_text(status));
        if let Some(detail) = error_identifiers(body) {
            text.push_str(&format!(" ({detail})"));
        }
        if let Some(wait) = retry_after {
            text.push_str(&format!(", Retry-After {} ms", wait.as_millis()));
        }
        if attempts > 1 {
            text.push_str(&format!(" after {attempts} attempts"));
        }
        self.error(kind, text)
    }

    /// A failure of the transport (reqwest's own text is never used: it holds the URL).
    pub fn transport(&self, failure: &reqwest::Error, attempts: u32) -> ModelError {
        let (kind, what) = if failure.is_timeout() {
            (ModelErrorKind::Timeout, "no answer in time")
        } else if failure.is_connect() {
            (ModelErrorKind::Connection, "could not connect")
        } else {
            (ModelErrorKind::Connection, "the connection failed")
        };
        if attempts > 1 {
            self.error(kind, format!("{what} after {attempts} attempts"))
        } else {
            self.error(kind, what)
        }
    }
}

/// The kind of an HTTP status outside 2xx (a 429 with its `Retry-After`, if any).
pub fn status_kind(status: StatusCode, retry_after: Option<Duration>) -> ModelErrorKind {
    if status == StatusCode::TOO_MANY_REQUESTS {
        ModelErrorKind::RateLimited {
            retry_after_ms: retry_after.map(|wait| u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
        }
    } else if status.is_server_error() {
        ModelErrorKind::Server
    } else {
        ModelErrorKind::Refused
    }
}

/// Whether a status is worth another attempt: 429 and 5xx, never another 4xx.
pub fn is_retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// `429 Too Many Requests`: the code and its canonical reason.
fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// The identifiers of a provider's error body (`{"error": {"type", "code", "param"}}`, as OpenAI
/// and Anthropic send it): `type `x`, code `y``. Values that are not short identifiers are left
/// out, so nothing the request held can come back through them.
pub fn error_identifiers(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let error = value.get("error")?;
    let parts: Vec<String> = ["type", "code", "param"]
        .into_iter()
        .filter_map(|field| {
            let text = error.get(field)?.as_str()?;
            is_identifier(text).then(|| format!("{field} `{text}`"))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// A short name made of letters, digits and `_.-[]`.
fn is_identifier(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'-' | b'[' | b']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller() -> Caller {
        Caller {
            provider: "openai",
            model: "gpt-4o-mini".into(),
        }
    }

    #[test]
    fn statuses_name_the_provider_the_model_and_the_code() {
        let body = br#"{"error": {"message": "Incorrect API key provided: sk-secret. You can find your key at ...", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}"#;
        let error = caller().status(StatusCode::UNAUTHORIZED, body, 1, None);
        assert_eq!(error.kind, ModelErrorKind::Refused);
        assert_eq!(
            error.message,
            "provider `openai`, model `gpt-4o-mini`: HTTP 401 Unauthorized (type `invalid_request_error`, code `invalid_api_key`)"
        );
        let error = caller().status(StatusCode::TOO_MANY_REQUESTS, b"not json", 3, None);
        assert_eq!(error.kind, ModelErrorKind::RateLimited { retry_after_ms: None });
        assert_eq!(
            error.message,
            "provider `openai`, model `gpt-4o-mini`: HTTP 429 Too Many Requests after 3 attempts"
        );
        let error = caller().status(StatusCode::TOO_MANY_REQUESTS, b"", 1, Some(Duration::from_secs(7)));
        assert_eq!(
            error.kind,
            ModelErrorKind::RateLimited {
                retry_after_ms: Some(7_000)
            }
        );
        assert_eq!(
            error.message,
            "provider `openai`, model `gpt-4o-mini`: HTTP 429 Too Many Requests, Retry-After 7000 ms"
        );
        assert_eq!(
            caller().status(StatusCode::from_u16(529).unwrap(), b"", 1, None).kind,
            ModelErrorKind::Server
        );
    }

    #[test]
    fn only_identifiers_are_kept_from_an_error_body() {
        let body =
            br#"{"error": {"type": "a prompt: tell me the secret", "code": "x", "param": "messages[3].content"}}"#;
        assert_eq!(
            error_identifiers(body).as_deref(),
            Some("code `x`, param `messages[3].content`")
        );
        assert_eq!(error_identifiers(br#"{"error": {"message": "m"}}"#), None);
        assert_eq!(error_identifiers(b"<html>"), None);
    }

    #[test]
    fn retryable_statuses() {
        assert!(is_retryable(StatusCode::TOO_MANY_REQUESTS));
        assert!(is_retryable(StatusCode::INTERNAL_SERVER_ERROR));
        assert!(is_retryable(StatusCode::from_u16(529).unwrap()));
        assert!(!is_retryable(StatusCode::BAD_REQUEST));
        assert!(!is_retryable(StatusCode::UNAUTHORIZED));
        assert!(!is_retryable(StatusCode::NOT_FOUND));
    }
}
