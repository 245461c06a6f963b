//! The join of a fork: every branch has ended, so their work becomes the thread's, in branch
//! order (the order of the fork's `branches`; for a map, item order). Each branch's new messages
//! are appended to the conversation. Each state field a branch changed is merged by the graph's
//! reducer for it (`append`, `merge`, `sum`, `last`), or, without one, takes the value of the
//! (last) branch that changed it; a map's `item` field keeps the value it had before the fork.
//! The merged state is checked against the graph's state schema before it is kept. A subgraph
//! node's one branch is merged by its `output` mapping instead.

use std::collections::BTreeSet;

use serde_json::{Map, Number, Value, json};
use tenx_artifact::{Reduce, Reducer};

use crate::thread::BranchRun;
use crate::{ErrorCode, RunError};

use super::Working;
use super::working::damaged;

/// Merges the fork's branches into the thread (the fork stays in the progress, its branches'
/// messages moved out; the caller drops it and moves the run on to the join).
pub(crate) fn merge(parent: &mut Working<'_>) -> Result<(), RunError> {
    let graph = parent.graph;
    let progress = parent.progress()?;
    let fork = progress.fork.as_ref().ok_or_else(damaged)?;
    let item = graph.fork_of(&fork.from).and_then(|declared| declared.item.clone());
    let base = &parent.record.state;
    let mut fields = BTreeSet::new();
    for branch in &fork.branches {
        for (field, value) in &branch.state {
            if base.get(field) != Some(value) && item.as_deref() != Some(field.as_str()) {
                fields.insert(field.clone());
            }
        }
    }
    let mut state = base.clone();
    for field in fields {
        let changes: Vec<(&str, &Value)> = fork
            .branches
            .iter()
            .filter_map(|branch| {
                let value = branch.state.get(&field)?;
                (base.get(&field) != Some(value)).then_some((first_node(branch), value))
            })
            .collect();
        let value = reduce(graph.reducer_of(&field), &field, base.get(&field), &changes)?;
        state.insert(field, value);
    }
    super::glue::check_schema(&graph.state_schema, &Value::Object(state.clone())).map_err(|error| {
        RunError::new(
            ErrorCode::ForkMerge,
            format!(
                "the branches of the fork out of `{}` merge into a state that does not fit the graph's state: {error}",
                fork.from
            ),
        )
        .with_details(json!({"node": fork.from}))
    })?;
    take_branches(parent, state)
}

/// Ends a subgraph node's run: `output` copies the inner graph's fields into the state (checked
/// against the graph's state schema), and its messages join the conversation.
pub(crate) fn merge_subgraph(parent: &mut Working<'_>) -> Result<(), RunError> {
    let graph = parent.graph;
    let fork = parent.progress()?.fork.as_ref().ok_or_else(damaged)?;
    let (Some(call), Some(branch)) = (graph.subgraph_of(&fork.from), fork.branches.first()) else {
        return Err(damaged());
    };
    let mut state = parent.record.state.clone();
    for (to, from) in &call.output {
        if let Some(value) = branch.state.get(from) {
            state.insert(to.clone(), value.clone());
        }
    }
    super::glue::check_schema(&graph.state_schema, &Value::Object(state.clone())).map_err(|error| {
        RunError::new(
            ErrorCode::ForkMerge,
            format!(
                "what subgraph node `{}` gives back does not fit the graph's state: {error}",
                fork.from
            ),
        )
        .with_details(json!({"node": fork.from}))
    })?;
    take_branches(parent, state)
}

