//! A stop during a fork. A crash mid-fork leaves the run in its checkpoint, and recovery runs only
//! the branches that had not ended, each from its last step; for the run, a stop is a crash at
//! the same moment. So a stop that reaches a run split into branches (a fork at any depth)
//! keeps the run as that crash keeps it ([`park`]): the fork, every branch's progress and
//! messages at every depth, and a call cut short after it was sent still in flight in its branch
//! (see [`super::execute`]). It is kept beside the thread's run, not as it
//! (`ThreadRecord::stopped_run`): recovery and the stores' "run in progress" test do not see it,
//! so nothing goes on with it by itself, and the thread is stopped as any stopped thread is. A
//! branch that waits at a question beside the stop keeps it there, not open (the fork never
//! settled on it), and a failed one its failure: the fork settles on them once the next run has
//! finished the stopped branches (see `fork::settle`).
//!
//! The thread's next run (a new message, `on_busy = "cancel"` included, which stops the run and
//! then is that next run) takes it back ([`take`]) and goes on with it through the ordinary
//! step loop, as recovery goes on with a crashed run: no finished branch runs again, and a
//! branch whose call was cut short finishes that call first, where it is, under the key it was
//! sent under and with the arguments it was sent with, before its model is asked anything. The
//! new message joins the thread's conversation before the run goes on ([`input_index`]), so the
//! branches that go on and every node after the join see it; the run goes on where it stopped,
//! never from the start node. The run is the new request's: its id, starter and recursion
//! limit, as for any new run.
//!
//! A kept run is never continued under another artifact (D16): the next run ends it as recovery
//! ends a run another artifact left ([`super::retire`]): its calls in flight become
//! `outcome_unknown` and are never sent again, the thread's open model turn gets its answers,
//! and the new message starts a new run from the start node.

use std::sync::Arc;

use serde_json::json;

use crate::RunError;
use crate::thread::{BranchStatus, ForkProgress, InFlightCall, RunProgress, ThreadRecord};
use crate::wire::{Message, Role};

use super::Working;
use super::working::store_error;

/// At the end of a stopped run: keeps the run when it is split into branches (see the module
/// docs), with the branches the stop reached running again, as a crash leaves them. Whether it
/// kept it; a run with no fork is for the caller to drop, as before.
pub(crate) fn park(record: &mut ThreadRecord) -> bool {
    let Some(mut run) = record.run.take_if(|run| run.fork.is_some()) else {
        return false;
    };
    let mut forks: Vec<&mut ForkProgress> = run.fork.iter_mut().collect();
    while let Some(fork) = forks.pop() {
        for branch in &mut fork.branches {
            if branch.status == BranchStatus::Stopped {
                branch.status = BranchStatus::Running;
            }
            if let Some(inner) = branch.inner.as_deref_mut() {
                forks.push(&mut inner.fork);
            }
        }
    }
    record.stopped_run = Some(Box::new(run));
    true
}

/// The kept run the thread's next run goes on with, if the thread keeps one made by this
/// artifact. One another artifact made is ended instead (see the module docs) and `None`
/// returned. Called before the new run stamps the thread with this artifact.
pub(crate) async fn take(working: &mut Working<'_>) -> Result<Option<RunProgress>, RunError> {
    let Some(run) = working.record.stopped_run.take() else {
        return Ok(None);
    };
    if working.record.artifact_id == working.engine.artifact_id {
        return Ok(Some(*run));
    }
    end_other_artifact(working, &run).await?;
    Ok(None)
}

/// The calls in flight of `run`'s branches at every depth.
pub(crate) fn calls_in_flight(run: &RunProgress) -> Vec<InFlightCall> {
    run.all_branches()
        .into_iter()
        .filter_map(|branch| branch.in_flight.clone())
        .collect()
}

/// Where the messages a client adds go while the thread keeps a stopped run (`kept`): before the
/// conversation's last model turn when calls of it are still open (the kept fork answers one: an
/// agent called as a tool by an agent of the thread), so that a turn and its results are never
/// split; else at the end.
pub(crate) fn input_index(context: &[Arc<Message>], kept: bool) -> usize {
    if kept
        && !super::retire::open_calls(context).is_empty()
        && let Some(turn) = context.iter().rposition(|message| message.role != Role::Tool)
    {
        return turn;
    }
    context.len()
}

