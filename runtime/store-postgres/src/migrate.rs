//! The schema: numbered SQL files embedded in the binary, applied in one transaction at open
//! (or by [`migrate`], for an operator command). The transaction first takes an advisory lock
//! for the schema, so replicas starting at once apply each migration once (the others wait,
//! then find nothing to do); `tenx_schema_migrations` records each applied version. A schema
//! whose version is newer than this build knows is refused, so an older tenx never writes into
//! a newer schema.

use deadpool_postgres::Client;
use tenx_engine::ports::StoreError;

use crate::PostgresOptions;
use crate::connect::{pool, target};
use crate::error::{pool as pool_error, sql};

/// The migrations, in order: migration `n` (1-based) brings the schema to version `n`.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_initial.sql"),
    include_str!("../migrations/0002_lock_waiters.sql"),
    include_str!("../migrations/0003_questions.sql"),
];

/// The advisory lock class of migrations ("tenx" in ASCII); the key is the schema's hash.
const MIGRATION_LOCK: i32 = 0x7465_6e78;

/// The schema version this build writes.
pub fn schema_version() -> i64 {
    i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX)
}

/// What a migration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrated {
    /// The schema's version before.
    pub from: i64,
    /// Its version now ([`schema_version`]).
    pub to: i64,
}

/// Connects to `url` and brings its schema (`options.schema`, or `?schema=` in the URL) to
/// [`schema_version`], creating the schema if needed; `tenx migrate` runs this. Opening a
/// [`crate::PostgresStore`] does the same, so running it first is optional.
pub async fn migrate(url: &str, options: &PostgresOptions) -> Result<Migrated, StoreError> {
    let target = target(url, options)?;
    let pool = pool(&target, 1, &target.options)?;
    let mut client = pool
        .get()
        .await
        .map_err(|error| pool_error(&format!("connecting to '{}'", target.shown), &error))?;
    apply(&mut client, &target.schema).await
}

/// Applies the missing migrations to `schema` on `client`, in one transaction.
pub(crate) async fn apply(client: &mut Client, schema: &str) -> Result<Migrated, StoreError> {
    let doing = format!("migrating the PostgreSQL schema '{schema}'");
    let transaction = client.transaction().await.map_err(|error| sql(&doing, &error))?;
    transaction
        .execute(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            &[&MIGRATION_LOCK, &schema],
        )
        .await
        .map_err(|error| sql(&format!("{doing}: waiting for another replica's migration"), &error))?;
    let exists = transaction
        .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])
        .await
        .map_err(|error| sql(&doing, &error))?
        .is_some();
    // The name is checked to be a plain lower-case identifier (`connect::check_schema`).
    let mut setup = String::new();
    if !exists {
        setup.push_str(&format!("CREATE SCHEMA {schema};"));
    }
    setup.push_str(&format!(
        "SET LOCAL search_path TO {schema};
         CREATE TABLE IF NOT EXISTS tenx_schema_migrations (
             version    INTEGER     NOT NULL PRIMARY KEY,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         );"
    ));
    transaction
        .batch_execute(&setup)
        .await
        .map_err(|error| sql(&format!("{doing}: creating the schema"), &error))?;
    let version: i64 = transaction
        .query_one(
            "SELECT coalesce(max(version), 0)::bigint FROM tenx_schema_migrations",
            &[],
        )
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|error| sql(&format!("{doing}: reading its version"), &error))?;
    let known = schema_version();
    if version > known {
        return Err(StoreError::Failed(format!(
            "the PostgreSQL schema '{schema}' has schema version {version}, newer than this build of tenx knows ({known}): upgrade tenx, or use another schema"
        )));
    }
    if version < 0 {
        return Err(StoreError::Failed(format!(
            "the PostgreSQL schema '{schema}' has an invalid schema version {version}"
        )));
    }
    for (index, script) in MIGRATIONS.iter().enumerate() {
        let number = i32::try_from(index).unwrap_or(i32::MAX).saturating_add(1);
        if i64::from(number) <= version {
            continue;
        }
        transaction
            .batch_execute(script)
            .await
            .map_err(|error| sql(&format!("{doing}: applying migration {number}"), &error))?;
        transaction
            .execute("INSERT INTO tenx_schema_migrations (version) VALUES ($1)", &[&number])
            .await
            .map_err(|error| sql(&format!("{doing}: recording migration {number}"), &error))?;
    }
    transaction
        .commit()
        .await
        .map_err(|error| sql(&format!("{doing}: committing"), &error))?;
    Ok(Migrated {
        from: version,
        to: known,
    })
}
