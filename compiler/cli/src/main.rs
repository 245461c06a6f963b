//! `tenxc`, the tenx compiler: `check` proves a `.tenx` program safe, `build` seals it into an
//! artifact, `inspect` verifies and summarises an artifact, `graph` draws a program, `keygen`
//! makes a signing key pair, `fmt` rewrites sources in the canonical layout, `test` runs a
//! program's `test` blocks on the engine, `init` scaffolds a project, `lsp` is the language server
//! editors start, and `explain` prints the catalog page of a diagnostic code.
//!
//! Exit codes: 0 clean, 1 the program has errors, 2 usage or IO error.

mod build_cmd;
mod check_cmd;
mod config;
mod dev_cmd;
mod explain_cmd;
mod files;
mod fmt_cmd;
mod graph_cmd;
mod init_cmd;
mod inspect_cmd;
mod keygen_cmd;
mod lsp;
mod test_cmd;
mod test_run;

use clap::{Parser, Subcommand, ValueEnum};

/// mimalloc: a check allocates and frees a tree of small values, and the language server does so
/// after every edit; glibc's malloc and free were a sixth of its profile.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::process::ExitCode;

/// The tenx compiler: checks `.tenx` agent graphs before they ship.
#[derive(Debug, Parser)]
#[command(name = "tenxc", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Examples:\n  tenxc check examples/\n  tenxc check app.tenx --format sarif > tenx.sarif\n  tenxc build app.tenx -o app.tenxg\n  tenxc inspect app.tenxg\n  tenxc graph app.tenx --format mermaid\n  tenxc fmt --check .\n  tenxc test examples/\n  tenxc init my_agent\n  tenxc lsp\n  tenxc explain TENX0604"
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
    /// Compile a program into a sealed artifact (`.tenxg`), optionally signed.
    ///
    /// Diagnostics are printed as by `check`; with any error nothing is written. Exit status: 0
    /// built, 1 errors, 2 usage or IO error.
    Build(build_cmd::BuildArgs),
    /// Verify a sealed artifact as a host would, and summarise what it runs.
    ///
    /// Exit status: 0 verified, 2 refused (altered, unsigned, untrusted, too new, malformed) or
    /// unreadable.
    Inspect(inspect_cmd::InspectArgs),
    /// Draw the graphs of a program (`.tenx`) or an artifact (`.tenxg`) as Mermaid or DOT.
    Graph(graph_cmd::GraphArgs),
    /// Make an Ed25519 key pair for `build --sign` and `inspect --trust`.
    Keygen(keygen_cmd::KeygenArgs),
    /// Rewrite `.tenx` files in the one canonical layout, or with `--check` show what would change.
    ///
    /// A file with syntax errors is left as it was. Exit status: 0 done (or, with `--check`,
    /// nothing would change), 1 a syntax error or a file `--check` would change, 2 usage or IO
    /// error.
    Fmt(fmt_cmd::FmtArgs),
    /// Compile a program, serve it behind the standard API, and rebuild and reload it when its
    /// sources change (threads are kept; a source that no longer checks keeps the last good
    /// graph serving). The same settings as `tenx serve` (`tenx.toml` `[serve]`, environment,
    /// flags).
    Dev(dev_cmd::DevArgs),
    /// Create a project: `tenx.toml`, `main.tenx` with a scripted model and a test,
    /// `.gitignore` and a CI workflow. Refuses a folder that exists and is not empty.
    Init(init_cmd::InitArgs),
    /// Run the `test` blocks of programs on the engine, with scripted models and mocked tools.
    ///
    /// Exit status: 0 every test passed, 1 a test failed, 2 a program does not check, or a
    /// usage or IO error.
    Test(test_cmd::TestArgs),
    /// Run the language server on stdin and stdout, for editors (diagnostics as you type,
    /// hover, definition, references, completion, rename, outline, formatting, quick fixes).
    Lsp {
        /// Accepted for editors that always pass it; stdio is the only transport.
        #[arg(long, hide = true)]
        stdio: bool,
    },
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
    guarded(|| match cli.command {
        Command::Check(args) => check_cmd::run(&args),
        Command::Build(args) => build_cmd::run(&args),
        Command::Inspect(args) => inspect_cmd::run(&args),
        Command::Graph(args) => graph_cmd::run(&args),
        Command::Keygen(args) => keygen_cmd::run(&args),
        Command::Fmt(args) => fmt_cmd::run(&args),
        Command::Dev(args) => dev_cmd::run(&args),
        Command::Test(args) => test_cmd::run(&args),
        Command::Init(args) => init_cmd::run(&args),
        Command::Lsp { stdio: _ } => lsp::run(),
        Command::Explain { code } => explain_cmd::run(code.as_deref()),
    })
}

/// Runs a command and turns its outcome into the exit status. An error is printed and exits 2;
/// so does a panic (a bug in tenxc), which must never end as a pass: the panic message has
/// already been printed by the panic hook.
fn guarded(command: impl FnOnce() -> miette::Result<ExitCode>) -> ExitCode {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(command)) {
        Ok(Ok(code)) => code,
        Ok(Err(report)) => {
            eprintln!("{report:?}");
            ExitCode::from(2)
        }
        Err(_) => {
            eprintln!(
                "internal error: tenxc stopped on a bug; nothing was checked to the end, so this run fails. Please report it with the program"
            );
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::guarded;
    use std::process::ExitCode;

    #[test]
    fn a_panic_fails_the_run_with_status_2() {
        assert_eq!(guarded(|| Ok(ExitCode::SUCCESS)), ExitCode::SUCCESS);
        assert_eq!(guarded(|| panic!("injected failure")), ExitCode::from(2));
        assert_eq!(guarded(|| Err(miette::miette!("usage"))), ExitCode::from(2));
    }
}
