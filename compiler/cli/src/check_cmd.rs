//! `tenxc check PATH...`: checks each file as a program root and prints every diagnostic.
//!
//! The diagnostic flags ([`ReportArgs`]) and the printing ([`print_diagnostics`]) are shared with
//! `tenxc build`, so both commands report exactly alike.

use crate::{ColorChoice, Format, config, files};
use clap::Args;
use miette::Result;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use tenx_compiler::LintLevels;
use tenx_diagnostics::render::{self, HumanOptions};
use tenx_diagnostics::{Diagnostic, SourceSet, sort_and_dedup};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or directories to check (a directory means every `.tenx` file below it).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// How diagnostics are printed and which lint levels apply; shared by `check` and `build`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    #[command(flatten)]
    pub lints: LintArgs,
    /// When to colour human output.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Show at most this many diagnostics in human output (0 = all); the rest are counted.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub max_diagnostics: usize,
}

/// The lint-level flags, shared by every command that compiles a program.
#[derive(Debug, Clone, Args)]
pub struct LintArgs {
    /// Make a code an error: a code (`TENX0605`), a name (`tag-matches-no-tool`), or `warnings`
    /// for every warning. Repeatable.
    #[arg(long, value_name = "CODE")]
    pub deny: Vec<String>,
    /// Silence a warning code (errors cannot be allowed). Repeatable.
    #[arg(long, value_name = "CODE")]
    pub allow: Vec<String>,
    /// The project file with lint levels (default: `tenx.toml` in the current directory or the
    /// nearest parent).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl LintArgs {
    /// The lint levels: the project file, then `--deny` and `--allow`.
    pub fn lint_levels(&self) -> Result<LintLevels> {
        config::lint_levels(self.config.as_deref(), &self.deny, &self.allow)
    }
}

pub fn run(args: &CheckArgs) -> Result<ExitCode> {
    let lints = args.report.lints.lint_levels()?;
    let config = args.report.lints.config.as_deref();
    let roots = files::find_roots(&args.paths, config)?;
    let mut reader = files::disk_reader()?;
    let mut sources = SourceSet::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut coverage = Coverage::default();
    for found in &roots {
        let root = files::read_program(&mut sources, &mut reader, &found.name, config, &mut diagnostics)?;
        coverage.add(&sources, &found.name, root);
        if let Some(root) = root {
            let checked = tenx_compiler::check(&mut sources, root, &lints);
            diagnostics.extend(checked.diagnostics);
        }
    }
    let errors = print_diagnostics(&args.report, &mut diagnostics, &sources, &coverage);
    Ok(if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// What a run checked: each program's root and file count, and every file read.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Each program checked: its root's display name and how many files it has.
    programs: Vec<(String, usize)>,
    /// Every file read, once however many programs share it.
    files: std::collections::BTreeSet<tenx_diagnostics::FileId>,
}

impl Coverage {
    /// Records the program rooted at `name`, just loaded into `sources` (`root` is `None` when
    /// the root could not be parsed at all; it still counts as a file checked).
    pub fn add(&mut self, sources: &SourceSet, name: &str, root: Option<tenx_diagnostics::FileId>) {
        let mut files = sources.imported_files();
        files.extend(root.or_else(|| sources.find(name)));
        self.programs.push((name.to_owned(), files.len().max(1)));
        self.files.extend(files);
    }
}

/// Sorts and prints `diagnostics` in the chosen format, with the summary of what `coverage`
/// checked; returns the number of errors.
pub fn print_diagnostics(
    args: &ReportArgs,
    diagnostics: &mut Vec<Diagnostic>,
    sources: &SourceSet,
    coverage: &Coverage,
) -> usize {
    sort_and_dedup(diagnostics);
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;

    let mut stdout = std::io::stdout().lock();
    let written = match args.format {
        Format::Human => {
            let color = match args.color {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
            };
            let shown = if args.max_diagnostics == 0 {
                diagnostics.len()
            } else {
                args.max_diagnostics.min(diagnostics.len())
            };
            let mut text = render::render_human(
                diagnostics.get(..shown).unwrap_or(diagnostics),
                sources,
                HumanOptions { color },
            );
            if shown < diagnostics.len() {
                text.push_str(&format!(
                    "note: {} more diagnostics not shown (use `--max-diagnostics 0` to see all)\n\n",
                    diagnostics.len() - shown
                ));
            }
            text.push_str(&summary(coverage, errors, warnings));
            let mut stderr = std::io::stderr().lock();
            stderr.write_all(text.as_bytes())
        }
        Format::Json => writeln!(stdout, "{}", render::render_json(diagnostics, sources)),
        Format::Sarif => writeln!(
            stdout,
            "{}",
            render::render_sarif(diagnostics, sources, env!("CARGO_PKG_VERSION"))
        ),
        Format::Github => {
            let text = render::render_github(diagnostics, sources);
            stdout.write_all(text.as_bytes()).and_then(|()| {
                let mut stderr = std::io::stderr().lock();
                stderr.write_all(summary(coverage, errors, warnings).as_bytes())
            })
        }
    };
    // A closed pipe (e.g. `| head`) is not a failure of the check.
    drop(written);
    errors
}

/// The lines that close human and GitHub output: the programs checked (when more than one) and
/// the totals. `checked 5 files in 4 programs: 1 error, 0 warnings`.
fn summary(coverage: &Coverage, errors: usize, warnings: usize) -> String {
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("{n} {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    let mut text = String::new();
    if coverage.programs.len() > 1 {
        for (root, files) in &coverage.programs {
            text.push_str(&format!("program {root} ({})\n", plural(*files, "file")));
        }
    }
    let checked = format!(
        "checked {} in {}",
        plural(coverage.files.len().max(coverage.programs.len().min(1)), "file"),
        plural(coverage.programs.len(), "program")
    );
    if errors == 0 && warnings == 0 {
        text.push_str(&format!("{checked}: no problems\n"));
    } else {
        text.push_str(&format!(
            "{checked}: {}, {}\n",
            plural(errors, "error"),
            plural(warnings, "warning")
        ));
    }
    text
}
