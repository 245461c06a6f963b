//! `tenx serve`'s settings, from three places: the `[serve]` section of `tenx.toml`, then the
//! environment (`MODE`, `ORIGINS`, `MAX_REQUEST_SIZE`, `JWT_SECRET_KEY`, `JWT_PUBLIC_KEY_FILE`,
//! `JWT_JWKS_FILE`, `JWT_ALGORITHM`, `JWT_ISSUER`, `JWT_AUDIENCE`, `RUN_TIMEOUT_SECONDS`,
//! `MAX_CONCURRENT_RUNS_PER_USER`, `METRICS`, `DATABASE_URL`), then flags: a later source overrides an earlier
//! one. The secret is read from the environment only (a file in a repository is no place for
//! it), and [`Resolved::describe`] prints everything but it (and a database URL without its
//! password). Exactly one verification key may be
//! set; a public key needs its algorithm named.
//! `REDIS_URL` overrides `rate_limit_redis_url` (the shared rate limiter's Redis, used with
//! `rate_limit_backend = "redis"`; printed without its password).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use tenx_server::rate_limit::{LimitBy, RateLimitSettings, RedisUrl};
use tenx_server::{JwtKey, JwtSettings, Mode, ServerSettings};

/// The `[serve]` section of `tenx.toml` (every key optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    /// The address to listen on.
    pub host: Option<IpAddr>,
    /// The port.
    pub port: Option<u16>,
    /// `development` or `production`.
    pub mode: Option<String>,
    /// Allowed browser origins.
    pub origins: Option<Vec<String>>,
    /// The largest request body, in bytes.
    pub max_request_size: Option<usize>,
    /// Where the SQLite store lives.
    pub data_dir: Option<PathBuf>,
    /// `sqlite` (the default), `memory` (nothing survives a restart), or a PostgreSQL URL
    /// (`postgres://…`, several replicas on one database).
    pub store: Option<String>,
    /// The JWT algorithm (`HS256` by default with a secret; required with a public key).
    pub jwt_algorithm: Option<String>,
    /// A PEM public key file tokens are verified with (RS256, ES256, EdDSA).
    pub jwt_public_key_file: Option<PathBuf>,
    /// A JWKS file whose keys tokens are verified with, picked by `kid`.
    pub jwt_jwks_file: Option<PathBuf>,
    /// The issuer tokens must name.
    pub jwt_issuer: Option<String>,
    /// The audience tokens must name.
    pub jwt_audience: Option<String>,
    /// How long a request waits for a busy thread, in seconds (30 by default).
    pub busy_wait_seconds: Option<u64>,
    /// Requests each client may make per window (no limit when unset).
    pub rate_limit_requests: Option<u32>,
    /// The rate limit's window, in seconds (60 by default).
    pub rate_limit_window_seconds: Option<u64>,
    /// Whose requests share an allowance: `ip` (default), `user` or `global`.
    pub rate_limit_by: Option<String>,
    /// Where allowances are kept: `memory` (default: each replica alone) or `redis` (shared).
    pub rate_limit_backend: Option<String>,
    /// The Redis of `rate_limit_backend = "redis"` (`REDIS_URL` overrides it).
    pub rate_limit_redis_url: Option<String>,
    /// The prefix of the limiter's keys in Redis (`tenx:ratelimit` by default).
    pub rate_limit_redis_prefix: Option<String>,
    /// How long a run may take, in seconds (no limit by default; 0 is no limit).
    pub run_timeout_seconds: Option<u64>,
    /// The most runs one user may have in progress (8 by default; 0 is no cap).
    pub max_concurrent_runs_per_user: Option<usize>,
    /// Whether `/metrics` is served (`true` by default).
    pub metrics: Option<bool>,
    /// The most requests one batch approval answers (10 by default; at least 1).
    pub approval_batch_max_count: Option<usize>,
    /// The most a batch approval's amounts may add up to (100000 by default).
    pub approval_batch_max_total: Option<u64>,
    /// How long a shutdown waits for runs to stop after their step, in seconds (30 by default).
    pub shutdown_grace_seconds: Option<u64>,
    /// How long a thread's lease in the store lasts without renewal, in seconds (15 by
    /// default): a crashed replica's threads are free again this long after its last renewal.
    pub lease_ttl_seconds: Option<u64>,
    /// How often a serving process looks for runs a dead replica left, in seconds (off by
    /// default; set it on every replica when several share one store).
    pub recovery_interval_seconds: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct ProjectFile {
    #[serde(default)]
    serve: Option<FileSettings>,
    #[serde(default)]
    mcp: Option<tenx_mcp::McpConfig>,
}

