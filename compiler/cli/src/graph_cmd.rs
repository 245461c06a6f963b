//! `tenxc graph PATH|FILE --format mermaid|dot`: draws the graphs of a program. A `.tenxg` file
//! is loaded and verified like `tenxc inspect` does (signature optional); any other path is a
//! root `.tenx` file, compiled in memory. Diagnostics of a `.tenx` program go to stderr as for
//! `tenxc check`; with errors nothing is drawn and the exit status is 1.

use crate::{check_cmd, files, inspect_cmd};
use clap::{Args, ValueEnum};
use miette::Result;
use std::path::PathBuf;
use std::process::ExitCode;
use tenx_artifact::TrustPolicy;
use tenx_diagnostics::Diagnostic;
use tenxc::picture::{self, PictureFormat};

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// A root `.tenx` file, a directory that holds one program, or a sealed `.tenxg` artifact.
    #[arg(value_name = "PATH|FILE")]
    pub path: PathBuf,
    /// The picture's language.
    #[arg(long, value_enum, default_value = "mermaid")]
    pub format: GraphFormat,
    /// Diagnostic flags for a `.tenx` program (as for `tenxc check`; its output format is human).
    #[command(flatten)]
    pub lints: check_cmd::LintArgs,
}

/// Picture formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// Mermaid `flowchart` text (renders on GitHub and in many Markdown viewers).
    Mermaid,
    /// Graphviz DOT text (`dot -Tsvg`).
    Dot,
}

pub fn run(args: &GraphArgs) -> Result<ExitCode> {
    let format = match args.format {
        GraphFormat::Mermaid => PictureFormat::Mermaid,
        GraphFormat::Dot => PictureFormat::Dot,
    };
    let artifact = if args.path.extension().is_some_and(|e| e == "tenxg") {
        inspect_cmd::load_file(&args.path, &TrustPolicy::signature_optional())?.artifact
    } else {
        let report = check_cmd::ReportArgs {
            format: crate::Format::Human,
            lints: args.lints.clone(),
            color: crate::ColorChoice::Auto,
            max_diagnostics: 200,
        };
        let lints = args.lints.lint_levels()?;
        let mut program = files::compile_program(&args.path, "graph", &lints, args.lints.config.as_deref())?;
        if !program.diagnostics.is_empty() {
            check_cmd::print_diagnostics(&report, &mut program.diagnostics, &program.sources, &program.coverage);
        }
        match program
            .artifact
            .filter(|_| !program.diagnostics.iter().any(Diagnostic::is_error))
        {
            Some(artifact) => artifact,
            None => return Ok(ExitCode::from(1)),
        }
    };
    print!("{}", picture::render(&artifact, format));
    Ok(ExitCode::SUCCESS)
}