/// Answers the call of an agent used as a tool from its branch: the agent's final answer (its
/// `output` object when it has an output schema, else its text), or, when it failed, an error the
/// calling model sees, as a tool failure is. The agent's own conversation is kept in an
/// `agent_call` record, not in the thread's conversation.
pub(crate) fn answer_agent_call(parent: &mut Working<'_>) -> Result<(), RunError> {
    let fork = parent.progress()?.fork.as_ref().ok_or_else(damaged)?;
    let (Some(call), Some(branch)) = (fork.agent_call.clone(), fork.branches.first()) else {
        return Err(damaged());
    };
    let from = fork.from.clone();
    let answer = branch
        .messages
        .iter()
        .rev()
        .find(|message| message.role == crate::wire::Role::Assistant && !message.text_content().is_empty())
        .map(|message| message.text_content());
    let structured = parent
        .artifact()
        .agents
        .get(&call.agent)
        .is_some_and(|agent| agent.output_schema.is_some());
    let (output, is_error, outcome) = match (&branch.status, answer) {
        (crate::thread::BranchStatus::Failed { message, .. }, _) => (
            json!(format!("Agent '{}' failed: {message}", call.agent)),
            true,
            "failed",
        ),
        (_, Some(text)) if structured => (
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
            false,
            "completed",
        ),
        (_, Some(text)) => (Value::String(text), false, "completed"),
        (_, None) => (json!(format!("Agent '{}' gave no answer.", call.agent)), true, "failed"),
    };
    let messages = serde_json::to_value(&branch.messages).unwrap_or(Value::Null);
    let cursors = furthest_cursors(parent.record.model_cursors.clone(), &fork.branches);
    let path = branch.path.clone();
    parent.progress_mut()?.branches.remove(&path);
    parent.record.model_cursors = cursors;
    parent.record(
        "agent_call",
        json!({"agent": call.agent, "tool": call.tool_name, "call_id": call.call_id, "node": from, "outcome": outcome, "messages": messages}),
    );
    let queued = crate::thread::QueuedCall {
        id: call.call_id.clone(),
        name: call.tool_name.clone(),
        arguments: call.arguments.clone(),
    };
    super::calls::push_result(parent, &from, &queued, &call.tool_name, output, is_error);
    Ok(())
}

/// Makes `state` the thread's, moves the branches' messages to the conversation in order, moves
/// scripted cursors to the furthest branch's and forgets the branches' progress. The last thing
/// a merge does: its caller drops the fork (or fails the run) next, so the messages are moved
/// out of the fork's branches, not copied.
fn take_branches(parent: &mut Working<'_>, state: Map<String, Value>) -> Result<(), RunError> {
    let fork = parent.progress()?.fork.as_ref().ok_or_else(damaged)?;
    let cursors = furthest_cursors(parent.record.model_cursors.clone(), &fork.branches);
    let run = parent.progress_mut()?;
    let fork = run.fork.as_mut().ok_or_else(damaged)?;
    let mut messages = Vec::new();
    let mut paths = Vec::with_capacity(fork.branches.len());
    for branch in &mut fork.branches {
        messages.append(&mut branch.messages);
        paths.push(branch.path.clone());
    }
    for path in paths {
        run.branches.remove(&path);
    }
    parent.record.state = state;
    parent.record.model_cursors = cursors;
    for message in messages {
        parent.push_merged(message);
    }
    Ok(())
}

/// Each model's cursor moved to the furthest any branch took it.
fn furthest_cursors(
    mut cursors: std::collections::BTreeMap<String, Value>,
    branches: &[BranchRun],
) -> std::collections::BTreeMap<String, Value> {
    for branch in branches {
        for (model, cursor) in &branch.model_cursors {
            let further = match (cursors.get(model), cursor) {
                (Some(Value::Number(had)), Value::Number(now)) => now.as_f64() > had.as_f64(),
                (Some(had), now) => had != now,
                (None, _) => true,
            };
            if further {
                cursors.insert(model.clone(), cursor.clone());
            }
        }
    }
    cursors
}

/// The first node of a branch: its path without a map item's index.
fn first_node(branch: &BranchRun) -> &str {
    branch.path.split('[').next().unwrap_or_default()
}

/// The value of `field` at the join, from the value the fork found (`base`) and each branch's
/// changed value, in branch order.
fn reduce(
    reducer: Option<&Reducer>,
    field: &str,
    base: Option<&Value>,
    changes: &[(&str, &Value)],
) -> Result<Value, RunError> {
    let wrong = |what: &str| {
        RunError::new(
            ErrorCode::ForkMerge,
            format!("the branches wrote `{field}`, whose reducer needs {what}"),
        )
        .with_details(json!({"field": field}))
    };
    let last = || changes.last().map(|(_, value)| (*value).clone()).unwrap_or(Value::Null);
    let Some(reducer) = reducer else {
        return Ok(last());
    };
    match reducer.reduce {
        Reduce::Last if reducer.order.is_empty() => Ok(last()),
        Reduce::Last => Ok(reducer
            .order
            .iter()
            .rev()
            .find_map(|first| changes.iter().rev().find(|(node, _)| node == first))
            .map_or_else(last, |(_, value)| (*value).clone())),
        Reduce::Append => {
            let start = match base {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items.clone(),
                Some(_) => return Err(wrong("a list")),
            };
            let mut merged = start.clone();
            for (_, value) in changes {
                let Value::Array(items) = value else {
                    return Err(wrong("a list"));
                };
                let added = items.strip_prefix(start.as_slice()).unwrap_or(items.as_slice());
                merged.extend(added.iter().cloned());
            }
            Ok(Value::Array(merged))
        }
        Reduce::Merge => {
            let start = match base {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(object)) => object.clone(),
                Some(_) => return Err(wrong("an object")),
            };
            let mut merged = start.clone();
            for (_, value) in changes {
                let Value::Object(object) = value else {
                    return Err(wrong("an object"));
                };
                for (key, property) in object {
                    if start.get(key) != Some(property) {
                        merged.insert(key.clone(), property.clone());
                    }
                }
            }
            Ok(Value::Object(merged))
        }
        Reduce::Sum => {
            let number = |value: Option<&Value>| match value {
                None | Some(Value::Null) => Some(Number::from(0)),
                Some(Value::Number(number)) => Some(number.clone()),
                Some(_) => None,
            };
            let start = number(base).ok_or_else(|| wrong("a number"))?;
            let mut values = Vec::with_capacity(changes.len());
            for (_, value) in changes {
                values.push(number(Some(value)).ok_or_else(|| wrong("a number"))?);
            }
            Ok(sum(&start, &values).ok_or_else(|| wrong("numbers whose sum is finite"))?)
        }
    }
}

