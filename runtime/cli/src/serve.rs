//! `tenx serve`: verify the artifact, resolve settings and the environment (every missing
//! variable at once, before anything runs), open the store, build the model clients, recover
//! runs a dead process left, then listen. Prints its settings (never the secret) and a loud
//! line when auth is off.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use miette::{IntoDiagnostic, Result, WrapErr, miette};
use tenx_artifact::{Provider, PublicKey, TrustPolicy};
use tenx_engine::ports::{NullEvents, Store};
use tenx_engine::{EngineOptions, MemoryStore};
use tenx_runtime::HostBuilder;

use crate::settings::{self, FlagSettings, StoreChoice};

/// `tenx serve` flags.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The sealed artifact (`tenxc build` output).
    pub artifact: PathBuf,
    /// Refuse an artifact without a valid signature by a trusted key.
    #[arg(long)]
    pub require_signature: bool,
    /// A public key file (`tenxc keygen`) whose signatures are trusted; repeatable.
    #[arg(long)]
    pub trust: Vec<PathBuf>,
    #[command(flatten)]
    /// Where and how to serve.
    pub server: ServerFlags,
    /// The project file whose `[serve]` section to read (default `tenx.toml`, when present).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// The flags `tenx serve` and `tenxc dev` share: where and how to serve.
#[derive(Debug, Clone, Args)]
pub struct ServerFlags {
    /// The address to listen on (default 127.0.0.1).
    #[arg(long)]
    pub host: Option<std::net::IpAddr>,
    /// The port (default 8000; 0 picks a free one).
    #[arg(long)]
    pub port: Option<u16>,
    /// `development` or `production` (overrides `MODE`).
    #[arg(long)]
    pub mode: Option<String>,
    /// Allowed browser origins, comma-separated (overrides `ORIGINS`).
    #[arg(long)]
    pub origins: Option<String>,
    /// The largest request body in bytes (overrides `MAX_REQUEST_SIZE`).
    #[arg(long)]
    pub max_request_size: Option<usize>,
    /// Where the SQLite store lives (default `.tenx`).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// `sqlite` (default), `memory`, or a PostgreSQL URL `postgres://user:password@host/db`
    /// (optionally `?schema=NAME`; overrides `DATABASE_URL`).
    #[arg(long)]
    pub store: Option<String>,
    /// How long a run may take, in seconds; 0 is no limit (overrides `RUN_TIMEOUT_SECONDS`).
    #[arg(long)]
    pub run_timeout_seconds: Option<u64>,
    /// The most runs one user may have in progress; 0 is no cap (overrides
    /// `MAX_CONCURRENT_RUNS_PER_USER`).
    #[arg(long)]
    pub max_concurrent_runs_per_user: Option<usize>,
}

/// Runs the server until Ctrl-C or SIGTERM.
pub async fn run(args: ServeArgs) -> Result<()> {
    init_logging();
    let loaded = load_artifact(&args)?;
    let mut resolved = resolve(&args.server, args.config.as_deref())?;
    connect_rate_limiter(&mut resolved).await?;
    let store = open_store(&resolved).await?;
    let engine = build_engine(&loaded, &resolved, store).await?;
    let report = engine
        .recover(&mut NullEvents)
        .await
        .map_err(|error| miette!("recovery at start-up failed: {error}"))?;
    tracing::info!(recovered = ?report, "recovery at start-up done");
    let state = tenx_server::AppState::new(engine, resolved.server.clone()).map_err(|error| miette!("{error}"))?;
    let label = format!("artifact {} ({})", args.artifact.display(), loaded.id);
    listen(state, &resolved, &label).await
}

/// How long a sweep waits for one thread's lock: a live holder keeps its lease renewed, so a
/// short wait is enough to tell it from a dead one, whose lease has expired.
const SWEEP_LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// Every `every`, continues the runs a dead replica left (`recovery_interval_seconds`; `tenx
/// serve`, `tenxc dev` and the refund demo all serve through [`serve_on`]): with
/// several replicas on one store, a replica that crashed may never start again, so the live
/// ones take its threads over once their leases expire.
fn spawn_recovery_sweep(state: tenx_server::AppState, every: std::time::Duration) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            match state.engine().recover_within(&mut NullEvents, SWEEP_LOCK_WAIT).await {
                Ok(report) => {
                    for thread in &report.threads {
                        if !matches!(thread.outcome, tenx_engine::RecoveryOutcome::Skipped(_)) {
                            tracing::info!(thread = %thread.thread_id, outcome = ?thread.outcome, "recovered a run a dead process left");
                        }
                    }
                }
                Err(error) => tracing::warn!(%error, "the recovery sweep could not list the unfinished threads"),
            }
        }
    });
}

