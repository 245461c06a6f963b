//! Exactly-once execution (contract, "Exactly once"): a call runs under an idempotency key (the
//! tool's declared template rendered over the arguments, else derived from the thread, node and
//! call), at most once per thread and key. A stored receipt answers a repeat; an in-flight marker
//! is stored before the call is sent and the receipt with the step's checkpoint, so after a crash
//! the call is sent again with the same key, or, when the key cannot reach whatever performs the
//! effect, marked `outcome_unknown` and never sent again.
//!
//! A stop (a `Cancel`) is, for a call already sent, the same as a crash: its outcome is not
//! known. Its receipt stays in flight and its result in the conversation is a placeholder that
//! carries the call ([`STOPPED_IN_FLIGHT`]); the thread's next run sends the same key again
//! with the same arguments and puts the real result in its place (see
//! [`super::in_flight::finish_stopped_calls`]). A call that cannot be deduplicated becomes
//! `outcome_unknown` at once. A call the stop reached before its marker was stored is not sent.
//!
//! Inside a fork's branch the stop keeps the branch as a crash at that moment leaves it (the run
//! is kept, see [`super::stopped_fork`]): the call stays the branch's call in flight and gets no
//! result yet, so the thread's next run finishes it where the branch is, through the recovery
//! path, before the branch's model is asked anything.

use serde_json::{Value, json};
use tenx_artifact::{NodeKind, Tool, WriteSource};

use crate::ports::{Event, Receipt, ReceiptState, ToolInvocation};

use super::working::store_error;
use super::{NodeFailure, StepError, Working};

/// The metadata key of a tool message whose call a stop cut short after it was sent: its value
/// is the call ([`StoppedCall`]), which the thread's next run finishes.
pub(crate) const STOPPED_IN_FLIGHT: &str = "stopped_in_flight";

/// What a call returned, as the model (or the tool node) sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    pub(crate) output: Value,
    pub(crate) is_error: bool,
    /// A stop reached the call: it was not sent, or it was cut short and its outcome is not
    /// known yet. The run stops after it.
    pub(crate) stopped: bool,
    /// A stop cut the call short inside a fork's branch after it was sent, and its key reaches
    /// the service: it stays the branch's call in flight, with no result (`output` is not
    /// shown to anyone), for the thread's next run to finish.
    pub(crate) in_flight: bool,
}

/// A call a stop cut short after it was sent: what its placeholder result carries
/// ([`STOPPED_IN_FLIGHT`]), so the next run sends exactly it again.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct StoppedCall {
    /// The call, as it was sent.
    #[serde(flatten)]
    pub(crate) call: crate::thread::InFlightCall,
    /// The idempotency key it was sent under.
    pub(crate) idempotency_key: String,
}

/// The key a call of `tool` runs under.
pub(crate) fn idempotency_key(
    working: &Working<'_>,
    tool: &Tool,
    node: &str,
    call_id: &str,
    arguments: &Value,
) -> String {
    match (&tool.idempotency_key, arguments) {
        (Some(template), Value::Object(arguments)) => super::glue::render(template, arguments),
        // The branches of a map run one node with one model, so their call ids can repeat: the
        // branch's path from the thread down keeps their keys apart.
        _ => match working.lane.as_ref() {
            Some(lane) => format!("{}:{}:{node}:{call_id}", working.record.thread_id, lane.scope),
            None => format!("{}:{node}:{call_id}", working.record.thread_id),
        },
    }
}

/// Runs one call of a declared tool exactly once per (thread, key). When it returns, the
/// branch no longer has the call in flight: the next commit stores its receipt.
pub(crate) async fn run_tool(
    working: &mut Working<'_>,
    node: &str,
    declared: &str,
    call_id: &str,
    arguments: &Value,
    approved: bool,
) -> Result<Outcome, StepError> {
    let Some(tool) = working.artifact().tools.get(declared) else {
        return Err(NodeFailure::new(format!("tool `{declared}` is not in the artifact")).into());
    };
    let key = idempotency_key(working, tool, node, call_id, arguments);
    let call = crate::thread::InFlightCall {
        node: node.to_owned(),
        tool: declared.to_owned(),
        call_id: call_id.to_owned(),
        arguments: arguments.clone(),
        approved,
        key: None,
    };
    run_keyed(working, &call, key).await
}

/// [`run_tool`] for `call` under `key` (a call that a stop cut short keeps the key it was
/// sent under).
pub(crate) async fn run_keyed(
    working: &mut Working<'_>,
    call: &crate::thread::InFlightCall,
    key: String,
) -> Result<Outcome, StepError> {
    let outcome = run_tool_once(working, call, key).await?;
    if !outcome.in_flight {
        working.clear_in_flight()?;
    }
    Ok(outcome)
}

