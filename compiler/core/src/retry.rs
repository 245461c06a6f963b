//! What a retry policy says: `{ attempts: 3, backoff: 1s, max_backoff: 30s, on: [timeout,
//! connection, rate_limited, server_error] }`, on a tool (`retry = …`) or for one node of a
//! graph (`retry = { node: … }`). Shared by the check stage (`check/retries.rs`, which reports
//! what is wrong) and lowering (`lower/retries.rs`, which writes
//! [`tenx_artifact::RetryPolicy`]); this module reports nothing.

use crate::ast::{Expr, ExprKind, MapEntry};
use tenx_artifact::{DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS, DEFAULT_MAX_BACKOFF_MS, RetryOn, RetryPolicy};
use tenx_diagnostics::Span;

/// The keys a policy may have.
pub const RETRY_KEYS: [&str; 4] = ["attempts", "backoff", "max_backoff", "on"];

/// The error classes `on` may name, as written.
pub const ERROR_CLASSES: [&str; 4] = ["timeout", "connection", "rate_limited", "server_error"];

/// A policy's values as written; a key left out (or written wrongly) is `None`.
#[derive(Debug, Default)]
pub struct Policy {
    /// `attempts: N`, with the number's span.
    pub attempts: Option<(i64, Span)>,
    /// `backoff: 1s`, in milliseconds.
    pub backoff: Option<(u64, Span)>,
    /// `max_backoff: 30s`, in milliseconds.
    pub max_backoff: Option<(u64, Span)>,
    /// `on: [timeout, …]`: the names listed, and the list's span.
    pub on: Option<(Vec<(String, Span)>, Span)>,
}

/// What is wrong with how a policy is written (its values' ranges are judged by the check).
#[derive(Debug)]
pub enum Problem<'e> {
    /// The policy is not a map.
    NotAMap(&'e Expr),
    /// A key that is not one of [`RETRY_KEYS`].
    UnknownKey(&'e MapEntry),
    /// A key given a second time, and where it was first given.
    RepeatedKey(&'e MapEntry, Span),
    /// A value of the wrong kind: the key, what it must be, and the value (or list item).
    WrongKind(&'static str, &'static str, &'e Expr),
}

/// Reads `expr` as a policy: its values, and what is wrong with how it is written.
pub fn read(expr: &Expr) -> (Policy, Vec<Problem<'_>>) {
    let mut policy = Policy::default();
    let mut problems = Vec::new();
    let ExprKind::Map(entries) = &expr.kind else {
        problems.push(Problem::NotAMap(expr));
        return (policy, problems);
    };
    let mut seen: Vec<(&str, Span)> = Vec::new();
    for entry in entries {
        let Some(key) = RETRY_KEYS.into_iter().find(|k| *k == entry.key) else {
            problems.push(Problem::UnknownKey(entry));
            continue;
        };
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
            problems.push(Problem::RepeatedKey(entry, *first));
            continue;
        }
        seen.push((key, entry.key_span));
        let value = &entry.value;
        match key {
            "attempts" => match value.as_i64() {
                Some(n) => policy.attempts = Some((n, value.span)),
                None => problems.push(Problem::WrongKind(key, "a whole number such as `3`", value)),
            },
            "backoff" | "max_backoff" => match value.kind {
                ExprKind::Duration(ms) if key == "backoff" => policy.backoff = Some((ms, value.span)),
                ExprKind::Duration(ms) => policy.max_backoff = Some((ms, value.span)),
                _ => problems.push(Problem::WrongKind(key, "a duration such as `1s`", value)),
            },
            _ => match &value.kind {
                ExprKind::List(items) => {
                    let mut names = Vec::with_capacity(items.len());
                    for item in items {
                        match item.as_ident() {
                            Some(name) => names.push((name.name.clone(), name.span)),
                            None => problems.push(Problem::WrongKind(key, "an error class such as `timeout`", item)),
                        }
                    }
                    policy.on = Some((names, value.span));
                }
                _ => problems.push(Problem::WrongKind(
                    key,
                    "a list of error classes such as `[timeout, server_error]`",
                    value,
                )),
            },
        }
    }
    (policy, problems)
}

/// The artifact's policy for `expr`, the keys left out taking their defaults; `None` when it
/// is not a valid policy (which check reports).
pub fn lower(expr: &Expr) -> Option<RetryPolicy> {
    let (policy, problems) = read(expr);
    if !problems.is_empty() {
        return None;
    }
    let on = match &policy.on {
        Some((names, _)) => names
            .iter()
            .map(|(name, _)| RetryOn::parse(name))
            .collect::<Option<Vec<_>>>()?,
        None => RetryOn::ALL.to_vec(),
    };
    let mut lowered = RetryPolicy {
        attempts: policy
            .attempts
            .map_or(Some(DEFAULT_ATTEMPTS), |(n, _)| u64::try_from(n).ok())?,
        backoff_ms: policy.backoff.map_or(DEFAULT_BACKOFF_MS, |(ms, _)| ms),
        max_backoff_ms: policy.max_backoff.map_or(DEFAULT_MAX_BACKOFF_MS, |(ms, _)| ms),
        on,
    };
    lowered.on.sort();
    lowered.on.dedup();
    lowered.problems().is_empty().then_some(lowered)
}
