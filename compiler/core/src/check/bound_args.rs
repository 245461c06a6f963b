//! Bound arguments: a tool's `bind = { order_id: state.order_id, user_id: caller.user_id }`
//! names parameters the runtime fills, so a model never chooses (or sees) them. Each key is a
//! parameter of the tool, bound once (`TENX0617`, `TENX0209`); each source is `state.FIELD`,
//! `caller.user_id`, `caller.scopes`, `caller.roles` or `caller.claim("name")` (`TENX0618`); a
//! state source is a field of every graph in which the tool can run, as approval evidence is
//! (`TENX0619`: a graph with a tool node running it, or an agent node that can call it, itself or
//! through agents it calls as tools at any depth, since a called agent's tools run over the
//! calling graph's state); the source's type fits the parameter (`TENX0620`: the caller's id and claims are
//! strings, its scopes and roles lists of strings); and a bound parameter has no default
//! (`TENX0621`), since the runtime always fills it.
//!
//! A tool node binds too: its other arguments come from the state fields of the same names, its
//! bound ones from their sources, so the caller's identity reaches a tool node the same way.
//! Lowering reads the bindings through [`lower`], and the scripted-turn check through
//! [`bound_names`], so the artifact holds exactly what was checked here.

use super::Facts;
use super::evidence::graphs_running_tool;
use crate::ast::{Expr, ExprKind, MapEntry, Param, ToolDecl, TypeExpr};
use crate::resolve::{Located, Program};
use crate::suggest::did_you_mean;
use serde_json::Value;
use std::collections::BTreeMap;
use tenx_artifact::bound::is_claim_name;
use tenx_artifact::{BoundSource, CallerAttribute};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    for (t, tool) in facts.program.tools.iter_enumerated() {
        let Some(bind) = &tool.decl.bind else { continue };
        let ExprKind::Map(entries) = &bind.kind else {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0618,
                    "`bind` must be a map of parameters to sources",
                    tool.file,
                    bind.span,
                )
                .label(format!("found {}", bind.describe()))
                .help("write `bind = { user_id: caller.user_id, order_id: state.order_id }`"),
            );
            continue;
        };
        let graphs = graphs_running_tool(facts, t);
        let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
        for entry in entries {
            if let Some(first) = seen.get(entry.key.as_str()) {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0209,
                        format!("parameter `{}` is bound twice", entry.key),
                        tool.file,
                        entry.key_span,
                    )
                    .label("bound again here")
                    .secondary(tool.file, *first, "first bound here")
                    .help("keep one source for each bound parameter"),
                );
                continue;
            }
            seen.insert(&entry.key, entry.key_span);
            let Some(param) = parameter(facts.program, &tool.decl, &entry.key) else {
                diagnostics.push(not_a_parameter(facts.program, tool, &entry.key, entry.key_span));
                continue;
            };
            let source = match parse_source(&entry.value) {
                Ok(source) => source,
                Err(help) => {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::TENX0618,
                            format!("`{}` is bound to something the runtime cannot fill it from", entry.key),
                            tool.file,
                            entry.value.span,
                        )
                        .label("not a binding source")
                        .help(help),
                    );
                    continue;
                }
            };
            if let Some(default) = param.default {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0621,
                        format!("bound parameter `{}` has a default", entry.key),
                        tool.file,
                        default,
                    )
                    .label("the runtime always fills it, so this default is never used")
                    .secondary(tool.file, entry.value.span, "bound here")
                    .help("remove the default, or the binding"),
                );
            }
            match &source {
                BoundSource::State(field) => {
                    check_state(facts, (t, tool), &graphs, entry, &param, field, diagnostics);
                }
                BoundSource::Caller(attribute) => {
                    let (what, kind) = if attribute.is_list() {
                        ("a list of strings", Kind::List(Some(Box::new(Kind::String))))
                    } else {
                        ("a string", Kind::String)
                    };
                    let source = format!("`caller.{}` is {what}", attribute.as_str());
                    check_fit(
                        tool.file,
                        &entry.key,
                        &param,
                        &kind,
                        &source,
                        entry.value.span,
                        diagnostics,
                    );
                }
                BoundSource::Claim(claim) => {
                    let source = format!("claim `{claim}` is a string");
                    check_fit(
                        tool.file,
                        &entry.key,
                        &param,
                        &Kind::String,
                        &source,
                        entry.value.span,
                        diagnostics,
                    );
                }
            }
        }
    }
}