/// `start` plus what each of `values` adds to it: exact in integers when all are integers.
fn sum(start: &Number, values: &[Number]) -> Option<Value> {
    if let (Some(start), Some(values)) = (
        start.as_i64(),
        values.iter().map(Number::as_i64).collect::<Option<Vec<i64>>>(),
    ) {
        let mut total = start;
        for value in values {
            total = total.checked_add(value.checked_sub(start)?)?;
        }
        return Some(Value::from(total));
    }
    let start = start.as_f64()?;
    let total = values
        .iter()
        .filter_map(Number::as_f64)
        .fold(start, |total, value| total + (value - start));
    Number::from_f64(total).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tenx_artifact::{Reduce, Reducer};

    use super::reduce;

    fn reducer(reduce: Reduce, order: &[&str]) -> Reducer {
        Reducer {
            field: "f".into(),
            reduce,
            order: order.iter().map(|node| (*node).to_owned()).collect(),
        }
    }

    #[test]
    fn append_keeps_the_list_then_what_each_branch_added_in_branch_order() {
        let base = json!(["seed"]);
        let a = json!(["seed", "a1", "a2"]);
        let b = json!(["b1"]);
        let merged = reduce(
            Some(&reducer(Reduce::Append, &[])),
            "f",
            Some(&base),
            &[("a", &a), ("b", &b)],
        )
        .unwrap();
        assert_eq!(merged, json!(["seed", "a1", "a2", "b1"]));
    }

    #[test]
    fn sum_adds_each_branch_change_exactly_in_integers() {
        let merged = reduce(
            Some(&reducer(Reduce::Sum, &[])),
            "f",
            Some(&json!(10)),
            &[("a", &json!(13)), ("b", &json!(15))],
        )
        .unwrap();
        assert_eq!(merged, json!(18));
        let floats = reduce(
            Some(&reducer(Reduce::Sum, &[])),
            "f",
            None,
            &[("a", &json!(0.5)), ("b", &json!(1.25))],
        )
        .unwrap();
        assert_eq!(floats, json!(1.75));
        let refused = reduce(Some(&reducer(Reduce::Sum, &[])), "f", None, &[("a", &json!("7"))]).unwrap_err();
        assert_eq!(refused.code, crate::ErrorCode::ForkMerge);
    }

    #[test]
    fn merge_sets_changed_properties_and_a_later_branch_wins() {
        let base = json!({"keep": 1, "x": 0});
        let a = json!({"keep": 1, "x": 1, "a": true});
        let b = json!({"keep": 1, "x": 2});
        let merged = reduce(
            Some(&reducer(Reduce::Merge, &[])),
            "f",
            Some(&base),
            &[("a", &a), ("b", &b)],
        )
        .unwrap();
        assert_eq!(merged, json!({"keep": 1, "x": 2, "a": true}));
    }

    #[test]
    fn last_follows_its_order_not_the_branch_order() {
        let changes = [("web", &json!("w")), ("news", &json!("n"))];
        let ordered = reduce(Some(&reducer(Reduce::Last, &["news", "web"])), "f", None, &changes).unwrap();
        assert_eq!(ordered, json!("w"));
        let reversed = reduce(Some(&reducer(Reduce::Last, &["web", "news"])), "f", None, &changes).unwrap();
        assert_eq!(reversed, json!("n"));
        assert_eq!(reduce(None, "f", None, &changes).unwrap(), json!("n"));
    }
}
