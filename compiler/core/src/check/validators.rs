//! Validators: every regular expression compiles (`TENX0701`), every limit is in range
//! (`TENX0702`: a declared validator's `max_length`, a graph's `recursion_limit`, an agent's
//! `retries` and the `N` of its `input = last(N)`, a graph's visit limits and fork widths
//! (`max_concurrency`), and the
//! arguments of a validator use against the parameter types of its declaration), and every
//! argument of a validator use (a graph's `validate`, an agent's `guard`) is known, well-typed and present when required (`TENX0703`).
//! A declared validator that checks nothing is `TENX0704`.

use super::Facts;
use crate::ast::{Arg, Expr, ExprKind, Param, TypeExpr, ValidatorDecl, ValidatorUse};
use crate::resolve::Located;
use tenx_artifact::{DEFAULT_RETRIES, MAX_INPUT_LAST, MAX_RETRIES, MAX_VISITS, MAX_WIDTH};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// The largest `max_length` of a declared validator.
const MAX_LENGTH: i64 = 1_000_000;
/// The largest `recursion_limit` of a graph.
const MAX_RECURSION_LIMIT: u64 = 10_000;
/// How many schema names a type may go through before the check gives up (a schema naming
/// itself is reported elsewhere).
const MAX_SCHEMA_DEPTH: usize = 16;

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    for validator in &program.validators {
        check_declaration(facts, validator, diagnostics);
    }
    for graph in &program.graphs {
        let (file, decl) = (graph.file, &graph.decl);
        if let Some((limit, span)) = decl.recursion_limit
            && !(1..=MAX_RECURSION_LIMIT).contains(&limit)
        {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0702,
                    format!("`recursion_limit` of graph `{}` is out of range", decl.name.name),
                    file,
                    span,
                )
                .label(format!("must be between 1 and {MAX_RECURSION_LIMIT}"))
                .help("the limit counts node steps per run; leave it out for the default of 25"),
            );
        }
        for use_ in &decl.validate {
            check_use(facts, file, use_, diagnostics);
        }
        for limit in &decl.visits {
            let (max, span) = limit.max;
            if !(1..=MAX_VISITS).contains(&max) {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0702,
                        format!("the visit limit of `{}` is out of range", limit.node.name),
                        file,
                        span,
                    )
                    .label(format!("must be between 1 and {MAX_VISITS}"))
                    .help("`max` counts how many times one run may enter the node"),
                );
            }
        }
        for fork in &decl.forks {
            if let Some((width, span)) = fork.max_concurrency
                && !(1..=MAX_WIDTH).contains(&width)
            {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0702,
                        format!(
                            "`max_concurrency` of the {} out of `{}` is out of range",
                            fork.kind.keyword(),
                            fork.from.name
                        ),
                        file,
                        span,
                    )
                    .label(format!("must be between 1 and {MAX_WIDTH}"))
                    .help(
                        "`max_concurrency` counts the branches running at once; leave it out to run them all at once",
                    ),
                );
            }
        }
    }
    for agent in &program.agents {
        for use_ in &agent.decl.guard {
            check_use(facts, agent.file, use_, diagnostics);
        }
        if let Some((retries, span)) = agent.decl.retries
            && retries > MAX_RETRIES
        {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0702,
                    format!("`retries` of agent `{}` is out of range", agent.decl.name.name),
                    agent.file,
                    span,
                )
                .label(format!("must be between 0 and {MAX_RETRIES}"))
                .help(format!(
                    "the model is asked again at most this many times after an answer fails its guard or `output` schema; leave it out for the default of {DEFAULT_RETRIES}"
                )),
            );
        }
        if let Some(crate::ast::AgentInput::Last { count, span }) = agent.decl.input
            && !u64::try_from(count).is_ok_and(|n| (1..=MAX_INPUT_LAST).contains(&n))
        {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0702,
                    format!("`last({count})` in the `input` of agent `{}` is out of range", agent.decl.name.name),
                    agent.file,
                    span,
                )
                .label(format!("must be between 1 and {MAX_INPUT_LAST}"))
                .help("`last(N)` shows the model the last `N` messages before its own turn; `input = none` shows none of them"),
            );
        }
    }
}