/// The names `tool` binds, as written (a scripted turn may not set them).
pub(crate) fn bound_names(tool: &ToolDecl) -> Vec<&str> {
    match tool.bind.as_ref().map(|b| &b.kind) {
        Some(ExprKind::Map(entries)) => entries.iter().map(|e| e.key.as_str()).collect(),
        _ => Vec::new(),
    }
}

/// The parameters `tool` binds to a state field, as check accepts them: (parameter, field,
/// where the source is written).
pub(crate) fn state_bindings<'a>(program: &'a Program, tool: &'a ToolDecl) -> Vec<(&'a str, String, Span)> {
    let Some(ExprKind::Map(entries)) = tool.bind.as_ref().map(|b| &b.kind) else {
        return Vec::new();
    };
    let params = super::evidence::tool_params(program, tool);
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for entry in entries {
        let name = entry.key.as_str();
        if !params.contains(&name) || seen.contains(&name) {
            continue;
        }
        seen.push(name);
        if let Ok(BoundSource::State(field)) = parse_source(&entry.value) {
            out.push((name, field, entry.value.span));
        }
    }
    out
}

/// The bindings as the artifact holds them: every entry check accepts.
pub(crate) fn lower(program: &Program, tool: &ToolDecl) -> BTreeMap<String, BoundSource> {
    let Some(ExprKind::Map(entries)) = tool.bind.as_ref().map(|b| &b.kind) else {
        return BTreeMap::new();
    };
    let params = super::evidence::tool_params(program, tool);
    let mut out = BTreeMap::new();
    for entry in entries {
        if params.contains(&entry.key.as_str())
            && let Ok(source) = parse_source(&entry.value)
        {
            out.entry(entry.key.clone()).or_insert(source);
        }
    }
    out
}

fn names(path: &[crate::ast::Ident]) -> Vec<&str> {
    path.iter().map(|i| i.name.as_str()).collect()
}

/// What a source means; the error is the help to show.
fn parse_source(value: &Expr) -> Result<BoundSource, String> {
    const FORMS: &str =
        "a source is `state.FIELD`, `caller.user_id`, `caller.scopes`, `caller.roles` or `caller.claim(\"name\")`";
    match &value.kind {
        ExprKind::Path(path) => match names(path).as_slice() {
            ["state", field] => Ok(BoundSource::State((*field).to_string())),
            ["state", field, ..] => Err(format!(
                "a binding takes a whole state field: write `state.{field}` and give the parameter the field's type"
            )),
            ["caller", attribute] => CallerAttribute::ALL
                .iter()
                .find(|(name, _)| name == attribute)
                .map(|(_, a)| BoundSource::Caller(*a))
                .ok_or_else(|| {
                    let names: Vec<&str> = CallerAttribute::ALL.iter().map(|(n, _)| *n).collect();
                    match did_you_mean(attribute, &names) {
                        Some(s) => format!("did you mean `caller.{s}`? The caller has `user_id`, `scopes`, `roles` and `claim(\"name\")`"),
                        None => format!("the caller has `user_id`, `scopes`, `roles` and `claim(\"name\")`; {FORMS}"),
                    }
                }),
            _ => Err(FORMS.to_string()),
        },
        ExprKind::Call { callee, args } if names(callee) == ["caller", "claim"] => {
            match args.as_slice() {
                [arg] if arg.name.is_none() => match arg.value.as_str() {
                    Some(claim) if is_claim_name(claim) => Ok(BoundSource::Claim(claim.to_string())),
                    Some(claim) => Err(format!(
                        "claim name `{claim}` must be 1 to 128 of `A-Z a-z 0-9 _ . : / -`"
                    )),
                    None => Err("name the claim in quotes: `caller.claim(\"tenant\")`".to_string()),
                },
                _ => Err("`caller.claim` takes one claim name in quotes: `caller.claim(\"tenant\")`".to_string()),
            }
        }
        _ => Err(FORMS.to_string()),
    }
}

