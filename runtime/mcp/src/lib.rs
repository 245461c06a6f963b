//! The MCP client of the tenx runtime, on the official Rust SDK (`rmcp`, client side only):
//! a host configures MCP servers under the names its programs use ([`config`]: a command run
//! over stdio, or a streamable-HTTP endpoint, credentials from the environment), attaches them
//! when it loads an artifact ([`McpClient::attach`]: connect, `tools/list`, and check every
//! declared tool against the server with [`compat`], failing closed with every problem), and
//! hands the [`McpClient`] to `tenx_tools::ToolsBuilder::mcp`, which runs the calls.
//!
//! Layout: [`config`] (the host's configuration and its resolution), [`compat`] (whether an
//! `inputSchema` accepts what a declaration allows), [`client`] (attaching, and the
//! `tenx_tools::McpTools` port), `server` (one connection: reconnects with backoff,
//! `tools/list_changed` re-checks, calls), `listen` (the HTTP client, which keeps the standalone
//! `GET` stream a server announces changes on open), `result` (answers as tool results and errors).
//!
//! Security: only declared tools are ever run, and a server's later announcements never add
//! one; a stdio server receives only the environment variables its configuration names; no
//! identity, token or idempotency key of the caller is sent to a server.

pub mod client;
pub mod compat;
pub mod config;
mod listen;
mod result;
mod server;

pub use client::{AttachError, AttachProblem, McpClient, ServerStatus};
pub use config::{ConfigError, McpConfig, ResolvedConfig, ServerConfig};
