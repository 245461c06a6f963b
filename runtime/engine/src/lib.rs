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
//! [`ports`] (the traits), [`error`] (stable error codes).

pub mod error;
mod identity;
pub mod ports;
pub mod thread;
pub mod wire;

pub use error::{ErrorCode, RunError};
pub use identity::Identity;
