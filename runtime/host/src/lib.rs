//! The tenx runtime host: what a process that serves a sealed artifact needs around the pure
//! engine. [`load`] reads an artifact file and verifies its seal, format version, (when the
//! policy demands it) signature, structure and risk policy (a [`PolicyViolation`] refuses it
//! even when signed), through `tenx-artifact`; the runtime never parses `.tenx`.
//! [`environment`] resolves the variables it names, [`ports`] has the system clock and CSPRNG
//! ids, and [`HostBuilder`] wires the artifact, a store, the tool runner and the models into a
//! `tenx_engine::Engine`.
//!
//! The HTTP server is `tenx-server`, and the `tenx serve` binary wires the two (`runtime/cli`).

pub mod builder;
pub mod environment;
pub mod ports;

pub use builder::{HostBuilder, HostError};
pub use environment::{Environment, MissingVariables, resolve};
pub use tenx_artifact::{LoadError, LoadedArtifact, PolicyViolation, TrustPolicy};

/// Verifies and loads a sealed artifact from its bytes.
pub fn load(bytes: &[u8], policy: &TrustPolicy) -> Result<LoadedArtifact, LoadError> {
    tenx_artifact::load(bytes, policy)
}
