//! Tool nodes: the graph runs a tool itself, with arguments read from the state. A tool approved
//! by an interrupt runs only right after that interrupt approved it, and only while the package
//! computed here has the fingerprint the person approved (else the interrupt asks again). A tool
//! with an approval of its own asks before it runs. The call and its result go into the
//! conversation, and into state where the graph's `results` say.

use serde_json::{Value, json};
use tenx_artifact::Risk;

use crate::thread::QueuedCall;
use crate::wire::{ContentBlock, FunctionCall, Message, Role, ToolCall};

use super::{Flow, NodeFailure, StepError, Working};

/// Runs a tool node.
pub(crate) async fn tool_node(working: &mut Working<'_>, node: &str, tool_name: &str) -> Result<Flow, StepError> {
    let Some(tool) = working.artifact().tools.get(tool_name) else {
        return Err(NodeFailure::new(format!("tool `{tool_name}` is not in the artifact")).into());
    };
    if let Some(call) = working.in_flight_at(node) {
        // A crash interrupted this call: finish it (approved already, its step counted).
        return run_approved(working, node, &call.tool, &call.call_id, &call.arguments, call.approved).await;
    }
    working.count_step()?;
    let call_id = match working.lane.as_ref() {
        // Branches of one fork run the same nodes at the same step counts: the branch's path
        // from the thread down (in the characters every provider accepts in a call id) keeps
        // their calls apart.
        Some(lane) => format!(
            "{node}-{}-{}",
            working.branch()?.steps,
            super::fork::id_safe(&lane.scope)
        ),
        None => format!("{node}-{}", working.branch()?.steps),
    };
    let arguments = super::interrupt::tool_node_arguments(working, tool_name)?;
    let mut approved = false;
    if tool.risk == Risk::Prohibited {
        return Err(NodeFailure::new(format!("tool `{tool_name}` is prohibited")).into());
    }
    if !tool.approved_by.is_empty() && tool.approval.is_none() {
        let grant = working.branch_mut()?.approved.take();
        let Some(grant) = grant.filter(|grant| grant.tool_node == node) else {
            return Err(NodeFailure::new(format!(
                "tool node `{node}` runs only right after the interrupt that approves it"
            ))
            .into());
        };
        let interrupt_name = working
            .graph
            .nodes
            .get(&grant.interrupt_node)
            .map(|declared| declared.reference.clone())
            .unwrap_or_default();
        let Some(interrupt) = working.artifact().interrupts.get(&interrupt_name) else {
            return Err(NodeFailure::new(format!("the interrupt node `{}` is gone", grant.interrupt_node)).into());
        };
        let details = interrupt
            .value
            .as_ref()
            .map(|value| super::glue::render_deep(value, working.state()));
        let package = super::interrupt::node_package(
            working,
            interrupt,
            node,
            tool_name,
            details,
            grant.state_version,
            grant.expires_at,
        )?;
        if package.fingerprint != grant.fingerprint {
            // What the person approved is not what would run now: ask again.
            working.record("approval", json!({"node": grant.interrupt_node, "tool": tool_name, "interrupt_id": grant.interrupt_id, "outcome": "stale", "fingerprint": grant.fingerprint}));
            working.replacing = grant.shown.clone();
            return Ok(Flow::Go(grant.interrupt_node));
        }
        approved = true;
    } else if let Some(approval) = tool.approval.as_ref() {
        let (risk, rule) = super::glue::call_risk(tool, &arguments);
        if matches!(risk, Risk::Medium | Risk::High) {
            let ask = super::pause::AskTool {
                node,
                tool_name,
                tool,
                call_id: &call_id,
                arguments: &arguments,
                approval,
                risk,
                rule,
            };
            return match super::pause::ask_tool(working, ask).await? {
                super::pause::Asked::Paused => Ok(Flow::Paused),
                super::pause::Asked::AlreadyRejected(text) => Ok(Flow::End(text)),
            };
        }
    }
    run_approved(working, node, tool_name, &call_id, &arguments, approved).await
}

/// Runs a tool node's call (approved, or needing no approval) and moves on.
pub(crate) async fn run_approved(
    working: &mut Working<'_>,
    node: &str,
    tool_name: &str,
    call_id: &str,
    arguments: &Value,
    approved: bool,
) -> Result<Flow, StepError> {
    let model_name = working
        .artifact()
        .tools
        .get(tool_name)
        .map(|tool| tool.name.clone())
        .unwrap_or_default();
    let outcome = super::execute::run_tool(working, node, tool_name, call_id, arguments, approved).await?;
    if outcome.in_flight {
        // A stop cut it short inside a fork's branch: the branch stays as a crash leaves it (the
        // call in flight, neither it nor a result in the conversation); the thread's next run
        // finishes it here and goes on.
        return Ok(Flow::Stopped);
    }
    let text = super::glue::canonical_text(arguments);
    let mut call_message = Message::text(working.message_id(), Role::Assistant, "", working.now_seconds());
    call_message.content = vec![ContentBlock::ToolCall {
        id: call_id.to_owned(),
        name: model_name.clone(),
        args: arguments.clone(),
        tool_type: None,
    }];
    call_message.tools_calls = Some(vec![ToolCall {
        id: call_id.to_owned(),
        kind: "function".to_owned(),
        function: FunctionCall {
            name: model_name.clone(),
            arguments: text.clone(),
        },
    }]);
    call_message.metadata.insert("node".to_owned(), json!(node));
    call_message.metadata.insert("tool_node".to_owned(), json!(true));
    working.push_message(call_message);
    let call = QueuedCall {
        id: call_id.to_owned(),
        name: model_name,
        arguments: text,
    };
    super::calls::push_result(
        working,
        node,
        &call,
        tool_name,
        outcome.output.clone(),
        outcome.is_error,
    );
    if outcome.stopped {
        // A stop reached the call (not sent, or cut short after it was sent): the run stops
        // here; it did not fail, and no `on_error` way is taken.
        return Ok(Flow::Stopped);
    }
    if outcome.is_error {
        let message = outcome
            .output
            .as_str()
            .map_or_else(|| outcome.output.to_string(), str::to_owned);
        return Err(NodeFailure::new(message).into());
    }
    super::execute::write_tool_result(working, node, tool_name, &outcome.output)?;
    let next = super::drive::next_after(working, node)?;
    Ok(Flow::Go(next))
}
