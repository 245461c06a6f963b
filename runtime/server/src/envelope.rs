//! The standard API's envelopes (reference-api.md §2): `{"data", "metadata"}` on success and
//! `{"error": {code, message, details}, "metadata"}` on failure, both carrying the request's id
//! and timestamp. The request middleware ([`crate::middleware`]) sets them for the duration of a
//! request; everything that builds a body reads them from here.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

tokio::task_local! {
    static REQUEST: RequestMeta;
}

/// The id and timestamp of the request being answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestMeta {
    /// A uuid4, also sent as `X-Request-ID`.
    pub request_id: String,
    /// ISO-8601 UTC time without a zone, also sent as `X-Timestamp`.
    pub timestamp: String,
}

impl RequestMeta {
    /// A new id and the current time.
    pub fn fresh() -> Self {
        Self {
            request_id: uuid::Uuid::new_v4().to_string(),
            timestamp: civil(jiff::Timestamp::now()),
        }
    }

    /// The meta of the request being answered (a fresh one outside a request).
    pub fn current() -> Self {
        REQUEST.try_with(Clone::clone).unwrap_or_else(|_| Self::fresh())
    }

    /// Runs `future` with this meta as the current request's.
    pub async fn scope<F: Future>(self, future: F) -> F::Output {
        REQUEST.scope(self, future).await
    }
}

/// A moment as the reference writes times: ISO-8601 without a zone (tenx writes UTC).
pub fn civil(at: jiff::Timestamp) -> String {
    at.to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .datetime()
        .strftime("%Y-%m-%dT%H:%M:%S%.6f")
        .to_string()
}

/// A success envelope with message `OK`.
pub fn ok(data: Value) -> Response {
    ok_with(data, "OK")
}

/// A success envelope with its own message.
pub fn ok_with(data: Value, message: &str) -> Response {
    let meta = RequestMeta::current();
    // Built by hand: `json!` would copy `data` (it serializes each value it is given), and a
    // turn's data is most of the answer.
    let mut body = serde_json::Map::with_capacity(2);
    body.insert("data".to_owned(), data);
    body.insert(
        "metadata".to_owned(),
        json!({"request_id": meta.request_id, "timestamp": meta.timestamp, "message": message}),
    );
    (StatusCode::OK, axum::Json(Value::Object(body))).into_response()
}

/// An error as the API answers it (boxed: errors travel in every `Result` of a handler).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError(Box<ErrorBody>);

impl std::ops::Deref for ApiError {
    type Target = ErrorBody;

    fn deref(&self) -> &ErrorBody {
        &self.0
    }
}

impl std::ops::DerefMut for ApiError {
    fn deref_mut(&mut self) -> &mut ErrorBody {
        &mut self.0
    }
}

/// What an [`ApiError`] says: a status, a stable code, a message and details.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorBody {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable code (`VALIDATION_ERROR`, `INTERRUPT_001`, `HTTPException`, …).
    pub code: String,
    /// The message, written for the caller; never a secret.
    pub message: String,
    /// Always a list (request validation errors fill it).
    pub details: Vec<Value>,
    /// Extra fields inside `error` (413 and 429 carry their limits).
    pub extra: serde_json::Map<String, Value>,
    /// Whether the body uses the middleware form of `metadata` (`{request_id, status}`).
    pub middleware_form: bool,
    /// Extra response headers (`WWW-Authenticate`, `Retry-After`).
    pub headers: Vec<(header::HeaderName, HeaderValue)>,
}

impl ApiError {
    /// An error with a status, a code and a message.
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self(Box::new(ErrorBody {
            status,
            code: code.to_owned(),
            message: message.into(),
            details: Vec::new(),
            extra: serde_json::Map::new(),
            middleware_form: false,
            headers: Vec::new(),
        }))
    }

    /// The reference's `HTTPException` form: the code is `HTTPException`.
    pub fn http(status: StatusCode, message: impl Into<String>) -> Self {
        Self::new(status, "HTTPException", message)
    }

    /// A request validation error (422 `VALIDATION_ERROR`) with pydantic-shaped details.
    pub fn validation(message: impl Into<String>, details: Vec<Value>) -> Self {
        let mut error = Self::new(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR", message);
        error.details = details;
        error
    }

    /// A request validation error with one detail `{loc, msg, type}`.
    pub fn invalid_field(loc: Value, msg: impl Into<String>, kind: &str) -> Self {
        let msg = msg.into();
        Self::validation(msg.clone(), vec![json!({"loc": loc, "msg": msg, "type": kind})])
    }

    /// A validation error of an empty (or `{}`) body: the reference's message is then
    /// "Validation error" (the details still say what is wrong).
    #[must_use]
    pub fn of_empty_body(mut self) -> Self {
        if self.code == "VALIDATION_ERROR" {
            self.message = "Validation error".to_owned();
        }
        self
    }

    /// The same error with a response header.
    #[must_use]
    pub fn header(mut self, name: header::HeaderName, value: &str) -> Self {
        if let Ok(value) = HeaderValue::from_str(value) {
            self.headers.push((name, value));
        }
        self
    }

    /// The error's body.
    pub fn body(&self) -> Value {
        let meta = RequestMeta::current();
        let mut error = json!({"code": self.code, "message": self.message, "details": self.details});
        if let Some(object) = error.as_object_mut() {
            object.extend(self.extra.clone());
        }
        let metadata = if self.middleware_form {
            json!({"request_id": meta.request_id, "status": "error"})
        } else {
            json!({"request_id": meta.request_id, "timestamp": meta.timestamp, "message": self.message})
        };
        json!({"error": error, "metadata": metadata})
    }
}

impl From<tenx_engine::RunError> for ApiError {
    fn from(error: tenx_engine::RunError) -> Self {
        let status = StatusCode::from_u16(error.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        // The engine's ownership denial is the reference's authorization denial, an `HTTPException`.
        let code = match error.code {
            tenx_engine::ErrorCode::NotAuthorized => "HTTPException",
            code => code.as_str(),
        };
        let mut api = Self::new(status, code, error.message);
        api.details = match error.details {
            Value::Null => Vec::new(),
            Value::Array(items) => items,
            other => vec![other],
        };
        api
    }
}

/// The code of an error answer, kept on the response for the metrics ([`crate::observe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.body();
        let mut response = (self.status, axum::Json(body)).into_response();
        response.extensions_mut().insert(Refusal(self.code.clone()));
        for (name, value) in self.0.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

/// What a handler returns.
pub type ApiResult = Result<Response, ApiError>;
