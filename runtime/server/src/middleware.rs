//! What wraps every route (reference-api.md §1), outermost first: CORS, then one layer for the
//! request id and timestamp (in headers and in every body), the request's span and metrics
//! ([`crate::observe`]) and the security headers, then the rate limit
//! ([`crate::rate_limit`]), and the body-size limit (413
//! `REQUEST_TOO_LARGE` on a declared length; a body that streams past it is cut off where it is
//! read, [`crate::routes::body`]), and in production the text of validation errors
//! ([`crate::sanitize`]). Unknown paths and methods answer in the error envelope.

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tower_http::cors::{AllowOrigin, Any, CorsLayer};

use crate::config::ServerSettings;
use crate::envelope::{ApiError, RequestMeta};

/// The body limit every route reads with.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

/// Wraps `router` with the server's middleware.
pub fn wrap(
    router: Router,
    settings: &ServerSettings,
    metrics: Option<std::sync::Arc<crate::metrics::Metrics>>,
) -> Router {
    let limit = BodyLimit(settings.max_request_size);
    let mut router = router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(move |request: Request, next: Next| {
            body_limit(limit, request, next)
        }));
    if settings.mode == crate::Mode::Production {
        router = router.layer(axum::middleware::from_fn(crate::sanitize::validation_errors));
    }
    if let Some(rate) = &settings.rate_limit {
        let rate = crate::rate_limit::RateLimit::with_backend(rate.clone(), &settings.rate_limit_backend);
        router = router.layer(axum::middleware::from_fn(move |request: Request, next: Next| {
            crate::rate_limit::limit(rate.clone(), request, next)
        }));
    }
    router
        .layer(axum::middleware::from_fn(move |request: Request, next: Next| {
            frame(metrics.clone(), request, next)
        }))
        .layer(cors(settings))
}

fn cors(settings: &ServerSettings) -> CorsLayer {
    let layer = CorsLayer::new()
        .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE, Method::OPTIONS])
        .allow_headers(Any);
    if settings.origins.iter().any(|origin| origin == "*") {
        return layer.allow_origin(Any);
    }
    let origins: Vec<HeaderValue> = settings
        .origins
        .iter()
        .filter_map(|origin| HeaderValue::from_str(origin).ok())
        .collect();
    layer
        .allow_origin(AllowOrigin::list(origins))
        .allow_credentials(true)
        // `Last-Event-ID`: a cross-origin `EventSource` reconnect must pass its preflight, so
        // the GET stream can answer it 204 (and never run the message again).
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
            HeaderName::from_static("last-event-id"),
        ])
}

/// The request id and timestamp, the request's span and metrics, and the security headers: one
/// layer, not three (every layer boxes the request's future and clones the service below it).
/// The id is set for the whole request, so the span, the metrics and every body read it. A
/// security header the route already set is kept (the console sends a stricter CSP).
async fn frame(metrics: Option<std::sync::Arc<crate::metrics::Metrics>>, request: Request, next: Next) -> Response {
    let meta = RequestMeta::fresh();
    let mut response = meta
        .clone()
        .scope(crate::observe::observe(metrics, &meta.request_id, request, next))
        .await;
    let headers = response.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        headers
            .entry(HeaderName::from_static(name))
            .or_insert(HeaderValue::from_static(value));
    }
    if let Ok(value) = HeaderValue::from_str(&meta.request_id) {
        headers.insert(HeaderName::from_static("x-request-id"), value);
    }
    if let Ok(value) = HeaderValue::from_str(&meta.timestamp) {
        headers.insert(HeaderName::from_static("x-timestamp"), value);
    }
    response
}

/// The headers every answer carries, as the reference sends them.
const SECURITY_HEADERS: [(&str, &str); 6] = [
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("x-xss-protection", "1; mode=block"),
    ("referrer-policy", "strict-origin-when-cross-origin"),
    ("permissions-policy", "geolocation=(), microphone=(), camera=()"),
    ("content-security-policy", "default-src 'self'; frame-ancestors 'none'"),
];

async fn body_limit(limit: BodyLimit, mut request: Request, next: Next) -> Response {
    if let Some(length) = request.headers().get(header::CONTENT_LENGTH) {
        match length.to_str().ok().and_then(|text| text.trim().parse::<u64>().ok()) {
            Some(length) if length > u64::try_from(limit.0).unwrap_or(u64::MAX) => {
                return too_large(limit.0).into_response();
            }
            Some(_) => {}
            None => {
                let mut error = ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "INVALID_CONTENT_LENGTH",
                    "Invalid Content-Length header",
                );
                error.middleware_form = true;
                return error.into_response();
            }
        }
    }
    request.extensions_mut().insert(limit);
    next.run(request).await
}

/// 413 `REQUEST_TOO_LARGE`, as the reference writes it.
pub fn too_large(limit: usize) -> ApiError {
    #[expect(clippy::cast_precision_loss, reason = "a size in megabytes, shown with one decimal")]
    let megabytes = limit as f64 / (1024.0 * 1024.0);
    let mut error = ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "REQUEST_TOO_LARGE",
        format!("Request body too large. Maximum size is {megabytes:.1}MB"),
    );
    error.extra.insert("max_size_bytes".to_owned(), json!(limit));
    error.extra.insert("max_size_mb".to_owned(), json!(megabytes));
    error.middleware_form = true;
    error
}

async fn not_found() -> ApiError {
    ApiError::http(StatusCode::NOT_FOUND, "Not Found")
}

async fn method_not_allowed() -> ApiError {
    ApiError::http(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed")
}
