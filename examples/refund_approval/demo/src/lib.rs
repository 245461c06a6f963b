//! `refund-demo`, the README's main job: one command that serves the refund example on its
//! embedded defaults, with no key and no network. It
//!
//! 1. compiles `examples/refund_approval/main.tenx` in-process ([`example`]): its scripted demo
//!    model needs no provider key;
//! 2. starts the stand-in orders and payments service on 127.0.0.1:8001 ([`payments`]), which
//!    refunds once per `Idempotency-Key` and lists its refunds at `GET /refunds`;
//! 3. signs tokens for `alice`, `carol` and `bob` with a fresh JWT secret ([`tokens`]), so
//!    ownership, approvers and separate duties are enforced, as in production;
//! 4. serves the standard API on 127.0.0.1:8000 with the `tenx` binary's own serve code
//!    (settings, SQLite in `.tenx/`, engine, recovery, listener), its environment supplied
//!    here instead of read from the process.
//!
//! The stand-in lives here and not in `tenx`: the production binary serves sealed artifacts
//! against real services and carries no fake one. Ctrl-C (or SIGTERM) stops the API first, then
//! the stand-in, so a refund in flight finishes. The binary (`src/main.rs`) only calls
//! [`main_with`], so tests run the same code in a child process.

mod example;
pub mod payments;
pub mod tokens;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use miette::{IntoDiagnostic, Result, WrapErr, miette};
use tenx::settings::StoreChoice;
use tenx_engine::ports::NullEvents;

/// How long a request waits for a busy thread in the demo: 2 s instead of `tenx serve`'s 30 s,
/// so the walk-through's `thread is busy` row answers in 2 s.
const DEMO_BUSY_WAIT: Duration = Duration::from_secs(2);

/// The default address of the standard API.
const DEFAULT_API_PORT: u16 = 8000;

/// The default port of the stand-in service.
const DEFAULT_PAYMENTS_PORT: u16 = 8001;

/// The refund example on its embedded defaults.
#[derive(Debug, Parser)]
#[command(
    name = "refund-demo",
    version,
    about = "Serve the refund example with no key and no network, next to a stand-in payments service"
)]
struct Cli {
    /// The stand-in orders and payments service's port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = DEFAULT_PAYMENTS_PORT)]
    payments_port: u16,
    #[command(flatten)]
    server: tenx::serve::ServerFlags,
}

/// Runs the command line `args` (the program name first), as the binary does.
pub fn main_with<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    tenx::run_command_line(args, run)
}

async fn run(cli: Cli) -> Result<()> {
    tenx::serve::init_logging();
    let loaded = example::compile()?;

    let payments_listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, cli.payments_port))
        .await
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot start the payments stand-in on 127.0.0.1:{}", cli.payments_port))?;
    let payments_address = payments_listener.local_addr().into_diagnostic()?;
    let payments_url = format!("http://{payments_address}");

    // The environment the example and the server read, supplied here: the process's own
    // variables (MODE, JWT_SECRET_KEY, ORDERS_URL, …) do not change the demo.
    let tokens = tokens::Tokens::fresh()?;
    let environment = |name: &str| match name {
        "ORDERS_URL" | "PAYMENTS_URL" => Some(payments_url.clone()),
        "JWT_SECRET_KEY" => Some(tokens.secret.clone()),
        _ => None,
    };
    let mut resolved = tenx::serve::resolve_with(&cli.server, None, environment)?;
    resolved.busy_wait = DEMO_BUSY_WAIT;
    tenx::serve::connect_rate_limiter(&mut resolved).await?;
    let tokens_file = tokens.write(&data_dir(&resolved.store))?;

    let store = tenx::serve::open_store(&resolved).await?;
    let engine = tenx::serve::build_engine_with(&loaded, &resolved, store, environment).await?;
    engine
        .recover(&mut NullEvents)
        .await
        .map_err(|error| miette!("recovery at start-up failed: {error}"))?;
    let state = tenx_server::AppState::new(engine, resolved.server.clone()).map_err(|error| miette!("{error}"))?;
    let listener = tenx::serve::bind(&resolved).await?;
    let api_address = listener.local_addr().into_diagnostic()?;

    let (stop_payments, stopped) = tokio::sync::oneshot::channel::<()>();
    let payments = tokio::spawn(async move {
        let app = payments::router(payments::Payments::default());
        axum::serve(payments_listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });

    print_next_steps(api_address, payments_address, &tokens_file);
    let label = format!("{} ({})", example::NAME, loaded.id);
    let served = tenx::serve::serve_on(listener, state, &resolved, &label).await;
    let _ = stop_payments.send(());
    match payments.await {
        Ok(Ok(())) => eprintln!("refund-demo: payments stand-in stopped"),
        Ok(Err(error)) => eprintln!("refund-demo: the payments stand-in stopped with an error: {error}"),
        Err(error) => eprintln!("refund-demo: the payments stand-in failed: {error}"),
    }
    served
}

/// The folder the SQLite store lives in (the tokens file goes beside it).
fn data_dir(store: &StoreChoice) -> PathBuf {
    match store {
        StoreChoice::Sqlite(path) => path
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        StoreChoice::Memory | StoreChoice::Postgres(_) => PathBuf::from(".tenx"),
    }
}

fn print_next_steps(api: SocketAddr, payments: SocketAddr, tokens_file: &Path) {
    eprintln!(
        "refund-demo: serving {} with its scripted model (no key, no network)",
        example::NAME
    );
    eprintln!(
        "refund-demo: payments stand-in on http://{payments} (GET /refunds lists every refund by Idempotency-Key)"
    );
    eprintln!(
        "refund-demo: bearer tokens for alice (asks), carol (support_lead, approves) and bob in {}",
        tokens_file.display()
    );
    let mut overrides = String::new();
    if api.port() != DEFAULT_API_PORT || !api.ip().is_loopback() {
        overrides.push_str(&format!("API=http://{api} "));
    }
    if payments.port() != DEFAULT_PAYMENTS_PORT {
        overrides.push_str(&format!("PAYMENTS=http://{payments} "));
    }
    if tokens_file != Path::new(".tenx/refund-demo.env") {
        overrides.push_str(&format!("TOKENS={} ", tokens_file.display()));
    }
    eprintln!(
        "refund-demo: next, in another terminal at the repository root: {overrides}bash examples/refund_approval/walkthrough.sh"
    );
    eprintln!("refund-demo:   (or paste its steps one at a time from README.md); Ctrl-C stops the demo");
    eprintln!(
        "refund-demo: the approval console: http://{api}/console (sign in with carol's token, CAROL in {})",
        tokens_file.display()
    );
}
