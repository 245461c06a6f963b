//! The [`Engine`]: one loaded artifact and the ports that serve it. Hosts build one at start
//! and share it; every request goes through [`Engine::run`] (see `run/`).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tenx_artifact::{Graph, LoadedArtifact, NodeKind};

use crate::ports::Ports;

/// How the engine behaves where the artifact leaves it to the host.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    /// How long a request waits for a thread another run holds before `THREAD_BUSY` (D6).
    pub busy_wait: Duration,
    /// The most steps a run may take when its graph does not lower it (a request may lower
    /// it further, never raise it).
    pub max_recursion_limit: u64,
    /// Whether callers are authenticated. Without auth (development mode) anyone may answer
    /// any question, and threads have no owner.
    pub auth: bool,
    /// Models the host replaced (e.g. a scripted model for a declared provider in a test), by
    /// model name, with a description of the replacement. Recorded on every thread it serves.
    pub substitutions: std::collections::BTreeMap<String, String>,
    /// Whether a question another artifact asked is asked again under this one
    /// ([`Engine::reask_after_reload`], and first thing on every request to such a thread)
    /// instead of refusing its answer with `GRAPH_VERSION_MISMATCH`. Only a development host
    /// (`tenxc dev`, which reloads the program it serves) turns it on.
    pub reask_after_reload: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            busy_wait: Duration::from_secs(30),
            max_recursion_limit: 100,
            auth: false,
            substitutions: std::collections::BTreeMap::new(),
            reask_after_reload: false,
        }
    }
}

/// Why an engine cannot be built for an artifact.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The artifact has no graph.
    #[error("the artifact has no graph to serve")]
    NoGraph,
    /// Agents of the served graphs call models the host gave no client for.
    #[error("no model client for {}", .0.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", "))]
    MissingModels(Vec<String>),
}

/// A loaded artifact, ready to run.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) artifact: LoadedArtifact,
    pub(crate) artifact_id: String,
    pub(crate) ports: Ports,
    pub(crate) options: EngineOptions,
    pub(crate) running: crate::run::Running,
    /// What each agent's model is shown, built on first use.
    pub(crate) tool_specs: crate::run::ToolSpecCache,
}

impl Engine {
    /// Builds an engine. Refuses an artifact whose agents call a model without a client (every
    /// missing name at once); the host checks tools (native handlers, environment) when it
    /// builds its tool runner.
    /// A client that says it stands in for its model (`ModelClient::substitution`) is added to
    /// `options.substitutions` (an entry the host wrote itself wins).
    pub fn new(artifact: LoadedArtifact, ports: Ports, mut options: EngineOptions) -> Result<Self, EngineError> {
        if artifact.artifact.graphs.is_empty() {
            return Err(EngineError::NoGraph);
        }
        let missing: BTreeSet<String> = artifact
            .artifact
            .graphs
            .values()
            .flat_map(|graph| graph.nodes.values())
            .filter(|node| node.kind == NodeKind::Agent)
            .filter_map(|node| artifact.artifact.agents.get(&node.reference))
            .map(|agent| agent.model.clone())
            .filter(|model| !ports.models.contains_key(model))
            .collect();
        if !missing.is_empty() {
            return Err(EngineError::MissingModels(missing.into_iter().collect()));
        }
        for (name, client) in &ports.models {
            if artifact.artifact.models.contains_key(name)
                && let Some(substitute) = client.substitution()
            {
                options.substitutions.entry(name.clone()).or_insert(substitute);
            }
        }
        let artifact_id = artifact.id.to_string();
        let inner = Arc::new(Inner {
            artifact,
            artifact_id,
            ports,
            options,
            running: crate::run::Running::default(),
            tool_specs: crate::run::ToolSpecCache::default(),
        });
        // Stops sent by other processes sharing the store reach this engine's runs.
        let weak: std::sync::Weak<Inner> = Arc::downgrade(&inner);
        let handler: std::sync::Weak<dyn crate::ports::StopHandler> = weak;
        inner.ports.store.subscribe_stops(handler);
        Ok(Self { inner })
    }

    /// The id of the artifact this engine runs (`sha256:…`).
    pub fn artifact_id(&self) -> &str {
        &self.inner.artifact_id
    }

    /// The loaded artifact.
    pub fn artifact(&self) -> &LoadedArtifact {
        &self.inner.artifact
    }

    /// The graph of that name.
    pub fn graph(&self, name: &str) -> Option<&Graph> {
        self.inner.artifact.artifact.graphs.get(name)
    }
}
