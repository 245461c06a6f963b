//! When a question lapses. An answer at or after `expires_at` is late (409
//! `INTERRUPT_EXPIRED`); a timeout is never consent.

use crate::ports::Timestamp;
use crate::{ErrorCode, RunError};

/// When a question asked at `asked_at` lapses, for an expiry of `expires_ms` (`None`: never).
/// Saturates at the end of time rather than wrapping.
pub fn expires_at(asked_at: Timestamp, expires_ms: Option<u64>) -> Option<Timestamp> {
    expires_ms.map(|ms| asked_at.saturating_add(ms))
}

/// Whether a question that lapses at `expires_at` has lapsed at `now` (at the instant itself
/// included).
pub fn is_expired(expires_at: Option<Timestamp>, now: Timestamp) -> bool {
    expires_at.is_some_and(|at| now >= at)
}

/// Refuses an answer to `interrupt_id` that comes too late.
///
/// # Errors
///
/// `INTERRUPT_EXPIRED` (409) when [`is_expired`].
pub fn check_in_time(interrupt_id: &str, expires_at: Option<Timestamp>, now: Timestamp) -> Result<(), RunError> {
    if is_expired(expires_at, now) {
        return Err(RunError::new(
            ErrorCode::InterruptExpired,
            format!("Interrupt '{interrupt_id}' has expired: the request was not approved"),
        )
        .with_details(serde_json::json!({"interrupt_id": interrupt_id, "expires_at": expires_at})));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lapses_at_the_instant() {
        assert_eq!(expires_at(1_000, Some(500)), Some(1_500));
        assert_eq!(expires_at(1_000, None), None);
        assert_eq!(expires_at(u64::MAX - 1, Some(10)), Some(u64::MAX));
        assert!(!is_expired(Some(1_500), 1_499));
        assert!(is_expired(Some(1_500), 1_500));
        assert!(is_expired(Some(1_500), 1_501));
        assert!(!is_expired(None, u64::MAX));
    }

    #[test]
    fn a_late_answer_is_refused() {
        assert!(check_in_time("int_1", Some(1_500), 1_499).is_ok());
        let late = check_in_time("int_1", Some(1_500), 1_500).unwrap_err();
        assert_eq!(late.code, ErrorCode::InterruptExpired);
        assert_eq!(late.code.status(), 409);
        assert_eq!(
            late.message,
            "Interrupt 'int_1' has expired: the request was not approved"
        );
    }
}
