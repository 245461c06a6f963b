//! The store's SQL, one async function per [`tenx_engine::ports::Store`] operation, on a pooled
//! connection. A commit is first encoded whole ([`Encoded`]: JSON text, every number checked
//! to fit `bigint`), so nothing is sent unless all of it can be written. A commit of the thread
//! alone is then one statement that checks the version as it writes; one with receipts or
//! records is one transaction that takes the advisory locks of the threads it touches (in a
//! fixed order) and writes the thread the same way, then its receipts and records. Returning
//! early drops the transaction, which rolls it back, so nothing is ever half-applied.
//!
//! What is read back is checked, not trusted: JSON that does not parse, a checkpoint whose id or
//! version disagrees with its row, or a negative number is `StoreError::Failed` naming what is
//! damaged (a tampered row never panics and never passes for a valid thread).

use deadpool_postgres::Client;
use serde_json::Value;
use tenx_engine::ports::{
    Commit, NumberedRecord, OpenQuestion, Receipt, ReceiptState, Record, StoreError, ThreadSummary,
};
use tenx_engine::thread::ThreadRecord;

use crate::error::{damaged, is_unique_violation, sql, too_large};

/// The advisory lock class of commits ("tenx" + 1); the key is the thread id's hash.
const THREAD_LOCK: i32 = 0x7465_6e79;

/// A thread row, encoded.
#[derive(Debug)]
struct ThreadRow {
    thread_id: String,
    owner: Option<String>,
    artifact_id: String,
    graph: String,
    version: i64,
    created_at: i64,
    updated_at: i64,
    unfinished: bool,
    record: String,
    /// The open question a person answers, if any (`open_interrupt`, `asked_at`).
    open_interrupt: Option<String>,
    asked_at: Option<i64>,
}

/// A receipt row, encoded.
#[derive(Debug)]
struct ReceiptRow {
    thread_id: String,
    key: String,
    tool: String,
    in_flight: bool,
    receipt: String,
}

/// A record row, encoded.
#[derive(Debug)]
struct RecordRow {
    thread_id: String,
    at: i64,
    kind: String,
    fields: String,
}

/// A commit ready to send: owns everything, so it can run on a task of its own.
#[derive(Debug)]
pub(crate) struct Encoded {
    thread: Option<ThreadRow>,
    /// `None`: the thread must not exist. `Some(None)`: a version no row can have.
    expected_version: Option<Option<i64>>,
    receipts: Vec<ReceiptRow>,
    records: Vec<RecordRow>,
    /// Every thread id the commit touches, for the advisory locks.
    threads: Vec<String>,
}

fn fit(what: &str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| too_large(what, value))
}

/// Encodes `commit`, with `thread` as its checkpoint when given (else `commit.thread`).
pub(crate) fn encode(thread: Option<&ThreadRecord>, commit: &Commit) -> Result<Encoded, StoreError> {
    let thread = thread.or(commit.thread.as_ref());
    let mut threads = Vec::new();
    let thread = match thread {
        None => None,
        Some(thread) => {
            let id = &thread.thread_id;
            let writing = format!("writing thread '{id}'");
            let record = serde_json::to_string(thread)
                .map_err(|error| StoreError::Failed(format!("encoding thread '{id}': {error}")))?;
            threads.push(id.clone());
            Some(ThreadRow {
                thread_id: id.clone(),
                owner: thread.owner.clone(),
                artifact_id: thread.artifact_id.clone(),
                graph: thread.graph.clone(),
                version: fit(&format!("{writing}: its version"), thread.version)?,
                created_at: fit(&format!("{writing}: its creation time"), thread.created_at)?,
                updated_at: fit(&format!("{writing}: its update time"), thread.updated_at)?,
                unfinished: thread.run.is_some() && thread.pending.is_none(),
                record,
                open_interrupt: OpenQuestion::of(thread).map(|question| question.interrupt_id),
                asked_at: match OpenQuestion::of(thread) {
                    Some(question) => Some(fit(&format!("{writing}: its question's time"), question.asked_at)?),
                    None => None,
                },
            })
        }
    };
    let mut receipts = Vec::with_capacity(commit.receipts.len());
    for receipt in &commit.receipts {
        let text = serde_json::to_string(receipt)
            .map_err(|error| StoreError::Failed(format!("encoding a receipt: {error}")))?;
        threads.push(receipt.thread_id.clone());
        receipts.push(ReceiptRow {
            thread_id: receipt.thread_id.clone(),
            key: receipt.key.clone(),
            tool: receipt.tool.clone(),
            in_flight: matches!(receipt.state, ReceiptState::InFlight { .. }),
            receipt: text,
        });
    }
    let mut records = Vec::with_capacity(commit.records.len());
    for record in &commit.records {
        let fields = serde_json::to_string(&record.fields)
            .map_err(|error| StoreError::Failed(format!("encoding a record: {error}")))?;
        threads.push(record.thread_id.clone());
        records.push(RecordRow {
            thread_id: record.thread_id.clone(),
            at: fit(
                &format!("appending a record of thread '{}': its time", record.thread_id),
                record.at,
            )?,
            kind: record.kind.clone(),
            fields,
        });
    }
    threads.sort_unstable();
    threads.dedup();
    Ok(Encoded {
        expected_version: commit.expected_version.map(|version| i64::try_from(version).ok()),
        thread,
        receipts,
        records,
        threads,
    })
}

