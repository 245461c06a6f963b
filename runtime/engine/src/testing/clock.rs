//! A clock that moves only when the test says, so expiry is exact.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::ports::{Clock, Timestamp};

/// A settable, advanceable clock (milliseconds since the Unix epoch). Share it with an `Arc`:
/// the engine reads it through its `Clock` port while the test moves it.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
}

impl ManualClock {
    /// A clock reading `now`.
    pub fn new(now: Timestamp) -> Self {
        Self {
            now: AtomicU64::new(now),
        }
    }

    /// Sets the time (it may go backwards: a test may want that).
    pub fn set(&self, now: Timestamp) {
        self.now.store(now, Ordering::SeqCst);
    }

    /// Moves the time forward by `millis` (saturating), and returns the new time.
    pub fn advance(&self, millis: u64) -> Timestamp {
        let before = self
            .now
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                Some(now.saturating_add(millis))
            })
            .unwrap_or_else(|now| now);
        before.saturating_add(millis)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        self.now.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_moves_only_when_told() {
        let clock = ManualClock::new(1_000);
        assert_eq!(clock.now(), 1_000);
        assert_eq!(clock.now(), 1_000);
        assert_eq!(clock.advance(500), 1_500);
        assert_eq!(clock.now(), 1_500);
        assert!((clock.now_seconds() - 1.5).abs() < f64::EPSILON);
        clock.set(10);
        assert_eq!(clock.now(), 10);
        clock.set(u64::MAX - 1);
        assert_eq!(clock.advance(5), u64::MAX);
        assert_eq!(ManualClock::default().now(), 0);
    }
}
