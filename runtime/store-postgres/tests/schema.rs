//! The schema: migrations applied once (also when several replicas open a new schema at once),
//! recorded in `tenx_schema_migrations`; `migrate` for operators; a newer schema refused and
//! left untouched; damaged rows reported, never trusted; records append-only in the database.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use std::sync::Arc;

use common::{TestSchema, done, receipt, save, thread};
use tenx_engine::ports::{Store, StoreError};
use tenx_engine::thread::CheckpointFormat;
use tenx_store_postgres::migrate::Migrated;
use tenx_store_postgres::{PostgresStore, migrate, schema_version};

fn failed(result: Result<impl std::fmt::Debug, StoreError>) -> String {
    match result {
        Err(StoreError::Failed(message)) => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

async fn versions(schema: &TestSchema) -> Vec<i32> {
    schema
        .connect()
        .await
        .query("SELECT version FROM tenx_schema_migrations ORDER BY version", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

async fn tables(schema: &TestSchema) -> Vec<String> {
    schema
        .connect()
        .await
        .query(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
            &[&schema.schema],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_schema_is_created_and_migrated_once() {
    let schema = schema_or_skip!();
    let store = schema.open().await;
    assert_eq!(store.schema(), schema.schema);
    assert_eq!(schema_version(), 3);
    assert_eq!(versions(&schema).await, [1, 2, 3]);
    assert_eq!(
        tables(&schema).await,
        ["locks", "receipts", "records", "tenx_schema_migrations", "threads"]
    );
    drop(store);
    // Opening again, and the operator command, apply nothing.
    drop(schema.open().await);
    assert_eq!(
        migrate(&schema.base, &schema.options()).await,
        Ok(Migrated { from: 3, to: 3 })
    );
    assert_eq!(versions(&schema).await, [1, 2, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_command_migrates_a_new_schema_before_any_store_opens() {
    let schema = schema_or_skip!();
    assert_eq!(
        migrate(&schema.url(), &tenx_store_postgres::PostgresOptions::default()).await,
        Ok(Migrated { from: 0, to: 3 })
    );
    assert_eq!(versions(&schema).await, [1, 2, 3]);
    let store = schema.open().await;
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_opening_a_new_schema_at_once_migrate_it_once() {
    let schema = schema_or_skip!();
    let schema = Arc::new(schema);
    let opens: Vec<_> = (0..6)
        .map(|_| {
            let schema = Arc::clone(&schema);
            tokio::spawn(async move { PostgresStore::open(&schema.base, schema.options()).await })
        })
        .collect();
    let mut stores = Vec::new();
    for open in opens {
        stores.push(open.await.unwrap().unwrap());
    }
    assert_eq!(versions(&schema).await, [1, 2, 3]);
    // Every one of them works on the one schema.
    stores[0].commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    assert_eq!(stores[5].load("t").await.unwrap().unwrap().version, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_schema_is_refused_and_left_untouched() {
    let schema = schema_or_skip!();
    drop(schema.open().await);
    schema
        .connect()
        .await
        .execute("INSERT INTO tenx_schema_migrations (version) VALUES (7)", &[])
        .await
        .unwrap();
    let message = failed(PostgresStore::open(&schema.base, schema.options()).await);
    assert_eq!(
        message,
        format!(
            "the PostgreSQL schema '{}' has schema version 7, newer than this build of tenx knows (3): upgrade tenx, or use another schema",
            schema.schema
        )
    );
    assert!(failed(migrate(&schema.base, &schema.options()).await).contains("newer than this build"));
    assert_eq!(versions(&schema).await, [1, 2, 3, 7]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_schema_gains_the_lease_waiters_and_keeps_its_rows() {
    let schema = schema_or_skip!();
    drop(schema.open().await);
    // Back to version 1, as a replica of an earlier tenx left it, with a thread and a live lease.
    let client = schema.connect().await;
    client
        .batch_execute(
            "ALTER TABLE locks DROP COLUMN waiters;
             DROP INDEX threads_open_questions; DROP INDEX threads_by_open_interrupt;
             ALTER TABLE threads DROP COLUMN open_interrupt; ALTER TABLE threads DROP COLUMN asked_at;
             DELETE FROM tenx_schema_migrations WHERE version IN (2, 3);
             INSERT INTO locks (thread_id, holder, expires_at) VALUES ('held', 'old-replica', clock_timestamp() + interval '1 hour');",
        )
        .await
        .unwrap();
    assert_eq!(versions(&schema).await, [1]);
    assert_eq!(
        migrate(&schema.base, &schema.options()).await,
        Ok(Migrated { from: 1, to: 3 })
    );
    assert_eq!(versions(&schema).await, [1, 2, 3]);
    let row = client
        .query_one("SELECT holder, waiters FROM locks WHERE thread_id = 'held'", &[])
        .await
        .unwrap();
    assert_eq!(
        (row.get::<_, String>(0), row.get::<_, i32>(1)),
        ("old-replica".to_owned(), 0)
    );
    // The upgraded schema works: a commit, and a lease on another thread.
    let store = schema.open().await;
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    drop(store.lock("t").await.unwrap());
}

#[tokio::test]
async fn a_bad_schema_name_is_refused_before_connecting() {
    // No database is needed: the name is checked first.
    let options = tenx_store_postgres::PostgresOptions {
        schema: "Robert'); DROP TABLE threads;--".to_owned(),
        ..tenx_store_postgres::PostgresOptions::default()
    };
    let message = failed(PostgresStore::open("postgres://u@127.0.0.1:1/d", options).await);
    assert!(message.contains("is not a plain identifier"), "{message}");
}

/// What a newer tenx refused by its checkpoint format says.
const NEWER: &str = "cannot be read: it is in checkpoint format 3, which a newer tenx wrote; this one reads formats 1 to 2 \
                     (run the thread with a tenx at least as new as the one that wrote it)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_a_newer_tenx_wrote_are_refused_and_unnumbered_ones_read() {
    let schema = schema_or_skip!();
    let store = schema.open().await;
    for id in ["newer", "reshaped", "unnumbered"] {
        store.commit(save(thread(id, None, 1, 1), None)).await.unwrap();
    }
    let client = schema.connect().await;
    client
        .batch_execute(
            "UPDATE threads SET record = jsonb_set(record::jsonb, '{format}', '3')::text WHERE thread_id = 'newer';
             UPDATE threads SET record = jsonb_set(jsonb_set(record::jsonb, '{format}', '3'), '{state}',
                 '\"kept elsewhere\"')::text WHERE thread_id = 'reshaped';
             UPDATE threads SET record = (record::jsonb - 'format')::text WHERE thread_id = 'unnumbered';",
        )
        .await
        .unwrap();
    // Refused by its format, whether or not its fields would decode here.
    for id in ["newer", "reshaped"] {
        assert_eq!(
            failed(store.load(id).await),
            format!("the stored thread '{id}' {NEWER}")
        );
    }
    // Written before formats were numbered: read as format 1, the rest as it was.
    let unnumbered = store.load("unnumbered").await.unwrap().unwrap();
    assert_eq!(unnumbered.format, CheckpointFormat::UNNUMBERED);
    let mut expected = thread("unnumbered", None, 1, 1);
    expected.format = CheckpointFormat::UNNUMBERED;
    assert_eq!(unnumbered, expected);
    // Written again, it is in the current format.
    store
        .commit(save(thread("unnumbered", None, 2, 2), Some(1)))
        .await
        .unwrap();
    let row = client
        .query_one(
            "SELECT (record::jsonb ->> 'format')::int FROM threads WHERE thread_id = 'unnumbered'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i32>(0), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_rows_are_reported_not_trusted() {
    let schema = schema_or_skip!();
    let store = schema.open().await;
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    store.commit(save(thread("u", None, 1, 1), None)).await.unwrap();
    store.commit(save(thread("v", None, 1, 1), None)).await.unwrap();
    store
        .commit(common::markers(
            vec![receipt("t", "k", done("ok")), receipt("t", "j", done("ok"))],
            vec![common::record("t", 1)],
        ))
        .await
        .unwrap();
    let client = schema.connect().await;
    client
        .batch_execute(
            "UPDATE threads SET record = '{not json' WHERE thread_id = 't';
             UPDATE threads SET version = 5 WHERE thread_id = 'u';
             UPDATE threads SET record = (SELECT record FROM threads WHERE thread_id = 'u') WHERE thread_id = 'v';
             UPDATE receipts SET receipt = '[]' WHERE key = 'k';
             UPDATE receipts SET in_flight = true WHERE key = 'j';",
        )
        .await
        .unwrap();
    assert!(failed(store.load("t").await).starts_with("the stored thread 't' is damaged: "));
    assert_eq!(
        failed(store.load("u").await),
        "the stored thread 'u' is damaged: its checkpoint has version 1 but its row 5"
    );
    assert_eq!(
        failed(store.load("v").await),
        "the stored thread 'v' is damaged: its checkpoint names thread 'u'"
    );
    assert!(failed(store.receipt("t", "k").await).starts_with("the receipt 'k' of thread 't' is damaged"));
    assert_eq!(
        failed(store.in_flight("t").await),
        "the receipt 'j' of thread 't' is damaged: it is marked in flight but is not"
    );
    // The schema refuses a negative version; a negative timestamp is read back as damage.
    assert!(
        client
            .execute("UPDATE threads SET version = -1 WHERE thread_id = 'u'", &[])
            .await
            .is_err()
    );
    client
        .execute("UPDATE threads SET updated_at = -1 WHERE thread_id = 'v'", &[])
        .await
        .unwrap();
    assert!(failed(store.list_threads(None, 0, 10).await).starts_with("listing threads: "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_cannot_be_changed_or_removed_in_the_database() {
    let schema = schema_or_skip!();
    let store = schema.open().await;
    store
        .commit(common::markers(Vec::new(), vec![common::record("t", 1)]))
        .await
        .unwrap();
    let client = schema.connect().await;
    for statement in [
        "UPDATE records SET kind = 'forged'",
        "DELETE FROM records",
        "TRUNCATE records",
    ] {
        let error = client.execute(statement, &[]).await.unwrap_err();
        let message = error
            .as_db_error()
            .map(|db| db.message().to_owned())
            .unwrap_or_default();
        assert_eq!(message, "records are append-only", "{statement}: {error}");
    }
    assert_eq!(store.records("t").await.unwrap(), vec![common::record("t", 1)]);
}
