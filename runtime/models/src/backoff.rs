//! How long to wait before the next attempt: full jitter under a capped exponential, and a
//! server's `Retry-After` (delay-seconds or an HTTP date) honoured up to a cap.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::options::RetryPolicy;

/// The wait after failed attempt `attempt` (1-based), given the answer's `Retry-After` if any:
/// `None` when the server asks for longer than the policy's cap (then the call is not retried).
pub fn wait(policy: &RetryPolicy, attempt: u32, retry_after: Option<Duration>) -> Option<Duration> {
    let exponent = attempt.saturating_sub(1).min(30);
    let ceiling = policy.base.saturating_mul(1_u32 << exponent).min(policy.max_backoff);
    let ceiling_ms = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
    let jittered = Duration::from_millis(fastrand::u64(0..=ceiling_ms));
    match retry_after {
        Some(asked) if asked > policy.retry_after_cap => None,
        Some(asked) => Some(asked.max(jittered)),
        None => Some(jittered),
    }
}

/// A `Retry-After` value as a wait: delay-seconds, or an HTTP date minus now (zero when past).
/// `None` when it is neither.
pub fn retry_after(value: &str) -> Option<Duration> {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX));
    retry_after_at(value, now_ms)
}

/// [`retry_after`] at `now_ms` (milliseconds since the Unix epoch).
pub fn retry_after_at(value: &str, now_ms: u64) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|byte| byte.is_ascii_digit()) {
        return Some(Duration::from_secs(value.parse::<u64>().unwrap_or(u64::MAX)));
    }
    let at = jiff::fmt::rfc2822::DateTimeParser::new().parse_timestamp(value).ok()?;
    let at_ms = u64::try_from(at.as_millisecond()).unwrap_or(0);
    Some(Duration::from_millis(at_ms.saturating_sub(now_ms)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            attempts: 4,
            base: Duration::from_millis(100),
            max_backoff: Duration::from_millis(250),
            retry_after_cap: Duration::from_secs(5),
        }
    }

    #[test]
    fn waits_are_full_jitter_under_a_capped_exponential() {
        let policy = policy();
        for _ in 0..200 {
            assert!(wait(&policy, 1, None).unwrap() <= Duration::from_millis(100));
            assert!(wait(&policy, 2, None).unwrap() <= Duration::from_millis(200));
            assert!(wait(&policy, 3, None).unwrap() <= Duration::from_millis(250));
            assert!(wait(&policy, 40, None).unwrap() <= Duration::from_millis(250));
        }
        let draws: std::collections::BTreeSet<Duration> = (0..200).filter_map(|_| wait(&policy, 3, None)).collect();
        assert!(draws.len() > 10, "the wait is random: {draws:?}");
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let policy = policy();
        assert!(wait(&policy, 1, Some(Duration::from_secs(2))).unwrap() >= Duration::from_secs(2));
        assert_eq!(
            wait(&policy, 1, Some(Duration::from_secs(5))),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            wait(&policy, 1, Some(Duration::from_secs(6))),
            None,
            "longer than the cap"
        );
        assert!(wait(&policy, 1, Some(Duration::ZERO)).unwrap() <= Duration::from_millis(100));
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        assert_eq!(retry_after_at("0", 5), Some(Duration::ZERO));
        assert_eq!(retry_after_at(" 120 ", 5), Some(Duration::from_secs(120)));
        assert_eq!(
            retry_after_at("99999999999999999999999", 5),
            Some(Duration::from_secs(u64::MAX))
        );
        // 1994-11-06T08:49:37Z is 784111777 s after the epoch.
        let at = 784_111_777_000;
        assert_eq!(
            retry_after_at("Sun, 06 Nov 1994 08:49:37 GMT", at - 1_500),
            Some(Duration::from_millis(1_500))
        );
        assert_eq!(
            retry_after_at("Sun, 06 Nov 1994 08:49:37 GMT", at + 10),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after_at("soon", 0), None);
        assert_eq!(retry_after_at("-5", 0), None);
        assert_eq!(retry_after_at("", 0), None);
    }
}
