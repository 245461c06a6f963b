//! `tenx serve` and the standard API over real loopback HTTP: the router of `tenx-server` in
//! process (envelopes, validation, the seed-003 error table, streams, threads, auth, limits)
//! and the `tenx` binary's code in a child process (start-up, settings, refusals); the README's
//! main job (`refund-demo`) with its walk-through script, in a child process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod harness;
mod steered;

mod approvals;
mod approvals_api;
mod auth;
mod basics;
mod binary;
mod conformance;
mod console;
mod contract;
mod event_source;
mod forks;
mod jwt_keys;
mod limits;
mod logs;
mod metrics;
mod openapi;
#[path = "../common/pg_schema.rs"]
mod pg_schema;
mod postgres;
mod replica_stops;
mod state_writes;
mod streams;
mod thread_authority;
mod thread_writes;
mod threads;
mod walkthrough;
mod websocket;
mod write_expiry;
