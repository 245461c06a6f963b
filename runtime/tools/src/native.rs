//! Native tools (`run = native("NAME")`): Rust handlers the host registers by name before the
//! runner is built. Building the runner against an artifact whose `native_handlers` are not all
//! registered fails, naming every missing handler.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tenx_engine::Identity;
use tenx_engine::ports::ToolError;

/// One call of a native handler: what the engine validated, and who the run is for.
#[derive(Debug, Clone, Copy)]
pub struct NativeCall<'a> {
    /// The tool's declared name (a key of the artifact's `tools`); several tools may share one
    /// handler.
    pub tool_name: &'a str,
    /// The validated, normalised arguments (bound arguments filled in).
    pub arguments: &'a Value,
    /// The verified identity of the run's user, as claims (never a bearer token).
    pub identity: &'a Identity,
    /// The idempotency key the call runs under: a handler that deduplicates on it says so with
    /// [`NativeHandler::deduplicates`].
    pub idempotency_key: &'a str,
    /// The thread.
    pub thread_id: &'a str,
    /// The tool call id (or the tool node's step id).
    pub call_id: &'a str,
}

/// A host's handler for one native name.
#[async_trait]
pub trait NativeHandler: Send + Sync {
    /// Runs one call. The error's message is shown to the model: keep secrets out of it.
    async fn call(&self, call: NativeCall<'_>) -> Result<Value, ToolError>;

    /// Whether the handler performs its effect at most once per `idempotency_key`, so the engine
    /// may send a call again after a crash. `false` (the default): an interrupted call is marked
    /// `outcome_unknown` instead of being run again.
    fn deduplicates(&self) -> bool {
        false
    }
}

/// A synchronous closure as a handler (it does not deduplicate).
struct FnHandler<F>(F);

#[async_trait]
impl<F> NativeHandler for FnHandler<F>
where
    F: Fn(NativeCall<'_>) -> Result<Value, ToolError> + Send + Sync,
{
    async fn call(&self, call: NativeCall<'_>) -> Result<Value, ToolError> {
        (self.0)(call)
    }
}

/// Why a handler was not registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// The name is not a native handler name (`crm.lookup`: lowercase parts separated by dots).
    #[error(
        "`{0}` is not a native handler name: 1 to 128 characters, lowercase letters, digits and `_` in parts separated by `.`, each starting with a letter"
    )]
    InvalidName(String),
    /// A handler is registered under this name already.
    #[error("a native handler is registered under `{0}` already")]
    Duplicate(String),
}

/// The handlers a host registers, by name.
#[derive(Clone, Default)]
pub struct NativeHandlers {
    handlers: BTreeMap<String, Arc<dyn NativeHandler>>,
}

impl std::fmt::Debug for NativeHandlers {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("NativeHandlers")
            .field("names", &self.handlers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl NativeHandlers {
    /// No handlers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `handler` under `name`; refuses a name that no artifact can use and a name
    /// registered already.
    pub fn register(&mut self, name: &str, handler: Arc<dyn NativeHandler>) -> Result<&mut Self, RegisterError> {
        if !tenx_artifact::binding::is_native_name(name) {
            return Err(RegisterError::InvalidName(name.to_string()));
        }
        if self.handlers.contains_key(name) {
            return Err(RegisterError::Duplicate(name.to_string()));
        }
        self.handlers.insert(name.to_string(), handler);
        Ok(self)
    }

    /// Registers a synchronous closure under `name` (a handler that does not deduplicate).
    pub fn register_fn(
        &mut self,
        name: &str,
        handler: impl Fn(NativeCall<'_>) -> Result<Value, ToolError> + Send + Sync + 'static,
    ) -> Result<&mut Self, RegisterError> {
        self.register(name, Arc::new(FnHandler(handler)))
    }

    /// The handler registered under `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn NativeHandler>> {
        self.handlers.get(name)
    }

    /// Every registered name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.handlers.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_are_checked_and_registered_once() {
        let mut handlers = NativeHandlers::new();
        handlers
            .register_fn("crm.lookup", |_| Ok(json!(1)))
            .unwrap()
            .register_fn("audit", |_| Ok(json!(2)))
            .unwrap();
        assert_eq!(handlers.names().collect::<Vec<_>>(), vec!["audit", "crm.lookup"]);
        assert_eq!(
            handlers.register_fn("crm.lookup", |_| Ok(json!(3))).err(),
            Some(RegisterError::Duplicate("crm.lookup".into()))
        );
        for bad in ["", "CRM", "crm.", "crm-lookup", "1crm"] {
            assert_eq!(
                handlers.register_fn(bad, |_| Ok(json!(0))).err(),
                Some(RegisterError::InvalidName(bad.into())),
                "{bad}"
            );
        }
        assert!(handlers.get("nope").is_none());
        assert!(!handlers.get("audit").unwrap().deduplicates());
        assert_eq!(
            format!("{handlers:?}"),
            r#"NativeHandlers { names: ["audit", "crm.lookup"] }"#
        );
    }
}
