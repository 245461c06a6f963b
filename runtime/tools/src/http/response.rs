//! How an `http` tool's answer becomes a result or a [`ToolError`]: the status class decides the
//! error kind, a 2xx body is read (at most [`MAX_BODY_BYTES`]) and decoded. Every message here
//! is shown to the model, so it names the status and a short reason and never the URL, a header
//! or the body.

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use serde_json::Value;
use tenx_engine::ports::{Timestamp, ToolError, ToolErrorKind};

/// The largest answer body read; a larger one is a `Client` error.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// `kind` with `message`.
pub fn error(kind: ToolErrorKind, message: impl Into<String>) -> ToolError {
    ToolError {
        kind,
        message: message.into(),
    }
}

/// `404 Not Found`: the code and its canonical reason.
fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// The error for a status outside 2xx.
pub fn status_error(status: StatusCode, headers: &HeaderMap, now: Timestamp) -> ToolError {
    let text = status_text(status);
    if status == StatusCode::TOO_MANY_REQUESTS {
        let retry_after_ms = headers
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| retry_after_ms(value, now));
        let message = match retry_after_ms {
            Some(ms) => format!("the service answered {text} (retry after {ms} ms)"),
            None => format!("the service answered {text}"),
        };
        return error(ToolErrorKind::RateLimited { retry_after_ms }, message);
    }
    if status.is_redirection() {
        return error(
            ToolErrorKind::Client,
            format!("the service answered {text}; redirects are not followed"),
        );
    }
    let kind = if status.is_server_error() {
        ToolErrorKind::Server
    } else {
        ToolErrorKind::Client
    };
    error(kind, format!("the service answered {text}"))
}

/// `Retry-After` in milliseconds: delay-seconds, or an HTTP-date minus `now` (0 when past).
/// `None` when it is neither.
pub fn retry_after_ms(value: &str, now: Timestamp) -> Option<u64> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(
            value
                .parse::<u64>()
                .map_or(u64::MAX, |seconds| seconds.saturating_mul(1000)),
        );
    }
    let at = jiff::fmt::rfc2822::DateTimeParser::new().parse_timestamp(value).ok()?;
    let at = u64::try_from(at.as_millisecond()).unwrap_or(0);
    Some(at.saturating_sub(now))
}

/// Whether the `Content-Type` says JSON (`application/json` or any `…+json`).
pub fn is_json_type(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|essence| essence.trim().to_ascii_lowercase())
        .is_some_and(|essence| essence == "application/json" || essence.ends_with("+json"))
}

