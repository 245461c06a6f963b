//! The schema: numbered SQL files embedded in the binary, applied at open in one transaction.
//! `PRAGMA user_version` holds how many have been applied; a file whose version is higher than
//! this build knows is refused, so an older tenx never writes into a newer schema.

use rusqlite::{Connection, TransactionBehavior};
use tenx_engine::ports::StoreError;

use crate::error::sql;

/// The migrations, in order: migration `n` (1-based) brings the schema to version `n`.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_initial.sql"),
    include_str!("../migrations/0002_unfinished.sql"),
    include_str!("../migrations/0003_stops.sql"),
    include_str!("../migrations/0004_questions.sql"),
];

/// `PRAGMA application_id` of a tenx store ("tenx" in ASCII), set by the first migration.
pub(crate) const APPLICATION_ID: i64 = 0x7465_6e78;

/// The schema version this build writes.
pub fn schema_version() -> i64 {
    i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX)
}

/// Brings the file's schema to [`schema_version`], or refuses it (a newer schema, another
/// application's file). Runs inside one `BEGIN IMMEDIATE` transaction, so two processes opening
/// a new file at once do not both migrate, and a failed migration leaves nothing behind.
pub(crate) fn migrate(connection: &mut Connection, path: &str) -> Result<(), StoreError> {
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|error| sql("starting the migration", &error))?;
    let read = |pragma: &str| -> Result<i64, StoreError> {
        transaction
            .query_row(&format!("PRAGMA {pragma}"), [], |row| row.get(0))
            .map_err(|error| sql(&format!("reading the store file '{path}'"), &error))
    };
    let version = read("user_version")?;
    let application = read("application_id")?;
    if application != 0 && application != APPLICATION_ID {
        return Err(StoreError::Failed(format!(
            "the file '{path}' belongs to another application (SQLite application_id {application}), not a tenx store"
        )));
    }
    let known = schema_version();
    if version > known {
        return Err(StoreError::Failed(format!(
            "the store file '{path}' has schema version {version}, newer than this build of tenx knows ({known}): upgrade tenx, or open another file"
        )));
    }
    if version < 0 {
        return Err(StoreError::Failed(format!(
            "the store file '{path}' has an invalid schema version {version}"
        )));
    }
    for (index, script) in MIGRATIONS.iter().enumerate() {
        let number = i64::try_from(index).unwrap_or(i64::MAX).saturating_add(1);
        if number <= version {
            continue;
        }
        transaction
            .execute_batch(script)
            .map_err(|error| sql(&format!("applying migration {number} to '{path}'"), &error))?;
    }
    if version < known {
        transaction
            .pragma_update(None, "user_version", known)
            .map_err(|error| sql("recording the schema version", &error))?;
    }
    transaction
        .commit()
        .map_err(|error| sql("committing the migration", &error))
}
