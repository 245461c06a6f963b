//! The benchmark's PostgreSQL schemas: `tenx_bench_<pid>_one` (the single replica) and
//! `tenx_bench_<pid>_two` (the pair), each named in a `?schema=` URL that `tenx serve` creates
//! and migrates at start, and dropped here at the end over a connection of this process.

use tokio_postgres::{Client, NoTls};

/// The two schemas' `tenx serve --store` URLs and the connection that drops them.
pub(crate) struct Schemas {
    client: Client,
    names: [String; 2],
    /// The single replica's URL.
    pub(crate) one: String,
    /// The two replicas' URL.
    pub(crate) two: String,
    /// `SHOW server_version`.
    pub(crate) server: String,
}

impl Schemas {
    /// Connects to `url` (so a database that cannot be reached fails here, before any server
    /// starts), drops leftovers of an earlier run with this process id, and names the schemas.
    pub(crate) async fn create(url: &str) -> Result<Self, String> {
        let (client, connection) = tokio_postgres::connect(url, NoTls)
            .await
            .map_err(|error| format!("connecting to PostgreSQL (the benchmark's database URL): {error}"))?;
        tokio::spawn(async move {
            let _closed = connection.await;
        });
        let server = client
            .query_one("SHOW server_version", &[])
            .await
            .ok()
            .and_then(|row| row.try_get::<_, String>(0).ok())
            .unwrap_or_else(|| "?".to_owned());
        let pid = std::process::id();
        let names = [format!("tenx_bench_{pid}_one"), format!("tenx_bench_{pid}_two")];
        let separator = if url.contains('?') { '&' } else { '?' };
        let [first, second] = &names;
        let schemas = Self {
            one: format!("{url}{separator}schema={first}"),
            two: format!("{url}{separator}schema={second}"),
            client,
            names,
            server,
        };
        schemas.drop_all().await?;
        Ok(schemas)
    }

    /// Both schema names, for the report.
    pub(crate) fn names(&self) -> String {
        self.names.join(", ")
    }

    /// `DROP SCHEMA IF EXISTS … CASCADE` of both.
    pub(crate) async fn drop_all(&self) -> Result<(), String> {
        for name in &self.names {
            self.client
                .batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
                .await
                .map_err(|error| format!("dropping schema {name}: {error}"))?;
        }
        Ok(())
    }
}
