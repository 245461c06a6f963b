//! The file and its schema: WAL and the pragmas, migrations recorded in `user_version`, a newer
//! schema or another application's file refused, and damaged rows reported, never trusted.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::{done, open, receipt, save, temp_file, thread};
use rusqlite::Connection;
use tenx_engine::ports::{Store, StoreError};
use tenx_engine::thread::CheckpointFormat;
use tenx_store_sqlite::{SqliteOptions, SqliteStore, Synchronous, schema_version};

fn pragma(connection: &Connection, name: &str) -> i64 {
    connection
        .query_row(&format!("PRAGMA {name}"), [], |row| row.get(0))
        .unwrap()
}

fn failed(result: Result<impl std::fmt::Debug, StoreError>) -> String {
    match result {
        Err(StoreError::Failed(message)) => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn a_new_file_is_wal_migrated_and_marked_as_a_tenx_store() {
    let (_dir, path) = temp_file();
    let store = SqliteStore::open(&path).await.unwrap();
    let connection = Connection::open(&path).unwrap();
    let mode: String = connection
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(pragma(&connection, "user_version"), schema_version());
    assert_eq!(schema_version(), 4);
    assert_eq!(pragma(&connection, "application_id"), 0x7465_6e78);
    let tables: Vec<String> = connection
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(tables, ["locks", "receipts", "records", "stops", "threads"]);
    drop(store);
    // Opening again applies nothing and keeps the version.
    drop(SqliteStore::open(&path).await.unwrap());
    assert_eq!(pragma(&Connection::open(&path).unwrap(), "user_version"), 4);
}

#[tokio::test]
async fn a_newer_schema_is_refused_and_left_untouched() {
    let (_dir, path) = temp_file();
    drop(open(&path).await);
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 7)
        .unwrap();
    let message = failed(SqliteStore::open(&path).await);
    assert_eq!(
        message,
        format!(
            "the store file '{}' has schema version 7, newer than this build of tenx knows (4): upgrade tenx, or open another file",
            path.display()
        )
    );
    assert_eq!(pragma(&Connection::open(&path).unwrap(), "user_version"), 7);
}

#[tokio::test]
async fn another_applications_file_is_refused() {
    let (_dir, path) = temp_file();
    let connection = Connection::open(&path).unwrap();
    connection.pragma_update(None, "application_id", 42).unwrap();
    connection.execute_batch("CREATE TABLE notes (body TEXT)").unwrap();
    drop(connection);
    let message = failed(SqliteStore::open(&path).await);
    assert!(message.contains("belongs to another application"), "{message}");
    let connection = Connection::open(&path).unwrap();
    assert_eq!(pragma(&connection, "user_version"), 0, "nothing was migrated");
}

#[tokio::test]
async fn a_file_that_is_not_sqlite_is_refused() {
    let (_dir, path) = temp_file();
    std::fs::write(
        &path,
        b"this is not a database, but it is long enough to have a header....",
    )
    .unwrap();
    let message = failed(SqliteStore::open(&path).await);
    assert!(message.contains("not a database"), "{message}");
}

#[tokio::test]
async fn a_directory_that_does_not_exist_is_a_clear_error() {
    let (dir, _path) = temp_file();
    let path = dir.path().join("missing").join("threads.db");
    let message = failed(SqliteStore::open(&path).await);
    assert!(message.starts_with("opening the store file"), "{message}");
}

#[tokio::test]
async fn both_synchronous_settings_open_and_commit() {
    for synchronous in [Synchronous::Full, Synchronous::Normal] {
        let (_dir, path) = temp_file();
        let options = SqliteOptions {
            synchronous,
            readers: 0,
            ..SqliteOptions::default()
        };
        let store = SqliteStore::open_with(&path, options).await.unwrap();
        store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
        assert_eq!(store.load("t").await.unwrap().unwrap().version, 1);
    }
}

/// What a newer tenx refused by its checkpoint format says.
const NEWER: &str = "cannot be read: it is in checkpoint format 3, which a newer tenx wrote; this one reads formats 1 to 2 \
                     (run the thread with a tenx at least as new as the one that wrote it)";

#[tokio::test]
async fn checkpoints_a_newer_tenx_wrote_are_refused_and_unnumbered_ones_read() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
    for id in ["newer", "reshaped", "unnumbered"] {
        store.commit(save(thread(id, None, 1, 1), None)).await.unwrap();
    }
    let connection = Connection::open(&path).unwrap();
    connection
        .execute_batch(
            "UPDATE threads SET record = json_set(record, '$.format', 3) WHERE thread_id = 'newer';
             UPDATE threads SET record = json_set(record, '$.format', 3, '$.state', 'kept elsewhere')
                 WHERE thread_id = 'reshaped';
             UPDATE threads SET record = json_remove(record, '$.format') WHERE thread_id = 'unnumbered';",
        )
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
    let format: i64 = connection
        .query_row(
            "SELECT json_extract(record, '$.format') FROM threads WHERE thread_id = 'unnumbered'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(format, 2);
}

#[tokio::test]
async fn damaged_rows_are_reported_not_trusted() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
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
    let connection = Connection::open(&path).unwrap();
    connection
        .execute_batch(
            "UPDATE threads SET record = '{not json' WHERE thread_id = 't';
             UPDATE threads SET version = 5 WHERE thread_id = 'u';
             UPDATE threads SET record = (SELECT record FROM threads WHERE thread_id = 'u') WHERE thread_id = 'v';
             UPDATE receipts SET receipt = '[]' WHERE key = 'k';
             UPDATE receipts SET in_flight = 1 WHERE key = 'j';",
        )
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
        connection
            .execute("UPDATE threads SET version = -1 WHERE thread_id = 'u'", [])
            .is_err()
    );
    connection
        .execute("UPDATE threads SET updated_at = -1 WHERE thread_id = 'v'", [])
        .unwrap();
    assert!(failed(store.list_threads(None, 0, 10).await).starts_with("listing threads: "));
}

#[tokio::test]
async fn records_cannot_be_changed_or_removed_in_the_file() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
    store
        .commit(common::markers(Vec::new(), vec![common::record("t", 1)]))
        .await
        .unwrap();
    let connection = Connection::open(&path).unwrap();
    let update = connection
        .execute("UPDATE records SET kind = 'forged'", [])
        .unwrap_err();
    assert!(update.to_string().contains("records are append-only"), "{update}");
    let delete = connection.execute("DELETE FROM records", []).unwrap_err();
    assert!(delete.to_string().contains("records are append-only"), "{delete}");
    assert_eq!(store.records("t").await.unwrap(), vec![common::record("t", 1)]);
}