/// Takes the transaction-scoped advisory locks of `threads`, by key order (no deadlock between
/// two commits), so commits of one thread run one after the other and the version read next is
/// the latest committed one.
async fn lock_threads(transaction: &deadpool_postgres::Transaction<'_>, threads: &[String]) -> Result<(), StoreError> {
    if threads.is_empty() {
        return Ok(());
    }
    transaction
        .execute(
            "SELECT pg_advisory_xact_lock($1, key) FROM
               (SELECT DISTINCT hashtext(id) AS key FROM unnest($2::text[]) AS id ORDER BY key) AS keys",
            &[&THREAD_LOCK, &threads],
        )
        .await
        .map(drop)
        .map_err(|error| sql("locking the commit's threads", &error))
}

/// The thread's checkpoint, or `None`.
pub(crate) async fn load(client: &Client, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
    let doing = format!("loading thread '{thread_id}'");
    if thread_id.contains('\0') {
        // No stored id can hold NUL (PostgreSQL text cannot), so no thread has it; the database
        // is still asked, as `/health/ready`'s probe wants to know it answers.
        client
            .simple_query("SELECT 1")
            .await
            .map_err(|error| sql(&doing, &error))?;
        return Ok(None);
    }
    let statement = client
        .prepare_cached("SELECT version, record FROM threads WHERE thread_id = $1")
        .await
        .map_err(|error| sql(&doing, &error))?;
    let row = client
        .query_opt(&statement, &[&thread_id])
        .await
        .map_err(|error| sql(&doing, &error))?;
    let Some(row) = row else {
        return Ok(None);
    };
    let what = format!("the stored thread '{thread_id}'");
    let version: i64 = row.try_get(0).map_err(|error| damaged(&what, error))?;
    let text: String = row.try_get(1).map_err(|error| damaged(&what, error))?;
    let thread = ThreadRecord::from_json(&text).map_err(|error| error.stored(&what))?;
    if thread.thread_id != thread_id {
        return Err(damaged(
            &what,
            format!("its checkpoint names thread '{}'", thread.thread_id),
        ));
    }
    if i64::try_from(thread.version).ok() != Some(version) {
        return Err(damaged(
            &what,
            format!("its checkpoint has version {} but its row {version}", thread.version),
        ));
    }
    Ok(Some(thread))
}

