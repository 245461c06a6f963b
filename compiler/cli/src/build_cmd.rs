//! `tenxc build PATH -o FILE [--sign KEYFILE]`: compiles one root `.tenx` file (and what it
//! imports) into a sealed `.tenxg` artifact.
//!
//! Diagnostics are printed exactly as `tenxc check` prints them (same flags). With any error
//! nothing is written and the exit status is 1. On success the artifact is written (through a
//! temporary file in the same folder, renamed into place) and `built FILE: ID` is printed, on
//! stdout, or on stderr when stdout holds a JSON or SARIF document.

use crate::check_cmd::{self, ReportArgs};
use crate::{Format, files};
use clap::Args;
use miette::{IntoDiagnostic, Result, WrapErr, miette};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tenx_artifact::SecretKey;

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The program's root `.tenx` file (the files it imports are read too), or a directory that
    /// holds one program.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    /// Where to write the sealed artifact (conventionally `NAME.tenxg`).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Sign the artifact with this secret key file (made by `tenxc keygen`).
    #[arg(long, value_name = "KEYFILE")]
    pub sign: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
}

pub fn run(args: &BuildArgs) -> Result<ExitCode> {
    let lints = args.report.lints.lint_levels()?;
    let key = args.sign.as_deref().map(read_secret_key).transpose()?;
    let config = args.report.lints.config.as_deref();
    let mut program = files::compile_program(&args.path, "build", &lints, config)?;
    let errors = check_cmd::print_diagnostics(
        &args.report,
        &mut program.diagnostics,
        &program.sources,
        &program.coverage,
    );
    let Some(artifact) = program.artifact.filter(|_| errors == 0) else {
        return Ok(ExitCode::from(1));
    };
    let sealed = match &key {
        Some(key) => tenx_artifact::sign(artifact, key),
        None => tenx_artifact::seal(artifact),
    }
    .map_err(|error| {
        miette!(
            help = "this is a bug in tenxc: the checked program lowered to an artifact the loader would refuse; please report it with the program",
            "internal error: cannot seal the artifact: {error}"
        )
    })?;
    write_atomically(&args.output, &sealed.to_bytes())?;
    let mut line = format!("built {}: {}", args.output.display(), sealed.id());
    if let Some(signature) = sealed.signature() {
        line.push_str(&format!(" (signed by {})", signature.public_key().fingerprint()));
    }
    match args.report.format {
        Format::Json | Format::Sarif => eprintln!("{line}"),
        Format::Human | Format::Github => println!("{line}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads a secret key file for `--sign`.
pub fn read_secret_key(path: &Path) -> Result<SecretKey> {
    let text = std::fs::read_to_string(path)
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot read the signing key `{}`", path.display()))?;
    SecretKey::from_text(&text).map_err(|error| {
        miette!(
            help = "make a key pair with `tenxc keygen -o NAME` and sign with `NAME.secret`",
            "`{}` is not a signing key: {error}",
            path.display()
        )
    })
}

/// Writes `bytes` to `path` through a temporary file next to it, so that a reader never sees a
/// half-written artifact.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::write(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot write `{}`", path.display()))
}
