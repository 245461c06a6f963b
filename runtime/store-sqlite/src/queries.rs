//! The store's SQL, one blocking function per [`tenx_engine::ports::Store`] operation, run on a
//! worker's connection. A commit is one `BEGIN IMMEDIATE` transaction (the version check, then
//! the thread, its receipts and its records); returning early drops the transaction, which rolls
//! it back, so nothing is ever half-applied.
//!
//! What is read back is checked, not trusted: JSON that does not parse, a checkpoint whose id or
//! version disagrees with its row, or an integer out of range is `StoreError::Failed` naming
//! what is damaged (a tampered file never panics and never passes for a valid thread).

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;
use tenx_engine::ports::{Commit, OpenQuestion, Receipt, ReceiptState, Record, StoreError, ThreadSummary};
use tenx_engine::thread::ThreadRecord;

use crate::error::{damaged, sql};

/// The thread's checkpoint, or `None`.
pub(crate) fn load(connection: &mut Connection, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
    let row = connection
        .prepare_cached("SELECT version, record FROM threads WHERE thread_id = ?1")
        .and_then(|mut statement| {
            statement
                .query_row([thread_id], |row| Ok((row.get::<_, u64>(0)?, row.get::<_, String>(1)?)))
                .optional()
        })
        .map_err(|error| sql(&format!("loading thread '{thread_id}'"), &error))?;
    let Some((version, text)) = row else {
        return Ok(None);
    };
    let what = format!("the stored thread '{thread_id}'");
    let thread = ThreadRecord::from_json(&text).map_err(|error| error.stored(&what))?;
    if thread.thread_id != thread_id {
        return Err(damaged(
            &what,
            format!("its checkpoint names thread '{}'", thread.thread_id),
        ));
    }
    if thread.version != version {
        return Err(damaged(
            &what,
            format!("its checkpoint has version {} but its row {version}", thread.version),
        ));
    }
    Ok(Some(thread))
}

/// Applies a commit whole, or nothing of it (see [`Commit`]).
pub(crate) fn commit(connection: &mut Connection, commit: &Commit) -> Result<(), StoreError> {
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|error| sql("starting a commit", &error))?;
    if let Some(thread) = &commit.thread {
        let id = &thread.thread_id;
        let stored: Option<u64> = transaction
            .prepare_cached("SELECT version FROM threads WHERE thread_id = ?1")
            .and_then(|mut statement| statement.query_row([id], |row| row.get(0)).optional())
            .map_err(|error| sql(&format!("reading the version of thread '{id}'"), &error))?;
        if stored != commit.expected_version {
            return Err(StoreError::Conflict);
        }
        let record = serde_json::to_string(thread)
            .map_err(|error| StoreError::Failed(format!("encoding thread '{id}': {error}")))?;
        transaction
            .prepare_cached(
                "INSERT INTO threads (thread_id, owner, artifact_id, graph, version, created_at, updated_at, record,
                   open_interrupt, asked_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner, artifact_id = excluded.artifact_id,
                   graph = excluded.graph, version = excluded.version, created_at = excluded.created_at,
                   updated_at = excluded.updated_at, record = excluded.record,
                   open_interrupt = excluded.open_interrupt, asked_at = excluded.asked_at",
            )
            .and_then(|mut statement| {
                let question = OpenQuestion::of(thread);
                statement.execute(params![
                    id,
                    thread.owner,
                    thread.artifact_id,
                    thread.graph,
                    thread.version,
                    thread.created_at,
                    thread.updated_at,
                    record,
                    question.as_ref().map(|question| question.interrupt_id.as_str()),
                    question.as_ref().map(|question| question.asked_at),
                ])
            })
            .map_err(|error| sql(&format!("writing thread '{id}'"), &error))?;
    }
    for receipt in &commit.receipts {
        let in_flight = matches!(receipt.state, ReceiptState::InFlight { .. });
        let text = serde_json::to_string(receipt)
            .map_err(|error| StoreError::Failed(format!("encoding a receipt: {error}")))?;
        transaction
            .prepare_cached(
                "INSERT INTO receipts (thread_id, key, tool, in_flight, receipt) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (thread_id, key) DO UPDATE SET tool = excluded.tool, in_flight = excluded.in_flight,
                   receipt = excluded.receipt",
            )
            .and_then(|mut statement| {
                statement.execute(params![receipt.thread_id, receipt.key, receipt.tool, in_flight, text])
            })
            .map_err(|error| sql(&format!("writing a receipt of thread '{}'", receipt.thread_id), &error))?;
    }
    for record in &commit.records {
        let fields = serde_json::to_string(&record.fields)
            .map_err(|error| StoreError::Failed(format!("encoding a record: {error}")))?;
        transaction
            .prepare_cached("INSERT INTO records (thread_id, at, kind, fields) VALUES (?1, ?2, ?3, ?4)")
            .and_then(|mut statement| statement.execute(params![record.thread_id, record.at, record.kind, fields]))
            .map_err(|error| sql(&format!("appending a record of thread '{}'", record.thread_id), &error))?;
    }
    transaction.commit().map_err(|error| sql("committing", &error))
}

