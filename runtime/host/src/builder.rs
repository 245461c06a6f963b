//! [`HostBuilder`]: one loaded artifact wired into a [`tenx_engine::Engine`] with what a real
//! host uses: a store (SQLite or in-memory), the tool runner for its `http`, `builtin` and
//! `native` tools with the environment resolved at load, the scripted model for every
//! `provider = scripted` model (and any client the host gives for the others), the system clock
//! and CSPRNG ids. `tenx serve` and the crash tests' child process build their engine here.

use std::collections::BTreeMap;
use std::sync::Arc;

use tenx_artifact::{LoadedArtifact, Provider};
use tenx_engine::ports::{Clock, Ids, ModelClient, Ports, Store, ToolRunner};
use tenx_engine::{Engine, EngineError, EngineOptions, MemoryStore, ScriptedModel};
use tenx_tools::{NativeHandlers, Tools};

use crate::environment::{Environment, MissingVariables};
use crate::ports::{OsIds, RandomSourceError, SystemClock};

/// Why a host could not be built. Every problem of one kind is reported at once.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The artifact names environment variables that are not set.
    #[error("{0}")]
    Environment(MissingVariables),
    /// The tool runner refuses the artifact (missing native handlers, a bad `http` template).
    #[error("{0}")]
    Tools(tenx_tools::LoadError),
    /// The engine refuses the artifact (no graph, models without a client).
    #[error("{0}")]
    Engine(EngineError),
    /// The CSPRNG could not be read.
    #[error("{0}")]
    Random(RandomSourceError),
}

type ToolsWrapper = Box<dyn FnOnce(Arc<dyn ToolRunner>) -> Arc<dyn ToolRunner> + Send>;

/// Builds an engine for one artifact.
pub struct HostBuilder {
    artifact: LoadedArtifact,
    store: Option<Arc<dyn Store>>,
    natives: NativeHandlers,
    models: BTreeMap<String, Arc<dyn ModelClient>>,
    options: EngineOptions,
    clock: Option<Arc<dyn Clock>>,
    ids: Option<Arc<dyn Ids>>,
    wrap_tools: Option<ToolsWrapper>,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("HostBuilder")
            .field("artifact", &self.artifact.id.to_string())
            .field("models", &self.models.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl HostBuilder {
    /// A builder for `artifact` (verified by [`crate::load`]) with the defaults: the in-memory
    /// store, no native handlers, the scripted model for scripted models, default options,
    /// [`SystemClock`] and [`OsIds`].
    pub fn new(artifact: LoadedArtifact) -> Self {
        Self {
            artifact,
            store: None,
            natives: NativeHandlers::new(),
            models: BTreeMap::new(),
            options: EngineOptions::default(),
            clock: None,
            ids: None,
            wrap_tools: None,
        }
    }

    /// The store (e.g. a `tenx_store_sqlite::SqliteStore`); the in-memory store by default.
    #[must_use]
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// The handlers of the artifact's `native` tools (every name it lists must be there).
    #[must_use]
    pub fn natives(mut self, natives: NativeHandlers) -> Self {
        self.natives = natives;
        self
    }

    /// The client of model `name` (a provider's client, or a scripted substitute, which the
    /// engine records on every thread when `EngineOptions::substitutions` names it).
    #[must_use]
    pub fn model(mut self, name: &str, client: Arc<dyn ModelClient>) -> Self {
        self.models.insert(name.to_owned(), client);
        self
    }

    /// The engine's options.
    #[must_use]
    pub fn options(mut self, options: EngineOptions) -> Self {
        self.options = options;
        self
    }

    /// Another clock (tests); the system clock by default.
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Other ids (tests); CSPRNG ids by default.
    #[must_use]
    pub fn ids(mut self, ids: Arc<dyn Ids>) -> Self {
        self.ids = Some(ids);
        self
    }

    /// Wraps the tool runner once it is built (to observe or delay calls in tests).
    #[must_use]
    pub fn wrap_tools(
        mut self,
        wrap: impl FnOnce(Arc<dyn ToolRunner>) -> Arc<dyn ToolRunner> + Send + 'static,
    ) -> Self {
        self.wrap_tools = Some(Box::new(wrap));
        self
    }

    /// Resolves the environment through `lookup` (every missing name at once), builds the tool
    /// runner and the engine.
    pub fn build(self, lookup: impl Fn(&str) -> Option<String>) -> Result<Engine, HostError> {
        let environment =
            crate::environment::resolve(&self.artifact.artifact, lookup).map_err(HostError::Environment)?;
        self.build_with(&environment)
    }

    /// As [`Self::build`], with the environment already resolved.
    pub fn build_with(self, environment: &Environment) -> Result<Engine, HostError> {
        let clock: Arc<dyn Clock> = match self.clock {
            Some(clock) => clock,
            None => Arc::new(SystemClock),
        };
        let ids: Arc<dyn Ids> = match self.ids {
            Some(ids) => ids,
            None => Arc::new(OsIds::new().map_err(HostError::Random)?),
        };
        let tools = Tools::builder(clock.clone())
            .natives(self.natives)
            .build(&self.artifact.artifact, environment)
            .map_err(HostError::Tools)?;
        let mut tools: Arc<dyn ToolRunner> = Arc::new(tools);
        if let Some(wrap) = self.wrap_tools {
            tools = wrap(tools);
        }
        let mut models = self.models;
        for (name, model) in &self.artifact.artifact.models {
            if model.provider == Provider::Scripted && !models.contains_key(name) {
                models.insert(name.clone(), Arc::new(ScriptedModel::new()));
            }
        }
        let store: Arc<dyn Store> = match self.store {
            Some(store) => store,
            None => Arc::new(MemoryStore::new()),
        };
        let ports = Ports {
            store,
            models,
            tools,
            clock,
            ids,
        };
        Engine::new(self.artifact, ports, self.options).map_err(HostError::Engine)
    }
}
