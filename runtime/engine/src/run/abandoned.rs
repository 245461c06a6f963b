//! Calls in flight that no run will finish: the run they were sent by ended where it stood (a
//! run another artifact left or kept after a stop, see [`super::retire`] and
//! [`super::stopped_fork`]; a kept run the thread's state was cleared under, see
//! [`super::writes`]; a run that failed while a branch beside the failure had a call in flight,
//! see [`settle_failed_run`]), or the branch that sent them failed (see [`settle_failed_branch`]).
//! Nobody can tell whether such a call took effect, and nothing will send it again, so each
//! becomes `outcome_unknown` (receipt and record), as recovery makes a call no key reaches: a host
//! reconciles it from the record, and a later call under its key gets the same answer instead of
//! running.
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
/// commit. A branch that records its failure settles its own calls then
/// ([`settle_failed_branch`]), and the fork fails the run once the others have ended (beside a
/// stopped branch the run stops instead, see `fork::settle`); a failure a branch cannot record in
/// itself (a store error, a damaged checkpoint) fails its fork at once, and would leave the calls
/// of the branches beside it in flight. When the store cannot list them, nothing is settled: the
/// failure's commit meets the same store, and a run it cannot end stays as it was, for recovery.
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

/// When a fork's branch records its failure in itself (see `finish::failed`): a failed branch
/// never runs again, and a fork inside it is dropped with it, so the receipts in flight of its own
/// calls would never be finished. Each becomes `outcome_unknown` in the failure's commit, as a
/// run's failure settles the run's ([`settle_failed_run`]), except one whose result that commit
/// stores. So none is left in flight for nothing to finish while a stop beside the failure keeps
/// the run.
///
/// The branch's own calls are those a call in flight of its run names (its own, and those of the
/// forks inside it at every depth), and those sent under a default key of its path (the thread,
/// then the branch's path from the thread, then `:` for its own nodes or `/` for a fork's inside
/// it, see `execute::idempotency_key`): the call whose result a refused commit did not store is no
/// longer named by the branch, though its receipt is still in flight. The calls of the branches
/// beside it are not its own: a stop beside the failure keeps them in flight for the next run.
/// A call under a key its tool's template made that no call of the branch names any more is left
/// to the end of the run ([`settle_failed_run`]): such a key does not say which branch sent it.
/// When the store cannot list the receipts in flight, nothing is settled (as for a run).
pub(crate) async fn settle_failed_branch(working: &mut Working<'_>) {
    let Some(scope) = working.lane.as_ref().map(|lane| lane.scope.clone()) else {
        return;
    };
    let thread_id = working.record.thread_id.clone();
    let Ok(markers) = working.engine.ports.store.in_flight(&thread_id).await else {
        return;
    };
    let calls = working
        .record
        .run
        .as_ref()
        .map(super::stopped_fork::calls_in_flight)
        .unwrap_or_default();
    let named: Vec<&str> = calls.iter().filter_map(|call| call.key.as_deref()).collect();
    let stored: Vec<&str> = working.receipts.iter().map(|receipt| receipt.key.as_str()).collect();
    let own: Vec<Receipt> = markers
        .into_iter()
        .filter(|marker| {
            let key = marker.key.as_str();
            !stored.contains(&key) && (named.contains(&key) || under_path(key, &thread_id, &scope))
        })
        .collect();
    for (receipt, fields) in outcome_unknown(own, &calls, BRANCH_FAILED) {
        working.record("tool_call", fields);
        working.receipts.push(receipt);
    }
    // The branch's own call is settled with the others: it is no longer in flight.
    if let Ok(branch) = working.branch_mut() {
        branch.in_flight = None;
    }
}

/// The reason recorded for a call in flight its branch's failure settled.
const BRANCH_FAILED: &str = "its branch failed while the call was in flight, and nothing will finish it; nobody can tell whether it took effect, and it is never sent again";

/// Whether `key` is a default idempotency key of a call of the branch at `scope` (its path from
/// the thread) or of a fork inside it: `thread:scope:node:call` or `thread:scope/…`.
fn under_path(key: &str, thread_id: &str, scope: &str) -> bool {
    key.strip_prefix(thread_id)
        .and_then(|rest| rest.strip_prefix(':'))
        .and_then(|rest| rest.strip_prefix(scope))
        .is_some_and(|rest| rest.starts_with(':') || rest.starts_with('/'))
}

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

    use super::{outcome_unknown, under_path};
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
    fn a_branchs_default_keys_are_its_own_and_its_inner_forks_but_not_a_siblings() {
        assert!(under_path("t:desk:desk:c1", "t", "desk"));
        assert!(under_path("t:desk/news:news:news-1", "t", "desk"));
        assert!(under_path(
            "t:desk/lister/summarise[2]:summarise:c1",
            "t",
            "desk/lister"
        ));
        assert!(
            !under_path("t:desktop:desktop:c1", "t", "desk"),
            "another branch's path"
        );
        assert!(!under_path("t:web:web:web-1", "t", "desk"));
        assert!(!under_path("t:desk:c1", "t2", "desk"), "another thread");
        assert!(
            !under_path("refund-1042", "t", "desk"),
            "a key its tool's template made"
        );
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
