//! The runtime engine, end to end and in process: programs compiled by the real compiler,
//! sealed and loaded, then run by `tenx_engine::Engine` with scripted (or steered) models, the
//! in-memory store, a manual clock and fake tools that count every call per idempotency key.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod harness;

mod agent_tool_writes;
mod agent_tools;
mod answer_way_on;
mod approvals;
mod bypass;
mod concurrency;
mod counting;
mod flow;
mod fork_commits;
mod forks;
mod handoffs;
mod ids;
mod inputs;
mod join_message_ids;
mod nesting;
#[path = "../common/pg_schema.rs"]
mod pg_schema;
mod ports;
mod providers;
mod reask;
mod recovery;
mod retries;
mod runs;
mod semantics;
mod steering;
mod stopped_calls;
mod stopped_forks;
mod stops;
mod subgraphs;
mod tamper;
