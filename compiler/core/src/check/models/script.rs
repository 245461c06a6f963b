//! The script of a `scripted` model: `rules` and `fallback` only on `scripted` models
//! (`TENX0806`), never together with fixed `turns` (`TENX0805`); every turn is `{ text }` or
//! `{ tool, arguments }` and every rule `{ match, turns }` (`TENX0814`); every rule's regex
//! compiles within the size limit the runtime uses (`TENX0807`) and names no capture `result`
//! (`TENX0808`); every placeholder names a capture of its rule or `result` (`TENX0809`); a
//! conversion is known and stands alone as the whole value of an argument (`TENX0810`). The tools
//! the turns call are [`super::script_tools`]'s.
//!
//! Templates are read with [`tenx_artifact::script::pieces`], the reader the runtime uses.

use crate::ast::{Expr, ExprKind, ModelDecl};
use crate::suggest::did_you_mean;
use serde_json::Value;
use tenx_artifact::script::{self, Conversion, Piece, RESULT};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// A well-formed turn as written.
pub(super) enum TurnSrc<'e> {
    /// `{ text: "…" }`.
    Text(&'e Expr),
    /// `{ tool: "name", arguments: { … } }`: the name, its expression, and the arguments with
    /// the span of each value.
    Tool {
        name: &'e str,
        name_expr: &'e Expr,
        arguments: Vec<(&'e str, &'e Expr, Value)>,
        arguments_expr: &'e Expr,
    },
}

/// The well-formed turns of a model's script, for the tool checks: one sequence for the fixed
/// turns, one per rule, and one for the fallback; a sequence is played in order.
pub(super) struct Played<'e> {
    pub sequences: Vec<Vec<TurnSrc<'e>>>,
}

/// Checks the script of one model; returns its well-formed turns.
pub(super) fn check<'e>(
    file: FileId,
    decl: &'e ModelDecl,
    provider: Option<&str>,
    known: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Played<'e> {
    let mut played = Played { sequences: Vec::new() };
    let model = &decl.name.name;
    if let Some(provider) = provider.filter(|p| *p != "scripted" && known) {
        for (field, expr) in [("rules", &decl.rules), ("fallback", &decl.fallback)] {
            if let Some(expr) = expr {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0806,
                        format!("model `{model}` has `{field}`, but only `scripted` models play rules"),
                        file,
                        expr.span,
                    )
                    .label(format!("an `{provider}` model answers for itself"))
                    .help(format!(
                        "remove `{field}`, or set `provider = scripted` to answer by rules"
                    )),
                );
            }
        }
        return played;
    }
    if let Some(turns) = &decl.turns
        && let Some(other) = decl.rules.as_ref().or(decl.fallback.as_ref())
    {
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0805,
                format!("model `{model}` has both fixed `turns` and `rules` or a `fallback`"),
                file,
                other.span,
            )
            .label("a script reacts to the user by rules")
            .secondary(file, turns.span, "or plays fixed turns")
            .help("keep either `turns`, or `rules` and `fallback`"),
        );
    }
    if let Some(turns) = &decl.turns {
        let turns = turn_list(file, turns, "`turns`", diagnostics);
        for turn in &turns {
            placeholders(file, turn, None, diagnostics);
        }
        played.sequences.push(turns);
    }
    if let Some(fallback) = &decl.fallback
        && let Some(turn) = turn(file, fallback, diagnostics)
    {
        placeholders(file, &turn, None, diagnostics);
        played.sequences.push(vec![turn]);
    }
    if let Some(rules) = &decl.rules {
        let ExprKind::List(items) = &rules.kind else {
            malformed(
                file,
                rules,
                "`rules` must be a list of `{ match: \"regex\", turns: [...] }`",
                diagnostics,
            );
            return played;
        };
        for item in items {
            let Some((pattern, turns)) = rule(file, item, diagnostics) else {
                continue;
            };
            let captures = captures(file, pattern, diagnostics);
            let turns = turn_list(file, turns, "a rule's `turns`", diagnostics);
            if let Some(captures) = &captures {
                for turn in &turns {
                    placeholders(file, turn, Some(captures), diagnostics);
                }
            }
            played.sequences.push(turns);
        }
    }
    played
}

