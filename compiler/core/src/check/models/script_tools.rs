//! The tool calls of a scripted model's turns: each calls a tool that every agent using the
//! model can see, or a handoff's `transfer_to_…` that one of them declares (`TENX0812`, naming the
//! agent that cannot); right after a handoff to an agent using the same model, the turns up to the
//! next text turn are that agent's, so only it must see their tools; a placeholder's value fits the parameter it fills (`TENX0811`: `:cents` and `:int`
//! an integer or number parameter, `:number` a number one, a text template a string one); and
//! the literal arguments, ignoring the templated ones, satisfy the tool's parameter schema
//! (`TENX0813`), fixed turns included. The schema is the one the model sees: a bound argument
//! (`bind`) is the runtime's to fill, and a turn that sets one is refused (`TENX0813`). A turn
//! that hands off passes arguments that fit the payload of the handoff of every agent that may
//! play it and declares it (`TENX0813`; no arguments for a handoff without a payload).
//!
//! The tool name is the model-facing one, as a model would call it; the runtime dispatches by it.

use super::script::{Played, TurnSrc, collect_strings};
use crate::ast::Expr;
use crate::check::Facts;
use crate::resolve::{AgentId, DeclKind, Located, ToolId};
use crate::schema::Lowerer;
use crate::suggest::did_you_mean;
use serde_json::{Map, Value};
use tenx_artifact::script::{self, Conversion, Piece};
use tenx_diagnostics::{Code, Diagnostic, FileId};

/// The handoff tool prefix.
const HANDOFF_PREFIX: &str = crate::lower::HANDOFF_PREFIX;

pub(super) fn check(
    facts: &Facts<'_>,
    model: &Located<crate::ast::ModelDecl>,
    played: &Played<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let program = facts.program;
    let users: Vec<AgentId> = program
        .agents
        .iter_enumerated()
        .filter(|(_, agent)| {
            agent
                .decl
                .model
                .as_ref()
                .and_then(|m| program.model(&m.name))
                .is_some_and(|m| std::ptr::eq(m, model))
        })
        .map(|(id, _)| id)
        .collect();
    let mut lowerer = Lowerer::new(program);
    for sequence in &played.sequences {
        // The agent known to play the next turn: the target of a handoff just played, while it
        // calls tools. A text turn ends its node, and any agent of the model may play next.
        let mut current: Option<AgentId> = None;
        for turn in sequence {
            let TurnSrc::Tool {
                name,
                name_expr,
                arguments,
                arguments_expr,
            } = turn
            else {
                current = None;
                continue;
            };
            let players = current.map_or_else(|| users.clone(), |agent| vec![agent]);
            let target = name
                .strip_prefix(HANDOFF_PREFIX)
                .and_then(|target| program.lookup_as(target, &[DeclKind::Agent]))
                .and_then(|symbol| symbol.decl.agent());
            let call = Call {
                model,
                name,
                name_expr,
                handoff: target.is_some(),
            };
            let tool = visible(facts, &call, &players, users.is_empty(), diagnostics);
            if let Some(target) = target {
                current = Some(target).filter(|t| users.contains(t));
                let payloads = payload_schemas(facts, &players, name, &mut lowerer);
                for schema in &payloads {
                    let empty = schema
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_none_or(Map::is_empty);
                    match arguments.first() {
                        Some((key, expr, _)) if empty => diagnostics.push(
                            Diagnostic::new(
                                Code::TENX0813,
                                format!("handoff `{name}` takes no arguments"),
                                model.file,
                                expr.span,
                            )
                            .label(format!("argument `{key}` here"))
                            .help("write `arguments: {}`: this handoff declares no payload"),
                        ),
                        _ => arguments_fit(model.file, name, schema, arguments, arguments_expr, diagnostics),
                    }
                }
            }
            let Some(located) = tool.and_then(|t| program.tools.get(t)) else {
                continue;
            };
            let mut scratch = Vec::new();
            let full = lowerer.lower_tool_parameters(located, &mut scratch).value;
            // A turn plays the model: it sees, and may set, only what the model may.
            let bound = crate::check::bound_args::bound_names(&located.decl);
            for (key, expr, _) in arguments.iter().filter(|(key, _, _)| bound.contains(key)) {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0813,
                        format!("argument `{key}` of `{name}` is bound: the runtime fills it"),
                        model.file,
                        expr.span,
                    )
                    .label("a model may not set a bound argument")
                    .help(format!(
                        "remove `{key}` from the arguments; the tool's `bind` gives its value"
                    )),
                );
            }
            let unbound: Vec<_> = arguments
                .iter()
                .filter(|(key, _, _)| !bound.contains(key))
                .cloned()
                .collect();
            let schema = tenx_artifact::bound::model_parameters(&full, bound.iter().copied());
            arguments_fit(model.file, name, &schema, &unbound, arguments_expr, diagnostics);
        }
    }
}

