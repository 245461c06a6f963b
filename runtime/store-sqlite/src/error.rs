//! How SQLite's errors become [`StoreError`]s: a busy or locked database (another process holds
//! the write lock past `busy_timeout`) is [`StoreError::Transient`], everything else
//! [`StoreError::Failed`]. Messages name what failed, never a value that was stored.

use rusqlite::ErrorCode;
use tenx_engine::ports::StoreError;

/// Converts a SQLite error, saying what the store was doing.
pub(crate) fn sql(doing: &str, error: &rusqlite::Error) -> StoreError {
    let busy = matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    );
    if busy {
        StoreError::Transient(format!("{doing}: {error}"))
    } else {
        StoreError::Failed(format!("{doing}: {error}"))
    }
}

/// A stored value that does not read back (a damaged or tampered file).
pub(crate) fn damaged(what: &str, why: impl std::fmt::Display) -> StoreError {
    StoreError::Failed(format!("{what} is damaged: {why}"))
}

/// A worker thread that is gone (it can only stop when the store is dropped).
pub(crate) fn stopped() -> StoreError {
    StoreError::Failed("the store's SQLite worker has stopped".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_is_transient_and_the_rest_failed() {
        let busy = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY), None);
        assert!(matches!(sql("committing", &busy), StoreError::Transient(m) if m.starts_with("committing: ")));
        let locked = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_LOCKED), None);
        assert!(matches!(sql("x", &locked), StoreError::Transient(_)));
        let corrupt = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT), None);
        assert!(matches!(sql("reading", &corrupt), StoreError::Failed(_)));
        assert!(matches!(
            sql("reading", &rusqlite::Error::QueryReturnedNoRows),
            StoreError::Failed(_)
        ));
    }
}