/// Applies an encoded commit whole, or nothing of it (see [`Commit`]).
///
/// A commit of the thread alone (most of a run's) is one statement and no explicit transaction:
/// the version check and the write are the same statement ([`write_thread`]), and PostgreSQL's
/// row lock orders two writers of one thread (the second re-reads the row the first committed
/// and matches no version). A commit with receipts or records is one transaction that first
/// takes its threads' advisory locks, so its records follow commit order per thread.
pub(crate) async fn commit(client: &mut Client, commit: &Encoded) -> Result<(), StoreError> {
    if commit.receipts.is_empty() && commit.records.is_empty() {
        return match &commit.thread {
            Some(thread) => write_thread(&*client, thread, commit.expected_version).await,
            None => Ok(()),
        };
    }
    let transaction = client
        .transaction()
        .await
        .map_err(|error| sql("starting a commit", &error))?;
    lock_threads(&transaction, &commit.threads).await?;
    if let Some(thread) = &commit.thread {
        write_thread(&transaction, thread, commit.expected_version).await?;
    }
    if !commit.receipts.is_empty() {
        let statement = transaction
            .prepare_cached(
                "INSERT INTO receipts (thread_id, key, tool, in_flight, receipt) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (thread_id, key) DO UPDATE SET tool = excluded.tool, in_flight = excluded.in_flight,
                   receipt = excluded.receipt",
            )
            .await
            .map_err(|error| sql("writing a receipt", &error))?;
        for receipt in &commit.receipts {
            transaction
                .execute(
                    &statement,
                    &[
                        &receipt.thread_id,
                        &receipt.key,
                        &receipt.tool,
                        &receipt.in_flight,
                        &receipt.receipt,
                    ],
                )
                .await
                .map_err(|error| sql(&format!("writing a receipt of thread '{}'", receipt.thread_id), &error))?;
        }
    }
    if !commit.records.is_empty() {
        let statement = transaction
            .prepare_cached("INSERT INTO records (thread_id, at, kind, fields) VALUES ($1, $2, $3, $4)")
            .await
            .map_err(|error| sql("appending a record", &error))?;
        for record in &commit.records {
            transaction
                .execute(
                    &statement,
                    &[&record.thread_id, &record.at, &record.kind, &record.fields],
                )
                .await
                .map_err(|error| sql(&format!("appending a record of thread '{}'", record.thread_id), &error))?;
        }
    }
    transaction.commit().await.map_err(|error| sql("committing", &error))
}

/// Writes the thread if its stored version is the expected one, in one statement: a new thread
/// (`expected` is `None`) is inserted unless a row exists, an existing one is updated only where
/// its version matches. No row written is `Conflict`, and nothing is applied.
async fn write_thread(
    client: &impl deadpool_postgres::GenericClient,
    thread: &ThreadRow,
    expected: Option<Option<i64>>,
) -> Result<(), StoreError> {
    let id = &thread.thread_id;
    let doing = format!("writing thread '{id}'");
    let written = match expected {
        // A version no stored row can have (it does not fit `bigint`).
        Some(None) => return Err(StoreError::Conflict),
        None => {
            let statement = client
                .prepare_cached(
                    "INSERT INTO threads (thread_id, owner, artifact_id, graph, version, created_at, updated_at, unfinished, record,
                       open_interrupt, asked_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                     ON CONFLICT (thread_id) DO NOTHING",
                )
                .await
                .map_err(|error| sql(&doing, &error))?;
            client
                .execute(
                    &statement,
                    &[
                        id,
                        &thread.owner,
                        &thread.artifact_id,
                        &thread.graph,
                        &thread.version,
                        &thread.created_at,
                        &thread.updated_at,
                        &thread.unfinished,
                        &thread.record,
                        &thread.open_interrupt,
                        &thread.asked_at,
                    ],
                )
                .await
        }
        Some(Some(expected)) => {
            let statement = client
                .prepare_cached(
                    "UPDATE threads SET owner = $2, artifact_id = $3, graph = $4, version = $5, created_at = $6,
                       updated_at = $7, unfinished = $8, record = $9, open_interrupt = $11, asked_at = $12
                     WHERE thread_id = $1 AND version = $10",
                )
                .await
                .map_err(|error| sql(&doing, &error))?;
            client
                .execute(
                    &statement,
                    &[
                        id,
                        &thread.owner,
                        &thread.artifact_id,
                        &thread.graph,
                        &thread.version,
                        &thread.created_at,
                        &thread.updated_at,
                        &thread.unfinished,
                        &thread.record,
                        &expected,
                        &thread.open_interrupt,
                        &thread.asked_at,
                    ],
                )
                .await
        }
    };
    match written {
        Ok(1) => Ok(()),
        Ok(_) => Err(StoreError::Conflict),
        Err(error) if is_unique_violation(&error) => Err(StoreError::Conflict),
        Err(error) => Err(sql(&doing, &error)),
    }
}

