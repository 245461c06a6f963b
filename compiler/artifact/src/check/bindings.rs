//! Self-checks of run bindings: an `http` tool's headers, `native` handler names, and the
//! artifact's list of native handlers, which must name exactly the handlers its tools run.

use std::collections::BTreeSet;

use super::{Problems, check_sorted};
use crate::Run;
use crate::model::Artifact;
use crate::model::binding::{is_header_name, is_header_value, is_native_name, is_reserved_header};

/// Checks every tool's binding and `native_handlers`.
pub(super) fn check(artifact: &Artifact, problems: &mut Problems) {
    let mut used: BTreeSet<&str> = BTreeSet::new();
    for (name, tool) in &artifact.tools {
        match &tool.run {
            Run::Http { headers, .. } => {
                let mut seen: BTreeSet<String> = BTreeSet::new();
                for (header, value) in headers {
                    if !is_header_name(header) {
                        problems.push(format!("tool `{name}`: header name `{header}` is not an HTTP token"));
                    } else if is_reserved_header(header) {
                        problems.push(format!("tool `{name}`: header `{header}` is written by the runtime"));
                    }
                    if !seen.insert(header.to_ascii_lowercase()) {
                        problems.push(format!("tool `{name}`: header `{header}` is set twice"));
                    }
                    if !is_header_value(value) {
                        problems.push(format!("tool `{name}`: header `{header}` holds a control character"));
                    }
                }
            }
            Run::Native { name: handler } => {
                if !is_native_name(handler) {
                    problems.push(format!(
                        "tool `{name}`: native handler name `{handler}` must be 1 to 128 characters of \
                         `a-z 0-9 _` in dotted parts, each starting with a letter"
                    ));
                }
                used.insert(handler);
            }
            Run::Remote | Run::Builtin { .. } | Run::Mcp { .. } => {}
        }
    }
    check_sorted(&artifact.native_handlers, || "`native_handlers`".to_string(), problems);
    let listed: BTreeSet<&str> = artifact.native_handlers.iter().map(String::as_str).collect();
    for missing in used.difference(&listed) {
        problems.push(format!("`native_handlers` lacks `{missing}`, which a tool runs"));
    }
    for extra in listed.difference(&used) {
        problems.push(format!("`native_handlers` lists `{extra}`, which no tool runs"));
    }
}
