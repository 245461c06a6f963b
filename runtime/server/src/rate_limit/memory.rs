//! The in-process backend: governor's GCRA over a keyed map. Each process (each replica) keeps
//! its own allowances, so N replicas behind a load balancer let through up to N times the limit.

use std::sync::Arc;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::{Decision, RateLimitSettings};

type Limiter = RateLimiter<
    String,
    governor::state::keyed::DefaultKeyedStateStore<String>,
    DefaultClock,
    StateInformationMiddleware,
>;

/// Allowances kept in this process.
#[derive(Clone)]
pub struct MemoryLimiter {
    limiter: Arc<Limiter>,
}

impl MemoryLimiter {
    /// A limiter for `settings`: a burst of `requests`, one more each period.
    pub fn new(settings: &RateLimitSettings) -> Self {
        let quota = Quota::with_period(settings.period())
            .unwrap_or_else(|| Quota::per_second(settings.requests))
            .allow_burst(settings.requests);
        let limiter: DefaultKeyedRateLimiter<String> = RateLimiter::dashmap(quota);
        Self {
            limiter: Arc::new(limiter.with_middleware::<StateInformationMiddleware>()),
        }
    }

    /// Counts one request under `key`.
    pub fn check(&self, key: &str) -> Decision {
        match self.limiter.check_key(&key.to_owned()) {
            Ok(snapshot) => Decision::Allowed {
                remaining: snapshot.remaining_burst_capacity(),
            },
            Err(not_until) => Decision::Limited {
                wait: not_until.wait_time_from(DefaultClock::default().now()),
            },
        }
    }
}