/// A 2xx body as the tool's result.
///
/// - With a `string` result type and a `Content-Type` that is not JSON, the body is the result
///   as text (it must be UTF-8).
/// - Otherwise an empty (or all-whitespace) body is `null`, and any other body must be JSON.
pub fn decode(status: StatusCode, body: &[u8], json_type: bool, string_result: bool) -> Result<Value, ToolError> {
    if string_result && !json_type {
        return String::from_utf8(body.to_vec()).map(Value::String).map_err(|_| {
            error(
                ToolErrorKind::Client,
                format!(
                    "the service answered {} with a body that is not UTF-8 text",
                    status_text(status)
                ),
            )
        });
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(body).map_err(|_| {
        error(
            ToolErrorKind::Client,
            format!(
                "the service answered {} with a body that is not JSON",
                status_text(status)
            ),
        )
    })
}

/// The error for an answer body larger than [`MAX_BODY_BYTES`].
pub fn too_large() -> ToolError {
    error(
        ToolErrorKind::Client,
        format!("the service's answer is larger than {MAX_BODY_BYTES} bytes"),
    )
}

/// The error for a failure of the transport (never its text: reqwest's messages hold the URL).
pub fn transport_error(failure: &reqwest::Error, timeout_ms: u64) -> ToolError {
    if failure.is_timeout() {
        error(
            ToolErrorKind::Timeout,
            format!("the service did not answer within {timeout_ms} ms"),
        )
    } else if failure.is_connect() {
        error(ToolErrorKind::Connection, "could not connect to the service")
    } else {
        error(ToolErrorKind::Connection, "the connection to the service failed")
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;
    use serde_json::json;

    use super::*;

    #[test]
    fn statuses_map_to_kinds() {
        let none = HeaderMap::new();
        let case = |code: u16| status_error(StatusCode::from_u16(code).unwrap(), &none, 0);
        assert_eq!(
            case(404),
            error(ToolErrorKind::Client, "the service answered 404 Not Found")
        );
        assert_eq!(case(400).kind, ToolErrorKind::Client);
        assert_eq!(
            case(500),
            error(ToolErrorKind::Server, "the service answered 500 Internal Server Error")
        );
        assert_eq!(case(503).kind, ToolErrorKind::Server);
        assert_eq!(case(599), error(ToolErrorKind::Server, "the service answered 599"));
        assert_eq!(
            case(302),
            error(
                ToolErrorKind::Client,
                "the service answered 302 Found; redirects are not followed"
            )
        );
        assert_eq!(
            case(429),
            error(
                ToolErrorKind::RateLimited { retry_after_ms: None },
                "the service answered 429 Too Many Requests"
            )
        );
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(
            status_error(StatusCode::TOO_MANY_REQUESTS, &headers, 0),
            error(
                ToolErrorKind::RateLimited {
                    retry_after_ms: Some(2000)
                },
                "the service answered 429 Too Many Requests (retry after 2000 ms)"
            )
        );
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(retry_after_ms("0", 5), Some(0));
        assert_eq!(retry_after_ms(" 120 ", 5), Some(120_000));
        assert_eq!(retry_after_ms("99999999999999999999999", 5), Some(u64::MAX));
        // 1994-11-06T08:49:37Z is 784111777 s after the epoch.
        let at = 784_111_777_000;
        assert_eq!(retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", at - 1_500), Some(1_500));
        assert_eq!(retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", at + 10), Some(0));
        assert_eq!(retry_after_ms("soon", 0), None);
        assert_eq!(retry_after_ms("-5", 0), None);
        assert_eq!(retry_after_ms("", 0), None);
    }

    #[test]
    fn bodies_decode_by_type() {
        let ok = StatusCode::OK;
        assert_eq!(decode(ok, br#"{"a":1}"#, true, false), Ok(json!({"a": 1})));
        assert_eq!(decode(ok, br#"{"a":1}"#, false, false), Ok(json!({"a": 1})));
        assert_eq!(decode(ok, b"", false, false), Ok(Value::Null));
        assert_eq!(decode(ok, b" \n", true, false), Ok(Value::Null));
        assert_eq!(decode(ok, b"plain words", false, true), Ok(json!("plain words")));
        assert_eq!(decode(ok, b"42", false, true), Ok(json!("42")));
        assert_eq!(decode(ok, br#""quoted""#, true, true), Ok(json!("quoted")));
        assert_eq!(
            decode(ok, b"plain words", false, false),
            Err(error(
                ToolErrorKind::Client,
                "the service answered 200 OK with a body that is not JSON"
            ))
        );
        assert_eq!(
            decode(ok, b"plain", true, true),
            Err(error(
                ToolErrorKind::Client,
                "the service answered 200 OK with a body that is not JSON"
            ))
        );
        assert_eq!(
            decode(StatusCode::CREATED, &[0xff, 0xfe], false, true),
            Err(error(
                ToolErrorKind::Client,
                "the service answered 201 Created with a body that is not UTF-8 text"
            ))
        );
    }

    #[test]
    fn json_content_types() {
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(value));
            is_json_type(&headers)
        };
        assert!(with("application/json"));
        assert!(with("Application/JSON; charset=utf-8"));
        assert!(with("application/problem+json"));
        assert!(!with("text/plain"));
        assert!(!with("application/jsonx"));
        assert!(!is_json_type(&HeaderMap::new()));
    }
}