/// A declared validator: its patterns compile, its `max_length` is in range, it checks something.
fn check_declaration(facts: &Facts<'_>, validator: &Located<ValidatorDecl>, diagnostics: &mut Vec<Diagnostic>) {
    let (file, decl) = (validator.file, &validator.decl);
    for pattern in &decl.deny_patterns {
        check_regex(facts, file, pattern, diagnostics);
    }
    if let Some(max_length) = &decl.max_length {
        match &max_length.kind {
            ExprKind::Number(n) => {
                let whole = n.as_i64().filter(|v| (1..=MAX_LENGTH).contains(v));
                if whole.is_none() {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::TENX0702,
                            format!("`max_length` of validator `{}` is out of range", decl.name.name),
                            file,
                            max_length.span,
                        )
                        .label(format!("must be a whole number between 1 and {MAX_LENGTH}"))
                        .help("`max_length` is the longest message accepted, in characters"),
                    );
                }
            }
            _ => diagnostics.push(
                Diagnostic::new(
                    Code::TENX0703,
                    format!("`max_length` of validator `{}` must be a number", decl.name.name),
                    file,
                    max_length.span,
                )
                .label(format!("found {}", max_length.describe()))
                .help("write the longest message accepted, in characters: `max_length = 4000`"),
            ),
        }
    }
    let checks_something = !decl.deny_patterns.is_empty()
        || !decl.deny_keywords.is_empty()
        || decl.max_length.is_some()
        || decl.builtin.is_some()
        || decl.params.is_some();
    if !checks_something && !validator.stdlib {
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0704,
                format!("validator `{}` checks nothing", decl.name.name),
                file,
                decl.name.span,
            )
            .label("no `deny_patterns`, `deny_keywords` or `max_length`")
            .help("add `deny_patterns = [\"…\"]`, `deny_keywords = [\"…\"]` or `max_length = 4000`"),
        );
    }
}

/// `TENX0701`: a regular expression that does not compile, reported at its string, narrowed to
/// the offending part when the string is written without escapes.
fn check_regex(facts: &Facts<'_>, file: FileId, pattern: &Expr, diagnostics: &mut Vec<Diagnostic>) {
    let Some(text) = pattern.as_str() else { return };
    let error = match regex::Regex::new(text) {
        Ok(_) => return,
        Err(error) => error,
    };
    let (reason, columns) = match &error {
        regex::Error::Syntax(message) => parse_regex_error(message),
        regex::Error::CompiledTooBig(limit) => (
            format!("the compiled expression is larger than the limit of {limit} bytes"),
            None,
        ),
        other => (other.to_string(), None),
    };
    let raw = facts.sources.get(file).map_or("", |s| s.slice(pattern.span));
    let narrowed = columns.and_then(|(from, to)| {
        // Only a plain `"…"` without escapes has the same text in the source as in the pattern.
        let body = raw.strip_prefix('"')?.strip_suffix('"')?;
        if raw.starts_with("\"\"\"") || body.contains('\\') || body != text {
            return None;
        }
        let start = byte_of_column(text, from)?;
        let end = byte_of_column(text, to)
            .unwrap_or(text.len())
            .max(start + 1)
            .min(text.len());
        let base = pattern.span.start as usize + 1;
        Some(Span::new(base + start, base + end))
    });
    diagnostics.push(
        Diagnostic::new(
            Code::TENX0701,
            "regular expression does not compile",
            file,
            narrowed.unwrap_or(pattern.span),
        )
        .label(reason)
        .help("patterns use Rust `regex` syntax: no look-around and no back-references; write a backslash as `\\\\`"),
    );
}

/// The reason and the 1-based character columns `[from, to)` of the first caret run in a
/// `regex` syntax error, which reads:
///
/// ```text
/// regex parse error:
///     (abc
///     ^
/// error: unclosed group
/// ```
fn parse_regex_error(message: &str) -> (String, Option<(usize, usize)>) {
    let reason = message
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or(message)
        .to_string();
    let lines: Vec<&str> = message.lines().collect();
    // Single-line patterns are indented by four spaces; multi-line ones carry line numbers,
    // which are not narrowed.
    let carets = if lines.len() == 4 { lines.get(2) } else { None };
    let columns = carets.and_then(|line| {
        let rest = line.strip_prefix("    ")?;
        let from = rest.find('^')?;
        let len = rest.get(from..)?.chars().take_while(|&c| c == '^').count();
        Some((from + 1, from + 1 + len))
    });
    (reason, columns)
}

/// The byte offset of a 1-based character column of `text`.
fn byte_of_column(text: &str, column: usize) -> Option<usize> {
    let index = column.checked_sub(1)?;
    text.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .nth(index)
}

