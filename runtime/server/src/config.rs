//! What the server is told at start: the mode, auth, allowed origins and limits. Reading them
//! from `tenx.toml`, flags and the environment is the `tenx` binary's job; this is the result.

use std::path::PathBuf;
use std::time::Duration;

/// `MODE`: development (no auth allowed, details shown) or production (auth and `ORIGINS`
/// required, internal details hidden).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Development: auth may be off (anyone may approve, and the log says so).
    #[default]
    Development,
    /// Production.
    Production,
}

impl Mode {
    /// `development` or `production`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Development => "development",
            Self::Production => "production",
        }
    }
}

/// JWT verification settings (`JWT_SECRET_KEY` or `JWT_PUBLIC_KEY_FILE` or `JWT_JWKS_FILE`,
/// `JWT_ALGORITHM`, `JWT_ISSUER`, `JWT_AUDIENCE`).
#[derive(Clone, PartialEq, Eq)]
pub struct JwtSettings {
    /// What tokens are verified with: a shared secret or a public key.
    pub key: JwtKey,
    /// The algorithm's name, pinned: a token naming another is refused.
    pub algorithm: String,
    /// The issuer a token must name, if set.
    pub issuer: Option<String>,
    /// The audience a token must name, if set.
    pub audience: Option<String>,
}

impl std::fmt::Debug for JwtSettings {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("JwtSettings")
            .field("key", &self.key)
            .field("algorithm", &self.algorithm)
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish()
    }
}

/// What verifies a token's signature.
#[derive(Clone, PartialEq, Eq)]
pub enum JwtKey {
    /// A shared secret (HS256, HS384, HS512), from `JWT_SECRET_KEY`.
    Secret(Vec<u8>),
    /// A PEM public key file (RS256, ES256, EdDSA): SPKI `PUBLIC KEY`, or `RSA PUBLIC KEY`.
    PublicKeyFile(PathBuf),
    /// A JWKS file (`{"keys": [...]}`): the token's `kid` picks the key.
    JwksFile(PathBuf),
}

impl JwtKey {
    /// What the key is, without the secret: printed at start.
    pub fn describe(&self) -> String {
        match self {
            Self::Secret(_) => "secret from JWT_SECRET_KEY".to_owned(),
            Self::PublicKeyFile(path) => format!("public key {}", path.display()),
            Self::JwksFile(path) => format!("JWKS {}", path.display()),
        }
    }
}

impl std::fmt::Debug for JwtKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Secret(_) => formatter.write_str("Secret(<set>)"),
            Self::PublicKeyFile(path) => formatter.debug_tuple("PublicKeyFile").field(path).finish(),
            Self::JwksFile(path) => formatter.debug_tuple("JwksFile").field(path).finish(),
        }
    }
}

/// The server's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSettings {
    /// The mode.
    pub mode: Mode,
    /// JWT auth; `None` is no auth (development only).
    pub jwt: Option<JwtSettings>,
    /// Allowed CORS origins (`*` alone allows any, without credentials).
    pub origins: Vec<String>,
    /// The largest request body, in bytes (`MAX_REQUEST_SIZE`, 10 MiB by default).
    pub max_request_size: usize,
    /// How long a run may take (`None`: no limit). Past it the request is answered 504 and the
    /// run stops after the step in flight, checkpointed (`[serve] run_timeout_seconds`).
    pub run_timeout: Option<Duration>,
    /// The rate limit, if any.
    pub rate_limit: Option<crate::rate_limit::RateLimitSettings>,
    /// Where the rate limit's allowances are kept: this process (the default) or Redis, shared
    /// by every replica (`[serve] rate_limit_backend`).
    pub rate_limit_backend: crate::rate_limit::RateLimitBackend,
    /// The most runs one user may have in progress at once (`None`: no cap). Applies with auth
    /// on; anonymous callers are not capped, as in the reference.
    pub max_concurrent_runs_per_user: Option<usize>,
    /// Whether `/metrics` is served and numbers are counted.
    pub metrics: bool,
    /// The caps of batch approval (`POST /v1/approvals/batch`).
    pub approval_batch: ApprovalBatch,
}

/// The caps of batch approval: only `low` and `medium` risk requests, at most `max_count` at
/// once, their amounts (`amount`, `amount_*`, `*_amount` arguments) adding up to at most
/// `max_total` (`[serve] approval_batch_max_count`, `approval_batch_max_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalBatch {
    /// The most requests one batch approves (10 by default).
    pub max_count: usize,
    /// The most their amounts add up to (100000 by default, in the tools' own units).
    pub max_total: u64,
}

impl Default for ApprovalBatch {
    fn default() -> Self {
        Self {
            max_count: 10,
            max_total: 100_000,
        }
    }
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            mode: Mode::Development,
            jwt: None,
            origins: vec!["*".to_owned()],
            max_request_size: 10 * 1024 * 1024,
            run_timeout: None,
            rate_limit: None,
            rate_limit_backend: crate::rate_limit::RateLimitBackend::Memory,
            max_concurrent_runs_per_user: Some(DEFAULT_MAX_CONCURRENT_RUNS_PER_USER),
            metrics: true,
            approval_batch: ApprovalBatch::default(),
        }
    }
}

/// The default of [`ServerSettings::max_concurrent_runs_per_user`].
pub const DEFAULT_MAX_CONCURRENT_RUNS_PER_USER: usize = 8;

/// Why the settings cannot serve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// Production without auth.
    #[error("production mode needs auth: set JWT_SECRET_KEY, JWT_PUBLIC_KEY_FILE or JWT_JWKS_FILE")]
    ProductionWithoutAuth,
    /// Production without an explicit origin list.
    #[error("production mode needs ORIGINS: the origins browsers may call from (not `*`)")]
    ProductionWithoutOrigins,
    /// A JWT algorithm this server does not verify.
    #[error(
        "JWT_ALGORITHM `{0}` is not supported: use HS256, HS384 or HS512 with JWT_SECRET_KEY, or RS256, ES256 or EdDSA with JWT_PUBLIC_KEY_FILE or JWT_JWKS_FILE"
    )]
    UnsupportedAlgorithm(String),
    /// The key cannot verify the configured algorithm, or cannot be read or used.
    #[error("{0}")]
    Key(String),
    /// A secret too short to be safe in production.
    #[error("JWT_SECRET_KEY is shorter than 32 bytes, which production mode refuses")]
    ShortSecret,
    /// An empty secret.
    #[error("JWT_SECRET_KEY is empty")]
    EmptySecret,
}

impl ServerSettings {
    /// Checks the settings before anything is served; production refuses to start without auth
    /// and without `ORIGINS`.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if let Some(jwt) = &self.jwt {
            if let JwtKey::Secret(secret) = &jwt.key {
                if secret.is_empty() {
                    return Err(SettingsError::EmptySecret);
                }
                if self.mode == Mode::Production && secret.len() < 32 {
                    return Err(SettingsError::ShortSecret);
                }
            }
            crate::auth::Verifier::new(jwt)?;
        }
        if self.mode == Mode::Production {
            if self.jwt.is_none() {
                return Err(SettingsError::ProductionWithoutAuth);
            }
            if self.origins.is_empty() || self.origins.iter().any(|origin| origin == "*") {
                return Err(SettingsError::ProductionWithoutOrigins);
            }
        }
        Ok(())
    }
}
