//! The tenx runtime engine: runs the graphs of a sealed artifact, step by step, with approvals,
//! durable checkpoints and exactly-once tool effects.
//!
//! The engine is pure: it reaches the world only through its [`ports`] (models, tools, the
//! store, the clock, ids), which adapters implement and the host wires. It loads nothing but a
//! verified [`tenx_artifact::LoadedArtifact`] and re-checks tool names, arguments, approvals and
//! routes at every step: defence in depth against a steered model, a forged client message and a
//! tampered store. `clippy.toml` bans filesystem, network, environment and wall-clock access here.
//!
//! Layout: [`wire`] (the standard API's message and thread shapes), [`thread`] (the checkpoint),
//! [`ports`] (the traits), [`error`] (stable error codes), [`scripted`] (the scripted model),
//! [`memory`] (the in-memory store), [`testing`] (deterministic ports for tests), [`schema`]
//! (JSON Schema checking and normal forms), [`approval`] (packages, fingerprints, answers,
//! approvers, expiry, records), [`validate`] (input validators and output guards).

pub mod approval;
mod engine;
pub mod error;
pub mod expr;
mod identity;
pub mod memory;
pub mod ports;
mod request;
mod run;
pub mod schema;
pub mod scripted;
pub mod testing;
pub mod thread;
pub mod validate;
pub mod wire;

pub use engine::{Engine, EngineError, EngineOptions};
pub use error::{ErrorCode, RunError};
pub use identity::Identity;
pub use memory::MemoryStore;
pub use request::{OnBusy, ResumeAnswer, RunOutput, RunRequest, StateWrite, WriteOptions};
pub use run::{
    MAX_NESTING, MAX_NOTE_CHARS, ReaskOutcome, ReaskReport, ReaskedThread, RecordPage, RecoveredThread,
    RecoveryOutcome, RecoveryReport, SkipReason, ThreadOwner,
};
pub use scripted::ScriptedModel;
