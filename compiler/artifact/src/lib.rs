//! The sealed tenx graph artifact: the only thing the compiler and the runtime share.
//!
//! The compiler builds an [`Artifact`] and [`seal`]s it (or [`sign`]s it): the body is
//! normalised, self-checked and written as canonical JSON, and its SHA-256 becomes the
//! [`ArtifactId`]. [`SealedArtifact::to_bytes`] gives the `.tenxg` file: a small JSON envelope
//! with the format, the id, the body and an optional Ed25519 signature of the id.
//!
//! The runtime calls [`load`] with a [`TrustPolicy`]; it refuses anything altered, unsigned
//! when a signature is required, signed by an untrusted key, of an unknown format, malformed,
//! inconsistent, or breaking the risk policy the compiler proves (a tool that can run around its
//! approval, a prohibited tool offered or run: a [`PolicyViolation`], refused even when signed),
//! each with its own [`LoadError`]. The format is documented in `docs/artifact.md`
//! and described by the JSON Schema in [`JSON_SCHEMA`].
//!
//! ```
//! use tenx_artifact::{Artifact, TrustPolicy, load, seal};
//!
//! let sealed = seal(Artifact::new("tenxc 0.1.0"))?;
//! let bytes = sealed.to_bytes();
//! let loaded = load(&bytes, &TrustPolicy::signature_optional())?;
//! assert_eq!(&loaded.id, sealed.id());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod answer_ways;
mod canonical;
mod check;
mod decision_check;
mod envelope;
mod id;
mod load;
mod model;
mod policy;
pub mod script;
mod seal;
mod sign;
mod strict_json;

pub use canonical::canonical_json;
pub use check::approvals::{is_role, is_scope};
pub use id::{ArtifactId, ParseIdError};
pub use load::{LoadError, LoadedArtifact, TrustPolicy, load};
pub use model::binding;
pub use model::bound;
pub use model::{
    Agent, AgentTool, Approval, Approvers, Arm, Artifact, BUILTIN_TOOLS, BUILTIN_VALIDATORS, BoundSource,
    CallerAttribute, CompareOp, Condition, DEFAULT_ON_REJECT, DEFAULT_RETRIES, Decision, EMPTY_PAYLOAD, END, Edge,
    EdgeKind, ErrorExit, Evidence, FORMAT, Fork, ForkKind, Graph, Handoff, HttpMethod, Interrupt, MAX_RETRIES,
    MAX_VISITS, MAX_WIDTH, Model, Node, NodeKind, OUTPUT_GUARD_BUILTINS, Provider, Reduce, Reducer, Resume, Risk,
    RiskRule, RiskRules, Route, Rule, Run, Schema, Script, SourceLocation, SubgraphCall, TOOL_RESULT_PROPERTY, Tool,
    Turn, Validator, ValidatorUse, VisitLimit, Write, WriteSource, rejection_text,
};
pub use model::{AgentInput, MAX_INPUT_LAST};
pub use model::{
    DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS, DEFAULT_MAX_BACKOFF_MS, MAX_ATTEMPTS, MIN_ATTEMPTS, NodeRetry, RetryOn,
    RetryPolicy, retry_refusal,
};
pub use policy::PolicyViolation;
pub use seal::{SealError, SealedArtifact, seal};
pub use sign::{KeyError, PublicKey, SecretKey, Signature, generate_keypair, sign, signed_message};

/// The JSON Schema (draft 2020-12) of a sealed `tenx-graph/3` file (the envelope and its body).
pub const JSON_SCHEMA: &str = include_str!("../schema/tenx-graph-3.schema.json");
