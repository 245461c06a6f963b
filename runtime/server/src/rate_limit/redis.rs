//! The Redis backend: the memory backend's GCRA, done atomically by one Lua script in Redis, so
//! every replica that names the same Redis (and prefix) shares each allowance. A key holds the
//! allowance's theoretical arrival time in microseconds of Redis's own clock (`TIME`: replicas'
//! clocks never enter) and expires when the allowance is whole again, so keys never pile up.
//! Keys are `PREFIX:SCOPE:ID` (`tenx:ratelimit:ip:10.0.0.7`, `tenx:ratelimit:user:<sha256 of the
//! token>`, `tenx:ratelimit:global:all`).
//!
//! Start-up connects and loads the script, or refuses with an error naming Redis. Later, a call
//! that fails or takes longer than [`CALL_TIMEOUT`] refuses the request (503, fail closed); the
//! first failure of an outage is logged, naming Redis without its password, and so is the
//! recovery. The connection manager reconnects on its own.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::Decision;

/// The prefix keys get by default.
pub const DEFAULT_PREFIX: &str = "tenx:ratelimit";

/// The longest a request waits for Redis's answer before it is refused.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// GCRA over one key. ARGV: the emission interval and the burst tolerance, in microseconds.
/// Returns `{allowed, remaining, wait}`: `wait` (microseconds) until a request conforms again.
const SCRIPT: &str = r"
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
local earliest = tat - tolerance
if now < earliest then
  return {0, 0, earliest - now}
end
local next_tat = math.max(tat, now) + interval
redis.call('SET', KEYS[1], string.format('%d', next_tat), 'PX', math.ceil((next_tat - now) / 1000))
local remaining = math.floor(math.min(now + tolerance + interval - next_tat, tolerance + interval) / interval)
return {1, remaining, 0}
";

/// A Redis URL (`redis://[user:password@]host[:port][/db]`, `redis+unix:///path`), printed and
/// debugged without its password.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl(String);

impl RedisUrl {
    /// Checks `text` is a Redis URL this build connects to (no TLS: `rediss://` is refused).
    pub fn parse(text: &str) -> Result<Self, RedisLimiterError> {
        let text = text.trim();
        let url = url::Url::parse(text)
            .map_err(|error| RedisLimiterError::Url(format!("not a URL ({error}); use redis://HOST:PORT")))?;
        match url.scheme() {
            "redis" | "redis+unix" | "unix" => Ok(Self(text.to_owned())),
            "rediss" => Err(RedisLimiterError::Url(
                "rediss:// (TLS) is not built in: use redis:// on a private network".to_owned(),
            )),
            other => Err(RedisLimiterError::Url(format!(
                "the scheme `{other}` is not Redis's: use redis://HOST:PORT"
            ))),
        }
    }

    /// The URL with its password (and any `pass=` parameter) replaced by `***`.
    pub fn redacted(&self) -> String {
        let Ok(mut url) = url::Url::parse(&self.0) else {
            return "<a Redis URL>".to_owned();
        };
        if url.password().is_some() {
            let _ = url.set_password(Some("***"));
        }
        if url.query().is_some() {
            let pairs: Vec<(String, String)> = url
                .query_pairs()
                .map(|(name, value)| {
                    let value = if name == "pass" || name == "password" {
                        "***".to_owned()
                    } else {
                        value.into_owned()
                    };
                    (name.into_owned(), value)
                })
                .collect();
            url.query_pairs_mut().clear().extend_pairs(pairs);
        }
        url.to_string()
    }
}

impl std::fmt::Debug for RedisUrl {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_tuple("RedisUrl").field(&self.redacted()).finish()
    }
}

impl std::fmt::Display for RedisUrl {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.redacted())
    }
}

/// Why the Redis backend cannot start or answer. No variant carries a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedisLimiterError {
    /// The URL is not one this build connects to.
    #[error("{0}")]
    Url(String),
    /// The key prefix is empty or holds whitespace.
    #[error("rate_limit_redis_prefix: {0}")]
    Prefix(String),
    /// Redis could not be reached or refused the script (at start-up or later).
    #[error("the rate limiter cannot use Redis at {url}: {reason}")]
    Unavailable {
        /// Redis, without its password.
        url: String,
        /// Why.
        reason: String,
    },
}

/// Allowances kept in Redis, shared by every limiter on the same Redis and prefix.
#[derive(Clone)]
pub struct RedisLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    manager: ConnectionManager,
    url: RedisUrl,
    prefix: String,
    script: redis::Script,
    /// Whether the last call failed (an outage is logged once, and its end).
    down: AtomicBool,
}

