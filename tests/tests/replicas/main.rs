//! Several `tenx serve` replicas on one shared store (issue 15, items 5 and 6): real processes
//! (this test binary re-run as [`replica::serve_child`]) on their own loopback ports, the refund
//! example sealed, and a local payments stand-in that counts requests per `Idempotency-Key` and
//! refunds per order. Every scenario takes the store as a parameter ([`cluster::Backend`]): it
//! runs on SQLite (one file, its cross-process leases) and on PostgreSQL (a schema of its own
//! per test, dropped at the end; skipped without `TENX_TEST_DATABASE_URL`, see
//! [`cluster::postgres`]).
//!
//! - A pause made on A is answered on B (bound to its `interrupt_id`) and completes; the refund
//!   happened once; a second answer is 409 `INTERRUPT_003` on either replica.
//! - Concurrent answers to one question through A and B: exactly one 200, the other 409
//!   `INTERRUPT_003`, twenty times, half of them with the refund held so the loser provably
//!   waits behind the winner's lease; the refund ran once each time.
//! - `kill -9` of A while its refund call is held mid-flight: B's recovery sweep takes the
//!   thread over once A's lease expired, sends the same key again, and the order is refunded
//!   once; A never starts again.
//! - Crash injection ([`chaos`]): 200 approval flows with `kill -9` at random points.
//!
//! `cargo test -p tenx-tests --test replicas` (add `-- --nocapture` for the counts).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod api;
mod chaos;
mod cluster;
mod payments;
#[path = "../common/pg_schema.rs"]
mod pg_schema;
mod replica;
mod scenarios;

use cluster::Backend;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_pause_made_on_one_replica_is_answered_on_the_other_and_refunds_once() {
    scenarios::pause_on_a_answer_on_b(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_pause_made_on_one_replica_is_answered_on_the_other_and_refunds_once() {
    if let Some(backend) = cluster::postgres("pause") {
        scenarios::pause_on_a_answer_on_b(backend).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_concurrent_answers_through_two_replicas_one_wins_the_other_gets_409() {
    scenarios::concurrent_answers(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_concurrent_answers_through_two_replicas_one_wins_the_other_gets_409() {
    if let Some(backend) = cluster::postgres("race") {
        scenarios::concurrent_answers(backend).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_kill_9_mid_call_the_other_replica_takes_over_and_refunds_once() {
    scenarios::killed_mid_call(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_kill_9_mid_call_the_other_replica_takes_over_and_refunds_once() {
    if let Some(backend) = cluster::postgres("kill") {
        scenarios::killed_mid_call(backend).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_crash_injection_loses_no_pause_and_refunds_no_order_twice() {
    chaos::crash_injection(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_crash_injection_loses_no_pause_and_refunds_no_order_twice() {
    if let Some(backend) = cluster::postgres("chaos") {
        chaos::crash_injection(backend).await;
    }
}