/// The receipt of `(thread_id, key)`, if any.
pub(crate) async fn receipt(client: &Client, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError> {
    let doing = format!("reading a receipt of thread '{thread_id}'");
    let statement = client
        .prepare_cached("SELECT receipt FROM receipts WHERE thread_id = $1 AND key = $2")
        .await
        .map_err(|error| sql(&doing, &error))?;
    let text: Option<String> = client
        .query_opt(&statement, &[&thread_id, &key])
        .await
        .and_then(|row| row.map(|row| row.try_get(0)).transpose())
        .map_err(|error| sql(&doing, &error))?;
    text.map(|text| parse_receipt(&text, thread_id, key)).transpose()
}

/// The thread's receipts still in flight, by key.
pub(crate) async fn in_flight(client: &Client, thread_id: &str) -> Result<Vec<Receipt>, StoreError> {
    let doing = format!("reading the receipts in flight of thread '{thread_id}'");
    let statement = client
        .prepare_cached("SELECT key, receipt FROM receipts WHERE thread_id = $1 AND in_flight ORDER BY key")
        .await
        .map_err(|error| sql(&doing, &error))?;
    let rows = client
        .query(&statement, &[&thread_id])
        .await
        .map_err(|error| sql(&doing, &error))?;
    let mut receipts = Vec::with_capacity(rows.len());
    for row in rows {
        let (key, text): (String, String) = row
            .try_get(0)
            .and_then(|key| Ok((key, row.try_get(1)?)))
            .map_err(|error| sql(&doing, &error))?;
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

/// A `bigint` column that must hold a `u64`.
fn unsigned(row: &tokio_postgres::Row, index: usize, doing: &str) -> Result<u64, StoreError> {
    let value: i64 = row.try_get(index).map_err(|error| sql(doing, &error))?;
    u64::try_from(value).map_err(|_| StoreError::Failed(format!("{doing}: a stored value is negative ({value})")))
}

/// The thread's records, oldest first.
pub(crate) async fn records(client: &Client, thread_id: &str) -> Result<Vec<Record>, StoreError> {
    let doing = format!("reading the records of thread '{thread_id}'");
    let statement = client
        .prepare_cached("SELECT seq, at, kind, fields FROM records WHERE thread_id = $1 ORDER BY seq")
        .await
        .map_err(|error| sql(&doing, &error))?;
    let rows = client
        .query(&statement, &[&thread_id])
        .await
        .map_err(|error| sql(&doing, &error))?;
    rows.iter()
        .map(|row| {
            let seq: i64 = row.try_get(0).map_err(|error| sql(&doing, &error))?;
            let at = unsigned(row, 1, &doing)?;
            let kind: String = row.try_get(2).map_err(|error| sql(&doing, &error))?;
            let fields: String = row.try_get(3).map_err(|error| sql(&doing, &error))?;
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
pub(crate) async fn list_threads(
    client: &Client,
    owner: Option<&str>,
    offset: usize,
    limit: usize,
) -> Result<Vec<ThreadSummary>, StoreError> {
    const COLUMNS: &str = "SELECT thread_id, owner, created_at, updated_at FROM threads";
    const ORDER: &str = "ORDER BY updated_at DESC, created_at DESC, thread_id ASC LIMIT $1 OFFSET $2";
    let doing = "listing threads";
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    let rows = match owner {
        None => {
            let statement = client
                .prepare_cached(&format!("{COLUMNS} {ORDER}"))
                .await
                .map_err(|error| sql(doing, &error))?;
            client.query(&statement, &[&limit, &offset]).await
        }
        Some(owner) => {
            let statement = client
                .prepare_cached(&format!("{COLUMNS} WHERE owner = $3 {ORDER}"))
                .await
                .map_err(|error| sql(doing, &error))?;
            client.query(&statement, &[&limit, &offset, &owner]).await
        }
    }
    .map_err(|error| sql(doing, &error))?;
    rows.iter()
        .map(|row| {
            Ok(ThreadSummary {
                thread_id: row.try_get(0).map_err(|error| sql(doing, &error))?,
                owner: row.try_get(1).map_err(|error| sql(doing, &error))?,
                created_at: unsigned(row, 2, doing)?,
                updated_at: unsigned(row, 3, doing)?,
            })
        })
        .collect()
}

/// Deletes a thread and its receipts (records stay), under the thread's advisory lock. Whether
/// it existed.
pub(crate) async fn delete_thread(client: &mut Client, thread_id: &str) -> Result<bool, StoreError> {
    let transaction = client
        .transaction()
        .await
        .map_err(|error| sql("starting a delete", &error))?;
    lock_threads(&transaction, &[thread_id.to_owned()]).await?;
    transaction
        .execute("DELETE FROM receipts WHERE thread_id = $1", &[&thread_id])
        .await
        .map_err(|error| sql(&format!("deleting the receipts of thread '{thread_id}'"), &error))?;
    let deleted = transaction
        .execute("DELETE FROM threads WHERE thread_id = $1", &[&thread_id])
        .await
        .map_err(|error| sql(&format!("deleting thread '{thread_id}'"), &error))?;
    transaction
        .commit()
        .await
        .map_err(|error| sql("committing a delete", &error))?;
    Ok(deleted > 0)
}

/// Threads whose checkpoint has a run in progress that waits for nothing (the `unfinished`
/// column, set at commit, through its partial index), and threads with a receipt in flight
/// (the partial index of `in_flight`); each once, in code-point order.
pub(crate) async fn unfinished(client: &Client) -> Result<Vec<String>, StoreError> {
    let doing = "listing the threads left unfinished";
    let rows = client
        .query(
            "SELECT thread_id FROM threads WHERE unfinished
             UNION
             SELECT thread_id FROM receipts WHERE in_flight
             ORDER BY 1",
            &[],
        )
        .await
        .map_err(|error| sql(doing, &error))?;
    rows.iter()
        .map(|row| row.try_get(0).map_err(|error| sql(doing, &error)))
        .collect()
}

/// Every open question, oldest first (ties by thread id).
pub(crate) async fn open_questions(client: &Client) -> Result<Vec<OpenQuestion>, StoreError> {
    let doing = "listing the open questions";
    let statement = client
        .prepare_cached(
            "SELECT thread_id, open_interrupt, asked_at FROM threads
               WHERE open_interrupt IS NOT NULL ORDER BY asked_at, thread_id",
        )
        .await
        .map_err(|error| sql(doing, &error))?;
    let rows = client
        .query(&statement, &[])
        .await
        .map_err(|error| sql(doing, &error))?;
    rows.iter()
        .map(|row| {
            Ok(OpenQuestion {
                thread_id: row.try_get(0).map_err(|error| sql(doing, &error))?,
                interrupt_id: row.try_get(1).map_err(|error| sql(doing, &error))?,
                asked_at: unsigned(row, 2, doing)?,
            })
        })
        .collect()
}

/// The thread whose open question is `interrupt_id`.
pub(crate) async fn question_thread(client: &Client, interrupt_id: &str) -> Result<Option<String>, StoreError> {
    let doing = format!("finding the thread of question '{interrupt_id}'");
    let statement = client
        .prepare_cached("SELECT thread_id FROM threads WHERE open_interrupt = $1")
        .await
        .map_err(|error| sql(&doing, &error))?;
    let row = client
        .query_opt(&statement, &[&interrupt_id])
        .await
        .map_err(|error| sql(&doing, &error))?;
    row.map(|row| row.try_get(0).map_err(|error| sql(&doing, &error)))
        .transpose()
}

/// Records after `after`, in `seq` order, at most `limit`. `seq` is drawn when a record is
/// inserted, so a commit still in progress may later show a lower number than one already
/// read: a reader that pages with `after` can miss it. The approvals API says so.
pub(crate) async fn records_after(
    client: &Client,
    after: u64,
    limit: usize,
) -> Result<Vec<NumberedRecord>, StoreError> {
    let doing = "reading the records";
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let statement = client
        .prepare_cached("SELECT seq, thread_id, at, kind, fields FROM records WHERE seq > $1 ORDER BY seq LIMIT $2")
        .await
        .map_err(|error| sql(doing, &error))?;
    let rows = client
        .query(&statement, &[&after, &limit])
        .await
        .map_err(|error| sql(doing, &error))?;
    rows.iter()
        .map(|row| {
            let seq = unsigned(row, 0, doing)?;
            let thread_id: String = row.try_get(1).map_err(|error| sql(doing, &error))?;
            let at = unsigned(row, 2, doing)?;
            let kind: String = row.try_get(3).map_err(|error| sql(doing, &error))?;
            let fields: String = row.try_get(4).map_err(|error| sql(doing, &error))?;
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
