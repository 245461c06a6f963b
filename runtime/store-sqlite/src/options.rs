//! How a [`crate::SqliteStore`] is opened: durability, waits and lease timing.

use std::time::Duration;

/// SQLite's `synchronous` setting, i.e. when a commit reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Synchronous {
    /// `synchronous = NORMAL` (the default, SQLite's advice for WAL): the WAL is synced to disk
    /// at checkpoints, not at every commit. A commit that returned survives a process crash
    /// (`kill -9`: the data is in the OS's page cache); a power loss or OS crash may roll back
    /// the last commits (never split a commit, never corrupt the file).
    #[default]
    Normal,
    /// `synchronous = FULL`: every commit is synced to disk (`fsync` of the WAL) before
    /// `commit` returns, so a commit that returned survives a power loss or OS crash too. Costs
    /// one `fsync` per commit (about 1 to 3 ms here, against well under 0.1 ms).
    Full,
}

impl Synchronous {
    /// The pragma's value.
    pub(crate) fn pragma(self) -> &'static str {
        match self {
            Self::Full => "FULL",
            Self::Normal => "NORMAL",
        }
    }
}

/// Options of [`crate::SqliteStore::open_with`]. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// When commits reach the disk (default [`Synchronous::Normal`]).
    pub synchronous: Synchronous,
    /// How long one statement waits for another process's write lock before the operation
    /// fails with `StoreError::Transient` (default 5 s).
    pub busy_timeout: Duration,
    /// How long a thread lease lasts without renewal (default 15 s): the holder renews it
    /// every third of this while it holds it, and a crashed holder's lease is taken over once
    /// it has expired.
    pub lease_ttl: Duration,
    /// How often a `lock` that waits for another process's lease tries again (default 20 ms).
    pub lease_poll: Duration,
    /// How many read connections (each on its own thread) serve reads (default 2, at least 1).
    pub readers: usize,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            synchronous: Synchronous::Normal,
            busy_timeout: Duration::from_secs(5),
            lease_ttl: Duration::from_secs(15),
            lease_poll: Duration::from_millis(20),
            readers: 2,
        }
    }
}