/// A validator use in a graph's `validate`: arguments against the declaration's parameters.
fn check_use(facts: &Facts<'_>, file: FileId, use_: &ValidatorUse, diagnostics: &mut Vec<Diagnostic>) {
    let Some(validator) = facts.program.validator(&use_.name.name) else {
        return;
    };
    let decl = &validator.decl;
    let Some(params) = &decl.params else {
        if let Some(first) = use_.args.first() {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0703,
                    format!("validator `{}` takes no arguments", decl.name.name),
                    file,
                    arg_span(first),
                )
                .label("unexpected argument")
                .secondary(validator.file, decl.name.span, "declared here, without parameters")
                .help(format!("use it by name: `{}`", decl.name.name)),
            );
        }
        return;
    };
    let names: Vec<&str> = params.iter().map(|p| p.name.name.as_str()).collect();
    let mut given: Vec<&str> = Vec::new();
    for arg in &use_.args {
        let Some(name) = &arg.name else {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0703,
                    format!("the arguments of `{}` are written by name", decl.name.name),
                    file,
                    arg.value.span,
                )
                .label("positional argument")
                .help(format!("the parameters are {}", backticked(&names))),
            );
            continue;
        };
        if given.contains(&name.name.as_str()) {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0703,
                    format!("argument `{}` is given twice", name.name),
                    file,
                    name.span,
                )
                .label("given again here")
                .help("remove one of them"),
            );
            continue;
        }
        given.push(&name.name);
        let Some(param) = params.iter().find(|p| p.name.name == name.name) else {
            let help = crate::suggest::did_you_mean(&name.name, names.iter())
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| format!("the parameters of `{}` are {}", decl.name.name, backticked(&names)));
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0703,
                    format!("validator `{}` has no parameter `{}`", decl.name.name, name.name),
                    file,
                    name.span,
                )
                .label("unknown argument")
                .help(help),
            );
            continue;
        };
        let site = ArgSite {
            file,
            param,
            param_file: validator.file,
        };
        check_value(facts, &site, &param.ty, &arg.value, 0, diagnostics);
        if name.name == "blocked_patterns" {
            let items: Vec<&Expr> = match &arg.value.kind {
                ExprKind::List(items) => items.iter().collect(),
                _ => vec![&arg.value],
            };
            for item in items {
                check_regex(facts, file, item, diagnostics);
            }
        }
    }
    for param in params {
        if param.optional || param.default.is_some() || given.contains(&param.name.name.as_str()) {
            continue;
        }
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0703,
                format!(
                    "validator `{}` needs the argument `{}`",
                    decl.name.name, param.name.name
                ),
                file,
                use_.span,
            )
            .label(format!("`{}` is missing", param.name.name))
            .secondary(validator.file, param.name.span, "the parameter is declared here")
            .help(format!("add `{}: …` to the arguments", param.name.name)),
        );
    }
}

fn arg_span(arg: &Arg) -> Span {
    arg.name.as_ref().map_or(arg.value.span, |n| n.span.to(arg.value.span))
}

fn backticked(names: &[&str]) -> String {
    if names.is_empty() {
        return "none".to_string();
    }
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// A named argument of a type constructor: `min` in `int(min: 1)`.
fn type_arg<'a>(args: &'a [Arg], name: &str) -> Option<&'a Expr> {
    args.iter()
        .find(|a| a.name.as_ref().is_some_and(|n| n.name == name))
        .map(|a| &a.value)
}

