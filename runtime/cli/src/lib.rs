//! `tenx`, the runtime's command line. `tenx serve ARTIFACT` loads a sealed artifact (never
//! `.tenx` source: the runtime depends on no compiler code), verifies it, and serves the
//! standard API; `tenx migrate` applies the PostgreSQL store's migrations for operators who
//! apply them separately; `tenx deploy --out DIR` writes a Dockerfile, a compose file and
//! Kubernetes manifests that run it ([`deploy`]). Errors are miette reports; exit status 2 for a usage, configuration or load
//! error. The binary (`src/main.rs`) only calls [`main_with`], so tests run the same code in a
//! child process of their own.

pub mod deploy;
pub mod migrate;
pub mod serve;
pub mod settings;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The tenx runtime's command line (public so tests parse the command lines that generated
/// files name with the real parser).
#[derive(Debug, Parser)]
#[command(
    name = "tenx",
    version,
    about = "The tenx runtime: serve sealed agent graphs behind the standard API"
)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// `tenx`'s subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve a sealed artifact (`.tenxg`) over HTTP.
    Serve(serve::ServeArgs),
    /// Apply the PostgreSQL store's migrations and exit (`tenx serve` also applies them at start).
    Migrate(migrate::MigrateArgs),
    /// Write a Dockerfile, a docker-compose.yml (tenx + PostgreSQL) and Kubernetes manifests.
    Deploy(deploy::DeployArgs),
}

/// Runs the command line `args` (the program name first), as the binary does.
pub fn main_with<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    run_command_line(args, |cli: Cli| async move {
        match cli.command {
            Command::Serve(args) => serve::run(args).await,
            Command::Migrate(args) => migrate::run(args).await,
            Command::Deploy(args) => deploy::run(&args),
        }
    })
}

/// A runtime command line, start to end: parses `args` as `C` (help and version print and exit
/// 0, a usage error exits 2), runs `run` on a multi-threaded tokio runtime, and prints its error
/// as a miette report with exit status 2. `tenx` and the refund demo share it.
pub fn run_command_line<C, I, T, F, Fut>(args: I, run: F) -> ExitCode
where
    C: clap::Parser,
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
    F: FnOnce(C) -> Fut,
    Fut: std::future::Future<Output = miette::Result<()>>,
{
    let cli = match C::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(report) => {
            eprintln!("{report:?}");
            ExitCode::from(2)
        }
    }
}