/// What `tenx.toml` says to a host: `[serve]`, and the MCP servers under `[mcp.servers.NAME]`.
#[derive(Debug, Clone, Default)]
pub struct ProjectSettings {
    /// `[serve]`.
    pub serve: FileSettings,
    /// `[mcp]`: the MCP servers the program's `mcp(server: …)` tools name.
    pub mcp: Option<tenx_mcp::McpConfig>,
}

/// What the command line said (each `None` leaves the setting to the file and environment).
#[derive(Debug, Clone, Default)]
pub struct FlagSettings {
    /// `--host`.
    pub host: Option<IpAddr>,
    /// `--port`.
    pub port: Option<u16>,
    /// `--mode`.
    pub mode: Option<String>,
    /// `--origins` (comma-separated).
    pub origins: Option<String>,
    /// `--max-request-size`.
    pub max_request_size: Option<usize>,
    /// `--data-dir`.
    pub data_dir: Option<PathBuf>,
    /// `--store`.
    pub store: Option<String>,
    /// `--run-timeout-seconds`.
    pub run_timeout_seconds: Option<u64>,
    /// `--max-concurrent-runs-per-user`.
    pub max_concurrent_runs_per_user: Option<usize>,
}

/// Where threads are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreChoice {
    /// One SQLite file (WAL) in the data directory.
    Sqlite(PathBuf),
    /// In memory: lost on restart.
    Memory,
    /// PostgreSQL at this URL (`postgres://…` or `postgresql://…`, optionally `?schema=NAME`).
    /// Never printed as is: [`tenx_store_postgres::redact_url`] hides its password.
    Postgres(String),
}

/// Reads a store setting: `sqlite`, `memory` or a PostgreSQL URL.
pub fn store_choice(
    text: &str,
    setting: &str,
    data_dir: impl FnOnce() -> PathBuf,
) -> Result<StoreChoice, SettingsError> {
    let text = text.trim();
    match text {
        "sqlite" => Ok(StoreChoice::Sqlite(data_dir().join("threads.sqlite"))),
        "memory" => Ok(StoreChoice::Memory),
        url if is_postgres_url(url) => Ok(StoreChoice::Postgres(url.to_owned())),
        other => Err(SettingsError::Value {
            setting: setting.to_owned(),
            reason: format!(
                "`{}` is none of `sqlite`, `memory` or a `postgres://` URL",
                tenx_store_postgres::redact_url(other)
            ),
        }),
    }
}

/// Whether `text` is a PostgreSQL URL.
pub fn is_postgres_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// `rate_limit_backend = "redis"`: where, and under which key prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisRateLimit {
    /// Redis (printed without its password).
    pub url: RedisUrl,
    /// The keys' prefix.
    pub prefix: String,
}

/// The settings `tenx serve` runs with.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Where to listen.
    pub address: SocketAddr,
    /// The store.
    pub store: StoreChoice,
    /// How long a request waits for a busy thread.
    pub busy_wait: Duration,
    /// How long a shutdown waits for runs to stop after their step.
    pub shutdown_grace: Duration,
    /// What the server itself needs.
    pub server: ServerSettings,
    /// The MCP servers, as configured (templates, not values: resolved at build).
    pub mcp: Option<tenx_mcp::McpConfig>,
    /// The shared rate limiter's Redis, connected at start-up into
    /// `server.rate_limit_backend` ([`crate::serve::connect_rate_limiter`]).
    pub rate_limit_redis: Option<RedisRateLimit>,
    /// How long a thread's lease in the store lasts without renewal.
    pub lease_ttl: Duration,
    /// How often to look for runs a dead replica left (`None`: only at start-up).
    pub recovery_interval: Option<Duration>,
}

/// Why settings could not be resolved.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum SettingsError {
    /// The project file could not be read.
    #[error("cannot read `{path}`: {reason}")]
    #[diagnostic(code(tenx::config))]
    Read {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The project file is not valid.
    #[error("`{path}`: {reason}")]
    #[diagnostic(code(tenx::config), help("the [serve] keys are listed in docs/serve.md"))]
    Parse {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// A value is not one the setting takes.
    #[error("{setting}: {reason}")]
    #[diagnostic(code(tenx::config))]
    Value {
        /// The setting (and where it came from).
        setting: String,
        /// Why.
        reason: String,
    },
}

/// Reads `[serve]` and `[mcp]` from `path`; a missing file is no settings.
pub fn read_project(path: &Path, required: bool) -> Result<ProjectSettings, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound && !required => {
            return Ok(ProjectSettings::default());
        }
        Err(error) => {
            return Err(SettingsError::Read {
                path: path.display().to_string(),
                reason: error.to_string(),
            });
        }
    };
    let file: ProjectFile = toml::from_str(&text).map_err(|error| SettingsError::Parse {
        path: path.display().to_string(),
        reason: error.message().to_owned(),
    })?;
    Ok(ProjectSettings {
        serve: file.serve.unwrap_or_default(),
        mcp: file.mcp,
    })
}

