//! Interrupt nodes: the run pauses and asks a person. An interrupt that `approves` tool nodes
//! shows the package of the tool node that follows it (its arguments read from the state), with
//! the interrupt's declared `value` under `details`; the approval is bound to that package's
//! fingerprint and checked again at the tool node.

use serde_json::{Map, Value};
use tenx_artifact::{EdgeKind, Interrupt, NodeKind};

use crate::thread::{Pending, PendingKind};
use crate::wire::InterruptObject;

use super::{Flow, NodeFailure, StepError, Working};

/// Pauses the run at an interrupt node.
pub(crate) async fn interrupt_node(working: &mut Working<'_>, node: &str, name: &str) -> Result<Flow, StepError> {
    let Some(interrupt) = working.artifact().interrupts.get(name) else {
        return Err(NodeFailure::new(format!("interrupt `{name}` is not in the artifact")).into());
    };
    let asked_at = working.now();
    let expires_at = interrupt.expires_ms.map(|ms| asked_at.saturating_add(ms));
    let details = interrupt
        .value
        .as_ref()
        .map(|value| super::glue::render_deep(value, working.state()));
    let state_version = working.stored_version.unwrap_or(0);
    let (value, fingerprint, rejection_key) = match approved_tool_node(working, node, interrupt) {
        Some((tool_node, tool_name)) => {
            let package = node_package(
                working,
                interrupt,
                &tool_node,
                &tool_name,
                details.clone(),
                state_version,
                expires_at,
            )?;
            (package.value, Some(package.fingerprint), Some(package.rejection_key))
        }
        None => (details.unwrap_or(Value::Null), None, None),
    };
    let object = InterruptObject {
        id: working.engine.ports.ids.interrupt_id(),
        key: format!("node:{node}:0"),
        node: node.to_owned(),
        value,
        message: super::glue::render(&interrupt.message, working.state()),
        reason: interrupt.reason.clone(),
        response_schema: interrupt.response_schema.to_value(),
        tool_call_id: None,
    };
    let pending = Pending {
        kind: PendingKind::InterruptNode { node: node.to_owned() },
        interrupt: Some(object),
        expires_at,
        fingerprint,
        asked_at,
        state_version,
        rejection_key,
        replaces: None,
        escalation: None,
        branch: None,
        within: Vec::new(),
    };
    super::pause::pause(working, pending).await?;
    Ok(Flow::Paused)
}

/// The tool node this interrupt approves that a way out of `node` leads to, with its tool.
pub(crate) fn approved_tool_node(working: &Working<'_>, node: &str, interrupt: &Interrupt) -> Option<(String, String)> {
    let graph = working.graph;
    let edges = graph
        .edges
        .iter()
        .filter(|edge| edge.from == node && edge.kind == EdgeKind::Plain)
        .map(|edge| edge.to.as_str());
    let arms = graph
        .routes
        .iter()
        .filter(|route| route.from == node)
        .flat_map(|route| route.arms.iter().map(tenx_artifact::Arm::target));
    edges.chain(arms).find_map(|target| {
        let declared = graph.nodes.get(target)?;
        (declared.kind == NodeKind::Tool && interrupt.approves.contains(&declared.reference))
            .then(|| (target.to_owned(), declared.reference.clone()))
    })
}

/// The arguments a tool node runs with: the state fields named like its parameters, bound
/// arguments filled from their sources, validated and normalised.
pub(crate) fn tool_node_arguments(working: &Working<'_>, tool_name: &str) -> Result<Value, NodeFailure> {
    let Some(tool) = working.artifact().tools.get(tool_name) else {
        return Err(NodeFailure::new(format!("tool `{tool_name}` is not in the artifact")));
    };
    let mut arguments = Map::new();
    if let Some(properties) = tool.parameters.to_value().get("properties").and_then(Value::as_object) {
        for name in properties.keys() {
            if let Some(value) = working.state().get(name).filter(|value| !value.is_null()) {
                arguments.insert(name.clone(), value.clone());
            }
        }
    }
    super::calls::prepare_arguments(working, tool, arguments, false)
        .map_err(|reason| NodeFailure::new(format!("tool `{tool_name}` cannot run: {reason}")))
}

/// The package of the tool node an interrupt approves.
pub(crate) fn node_package(
    working: &Working<'_>,
    interrupt: &Interrupt,
    tool_node: &str,
    tool_name: &str,
    details: Option<Value>,
    state_version: u64,
    expires_at: Option<u64>,
) -> Result<super::glue::Package, NodeFailure> {
    let arguments = tool_node_arguments(working, tool_name)?;
    let Some(tool) = working.artifact().tools.get(tool_name) else {
        return Err(NodeFailure::new(format!("tool `{tool_name}` is not in the artifact")));
    };
    super::glue::interrupt_package(
        working,
        interrupt,
        tool_node,
        tool_name,
        tool,
        &arguments,
        details,
        state_version,
        expires_at,
    )
}