/// Reads the settings: `tenx.toml` (or `--config`), the environment, the flags; production's
/// refusals happen here, before anything is opened.
pub fn resolve(flags: &ServerFlags, config: Option<&std::path::Path>) -> Result<settings::Resolved> {
    resolve_with(flags, config, |name| std::env::var(name).ok())
}

/// [`resolve`] with the environment read through `env` instead of the process's (a host that
/// supplies its own values, such as the refund example's demo).
pub fn resolve_with(
    flags: &ServerFlags,
    config: Option<&std::path::Path>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<settings::Resolved> {
    let project = match config {
        Some(path) => settings::read_project(path, true)?,
        None => settings::read_project(std::path::Path::new("tenx.toml"), false)?,
    };
    let flags = FlagSettings {
        host: flags.host,
        port: flags.port,
        mode: flags.mode.clone(),
        origins: flags.origins.clone(),
        max_request_size: flags.max_request_size,
        data_dir: flags.data_dir.clone(),
        store: flags.store.clone(),
        run_timeout_seconds: flags.run_timeout_seconds,
        max_concurrent_runs_per_user: flags.max_concurrent_runs_per_user,
    };
    let mut resolved = settings::resolve(project.serve, env, flags)?;
    resolved.server.validate().map_err(|error| miette!("{error}"))?;
    resolved.mcp = project.mcp;
    Ok(resolved)
}

/// With `rate_limit_backend = "redis"`, connects to Redis and puts the shared limiter into the
/// server's settings; Redis not answering refuses the start (nothing is served unlimited).
pub async fn connect_rate_limiter(resolved: &mut settings::Resolved) -> Result<()> {
    let Some(redis) = &resolved.rate_limit_redis else {
        return Ok(());
    };
    let limiter = tenx_server::rate_limit::RedisLimiter::connect(&redis.url, &redis.prefix)
        .await
        .map_err(|error| {
            miette!(
                help = "start Redis, fix rate_limit_redis_url / REDIS_URL, or set rate_limit_backend = \"memory\" (each replica then limits alone)",
                "{error}"
            )
        })?;
    resolved.server.rate_limit_backend = tenx_server::rate_limit::RateLimitBackend::Redis(limiter);
    Ok(())
}

/// Opens the store the settings name (creating the data directory).
pub async fn open_store(resolved: &settings::Resolved) -> Result<Arc<dyn Store>> {
    Ok(match &resolved.store {
        StoreChoice::Sqlite(path) => {
            if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .into_diagnostic()
                    .wrap_err_with(|| format!("cannot create the data directory `{}`", dir.display()))?;
            }
            let options = tenx_store_sqlite::SqliteOptions {
                lease_ttl: resolved.lease_ttl,
                ..tenx_store_sqlite::SqliteOptions::default()
            };
            Arc::new(
                tenx_store_sqlite::SqliteStore::open_with(path, options)
                    .await
                    .map_err(|error| miette!("cannot open the store `{}`: {error}", path.display()))?,
            )
        }
        StoreChoice::Memory => Arc::new(MemoryStore::new()),
        StoreChoice::Postgres(url) => Arc::new(
            tenx_store_postgres::PostgresStore::open(
                url,
                tenx_store_postgres::PostgresOptions {
                    lease_ttl: resolved.lease_ttl,
                    ..tenx_store_postgres::PostgresOptions::default()
                },
            )
            .await
            .map_err(|error| {
                miette!(
                    "cannot open the store `{}`: {error}",
                    tenx_store_postgres::redact_url(url)
                )
            })?,
        ),
    })
}

/// Builds the engine for a verified artifact: every environment variable it names resolved
/// (all missing names at once), its model clients, its MCP servers attached (each declared tool
/// checked against the server, failing closed), the store.
pub async fn build_engine(
    loaded: &tenx_artifact::LoadedArtifact,
    resolved: &settings::Resolved,
    store: Arc<dyn Store>,
) -> Result<tenx_engine::Engine> {
    build_engine_with(loaded, resolved, store, |name| std::env::var(name).ok()).await
}

