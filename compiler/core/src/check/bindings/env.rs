//! `${NAME}` environment references. The runtime reads them from its environment when it loads
//! the artifact, and only in an `http` URL or header value: every `${` there starts a
//! well-formed reference (`TENX0821`), and a `${` anywhere else is an error (`TENX0822`), since
//! nothing would ever fill it in and the text `${NAME}` would reach a model or a person as
//! written. A URL whose query passes a credential-like parameter from the environment gets a
//! warning (`TENX0823`): URLs are kept by proxies, access logs and browser histories.
//!
//! The scan reads literals as written (`\$` is an escape, never a reference).

use crate::ast::Expr;
use crate::check::Facts;
use crate::template::{is_ident, literal_body};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// Query parameter names that carry credentials, compared case-insensitively.
const CREDENTIAL_PARAMETERS: &[&str] = &[
    "token",
    "access_token",
    "api_key",
    "apikey",
    "key",
    "secret",
    "password",
    "auth",
    "signature",
    "sig",
];

/// One `${` in a literal's text as written: offsets into that text, and the name when the
/// reference is well-formed (`${NAME}` with `NAME` matching `[A-Za-z_][A-Za-z0-9_]*`).
struct Reference<'t> {
    start: usize,
    end: usize,
    name: Option<&'t str>,
}

/// Every `${` of `text` that is not escaped.
fn references(text: &str) -> Vec<Reference<'_>> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'\\' => {
                let next = text
                    .get(i + 1..)
                    .and_then(|r| r.chars().next())
                    .map_or(0, char::len_utf8);
                i += 1 + next;
            }
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                let rest = text.get(i + 2..).unwrap_or("");
                let inside = rest
                    .find(|c: char| c == '}' || c == '"' || c.is_whitespace())
                    .filter(|&close| rest.as_bytes().get(close) == Some(&b'}'));
                let (end, name) = match inside {
                    Some(close) => {
                        let name = rest.get(..close).filter(|n| is_ident(n));
                        (i + 2 + close + 1, name)
                    }
                    None => (i + 2, None),
                };
                found.push(Reference { start: i, end, name });
                i = end;
            }
            _ => i += 1,
        }
    }
    found
}

/// The text of the literal written at `span` in `file`, and the offset of its body in the file.
fn literal<'f>(facts: &Facts<'f>, file: FileId, span: Span) -> Option<(usize, &'f str)> {
    let text = &facts.sources.get(file)?.text;
    let start = span.start as usize;
    let (offset, body) = literal_body(text.get(start..span.end as usize)?)?;
    Some((start + offset, body))
}

/// Reports every malformed `${` of the URL or header value written at `span`.
pub(super) fn check_template(facts: &Facts<'_>, file: FileId, span: Span, diagnostics: &mut Vec<Diagnostic>) {
    let Some((base, body)) = literal(facts, file, span) else {
        return;
    };
    for reference in references(body).into_iter().filter(|r| r.name.is_none()) {
        let written = body.get(reference.start..reference.end).unwrap_or("${");
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0821,
                format!("`{written}` is not an environment reference"),
                file,
                Span::new(base + reference.start, base + reference.end),
            )
            .label("not `${NAME}`")
            .help("write `${NAME}`, where `NAME` is letters, digits and `_` and does not start with a digit; write `\\$` for a literal `$`"),
        );
    }
}

/// Checks the URL `url` of an `http` tool: its references, then its query.
pub(super) fn check_url(facts: &Facts<'_>, file: FileId, url: &Expr, diagnostics: &mut Vec<Diagnostic>) {
    check_template(facts, file, url.span, diagnostics);
    let Some((base, body)) = literal(facts, file, url.span) else {
        return;
    };
    let Some(question) = body.find('?') else { return };
    let query_end = body
        .get(question..)
        .and_then(|q| q.find('#'))
        .map_or(body.len(), |h| question + h);
    let mut start = question + 1;
    while start <= query_end {
        let end = body
            .get(start..query_end)
            .and_then(|p| p.find('&'))
            .map_or(query_end, |amp| start + amp);
        let part = body.get(start..end).unwrap_or("");
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        if CREDENTIAL_PARAMETERS.iter().any(|c| c.eq_ignore_ascii_case(name)) && value.contains("${") {
            diagnostics.push(credential_in_url(
                file,
                Span::new(base + start, base + end),
                name,
                value,
            ));
        }
        start = end + 1;
    }
}

