//! Lint levels from the command line and the project file `tenx.toml`:
//!
//! ```toml
//! [lints]
//! deny = ["tag-matches-no-tool"]   # codes or names
//! allow = ["TENX0901"]             # warnings only
//! deny_warnings = true
//! ```
//!
//! The file is read first; command-line flags override it.
//!
//! `tenxc fmt` reads its one setting from the same file:
//!
//! ```toml
//! [fmt]
//! line_width = 100   # the default
//! ```

use miette::{IntoDiagnostic, Result, WrapErr, miette};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use tenx_compiler::LintLevels;
use tenx_compiler::lints::Level;
use tenx_diagnostics::Code;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectFile {
    #[serde(default)]
    lints: LintsSection,
    #[serde(default)]
    fmt: FmtSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FmtSection {
    line_width: Option<usize>,
}

/// The narrowest and widest line widths `[fmt] line_width` accepts.
const LINE_WIDTHS: std::ops::RangeInclusive<usize> = 40..=400;

/// The formatter's options: `[fmt]` of `tenx.toml` (given or found), or the defaults.
pub fn fmt_options(config: Option<&Path>) -> Result<tenx_compiler::fmt::FmtOptions> {
    let mut options = tenx_compiler::fmt::FmtOptions::default();
    let path = match config {
        Some(p) => Some(p.to_path_buf()),
        None => find_project_file(),
    };
    let Some(path) = path else { return Ok(options) };
    let file = read_project_file(&path)?;
    if let Some(width) = file.fmt.line_width {
        if !LINE_WIDTHS.contains(&width) {
            return Err(miette!(
                help = "the default is 100",
                "{}: `[fmt] line_width` must be between {} and {}, not {width}",
                path.display(),
                LINE_WIDTHS.start(),
                LINE_WIDTHS.end()
            ));
        }
        options.line_width = width;
    }
    Ok(options)
}

fn read_project_file(path: &Path) -> Result<ProjectFile> {
    let text = std::fs::read_to_string(path)
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot read `{}`", path.display()))?;
    toml::from_str(&text)
        .into_diagnostic()
        .wrap_err_with(|| format!("`{}` is not a valid tenx project file", path.display()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LintsSection {
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny_warnings: bool,
}

fn find_project_file() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors().map(|d| d.join("tenx.toml")).find(|p| p.is_file())
}

/// The lint levels: `tenx.toml` (given or found), then `--deny` and `--allow`.
pub fn lint_levels(config: Option<&Path>, deny: &[String], allow: &[String]) -> Result<LintLevels> {
    let mut levels = LintLevels::default();
    let path = match config {
        Some(p) => Some(p.to_path_buf()),
        None => find_project_file(),
    };
    if let Some(path) = path {
        let file = read_project_file(&path)?;
        levels.deny_warnings = file.lints.deny_warnings;
        apply(&mut levels, &file.lints.deny, Level::Deny, &path.display().to_string())?;
        apply(
            &mut levels,
            &file.lints.allow,
            Level::Allow,
            &path.display().to_string(),
        )?;
    }
    apply(&mut levels, deny, Level::Deny, "--deny")?;
    apply(&mut levels, allow, Level::Allow, "--allow")?;
    Ok(levels)
}

fn apply(levels: &mut LintLevels, names: &[String], level: Level, origin: &str) -> Result<()> {
    for name in names {
        if name == "warnings" {
            if level == Level::Deny {
                levels.deny_warnings = true;
                continue;
            }
            levels.deny_warnings = false;
            continue;
        }
        let Some(code) = Code::parse(name) else {
            return Err(miette!(
                help = "run `tenxc explain` to list every code",
                "{origin}: unknown diagnostic code `{name}`"
            ));
        };
        if level == Level::Allow && !LintLevels::can_allow(code) {
            return Err(miette!(
                help = "only warnings can be allowed; fix the error instead",
                "{origin}: `{code}` ({}) is an error and cannot be allowed",
                code.name()
            ));
        }
        levels.set(code, level);
    }
    Ok(())
}
