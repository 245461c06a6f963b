//! Why the tool runner refuses an artifact when it is built (at load, before anything runs).
//! Every problem is reported together; no message holds a variable's value or a filled URL.

use crate::env_template::TemplateError;

/// One reason the runner cannot run an artifact's tools.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadProblem {
    /// Native handlers the artifact needs and the host did not register (sorted).
    #[error("native handlers not registered: {}", .0.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", "))]
    MissingNativeHandlers(Vec<String>),
    /// An `mcp` tool whose server the host did not attach (not configured, or no MCP tools
    /// were handed to the builder).
    #[error("tool `{tool}` runs on MCP server `{server}`, which the host does not configure")]
    McpServerNotAttached {
        /// The tool's declared name.
        tool: String,
        /// The server it names.
        server: String,
    },
    /// A `builtin` tool whose name the runtime does not have.
    #[error("tool `{tool}` runs the builtin `{name}`, which this runtime does not have")]
    UnknownBuiltin {
        /// The tool's declared name.
        tool: String,
        /// The builtin's name.
        name: String,
    },
    /// A URL or header template that cannot be filled (a missing variable, a malformed `${`).
    #[error("tool `{tool}`, {part}: {error}")]
    Template {
        /// The tool's declared name.
        tool: String,
        /// `its URL` or ``header `NAME` ``.
        part: String,
        /// What went wrong.
        error: TemplateError,
    },
    /// A URL that, filled in, is not an absolute `http` or `https` URL with a host.
    #[error("tool `{tool}`: its URL, once filled in, is not an absolute http or https URL")]
    InvalidUrl {
        /// The tool's declared name.
        tool: String,
    },
    /// A declared header the runner cannot send.
    #[error("tool `{tool}`: header `{name}`: {reason}")]
    InvalidHeader {
        /// The tool's declared name.
        tool: String,
        /// The header's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The HTTP client could not be built (no TLS provider or no root certificates).
    #[error("the HTTP client for http tools could not be built")]
    HttpClient,
}

/// The runner refuses the artifact: every problem found, in tool order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the artifact's tools cannot run: {}", .problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct LoadError {
    /// What is wrong, at least one.
    pub problems: Vec<LoadProblem>,
}