/// `TENX0814`.
fn malformed(file: FileId, expr: &Expr, message: &str, diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.push(
        Diagnostic::new(Code::TENX0814, message.to_string(), file, expr.span)
            .label(format!("{} here", expr.describe()))
            .help("a rule is `{ match: \"regex\", turns: [...] }`, and `fallback` and each turn are `{ text: \"…\" }` or `{ tool: \"name\", arguments: { … } }`"),
    );
}

/// The entries of a map, or `None`.
fn entries(expr: &Expr) -> Option<&[crate::ast::MapEntry]> {
    match &expr.kind {
        ExprKind::Map(entries) => Some(entries),
        _ => None,
    }
}

/// `{ match: "regex", turns: [...] }`.
fn rule<'e>(file: FileId, expr: &'e Expr, diagnostics: &mut Vec<Diagnostic>) -> Option<(&'e Expr, &'e Expr)> {
    let shape = "a rule must be `{ match: \"regex\", turns: [...] }`";
    let Some(entries) = entries(expr) else {
        malformed(file, expr, shape, diagnostics);
        return None;
    };
    let get = |key: &str| entries.iter().find(|e| e.key == key).map(|e| &e.value);
    let (Some(pattern), Some(turns)) = (get("match"), get("turns")) else {
        malformed(file, expr, shape, diagnostics);
        return None;
    };
    if let Some(extra) = entries.iter().find(|e| e.key != "match" && e.key != "turns") {
        malformed(
            file,
            &extra.value,
            &format!("a rule has no field `{}`", extra.key),
            diagnostics,
        );
        return None;
    }
    if pattern.as_str().is_none() {
        malformed(file, pattern, "a rule's `match` must be a regex string", diagnostics);
        return None;
    }
    Some((pattern, turns))
}

/// The turns of a list.
fn turn_list<'e>(file: FileId, expr: &'e Expr, what: &str, diagnostics: &mut Vec<Diagnostic>) -> Vec<TurnSrc<'e>> {
    let ExprKind::List(items) = &expr.kind else {
        malformed(file, expr, &format!("{what} must be a list of turns"), diagnostics);
        return Vec::new();
    };
    items.iter().filter_map(|item| turn(file, item, diagnostics)).collect()
}

/// One turn, or `TENX0814`.
fn turn<'e>(file: FileId, expr: &'e Expr, diagnostics: &mut Vec<Diagnostic>) -> Option<TurnSrc<'e>> {
    let shape = "a turn must be `{ text: \"…\" }` or `{ tool: \"name\", arguments: { … } }`";
    let Some(entries) = entries(expr) else {
        malformed(file, expr, shape, diagnostics);
        return None;
    };
    let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
    let get = |key: &str| entries.iter().find(|e| e.key == key).map(|e| &e.value);
    match keys.as_slice() {
        ["text"] => match get("text") {
            Some(text) if text.as_str().is_some() => Some(TurnSrc::Text(text)),
            Some(other) => {
                malformed(file, other, "the `text` of a turn must be a string", diagnostics);
                None
            }
            None => None,
        },
        ["tool", "arguments"] | ["arguments", "tool"] => {
            let (name_expr, arguments_expr) = (get("tool")?, get("arguments")?);
            let Some(name) = name_expr.as_str() else {
                malformed(
                    file,
                    name_expr,
                    "the `tool` of a turn must be the tool's name as a string",
                    diagnostics,
                );
                return None;
            };
            let Some(map) = entries_of(arguments_expr) else {
                malformed(
                    file,
                    arguments_expr,
                    "the `arguments` of a turn must be a map of data",
                    diagnostics,
                );
                return None;
            };
            Some(TurnSrc::Tool {
                name,
                name_expr,
                arguments: map,
                arguments_expr,
            })
        }
        _ => {
            malformed(file, expr, shape, diagnostics);
            None
        }
    }
}

/// The entries of an arguments map with their values as JSON, when every value is data.
fn entries_of(expr: &Expr) -> Option<Vec<(&str, &Expr, Value)>> {
    entries(expr)?
        .iter()
        .map(|e| Some((e.key.as_str(), &e.value, e.value.to_json()?)))
        .collect()
}

