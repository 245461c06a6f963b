//! The SQLite store of the tenx runtime: [`SqliteStore`] implements
//! [`tenx_engine::ports::Store`] over one SQLite file, the embedded durable default.
//!
//! - **One file, WAL**, `synchronous = NORMAL` by default (a returned commit survives `kill -9`;
//!   a power loss may roll back the last commits, which [`Synchronous::Full`] prevents at the
//!   cost of an `fsync` per commit), `busy_timeout`, foreign keys on.
//! - **Migrations** are numbered SQL files embedded with `include_str!`, applied at open in one
//!   transaction, counted by `PRAGMA user_version`; a newer schema is refused ([`migrate`]).
//! - **Every commit is one transaction** with the version check ([`queries`]).
//! - **Never blocks the async runtime**: connections live on their own threads ([`worker`]).
//! - **Locks** hold across processes sharing the file, through expiring, renewed leases
//!   ([`lease`]); a stop reaches the process holding a thread's lease through the `stops`
//!   table ([`stops`]).
//!
//! The rules are documented for host authors in `docs/runtime.md`, "The SQLite store".

mod connection;
mod error;
pub mod lease;
pub mod migrate;
mod options;
pub mod queries;
mod questions;
mod recovery;
pub mod stops;
mod store;
pub mod worker;

pub use migrate::schema_version;
pub use options::{SqliteOptions, Synchronous};
pub use store::SqliteStore;
