//! `kill -9` crash tests with real processes and SQLite (issue 11, "Tests"): a child process
//! (this binary re-run as [`child::crash_child`]) builds the engine as a host does and is killed
//! with SIGKILL at the moments that matter; the next child answers or recovers. Every scenario
//! checks that nothing is lost (the thread, its messages, its records are all readable after the
//! restart) and that no effect happens twice (the payments service counts requests and effects
//! per idempotency key; the carrier writes a line per effect).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod child;
mod process;
mod service;

use std::path::PathBuf;

use serde_json::{Value, json};
use tenx_artifact::{TrustPolicy, load};
use tenx_engine::ports::{Receipt, ReceiptState, Store};
use tenx_engine::thread::ThreadRecord;
use tenx_engine::wire::{ContentBlock, ExecutionStatus, Role};
use tenx_store_sqlite::SqliteStore;

use child::{
    ACTION, ANSWER, EFFECTS, GRAPH, HOLD_BEFORE_SEND, HOLD_KEY, HOLD_NATIVE, INTERRUPT, MESSAGE, STATE, THREAD, WAIT,
};
use process::{Child, eventually};
use service::Service;

const REFUND: &str = "Refund order 1042, 59.00";
const KEY: &str = "refund-1042-5900";
const APPROVE: &str = r#"{"approved": true}"#;

/// One scenario's files and service.
struct Setup {
    _dir: tempfile::TempDir,
    store: PathBuf,
    artifact: PathBuf,
    effects: PathBuf,
    service: Service,
}

/// What the store file holds for a thread, read by this (the parent) process.
struct Stored {
    thread: ThreadRecord,
    /// `(kind, outcome or decision, idempotency key)` of every record.
    records: Vec<(String, Value, Value)>,
    in_flight: Vec<Receipt>,
    refund_receipt: Option<Receipt>,
    unfinished: Vec<String>,
}

fn setup() -> Setup {
    setup_with("graph.tenx", include_str!("graph.tenx"))
}

/// The files and service of a scenario that runs the program `text` (`name` in this folder).
fn setup_with(name: &str, text: &str) -> Setup {
    setup_sealed(tenx_tests::sealed_bytes(&format!("tests/tests/crash/{name}"), text))
}

/// The files and service of a scenario that runs the sealed artifact `bytes`.
fn setup_sealed(bytes: Vec<u8>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    load(&bytes, &TrustPolicy::signature_optional()).unwrap();
    let artifact = dir.path().join("desk.tenxg");
    std::fs::write(&artifact, bytes).unwrap();
    Setup {
        store: dir.path().join("threads.db"),
        effects: dir.path().join("effects.txt"),
        artifact,
        _dir: dir,
        service: Service::start(),
    }
}

impl Setup {
    fn child(&self, vars: &[(&str, &str)]) -> Child {
        let mut all = vec![
            ("PAYMENTS_URL", self.service.url()),
            (EFFECTS, self.effects.to_str().unwrap()),
        ];
        all.extend_from_slice(vars);
        process::spawn(&self.store, &self.artifact, &all)
    }

    /// Starts the refund run in a child, which pauses at the approval and exits.
    fn paused_refund(&self, thread: &str) -> String {
        let first = self.child(&[(ACTION, "start"), (THREAD, thread), (MESSAGE, REFUND)]);
        let ran = first.expect("ran");
        assert_eq!(ran["status"], json!(ExecutionStatus::InterruptedBefore));
        first.exits();
        ran["interrupt_id"].as_str().unwrap().to_owned()
    }

    fn recover(&self) -> Value {
        let recovering = self.child(&[(ACTION, "recover")]);
        let recovered = recovering.expect("recovered");
        recovering.exits();
        recovered["threads"].clone()
    }

    fn stored(&self, thread: &str) -> Stored {
        self.stored_with_key(thread, KEY)
    }

    /// The thread, once the file holds it.
    /// Recovers `thread`, left by a kill during a fan-out that pays each of `keys` (the last one
    /// in flight), and checks that it finished with each paid exactly once and only the last
    /// sent again; what the store then holds.
    fn recover_paying_each_once(&self, thread: &str, keys: &[&str]) -> Stored {
        assert_eq!(self.recover(), json!([{"thread": thread, "outcome": "finished"}]));
        let paid: std::collections::BTreeMap<String, usize> = keys.iter().map(|key| ((*key).to_owned(), 1)).collect();
        assert_eq!(self.service.effects(), paid, "each payee paid exactly once");
        assert_eq!(
            self.service.requests().len(),
            keys.len(),
            "only the call in flight was sent after the restart"
        );
        let last = keys.last().copied().unwrap_or_default();
        let done = self.stored_with_key(thread, last);
        assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
        assert!(done.thread.run.is_none());
        assert!(done.in_flight.is_empty());
        assert!(done.unfinished.is_empty());
        done
    }

