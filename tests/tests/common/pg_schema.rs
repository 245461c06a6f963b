//! A PostgreSQL schema of one test's own, dropped when the test ends (passed or failed), so
//! runs never see each other's rows and the `test` database does not fill with leftovers.
//! Shared by the `serve` and `replicas` test targets (`#[path]` modules).

/// Drops the test's schema when the test ends, passed or failed.
pub struct Schema {
    /// The database URL without tenx's parameters.
    pub base: String,
    /// The schema.
    pub name: String,
}

impl Drop for Schema {
    fn drop(&mut self) {
        let (base, name) = (self.base.clone(), self.name.clone());
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let (client, connection) = tokio_postgres::connect(&base, tokio_postgres::NoTls).await?;
                tokio::spawn(connection);
                client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
                    .await
            })
        })
        .join();
    }
}