/// Merges the three sources, flags last.
pub fn resolve(
    file: FileSettings,
    lookup: impl Fn(&str) -> Option<String>,
    flags: FlagSettings,
) -> Result<Resolved, SettingsError> {
    let env = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
    let jwt = jwt_settings(&file, &env)?;
    let rate_limit_redis = rate_limit_redis(&file, &env, file.rate_limit_requests.is_some())?;
    let mode_text = flags.mode.or_else(|| env("MODE")).or(file.mode);
    let mode = match mode_text.as_deref().map(str::trim) {
        None | Some("development" | "dev") => Mode::Development,
        Some("production" | "prod") => Mode::Production,
        Some(other) => {
            return Err(SettingsError::Value {
                setting: "MODE".to_owned(),
                reason: format!("`{other}` is neither `development` nor `production`"),
            });
        }
    };
    let origins = match flags.origins.or_else(|| env("ORIGINS")) {
        Some(text) => split_list(&text),
        None => file.origins.unwrap_or_default(),
    };
    let origins = if origins.is_empty() && mode == Mode::Development {
        vec!["*".to_owned()]
    } else {
        origins
    };
    let max_request_size = match (flags.max_request_size, env("MAX_REQUEST_SIZE")) {
        (Some(size), _) => size,
        (None, Some(text)) => text.trim().parse().map_err(|_| SettingsError::Value {
            setting: "MAX_REQUEST_SIZE".to_owned(),
            reason: format!("`{text}` is not a number of bytes"),
        })?,
        (None, None) => file.max_request_size.unwrap_or(10 * 1024 * 1024),
    };
    let host = flags.host.or(file.host).unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let port = flags.port.or(file.port).unwrap_or(8000);
    let data_dir = || {
        flags
            .data_dir
            .clone()
            .or(file.data_dir.clone())
            .unwrap_or_else(|| PathBuf::from(".tenx"))
    };
    let store = match (&flags.store, env("DATABASE_URL"), &file.store) {
        (Some(flag), _, _) => store_choice(flag, "--store", data_dir)?,
        (None, Some(url), _) if is_postgres_url(url.trim()) => StoreChoice::Postgres(url.trim().to_owned()),
        (None, Some(_), _) => {
            return Err(SettingsError::Value {
                setting: "DATABASE_URL".to_owned(),
                reason: "is not a `postgres://` URL (the only database tenx reads it for)".to_owned(),
            });
        }
        (None, None, Some(text)) => store_choice(text, "store", data_dir)?,
        (None, None, None) => StoreChoice::Sqlite(data_dir().join("threads.sqlite")),
    };
    let rate_limit = match file.rate_limit_requests {
        None => None,
        Some(requests) => {
            let requests = std::num::NonZeroU32::new(requests).ok_or_else(|| SettingsError::Value {
                setting: "rate_limit_requests".to_owned(),
                reason: "must be at least 1".to_owned(),
            })?;
            let by = match file.rate_limit_by.as_deref() {
                None | Some("ip") => LimitBy::Ip,
                Some("user") => LimitBy::User,
                Some("global") => LimitBy::Global,
                Some(other) => {
                    return Err(SettingsError::Value {
                        setting: "rate_limit_by".to_owned(),
                        reason: format!("`{other}` is none of `ip`, `user`, `global`"),
                    });
                }
            };
            let window = file.rate_limit_window_seconds.unwrap_or(60);
            if window == 0 {
                return Err(SettingsError::Value {
                    setting: "rate_limit_window_seconds".to_owned(),
                    reason: "must be at least 1".to_owned(),
                });
            }
            Some(RateLimitSettings {
                requests,
                window: Duration::from_secs(window),
                by,
            })
        }
    };
    let run_timeout = match flags.run_timeout_seconds {
        Some(seconds) => seconds,
        None => number(&env, "RUN_TIMEOUT_SECONDS", "a number of seconds")?
            .or(file.run_timeout_seconds)
            .unwrap_or(0),
    };
    let max_runs = match flags.max_concurrent_runs_per_user {
        Some(runs) => runs,
        None => number(&env, "MAX_CONCURRENT_RUNS_PER_USER", "a number of runs")?
            .or(file.max_concurrent_runs_per_user)
            .unwrap_or(tenx_server::config::DEFAULT_MAX_CONCURRENT_RUNS_PER_USER),
    };
    let metrics = match env("METRICS").as_deref().map(str::trim) {
        None => file.metrics.unwrap_or(true),
        Some("true" | "1" | "on") => true,
        Some("false" | "0" | "off") => false,
        Some(other) => {
            return Err(SettingsError::Value {
                setting: "METRICS".to_owned(),
                reason: format!("`{other}` is neither `true` nor `false`"),
            });
        }
    };
    let defaults = tenx_server::ApprovalBatch::default();
    let approval_batch = tenx_server::ApprovalBatch {
        max_count: file.approval_batch_max_count.unwrap_or(defaults.max_count),
        max_total: file.approval_batch_max_total.unwrap_or(defaults.max_total),
    };
    if approval_batch.max_count == 0 {
        return Err(SettingsError::Value {
            setting: "approval_batch_max_count".to_owned(),
            reason: "must be at least 1".to_owned(),
        });
    }
    let lease_ttl = file.lease_ttl_seconds.unwrap_or(15);
    if lease_ttl == 0 {
        return Err(SettingsError::Value {
            setting: "lease_ttl_seconds".to_owned(),
            reason: "must be at least 1".to_owned(),
        });
    }
    Ok(Resolved {
        address: SocketAddr::new(host, port),
        store,
        busy_wait: Duration::from_secs(file.busy_wait_seconds.unwrap_or(30)),
        shutdown_grace: Duration::from_secs(file.shutdown_grace_seconds.unwrap_or(30)),
        server: ServerSettings {
            mode,
            jwt,
            origins,
            max_request_size,
            run_timeout: (run_timeout > 0).then(|| Duration::from_secs(run_timeout)),
            rate_limit,
            rate_limit_backend: tenx_server::rate_limit::RateLimitBackend::Memory,
            max_concurrent_runs_per_user: (max_runs > 0).then_some(max_runs),
            metrics,
            approval_batch,
        },
        mcp: None,
        rate_limit_redis,
        lease_ttl: Duration::from_secs(lease_ttl),
        recovery_interval: file
            .recovery_interval_seconds
            .filter(|seconds| *seconds > 0)
            .map(Duration::from_secs),
    })
}

