//! The standard API (the 10xGraph HTTP API, reference-api.md §3) over a tenx [`Engine`]: the
//! envelopes, request ids and security headers, JWT auth and scopes, ownership (D7), invoke and
//! streams, introspection, stop, and the thread routes. The engine enforces the run-time
//! guarantees (one run per thread, interrupts bound to their id, answers checked, refusals that
//! record nothing); this crate maps HTTP onto it and answers exactly as the contract says.
//!
//! Layout: [`config`] (settings the binary resolved), [`envelope`] (bodies and errors),
//! [`middleware`] (request id, headers, body limit), [`rate_limit`], [`auth`] (tokens → identity), [`input`]
//! (GraphInput), [`state`] (the state and thread shapes), [`chunks`] (events → stream chunks),
//! [`routes`] (the handlers). The `tenx` binary (`runtime/cli`) wires it to a socket.

pub mod auth;
pub mod chunks;
pub mod config;
pub mod envelope;
pub mod input;
pub mod jwt_keys;
pub mod middleware;
pub mod rate_limit;
pub mod routes;
pub mod sanitize;
pub mod state;

use std::sync::Arc;

use axum::Router;
use tenx_engine::Engine;

pub use config::{JwtKey, JwtSettings, Mode, ServerSettings, SettingsError};

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
        Ok(Self {
            inner: Arc::new(Shared {
                engine: std::sync::RwLock::new(engine),
                settings,
                verifier,
            }),
        })
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
    middleware::wrap(routes::routes().with_state(state), &settings)
}
