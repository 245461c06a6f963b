//! `tenx`, the runtime's command line. `tenx serve ARTIFACT` loads a sealed artifact (never
//! `.tenx` source: the runtime depends on no compiler code), verifies it, and serves the
//! standard API; `tenx migrate` applies the PostgreSQL store's migrations for operators who
//! apply them separately. Errors are miette reports; exit status 2 for a usage, configuration or load
//! error. The binary (`src/main.rs`) only calls [`main_with`], so tests run the same code in a
//! child process of their own.

pub mod migrate;
pub mod serve;
pub mod settings;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The tenx runtime.
#[derive(Debug, Parser)]
#[command(
    name = "tenx",
    version,
    about = "The tenx runtime: serve sealed agent graphs behind the standard API"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
#[expect(
    clippy::large_enum_variant,
    reason = "parsed once per process, never moved in a loop"
)]
enum Command {
    /// Serve a sealed artifact (`.tenxg`) over HTTP.
    Serve(serve::ServeArgs),
    /// Apply the PostgreSQL store's migrations and exit (`tenx serve` also applies them at start).
    Migrate(migrate::MigrateArgs),
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