/// A parameter as the checks need it: where it is, its type and its default.
struct ParamInfo {
    type_span: Span,
    kind: Kind,
    default: Option<Span>,
}

/// What a value is, as far as a binding needs to know.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    String,
    Number,
    Bool,
    /// A list, with its items' kind when known.
    List(Option<Box<Kind>>),
    Object,
    Any,
}

impl Kind {
    fn describe(&self) -> &'static str {
        match self {
            Kind::String => "a string",
            Kind::Number => "a number",
            Kind::Bool => "a boolean",
            Kind::List(Some(item)) if **item == Kind::String => "a list of strings",
            Kind::List(_) => "a list",
            Kind::Object => "an object",
            Kind::Any => "any value",
        }
    }

    /// Whether a value of kind `self` can never be a value of kind `wanted`.
    fn never_fits(&self, wanted: &Kind) -> bool {
        match (self, wanted) {
            (Kind::Any, _) | (_, Kind::Any) => false,
            (Kind::List(Some(a)), Kind::List(Some(b))) => a.never_fits(b),
            (Kind::List(_), Kind::List(_)) => false,
            (a, b) => std::mem::discriminant(a) != std::mem::discriminant(b),
        }
    }
}

fn parameter(program: &Program, tool: &ToolDecl, name: &str) -> Option<ParamInfo> {
    if let Some(params) = &tool.params {
        let p = params.iter().find(|p| p.name.name == name)?;
        return Some(ParamInfo {
            type_span: p.ty.span(),
            kind: type_kind(program, &p.ty, 0),
            default: p.default.as_ref().map(|d| d.span),
        });
    }
    let (schema, _) = super::templates::parameters_schema(program, tool)?;
    let ExprKind::Map(entries) = &schema.kind else {
        return None;
    };
    let properties = entries.iter().find(|e| e.key == "properties")?;
    let ExprKind::Map(props) = &properties.value.kind else {
        return None;
    };
    let prop = props.iter().find(|p| p.key == name)?;
    let schema = crate::schema::inline_json(program, &prop.value);
    let default = match &prop.value.kind {
        ExprKind::Map(keys) => keys.iter().find(|k| k.key == "default").map(|k| k.key_span),
        _ => None,
    };
    Some(ParamInfo {
        type_span: prop.value.span,
        kind: schema.as_ref().map_or(Kind::Any, json_kind),
        default,
    })
}

fn type_kind(program: &Program, ty: &TypeExpr, depth: usize) -> Kind {
    match ty {
        TypeExpr::Schema(map) => crate::schema::inline_json(program, map)
            .as_ref()
            .map_or(Kind::Any, json_kind),
        TypeExpr::Named {
            name, generic, args, ..
        } => match name.name.as_str() {
            "string" => Kind::String,
            "int" | "number" => Kind::Number,
            "bool" => Kind::Bool,
            "enum" if args.iter().all(|a| a.value.as_str().is_some()) => Kind::String,
            "enum" => Kind::Any,
            "list" => Kind::List(generic.as_ref().map(|g| Box::new(type_kind(program, g, depth + 1)))),
            "object" => Kind::Object,
            other => match program.schema(other) {
                Some(schema) if depth < 32 => type_kind(program, &schema.decl.ty, depth + 1),
                _ => Kind::Any,
            },
        },
    }
}

