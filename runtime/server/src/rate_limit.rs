//! The rate limiter (reference-api.md §11): `requests` per `window` for each client IP, each
//! user (the bearer token), or everyone together. It is governor's GCRA, so a client may spend
//! its whole allowance at once and then gets one more request each `window / requests`; over any
//! window it never gets more than the limit. Every limited response carries `X-RateLimit-Limit`,
//! `-Remaining`, `-Reset` (epoch seconds) and `-Reset-After`; over the limit it is 429
//! `RATE_LIMIT_EXCEEDED` with `Retry-After`. `/ping` and the health routes are never limited.
//! Each process limits on its own (a limiter shared across replicas is the scale-out issue's).

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde_json::json;

use crate::envelope::ApiError;

/// Whose requests share an allowance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitBy {
    /// The client's IP address.
    Ip,
    /// The bearer token (anonymous callers share one allowance per IP).
    User,
    /// Everyone together.
    Global,
}

/// `[serve] rate_limit_*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimitSettings {
    /// Requests allowed per window.
    pub requests: NonZeroU32,
    /// The window.
    pub window: Duration,
    /// Whose requests share an allowance.
    pub by: LimitBy,
}

type Limiter = RateLimiter<
    String,
    governor::state::keyed::DefaultKeyedStateStore<String>,
    DefaultClock,
    StateInformationMiddleware,
>;

/// A limiter built once from its settings.
#[derive(Clone)]
pub struct RateLimit {
    limiter: Arc<Limiter>,
    settings: RateLimitSettings,
    period: Duration,
}

impl RateLimit {
    /// The limiter for `settings`.
    pub fn new(settings: RateLimitSettings) -> Self {
        let period = settings
            .window
            .checked_div(settings.requests.get())
            .unwrap_or(settings.window)
            .max(Duration::from_nanos(1));
        let quota = Quota::with_period(period)
            .unwrap_or_else(|| Quota::per_second(settings.requests))
            .allow_burst(settings.requests);
        let limiter: DefaultKeyedRateLimiter<String> = RateLimiter::dashmap(quota);
        Self {
            limiter: Arc::new(limiter.with_middleware::<StateInformationMiddleware>()),
            settings,
            period,
        }
    }
}

fn exempt(path: &str) -> bool {
    path == "/ping" || path.starts_with("/health/")
}

fn key(limit: &RateLimit, request: &Request) -> String {
    let ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unknown".to_owned(), |info| info.0.ip().to_string());
    match limit.settings.by {
        LimitBy::Global => "global".to_owned(),
        LimitBy::Ip => ip,
        LimitBy::User => request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .map_or_else(|| format!("ip:{ip}"), |token| format!("token:{token}")),
    }
}

/// The middleware.
pub async fn limit(limit: RateLimit, request: Request, next: Next) -> Response {
    if exempt(request.uri().path()) {
        return next.run(request).await;
    }
    let key = key(&limit, &request);
    let requests = limit.settings.requests.get();
    let now_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    match limit.limiter.check_key(&key) {
        Ok(snapshot) => {
            let remaining = snapshot.remaining_burst_capacity();
            let used = requests.saturating_sub(remaining);
            let reset_after = limit.period.saturating_mul(used);
            let mut response = next.run(request).await;
            headers(&mut response, requests, remaining, now_epoch, reset_after);
            response
        }
        Err(not_until) => {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            let retry_after = wait.as_secs().saturating_add(u64::from(wait.subsec_nanos() > 0)).max(1);
            let window = limit.settings.window.as_secs();
            let mut error = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "RATE_LIMIT_EXCEEDED",
                format!("Too many requests. Limit: {requests} per {window}s. Retry after {retry_after}s."),
            );
            error.extra.insert("limit".to_owned(), json!(requests));
            error.extra.insert("window_seconds".to_owned(), json!(window));
            error.extra.insert("retry_after_seconds".to_owned(), json!(retry_after));
            error.middleware_form = true;
            let mut response = error
                .header(header::RETRY_AFTER, &retry_after.to_string())
                .into_response();
            headers(&mut response, requests, 0, now_epoch, Duration::from_secs(retry_after));
            response
        }
    }
}

fn headers(response: &mut Response, limit: u32, remaining: u32, now: Duration, reset_after: Duration) {
    let reset_after = reset_after.as_secs_f64().ceil();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a positive whole number of seconds"
    )]
    let reset_after = reset_after as u64;
    let reset = now.as_secs().saturating_add(reset_after);
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-ratelimit-limit", limit.to_string()),
        ("x-ratelimit-remaining", remaining.to_string()),
        ("x-ratelimit-reset", reset.to_string()),
        ("x-ratelimit-reset-after", reset_after.to_string()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
}