async fn run_tool_once(
    working: &mut Working<'_>,
    call: &crate::thread::InFlightCall,
    key: String,
) -> Result<Outcome, StepError> {
    let crate::thread::InFlightCall {
        node,
        tool: declared,
        call_id,
        arguments,
        approved,
        key: _,
    } = call;
    let (node, declared, call_id, approved) = (node.as_str(), declared.as_str(), call_id.as_str(), *approved);
    let Some(tool) = working.artifact().tools.get(declared) else {
        return Err(NodeFailure::new(format!("tool `{declared}` is not in the artifact")).into());
    };
    let thread_id = working.record.thread_id.clone();
    let store = working.engine.ports.store.clone();
    let runner = working.engine.ports.tools.clone();
    let fields = |outcome: &str| json!({"tool": declared, "call_id": call_id, "node": node, "idempotency_key": key, "outcome": outcome, "approved": approved});
    match store.receipt(&thread_id, &key).await.map_err(store_error)? {
        Some(Receipt {
            state: ReceiptState::Done { result, is_error },
            ..
        }) => {
            working.record("tool_call", fields("repeat"));
            return Ok(Outcome {
                output: result,
                is_error,
                stopped: false,
                in_flight: false,
            });
        }
        Some(Receipt {
            state: ReceiptState::OutcomeUnknown,
            ..
        }) => {
            working.record("tool_call", fields("outcome_unknown"));
            return Ok(unknown(tool));
        }
        Some(Receipt {
            state: ReceiptState::InFlight { .. },
            ..
        }) => {
            if !runner.deduplicates(tool) {
                let receipt = Receipt {
                    thread_id: thread_id.clone(),
                    key: key.clone(),
                    tool: declared.to_owned(),
                    state: ReceiptState::OutcomeUnknown,
                };
                working.receipts.push(receipt);
                working.record("tool_call", fields("outcome_unknown"));
                return Ok(unknown(tool));
            }
            if working.cancel.is_cancelled() {
                // Stopped again before it was sent again: it stays in flight, as it was.
                return Ok(cut_short(working, tool, call, key.clone()));
            }
            // The key reaches the service: send the same call again; it deduplicates.
            working.record("tool_call", fields("resent"));
        }
        None => {
            if working.cancel.is_cancelled() {
                // The stop came before the marker: the call is not sent, and no receipt keeps
                // its key (a later call under it runs).
                working.record("tool_call", json!({"tool": declared, "call_id": call_id, "node": node, "idempotency_key": key, "outcome": "not_run", "approved": approved, "reason": "the run was stopped before the call was sent"}));
                return Ok(Outcome {
                    output: json!(format!(
                        "Tool '{}' was not run: the run was stopped before it was sent.",
                        tool.name
                    )),
                    is_error: true,
                    stopped: true,
                    in_flight: false,
                });
            }
            let marker = Receipt {
                thread_id: thread_id.clone(),
                key: key.clone(),
                tool: declared.to_owned(),
                state: ReceiptState::InFlight {
                    started_at: working.now(),
                },
            };
            let sent = crate::thread::InFlightCall {
                key: Some(key.clone()),
                ..call.clone()
            };
            working.commit_in_flight(sent, marker).await?;
        }
    }
    working.emit_with(|| Event::ToolCall {
        node: node.to_owned(),
        tool: declared.to_owned(),
        call_id: call_id.to_owned(),
        args: arguments.clone(),
        branch: None,
    });
    let started_by = working.progress()?.started_by.clone();
    let policy = super::retry::for_tool(working.graph, node, tool).cloned();
    let mut attempt = 1_u64;
    let answer = loop {
        let invocation = ToolInvocation {
            tool_name: declared,
            tool,
            arguments,
            idempotency_key: &key,
            identity: &started_by,
            thread_id: &thread_id,
            call_id,
        };
        let answer = runner.call(invocation, &working.cancel).await;
        let Err(error) = &answer else { break answer };
        if working.cancel.is_cancelled() {
            break answer;
        }
        let class = super::retry::tool_class(error.kind);
        let Some(policy) = policy
            .as_ref()
            .filter(|policy| super::retry::again(policy, attempt, class))
        else {
            break answer;
        };
        let retry_after = match error.kind {
            crate::ports::ToolErrorKind::RateLimited { retry_after_ms } => retry_after_ms,
            _ => None,
        };
        working.record("tool_call", json!({"tool": declared, "call_id": call_id, "node": node, "idempotency_key": key, "outcome": "attempt_failed", "attempt": attempt, "error": error.message}));
        // A stop during the wait ends it: the next attempt is not sent.
        let wait = super::retry::wait(policy, attempt, &key, retry_after);
        if tokio::time::timeout(wait, working.cancel.cancelled()).await.is_ok() {
            break answer;
        }
        attempt = attempt.saturating_add(1);
    };
    if answer.is_err() && working.cancel.is_cancelled() {
        // The stop cut the call short after it was sent: its outcome is not known, as after
        // a crash. It is never recorded as failed.
        return Ok(cut_short(working, tool, call, key.clone()));
    }
    let outcome = match answer {
        Ok(result) => match tool
            .result
            .as_ref()
            .map(|schema| super::glue::check_schema(schema, &result))
        {
            Some(Err(error)) => Outcome {
                output: json!(format!(
                    "Tool '{}' failed: its result does not match its declared type: {error}",
                    tool.name
                )),
                is_error: true,
                stopped: false,
                in_flight: false,
            },
            _ => Outcome {
                output: result,
                is_error: false,
                stopped: false,
                in_flight: false,
            },
        },
        Err(error) => Outcome {
            output: json!(format!("Tool '{}' failed: {}", tool.name, error.message)),
            is_error: true,
            stopped: false,
            in_flight: false,
        },
    };
    working.receipts.push(Receipt {
        thread_id,
        key: key.clone(),
        tool: declared.to_owned(),
        state: ReceiptState::Done {
            result: outcome.output.clone(),
            is_error: outcome.is_error,
        },
    });
    working.record(
        "tool_call",
        fields(if outcome.is_error { "failed" } else { "completed" }),
    );
    let is_error = outcome.is_error;
    working.emit_with(|| Event::ToolResult {
        node: node.to_owned(),
        tool: declared.to_owned(),
        call_id: call_id.to_owned(),
        is_error,
        branch: None,
    });
    Ok(outcome)
}

