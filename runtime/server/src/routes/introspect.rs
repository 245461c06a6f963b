//! `GET /v1/graph` (nodes, edges and the artifact id), `GET /v1/graph/tools` (what each agent
//! node is offered) and `GET /v1/graph:StateSchema`. An artifact with several graphs answers for
//! `?graph=<name>`, else for its first graph by name.

use std::collections::BTreeMap;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tenx_artifact::{Graph, NodeKind, Run};
use tenx_engine::Engine;

use super::caller;
use crate::AppState;
use crate::envelope::{ApiError, ApiResult, ok};
use crate::openapi::schemas::ReadResponses;

fn pick<'a>(engine: &'a Engine, query: &BTreeMap<String, String>) -> Result<(&'a str, &'a Graph), ApiError> {
    let graphs = &engine.artifact().artifact.graphs;
    match query.get("graph") {
        Some(name) => graphs
            .get_key_value(name.as_str())
            .map(|(name, graph)| (name.as_str(), graph))
            .ok_or_else(|| ApiError::http(StatusCode::NOT_FOUND, format!("no graph named '{name}'"))),
        None => graphs
            .iter()
            .next()
            .map(|(name, graph)| (name.as_str(), graph))
            .ok_or_else(|| ApiError::http(StatusCode::NOT_FOUND, "the artifact has no graph")),
    }
}

/// `GET /v1/graph`.
#[utoipa::path(get, path = "/v1/graph", tag = "graph", summary = "Nodes, edges, the artifact id and the graph",
    params(("graph" = Option<String>, Query, description = "Which graph of the artifact (the first by name when absent)")),
    responses(ReadResponses), security(("bearer" = ["graph:read"])))]
pub async fn graph(
    State(state): State<AppState>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    caller(&state, &headers, "graph:read")?;
    let engine = state.engine();
    let (name, graph) = pick(&engine, &query)?;
    let mut nodes = vec![json!({"id": "__start__", "name": "__start__"})];
    nodes.extend(graph.nodes.keys().map(|node| json!({"id": node, "name": node})));
    nodes.push(json!({"id": "__end__", "name": "__end__"}));
    let mut edges = vec![(String::from("__start__"), graph.entry.clone())];
    edges.extend(graph.edges.iter().map(|edge| (edge.from.clone(), edge.to.clone())));
    for route in &graph.routes {
        for arm in &route.arms {
            let target = match arm {
                tenx_artifact::Arm::Label { target, .. }
                | tenx_artifact::Arm::When { target, .. }
                | tenx_artifact::Arm::Else { target } => target,
            };
            edges.push((route.from.clone(), target.clone()));
        }
    }
    edges.sort();
    edges.dedup();
    let end = |node: &str| {
        if node == "END" {
            "__end__".to_owned()
        } else {
            node.to_owned()
        }
    };
    let edges: Vec<Value> = edges
        .iter()
        .map(|(from, to)| json!({"id": format!("{from}->{}", end(to)), "source": from, "target": end(to)}))
        .collect();
    let interrupts: Vec<&String> = graph
        .nodes
        .iter()
        .filter(|(_, node)| node.kind == NodeKind::Interrupt)
        .map(|(name, _)| name)
        .collect();
    let state_fields: Vec<String> = graph
        .state_schema
        .to_value()
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    let artifact = engine.artifact();
    Ok(ok(json!({
        "info": {
            "graph": name,
            "graphs": artifact.artifact.graphs.keys().collect::<Vec<_>>(),
            "artifact_id": engine.artifact_id(),
            "signed": artifact.signer.is_some(),
            "entry": graph.entry,
            "entries": graph.entries,
            "node_count": nodes.len(),
            "edge_count": edges.len(),
            "is_realtime": false,
            "checkpointer": true,
            "checkpointer_type": "tenx",
            "publisher": false,
            "store": false,
            "interrupt_before": interrupts,
            "interrupt_after": [],
            "recursion_limit": graph.recursion_limit,
            "id_type": "string",
            "state_fields": state_fields,
        },
        "nodes": nodes,
        "edges": edges,
    })))
}

/// `GET /v1/graph/tools`: each agent node's tools as its model is offered them (bound
/// parameters hidden), with their source, plus its handoffs.
#[utoipa::path(get, path = "/v1/graph/tools", tag = "graph", summary = "Each agent node's tools as its model sees them",
    params(("graph" = Option<String>, Query, description = "Which graph of the artifact (the first by name when absent)")),
    responses(ReadResponses), security(("bearer" = ["graph:read"])))]
pub async fn tools(
    State(state): State<AppState>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    caller(&state, &headers, "graph:read")?;
    let engine = state.engine();
    let (_, graph) = pick(&engine, &query)?;
    let artifact = &engine.artifact().artifact;
    let mut nodes = Vec::new();
    let mut tool_count = 0_usize;
    for (node_name, node) in &graph.nodes {
        if node.kind != NodeKind::Agent {
            continue;
        }
        let Some(agent) = artifact.agents.get(&node.reference) else {
            continue;
        };
        let mut tools = Vec::new();
        for declared in &agent.allowed_tools {
            let Some(tool) = artifact.tools.get(declared) else {
                continue;
            };
            let source = match tool.run {
                Run::Remote => "remote",
                Run::Mcp { .. } => "mcp",
                _ => "local",
            };
            let parameters = tenx_artifact::bound::model_parameters(
                &tool.parameters.to_value(),
                tool.bindings.keys().map(String::as_str),
            );
            tools.push(
                json!({"name": tool.name, "declared_name": declared, "description": tool.description,
                "source": source, "risk": tool.risk, "parameters": parameters}),
            );
        }
        for handoff in &agent.handoffs {
            tools.push(json!({"name": handoff.tool_name, "description": format!("Hand the conversation to `{}`.", handoff.target),
                "source": "handoff", "parameters": handoff.payload.to_value()}));
        }
        tool_count = tool_count.saturating_add(tools.len());
        nodes.push(json!({"node_name": node_name, "tool_count": tools.len(), "tools": tools}));
    }
    Ok(ok(
        json!({"node_count": nodes.len(), "tool_count": tool_count, "nodes": nodes}),
    ))
}

/// `GET /v1/graph:StateSchema`: the graph's state schema (JSON Schema 2020-12).
#[utoipa::path(get, path = "/v1/graph:StateSchema", tag = "graph", summary = "The graph's state schema (JSON Schema 2020-12)",
    params(("graph" = Option<String>, Query, description = "Which graph of the artifact (the first by name when absent)")),
    responses(ReadResponses), security(("bearer" = ["graph:read"])))]
pub async fn state_schema(
    State(state): State<AppState>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    caller(&state, &headers, "graph:read")?;
    let engine = state.engine();
    let (_, graph) = pick(&engine, &query)?;
    Ok(ok(graph.state_schema.to_value()))
}
