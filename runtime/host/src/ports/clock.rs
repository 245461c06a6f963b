//! The system clock.

use std::time::{SystemTime, UNIX_EPOCH};

use tenx_engine::ports::{Clock, Timestamp};

/// The operating system's wall clock, in milliseconds since the Unix epoch (the clock every
/// process on the machine shares, which expiry and SQLite leases compare across processes). A
/// clock set before 1970 reads as 0; one past `u64::MAX` milliseconds as `u64::MAX`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
    }
}