fn json_kind(schema: &Value) -> Kind {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return if values.iter().all(Value::is_string) {
            Kind::String
        } else {
            Kind::Any
        };
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => Kind::String,
        Some("integer" | "number") => Kind::Number,
        Some("boolean") => Kind::Bool,
        Some("array") => Kind::List(schema.get("items").map(|items| Box::new(json_kind(items)))),
        Some("object") => Kind::Object,
        _ => Kind::Any,
    }
}

fn not_a_parameter(program: &Program, tool: &Located<ToolDecl>, key: &str, span: Span) -> Diagnostic {
    let params = super::evidence::tool_params(program, &tool.decl);
    let name = &tool.decl.name.name;
    let help = match did_you_mean(key, &params) {
        Some(s) => format!("did you mean `{s}`?"),
        None if params.is_empty() => format!("declare `{key}` in the parameter list of `{name}`"),
        None => format!(
            "declare `{key}` as a parameter of `{name}`, which has {}",
            params.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
        ),
    };
    Diagnostic::new(
        Code::TENX0617,
        format!("tool `{name}` binds `{key}`, which is not one of its parameters"),
        tool.file,
        span,
    )
    .label("not a parameter")
    .help(help)
}

fn check_state(
    facts: &Facts<'_>,
    (t, tool): (crate::resolve::ToolId, &Located<ToolDecl>),
    graphs: &[crate::resolve::GraphId],
    entry: &MapEntry,
    param: &ParamInfo,
    field: &str,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let (key, span) = (entry.key.as_str(), entry.value.span);
    let mut mismatch_reported = false;
    for (g, graph) in graphs
        .iter()
        .filter_map(|&g| facts.program.graphs.get(g).map(|graph| (g, graph)))
    {
        let graph_name = &graph.decl.name.name;
        let Some(state) = graph.decl.state.iter().find(|p| p.name.name == field) else {
            // How the tool runs there, when only agents called as tools run it.
            let runs = match super::agent_tools::tool_caller_in_graph(facts, g, t) {
                Some((node, chain)) => format!(
                    "the tool can run in graph `{graph_name}`: agent node `{node}` calls it through {}",
                    super::agent_tools::chain_names(&chain)
                ),
                None => format!("the tool can run in graph `{graph_name}`"),
            };
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0619,
                    format!(
                        "`{key}` of tool `{}` is bound to `state.{field}`, but graph `{graph_name}` has no state field `{field}`",
                        tool.decl.name.name
                    ),
                    tool.file,
                    span,
                )
                .label("no such state field")
                .secondary(graph.file, graph.decl.name.span, runs)
                .help(format!(
                    "declare `{field}` in the `state` of graph `{graph_name}`: a state binding needs its field in every graph where the tool can run"
                )),
            );
            continue;
        };
        if mismatch_reported {
            continue;
        }
        let held = type_kind(facts.program, &state.ty, 0);
        if held.never_fits(&param.kind) {
            mismatch_reported = true;
            diagnostics.push(mismatch(
                tool.file,
                key,
                param,
                &format!("state field `{field}` holds {}", held.describe()),
                span,
                Some((graph.file, state)),
            ));
        }
    }
}

fn check_fit(
    file: FileId,
    key: &str,
    param: &ParamInfo,
    held: &Kind,
    source: &str,
    span: Span,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if held.never_fits(&param.kind) {
        diagnostics.push(mismatch(file, key, param, source, span, None));
    }
}

fn mismatch(
    file: FileId,
    key: &str,
    param: &ParamInfo,
    source: &str,
    span: Span,
    state: Option<(FileId, &Param)>,
) -> Diagnostic {
    let mut d = Diagnostic::new(
        Code::TENX0620,
        format!("`{key}` takes {}, but {source}", param.kind.describe()),
        file,
        span,
    )
    .label(source.to_string())
    .secondary(
        file,
        param.type_span,
        format!("`{key}` takes {}", param.kind.describe()),
    );
    if let Some((state_file, field)) = state {
        d = d.secondary(state_file, field.ty.span(), "the state field's type");
    }
    d.help("give the parameter the type of its source, or bind it to a source of its type")
}
