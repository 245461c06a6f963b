//! [`PostgresStore`]: the [`Store`] port over one PostgreSQL schema. Every operation takes a
//! pooled connection; commits and deletes run on a task of their own, so a caller that stops
//! waiting never cuts one short (it is applied whole or not at all either way, and the
//! connection goes back to the pool clean); locks go through [`crate::lease`], stops between
//! replicas through [`crate::stops`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::Pool;
use tenx_engine::ports::{
    Commit, NumberedRecord, OpenQuestion, Receipt, Record, StopHandler, StopKind, Store, StoreError, ThreadLease,
    ThreadSummary,
};
use tenx_engine::thread::ThreadRecord;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::connect::{pool, target};
use crate::error::pool as pool_error;
use crate::lease::{LeaseSettings, Locks, acquire, sweep_expired};
use crate::queries::{self, Encoded};
use crate::stops::Stops;
use crate::{PostgresOptions, migrate};

/// Threads, receipts, records and leases in one PostgreSQL schema (see the crate's docs).
#[derive(Debug)]
pub struct PostgresStore {
    pool: Pool,
    schema: String,
    shown: String,
    locks: Locks,
    lease_ttl: Duration,
    lease_poll: Duration,
    /// Woken by the listener when another replica releases a lease.
    wake: Arc<Notify>,
    /// The stop notices addressed to this store's leases (heard by the listener).
    stops: Arc<Stops>,
    /// The listener ([`crate::wake`]), stopped with the store.
    listener: JoinHandle<()>,
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`, optionally with tenx's
    /// query parameters `schema=NAME`, `pool_size=N` and `lease_ttl_ms=MS`, which override
    /// `options`, and libpq's such as `sslmode=verify-full`, `sslrootcert=PATH` or
    /// `connect_timeout=S`),
    /// applies the embedded migrations to the schema (creating it; refusing a newer one), and
    /// removes expired leases. Fails when the database cannot be reached.
    pub async fn open(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        let target = target(url, &options)?;
        let options = target.options.clone();
        let pool = pool(&target, options.pool_size, &options)?;
        {
            let mut client = pool
                .get()
                .await
                .map_err(|error| pool_error(&format!("connecting to '{}'", target.shown), &error))?;
            migrate::apply(&mut client, &target.schema).await?;
            sweep_expired(&client).await?;
        }
        let wake = Arc::new(Notify::new());
        let stops = Arc::new(Stops::new(&target.schema));
        let listener = crate::wake::start(
            target.config.clone(),
            target.tls.clone(),
            target.schema.clone(),
            Arc::clone(&wake),
            Arc::clone(&stops),
            options.connect_timeout,
        )
        .await;
        Ok(Self {
            pool,
            schema: target.schema,
            shown: target.shown,
            locks: Locks::default(),
            lease_ttl: options.lease_ttl,
            lease_poll: options.lease_poll,
            wake,
            stops,
            listener,
        })
    }

    /// The schema the store's tables are in.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The database's URL without its password (for logs and settings lines).
    pub fn url(&self) -> &str {
        &self.shown
    }

    /// A pooled connection.
    async fn client(&self, doing: &str) -> Result<deadpool_postgres::Client, StoreError> {
        self.pool.get().await.map_err(|error| pool_error(doing, &error))
    }

    /// Runs an encoded commit on a task of its own.
    async fn run_commit(&self, encoded: Encoded) -> Result<(), StoreError> {
        let pool = self.pool.clone();
        tokio::spawn(async move {
            let mut client = pool.get().await.map_err(|error| pool_error("committing", &error))?;
            queries::commit(&mut client, &encoded).await
        })
        .await
        .map_err(|_| StoreError::Failed("a commit's task was abandoned".to_owned()))?
    }

    /// The in-process lock table (tests check that released locks are forgotten).
    #[cfg(test)]
    pub(crate) fn locks(&self) -> &Locks {
        &self.locks
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn load(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        let client = self.client(&format!("loading thread '{thread_id}'")).await?;
        queries::load(&client, thread_id).await
    }

    async fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        let encoded = queries::encode(None, &commit)?;
        self.run_commit(encoded).await
    }

    async fn commit_checkpoint(&self, thread: &ThreadRecord, commit: Commit) -> Result<(), StoreError> {
        let encoded = queries::encode(Some(thread), &commit)?;
        self.run_commit(encoded).await
    }

    async fn receipt(&self, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError> {
        let client = self
            .client(&format!("reading a receipt of thread '{thread_id}'"))
            .await?;
        queries::receipt(&client, thread_id, key).await
    }

    async fn in_flight(&self, thread_id: &str) -> Result<Vec<Receipt>, StoreError> {
        let client = self
            .client(&format!("reading the receipts in flight of thread '{thread_id}'"))
            .await?;
        queries::in_flight(&client, thread_id).await
    }

    async fn records(&self, thread_id: &str) -> Result<Vec<Record>, StoreError> {
        let client = self
            .client(&format!("reading the records of thread '{thread_id}'"))
            .await?;
        queries::records(&client, thread_id).await
    }

    async fn list_threads(
        &self,
        owner: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        let client = self.client("listing threads").await?;
        queries::list_threads(&client, owner, offset, limit).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<bool, StoreError> {
        let (pool, thread_id) = (self.pool.clone(), thread_id.to_owned());
        tokio::spawn(async move {
            let doing = format!("deleting thread '{thread_id}'");
            let mut client = pool.get().await.map_err(|error| pool_error(&doing, &error))?;
            queries::delete_thread(&mut client, &thread_id).await
        })
        .await
        .map_err(|_| StoreError::Failed("a delete's task was abandoned".to_owned()))?
    }

    async fn open_questions(&self) -> Result<Vec<OpenQuestion>, StoreError> {
        let client = self.client("listing the open questions").await?;
        queries::open_questions(&client).await
    }

    async fn question_thread(&self, interrupt_id: &str) -> Result<Option<String>, StoreError> {
        let client = self.client("finding the thread of a question").await?;
        queries::question_thread(&client, interrupt_id).await
    }

    async fn records_after(&self, after: u64, limit: usize) -> Result<Vec<NumberedRecord>, StoreError> {
        let client = self.client("reading the records").await?;
        queries::records_after(&client, after, limit).await
    }

    async fn unfinished(&self) -> Result<Vec<String>, StoreError> {
        let client = self.client("listing the threads left unfinished").await?;
        queries::unfinished(&client).await
    }

    async fn lock(&self, thread_id: &str) -> Result<Box<dyn ThreadLease>, StoreError> {
        let settings = LeaseSettings {
            ttl: self.lease_ttl,
            poll: self.lease_poll,
            wake: Arc::clone(&self.wake),
            schema: self.schema.clone(),
            stops: Arc::clone(&self.stops),
        };
        let lease = acquire(&self.locks, &self.pool, &settings, thread_id).await?;
        Ok(Box::new(lease))
    }

    async fn publish_stop(&self, thread_id: &str, kind: StopKind) -> Result<bool, StoreError> {
        crate::stops::publish(&self.pool, &self.schema, thread_id, kind).await
    }

    fn subscribe_stops(&self, handler: std::sync::Weak<dyn StopHandler>) {
        self.stops.subscribe(handler);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use std::time::Duration;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn released_and_abandoned_locks_are_forgotten() {
        let Some(url) = std::env::var("TENX_TEST_DATABASE_URL")
            .ok()
            .filter(|url| !url.is_empty())
        else {
            eprintln!("skipping: TENX_TEST_DATABASE_URL is not set");
            return;
        };
        let schema = format!("tenx_unit_{}", std::process::id());
        let options = PostgresOptions {
            schema: schema.clone(),
            ..PostgresOptions::default()
        };
        let store = PostgresStore::open(&url, options).await.unwrap();
        let forgotten = async |store: &PostgresStore| {
            for _ in 0..500 {
                if store.locks().len() == 0 {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            false
        };
        let lease = store.lock("t").await.unwrap();
        assert_eq!(store.locks().len(), 1);
        // A wait that is given up leaves the entry to the holder alone.
        assert!(
            tokio::time::timeout(Duration::from_millis(30), store.lock("t"))
                .await
                .is_err()
        );
        assert_eq!(store.locks().len(), 1);
        drop(lease);
        assert!(forgotten(&store).await);
        let leases = [store.lock("a").await.unwrap(), store.lock("b").await.unwrap()];
        assert_eq!(store.locks().len(), 2);
        drop(leases);
        assert!(forgotten(&store).await);
        let client = store.client("cleaning up").await.unwrap();
        client
            .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
            .await
            .unwrap();
    }
}
