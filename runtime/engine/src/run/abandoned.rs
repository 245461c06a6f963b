//! Calls in flight that no run will finish: the run they were sent by ended where it stood (a
//! run another artifact left or kept after a stop, see [`super::retire`] and
//! [`super::stopped_fork`]; a kept run the thread's state was cleared under, see
//! [`super::writes`]; a run that failed while a branch beside the failure had a call in flight,
//! see [`settle_failed_run`]). Nobody can tell whether such a call took effect, and nothing will
//! send it again, so each becomes `outcome_unknown` (receipt and record), as recovery makes a
//! call no key reaches: a host reconciles it from the record, and a later call under its key gets
//! the same answer instead of running.
//!
//! Each record names the call that was sent under the receipt's key: the thread's receipts in
//! flight are matched to the calls by idempotency key, never by tool alone (two branches may have
//! calls of one tool in flight at once).

use serde_json::{Value, json};

use crate::ports::{Receipt, ReceiptState};
use crate::thread::InFlightCall;

use super::Working;

/// When a run fails: the receipts of the thread still in flight would never be finished, the run
/// being gone, except a placeholder's (the thread's next run finishes it), a kept run's, and one
/// whose result the failure's own commit stores. Each other becomes `outcome_unknown` in that
/// commit. A failure a branch records leaves none (beside a stopped branch the run stops
/// instead, see `fork::settle`); one a branch cannot record in itself (a store error, a damaged
/// checkpoint) fails its fork at once, and would leave the calls of the branches beside it in
/// flight. When the store cannot list them, nothing is settled: the failure's commit meets the
/// same store, and a run it cannot end stays as it was, for recovery.
pub(crate) async fn settle_failed_run(working: &mut Working<'_>) {
    let thread_id = working.record.thread_id.clone();
    let Ok(markers) = working.engine.ports.store.in_flight(&thread_id).await else {
        return;
    };
    let record = &working.record;
    let mut finished: Vec<String> = super::in_flight::stopped_calls(&record.context)
        .into_iter()
        .map(|(_, stopped)| stopped.idempotency_key)
        .collect();
    finished.extend(working.receipts.iter().map(|receipt| receipt.key.clone()));
    finished.extend(
        record
            .stopped_run
            .as_deref()
            .map(super::stopped_fork::calls_in_flight)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|call| call.key),
    );
    let markers: Vec<Receipt> = markers
        .into_iter()
        .filter(|marker| !finished.contains(&marker.key))
        .collect();
    if markers.is_empty() {
        return;
    }
    let calls = record
        .run
        .as_ref()
        .map(super::stopped_fork::calls_in_flight)
        .unwrap_or_default();
    for (receipt, fields) in outcome_unknown(markers, &calls, FAILED) {
        working.record("tool_call", fields);
        working.receipts.push(receipt);
    }
}

/// The reason recorded for a call in flight its run's failure settled.
const FAILED: &str = "the run failed while the call was in flight, and nothing will finish it; nobody can tell whether it took effect, and it is never sent again";

/// For each of `markers` (the thread's receipts in flight): its `outcome_unknown` receipt and the
/// fields of its `tool_call` record, with `reason`, naming the call of `calls` sent under its key
/// (`call_id` and `node` are null when none was).
pub(crate) fn outcome_unknown(markers: Vec<Receipt>, calls: &[InFlightCall], reason: &str) -> Vec<(Receipt, Value)> {
    markers
        .into_iter()
        .map(|marker| {
            let call = sent_under(calls, &marker);
            let fields = json!({
                "tool": marker.tool,
                "call_id": call.map(|call| call.call_id.clone()),
                "node": call.map(|call| call.node.clone()),
                "idempotency_key": marker.key,
                "outcome": "outcome_unknown",
                "reason": reason,
            });
            let receipt = Receipt {
                state: ReceiptState::OutcomeUnknown,
                ..marker
            };
            (receipt, fields)
        })
        .collect()
}

/// The call of `calls` sent under `marker`'s key. A call of a checkpoint written before calls
/// kept their key is taken only when it is the one call of the marker's tool without a key:
/// between two, nothing is guessed.
fn sent_under<'c>(calls: &'c [InFlightCall], marker: &Receipt) -> Option<&'c InFlightCall> {
    if let Some(call) = calls
        .iter()
        .find(|call| call.key.as_deref() == Some(marker.key.as_str()))
    {
        return Some(call);
    }
    let mut unkeyed = calls
        .iter()
        .filter(|call| call.key.is_none() && call.tool == marker.tool);
    match (unkeyed.next(), unkeyed.next()) {
        (Some(call), None) => Some(call),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, reason = "test code")]

    use serde_json::json;

    use super::outcome_unknown;
    use crate::ports::{Receipt, ReceiptState};
    use crate::thread::InFlightCall;

    fn call(call_id: &str, tool: &str, key: Option<&str>) -> InFlightCall {
        InFlightCall {
            node: format!("node-{call_id}"),
            tool: tool.to_owned(),
            call_id: call_id.to_owned(),
            arguments: json!({}),
            approved: false,
            key: key.map(str::to_owned),
        }
    }

    fn marker(key: &str, tool: &str) -> Receipt {
        Receipt {
            thread_id: "t".to_owned(),
            key: key.to_owned(),
            tool: tool.to_owned(),
            state: ReceiptState::InFlight { started_at: 1 },
        }
    }

    fn named(markers: Vec<Receipt>, calls: &[InFlightCall]) -> Vec<serde_json::Value> {
        outcome_unknown(markers, calls, "why")
            .into_iter()
            .map(|(receipt, fields)| {
                assert_eq!(receipt.state, ReceiptState::OutcomeUnknown);
                fields["call_id"].clone()
            })
            .collect()
    }

    #[test]
    fn each_receipt_names_the_call_sent_under_its_key_even_when_two_calls_share_a_tool() {
        let calls = [
            call("web-1", "fetch", Some("t:web")),
            call("news-1", "fetch", Some("t:news")),
        ];
        let markers = vec![marker("t:news", "fetch"), marker("t:web", "fetch")];
        assert_eq!(named(markers, &calls), [json!("news-1"), json!("web-1")]);
    }

    #[test]
    fn a_call_without_its_key_is_named_only_when_it_is_the_one_of_its_tool() {
        let one = [call("a-1", "fetch", None), call("b-1", "pay", None)];
        assert_eq!(named(vec![marker("k", "fetch")], &one), [json!("a-1")]);
        let two = [call("a-1", "fetch", None), call("b-1", "fetch", None)];
        assert_eq!(named(vec![marker("k", "fetch")], &two), [json!(null)]);
        assert_eq!(named(vec![marker("k", "mail")], &one), [json!(null)]);
    }
}
