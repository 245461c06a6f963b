//! What a fork's commits hold, read from every checkpoint the engine commits (a store that keeps
//! a copy of each): a branch's last step, the one that takes it to the join, is committed
//! together with the branch's end, never alone a commit before it (that commit wrote every
//! branch of the thread again for a state nothing reads: the next thing the lane does is end).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tenx_engine::ports::{Commit, ModelClient, Ports, Receipt, Record, Store, StoreError, ThreadLease, ThreadSummary};
use tenx_engine::testing::{FakeTools, ManualClock, RecordingEvents, SequentialIds};
use tenx_engine::thread::{BranchStatus, ThreadRecord};
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{Engine, MemoryStore, RunRequest, ScriptedModel};

/// A memory store that keeps a copy of every checkpoint committed, in order.
#[derive(Default)]
struct Keeping {
    store: MemoryStore,
    committed: Mutex<Vec<ThreadRecord>>,
}

#[async_trait]
impl Store for Keeping {
    async fn load(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        self.store.load(thread_id).await
    }
    async fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        if let Some(thread) = &commit.thread {
            self.committed.lock().unwrap().push(thread.clone());
        }
        self.store.commit(commit).await
    }
    async fn commit_checkpoint(&self, thread: &ThreadRecord, commit: Commit) -> Result<(), StoreError> {
        self.committed.lock().unwrap().push(thread.clone());
        self.store.commit_checkpoint(thread, commit).await
    }
    async fn receipt(&self, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError> {
        self.store.receipt(thread_id, key).await
    }
    async fn in_flight(&self, thread_id: &str) -> Result<Vec<Receipt>, StoreError> {
        self.store.in_flight(thread_id).await
    }
    async fn records(&self, thread_id: &str) -> Result<Vec<Record>, StoreError> {
        self.store.records(thread_id).await
    }
    async fn list_threads(
        &self,
        owner: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        self.store.list_threads(owner, offset, limit).await
    }
    async fn delete_thread(&self, thread_id: &str) -> Result<bool, StoreError> {
        self.store.delete_thread(thread_id).await
    }
    async fn lock(&self, thread_id: &str) -> Result<Box<dyn ThreadLease>, StoreError> {
        self.store.lock(thread_id).await
    }
}

#[tokio::test]
async fn a_branchs_last_step_is_committed_with_its_end() {
    // The fan-out benchmark's parallel program: eight workers, each an agent → tool → agent turn,
    // joined by the writer.
    let program = std::fs::read_to_string(tenx_tests::repo_root().join("bench/programs/fanout_parallel.tenx")).unwrap();
    let artifact = crate::harness::compile(&program);
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    for name in artifact.artifact.models.keys() {
        models.insert(name.clone(), Arc::new(ScriptedModel::new()));
    }
    let store = Arc::new(Keeping::default());
    let tools = Arc::new(FakeTools::new().returns("fetch", json!({"summary": "known"})));
    let ports = Ports {
        store: store.clone(),
        models,
        tools: tools.clone(),
        clock: Arc::new(ManualClock::new(crate::harness::T0)),
        ids: Arc::new(SequentialIds::new()),
    };
    let engine = Engine::new(artifact, ports, crate::harness::dev()).unwrap();
    let done = engine
        .run(
            RunRequest {
                thread_id: Some("f".into()),
                messages: vec![crate::harness::user("Research the topics.")],
                ..RunRequest::default()
            },
            &mut RecordingEvents::new(),
        )
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(tools.calls_of("fetch"), 8);

    let committed = store.committed.lock().unwrap();
    let mut ended = 0;
    for (index, thread) in committed.iter().enumerate() {
        let Some(run) = &thread.run else { continue };
        let Some(fork) = &run.fork else { continue };
        for branch in &fork.branches {
            let at = run.branches.get(&branch.path).map(|progress| progress.node.as_str());
            if at == Some("writer") {
                assert_eq!(
                    branch.status,
                    BranchStatus::Done,
                    "commit {index}: branch {} is at the join but not ended",
                    branch.path
                );
                ended += 1;
            }
        }
    }
    // Every branch was seen ended at the join in some commit (the join's own commit drops the fork).
    assert!(ended >= 8, "{ended} branch ends seen in {} commits", committed.len());
}