/// The receipt of `(thread_id, key)`, if any.
pub(crate) fn receipt(connection: &mut Connection, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError> {
    let text: Option<String> = connection
        .prepare_cached("SELECT receipt FROM receipts WHERE thread_id = ?1 AND key = ?2")
        .and_then(|mut statement| statement.query_row([thread_id, key], |row| row.get(0)).optional())
        .map_err(|error| sql(&format!("reading a receipt of thread '{thread_id}'"), &error))?;
    text.map(|text| parse_receipt(&text, thread_id, key)).transpose()
}

/// The thread's receipts still in flight, by key.
pub(crate) fn in_flight(connection: &mut Connection, thread_id: &str) -> Result<Vec<Receipt>, StoreError> {
    let rows: Vec<(String, String)> = connection
        .prepare_cached("SELECT key, receipt FROM receipts WHERE thread_id = ?1 AND in_flight = 1 ORDER BY key")
        .and_then(|mut statement| {
            statement
                .query_map([thread_id], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect()
        })
        .map_err(|error| {
            sql(
                &format!("reading the receipts in flight of thread '{thread_id}'"),
                &error,
            )
        })?;
    let mut receipts = Vec::with_capacity(rows.len());
    for (key, text) in rows {
        let receipt = parse_receipt(&text, thread_id, &key)?;
        if !matches!(receipt.state, ReceiptState::InFlight { .. }) {
            return Err(damaged(
                &format!("the receipt '{key}' of thread '{thread_id}'"),
                "it is marked in flight but is not",
            ));
        }
        receipts.push(receipt);
    }
    Ok(receipts)
}

/// Reads a stored receipt and checks it is the one its row says.
fn parse_receipt(text: &str, thread_id: &str, key: &str) -> Result<Receipt, StoreError> {
    let what = format!("the receipt '{key}' of thread '{thread_id}'");
    let receipt: Receipt = serde_json::from_str(text).map_err(|error| damaged(&what, error))?;
    if receipt.thread_id != thread_id || receipt.key != key {
        return Err(damaged(&what, "it names another thread or key"));
    }
    Ok(receipt)
}

/// The thread's records, oldest first.
pub(crate) fn records(connection: &mut Connection, thread_id: &str) -> Result<Vec<Record>, StoreError> {
    let rows: Vec<(i64, u64, String, String)> = connection
        .prepare_cached("SELECT seq, at, kind, fields FROM records WHERE thread_id = ?1 ORDER BY seq")
        .and_then(|mut statement| {
            statement
                .query_map([thread_id], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
                })?
                .collect()
        })
        .map_err(|error| sql(&format!("reading the records of thread '{thread_id}'"), &error))?;
    rows.into_iter()
        .map(|(seq, at, kind, fields)| {
            let fields: Value = serde_json::from_str(&fields)
                .map_err(|error| damaged(&format!("record {seq} of thread '{thread_id}'"), error))?;
            Ok(Record {
                thread_id: thread_id.to_string(),
                at,
                kind,
                fields,
            })
        })
        .collect()
}

/// A page of threads, newest first, optionally one owner's.
pub(crate) fn list_threads(
    connection: &mut Connection,
    owner: Option<&str>,
    offset: usize,
    limit: usize,
) -> Result<Vec<ThreadSummary>, StoreError> {
    const COLUMNS: &str = "SELECT thread_id, owner, created_at, updated_at FROM threads";
    const ORDER: &str = "ORDER BY updated_at DESC, created_at DESC, thread_id ASC LIMIT ?1 OFFSET ?2";
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    let map = |row: &rusqlite::Row<'_>| {
        Ok(ThreadSummary {
            thread_id: row.get(0)?,
            owner: row.get(1)?,
            created_at: row.get(2)?,
            updated_at: row.get(3)?,
        })
    };
    let listed = match owner {
        None => connection
            .prepare_cached(&format!("{COLUMNS} {ORDER}"))
            .and_then(|mut statement| statement.query_map(params![limit, offset], map)?.collect()),
        Some(owner) => connection
            .prepare_cached(&format!("{COLUMNS} WHERE owner = ?3 {ORDER}"))
            .and_then(|mut statement| statement.query_map(params![limit, offset, owner], map)?.collect()),
    };
    listed.map_err(|error| sql("listing threads", &error))
}

/// Deletes a thread and its receipts (records stay). Whether it existed.
pub(crate) fn delete_thread(connection: &mut Connection, thread_id: &str) -> Result<bool, StoreError> {
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|error| sql("starting a delete", &error))?;
    transaction
        .execute("DELETE FROM receipts WHERE thread_id = ?1", [thread_id])
        .map_err(|error| sql(&format!("deleting the receipts of thread '{thread_id}'"), &error))?;
    let deleted = transaction
        .execute("DELETE FROM threads WHERE thread_id = ?1", [thread_id])
        .map_err(|error| sql(&format!("deleting thread '{thread_id}'"), &error))?;
    transaction
        .commit()
        .map_err(|error| sql("committing a delete", &error))?;
    Ok(deleted > 0)
}
