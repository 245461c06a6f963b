//! How a [`crate::PostgresStore`] is opened: the schema, the pool, and lease timing.

use std::time::Duration;

/// Options of [`crate::PostgresStore::open`]. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// The schema every table lives in (default `tenx`), created by the first migration. A
    /// `schema=NAME` query parameter in the URL overrides it. Letters, digits and `_` only,
    /// not starting with a digit, at most 63 bytes.
    pub schema: String,
    /// How many connections the pool keeps at most (default 16, at least 1; `pool_size=N` in
    /// the URL overrides it).
    pub pool_size: usize,
    /// How long connecting, or waiting for a free pooled connection, may take before the
    /// operation fails with `StoreError::Transient` (default 5 s).
    pub connect_timeout: Duration,
    /// How long a thread lease lasts without renewal (default 15 s): the holder renews it every
    /// third of this while it holds it, and a crashed holder's lease is taken over once it has
    /// expired on the database's clock. `lease_ttl_ms=MS` in the URL overrides it.
    pub lease_ttl: Duration,
    /// How often, at the latest, a `lock` that waits for another replica's lease tries again
    /// (default 100 ms): a release wakes waiters at once (`NOTIFY`), so this bounds only the
    /// takeover of an expired lease and waits while the listening connection is down.
    pub lease_poll: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            schema: "tenx".to_owned(),
            pool_size: 16,
            connect_timeout: Duration::from_secs(5),
            lease_ttl: Duration::from_secs(15),
            lease_poll: Duration::from_millis(100),
        }
    }
}