/// `rate_limit_backend`: `memory` is none; `redis` needs a URL (`REDIS_URL`, else
/// `rate_limit_redis_url`) and a rate limit to share.
fn rate_limit_redis(
    file: &FileSettings,
    env: &impl Fn(&str) -> Option<String>,
    limited: bool,
) -> Result<Option<RedisRateLimit>, SettingsError> {
    let (setting, url) = match env("REDIS_URL") {
        Some(url) => ("REDIS_URL", Some(url)),
        None => ("rate_limit_redis_url", file.rate_limit_redis_url.clone()),
    };
    match file.rate_limit_backend.as_deref().map(str::trim) {
        None | Some("memory") => Ok(None),
        Some("redis") => {
            if !limited {
                return Err(SettingsError::Value {
                    setting: "rate_limit_backend".to_owned(),
                    reason: "`redis` shares a rate limit: set rate_limit_requests too".to_owned(),
                });
            }
            let url = url.ok_or_else(|| SettingsError::Value {
                setting: "rate_limit_backend".to_owned(),
                reason: "`redis` needs rate_limit_redis_url or REDIS_URL (redis://HOST:PORT)".to_owned(),
            })?;
            let url = RedisUrl::parse(&url).map_err(|error| SettingsError::Value {
                setting: setting.to_owned(),
                reason: error.to_string(),
            })?;
            let prefix = file
                .rate_limit_redis_prefix
                .clone()
                .unwrap_or_else(|| tenx_server::rate_limit::redis::DEFAULT_PREFIX.to_owned());
            Ok(Some(RedisRateLimit { url, prefix }))
        }
        Some(other) => Err(SettingsError::Value {
            setting: "rate_limit_backend".to_owned(),
            reason: format!("`{other}` is neither `memory` nor `redis`"),
        }),
    }
}