/// The payload schemas of the handoff `name` (`transfer_to_…`) among the agents that may play
/// the turn and declare it, each schema once: a turn that hands off passes arguments that every
/// one of them must accept.
fn payload_schemas(facts: &Facts<'_>, players: &[AgentId], name: &str, lowerer: &mut Lowerer<'_>) -> Vec<Value> {
    let program = facts.program;
    let mut out: Vec<Value> = Vec::new();
    for agent in players.iter().filter_map(|&a| program.agents.get(a)) {
        let Some(target) = agent
            .decl
            .handoffs
            .iter()
            .find(|h| format!("{HANDOFF_PREFIX}{}", h.name) == name)
        else {
            continue;
        };
        let params = agent.decl.payload(&target.name).unwrap_or_default();
        let schema = lowerer.lower_params(agent.file, params, &mut Vec::new()).value;
        if !out.contains(&schema) {
            out.push(schema);
        }
    }
    out
}

/// A tool turn, for [`visible`].
struct Call<'a> {
    model: &'a Located<crate::ast::ModelDecl>,
    name: &'a str,
    name_expr: &'a Expr,
    /// Whether it names `transfer_to_<agent>` of a declared agent.
    handoff: bool,
}

/// The names `agent` may call, and the declared tool among them called `name`.
fn offered(facts: &Facts<'_>, agent: AgentId, name: &str) -> (Vec<String>, Option<ToolId>) {
    let program = facts.program;
    let tools = facts.visible_tools.get(agent).map(Vec::as_slice).unwrap_or(&[]);
    let mut names: Vec<String> = tools
        .iter()
        .filter_map(|t| program.tools.get(*t))
        .map(|t| t.decl.model_name().to_string())
        .collect();
    let found = tools
        .iter()
        .copied()
        .find(|t| program.tools.get(*t).is_some_and(|l| l.decl.model_name() == name));
    if let Some(agent) = program.agents.get(agent) {
        names.extend(
            agent
                .decl
                .handoffs
                .iter()
                .map(|h| format!("{HANDOFF_PREFIX}{}", h.name)),
        );
        // An agent called as a tool is offered under its own name.
        names.extend(agent.decl.agent_tools.iter().map(|used| used.agent.name.clone()));
    }
    (names, found)
}