/// [`build_engine`] with the artifact's variables read through `env` instead of the process's
/// environment.
pub async fn build_engine_with(
    loaded: &tenx_artifact::LoadedArtifact,
    resolved: &settings::Resolved,
    store: Arc<dyn Store>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<tenx_engine::Engine> {
    build(loaded, resolved, store, env, false).await
}

/// As [`build_engine`], for `tenxc dev`: the engine asks again the questions an earlier build
/// of the program asked, instead of refusing their answers with `GRAPH_VERSION_MISMATCH`
/// (`EngineOptions::reask_after_reload`). `tenx serve` never builds this.
pub async fn build_dev_engine(
    loaded: &tenx_artifact::LoadedArtifact,
    resolved: &settings::Resolved,
    store: Arc<dyn Store>,
) -> Result<tenx_engine::Engine> {
    build(loaded, resolved, store, |name| std::env::var(name).ok(), true).await
}

async fn build(
    loaded: &tenx_artifact::LoadedArtifact,
    resolved: &settings::Resolved,
    store: Arc<dyn Store>,
    env: impl Fn(&str) -> Option<String>,
    reask_after_reload: bool,
) -> Result<tenx_engine::Engine> {
    let environment = tenx_runtime::environment::resolve(&loaded.artifact, env)
        .map_err(|missing| miette!("{missing}"))
        .wrap_err("the artifact names environment variables that are not set")?;
    let transport = tenx_models::Transport::new(tenx_models::ProviderOptions::default())
        .map_err(|_| miette!("cannot build the HTTP client for model providers"))?;
    let mut builder = HostBuilder::new(loaded.clone()).store(store).options(EngineOptions {
        busy_wait: resolved.busy_wait,
        auth: resolved.server.jwt.is_some(),
        reask_after_reload,
        ..EngineOptions::default()
    });
    for (name, model) in &loaded.artifact.models {
        if model.provider == Provider::Scripted {
            continue;
        }
        let client = tenx_models::client_for(name, model, environment.api_key(model), &transport)
            .map_err(|error| miette!("{error}"))?;
        builder = builder.model(name, client);
    }
    if let Some(mcp) = attach_mcp(loaded, resolved).await? {
        builder = builder.mcp(mcp);
    }
    builder.build_with(&environment).map_err(|error| miette!("{error}"))
}

/// Attaches the MCP servers the artifact's tools name, from `[mcp.servers.NAME]`; none when no
/// tool runs on MCP. A named server without configuration, a variable not set, a missing tool or
/// an incompatible schema refuses the start, every problem at once.
async fn attach_mcp(
    loaded: &tenx_artifact::LoadedArtifact,
    resolved: &settings::Resolved,
) -> Result<Option<Arc<dyn tenx_tools::McpTools>>> {
    let servers: std::collections::BTreeSet<&str> = loaded
        .artifact
        .tools
        .values()
        .filter_map(|tool| match &tool.run {
            tenx_artifact::Run::Mcp { server, .. } => Some(server.as_str()),
            _ => None,
        })
        .collect();
    if servers.is_empty() {
        return Ok(None);
    }
    let config = resolved.mcp.clone().unwrap_or_default();
    let missing: Vec<String> = servers
        .iter()
        .filter(|server| !config.servers.contains_key(**server))
        .map(|server| format!("`{server}`"))
        .collect();
    if !missing.is_empty() {
        return Err(miette!(
            help = "configure each in tenx.toml, e.g. [mcp.servers.NAME] transport = \"stdio\" command = \"…\" (docs/runtime.md, \"MCP\")",
            "the artifact's tools call MCP servers that are not configured: {}",
            missing.join(", ")
        ));
    }
    let config = config
        .resolve(|name| std::env::var(name).ok())
        .map_err(|error| miette!("the MCP configuration: {error}"))?;
    let client = tenx_mcp::McpClient::attach(&loaded.artifact, &config)
        .await
        .map_err(|error| miette!("{error}"))?;
    Ok(Some(Arc::new(client)))
}

/// Binds, prints the settings and serves `state` until Ctrl-C or SIGTERM.
pub async fn listen(state: tenx_server::AppState, resolved: &settings::Resolved, label: &str) -> Result<()> {
    let listener = bind(resolved).await?;
    serve_on(listener, state, resolved, label).await
}

/// Binds the address the settings name (port 0 picks a free one: read it from the listener).
pub async fn bind(resolved: &settings::Resolved) -> Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(resolved.address)
        .await
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot listen on {}", resolved.address))
}

