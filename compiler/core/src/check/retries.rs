//! Retry policies, on a tool (`retry = { … }`) and on a graph's nodes (`retry = { node: { … }
//! }`): each is a map of `attempts`, `backoff`, `max_backoff` and `on`, each key once with a
//! value of its kind (`TENX0706`); `attempts` is 2 to 10 (`TENX0707`); the waits are longer
//! than zero and `backoff` is at most `max_backoff` (`TENX0708`); `on` names known error
//! classes, each once, at least one (`TENX0709`). A policy that retries a tool's calls, the
//! tool's own or one at a tool node, needs a tool whose repeated call cannot act twice
//! (`TENX0361`, the rule of [`tenx_artifact::retry_refusal`]), and never one the client runs
//! (`TENX0362`). Which nodes a graph's `retry` may name is checked in `check/graph/retries`.

use super::Facts;
use crate::ast::{Expr, RunBinding, ToolDecl};
use crate::resolve::Located;
use crate::retry::{ERROR_CLASSES, Problem, RETRY_KEYS};
use std::collections::BTreeMap;
use tenx_artifact::{DEFAULT_MAX_BACKOFF_MS, MAX_ATTEMPTS, MIN_ATTEMPTS};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    for tool in facts.program.tools.iter() {
        let Some(retry) = &tool.decl.retry else { continue };
        policy(tool.file, retry, diagnostics);
        if let Some(d) = refusal(tool, tool.file, retry.span, None) {
            diagnostics.push(d);
        }
    }
    for (graph, topology) in facts.program.graphs.iter().zip(&facts.topologies) {
        for retry in &graph.decl.retry {
            policy(graph.file, &retry.policy, diagnostics);
            let tool = topology
                .index
                .get(&retry.node.name)
                .and_then(|&id| topology.nodes.get(id))
                .and_then(|node| node.decl.tool())
                .and_then(|t| facts.program.tools.get(t));
            if let Some(tool) = tool
                && let Some(d) = refusal(tool, graph.file, retry.node.span, Some(&retry.node.name))
            {
                diagnostics.push(d);
            }
        }
    }
}

/// Reports what is wrong with the policy `expr`.
fn policy(file: FileId, expr: &Expr, diagnostics: &mut Vec<Diagnostic>) {
    let (policy, problems) = crate::retry::read(expr);
    for problem in problems {
        diagnostics.push(malformed(file, &problem));
    }
    if let Some((attempts, span)) = policy.attempts
        && !u64::try_from(attempts).is_ok_and(|n| (MIN_ATTEMPTS..=MAX_ATTEMPTS).contains(&n))
    {
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0707,
                format!("`attempts` must be {MIN_ATTEMPTS} to {MAX_ATTEMPTS}, not {attempts}"),
                file,
                span,
            )
            .label("out of range")
            .help("`attempts` counts the first try: `2` retries once; remove `retry` for a call that is never retried"),
        );
    }
    for (key, value) in [("backoff", policy.backoff), ("max_backoff", policy.max_backoff)] {
        if let Some((0, span)) = value {
            diagnostics.push(
                Diagnostic::new(Code::TENX0708, format!("`{key}` must be longer than zero"), file, span)
                    .label("no wait at all")
                    .help("a retry sent at once meets the same overloaded service; wait at least `100ms`"),
            );
        }
    }
    if let Some((backoff, span)) = policy.backoff
        && backoff > 0
    {
        let max = policy.max_backoff.map_or(DEFAULT_MAX_BACKOFF_MS, |(ms, _)| ms);
        if max > 0 && backoff > max {
            let mut d = Diagnostic::new(
                Code::TENX0708,
                format!(
                    "`backoff` ({}) is longer than `max_backoff` ({})",
                    duration(backoff),
                    duration(max)
                ),
                file,
                span,
            )
            .label("the first wait is longer than the longest");
            d = match policy.max_backoff {
                Some((_, max_span)) => d
                    .secondary(file, max_span, "the longest wait")
                    .help("make `max_backoff` at least `backoff`"),
                None => d.help(format!(
                    "`max_backoff` is {} when left out: set it to at least `backoff`",
                    duration(DEFAULT_MAX_BACKOFF_MS)
                )),
            };
            diagnostics.push(d);
        }
    }
    if let Some((classes, list_span)) = &policy.on {
        error_classes(file, classes, *list_span, diagnostics);
    }
}

