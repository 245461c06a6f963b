//! One `tracing` span per request and the HTTP metrics. The span `request` carries the request
//! id (the `X-Request-ID` the answer carries), the method, the route template (never the path a
//! client sent: no ids in it), the status and the latency; one `info` event closes it. Nothing
//! else of the request is logged: no header (tokens), no body (messages), no query (tokens in
//! `?token=`).

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

use crate::envelope::Refusal;
use crate::metrics::Metrics;

/// The route template of an unknown path.
pub const UNMATCHED: &str = "unmatched";

/// Runs the request in its span and counts it; called by the middleware inside the request
/// id's scope ([`crate::middleware`]).
pub async fn observe(
    metrics: Option<std::sync::Arc<Metrics>>,
    request_id: &str,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| UNMATCHED.to_owned(), |path| path.as_str().to_owned());
    let span = tracing::info_span!(
        "request",
        request_id = %request_id,
        method = %method,
        route = %route,
        status = tracing::field::Empty,
        latency_ms = tracing::field::Empty,
    );
    let response = next.run(request).instrument(span.clone()).await;
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    span.record("status", status);
    span.record("latency_ms", elapsed.as_secs_f64() * 1000.0);
    span.in_scope(|| {
        if status >= 500 {
            tracing::warn!("answered");
        } else {
            tracing::info!("answered");
        }
    });
    if let Some(metrics) = &metrics {
        let refusal = response
            .extensions()
            .get::<Refusal>()
            .filter(|_| (400..500).contains(&status))
            .map(|refusal| refusal.0.as_str());
        metrics.request(method, &route, status, elapsed.as_secs_f64(), refusal);
    }
    response
}

/// The method as a label: the standard ones by name, anything else `other`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}
