//! The tenx runtime. Today it holds one thing: the rule that a host runs only sealed artifacts,
//! verified before anything runs. [`load`] reads an artifact file and verifies its seal, format
//! version, (when the policy demands it) signature, structure and risk policy (a
//! [`PolicyViolation`] refuses it even when signed), through `tenx-artifact`; the runtime never
//! parses `.tenx`.
//!
//! The engine, model providers, tools, checkpointers and the HTTP server are not built yet.

pub mod environment;

pub use environment::{Environment, MissingVariables, resolve};
pub use tenx_artifact::{LoadError, LoadedArtifact, PolicyViolation, TrustPolicy};

/// Verifies and loads a sealed artifact from its bytes.
pub fn load(bytes: &[u8], policy: &TrustPolicy) -> Result<LoadedArtifact, LoadError> {
    tenx_artifact::load(bytes, policy)
}
