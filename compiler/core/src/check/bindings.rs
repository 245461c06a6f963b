//! Run bindings: an `http` tool's headers (`TENX0117`–`TENX0119`, `TENX0820`), the `${NAME}`
//! environment references of URLs and header values (`TENX0821`), `${…}` anywhere else
//! (`TENX0822`), credentials passed in a URL's query (`TENX0823`, a warning), and `native`
//! handler names (`TENX0824`). The name and value rules are [`tenx_artifact::binding`]'s, which
//! the artifact's self-check applies too.

mod env;
mod headers;

use super::Facts;
use crate::ast::RunBinding;
use tenx_artifact::binding::is_native_name;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    // Literals that may hold `${NAME}` (URLs, header values) or are reported otherwise (header
    // names, `TENX0117`): the scan of every other literal skips them.
    let mut bound: Vec<(FileId, Span)> = Vec::new();
    for tool in facts.program.tools.iter().filter(|t| !t.stdlib) {
        let Some((run, _)) = &tool.decl.run else { continue };
        match run {
            RunBinding::Http { url, headers, .. } => {
                bound.push((tool.file, url.span));
                env::check_url(facts, tool.file, url, diagnostics);
                if let Some(map) = headers {
                    headers::check(facts, tool.file, map, &mut bound, diagnostics);
                }
            }
            RunBinding::Native { name, span } => {
                if !is_native_name(name) {
                    diagnostics.push(invalid_native_name(tool.file, *span, name));
                }
            }
            RunBinding::Remote | RunBinding::Builtin(_) | RunBinding::Mcp { .. } => {}
        }
    }
    env::check_elsewhere(facts, &bound, diagnostics);
}

fn invalid_native_name(file: FileId, span: Span, name: &str) -> Diagnostic {
    let length = name.chars().count();
    let (message, label) = if name.is_empty() {
        ("the native handler name is empty".to_string(), "no name".to_string())
    } else if length > 128 {
        (
            "the native handler name is longer than 128 characters".to_string(),
            format!("{length} characters"),
        )
    } else {
        (
            format!("`{}` is not a native handler name", name.escape_debug()),
            "not a handler name".to_string(),
        )
    };
    Diagnostic::new(Code::TENX0824, message, file, span)
        .label(label)
        .help("a handler name is 1 to 128 characters: lowercase letters, digits and `_` in parts separated by `.`, each part starting with a letter, such as `native(\"crm.lookup\")`")
}