/// Prints the settings and serves `state` on `listener` until Ctrl-C or SIGTERM.
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    state: tenx_server::AppState,
    resolved: &settings::Resolved,
    label: &str,
) -> Result<()> {
    let bound = listener.local_addr().into_diagnostic()?;
    if resolved.rate_limit_redis.is_some()
        && !matches!(
            state.settings().rate_limit_backend,
            tenx_server::rate_limit::RateLimitBackend::Redis(_)
        )
    {
        return Err(miette!(
            "rate_limit_backend = \"redis\", but the server was built before Redis was connected: call tenx::serve::connect_rate_limiter after resolving the settings"
        ));
    }
    eprintln!("tenx serve: {label}");
    for (key, value) in resolved.describe() {
        if key != "listen" {
            eprintln!("  {key:<17} {value}");
        }
    }
    if resolved.server.jwt.is_none() {
        eprintln!(
            "WARNING: auth is off (development mode): anyone who can reach this port may run graphs, read threads and approve every request"
        );
    }
    eprintln!("tenx serve: listening on http://{bound}");
    if let Some(every) = resolved.recovery_interval {
        spawn_recovery_sweep(state.clone(), every);
    }
    let app = tenx_server::router(state.clone()).into_make_service_with_connect_info::<std::net::SocketAddr>();
    let signalled = Arc::new(tokio::sync::Notify::new());
    let stopping = state.clone();
    let heard = signalled.clone();
    let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown().await;
        eprintln!("tenx serve: shutting down: no new runs; each run in progress stops after its step");
        stopping.begin_shutdown();
        heard.notify_one();
    });
    let grace = resolved.shutdown_grace;
    // The connections drain while the runs stop; past the grace the process exits anyway (a run
    // cut short then is recovered at the next start, as after a crash).
    let gave_up = async {
        signalled.notified().await;
        tokio::time::sleep(grace).await;
    };
    let drained = tokio::select! {
        served = serve => {
            served.into_diagnostic().wrap_err("the server stopped with an error")?;
            true
        }
        () = gave_up => false,
    };
    // Runs whose client went away (a stream, a socket) may still be finishing their step.
    let left = if drained {
        state.wait_for_runs(grace).await
    } else {
        state.runs().count()
    };
    if left > 0 {
        eprintln!(
            "tenx serve: {left} run(s) did not stop within {} s; the next start recovers them",
            grace.as_secs()
        );
    }
    eprintln!("tenx serve: stopped");
    Ok(())
}

fn load_artifact(args: &ServeArgs) -> Result<tenx_artifact::LoadedArtifact> {
    let keys = args
        .trust
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)
                .into_diagnostic()
                .wrap_err_with(|| format!("cannot read the public key `{}`", path.display()))?;
            PublicKey::from_text(&text)
                .map_err(|error| miette!("`{}` is not a tenx public key: {error}", path.display()))
        })
        .collect::<Result<Vec<_>>>()?;
    let policy = if args.require_signature {
        TrustPolicy::signature_required(keys)
    } else {
        keys.into_iter()
            .fold(TrustPolicy::signature_optional(), TrustPolicy::trust)
    };
    let bytes = std::fs::read(&args.artifact)
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot read the artifact `{}`", args.artifact.display()))?;
    tenx_runtime::load(&bytes, &policy).map_err(|error| {
        miette!(
            help = "tenx serve runs only sealed artifacts: build one with `tenxc build FILE.tenx -o FILE.tenxg`",
            "refused `{}`: {error}",
            args.artifact.display()
        )
    })
}

/// Logs to stderr, `warn` and above unless `RUST_LOG` says otherwise.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::FileSettings;

    fn redis_settings(url: String) -> settings::Resolved {
        let file = FileSettings {
            rate_limit_requests: Some(10),
            rate_limit_backend: Some("redis".to_owned()),
            ..FileSettings::default()
        };
        settings::resolve(
            file,
            move |name| (name == "REDIS_URL").then(|| url.clone()),
            FlagSettings::default(),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn redis_not_answering_refuses_the_start_naming_it_without_the_password() {
        let free = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let mut resolved = redis_settings(format!("redis://app:pw-cli-secret@{free}"));
        let error = connect_rate_limiter(&mut resolved).await.unwrap_err();
        let text = format!("{error:?}");
        assert!(
            text.contains(&format!("the rate limiter cannot use Redis at redis://app:***@{free}")),
            "{text}"
        );
        assert!(
            text.contains("rate_limit_backend = \"memory\""),
            "the help names the way out: {text}"
        );
        assert!(!text.contains("pw-cli-secret"), "{text}");
        assert_eq!(
            resolved.server.rate_limit_backend,
            tenx_server::rate_limit::RateLimitBackend::Memory
        );
    }

    #[tokio::test]
    async fn a_reachable_redis_becomes_the_servers_limiter() {
        let Some(url) = std::env::var("TENX_TEST_REDIS_URL").ok().filter(|url| !url.is_empty()) else {
            eprintln!("skipping a_reachable_redis_becomes_the_servers_limiter: TENX_TEST_REDIS_URL is not set");
            return;
        };
        let mut resolved = redis_settings(url);
        connect_rate_limiter(&mut resolved).await.unwrap();
        let tenx_server::rate_limit::RateLimitBackend::Redis(limiter) = &resolved.server.rate_limit_backend else {
            panic!("{:?}", resolved.server.rate_limit_backend);
        };
        assert_eq!(limiter.prefix(), "tenx:ratelimit");
    }
}
