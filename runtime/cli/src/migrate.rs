//! `tenx migrate`: applies the PostgreSQL store's embedded migrations to a database and exits,
//! for operators who migrate before rolling out replicas (every `tenx serve` on PostgreSQL also
//! applies them at start, under the same advisory lock, so this step is optional). Prints the
//! URL without its password.

use clap::Args;
use miette::{Result, miette};
use tenx_store_postgres::{PostgresOptions, redact_url};

use crate::settings::is_postgres_url;

/// `tenx migrate` flags.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The database, `postgres://user:password@host:port/database` (optionally `?schema=NAME`,
    /// default schema `tenx`); `DATABASE_URL` when not given.
    #[arg(long, visible_alias = "store")]
    pub database_url: Option<String>,
}

/// Migrates the database the flag (or `DATABASE_URL`) names.
pub async fn run(args: MigrateArgs) -> Result<()> {
    crate::serve::init_logging();
    let url = args
        .database_url
        .or_else(|| std::env::var("DATABASE_URL").ok().filter(|url| !url.trim().is_empty()))
        .ok_or_else(|| {
            miette!(
                help = "e.g. tenx migrate --database-url postgres://tenx@db:5432/tenx",
                "no database: pass --database-url or set DATABASE_URL"
            )
        })?;
    let url = url.trim();
    if !is_postgres_url(url) {
        return Err(miette!(
            "`{}` is not a `postgres://` URL: only the PostgreSQL store has migrations to apply separately (SQLite migrates at open)",
            redact_url(url)
        ));
    }
    let shown = redact_url(url);
    let migrated = tenx_store_postgres::migrate(url, &PostgresOptions::default())
        .await
        .map_err(|error| miette!("cannot migrate `{shown}`: {error}"))?;
    if migrated.from == migrated.to {
        eprintln!("tenx migrate: {shown} is at schema version {} already", migrated.to);
    } else {
        eprintln!(
            "tenx migrate: {shown} migrated from schema version {} to {}",
            migrated.from, migrated.to
        );
    }
    Ok(())
}
