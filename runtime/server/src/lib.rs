//! The standard API (the 10xGraph HTTP API, reference-api.md §3) over a tenx [`Engine`]: the
//! envelopes, request ids and security headers, JWT auth and scopes, ownership (D7), invoke and
//! streams, introspection, stop, and the thread routes. The engine enforces the run-time
//! guarantees (one run per thread, interrupts bound to their id, answers checked, refusals that
//! record nothing); this crate maps HTTP onto it and answers exactly as the contract says.
//!
//! Layout: [`config`] (settings the binary resolved), [`envelope`] (bodies and errors),
//! [`middleware`] (request id, headers, body limit), [`rate_limit`], [`auth`] (tokens → identity), [`input`]
//! (GraphInput), [`state`] (the state and thread shapes), [`chunks`] (events → stream chunks),
//! [`routes`] (the handlers and the route table), [`runs`] (runs in progress: the per-user cap,
//! the run timeout, shutdown), [`metrics`] (`/metrics`), [`observe`] (the request span and HTTP
//! metrics), [`openapi`] (`/openapi.json`). The `tenx` binary (`runtime/cli`) wires it to a
//! socket.

pub mod auth;
pub mod chunks;
pub mod config;
pub mod envelope;
pub mod input;
pub mod jwt_keys;
pub mod metrics;
pub mod middleware;
pub mod observe;
pub mod openapi;
pub mod rate_limit;
pub mod routes;
pub mod runs;
pub mod sanitize;
pub mod state;

use std::sync::Arc;

use axum::Router;
use tenx_engine::Engine;

pub use config::{ApprovalBatch, JwtKey, JwtSettings, Mode, ServerSettings, SettingsError};

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Shared>,
}

struct Shared {
    /// The engine serving now; `tenxc dev` replaces it when the program changes.
    engine: std::sync::RwLock<Engine>,
    settings: ServerSettings,
    verifier: Option<auth::Verifier>,
    /// `None` with `metrics = false`.
    metrics: Option<Arc<metrics::Metrics>>,
    runs: Arc<runs::Runs>,
    /// `/openapi.json`, serialised once.
    openapi: openapi::Document,
}

/// Why a server could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerError {
    /// The settings refuse to serve (production without auth, a bad JWT setting).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The JWT verifier could not be built.
    #[error(transparent)]
    Verifier(#[from] auth::VerifierError),
}

impl AppState {
    /// The state of a server for `engine` with `settings` (checked here).
    pub fn new(engine: Engine, settings: ServerSettings) -> Result<Self, ServerError> {
        settings.validate()?;
        let verifier = settings.jwt.as_ref().map(auth::Verifier::new).transpose()?;
        let document = openapi::document(&routes::table::table(&settings));
        let openapi = openapi::Document(serde_json::to_string(&document).unwrap_or_default().into());
        Ok(Self {
            inner: Arc::new(Shared {
                engine: std::sync::RwLock::new(engine),
                metrics: settings.metrics.then(|| Arc::new(metrics::Metrics::new())),
                settings,
                verifier,
                runs: Arc::default(),
                openapi,
            }),
        })
    }

    /// The metrics, when they are on.
    pub fn metrics(&self) -> Option<&metrics::Metrics> {
        self.inner.metrics.as_deref()
    }

    /// The metrics, shared, when they are on.
    pub fn metrics_handle(&self) -> Option<Arc<metrics::Metrics>> {
        self.inner.metrics.clone()
    }

    /// The runs in progress.
    pub fn runs(&self) -> &Arc<runs::Runs> {
        &self.inner.runs
    }

    /// `/openapi.json`, serialised.
    pub fn openapi(&self) -> &openapi::Document {
        &self.inner.openapi
    }

    /// Shutdown begins: no new run starts, and every run in progress stops after its step
    /// (checkpointed). Then [`AppState::wait_for_runs`].
    pub fn begin_shutdown(&self) {
        self.inner.runs.close();
    }

    /// Waits for the runs in progress to end, for at most `grace`; how many were left.
    pub async fn wait_for_runs(&self, grace: std::time::Duration) -> usize {
        self.inner.runs.wait_idle(grace).await
    }

    /// The engine serving now (a request takes it once and keeps it to the end).
    pub fn engine(&self) -> Engine {
        self.inner
            .engine
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Serves `engine` from now on (`tenxc dev`, after the program changed): requests already
    /// running finish on the engine they started with. Both must share one store.
    pub fn replace_engine(&self, engine: Engine) {
        *self
            .inner
            .engine
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = engine;
    }

    /// The settings.
    pub fn settings(&self) -> &ServerSettings {
        &self.inner.settings
    }

    /// The verifier, when auth is on.
    pub fn verifier(&self) -> Option<&auth::Verifier> {
        self.inner.verifier.as_ref()
    }

    /// Whether callers are authenticated.
    pub fn auth_on(&self) -> bool {
        self.inner.verifier.is_some()
    }
}

/// The router of the standard API, with its middleware.
pub fn router(state: AppState) -> Router {
    let settings = state.settings().clone();
    let metrics = state.metrics_handle();
    middleware::wrap(routes::routes(&settings).with_state(state), &settings, metrics)
}