/// The named captures of a rule's regex, or `None` when it does not compile (`TENX0807`).
/// A capture named `result` is `TENX0808`.
fn captures(file: FileId, pattern: &Expr, diagnostics: &mut Vec<Diagnostic>) -> Option<Vec<String>> {
    let text = pattern.as_str()?;
    match script::compile(text) {
        Ok(regex) => {
            let names: Vec<String> = regex.capture_names().flatten().map(str::to_string).collect();
            if names.iter().any(|n| n == RESULT) {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0808,
                        "a rule's regex names a capture `result`, which is reserved",
                        file,
                        pattern.span,
                    )
                    .label("`(?<result>…)` here")
                    .help("rename the capture: `{result}` is always the text of the last tool result"),
                );
            }
            Some(names)
        }
        Err(e) => {
            let reason = regex_reason(&e);
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0807,
                    "a rule's `match` is not a valid regex",
                    file,
                    pattern.span,
                )
                .label(reason)
                .help("write a Rust `regex` pattern; in a string, a backslash is written `\\\\`"),
            );
            None
        }
    }
}

/// The one-line reason of a regex error.
fn regex_reason(error: &regex::Error) -> String {
    match error {
        regex::Error::CompiledTooBig(limit) => format!("compiles to more than the {limit} bytes a rule may take"),
        other => {
            let text = other.to_string();
            text.lines()
                .rev()
                .find_map(|l| l.trim().strip_prefix("error: ").map(str::to_string))
                .unwrap_or_else(|| text.lines().last().unwrap_or("invalid").trim().to_string())
        }
    }
}

/// Placeholders of a turn: names (`TENX0809`) and conversions (`TENX0810`). `captures` is
/// `None` for fixed turns and the fallback.
fn placeholders(file: FileId, turn: &TurnSrc<'_>, captures: Option<&Vec<String>>, diagnostics: &mut Vec<Diagnostic>) {
    let empty = Vec::new();
    let names = captures.unwrap_or(&empty);
    let fixed = captures.is_none();
    match turn {
        TurnSrc::Text(text) => {
            template(
                file,
                text.span,
                text.as_str().unwrap_or(""),
                names,
                fixed,
                false,
                diagnostics,
            );
        }
        TurnSrc::Tool { arguments, .. } => {
            for (_, expr, value) in arguments {
                let mut strings = Vec::new();
                collect_strings(value, &mut strings);
                let whole = matches!(value, Value::String(_));
                for s in strings {
                    template(file, expr.span, s, names, fixed, whole, diagnostics);
                }
            }
        }
    }
}

/// Every string inside a JSON value.
pub(super) fn collect_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(s) => out.push(s),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
}

/// Checks one template written at `span`; `argument` says it is the whole value of an argument,
/// where a lone placeholder may convert.
fn template(
    file: FileId,
    span: Span,
    text: &str,
    captures: &[String],
    fixed: bool,
    argument: bool,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let pieces = script::pieces(text);
    let alone = pieces.len() == 1;
    for piece in &pieces {
        let Piece::Placeholder { name, conversion } = piece else {
            continue;
        };
        if *name != RESULT && !captures.iter().any(|c| c == name) {
            let mut d = Diagnostic::new(
                Code::TENX0809,
                format!("placeholder `{{{name}}}` names no capture"),
                file,
                span,
            )
            .label(format!("`{name}` is not a capture of the rule's regex"));
            let candidates: Vec<&str> = captures.iter().map(String::as_str).chain([RESULT]).collect();
            d = match did_you_mean(name, candidates.iter()) {
                Some(s) => d.help(format!("did you mean `{{{s}}}`?")),
                None if fixed => d.help(
                    "fixed turns and the fallback have no captures; they may use `{result}`, the last tool result",
                ),
                None => d.help("name a capture with `(?<name>…)` in the rule's `match`, or use `{result}`"),
            };
            diagnostics.push(d);
        }
        let Some(conversion) = conversion else { continue };
        if Conversion::from_name(conversion).is_none() {
            let help = did_you_mean(conversion, Conversion::NAMES.iter())
                .map(|s| format!("did you mean `{{{name}:{s}}}`?"))
                .unwrap_or_else(|| "the conversions are `cents`, `int` and `number`".to_string());
            diagnostics.push(
                Diagnostic::new(Code::TENX0810, format!("unknown conversion `{conversion}`"), file, span)
                    .label(format!("in `{{{name}:{conversion}}}`"))
                    .help(help),
            );
        } else if !(argument && alone) {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0810,
                    format!("conversion `{{{name}:{conversion}}}` is not the whole value of an argument"),
                    file,
                    span,
                )
                .label("a conversion here would be text")
                .help(format!(
                    "write `{{{name}}}` for text, or make `\"{{{name}:{conversion}}}\"` the whole value of a tool argument"
                )),
            );
        }
    }
}