fn as_f64(expr: &Expr) -> Option<f64> {
    match &expr.kind {
        ExprKind::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Where a validator argument is written, and the parameter it gives a value to.
struct ArgSite<'a> {
    /// The file of the use.
    file: FileId,
    /// The parameter.
    param: &'a Param,
    /// The file that declares the parameter.
    param_file: FileId,
}

/// Checks `value` against the parameter type `ty`: the basic type (`TENX0703`) and the
/// `min`/`max`, length and item-count constraints (`TENX0702`). Schema names are followed up to
/// [`MAX_SCHEMA_DEPTH`] deep; inline schemas and `object`/`any` accept any data.
fn check_value(
    facts: &Facts<'_>,
    site: &ArgSite<'_>,
    ty: &TypeExpr,
    value: &Expr,
    depth: usize,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let TypeExpr::Named {
        name, generic, args, ..
    } = ty
    else {
        return;
    };
    let (file, param) = (site.file, site.param);
    let wrong = |expected: &str| {
        Diagnostic::new(
            Code::TENX0703,
            format!("argument `{}` must be {expected}", param.name.name),
            file,
            value.span,
        )
        .label(format!("found {}", value.describe()))
    };
    let out_of_range = |what: String| {
        Diagnostic::new(
            Code::TENX0702,
            format!("argument `{}` is out of range", param.name.name),
            file,
            value.span,
        )
        .label(what)
        .secondary(
            site.param_file,
            param.ty.span(),
            format!("`{}` is declared with this type", param.name.name),
        )
    };
    match name.name.as_str() {
        "int" | "number" => {
            let Some(v) = as_f64(value) else {
                let expected = if name.name == "int" {
                    "a whole number"
                } else {
                    "a number"
                };
                diagnostics.push(wrong(expected));
                return;
            };
            if name.name == "int" && value.as_i64().is_none() {
                diagnostics.push(wrong("a whole number"));
                return;
            }
            let min = type_arg(args, "min").and_then(as_f64);
            let max = type_arg(args, "max").and_then(as_f64);
            if min.is_some_and(|m| v < m) || max.is_some_and(|m| v > m) {
                diagnostics.push(out_of_range(format!("must be {}", range_text(min, max))));
            }
        }
        "bool" => {
            if !matches!(value.kind, ExprKind::Bool(_)) {
                diagnostics.push(wrong("`true` or `false`"));
            }
        }
        "string" => {
            let Some(text) = value.as_str() else {
                diagnostics.push(wrong("a string"));
                return;
            };
            let len = text.chars().count() as f64;
            let min = type_arg(args, "min_length").and_then(as_f64);
            let max = type_arg(args, "max_length").and_then(as_f64);
            if min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m) {
                diagnostics.push(out_of_range(format!("its length must be {}", range_text(min, max))));
            }
        }
        "enum" => {
            let options: Vec<&str> = args.iter().filter_map(|a| a.value.as_str()).collect();
            match value.as_str() {
                Some(text) if options.contains(&text) => {}
                Some(text) => {
                    let help = crate::suggest::did_you_mean(text, options.iter())
                        .map(|s| format!("did you mean `\"{s}\"`?"))
                        .unwrap_or_else(|| format!("the values are {}", quoted(&options)));
                    diagnostics.push(
                        Diagnostic::new(
                            Code::TENX0703,
                            format!("`\"{text}\"` is not a value of argument `{}`", param.name.name),
                            file,
                            value.span,
                        )
                        .label("not one of the allowed values")
                        .help(help),
                    );
                }
                None => diagnostics.push(wrong(&format!("one of {}", quoted(&options)))),
            }
        }
        "list" => {
            let ExprKind::List(items) = &value.kind else {
                diagnostics.push(wrong("a list `[…]`"));
                return;
            };
            let count = items.len() as f64;
            let min = type_arg(args, "min_items").and_then(as_f64);
            let max = type_arg(args, "max_items").and_then(as_f64);
            if min.is_some_and(|m| count < m) || max.is_some_and(|m| count > m) {
                diagnostics.push(out_of_range(format!(
                    "the number of items must be {}",
                    range_text(min, max)
                )));
            }
            if let Some(inner) = generic {
                for item in items {
                    check_value(facts, site, inner, item, depth, diagnostics);
                }
            }
        }
        "object" => {
            if !matches!(value.kind, ExprKind::Map(_)) {
                diagnostics.push(wrong("a map `{ … }`"));
            }
        }
        "any" => {}
        other => {
            if depth >= MAX_SCHEMA_DEPTH {
                return;
            }
            if let Some(schema) = facts.program.schema(other) {
                check_value(facts, site, &schema.decl.ty, value, depth + 1, diagnostics);
            }
        }
    }
}

fn range_text(min: Option<f64>, max: Option<f64>) -> String {
    match (min, max) {
        (Some(min), Some(max)) => format!("between {min} and {max}"),
        (Some(min), None) => format!("at least {min}"),
        (None, Some(max)) => format!("at most {max}"),
        (None, None) => "in range".to_string(),
    }
}

fn quoted(options: &[&str]) -> String {
    options
        .iter()
        .map(|o| format!("`\"{o}\"`"))
        .collect::<Vec<_>>()
        .join(", ")
}