fn credential_in_url(file: FileId, span: Span, name: &str, value: &str) -> Diagnostic {
    let example = match name.to_ascii_lowercase().as_str() {
        "token" | "access_token" | "auth" => format!("headers: {{ \"Authorization\": \"Bearer {value}\" }}"),
        _ => format!("headers: {{ \"X-Api-Key\": \"{value}\" }}"),
    };
    Diagnostic::new(
        Code::TENX0823,
        format!("the URL passes the credential `{name}` in its query"),
        file,
        span,
    )
    .label("a credential in the URL")
    .help(format!(
        "credentials belong in headers: remove `{name}=…` from the URL and add `{example}` to `http(…)` (the header the service expects)"
    ))
    .note("proxies, access logs and browser histories keep whole URLs, query included")
}

/// Reports every `${` in a literal of the program's own files outside `bound` (URLs, header
/// names and values).
pub(super) fn check_elsewhere(facts: &Facts<'_>, bound: &[(FileId, Span)], diagnostics: &mut Vec<Diagnostic>) {
    // Sorted by place, so the one literal that may hold a span is found by bisection: a
    // program has a bound literal per tool, and a string literal per few lines.
    let mut bound: Vec<(FileId, u32, u32)> = bound.iter().map(|(f, s)| (*f, s.start, s.end)).collect();
    bound.sort_unstable();
    let is_bound = |file: FileId, span: Span| {
        let after = bound.partition_point(|&(f, start, _)| (f, start) <= (file, span.start));
        after
            .checked_sub(1)
            .and_then(|at| bound.get(at))
            .is_some_and(|&(f, start, end)| f == file && start <= span.start && span.end <= end)
    };
    for file in facts.own_files() {
        let Some(source) = facts.sources.get(file) else {
            continue;
        };
        if source.name.starts_with("<stdlib>") || !source.text.contains("${") {
            continue;
        }
        for (start, body) in crate::check::models::string_literals(&source.text) {
            let found = references(body);
            if found.is_empty() || is_bound(file, Span::new(start, start + body.len())) {
                continue;
            }
            for reference in found {
                diagnostics.push(outside(file, start, body, &reference));
            }
        }
    }
}

fn outside(file: FileId, base: usize, body: &str, reference: &Reference<'_>) -> Diagnostic {
    let written = body.get(reference.start..reference.end).unwrap_or("${");
    let message = match reference.name {
        Some(name) => format!("environment reference `${{{name}}}` outside an `http` URL or header value"),
        None => format!("`{written}` outside an `http` URL or header value"),
    };
    Diagnostic::new(
        Code::TENX0822,
        message,
        file,
        Span::new(base + reference.start, base + reference.end),
    )
    .label("never read from the environment here")
    .help("only an `http` URL and header values are read from the environment; write `\\$` for a literal `$`, and `api_key = env(\"NAME\")` for a model's key")
    .note("elsewhere nothing fills it in: the text would reach the model or the person as written")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(&str, Option<&str>)> {
        references(text)
            .into_iter()
            .map(|r| (&text[r.start..r.end], r.name))
            .collect()
    }

    #[test]
    fn finds_references_as_written() {
        assert_eq!(found("Bearer ${PAY_TOKEN}"), vec![("${PAY_TOKEN}", Some("PAY_TOKEN"))]);
        assert_eq!(
            found("${A}/x/${_b2}"),
            vec![("${A}", Some("A")), ("${_b2}", Some("_b2"))]
        );
        assert!(found(r"costs \${amount} or $5").is_empty());
        assert_eq!(found(r"\\${A}"), vec![("${A}", Some("A"))]);
    }

    #[test]
    fn malformed_references_have_no_name() {
        assert_eq!(found("${1X}"), vec![("${1X}", None)]);
        assert_eq!(found("${}"), vec![("${}", None)]);
        assert_eq!(found("${A-B}"), vec![("${A-B}", None)]);
        assert_eq!(found("${TOKEN"), vec![("${", None)]);
        assert_eq!(found("${ A }"), vec![("${", None)]);
        assert_eq!(found("é${é}"), vec![("${é}", None)]);
    }
}
