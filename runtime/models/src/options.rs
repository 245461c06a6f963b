//! What a host may tune about provider calls: the timeouts and the retry policy. The defaults
//! suit hosted APIs; a host serving a slow local model raises the timeouts.

use std::time::Duration;

/// How long a call may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// To open a connection (TCP and TLS).
    pub connect: Duration,
    /// From sending the request to the answer's status line and headers (one attempt).
    pub headers: Duration,
    /// Between two pieces of the answer's body (a stalled stream fails after this).
    pub idle: Duration,
    /// The whole call, retries and waits included.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            headers: Duration::from_secs(120),
            idle: Duration::from_secs(60),
            total: Duration::from_secs(600),
        }
    }
}

/// When a failed attempt is tried again: only on HTTP 429, 5xx and connection failures before
/// the answer's body started, never on another 4xx, a timeout or a broken stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = never retry).
    pub attempts: u32,
    /// The first backoff; attempt `n` waits a uniform random time in
    /// `[0, min(max_backoff, base × 2^(n−1))]` (full jitter).
    pub base: Duration,
    /// The largest jittered backoff.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured: a server asking for a longer wait is not retried (the
    /// call fails at once with its status, and the engine's own retry policy may try later).
    pub retry_after_cap: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 3,
            base: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            retry_after_cap: Duration::from_secs(30),
        }
    }
}

/// Everything a host may tune about provider calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProviderOptions {
    /// The timeouts.
    pub timeouts: Timeouts,
    /// The retry policy.
    pub retry: RetryPolicy,
}
