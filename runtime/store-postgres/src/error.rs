//! How PostgreSQL's errors become [`StoreError`]s: a lost or refused connection, a pool that
//! found no connection in time, a serialization failure or a deadlock are
//! [`StoreError::Transient`] (the operation may be retried); everything else is
//! [`StoreError::Failed`]. Messages name what failed, never a stored value or a password.

use tenx_engine::ports::StoreError;
use tokio_postgres::error::SqlState;

/// Converts a PostgreSQL error, saying what the store was doing.
pub(crate) fn sql(doing: &str, error: &tokio_postgres::Error) -> StoreError {
    let transient = match error.code() {
        // No server error at all: the connection failed, closed or timed out.
        None => true,
        Some(code) => {
            code.code().starts_with("08")
                || [
                    SqlState::T_R_SERIALIZATION_FAILURE,
                    SqlState::T_R_DEADLOCK_DETECTED,
                    SqlState::ADMIN_SHUTDOWN,
                    SqlState::CRASH_SHUTDOWN,
                    SqlState::CANNOT_CONNECT_NOW,
                    SqlState::TOO_MANY_CONNECTIONS,
                ]
                .contains(code)
        }
    };
    let text = match error.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => error.to_string(),
    };
    if transient {
        StoreError::Transient(format!("{doing}: {text}"))
    } else {
        StoreError::Failed(format!("{doing}: {text}"))
    }
}

/// Whether the error is a unique violation (two writers created one row at once).
pub(crate) fn is_unique_violation(error: &tokio_postgres::Error) -> bool {
    error.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

/// No connection could be had from the pool in time (the database is down or saturated).
pub(crate) fn pool(doing: &str, error: &deadpool_postgres::PoolError) -> StoreError {
    StoreError::Transient(format!("{doing}: no connection to PostgreSQL: {error}"))
}

/// A stored value that does not read back (a damaged or tampered row).
pub(crate) fn damaged(what: &str, why: impl std::fmt::Display) -> StoreError {
    StoreError::Failed(format!("{what} is damaged: {why}"))
}

/// A value the store cannot write (a number beyond PostgreSQL's `bigint`).
pub(crate) fn too_large(what: &str, value: u64) -> StoreError {
    StoreError::Failed(format!("{what}: {value} does not fit PostgreSQL's bigint"))
}
