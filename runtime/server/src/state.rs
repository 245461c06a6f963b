//! The shapes the API shows a thread in: the state dump (`AgentState`: the graph's typed fields
//! beside `context`, `context_summary` and `execution_meta`, reference-api.md §7) and
//! `ThreadInfo` (§3).

use serde_json::{Map, Value, json};
use tenx_engine::ports::{ThreadSummary, Timestamp};
use tenx_engine::thread::ThreadRecord;

/// The state dump of a thread.
pub fn agent_state(record: &ThreadRecord) -> Value {
    let mut state: Map<String, Value> = record.state.clone();
    state.insert("context".to_owned(), json!(record.context));
    state.insert("context_summary".to_owned(), Value::Null);
    state.insert("execution_meta".to_owned(), json!(record.execution));
    Value::Object(state)
}

/// `ThreadInfo` of a stored thread.
pub fn thread_info(record: &ThreadRecord) -> Value {
    info(
        &record.thread_id,
        record.owner.as_deref(),
        record.updated_at,
        record.run.as_ref().map(|run| run.run_id.as_str()),
    )
}

/// `ThreadInfo` of a listed thread.
pub fn summary_info(summary: &ThreadSummary) -> Value {
    info(&summary.thread_id, summary.owner.as_deref(), summary.updated_at, None)
}

fn info(thread_id: &str, owner: Option<&str>, updated_at: Timestamp, run_id: Option<&str>) -> Value {
    json!({
        "thread_id": thread_id,
        "thread_name": null,
        "user_id": owner.unwrap_or("anonymous"),
        "metadata": null,
        "updated_at": iso(updated_at),
        "run_id": run_id,
    })
}

/// Milliseconds since the epoch as ISO-8601 UTC time without a zone, as the reference writes
/// `updated_at`.
pub fn iso(millis: Timestamp) -> Value {
    let Ok(millis) = i64::try_from(millis) else {
        return Value::Null;
    };
    match jiff::Timestamp::from_millisecond(millis) {
        Ok(at) => Value::String(crate::envelope::civil(at)),
        Err(_) => Value::Null,
    }
}
