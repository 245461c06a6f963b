//! What the approvals inbox reads: the threads waiting at a question a person answers (from the
//! `open_interrupt` and `asked_at` columns every commit sets, schema version 4), and the record
//! of every thread in the order it was appended (`records.seq`).

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;
use tenx_engine::ports::{NumberedRecord, OpenQuestion, Record, StoreError};

use crate::error::{damaged, sql};

/// Every open question, oldest first (ties by thread id).
pub(crate) fn open_questions(connection: &mut Connection) -> Result<Vec<OpenQuestion>, StoreError> {
    connection
        .prepare_cached(
            "SELECT thread_id, open_interrupt, asked_at FROM threads \
               WHERE open_interrupt IS NOT NULL ORDER BY asked_at, thread_id",
        )
        .and_then(|mut statement| {
            statement
                .query_map([], |row| {
                    Ok(OpenQuestion {
                        thread_id: row.get(0)?,
                        interrupt_id: row.get(1)?,
                        asked_at: row.get(2)?,
                    })
                })?
                .collect()
        })
        .map_err(|error| sql("listing the open questions", &error))
}

/// The thread whose open question is `interrupt_id`.
pub(crate) fn question_thread(connection: &mut Connection, interrupt_id: &str) -> Result<Option<String>, StoreError> {
    connection
        .prepare_cached("SELECT thread_id FROM threads WHERE open_interrupt = ?1")
        .and_then(|mut statement| statement.query_row([interrupt_id], |row| row.get(0)).optional())
        .map_err(|error| sql(&format!("finding the thread of question '{interrupt_id}'"), &error))
}

/// Records after `after`, in order, at most `limit`.
pub(crate) fn records_after(
    connection: &mut Connection,
    after: u64,
    limit: usize,
) -> Result<Vec<NumberedRecord>, StoreError> {
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows: Vec<(u64, String, u64, String, String)> = connection
        .prepare_cached("SELECT seq, thread_id, at, kind, fields FROM records WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        .and_then(|mut statement| {
            statement
                .query_map([after, limit], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?))
                })?
                .collect()
        })
        .map_err(|error| sql("reading the records", &error))?;
    rows.into_iter()
        .map(|(seq, thread_id, at, kind, fields)| {
            let fields: Value =
                serde_json::from_str(&fields).map_err(|error| damaged(&format!("record {seq}"), error))?;
            Ok(NumberedRecord {
                seq,
                record: Record {
                    thread_id,
                    at,
                    kind,
                    fields,
                },
            })
        })
        .collect()
}
