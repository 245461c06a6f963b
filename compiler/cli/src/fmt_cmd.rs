//! `tenxc fmt [--check] PATH...`: rewrites `.tenx` files in the canonical layout
//! ([`tenx_compiler::fmt`]). A directory means every `.tenx` file below it; `-` reads standard
//! input and writes the result to standard output.
//!
//! A file with a syntax error is left as it was and its diagnostics are printed. With `--check`
//! nothing is written: a unified diff of each file that would change is printed instead.
//! Exit status: 0 nothing to do (or everything formatted), 1 a syntax error or, with `--check`,
//! a file that would change, 2 usage or IO error.

use crate::{ColorChoice, config};
use clap::Args;
use miette::{IntoDiagnostic, Result, WrapErr, miette};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tenx_compiler::fmt::{FmtOptions, Refused, format_source};
use tenx_diagnostics::SourceSet;
use tenx_diagnostics::render::{HumanOptions, render_human};
use tenxc::programs;

#[derive(Debug, Args)]
pub struct FmtArgs {
    /// Files or directories to format (a directory means every `.tenx` file below it); `-`
    /// formats standard input to standard output.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Write nothing: print a diff of each file that would change, and exit with 1 if any would.
    #[arg(long)]
    pub check: bool,
    /// The project file with `[fmt] line_width` (default: `tenx.toml` in the current directory
    /// or the nearest parent).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// When to colour diagnostics.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
}

/// What happened to the files of one run.
#[derive(Debug, Default)]
struct Tally {
    /// Files rewritten (or, with `--check`, that would be).
    changed: usize,
    /// Files already in the canonical layout.
    unchanged: usize,
    /// Files left alone because of syntax errors.
    refused: usize,
}

pub fn run(args: &FmtArgs) -> Result<ExitCode> {
    let options = config::fmt_options(args.config.as_deref())?;
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let mut tally = Tally::default();
    let (stdin, paths): (Vec<&PathBuf>, Vec<&PathBuf>) = args.paths.iter().partition(|p| p.as_os_str() == "-");
    if !stdin.is_empty() {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .into_diagnostic()
            .wrap_err("cannot read standard input")?;
        format_one("<stdin>", bytes, None, args.check, &options, color, &mut tally)?;
    }
    if !paths.is_empty() {
        let paths: Vec<PathBuf> = paths.into_iter().cloned().collect();
        let files = programs::find_files(&paths).map_err(|error| miette!("{error}"))?;
        for file in files {
            let bytes = std::fs::read(&file.path)
                .into_diagnostic()
                .wrap_err_with(|| format!("cannot read `{}`", file.name))?;
            format_one(
                &file.name,
                bytes,
                Some(&file.path),
                args.check,
                &options,
                color,
                &mut tally,
            )?;
        }
    }
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(summary(&tally, args.check).as_bytes());
    let failed = tally.refused > 0 || (args.check && tally.changed > 0);
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Formats one file's `bytes`: rewrites `path` (or prints to standard output when there is no
/// path), prints a diff under `--check`, or prints the syntax errors that keep it as it is.
fn format_one(
    name: &str,
    bytes: Vec<u8>,
    path: Option<&Path>,
    check: bool,
    options: &FmtOptions,
    color: bool,
    tally: &mut Tally,
) -> Result<()> {
    let mut sources = SourceSet::new();
    let (file, invalid) = tenx_compiler::add_source_bytes(&mut sources, name, bytes);
    let text = sources.get(file).map(|f| f.text.clone()).unwrap_or_default();
    let result = match invalid {
        Some(diagnostic) => Err(Refused::SyntaxErrors(vec![diagnostic])),
        None => format_source(file, &text, options),
    };
    let formatted = match result {
        Ok(formatted) => formatted,
        Err(refused) => {
            tally.refused += 1;
            let why = match refused {
                Refused::SyntaxErrors(diagnostics) => render_human(&diagnostics, &sources, HumanOptions { color }),
                Refused::NotTheSameProgram(at) => {
                    let place = sources
                        .get(file)
                        .map(|f| f.line_col(at))
                        .map_or(String::new(), |p| format!(":{}:{}", p.line, p.column));
                    format!(
                        "internal error: formatting `{name}` would change the program (at {name}{place}); please report it with the file\n"
                    )
                }
            };
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "{why}{name}: left as it was");
            if path.is_none() && !check {
                // Standard input is echoed unchanged, so a pipe never loses the text.
                let _ = std::io::stdout().lock().write_all(text.as_bytes());
            }
            return Ok(());
        }
    };
    let changed = formatted != text;
    if changed {
        tally.changed += 1;
    } else {
        tally.unchanged += 1;
    }
    let mut stdout = std::io::stdout().lock();
    match (check, path) {
        (true, _) => {
            if changed {
                // A diff of a large file with changes everywhere could take minutes to be
                // minimal; past the deadline it is still correct, only longer.
                let diff = similar::TextDiff::configure()
                    .timeout(std::time::Duration::from_secs(1))
                    .diff_lines(&text, &formatted)
                    .unified_diff()
                    .context_radius(3)
                    .header(name, &format!("{name} (formatted)"))
                    .to_string();
                let _ = stdout.write_all(diff.as_bytes());
            }
        }
        (false, None) => {
            let _ = stdout.write_all(formatted.as_bytes());
        }
        (false, Some(path)) => {
            if changed {
                write_in_place(path, &formatted).wrap_err_with(|| format!("cannot write `{name}`"))?;
            }
        }
    }
    Ok(())
}

/// Replaces the file at `path` with `text`: written next to it first, then renamed over it, so
/// the file is never left half written.
fn write_in_place(path: &Path, text: &str) -> Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tenxc-fmt");
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, text).into_diagnostic()?;
    if let Ok(metadata) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temporary, metadata.permissions());
    }
    std::fs::rename(&temporary, path).into_diagnostic().inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// `formatted 2 files, 5 already formatted` (or `2 files would be reformatted` under `--check`),
/// and the files left alone.
fn summary(tally: &Tally, check: bool) -> String {
    let files = |n: usize| {
        if n == 1 {
            "1 file".to_owned()
        } else {
            format!("{n} files")
        }
    };
    let mut text = if check {
        format!(
            "{} would be reformatted, {} already formatted",
            files(tally.changed),
            tally.unchanged
        )
    } else {
        format!(
            "formatted {}, {} already formatted",
            files(tally.changed),
            tally.unchanged
        )
    };
    if tally.refused > 0 {
        text.push_str(&format!(
            ", {} left as they were (see the errors above)",
            files(tally.refused)
        ));
    }
    text.push('\n');
    text
}
