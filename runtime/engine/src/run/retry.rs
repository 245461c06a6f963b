//! Retry policies at run time (`docs/language.md`, "Retries"): which policy applies to a call or
//! a model call, whether an error is of a class it retries, and how long to wait. The wait is
//! full jitter, `uniform[0, min(max_backoff, backoff × 2^(n−1))]`, with a `Retry-After` honoured
//! up to `max_backoff`; the "random" draw is derived from the idempotency key (or the thread and
//! node) and the attempt, so a replay waits the same and the engine needs no random source.

use std::time::Duration;

use tenx_artifact::{Graph, RetryOn, RetryPolicy, Tool};

use crate::ports::{ModelErrorKind, ToolErrorKind};

/// The policy of a tool's call at `node`: the node's own (a tool node's `retry` in the graph),
/// else the tool's.
pub(crate) fn for_tool<'a>(graph: &'a Graph, node: &str, tool: &'a Tool) -> Option<&'a RetryPolicy> {
    graph
        .retries
        .iter()
        .find(|retry| retry.node == node)
        .map(|retry| &retry.policy)
        .or(tool.retry.as_ref())
}

/// The policy of an agent node's model calls.
pub(crate) fn for_model<'a>(graph: &'a Graph, node: &str) -> Option<&'a RetryPolicy> {
    graph
        .retries
        .iter()
        .find(|retry| retry.node == node)
        .map(|retry| &retry.policy)
}

/// The class of a tool error, when it is one a policy can name.
pub(crate) fn tool_class(kind: ToolErrorKind) -> Option<RetryOn> {
    match kind {
        ToolErrorKind::Timeout => Some(RetryOn::Timeout),
        ToolErrorKind::Connection => Some(RetryOn::Connection),
        ToolErrorKind::RateLimited { .. } => Some(RetryOn::RateLimited),
        ToolErrorKind::Server => Some(RetryOn::ServerError),
        ToolErrorKind::Client | ToolErrorKind::Failed => None,
    }
}

/// The class of a model error, when it is one a policy can name.
pub(crate) fn model_class(kind: ModelErrorKind) -> Option<RetryOn> {
    match kind {
        ModelErrorKind::Timeout => Some(RetryOn::Timeout),
        ModelErrorKind::Connection => Some(RetryOn::Connection),
        ModelErrorKind::RateLimited { .. } => Some(RetryOn::RateLimited),
        ModelErrorKind::Server => Some(RetryOn::ServerError),
        ModelErrorKind::Refused | ModelErrorKind::ScriptExhausted | ModelErrorKind::Cancelled => None,
    }
}

/// Whether attempt `attempt` (1-based) that failed with `class` is tried again.
pub(crate) fn again(policy: &RetryPolicy, attempt: u64, class: Option<RetryOn>) -> bool {
    attempt < policy.attempts && class.is_some_and(|class| policy.on.contains(&class))
}

/// How long to wait after failed attempt `attempt` (1-based).
pub(crate) fn wait(policy: &RetryPolicy, attempt: u64, seed: &str, retry_after_ms: Option<u64>) -> Duration {
    let exponent = u32::try_from(attempt.saturating_sub(1)).unwrap_or(u32::MAX).min(62);
    let cap = policy
        .backoff_ms
        .saturating_mul(1_u64 << exponent)
        .min(policy.max_backoff_ms);
    let drawn = draw(seed, attempt) % cap.saturating_add(1);
    let millis = match retry_after_ms {
        Some(after) => after.min(policy.max_backoff_ms).max(drawn),
        None => drawn,
    };
    Duration::from_millis(millis)
}

/// A stable pseudo-random number for (seed, attempt): FNV-1a.
fn draw(seed: &str, attempt: u64) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in seed.bytes().chain(attempt.to_le_bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            attempts: 3,
            backoff_ms: 100,
            max_backoff_ms: 250,
            on: vec![RetryOn::Timeout, RetryOn::ServerError],
        }
    }

    #[test]
    fn only_named_classes_are_retried_and_only_while_attempts_remain() {
        let policy = policy();
        assert!(again(&policy, 1, Some(RetryOn::Timeout)));
        assert!(again(&policy, 2, Some(RetryOn::ServerError)));
        assert!(
            !again(&policy, 3, Some(RetryOn::Timeout)),
            "the last attempt is the last"
        );
        assert!(!again(&policy, 1, Some(RetryOn::RateLimited)), "not named");
        assert!(!again(&policy, 1, None), "a client error is never retried");
    }

    #[test]
    fn waits_are_full_jitter_under_the_capped_exponential() {
        let policy = policy();
        for seed in ["a", "b", "refund-1-5"] {
            assert!(wait(&policy, 1, seed, None) <= Duration::from_millis(100));
            assert!(wait(&policy, 2, seed, None) <= Duration::from_millis(200));
            assert!(wait(&policy, 3, seed, None) <= Duration::from_millis(250));
            assert_eq!(
                wait(&policy, 2, seed, None),
                wait(&policy, 2, seed, None),
                "a replay waits the same"
            );
        }
        assert_eq!(
            wait(&policy, 1, "x", Some(10_000)),
            Duration::from_millis(250),
            "Retry-After is capped"
        );
    }
}