/// Reports unknown, repeated and missing error classes in `on` (`TENX0709`).
fn error_classes(file: FileId, classes: &[(String, Span)], list_span: Span, diagnostics: &mut Vec<Diagnostic>) {
    if classes.is_empty() {
        diagnostics.push(
            Diagnostic::new(Code::TENX0709, "`on` lists no error class", file, list_span)
                .label("nothing would be retried")
                .help(format!(
                    "list the errors to retry, from {}, or remove `retry`",
                    quoted(&ERROR_CLASSES, "or")
                )),
        );
    }
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    for (name, span) in classes {
        if !ERROR_CLASSES.contains(&name.as_str()) {
            let help = crate::suggest::did_you_mean(name, ERROR_CLASSES.iter())
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| format!("the error classes are {}", quoted(&ERROR_CLASSES, "and")));
            diagnostics.push(
                Diagnostic::new(Code::TENX0709, format!("unknown error class `{name}`"), file, *span)
                    .label("not an error class")
                    .help(help),
            );
        } else if let Some(first) = seen.get(name.as_str()) {
            diagnostics.push(
                Diagnostic::new(Code::TENX0709, format!("`{name}` is listed twice in `on`"), file, *span)
                    .label("listed again here")
                    .secondary(file, *first, "first listed here")
                    .help("list each error class once"),
            );
        } else {
            seen.insert(name, *span);
        }
    }
}

/// The diagnostic for how a policy is written (`TENX0706`).
fn malformed(file: FileId, problem: &Problem<'_>) -> Diagnostic {
    match problem {
        Problem::NotAMap(expr) => Diagnostic::new(
            Code::TENX0706,
            format!("a retry policy must be a map, not {}", expr.describe()),
            file,
            expr.span,
        )
        .label("not a retry policy")
        .help("write `{ attempts: 3, backoff: 1s, max_backoff: 30s, on: [timeout, server_error] }`; every key may be left out"),
        Problem::UnknownKey(entry) => {
            let help = crate::suggest::did_you_mean(&entry.key, RETRY_KEYS.iter())
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| format!("a retry policy's keys are {}", quoted(&RETRY_KEYS, "and")));
            Diagnostic::new(
                Code::TENX0706,
                format!("a retry policy has no key `{}`", entry.key),
                file,
                entry.key_span,
            )
            .label("unknown key")
            .help(help)
        }
        Problem::RepeatedKey(entry, first) => Diagnostic::new(
            Code::TENX0706,
            format!("`{}` is given twice in the retry policy", entry.key),
            file,
            entry.key_span,
        )
        .label("given again here")
        .secondary(file, *first, "first given here")
        .help("keep one"),
        Problem::WrongKind(key, wanted, value) => Diagnostic::new(
            Code::TENX0706,
            format!("`{key}` must be {wanted}, not {}", value.describe()),
            file,
            value.span,
        )
        .label(format!("expected {wanted}")),
    }
}

/// The diagnostic for a retry on a tool whose calls may not be repeated (`TENX0361`,
/// `TENX0362`), or `None`. `node` is the tool node the policy is for, when it is a graph's.
fn refusal(tool: &Located<ToolDecl>, file: FileId, span: Span, node: Option<&str>) -> Option<Diagnostic> {
    let decl = &tool.decl;
    let name = &decl.name.name;
    let (run, run_span) = decl.run.as_ref()?;
    let what = match node {
        Some(node) => format!("tool node `{node}`"),
        None => format!("tool `{name}`"),
    };
    let declared = |d: Diagnostic| match node {
        Some(_) => d.secondary(tool.file, decl.name.span, format!("tool `{name}` is declared here")),
        None => d,
    };
    if matches!(run, RunBinding::Remote) {
        let d = Diagnostic::new(
            Code::TENX0362,
            format!("{what} is retried, but `{name}` runs on the client (`remote`)"),
            file,
            span,
        )
        .label("a retry policy for a call the runtime does not make")
        .secondary(tool.file, *run_span, "the client runs it")
        .help("remove the retry policy: the client decides whether to run its own call again");
        return Some(declared(d));
    }
    if decl.idempotency_key.is_some() {
        return None;
    }
    let safe_method = match run {
        RunBinding::Http { method, .. } => ["GET", "PUT", "DELETE"].contains(&method.name.as_str()),
        _ => false,
    };
    if safe_method && decl.risk_level() == crate::ast::Risk::Low {
        return None;
    }
    let d = Diagnostic::new(
        Code::TENX0361,
        format!("{what} is retried, but a repeated call of `{name}` could act twice"),
        file,
        span,
    )
    .label("retried after a timeout or an error")
    .secondary(tool.file, *run_span, "no `idempotency_key` lets this call recognise a repeat")
    .help(format!(
        "give `{name}` an `idempotency_key` naming the one action a call performs; only a `low` risk `http` call with `GET`, `PUT` or `DELETE` is retried without one"
    ));
    Some(declared(d))
}

/// `a`, `b` and `c` (or `or`), each in backticks.
fn quoted(names: &[&str], conjunction: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} {conjunction} {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A duration as the language writes it: `1s`, `500ms`, `2m`.
fn duration(ms: u64) -> String {
    const UNITS: [(u64, &str); 4] = [(86_400_000, "d"), (3_600_000, "h"), (60_000, "m"), (1_000, "s")];
    UNITS
        .iter()
        .find(|(size, _)| ms.is_multiple_of(*size))
        .map_or_else(|| format!("{ms}ms"), |(size, unit)| format!("{}{unit}", ms / size))
}