/// The declared tool a turn calls, when its players see it (`None` for a handoff, which takes
/// no arguments to check); `TENX0812` when they do not. A tool call must be seen by every agent
/// that may play the turn; a handoff by one of them, the agent that hands off (and the turns
/// after it are the target's).
fn visible(
    facts: &Facts<'_>,
    call: &Call<'_>,
    players: &[AgentId],
    unused: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ToolId> {
    let program = facts.program;
    let (model, name) = (call.model, call.name);
    if unused {
        // Used by no agent (`unused` warns): the tool must still exist.
        let found = program
            .tools
            .iter_enumerated()
            .find(|(_, t)| t.decl.model_name() == name)
            .map(|(id, _)| id);
        if found.is_none() && !call.handoff {
            let names: Vec<String> = program.tools.iter().map(|t| t.decl.model_name().to_string()).collect();
            let mut d = Diagnostic::new(
                Code::TENX0812,
                format!("a turn of model `{}` calls unknown tool `{name}`", model.decl.name.name),
                model.file,
                call.name_expr.span,
            )
            .label("no tool has this name");
            if let Some(s) = did_you_mean(name, names.iter()) {
                d = d.help(format!("did you mean `{s}`?"));
            }
            diagnostics.push(d);
        }
        return found;
    }
    let mut found = None;
    let mut blind = Vec::new();
    let mut candidates = Vec::new();
    for &agent in players {
        let (names, tool) = offered(facts, agent, name);
        if tool.is_some() || names.iter().any(|n| n == name) {
            found = found.or(tool);
        } else if let Some(a) = program.agents.get(agent) {
            blind.push(a.decl.name.name.clone());
            candidates.extend(names);
        }
    }
    let Some(first) = blind.first() else {
        return found;
    };
    if call.handoff && blind.len() < players.len() {
        return found;
    }
    candidates.sort();
    candidates.dedup();
    let who = match blind.len() {
        1 => format!("agent `{first}`"),
        n => format!("agent `{first}` (and {} more)", n - 1),
    };
    let mut d = Diagnostic::new(
        Code::TENX0812,
        format!(
            "a turn of model `{}` calls `{name}`, which {who} cannot see",
            model.decl.name.name
        ),
        model.file,
        call.name_expr.span,
    )
    .label(format!("not among the tools of agent `{first}`"));
    d = match did_you_mean(name, candidates.iter()) {
        Some(s) => d.help(format!("did you mean `{s}`?")),
        None if call.handoff => d.help(format!("add the handoff to {who}, or call a tool it sees")),
        None => d.help(format!("add the tool to the `tools` of {who}, or call a tool it sees")),
    };
    diagnostics.push(d.note(
        "a turn names the tool as the model sees it; any agent using the model may play it, except right after a handoff, when the target plays the turns up to its next text turn",
    ));
    found
}

/// Whether any string inside `value` holds a placeholder.
fn templated(value: &Value) -> bool {
    let mut strings = Vec::new();
    collect_strings(value, &mut strings);
    strings
        .iter()
        .any(|s| script::pieces(s).iter().any(|p| matches!(p, Piece::Placeholder { .. })))
}

/// The JSON types a schema allows, when it says.
fn types(schema: Option<&Value>) -> Option<Vec<&str>> {
    match schema?.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(list) => Some(list.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// `TENX0811` and `TENX0813` for one tool turn.
fn arguments_fit(
    file: FileId,
    tool: &str,
    schema: &Value,
    arguments: &[(&str, &Expr, Value)],
    arguments_expr: &Expr,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    let mut literal = Map::new();
    let mut skipped = Vec::new();
    for (key, expr, value) in arguments {
        if !templated(value) {
            literal.insert((*key).to_string(), value.clone());
            continue;
        }
        skipped.push(*key);
        let parameter = properties.and_then(|p| p.get(*key));
        if parameter.is_none() && closed {
            let mut d = Diagnostic::new(
                Code::TENX0813,
                format!("tool `{tool}` has no parameter `{key}`"),
                file,
                expr.span,
            )
            .label("not a parameter of the tool");
            if let Some(s) = properties.and_then(|p| did_you_mean(key, p.keys())) {
                d = d.help(format!("did you mean `{s}`?"));
            }
            diagnostics.push(d);
            continue;
        }
        let Some(allowed) = types(parameter) else { continue };
        let (gives, fits) = match value.as_str().and_then(script::whole_placeholder) {
            Some((_, Some(conversion))) => match Conversion::from_name(conversion) {
                Some(c) => (
                    format!(
                        "`:{conversion}` gives {}",
                        if c == Conversion::Number {
                            "a number"
                        } else {
                            "an integer"
                        }
                    ),
                    allowed.iter().any(|t| c.fits(t)),
                ),
                None => continue,
            },
            _ if value.is_string() => (
                "a text template gives a string".to_string(),
                allowed.contains(&"string"),
            ),
            _ => continue,
        };
        if !fits {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0811,
                    format!("argument `{key}` of `{tool}` does not fit its parameter"),
                    file,
                    expr.span,
                )
                .label(format!(
                    "{gives}, the parameter takes {}",
                    allowed.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(" or ")
                ))
                .help("use `{name:cents}` or `{name:int}` for an integer, `{name:number}` for a number, `{name}` for text"),
            );
        }
    }
    let mut schema = schema.clone();
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|r| r.as_str().is_none_or(|r| !skipped.contains(&r)));
    }
    let Ok(validator) = jsonschema::draft202012::options().offline().build(&schema) else {
        return;
    };
    let instance = Value::Object(literal);
    for error in validator.iter_errors(&instance) {
        let path = error.instance_path().as_str().to_string();
        let key = path.trim_start_matches('/').split('/').next().unwrap_or("");
        let span = arguments
            .iter()
            .find(|(k, _, _)| *k == key)
            .map_or(arguments_expr.span, |(_, e, _)| e.span);
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0813,
                format!("the arguments of this call of `{tool}` do not match its parameters"),
                file,
                span,
            )
            .label(error.to_string())
            .help("a scripted tool call is checked against the tool's parameters, as a model's would be"),
        );
    }
}