    /// How many branches of `thread`'s fork in progress are done, as the store holds it now.
    fn branches_done(&self, thread: &str) -> usize {
        self.thread_if_stored(thread)
            .and_then(|thread| thread.run)
            .and_then(|run| run.fork)
            .map_or(0, |fork| {
                fork.branches
                    .iter()
                    .filter(|branch| branch.status == tenx_engine::thread::BranchStatus::Done)
                    .count()
            })
    }

    fn thread_if_stored(&self, thread: &str) -> Option<ThreadRecord> {
        if !self.store.exists() {
            return None;
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async { SqliteStore::open(&self.store).await.ok()?.load(thread).await.ok()? })
    }

    /// What the file holds for `thread`, with the receipt of `key`.
    fn stored_with_key(&self, thread: &str, key: &str) -> Stored {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let store = SqliteStore::open(&self.store).await.unwrap();
            let records = store
                .records(thread)
                .await
                .unwrap()
                .into_iter()
                .map(|record| {
                    let what = record
                        .fields
                        .get("outcome")
                        .cloned()
                        .filter(|outcome| !outcome.is_null())
                        .or_else(|| record.fields.get("decision").cloned())
                        .unwrap_or(Value::Null);
                    let key = record.fields.get("idempotency_key").cloned().unwrap_or(Value::Null);
                    (record.kind, what, key)
                })
                .collect();
            Stored {
                thread: store.load(thread).await.unwrap().unwrap(),
                records,
                in_flight: store.in_flight(thread).await.unwrap(),
                refund_receipt: store.receipt(thread, key).await.unwrap(),
                unfinished: store.unfinished().await.unwrap(),
            }
        })
    }

    fn carrier_effects(&self) -> Vec<String> {
        std::fs::read_to_string(&self.effects)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Stored {
    fn final_text(&self) -> String {
        let last = self.thread.context.last().unwrap();
        assert_eq!(last.role, Role::Assistant);
        last.text_content()
    }

    fn tool_results(&self) -> Vec<(Value, bool)> {
        self.thread
            .context
            .iter()
            .flat_map(|message| &message.content)
            .filter_map(|block| match block {
                ContentBlock::ToolResult { output, is_error, .. } => Some((output.clone(), *is_error)),
                _ => None,
            })
            .collect()
    }

    /// The refund finished from the service's one effect, and nothing is left running.
    fn assert_refunded_once(&self) {
        assert_eq!(self.thread.execution.status, ExecutionStatus::Completed);
        assert_eq!(self.final_text(), "Refunded 5900 cents on order 1042 (refund 1).");
        assert_eq!(
            self.tool_results(),
            vec![(json!("Refunded 5900 cents on order 1042 (refund 1)."), false)]
        );
        let roles: Vec<Role> = self.thread.context.iter().map(|message| message.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
        assert!(self.in_flight.is_empty());
        assert!(matches!(
            self.refund_receipt.as_ref().unwrap().state,
            ReceiptState::Done { is_error: false, .. }
        ));
        assert!(self.unfinished.is_empty(), "{:?}", self.unfinished);
    }
}

fn approval(decision: &str) -> (String, Value, Value) {
    ("approval".to_owned(), json!(decision), Value::Null)
}

/// The approval of the refund: its record names the key the approved refund runs under.
fn approved_refund() -> (String, Value, Value) {
    ("approval".to_owned(), json!("approve"), json!(KEY))
}

fn call(outcome: &str) -> (String, Value, Value) {
    ("tool_call".to_owned(), json!(outcome), json!(KEY))
}

#[test]
fn kill_9_between_pause_and_resume_loses_nothing_and_refunds_once() {
    let setup = setup();
    let first = setup.child(&[(ACTION, "start"), (THREAD, "a"), (MESSAGE, REFUND), (WAIT, "1")]);
    let ran = first.expect("ran");
    assert_eq!(ran["status"], json!(ExecutionStatus::InterruptedBefore));
    let interrupt = ran["interrupt_id"].as_str().unwrap().to_owned();
    first.kill();

    let paused = setup.stored("a");
    let pending = paused.thread.pending.as_ref().unwrap();
    assert_eq!(pending.interrupt.as_ref().unwrap().id, interrupt);
    assert_eq!(paused.thread.context.len(), 2, "the request and the model's call");
    assert!(paused.records.is_empty());
    assert!(
        paused.unfinished.is_empty(),
        "a paused thread waits: recovery leaves it"
    );
    assert!(setup.service.requests().is_empty());

    let second = setup.child(&[
        (ACTION, "resume"),
        (THREAD, "a"),
        (INTERRUPT, &interrupt),
        (ANSWER, APPROVE),
    ]);
    assert_eq!(second.expect("ran")["status"], json!(ExecutionStatus::Completed));
    second.exits();

    assert_eq!(setup.service.requests(), [KEY]);
    assert_eq!(setup.service.effects(), [(KEY.to_owned(), 1)].into());
    let done = setup.stored("a");
    done.assert_refunded_once();
    assert_eq!(done.records, [approved_refund(), call("completed")]);
}

#[test]
fn kill_9_between_the_call_and_its_receipt_resends_the_same_key_once() {
    let setup = setup();
    let interrupt = setup.paused_refund("b");
    setup.service.hold();
    let second = setup.child(&[
        (ACTION, "resume"),
        (THREAD, "b"),
        (INTERRUPT, &interrupt),
        (ANSWER, APPROVE),
    ]);
    second.expect("sending");
    eventually("the service has the refund", || setup.service.requests().len() == 1);
    second.kill();

    // The answer and the call in flight were stored before the refund was sent.
    let killed = setup.stored("b");
    assert!(killed.thread.pending.is_none());
    let in_flight = killed.thread.run.as_ref().unwrap().branches[""]
        .in_flight
        .clone()
        .unwrap();
    assert_eq!((in_flight.tool.as_str(), in_flight.approved), ("issue_refund", true));
    assert_eq!(killed.in_flight.len(), 1);
    assert_eq!(killed.in_flight[0].key, KEY);
    assert_eq!(killed.records, [approved_refund()]);
    assert_eq!(killed.unfinished, ["b"]);

    setup.service.release();
    assert_eq!(setup.recover(), json!([{"thread": "b", "outcome": "finished"}]));
    assert_eq!(setup.service.requests(), [KEY, KEY], "the same key, sent again");
    assert_eq!(setup.service.effects(), [(KEY.to_owned(), 1)].into(), "applied once");
    let done = setup.stored("b");
    done.assert_refunded_once();
    assert_eq!(done.records, [approved_refund(), call("resent"), call("completed")]);
}

#[test]
fn kill_9_during_a_call_that_cannot_deduplicate_makes_it_outcome_unknown_never_rerun() {
    let setup = setup();
    let first = setup.child(&[
        (ACTION, "start"),
        (THREAD, "c"),
        (MESSAGE, "Ship parcel 77"),
        (HOLD_NATIVE, "1"),
    ]);
    first.expect("shipped");
    first.kill();
    assert_eq!(setup.carrier_effects(), ["77"]);
    let killed = setup.stored("c");
    assert_eq!(killed.in_flight.len(), 1);
    assert!(
        !killed.thread.run.as_ref().unwrap().branches[""]
            .in_flight
            .as_ref()
            .unwrap()
            .approved
    );

    assert_eq!(setup.recover(), json!([{"thread": "c", "outcome": "finished"}]));
    assert_eq!(setup.carrier_effects(), ["77"], "never run again");
    let done = setup.stored("c");
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let results = done.tool_results();
    assert_eq!(results.len(), 1);
    assert!(results[0].1, "an error the model sees");
    assert!(
        results[0].0.as_str().unwrap().contains("(outcome_unknown)"),
        "{results:?}"
    );
    assert!(
        done.final_text().contains("outcome_unknown"),
        "the model saw it: {}",
        done.final_text()
    );
    assert!(done.in_flight.is_empty());
    let outcomes: Vec<&Value> = done.records.iter().map(|(_, what, _)| what).collect();
    assert_eq!(outcomes, [&json!("outcome_unknown")]);
    assert!(done.unfinished.is_empty());
}

#[test]
fn kill_9_after_the_in_flight_marker_and_before_sending_sends_the_key_once() {
    let setup = setup();
    let interrupt = setup.paused_refund("d");
    let second = setup.child(&[
        (ACTION, "resume"),
        (THREAD, "d"),
        (INTERRUPT, &interrupt),
        (ANSWER, APPROVE),
        (HOLD_BEFORE_SEND, "1"),
    ]);
    assert_eq!(second.expect("sending")["key"], KEY);
    second.kill();
    assert!(setup.service.requests().is_empty(), "nothing was sent");
    let killed = setup.stored("d");
    assert_eq!(killed.in_flight.len(), 1);
    assert_eq!(killed.records, [approved_refund()]);

    assert_eq!(setup.recover(), json!([{"thread": "d", "outcome": "finished"}]));
    assert_eq!(setup.service.requests(), [KEY]);
    assert_eq!(setup.service.effects(), [(KEY.to_owned(), 1)].into());
    let done = setup.stored("d");
    done.assert_refunded_once();
    assert_eq!(done.records, [approved_refund(), call("resent"), call("completed")]);
}

const PAYOUT_KEY: &str = "payout-ada-1250";

#[test]
fn kill_9_while_the_service_holds_a_tool_nodes_call_resends_the_same_key_once() {
    let setup = setup_with("payout.tenx", include_str!("payout.tenx"));
    let first = setup.child(&[
        (ACTION, "start"),
        (THREAD, "e"),
        (MESSAGE, "Pay Ada"),
        (STATE, r#"{"payee": "ada", "amount_cents": 1250}"#),
    ]);
    let ran = first.expect("ran");
    assert_eq!(ran["status"], json!(ExecutionStatus::InterruptedBefore));
    let interrupt = ran["interrupt_id"].as_str().unwrap().to_owned();
    first.exits();

    setup.service.hold();
    let second = setup.child(&[
        (ACTION, "resume"),
        (THREAD, "e"),
        (INTERRUPT, &interrupt),
        (ANSWER, APPROVE),
    ]);
    assert_eq!(second.expect("sending")["key"], PAYOUT_KEY);
    eventually("the service has the payout", || setup.service.requests().len() == 1);
    second.kill();

    // The answer, the tool node's step and its call in flight were stored before it was sent.
    let killed = setup.stored_with_key("e", PAYOUT_KEY);
    assert!(killed.thread.pending.is_none());
    let branch = &killed.thread.run.as_ref().unwrap().branches[""];
    assert_eq!(branch.node, "send_payout");
    let in_flight = branch.in_flight.clone().unwrap();
    assert_eq!(
        (in_flight.node.as_str(), in_flight.tool.as_str(), in_flight.approved),
        ("send_payout", "send_payout", true)
    );
    assert_eq!(in_flight.arguments, json!({"payee": "ada", "amount_cents": 1250}));
    assert_eq!(killed.thread.execution.step, 1);
    assert_eq!(killed.in_flight.len(), 1);
    assert_eq!(killed.in_flight[0].key, PAYOUT_KEY);
    assert_eq!(killed.records, [approval("approve")]);
    assert_eq!(killed.unfinished, ["e"]);

    setup.service.release();
    assert_eq!(setup.recover(), json!([{"thread": "e", "outcome": "finished"}]));
    assert_eq!(
        setup.service.requests(),
        [PAYOUT_KEY, PAYOUT_KEY],
        "the same key, sent again"
    );
    assert_eq!(
        setup.service.effects(),
        [(PAYOUT_KEY.to_owned(), 1)].into(),
        "paid once"
    );

    let done = setup.stored_with_key("e", PAYOUT_KEY);
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(done.thread.execution.step, 1, "the tool node's step is counted once");
    assert_eq!(
        done.tool_results(),
        vec![(json!("Paid 1250 cents to ada (payment 1)."), false)]
    );
    let roles: Vec<Role> = done.thread.context.iter().map(|message| message.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool],
        "the request, the call, its result"
    );
    assert!(done.in_flight.is_empty());
    assert!(matches!(
        done.refund_receipt.as_ref().unwrap().state,
        ReceiptState::Done { is_error: false, .. }
    ));
    assert!(done.unfinished.is_empty(), "{:?}", done.unfinished);
    let payout = |outcome: &str| ("tool_call".to_owned(), json!(outcome), json!(PAYOUT_KEY));
    assert_eq!(
        done.records,
        [approval("approve"), payout("resent"), payout("completed")]
    );
}

/// `fanout.tenx` with the clerk's way on a map that pays every payee of `payees` at once.
fn fan_out() -> Setup {
    let bytes = tenx_tests::sealed_bytes("tests/tests/crash/fanout.tenx", include_str!("fanout.tenx"));
    let mut artifact = load(&bytes, &TrustPolicy::signature_optional()).unwrap().artifact;
    let graph = artifact.graphs.get_mut("payouts").unwrap();
    graph.routes.retain(|route| route.from != "clerk");
    graph.forks = vec![tenx_artifact::Fork {
        from: "clerk".into(),
        kind: tenx_artifact::ForkKind::Map,
        branches: vec!["send_payout".into()],
        over: Some("payees".into()),
        item: Some("payee".into()),
        max_concurrency: None,
        join: "END".into(),
    }];
    setup_sealed(tenx_artifact::seal(artifact).unwrap().to_bytes())
}

/// The fan-out tests' payouts: Ada's and Bob's finish before the kill, Cy's is held in flight.
const ADA: &str = "payout-ada-1250";
const BOB: &str = "payout-bob-1250";
const CY: &str = "payout-cy-1250";

impl Setup {
    /// Starts a run that pays Ada, Bob and Cy at once on `thread` (with `more` settings), holds
    /// Cy's call unsent, kills the child once Ada's and Bob's branches are checkpointed as done,
    /// and checks what the kill left: only their payouts sent, Cy's call in flight.
    fn killed_during_payouts(&self, thread: &str, more: &[(&str, &str)]) -> Stored {
        let mut vars = vec![
            (ACTION, "start"),
            (THREAD, thread),
            (MESSAGE, "Pay everyone"),
            (STATE, r#"{"payees": ["ada", "bob", "cy"]}"#),
            (HOLD_KEY, CY),
        ];
        vars.extend_from_slice(more);
        let first = self.child(&vars);
        eventually("two branches are done", || self.branches_done(thread) == 2);
        first.kill();
        let mut sent = self.service.requests();
        sent.sort();
        assert_eq!(sent, [ADA, BOB], "Cy's payout was never sent");
        let killed = self.stored_with_key(thread, CY);
        assert_eq!(killed.unfinished, [thread]);
        assert_eq!(killed.in_flight.len(), 1, "Cy's call is in flight");
        killed
    }
}

#[test]
fn kill_9_during_a_fan_out_loses_nothing_and_pays_no_finished_branch_again() {
    let setup = fan_out();
    let killed = setup.killed_during_payouts("f", &[]);
    assert_eq!(killed.in_flight[0].key, CY);
    let fork = killed.thread.run.as_ref().unwrap().fork.as_ref().unwrap();
    let open: Vec<&str> = fork
        .branches
        .iter()
        .filter(|branch| branch.status == tenx_engine::thread::BranchStatus::Running)
        .map(|branch| branch.path.as_str())
        .collect();
    assert_eq!(open, ["send_payout[2]"]);

    let done = setup.recover_paying_each_once("f", &[ADA, BOB, CY]);
    // Ada's and Bob's calls completed before the kill (in either order); Cy's was in flight, so
    // recovery sent it again under its key, once.
    assert_paid_once_after_resending(&done, CY, &[ADA, BOB]);
    // The three tool results are in the conversation, in item order.
    let results: Vec<String> = done
        .thread
        .context
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| message.text_content())
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
}

#[test]
fn kill_9_inside_a_subgraph_a_map_runs_resends_only_the_unfinished_call() {
    let setup = setup_with("nested.tenx", include_str!("nested.tenx"));
    // Ada's and Bob's items finish (their subgraphs ended) while Cy's call is held, unsent.
    let killed = setup.killed_during_payouts("n", &[(GRAPH, "payouts")]);
    // The call in flight is checkpointed two forks down: Cy's item, the subgraph it runs.
    let run = killed.thread.run.as_ref().unwrap();
    let map = run.fork.as_ref().unwrap();
    let cy = map.branches.iter().find(|branch| branch.path == "pay_one[2]").unwrap();
    assert_eq!(cy.status, tenx_engine::thread::BranchStatus::Running);
    let inner = cy.inner.as_ref().expect("the item's subgraph is in its branch");
    assert_eq!(inner.fork.subgraph.as_deref(), Some("pay_one"));
    let in_flight = inner.branches["pay_one"].in_flight.as_ref().unwrap();
    assert_eq!(in_flight.arguments, json!({"payee": "cy", "amount_cents": 1250}));

    let done = setup.recover_paying_each_once("n", &[ADA, BOB, CY]);
    assert_paid_once_after_resending(&done, CY, &[ADA, BOB]);
}

/// The records of a fan-out whose `finished` calls completed before the kill and whose `resent`
/// call was in flight: recovery sent it again under its key, once, and it completed.
fn assert_paid_once_after_resending(done: &Stored, resent: &str, finished: &[&str]) {
    let mut records: Vec<(String, Value, Value)> = done.records.clone();
    records.sort_by_key(|(_, what, key)| (key.to_string(), what.to_string()));
    let tool_call = |what: &str, key: &str| ("tool_call".to_owned(), json!(what), json!(key));
    let mut expected: Vec<(String, Value, Value)> = finished.iter().map(|key| tool_call("completed", key)).collect();
    expected.push(tool_call("completed", resent));
    expected.push(tool_call("resent", resent));
    expected.sort_by_key(|(_, what, key)| (key.to_string(), what.to_string()));
    assert_eq!(records, expected);
}
