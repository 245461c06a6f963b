//! The `headers` map of an `http` tool: each name is an HTTP token (`TENX0117`) the runtime
//! does not write itself (`TENX0118`), set once compared case-insensitively (`TENX0119`); each
//! value is a one-line string without control characters (`TENX0820`) whose `${NAME}`
//! references are well-formed (`TENX0821`, see [`super::env`]).

use super::env;
use crate::ast::{Expr, ExprKind};
use crate::check::Facts;
use std::collections::BTreeMap;
use tenx_artifact::binding::{is_header_name, is_header_value, is_reserved_header};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// Checks the `headers` map `map` of a tool declared in `file`, and adds the spans of its
/// names and values to `bound`.
pub(super) fn check(
    facts: &Facts<'_>,
    file: FileId,
    map: &Expr,
    bound: &mut Vec<(FileId, Span)>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let ExprKind::Map(entries) = &map.kind else { return };
    // lowercase name → where it is first set
    let mut first: BTreeMap<String, Span> = BTreeMap::new();
    for entry in entries {
        let name = entry.key.as_str();
        bound.push((file, entry.key_span));
        bound.push((file, entry.value.span));
        if !is_header_name(name) {
            diagnostics.push(invalid_name(file, entry.key_span, name));
        } else if is_reserved_header(name) {
            diagnostics.push(reserved(file, entry.key_span, name));
        }
        match first.get(&name.to_ascii_lowercase()) {
            Some(&earlier) => diagnostics.push(
                Diagnostic::new(
                    Code::TENX0119,
                    format!("header `{name}` is set twice"),
                    file,
                    entry.key_span,
                )
                .label("set again here")
                .secondary(file, earlier, "first set here")
                .help("header names are compared case-insensitively; keep one of them")
                .note("a server that receives a header twice may read either value, or join them"),
            ),
            None => {
                first.insert(name.to_ascii_lowercase(), entry.key_span);
            }
        }
        match &entry.value.kind {
            ExprKind::Str(value) => {
                if is_header_value(value) {
                    env::check_template(facts, file, entry.value.span, diagnostics);
                } else {
                    diagnostics.push(control_character(file, entry.value.span, name, value));
                }
            }
            _ => diagnostics.push(
                Diagnostic::new(
                    Code::TENX0820,
                    format!("the value of header `{name}` is {}, not a string", entry.value.describe()),
                    file,
                    entry.value.span,
                )
                .label("not a one-line string")
                .help(format!(
                    "write the value as one string, `\"{name}\": \"…\"`, with `${{NAME}}` for a part the environment holds"
                )),
            ),
        }
    }
}

fn invalid_name(file: FileId, span: Span, name: &str) -> Diagnostic {
    Diagnostic::new(
        Code::TENX0117,
        format!("`{}` is not an HTTP header name", name.escape_debug()),
        file,
        span,
    )
    .label("not an HTTP token")
    .help("a header name is one or more ASCII letters, digits and ``!#$%&'*+-.^_`|~``, such as `Authorization` or `X-Api-Key`; it holds no space, colon or `${…}`")
}

fn reserved(file: FileId, span: Span, name: &str) -> Diagnostic {
    let lower = name.to_ascii_lowercase();
    let help = match lower.as_str() {
        "idempotency-key" => {
            "the runtime sends each call's idempotency key in `Idempotency-Key`; choose it with the tool's `idempotency_key = \"…\"` field"
        }
        "content-type" => {
            "the runtime sends the arguments as JSON with `Content-Type: application/json`; remove this header"
        }
        "host" => "the runtime sends the URL's host; put the host in the URL",
        _ if lower.starts_with("proxy-") => {
            "proxy headers belong to the connection, not to the tool; configure a proxy on the host that runs the artifact"
        }
        _ => "the runtime writes framing and hop-by-hop headers itself; remove this header",
    };
    Diagnostic::new(
        Code::TENX0118,
        format!("header `{name}` is written by the runtime"),
        file,
        span,
    )
    .label("the runtime owns this header")
    .help(help)
    .note("the runtime writes `Host`, `Content-Length`, `Content-Type`, `Transfer-Encoding`, `Connection`, `Idempotency-Key`, `Upgrade`, `TE`, `Trailer`, `Keep-Alive` and `Proxy-*`")
}

fn control_character(file: FileId, span: Span, name: &str, value: &str) -> Diagnostic {
    let line_break = value.contains(['\r', '\n']);
    let label = if line_break {
        "holds a line break"
    } else {
        "holds a control character"
    };
    let mut d = Diagnostic::new(
        Code::TENX0820,
        format!("the value of header `{name}` holds a control character"),
        file,
        span,
    )
    .label(label)
    .help(
        "remove the escape (`\\r`, `\\n`, `\\t`, `\\u{…}`) that writes it; a header value is one line of visible text",
    );
    if line_break {
        d = d.note(
            "a line break in a header value ends the header: whatever follows would be sent as headers of its own",
        );
    }
    d
}