/// The JWT settings: one key (`JWT_SECRET_KEY`, `JWT_PUBLIC_KEY_FILE` or `JWT_JWKS_FILE`, the
/// files also from `[serve]`), its algorithm (HS256 by default for a secret, named explicitly
/// for a public key), issuer and audience. No key is no auth.
fn jwt_settings(
    file: &FileSettings,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Option<JwtSettings>, SettingsError> {
    let secret = env("JWT_SECRET_KEY");
    let public_key = env("JWT_PUBLIC_KEY_FILE")
        .map(PathBuf::from)
        .or_else(|| file.jwt_public_key_file.clone());
    let jwks = env("JWT_JWKS_FILE")
        .map(PathBuf::from)
        .or_else(|| file.jwt_jwks_file.clone());
    let named: Vec<&str> = [
        secret.as_ref().map(|_| "JWT_SECRET_KEY"),
        public_key.as_ref().map(|_| "JWT_PUBLIC_KEY_FILE"),
        jwks.as_ref().map(|_| "JWT_JWKS_FILE"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if named.len() > 1 {
        return Err(SettingsError::Value {
            setting: named.join(" and "),
            reason: "only one verification key may be set: a secret, a public key file or a JWKS file".to_owned(),
        });
    }
    let algorithm = env("JWT_ALGORITHM").or_else(|| file.jwt_algorithm.clone());
    let (key, algorithm) = match (secret, public_key, jwks) {
        (Some(secret), _, _) => (
            JwtKey::Secret(secret.into_bytes()),
            algorithm.unwrap_or_else(|| "HS256".to_owned()),
        ),
        (None, Some(path), _) => (
            JwtKey::PublicKeyFile(path),
            need_algorithm(algorithm, "JWT_PUBLIC_KEY_FILE")?,
        ),
        (None, None, Some(path)) => (JwtKey::JwksFile(path), need_algorithm(algorithm, "JWT_JWKS_FILE")?),
        (None, None, None) => return Ok(None),
    };
    Ok(Some(JwtSettings {
        key,
        algorithm: algorithm.trim().to_owned(),
        issuer: env("JWT_ISSUER").or_else(|| file.jwt_issuer.clone()),
        audience: env("JWT_AUDIENCE").or_else(|| file.jwt_audience.clone()),
    }))
}

fn need_algorithm(algorithm: Option<String>, setting: &str) -> Result<String, SettingsError> {
    algorithm.ok_or_else(|| SettingsError::Value {
        setting: "JWT_ALGORITHM".to_owned(),
        reason: format!("{setting} is set: name its algorithm (RS256, ES256 or EdDSA), which tokens must use"),
    })
}

/// A whole number from the environment variable `name`, if it is set.
fn number<T: std::str::FromStr>(
    env: &impl Fn(&str) -> Option<String>,
    name: &str,
    what: &str,
) -> Result<Option<T>, SettingsError> {
    match env(name) {
        None => Ok(None),
        Some(text) => text.trim().parse().map(Some).map_err(|_| SettingsError::Value {
            setting: name.to_owned(),
            reason: format!("`{text}` is not {what}"),
        }),
    }
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Resolved {
    /// The settings as printed at start: every value but the secret.
    pub fn describe(&self) -> Vec<(String, String)> {
        let store = match &self.store {
            StoreChoice::Sqlite(path) => format!("sqlite {}", path.display()),
            StoreChoice::Memory => "memory (threads are lost on restart)".to_owned(),
            StoreChoice::Postgres(url) => format!("postgres {}", tenx_store_postgres::redact_url(url)),
        };
        let auth = match &self.server.jwt {
            Some(jwt) => {
                let mut text = format!("jwt {} ({})", jwt.algorithm, jwt.key.describe());
                if let Some(issuer) = &jwt.issuer {
                    text.push_str(&format!(", issuer {issuer}"));
                }
                if let Some(audience) = &jwt.audience {
                    text.push_str(&format!(", audience {audience}"));
                }
                text
            }
            None => "none".to_owned(),
        };
        vec![
            ("listen".to_owned(), format!("http://{}", self.address)),
            ("mode".to_owned(), self.server.mode.as_str().to_owned()),
            ("auth".to_owned(), auth),
            ("origins".to_owned(), self.server.origins.join(", ")),
            (
                "max_request_size".to_owned(),
                format!("{} bytes", self.server.max_request_size),
            ),
            ("store".to_owned(), store),
            ("busy_wait".to_owned(), format!("{} s", self.busy_wait.as_secs())),
            (
                "run_timeout".to_owned(),
                self.server
                    .run_timeout
                    .map_or_else(|| "none".to_owned(), |limit| format!("{} s", limit.as_secs())),
            ),
            (
                "runs_per_user".to_owned(),
                self.server
                    .max_concurrent_runs_per_user
                    .map_or_else(|| "no cap".to_owned(), |runs| format!("{runs} at once (with auth)")),
            ),
            (
                "metrics".to_owned(),
                if self.server.metrics {
                    "on (/metrics, public)"
                } else {
                    "off"
                }
                .to_owned(),
            ),
            (
                "shutdown_grace".to_owned(),
                format!("{} s", self.shutdown_grace.as_secs()),
            ),
            (
                "rate_limit".to_owned(),
                self.server.rate_limit.as_ref().map_or_else(
                    || "none".to_owned(),
                    |rate| {
                        let limit = format!("{} per {} s by {:?}", rate.requests, rate.window.as_secs(), rate.by)
                            .to_lowercase();
                        match &self.rate_limit_redis {
                            None => format!("{limit}, in memory (this replica alone)"),
                            Some(redis) => format!("{limit}, in redis {} (keys {}:*, shared)", redis.url, redis.prefix),
                        }
                    },
                ),
            ),
            ("lease_ttl".to_owned(), format!("{} s", self.lease_ttl.as_secs())),
            (
                "recovery".to_owned(),
                self.recovery_interval.map_or_else(
                    || "at start-up".to_owned(),
                    |every| format!("at start-up and every {} s", every.as_secs()),
                ),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn defaults_are_loopback_sqlite_development_without_auth() {
        let resolved = resolve(FileSettings::default(), env(&[]), FlagSettings::default()).unwrap();
        assert_eq!(resolved.address.to_string(), "127.0.0.1:8000");
        assert_eq!(
            resolved.store,
            StoreChoice::Sqlite(PathBuf::from(".tenx/threads.sqlite"))
        );
        assert_eq!(resolved.server.mode, Mode::Development);
        assert!(resolved.server.jwt.is_none());
        assert_eq!(resolved.server.origins, vec!["*"]);
    }

    #[test]
    fn flags_override_the_environment_which_overrides_the_file() {
        let file = FileSettings {
            port: Some(9000),
            mode: Some("production".to_owned()),
            origins: Some(vec!["https://file.example".to_owned()]),
            max_request_size: Some(1),
            ..FileSettings::default()
        };
        let resolved = resolve(
            file.clone(),
            env(&[
                ("ORIGINS", "https://env.example, https://two.example"),
                ("MAX_REQUEST_SIZE", "2"),
            ]),
            FlagSettings::default(),
        )
        .unwrap();
        assert_eq!(resolved.address.port(), 9000);
        assert_eq!(resolved.server.mode, Mode::Production);
        assert_eq!(
            resolved.server.origins,
            vec!["https://env.example", "https://two.example"]
        );
        assert_eq!(resolved.server.max_request_size, 2);
        let flags = FlagSettings {
            port: Some(7000),
            mode: Some("development".to_owned()),
            max_request_size: Some(3),
            ..FlagSettings::default()
        };
        let resolved = resolve(file, env(&[("MODE", "production"), ("MAX_REQUEST_SIZE", "2")]), flags).unwrap();
        assert_eq!(resolved.address.port(), 7000);
        assert_eq!(resolved.server.mode, Mode::Development);
        assert_eq!(resolved.server.max_request_size, 3);
    }

    #[test]
    fn the_limits_come_from_the_file_the_environment_and_flags() {
        let resolved = resolve(FileSettings::default(), env(&[]), FlagSettings::default()).unwrap();
        assert_eq!(resolved.server.run_timeout, None);
        assert_eq!(resolved.server.max_concurrent_runs_per_user, Some(8));
        assert!(resolved.server.metrics);
        assert_eq!(resolved.shutdown_grace, Duration::from_secs(30));
        let file = FileSettings {
            run_timeout_seconds: Some(60),
            max_concurrent_runs_per_user: Some(2),
            metrics: Some(false),
            shutdown_grace_seconds: Some(5),
            ..FileSettings::default()
        };
        let resolved = resolve(file.clone(), env(&[]), FlagSettings::default()).unwrap();
        assert_eq!(resolved.server.run_timeout, Some(Duration::from_secs(60)));
        assert_eq!(resolved.server.max_concurrent_runs_per_user, Some(2));
        assert!(!resolved.server.metrics);
        assert_eq!(resolved.shutdown_grace, Duration::from_secs(5));
        let vars = env(&[
            ("RUN_TIMEOUT_SECONDS", "30"),
            ("MAX_CONCURRENT_RUNS_PER_USER", "0"),
            ("METRICS", "true"),
        ]);
        let resolved = resolve(file.clone(), vars, FlagSettings::default()).unwrap();
        assert_eq!(resolved.server.run_timeout, Some(Duration::from_secs(30)));
        assert_eq!(resolved.server.max_concurrent_runs_per_user, None, "0 is no cap");
        assert!(resolved.server.metrics);
        let flags = FlagSettings {
            run_timeout_seconds: Some(0),
            max_concurrent_runs_per_user: Some(3),
            ..FlagSettings::default()
        };
        let resolved = resolve(file, env(&[("RUN_TIMEOUT_SECONDS", "30")]), flags).unwrap();
        assert_eq!(resolved.server.run_timeout, None, "0 is no limit");
        assert_eq!(resolved.server.max_concurrent_runs_per_user, Some(3));
        let printed = format!("{:?}", resolved.describe());
        assert!(printed.contains("3 at once"), "{printed}");
        let error = resolve(
            FileSettings::default(),
            env(&[("RUN_TIMEOUT_SECONDS", "soon")]),
            FlagSettings::default(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "RUN_TIMEOUT_SECONDS: `soon` is not a number of seconds"
        );
    }

    #[test]
    fn the_store_is_sqlite_memory_or_a_postgres_url_from_flags_environment_or_file() {
        let url = "postgres://tenx:pa55word@db.internal:5432/tenx?schema=prod";
        let file = FileSettings {
            store: Some(url.to_owned()),
            data_dir: Some(PathBuf::from("/var/lib/tenx")),
            ..FileSettings::default()
        };
        let resolved = resolve(file.clone(), env(&[]), FlagSettings::default()).unwrap();
        assert_eq!(resolved.store, StoreChoice::Postgres(url.to_owned()));
        let printed = format!("{:?}", resolved.describe());
        assert!(
            printed.contains("postgres postgres://tenx:***@db.internal:5432/tenx?schema=prod"),
            "{printed}"
        );
        assert!(!printed.contains("pa55word"), "{printed}");
        // The environment's DATABASE_URL overrides the file; a flag overrides both.
        let resolved = resolve(
            FileSettings::default(),
            env(&[("DATABASE_URL", "postgresql://env@h/d")]),
            FlagSettings::default(),
        )
        .unwrap();
        assert_eq!(resolved.store, StoreChoice::Postgres("postgresql://env@h/d".to_owned()));
        let flags = FlagSettings {
            store: Some("sqlite".to_owned()),
            ..FlagSettings::default()
        };
        let resolved = resolve(file, env(&[("DATABASE_URL", "postgresql://env@h/d")]), flags).unwrap();
        assert_eq!(
            resolved.store,
            StoreChoice::Sqlite(PathBuf::from("/var/lib/tenx/threads.sqlite"))
        );
        let error = resolve(
            FileSettings::default(),
            env(&[("DATABASE_URL", "mysql://u:secret@h/d")]),
            FlagSettings::default(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "DATABASE_URL: is not a `postgres://` URL (the only database tenx reads it for)"
        );
        let flags = FlagSettings {
            store: Some("redis://u:secret@h".to_owned()),
            ..FlagSettings::default()
        };
        let error = resolve(FileSettings::default(), env(&[]), flags)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "--store: `redis://u:***@h` is none of `sqlite`, `memory` or a `postgres://` URL"
        );
    }

    #[test]
    fn the_secret_is_never_described() {
        let resolved = resolve(
            FileSettings::default(),
            env(&[
                ("JWT_SECRET_KEY", "a-very-secret-value-of-some-length!"),
                ("JWT_ISSUER", "tenx"),
            ]),
            FlagSettings::default(),
        )
        .unwrap();
        let printed = format!("{:?} {:?}", resolved.describe(), resolved.server);
        assert!(printed.contains("HS256"), "{printed}");
        assert!(printed.contains("issuer tenx"), "{printed}");
        assert!(!printed.contains("a-very-secret"), "{printed}");
    }

    #[test]
    fn bad_values_are_refused_with_the_setting_named() {
        let error = resolve(
            FileSettings::default(),
            env(&[("MODE", "staging")]),
            FlagSettings::default(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "MODE: `staging` is neither `development` nor `production`"
        );
        let error = resolve(
            FileSettings::default(),
            env(&[("MAX_REQUEST_SIZE", "big")]),
            FlagSettings::default(),
        )
        .unwrap_err();
        assert_eq!(error.to_string(), "MAX_REQUEST_SIZE: `big` is not a number of bytes");
    }

    #[test]
    fn the_redis_rate_limit_reads_redis_url_over_the_file_and_never_prints_a_password() {
        let limited = FileSettings {
            rate_limit_requests: Some(4),
            ..FileSettings::default()
        };
        let resolved = resolve(
            limited.clone(),
            env(&[("REDIS_URL", "redis://x")]),
            FlagSettings::default(),
        )
        .unwrap();
        assert_eq!(
            resolved.rate_limit_redis, None,
            "memory is the default, whatever REDIS_URL says"
        );
        assert!(format!("{:?}", resolved.describe()).contains("in memory (this replica alone)"));
        let file = FileSettings {
            rate_limit_backend: Some("redis".to_owned()),
            rate_limit_redis_url: Some("redis://file.internal:6379".to_owned()),
            ..limited.clone()
        };
        let resolved = resolve(file.clone(), env(&[]), FlagSettings::default()).unwrap();
        let redis = resolved.rate_limit_redis.unwrap();
        assert_eq!(redis.url.redacted(), "redis://file.internal:6379");
        assert_eq!(redis.prefix, "tenx:ratelimit");
        let resolved = resolve(
            FileSettings {
                rate_limit_redis_prefix: Some("staging:rl".to_owned()),
                ..file.clone()
            },
            env(&[("REDIS_URL", "redis://app:pw-0f-redis@env.internal:6380/1")]),
            FlagSettings::default(),
        )
        .unwrap();
        let printed = format!("{:?} {:?}", resolved.describe(), resolved);
        assert!(printed.contains("redis://app:***@env.internal:6380/1"), "{printed}");
        assert!(printed.contains("staging:rl"), "{printed}");
        assert!(!printed.contains("pw-0f-redis"), "{printed}");
        let refused = |file: FileSettings, vars: &'static [(&'static str, &'static str)]| {
            resolve(file, env(vars), FlagSettings::default())
                .unwrap_err()
                .to_string()
        };
        let no_url = FileSettings {
            rate_limit_redis_url: None,
            ..file.clone()
        };
        assert!(
            refused(no_url, &[]).starts_with("rate_limit_backend: `redis` needs rate_limit_redis_url or REDIS_URL")
        );
        let unlimited = FileSettings {
            rate_limit_requests: None,
            ..file.clone()
        };
        assert!(refused(unlimited, &[]).contains("set rate_limit_requests too"));
        let tls = refused(file.clone(), &[("REDIS_URL", "rediss://:pw-0f-redis@h")]);
        assert!(tls.starts_with("REDIS_URL: rediss:// (TLS) is not built in"), "{tls}");
        assert!(!tls.contains("pw-0f-redis"), "{tls}");
        let other = FileSettings {
            rate_limit_backend: Some("etcd".to_owned()),
            ..file
        };
        assert_eq!(
            refused(other, &[]),
            "rate_limit_backend: `etcd` is neither `memory` nor `redis`"
        );
    }

    #[test]
    fn one_verification_key_and_a_public_key_names_its_algorithm() {
        let file = FileSettings {
            jwt_public_key_file: Some(PathBuf::from("file.pem")),
            jwt_algorithm: Some("ES256".to_owned()),
            ..FileSettings::default()
        };
        let resolved = resolve(
            file.clone(),
            env(&[("JWT_PUBLIC_KEY_FILE", "env.pem")]),
            FlagSettings::default(),
        )
        .unwrap();
        let jwt = resolved.server.jwt.unwrap();
        assert_eq!(
            jwt.key,
            JwtKey::PublicKeyFile(PathBuf::from("env.pem")),
            "the environment wins"
        );
        assert_eq!(jwt.algorithm, "ES256");
        let error = resolve(file, env(&[("JWT_JWKS_FILE", "keys.json")]), FlagSettings::default()).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("JWT_PUBLIC_KEY_FILE and JWT_JWKS_FILE: only one"),
            "{error}"
        );
        let error = resolve(
            FileSettings::default(),
            env(&[("JWT_JWKS_FILE", "keys.json")]),
            FlagSettings::default(),
        )
        .unwrap_err();
        assert!(
            error.to_string().starts_with("JWT_ALGORITHM: JWT_JWKS_FILE is set"),
            "{error}"
        );
    }

    #[test]
    fn the_lease_and_the_recovery_sweep_come_from_the_file() {
        let resolved = resolve(FileSettings::default(), env(&[]), FlagSettings::default()).unwrap();
        assert_eq!(resolved.lease_ttl, Duration::from_secs(15));
        assert_eq!(resolved.recovery_interval, None, "recovery at start-up only");
        let file = FileSettings {
            lease_ttl_seconds: Some(3),
            recovery_interval_seconds: Some(2),
            ..FileSettings::default()
        };
        let resolved = resolve(file, env(&[]), FlagSettings::default()).unwrap();
        assert_eq!(resolved.lease_ttl, Duration::from_secs(3));
        assert_eq!(resolved.recovery_interval, Some(Duration::from_secs(2)));
        let printed = format!("{:?}", resolved.describe());
        assert!(printed.contains("at start-up and every 2 s"), "{printed}");
        let off = FileSettings {
            recovery_interval_seconds: Some(0),
            ..FileSettings::default()
        };
        let resolved = resolve(off, env(&[]), FlagSettings::default()).unwrap();
        assert_eq!(resolved.recovery_interval, None, "0 is off");
        let zero = FileSettings {
            lease_ttl_seconds: Some(0),
            ..FileSettings::default()
        };
        let error = resolve(zero, env(&[]), FlagSettings::default()).unwrap_err();
        assert_eq!(error.to_string(), "lease_ttl_seconds: must be at least 1");
    }
}
