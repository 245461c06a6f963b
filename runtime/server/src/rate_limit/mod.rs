//! The rate limiter (reference-api.md §11): `requests` per `window` for each client IP, each
//! user (the bearer token), or everyone together. It is GCRA, so a client may spend its whole
//! allowance at once and then gets one more request each `window / requests`; over any window it
//! never gets more than the limit. Every limited response carries `X-RateLimit-Limit`,
//! `-Remaining`, `-Reset` (epoch seconds) and `-Reset-After`; over the limit it is 429
//! `RATE_LIMIT_EXCEEDED` with `Retry-After`. `/ping` and the health routes are never limited.
//!
//! Two backends decide: [`memory`] (governor, in this process: each replica limits alone, the
//! default) and [`redis`] (the same GCRA in one Lua script, shared by every replica pointed at
//! one Redis). This module owns what both share: the settings, the key a request is counted
//! under, the headers and the answers. When Redis cannot be asked the request is refused 503
//! `RATE_LIMITER_UNAVAILABLE` (fail closed: an outage never lifts the limit).

pub mod memory;
pub mod redis;

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use sha2::{Digest, Sha256};

pub use self::redis::{RedisLimiter, RedisLimiterError, RedisUrl};
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

impl RateLimitSettings {
    /// The emission interval: one request is given back each `window / requests`.
    pub fn period(&self) -> Duration {
        self.window
            .checked_div(self.requests.get())
            .unwrap_or(self.window)
            .max(Duration::from_nanos(1))
    }
}

/// Where allowances are kept (`[serve] rate_limit_backend`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RateLimitBackend {
    /// In this process: each replica limits alone.
    #[default]
    Memory,
    /// In Redis, shared by every replica that names it (connected at start-up).
    Redis(RedisLimiter),
}

/// What a backend decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Let through; `remaining` more may follow at once.
    Allowed {
        /// Requests left in the allowance after this one.
        remaining: u32,
    },
    /// Over the limit: the next request conforms after `wait`.
    Limited {
        /// How long until a request is allowed again.
        wait: Duration,
    },
}

#[derive(Clone)]
enum Backend {
    Memory(memory::MemoryLimiter),
    Redis(RedisLimiter),
}

/// A limiter built once from its settings.
#[derive(Clone)]
pub struct RateLimit {
    backend: Backend,
    settings: RateLimitSettings,
    period: Duration,
}

impl RateLimit {
    /// The limiter for `settings`, in this process.
    pub fn new(settings: RateLimitSettings) -> Self {
        Self::with_backend(settings, &RateLimitBackend::Memory)
    }

    /// The limiter for `settings` on `backend` (a Redis backend is already connected).
    pub fn with_backend(settings: RateLimitSettings, backend: &RateLimitBackend) -> Self {
        let backend = match backend {
            RateLimitBackend::Memory => Backend::Memory(memory::MemoryLimiter::new(&settings)),
            RateLimitBackend::Redis(redis) => Backend::Redis(redis.clone()),
        };
        Self {
            backend,
            period: settings.period(),
            settings,
        }
    }

    async fn decide(&self, key: &str) -> Result<Decision, RedisLimiterError> {
        match &self.backend {
            Backend::Memory(memory) => Ok(memory.check(key)),
            Backend::Redis(redis) => redis.check(key, self.period, self.settings.requests).await,
        }
    }
}

fn exempt(path: &str) -> bool {
    path == "/ping" || path.starts_with("/health/")
}

/// The allowance a request is counted under, `SCOPE:ID`: `ip:ADDRESS`, `user:SHA256` (the
/// bearer token's digest in hex: the token itself is never kept, in memory or in Redis), or
/// `global:all`. Anonymous callers under `by = user` count as `ip:ADDRESS`.
pub fn key(by: LimitBy, ip: Option<std::net::IpAddr>, authorization: Option<&str>) -> String {
    let ip = ip.map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
    match (by, authorization) {
        (LimitBy::Global, _) => "global:all".to_owned(),
        (LimitBy::User, Some(token)) => {
            let digest = Sha256::digest(token.as_bytes());
            let mut hex = String::with_capacity(64);
            for byte in digest.iter() {
                hex.push_str(&format!("{byte:02x}"));
            }
            format!("user:{hex}")
        }
        (LimitBy::Ip | LimitBy::User, _) => format!("ip:{ip}"),
    }
}

fn request_key(limit: &RateLimit, request: &Request) -> String {
    let ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip());
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    key(limit.settings.by, ip, authorization)
}

/// The middleware.
pub async fn limit(limit: RateLimit, request: Request, next: Next) -> Response {
    if exempt(request.uri().path()) {
        return next.run(request).await;
    }
    let key = request_key(&limit, &request);
    let requests = limit.settings.requests.get();
    let now_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    match limit.decide(&key).await {
        Ok(Decision::Allowed { remaining }) => {
            let used = requests.saturating_sub(remaining);
            let reset_after = limit.period.saturating_mul(used);
            let mut response = next.run(request).await;
            headers(&mut response, requests, remaining, now_epoch, reset_after);
            response
        }
        Ok(Decision::Limited { wait }) => {
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
        Err(_) => {
            // The backend logged it (once per outage, naming Redis without its password).
            let mut error = ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "RATE_LIMITER_UNAVAILABLE",
                "The rate limiter is unavailable, so the request was refused. Retry shortly.",
            );
            error.middleware_form = true;
            error.header(header::RETRY_AFTER, "1").into_response()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_counted_under_its_digest_never_itself() {
        let ip = Some(std::net::IpAddr::from([10, 0, 0, 1]));
        let one = key(LimitBy::User, ip, Some("Bearer secret-token-one"));
        let two = key(LimitBy::User, ip, Some("Bearer secret-token-two"));
        assert!(one.starts_with("user:"), "{one}");
        assert_eq!(one.len(), "user:".len() + 64, "{one}");
        assert_ne!(one, two);
        assert!(!one.contains("secret"), "{one}");
        assert_eq!(
            key(LimitBy::User, ip, Some("abc")),
            "user:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "sha256, in hex"
        );
        assert_eq!(key(LimitBy::User, ip, None), "ip:10.0.0.1");
        assert_eq!(key(LimitBy::Ip, ip, Some("Bearer x")), "ip:10.0.0.1");
        assert_eq!(key(LimitBy::Global, ip, Some("Bearer x")), "global:all");
    }
}
