//! Fuzz target: any bytes, as UTF-8 (lossily), go through parse + resolve + check + render. The
//! property is that nothing panics, overflows the stack or hangs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tenx_compiler::LintLevels;
use tenx_diagnostics::SourceSet;
use tenx_diagnostics::render::{HumanOptions, render_human};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut sources = SourceSet::new();
    let root = sources.add("fuzz.tenx", text.as_ref());
    let checked = tenx_compiler::check(&mut sources, root, &LintLevels::default());
    let _ = render_human(&checked.diagnostics, &sources, HumanOptions { color: false });
});
