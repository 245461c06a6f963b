//! Tool executors for the tenx runtime: [`Tools`], the engine's
//! [`ToolRunner`](tenx_engine::ports::ToolRunner) for an artifact's `http`, `builtin`, `native`
//! and `mcp` tools (`remote` tools are the API client's; `mcp` tools run through the
//! [`McpTools`] the host attached, from `tenx-mcp`).
//!
//! Layout: [`runner`] (building and dispatch), [`http`] (the shared client, requests and
//! answers), [`builtin`] (`current_time`, `calculator`, `random_id`), [`native`] (the host's
//! handler registry), [`mcp`] (the port for attached MCP tools), [`env_template`] (`${NAME}` in URLs and headers, filled at load),
//! [`load_error`] (why an artifact is refused), and with the `test-support` feature
//! `test_support` (a local fake service that counts calls per idempotency key).
//!
//! This is an adapter crate: it does IO (HTTP) and reads the operating system's random source;
//! the engine stays pure.

pub mod builtin;
pub mod env_template;
pub mod http;
pub mod load_error;
pub mod mcp;
pub mod native;
pub mod runner;
#[cfg(feature = "test-support")]
pub mod test_support;

pub use env_template::{TemplateError, Variables};
pub use http::request::{ROLES_HEADER, SCOPES_HEADER, USER_ID_HEADER};
pub use load_error::{LoadError, LoadProblem};
pub use mcp::McpTools;
pub use native::{NativeCall, NativeHandler, NativeHandlers, RegisterError};
pub use runner::{Tools, ToolsBuilder};
