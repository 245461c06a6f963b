//! A cluster under test: one shared store (the backend), the refund example sealed to a file, a
//! `tenx.toml` with a short lease and a recovery sweep, the payments stand-in, and any number
//! of replicas started on it. Every scenario takes a [`Backend`], so the same test runs on each
//! store that several processes can share.

use crate::pg_schema::Schema;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::payments::Payments;
use super::replica::Replica;

/// How long a dead replica's lease lasts (`lease_ttl_seconds`; the smallest the setting takes).
pub const LEASE_TTL: Duration = Duration::from_secs(1);

/// The `[serve]` settings every replica runs with: a dead replica's threads are free after
/// [`LEASE_TTL`], and each live replica looks for them every second. A request waits for a
/// busy thread longer than the lease lasts, so a dead holder's thread is waited for, not
/// refused.
const SETTINGS: &str = "[serve]\nlease_ttl_seconds = 1\nrecovery_interval_seconds = 1\nbusy_wait_seconds = 20\n";

/// A store several `tenx serve` processes share, as the arguments that select it.
#[derive(Debug, Clone)]
pub enum Backend {
    /// One SQLite file in the cluster's directory (cross-process leases in its `locks` table).
    Sqlite,
    /// A PostgreSQL database, by URL (`--store postgres://…?schema=…`).
    Postgres(String),
}

impl Backend {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }

    /// The `tenx serve` arguments that select this store.
    fn store_args(&self, dir: &Path) -> Vec<String> {
        match self {
            Self::Sqlite => vec![
                "--store".to_owned(),
                "sqlite".to_owned(),
                "--data-dir".to_owned(),
                dir.join("data").display().to_string(),
            ],
            Self::Postgres(url) => vec!["--store".to_owned(), url.clone()],
        }
    }
}

/// The PostgreSQL backend on a schema of this test's own, or `None` (after saying why the
/// test skips): `TENX_TEST_DATABASE_URL` (postgres://postgres@127.0.0.1:5432/test on this
/// machine) with `?schema=tenx_replicas_<test>_<pid>_<time>`, which the store creates at open,
/// so runs never see each other's rows and no replica recovers another test's threads.
///
/// The schema is dropped when the cluster ends ([`Cluster`] holds a [`Schema`]).
pub fn postgres(test: &str) -> Option<Backend> {
    let Ok(url) = std::env::var("TENX_TEST_DATABASE_URL") else {
        eprintln!("skipped {test} on PostgreSQL: TENX_TEST_DATABASE_URL is not set");
        return None;
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros();
    let schema = format!("tenx_replicas_{test}_{}_{stamp}", std::process::id());
    let separator = if url.contains('?') { '&' } else { '?' };
    Some(Backend::Postgres(format!("{url}{separator}schema={schema}")))
}

pub struct Cluster {
    dir: tempfile::TempDir,
    backend: Backend,
    artifact: PathBuf,
    config: PathBuf,
    pub payments: Payments,
    /// PostgreSQL only: the test's schema, dropped last.
    _schema: Option<Schema>,
}

impl Cluster {
    pub fn new(backend: Backend) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = tenx_tests::repo_root();
        let text = std::fs::read_to_string(root.join("examples/refund_approval/main.tenx")).unwrap();
        let artifact = dir.path().join("refund.tenxg");
        std::fs::write(
            &artifact,
            tenx_tests::sealed_bytes("examples/refund_approval/main.tenx", &text),
        )
        .unwrap();
        let config = dir.path().join("tenx.toml");
        std::fs::write(&config, SETTINGS).unwrap();
        let schema = match &backend {
            Backend::Sqlite => None,
            Backend::Postgres(url) => url.rsplit_once("schema=").map(|(base, name)| Schema {
                base: base.trim_end_matches(['?', '&']).to_owned(),
                name: name.to_owned(),
            }),
        };
        Self {
            dir,
            backend,
            artifact,
            config,
            payments: Payments::start(),
            _schema: schema,
        }
    }

    /// Starts one more replica on the shared store and waits until it listens.
    pub async fn replica(&self) -> Replica {
        let mut args = vec![
            self.artifact.display().to_string(),
            "--port".to_owned(),
            "0".to_owned(),
            "--config".to_owned(),
            self.config.display().to_string(),
        ];
        args.extend(self.backend.store_args(self.dir.path()));
        let vars = vec![
            ("ORDERS_URL".to_owned(), "http://127.0.0.1:9".to_owned()),
            ("PAYMENTS_URL".to_owned(), self.payments.url().to_owned()),
        ];
        let dir = self.dir.path().to_path_buf();
        tokio::task::spawn_blocking(move || Replica::start(&args, &vars, &dir))
            .await
            .unwrap()
    }
}
