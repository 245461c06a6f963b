//! The PostgreSQL store of the tenx runtime: [`PostgresStore`] implements
//! [`tenx_engine::ports::Store`] over one PostgreSQL database, so several `tenx serve` replicas
//! can share their threads.
//!
//! - **A pool** of connections (deadpool-postgres over tokio-postgres), every table in one
//!   schema of the operator's choice ([`PostgresOptions::schema`], or `?schema=` in the URL).
//! - **TLS** with libpq's `sslmode` (`disable` … `verify-full`) and `sslrootcert` (a PEM file
//!   or `system`), through rustls ([`ssl`] says what each mode checks); one connector per store,
//!   shared by the pool and the listening connection.
//! - **Migrations** are numbered SQL files embedded with `include_str!`, applied at open (or
//!   by [`migrate`], for an operator command) in one transaction under an advisory lock, so
//!   replicas starting at once apply them once; a newer schema is refused.
//! - **Every commit is one transaction** with the version check ([`queries`]).
//! - **Locks** hold across replicas through expiring, renewed lease rows timed by the
//!   database's clock ([`lease`]); a release wakes other replicas' waiters through
//!   `LISTEN`/`NOTIFY`.
//! - **Stops** reach the replica holding the thread's lease as a `NOTIFY` addressed to that
//!   lease ([`stops`]), heard on the same listening connection.
//!
//! The rules are documented for host authors in `docs/runtime.md`, "The PostgreSQL store".

mod chain_only;
mod connect;
mod conninfo;
mod error;
pub mod lease;
pub mod migrate;
mod options;
pub mod queries;
mod ssl;
pub mod stops;
mod store;
mod tls;
mod unchecked;
mod wake;

pub use connect::redact_url;
pub use migrate::{migrate, schema_version};
pub use options::PostgresOptions;
pub use store::PostgresStore;
