//! The engine's ports: the only ways it reaches the world. Adapters implement them (model
//! providers, tool executors, stores); the host wires them into [`Ports`]. Every port is a
//! trait object, so a host (or a test) can substitute any part.

mod clock;
mod events;
mod ids;
mod model;
mod stops;
mod store;
mod tool;

use std::sync::Arc;

pub use clock::{Clock, Timestamp};
pub use events::{Event, EventSink, NullEvents};
pub use ids::Ids;
pub use model::{
    DeltaSink, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, ModelToolCall, ToolSpec,
};
pub use stops::{StopHandler, StopKind, StopNotice};
pub use store::{
    Commit, NumberedRecord, OpenQuestion, Receipt, ReceiptState, Record, Store, StoreError, ThreadLease, ThreadSummary,
};
pub use tool::{ToolError, ToolErrorKind, ToolInvocation, ToolRunner};

/// Everything the engine needs from its host.
#[derive(Clone)]
pub struct Ports {
    /// Threads, checkpoints, receipts, records and locks.
    pub store: Arc<dyn Store>,
    /// The model client for each model of the artifact, by model name (a key of
    /// `Artifact::models`). A host may substitute a scripted model for a declared provider;
    /// the engine records the substitution on each thread it serves.
    pub models: std::collections::BTreeMap<String, Arc<dyn ModelClient>>,
    /// Runs `http`, `builtin`, `native` and `mcp` tools (`remote` tools are the client's).
    pub tools: Arc<dyn ToolRunner>,
    /// The time.
    pub clock: Arc<dyn Clock>,
    /// Ids (interrupt ids from a CSPRNG).
    pub ids: Arc<dyn Ids>,
}
