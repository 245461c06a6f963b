//! Helpers shared by the PostgreSQL store's integration tests: a schema of the test's own on
//! the database `TENX_TEST_DATABASE_URL` names (dropped when the test ends, passed or not), and
//! threads, receipts, records and commits as the SQLite store's tests build them.

#![allow(dead_code, reason = "each test file uses a different subset of the helpers")]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, json};
use tenx_engine::ports::{Commit, Receipt, ReceiptState, Record};
use tenx_engine::thread::ThreadRecord;
use tenx_engine::wire::ExecutionMeta;
use tenx_store_postgres::{PostgresOptions, PostgresStore};

/// The variable naming the test database.
pub const DATABASE_VARIABLE: &str = "TENX_TEST_DATABASE_URL";

/// A schema of one test's own; dropped (with everything in it) when this is dropped.
pub struct TestSchema {
    /// The database's URL, without the schema.
    pub base: String,
    /// The schema's name.
    pub schema: String,
}

/// The test's schema, or `None` (after saying so) when no database is configured.
pub fn schema() -> Option<TestSchema> {
    let Some(base) = std::env::var(DATABASE_VARIABLE)
        .ok()
        .filter(|url| !url.trim().is_empty())
    else {
        eprintln!("skipping: {DATABASE_VARIABLE} is not set");
        return None;
    };
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let schema = format!(
        "tenx_test_{}_{nanos}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    Some(TestSchema { base, schema })
}

/// Takes the test's schema or returns from the test (which then passes, having said it skips).
#[macro_export]
macro_rules! schema_or_skip {
    () => {
        match common::schema() {
            Some(schema) => schema,
            None => return,
        }
    };
}

impl TestSchema {
    /// The URL of the schema: `?schema=` added to the database's URL.
    pub fn url(&self) -> String {
        let separator = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{separator}schema={}", self.base, self.schema)
    }

    /// Options for tests: this schema, short leases.
    pub fn options(&self) -> PostgresOptions {
        PostgresOptions {
            schema: self.schema.clone(),
            pool_size: 8,
            lease_ttl: Duration::from_millis(1000),
            lease_poll: Duration::from_millis(5),
            ..PostgresOptions::default()
        }
    }

    /// A store on this schema with [`TestSchema::options`].
    pub async fn open(&self) -> PostgresStore {
        PostgresStore::open(&self.base, self.options()).await.unwrap()
    }

    /// A plain connection to the database with `search_path` set to this schema (the schema
    /// need not exist yet), for looking at and tampering with the rows.
    pub async fn connect(&self) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(&self.base, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .batch_execute(&format!("SET search_path TO {}", self.schema))
            .await
            .unwrap();
        client
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        let (base, schema) = (self.base.clone(), self.schema.clone());
        // On a thread and runtime of its own: this may run inside the test's runtime.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let (client, connection) = tokio_postgres::connect(&base, tokio_postgres::NoTls).await?;
                tokio::spawn(connection);
                client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .await
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop the test schema {}: {dropped:?}", self.schema);
        }
    }
}

/// A thread at `version`, last changed at `updated_at`.
pub fn thread(id: &str, owner: Option<&str>, version: u64, updated_at: u64) -> ThreadRecord {
    let mut state = Map::new();
    state.insert("amount_cents".into(), json!(1500));
    ThreadRecord {
        format: tenx_engine::thread::CheckpointFormat::CURRENT,
        thread_id: id.into(),
        artifact_id: "sha256:art".into(),
        graph: "refunds".into(),
        owner: owner.map(str::to_string),
        version,
        created_at: 1,
        updated_at,
        state,
        context: Vec::new(),
        execution: ExecutionMeta::new(id),
        pending: None,
        run: None,
        resume_at: None,
        model_cursors: BTreeMap::new(),
        substitutions: BTreeMap::new(),
        stopped_run: None,
    }
}

pub fn receipt(thread_id: &str, key: &str, state: ReceiptState) -> Receipt {
    Receipt {
        thread_id: thread_id.into(),
        key: key.into(),
        tool: "issue_refund".into(),
        state,
    }
}

pub fn done(result: &str) -> ReceiptState {
    ReceiptState::Done {
        result: json!(result),
        is_error: false,
    }
}

pub fn record(thread_id: &str, at: u64) -> Record {
    Record {
        thread_id: thread_id.into(),
        at,
        kind: "tool_call".into(),
        fields: json!({"at": at, "outcome": "completed"}),
    }
}

/// A commit of `thread` alone.
pub fn save(thread: ThreadRecord, expected_version: Option<u64>) -> Commit {
    Commit {
        thread: Some(thread),
        expected_version,
        receipts: Vec::new(),
        records: Vec::new(),
    }
}

/// A commit without a thread.
pub fn markers(receipts: Vec<Receipt>, records: Vec<Record>) -> Commit {
    Commit {
        thread: None,
        expected_version: None,
        receipts,
        records,
    }
}