impl RedisLimiter {
    /// Connects to `url` and loads the script; keys are `PREFIX:SCOPE:ID`. Fails with the reason
    /// when Redis does not answer (the caller refuses to start).
    pub async fn connect(url: &RedisUrl, prefix: &str) -> Result<Self, RedisLimiterError> {
        if prefix.is_empty() || prefix.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(RedisLimiterError::Prefix(format!(
                "`{prefix}` must be non-empty, without spaces"
            )));
        }
        let unavailable = |error: redis::RedisError| RedisLimiterError::Unavailable {
            url: url.redacted(),
            reason: error.to_string(),
        };
        let client = redis::Client::open(url.0.as_str())
            .map_err(|error| RedisLimiterError::Url(format!("{} is not usable: {error}", url.redacted())))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_response_timeout(Some(Duration::from_secs(1)))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let connecting = ConnectionManager::new_with_config(client, config);
        let mut manager = tokio::time::timeout(Duration::from_secs(10), connecting)
            .await
            .map_err(|_| RedisLimiterError::Unavailable {
                url: url.redacted(),
                reason: "no answer within 10 s".to_owned(),
            })?
            .map_err(unavailable)?;
        let script = redis::Script::new(SCRIPT);
        script
            .prepare_invoke()
            .load_async(&mut manager)
            .await
            .map_err(unavailable)?;
        Ok(Self {
            inner: Arc::new(Inner {
                manager,
                url: url.clone(),
                prefix: prefix.to_owned(),
                script,
                down: AtomicBool::new(false),
            }),
        })
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.inner.prefix
    }

    /// Redis, without its password.
    pub fn url(&self) -> &RedisUrl {
        &self.inner.url
    }

    /// Counts one request under `PREFIX:key`: a burst of `burst`, one more each `period`.
    pub async fn check(&self, key: &str, period: Duration, burst: NonZeroU32) -> Result<Decision, RedisLimiterError> {
        let interval = u64::try_from(period.as_micros()).unwrap_or(u64::MAX / 4).max(1);
        let tolerance = interval.saturating_mul(u64::from(burst.get().saturating_sub(1)));
        let mut manager = self.inner.manager.clone();
        let mut invocation = self.inner.script.key(format!("{}:{key}", self.inner.prefix));
        invocation.arg(interval).arg(tolerance);
        let answer = tokio::time::timeout(CALL_TIMEOUT, invocation.invoke_async::<(i64, i64, i64)>(&mut manager)).await;
        let answer = match answer {
            Ok(Ok(answer)) => answer,
            Ok(Err(error)) => return Err(self.failed(error.to_string())),
            Err(_) => return Err(self.failed(format!("no answer within {} s", CALL_TIMEOUT.as_secs()))),
        };
        if self.inner.down.swap(false, Ordering::Relaxed) {
            tracing::warn!(redis = %self.inner.url, "the rate limiter reaches Redis again");
        }
        let (allowed, remaining, wait) = answer;
        Ok(if allowed == 1 {
            Decision::Allowed {
                remaining: u32::try_from(remaining.max(0)).unwrap_or(u32::MAX),
            }
        } else {
            Decision::Limited {
                wait: Duration::from_micros(u64::try_from(wait.max(0)).unwrap_or(0)),
            }
        })
    }

    fn failed(&self, reason: String) -> RedisLimiterError {
        if !self.inner.down.swap(true, Ordering::Relaxed) {
            tracing::error!(
                redis = %self.inner.url,
                reason = %reason,
                "the rate limiter cannot reach Redis: requests are refused 503 RATE_LIMITER_UNAVAILABLE until it answers"
            );
        }
        RedisLimiterError::Unavailable {
            url: self.inner.url.redacted(),
            reason,
        }
    }
}

impl PartialEq for RedisLimiter {
    /// Two limiters are equal when they share allowances: the same Redis and prefix.
    fn eq(&self, other: &Self) -> bool {
        self.inner.url == other.inner.url && self.inner.prefix == other.inner.prefix
    }
}

impl Eq for RedisLimiter {}

impl std::fmt::Debug for RedisLimiter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("RedisLimiter")
            .field("url", &self.inner.url)
            .field("prefix", &self.inner.prefix)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_never_printed() {
        let url = RedisUrl::parse("redis://app:s3cret-pass@cache.internal:6380/2").unwrap();
        assert_eq!(url.redacted(), "redis://app:***@cache.internal:6380/2");
        assert!(!format!("{url} {url:?}").contains("s3cret"));
        let url = RedisUrl::parse("redis://:only-a-password@127.0.0.1").unwrap();
        assert!(!url.to_string().contains("only-a-password"), "{url}");
        let url = RedisUrl::parse("redis+unix:///run/redis.sock?db=1&pass=hidden").unwrap();
        assert!(!url.to_string().contains("hidden"), "{url}");
        assert!(url.to_string().contains("db=1"), "{url}");
        assert_eq!(
            RedisUrl::parse("redis://127.0.0.1:6379").unwrap().to_string(),
            "redis://127.0.0.1:6379"
        );
    }

    #[test]
    fn only_redis_urls_without_tls_are_taken() {
        assert!(matches!(RedisUrl::parse("rediss://h"), Err(RedisLimiterError::Url(reason)) if reason.contains("TLS")));
        assert!(matches!(RedisUrl::parse("http://h"), Err(RedisLimiterError::Url(_))));
        assert!(matches!(
            RedisUrl::parse("localhost:6379"),
            Err(RedisLimiterError::Url(_))
        ));
    }
}
