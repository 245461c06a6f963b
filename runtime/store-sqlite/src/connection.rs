//! Opening one connection to the store file with the store's settings: WAL (set once, by the
//! writer; it is a property of the file), `synchronous`, `busy_timeout` and foreign keys.
//! Read connections are opened read-only: nothing but the writer ever changes the file.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use tenx_engine::ports::StoreError;

use crate::SqliteOptions;
use crate::error::sql;
use crate::migrate::migrate;

/// Opens the writer: creates the file if needed, switches it to WAL, applies the migrations.
pub(crate) fn open_writer(path: &Path, options: &SqliteOptions) -> Result<Connection, StoreError> {
    let shown = path.display().to_string();
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut connection = Connection::open_with_flags(path, flags)
        .map_err(|error| sql(&format!("opening the store file '{shown}'"), &error))?;
    configure(&connection, options)?;
    let mode: String = connection
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(|error| sql(&format!("switching '{shown}' to WAL"), &error))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Failed(format!(
            "the store file '{shown}' cannot use WAL (its journal mode stays '{mode}'): put it on a local filesystem"
        )));
    }
    migrate(&mut connection, &shown)?;
    Ok(connection)
}

/// Opens a read-only connection (after the writer has migrated the file).
pub(crate) fn open_reader(path: &Path, options: &SqliteOptions) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = Connection::open_with_flags(path, flags)
        .map_err(|error| sql(&format!("opening the store file '{}' to read", path.display()), &error))?;
    configure(&connection, options)?;
    Ok(connection)
}

/// The per-connection settings.
fn configure(connection: &Connection, options: &SqliteOptions) -> Result<(), StoreError> {
    connection
        .busy_timeout(options.busy_timeout)
        .map_err(|error| sql("setting busy_timeout", &error))?;
    connection
        .pragma_update(None, "synchronous", options.synchronous.pragma())
        .map_err(|error| sql("setting synchronous", &error))?;
    connection
        .pragma_update(None, "foreign_keys", "ON")
        .map_err(|error| sql("enabling foreign keys", &error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Synchronous;

    fn pragma(connection: &Connection, name: &str) -> i64 {
        connection
            .query_row(&format!("PRAGMA {name}"), [], |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn every_connection_gets_the_settings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        // The defaults: NORMAL (1), 5 s, foreign keys on.
        let writer = open_writer(&path, &SqliteOptions::default()).unwrap();
        assert_eq!(pragma(&writer, "synchronous"), 1);
        assert_eq!(pragma(&writer, "busy_timeout"), 5000);
        assert_eq!(pragma(&writer, "foreign_keys"), 1);
        let full = SqliteOptions {
            synchronous: Synchronous::Full,
            busy_timeout: std::time::Duration::from_millis(250),
            ..SqliteOptions::default()
        };
        let reader = open_reader(&path, &full).unwrap();
        assert_eq!(pragma(&reader, "synchronous"), 2);
        assert_eq!(pragma(&reader, "busy_timeout"), 250);
        assert_eq!(pragma(&reader, "foreign_keys"), 1);
        // Readers cannot write.
        assert!(reader.execute("DELETE FROM locks", []).is_err());
    }
}