/// Ends `run`, kept by a thread another artifact made: each of its calls in flight becomes
/// `outcome_unknown` (receipt and record), never sent again, and the calls of the thread's open
/// model turn are answered "not run", as [`super::retire`] ends a run another artifact left. A
/// call cut short outside the fork (a placeholder of the thread's conversation) is not one of
/// its calls: the new run finishes it as usual.
async fn end_other_artifact(working: &mut Working<'_>, run: &RunProgress) -> Result<(), RunError> {
    let thread_id = working.record.thread_id.clone();
    let markers = working
        .engine
        .ports
        .store
        .in_flight(&thread_id)
        .await
        .map_err(store_error)?;
    let outside: Vec<String> = super::in_flight::stopped_calls(&working.record.context)
        .into_iter()
        .map(|(_, stopped)| stopped.idempotency_key)
        .collect();
    let markers: Vec<_> = markers
        .into_iter()
        .filter(|marker| !outside.contains(&marker.key))
        .collect();
    let reason = crate::ErrorCode::GraphVersionMismatch.as_str();
    for (receipt, fields) in super::abandoned::outcome_unknown(markers, &calls_in_flight(run), reason) {
        working.record("tool_call", fields);
        working.receipts.push(receipt);
    }
    // An agent of the thread waited for an agent called as a tool: its turn gets its answers, so
    // the conversation stays well formed for any model.
    for (node, call) in super::retire::open_calls(&working.record.context) {
        let empty = Message::text(working.message_id(), Role::Tool, "", working.now_seconds());
        let answer = super::calls::answer_message(
            empty,
            &node,
            &call,
            &call.name,
            json!("Not run: the run ended when the program changed."),
            true,
        );
        working.record.context.push(Arc::new(answer));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::{input_index, park};
    use crate::thread::{
        Branch, BranchRun, BranchStatus, ForkProgress, InnerFork, ROOT_BRANCH, RunProgress, ThreadRecord,
    };
    use crate::wire::{ContentBlock, ExecutionMeta, FunctionCall, Message, Role, ToolCall};

    fn fork(branches: Vec<BranchRun>) -> ForkProgress {
        ForkProgress {
            from: "plan".to_owned(),
            join: "write".to_owned(),
            width: 4,
            branches,
            subgraph: None,
            agent_call: None,
        }
    }

    fn branch(path: &str, status: BranchStatus) -> BranchRun {
        let mut run = BranchRun::starting(path.to_owned(), serde_json::Map::new(), Vec::new(), BTreeMap::new());
        run.status = status;
        run
    }

    fn record(run: Option<RunProgress>) -> ThreadRecord {
        ThreadRecord {
            format: crate::thread::CheckpointFormat::CURRENT,
            thread_id: "t".to_owned(),
            artifact_id: "a".to_owned(),
            graph: "g".to_owned(),
            owner: None,
            version: 3,
            created_at: 0,
            updated_at: 0,
            state: serde_json::Map::new(),
            context: Vec::new(),
            execution: ExecutionMeta::new("t"),
            pending: None,
            run,
            resume_at: None,
            model_cursors: BTreeMap::new(),
            substitutions: BTreeMap::new(),
            stopped_run: None,
        }
    }

    fn progress(fork: Option<ForkProgress>) -> RunProgress {
        RunProgress {
            run_id: "r".to_owned(),
            started_by: crate::Identity::anonymous(),
            recursion_limit: 25,
            input_text: String::new(),
            branches: BTreeMap::from([(ROOT_BRANCH.to_owned(), Branch::default())]),
            fork,
        }
    }

    #[test]
    fn a_stopped_fork_is_kept_with_its_stopped_branches_running_again_at_every_depth() {
        let mut outer = branch("news", BranchStatus::Stopped);
        outer.inner = Some(Box::new(InnerFork {
            fork: fork(vec![
                branch("a", BranchStatus::Done),
                branch("b", BranchStatus::Stopped),
            ]),
            branches: BTreeMap::new(),
        }));
        let run = progress(Some(fork(vec![branch("web", BranchStatus::Done), outer])));
        let mut thread = record(Some(run));
        assert!(park(&mut thread));
        assert!(thread.run.is_none(), "no run in progress: nothing goes on by itself");
        let kept = thread.stopped_run.unwrap();
        let statuses: Vec<&BranchStatus> = kept.fork.as_ref().unwrap().branches.iter().map(|b| &b.status).collect();
        assert_eq!(statuses, [&BranchStatus::Done, &BranchStatus::Running]);
        let inner = &kept.fork.as_ref().unwrap().branches[1].inner.as_ref().unwrap().fork;
        let statuses: Vec<&BranchStatus> = inner.branches.iter().map(|b| &b.status).collect();
        assert_eq!(statuses, [&BranchStatus::Done, &BranchStatus::Running]);
    }

    #[test]
    fn a_stopped_run_with_no_fork_is_not_kept() {
        let mut thread = record(Some(progress(None)));
        assert!(!park(&mut thread));
        assert!(thread.run.is_some(), "left to the caller, which drops it");
        assert!(thread.stopped_run.is_none());
    }

    #[test]
    fn a_client_message_goes_before_a_model_turn_whose_calls_are_still_open() {
        let user = Message::text("m1", Role::User, "hi", 1.0);
        let mut turn = Message::text("m2", Role::Assistant, "", 2.0);
        turn.metadata.insert("node".to_owned(), serde_json::json!("boss"));
        turn.content = vec![ContentBlock::ToolCall {
            id: "c1".to_owned(),
            name: "helper".to_owned(),
            args: serde_json::json!({}),
            tool_type: None,
        }];
        turn.tools_calls = Some(vec![ToolCall {
            id: "c1".to_owned(),
            kind: "function".to_owned(),
            function: FunctionCall {
                name: "helper".to_owned(),
                arguments: "{}".to_owned(),
            },
        }]);
        let open = vec![Arc::new(user.clone()), Arc::new(turn)];
        assert_eq!(input_index(&open, true), 1, "before the open turn");
        assert_eq!(input_index(&open, false), 2, "no kept run: at the end, as before");
        assert_eq!(input_index(&[user.into()], true), 1, "nothing open: at the end");
    }
}
