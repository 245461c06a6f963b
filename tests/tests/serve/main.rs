//! `tenx serve` and the standard API over real loopback HTTP: the router of `tenx-server` in
//! process (envelopes, validation, the seed-003 error table, streams, threads, auth, limits)
//! and the `tenx` binary's code in a child process (start-up, settings, refusals).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod harness;

mod approvals;
mod auth;
mod basics;
mod binary;
mod limits;
mod logs;
mod metrics;
mod openapi;
mod streams;
mod threads;
mod websocket;
