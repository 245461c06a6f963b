//! `tenxc`, the tenx compiler: `check` proves a `.tenx` program safe, `explain` prints the
//! catalog page of a diagnostic code.
//!
//! Exit codes: 0 clean, 1 the program has errors, 2 usage or IO error.

mod check_cmd;
mod config;
mod explain_cmd;
mod files;

use clap::{Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

/// The tenx compiler: checks `.tenx` agent graphs before they ship.
#[derive(Debug, Parser)]
#[command(name = "tenxc", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Examples:\n  tenxc check examples/\n  tenxc check app.tenx --format sarif > tenx.sarif\n  tenxc explain TENX0604"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check programs and report every problem at once.
    ///
    /// Each file is checked as the root of a program, with the files it imports. A directory
    /// means every `.tenx` file below it. Exit status: 0 clean, 1 errors, 2 usage or IO error.
    Check(check_cmd::CheckArgs),
    /// Print the catalog page of a diagnostic code (`TENX0302` or `unknown-node`).
    Explain {
        /// The code, e.g. `TENX0604`, or its name, e.g. `approval-bypass`. Without a code, lists
        /// every code.
        code: Option<String>,
    },
}

/// Output formats for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Source snippets with labels, for people.
    Human,
    /// One JSON document with every diagnostic.
    Json,
    /// SARIF 2.1.0, for code-scanning UIs.
    Sarif,
    /// GitHub Actions workflow commands (annotations on the pull request).
    Github,
}

/// When to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// When writing to a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check_cmd::run(&args),
        Command::Explain { code } => explain_cmd::run(code.as_deref()),
    };
    match result {
        Ok(code) => code,
        Err(report) => {
            eprintln!("{report:?}");
            ExitCode::from(2)
        }
    }
}
