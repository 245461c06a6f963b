//! An id that cannot be drawn from the random source fails closed: the request that drew it
//! commits nothing (`RANDOM_SOURCE_UNAVAILABLE`), so no made-up id is ever stored or answered,
//! and later requests run normally once the source works again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde_json::json;
use tenx_engine::ports::{Ids, Store};
use tenx_engine::testing::{FakeTools, SequentialIds};
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{ErrorCode, Identity};

use crate::harness::{Host, Models, dev, example_artifact};

const ASK: &str = "Refund order 1042, 59.00";

/// Counting ids whose interrupt ids fail (as `OsIds` does when its source fails) while `broken`.
#[derive(Default)]
struct Breakable {
    inner: SequentialIds,
    broken: AtomicBool,
    failures: AtomicU64,
}

impl Ids for Breakable {
    fn thread_id(&self) -> String {
        self.inner.thread_id()
    }

    fn run_id(&self) -> String {
        self.inner.run_id()
    }

    fn message_id(&self) -> String {
        self.inner.message_id()
    }

    fn interrupt_id(&self) -> String {
        if self.broken.load(Ordering::SeqCst) {
            self.failures.fetch_add(1, Ordering::SeqCst);
            return "int_unavailable".to_owned();
        }
        self.inner.interrupt_id()
    }

    fn failures(&self) -> u64 {
        self.failures.load(Ordering::SeqCst)
    }
}

#[tokio::test]
async fn a_question_whose_id_cannot_be_drawn_is_never_asked_and_nothing_is_recorded() {
    let ids = Arc::new(Breakable::default());
    let tools = FakeTools::new().returns("issue_refund", json!("Refunded."));
    let host = Host::with_ids(
        example_artifact("refund_approval"),
        tools,
        Models::Scripted,
        dev(),
        ids.clone(),
    );
    let anyone = Identity::anonymous();

    // A new thread: its first commit would hold the question, so nothing at all is stored.
    ids.broken.store(true, Ordering::SeqCst);
    let refused = host.say("new", ASK, &anyone).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::RandomSourceUnavailable);
    assert_eq!(refused.code.status(), 503);
    assert_eq!(host.store.load("new").await.unwrap(), None);
    assert!(host.records("new").await.is_empty());

    // A thread that finished a run: the next run's question cannot be drawn, and the thread
    // reads back byte-identical.
    ids.broken.store(false, Ordering::SeqCst);
    let paused = host.say("t", ASK, &anyone).await.unwrap();
    let interrupt = paused.thread.pending.unwrap().interrupt.unwrap().id;
    let done = host
        .answer("t", json!({"approved": true}), Some(&interrupt), &anyone)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let before = host.snapshot("t").await;
    let records = host.records("t").await;
    ids.broken.store(true, Ordering::SeqCst);
    let refused = host.say("t", "Refund order 7, 1.00", &anyone).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::RandomSourceUnavailable);
    assert_eq!(host.snapshot("t").await, before);
    assert_eq!(host.records("t").await, records);
    assert!(!host.snapshot("t").await.contains("int_unavailable"));

    // The source works again: the same request asks, with a drawn id.
    ids.broken.store(false, Ordering::SeqCst);
    let asked = host.say("t", "Refund order 7, 1.00", &anyone).await.unwrap();
    let id = asked.thread.pending.unwrap().interrupt.unwrap().id;
    assert!(id.starts_with("int_") && id.len() == 36, "{id}");
    assert_eq!(host.tools.calls_of("issue_refund"), 1, "only the approved refund ran");
}
