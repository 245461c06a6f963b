//! The refund example, compiled in-process from the source embedded at build time (so the demo
//! runs from any directory and rebuilds when `main.tenx` changes), sealed and loaded as
//! `tenx serve` loads a `.tenxg` file: the seal verified, the risk policy proved again.

use miette::{Result, miette};
use tenx_artifact::{LoadedArtifact, TrustPolicy};
use tenx_diagnostics::SourceSet;
use tenx_diagnostics::render::{HumanOptions, render_human};

/// The example's display name, as `tenxc` names it from the repository root.
pub const NAME: &str = "examples/refund_approval/main.tenx";

/// The example's source.
const SOURCE: &str = include_str!("../../main.tenx");

/// Checks, lowers, seals and loads the example; its diagnostics when it has an error.
pub fn compile() -> Result<LoadedArtifact> {
    let mut sources = SourceSet::new();
    let root = sources.add(NAME, SOURCE);
    let compiled = tenx_compiler::compile(&mut sources, root, &tenx_compiler::LintLevels::default());
    let Some(artifact) = compiled.artifact else {
        let rendered = render_human(&compiled.diagnostics, &sources, HumanOptions { color: false });
        return Err(miette!(
            "{rendered}\n`{NAME}` has errors: fix them, or run `tenxc check {NAME}`"
        ));
    };
    let sealed = tenx_artifact::seal(artifact).map_err(|error| miette!("cannot seal `{NAME}`: {error}"))?;
    tenx_artifact::load(&sealed.to_bytes(), &TrustPolicy::signature_optional())
        .map_err(|error| miette!("`{NAME}` does not load: {error}"))
}
