//! `tenxc init NAME`: scaffolds a project in the new folder `NAME/`: `tenx.toml`, a
//! `main.tenx` with a scripted model and a test, `.gitignore`, and a GitHub Actions workflow
//! that runs `tenxc fmt --check`, `tenxc check --format github` and `tenxc test`.
//!
//! An existing folder is used only when it is empty. Exit status: 0 created, 2 refused or an IO
//! error.

use clap::Args;
use miette::{IntoDiagnostic, Result, WrapErr, miette};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The folder to create (it may exist if it is empty).
    #[arg(value_name = "NAME")]
    pub name: PathBuf,
}

const TENX_TOML: &str = r#"# The tenx project file: lint levels for `tenxc check`, `tenxc build` and `tenxc test`, and the
# line width of `tenxc fmt`.
[lints]
deny_warnings = true

[fmt]
line_width = 100
"#;

const MAIN_TENX: &str = r#"// A first tenx program: one agent on a scripted model, so it runs without credentials.
// For a real model: provider = openai, name = "gpt-4o-mini", api_key = env("OPENAI_API_KEY")

import std.tools.current_time

model assistant_model {
  provider = scripted
  rules = [
    {
      match: "(?i)time",
      turns: [{ tool: "current_time", arguments: {} }, { text: "It is {result}." }]
    }
  ]
  fallback = { text: "Hello! Ask me for the time." }
}

agent assistant {
  model  = assistant_model
  prompt = "Answer the user's question in one sentence."
  tools  = [current_time]
}

graph main {
  entry = assistant
  nodes = [assistant]

  assistant -> END
}

// `tenxc test` runs these on the engine, with the tool mocked.
test "the assistant tells the time" {
  input = "What time is it?"
  mocks = { current_time: "12:00" }
  expect {
    route   = [assistant, END]
    calls   = [current_time]
    message = "It is 12:00."
    status  = completed
  }
}

test "the assistant greets" {
  input = "Hi"
  expect {
    calls   = []
    message = "Hello! Ask me for the time."
  }
}
"#;

const GITIGNORE: &str =
    "# Built artifacts (`tenxc build main.tenx -o main.tenxg`) and signing keys.\n*.tenxg\n*.secret\n";

const WORKFLOW: &str = r#"# Checks the tenx program on every push and pull request.
name: tenx

on:
  push:
  pull_request:

jobs:
  tenx:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@stable
      # Set the repository variable TENX_REPOSITORY to the git URL of the tenx sources.
      - name: Install tenxc
        run: cargo install --locked --git "${{ vars.TENX_REPOSITORY }}" tenxc
      - name: Format
        run: tenxc fmt --check .
      - name: Check
        run: tenxc check --format github .
      - name: Test
        run: tenxc test .
"#;

pub fn run(args: &InitArgs) -> Result<ExitCode> {
    let folder = &args.name;
    if folder.exists() {
        let mut entries = std::fs::read_dir(folder)
            .into_diagnostic()
            .wrap_err_with(|| format!("`{}` exists and cannot be read", folder.display()))?;
        if entries.next().is_some() {
            return Err(miette!(
                help = "choose a new name, or empty the folder first",
                "`{}` already exists and is not empty; nothing was written",
                folder.display()
            ));
        }
    }
    let files: [(&str, &str); 4] = [
        ("tenx.toml", TENX_TOML),
        ("main.tenx", MAIN_TENX),
        (".gitignore", GITIGNORE),
        (".github/workflows/tenx.yml", WORKFLOW),
    ];
    for (name, text) in files {
        write(&folder.join(name), text)?;
    }
    println!("created {}:", folder.display());
    for (name, _) in files {
        println!("  {name}");
    }
    println!("next: cd {} && tenxc check . && tenxc test", folder.display());
    Ok(ExitCode::SUCCESS)
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .into_diagnostic()
            .wrap_err_with(|| format!("cannot create `{}`", parent.display()))?;
    }
    std::fs::write(path, text)
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot write `{}`", path.display()))
}