/// The result of a call whose outcome a crash made unknown.
fn unknown(tool: &Tool) -> Outcome {
    Outcome {
        output: json!(format!(
            "Tool '{}' failed: the runtime stopped while the call ran and cannot tell whether it took effect; it was not sent again (outcome_unknown)",
            tool.name
        )),
        is_error: true,
        stopped: false,
        in_flight: false,
    }
}

/// A call a stop cut short after it was sent (or that was in flight and stopped again before it
/// was sent again). When its key reaches the service, its receipt stays in flight and its
/// result is a placeholder that carries the call, so the thread's next run sends the same key
/// again (see [`super::in_flight::finish_stopped_calls`]); inside a fork's branch it stays the
/// branch's call in flight instead, with no result, as a crash leaves it (the stopped run is
/// kept, and its next run finishes the call where the branch is). Otherwise it is
/// `outcome_unknown` at once, as recovery would make it, and never sent again.
fn cut_short(working: &mut Working<'_>, tool: &Tool, call: &crate::thread::InFlightCall, key: String) -> Outcome {
    let deduplicates = working.engine.ports.tools.deduplicates(tool);
    let fields = |outcome: &str, reason: &str| json!({"tool": call.tool, "call_id": call.call_id, "node": call.node, "idempotency_key": key, "outcome": outcome, "approved": call.approved, "reason": reason});
    if !deduplicates {
        working.record(
            "tool_call",
            fields(
                "outcome_unknown",
                "the run was stopped while the call ran and no idempotency key reaches the tool",
            ),
        );
        working.receipts.push(Receipt {
            thread_id: working.record.thread_id.clone(),
            key,
            tool: call.tool.clone(),
            state: ReceiptState::OutcomeUnknown,
        });
        return Outcome {
            output: json!(format!(
                "Tool '{}' failed: the run was stopped while the call ran and nobody can tell whether it took effect; it was not sent again (outcome_unknown)",
                tool.name
            )),
            is_error: true,
            stopped: true,
            in_flight: false,
        };
    }
    working.record(
        "tool_call",
        fields(
            "interrupted",
            "the run was stopped while the call ran; the next run sends it again with the same key",
        ),
    );
    if working.lane.is_some() {
        return Outcome {
            output: Value::Null,
            is_error: true,
            stopped: true,
            in_flight: true,
        };
    }
    // The placeholder carries the key once, as `idempotency_key`.
    working.cut_short = Some(StoppedCall {
        call: crate::thread::InFlightCall {
            key: None,
            ..call.clone()
        },
        idempotency_key: key,
    });
    Outcome {
        output: json!(format!(
            "Tool '{}' was interrupted: the run was stopped after the call was sent, so its outcome is not known yet; the next run sends it again with the same idempotency key and shows its result here.",
            tool.name
        )),
        is_error: true,
        stopped: true,
        in_flight: false,
    }
}

/// Writes a successful result into state where the graph's `writes` say: a tool node's result
/// (`node`), or a tool an agent node called (`tool`). A result that does not fit the state
/// fails the step; the state is never left half-written.
pub(crate) fn write_tool_result(
    working: &mut Working<'_>,
    node: &str,
    tool: &str,
    output: &Value,
) -> Result<(), NodeFailure> {
    let is_tool_node = working
        .graph
        .nodes
        .get(node)
        .is_some_and(|declared| declared.kind == NodeKind::Tool);
    let mut state = working.record.state.clone();
    let mut wrote = false;
    for write in &working.graph.writes {
        let applies = match &write.from {
            WriteSource::Node(name) => is_tool_node && name == node,
            WriteSource::Tool(name) => !is_tool_node && name == tool,
            WriteSource::Interrupt { .. } => false,
        };
        if applies {
            super::glue::write_path(&mut state, &write.to, output.clone())?;
            wrote = true;
        }
    }
    if !wrote {
        return Ok(());
    }
    super::glue::check_schema(&working.graph.state_schema, &Value::Object(state.clone())).map_err(|error| {
        NodeFailure::new(format!(
            "the result of `{tool}` does not fit the graph's state: {error}"
        ))
    })?;
    working.record.state = state;
    Ok(())
}
