//! What recovery at start-up reads: the threads a dead process may have left mid-run.

use rusqlite::Connection;
use tenx_engine::ports::StoreError;

use crate::error::sql;

/// Threads whose checkpoint has a run in progress that waits for nothing (`run` set, `pending`
/// unset: SQLite's JSON functions read both as SQL `NULL` when absent or `null`), and threads
/// with a receipt in flight; each once, in code-point order. The checkpoints are scanned (once,
/// at start-up) rather than indexed, so that commits pay nothing for recovery.
pub(crate) fn unfinished(connection: &mut Connection) -> Result<Vec<String>, StoreError> {
    connection
        .prepare_cached(
            "SELECT thread_id FROM threads \
               WHERE json_extract(record, '$.run') IS NOT NULL AND json_extract(record, '$.pending') IS NULL \
             UNION \
             SELECT thread_id FROM receipts WHERE in_flight = 1 \
             ORDER BY 1",
        )
        .and_then(|mut statement| statement.query_map([], |row| row.get(0))?.collect())
        .map_err(|error| sql("listing the threads left unfinished", &error))
}
