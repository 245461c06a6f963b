//! A tool runner for tests: answers each declared tool from a script and keeps a log of every
//! call it received, so a test can prove a tool ran exactly once per idempotency key.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ports::{ToolError, ToolErrorKind, ToolInvocation, ToolRunner};

/// How a scripted tool answers one invocation.
type Responder = Box<dyn Fn(&ToolInvocation<'_>) -> Result<Value, ToolError> + Send + Sync>;

/// One call the fake received.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeCall {
    /// The declared tool.
    pub tool: String,
    /// The thread.
    pub thread_id: String,
    /// The call id.
    pub call_id: String,
    /// The idempotency key.
    pub idempotency_key: String,
    /// The arguments it was given.
    pub arguments: Value,
    /// The user the call ran for (`None` without auth).
    pub user_id: Option<String>,
}

/// A [`ToolRunner`] that answers from a script, per declared tool name, and logs every call.
///
/// A tool with no answer scripted fails with `ToolErrorKind::Failed` (the call is still logged).
/// Every tool deduplicates unless [`FakeTools::not_deduplicating`] names its model-facing
/// `Tool::name` (the port shows the runner the declaration, not the declared name).
#[derive(Default)]
pub struct FakeTools {
    responders: BTreeMap<String, Responder>,
    not_deduplicating: BTreeSet<String>,
    calls: Mutex<Vec<FakeCall>>,
    /// Tools whose calls wait until this many of them are in progress at once.
    gathers: BTreeMap<String, std::sync::Arc<tokio::sync::Barrier>>,
}

impl std::fmt::Debug for FakeTools {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("FakeTools")
            .field("tools", &self.responders.keys().collect::<Vec<_>>())
            .field("not_deduplicating", &self.not_deduplicating)
            .field("calls", &self.log().len())
            .finish()
    }
}

impl FakeTools {
    /// No tool scripted.
    pub fn new() -> Self {
        Self::default()
    }

    /// `tool` answers with `result` every time.
    #[must_use]
    pub fn returns(self, tool: &str, result: Value) -> Self {
        self.responds(tool, move |_| Ok(result.clone()))
    }

    /// `tool` fails with `kind` and `message` every time.
    #[must_use]
    pub fn fails(self, tool: &str, kind: ToolErrorKind, message: &str) -> Self {
        let error = ToolError {
            kind,
            message: message.to_string(),
        };
        self.responds(tool, move |_| Err(error.clone()))
    }

    /// `tool` answers its calls with `answers` in order; the last answer repeats (no answers:
    /// every call fails as unscripted).
    #[must_use]
    pub fn sequence(self, tool: &str, answers: Vec<Result<Value, ToolError>>) -> Self {
        let next = AtomicUsize::new(0);
        let name = tool.to_string();
        self.responds(tool, move |_| {
            let index = next.fetch_add(1, Ordering::SeqCst);
            answers
                .get(index)
                .or_else(|| answers.last())
                .cloned()
                .unwrap_or_else(|| Err(unscripted(&name)))
        })
    }

    /// `tool` answers with whatever `respond` computes from the invocation.
    #[must_use]
    pub fn responds(
        mut self,
        tool: &str,
        respond: impl Fn(&ToolInvocation<'_>) -> Result<Value, ToolError> + Send + Sync + 'static,
    ) -> Self {
        self.responders.insert(tool.to_string(), Box::new(respond));
        self
    }

    /// Each call of `tool` waits, before it answers, until `count` calls of it are in progress
    /// together: calls made one after another never get past the first, so a test that
    /// finishes proves they ran at the same time.
    #[must_use]
    pub fn gathers(mut self, tool: &str, count: usize) -> Self {
        self.gathers
            .insert(tool.to_string(), std::sync::Arc::new(tokio::sync::Barrier::new(count)));
        self
    }

    /// The tool whose model-facing name is `name` cannot deduplicate (its key reaches nothing):
    /// after a crash the engine must mark its in-flight call `outcome_unknown`, not re-send it.
    #[must_use]
    pub fn not_deduplicating(mut self, name: &str) -> Self {
        self.not_deduplicating.insert(name.to_string());
        self
    }

    fn log(&self) -> MutexGuard<'_, Vec<FakeCall>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every call received, in order.
    pub fn calls(&self) -> Vec<FakeCall> {
        self.log().clone()
    }

    /// How many calls were received in all.
    pub fn total_calls(&self) -> usize {
        self.log().len()
    }

    /// How many calls `tool` received.
    pub fn calls_of(&self, tool: &str) -> usize {
        self.log().iter().filter(|call| call.tool == tool).count()
    }

    /// How many calls arrived with idempotency key `key` on `thread_id`.
    pub fn calls_for_key(&self, thread_id: &str, key: &str) -> usize {
        self.log()
            .iter()
            .filter(|call| call.thread_id == thread_id && call.idempotency_key == key)
            .count()
    }

    /// The `(thread, key)` pairs that arrived more than once: empty when every effect ran at most
    /// once.
    pub fn duplicate_keys(&self) -> Vec<(String, String)> {
        let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
        for call in self.log().iter() {
            let count = counts
                .entry((call.thread_id.clone(), call.idempotency_key.clone()))
                .or_default();
            *count = count.saturating_add(1);
        }
        counts
            .into_iter()
            .filter(|(_, count)| *count > 1)
            .map(|(pair, _)| pair)
            .collect()
    }
}

/// The error of a tool nobody scripted.
fn unscripted(tool: &str) -> ToolError {
    ToolError {
        kind: ToolErrorKind::Failed,
        message: format!("no answer is scripted for tool `{tool}`"),
    }
}

#[async_trait]
impl ToolRunner for FakeTools {
    async fn call(&self, invocation: ToolInvocation<'_>, cancel: &CancellationToken) -> Result<Value, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError {
                kind: ToolErrorKind::Failed,
                message: "the call was cancelled before it was sent".into(),
            });
        }
        self.log().push(FakeCall {
            tool: invocation.tool_name.to_string(),
            thread_id: invocation.thread_id.to_string(),
            call_id: invocation.call_id.to_string(),
            idempotency_key: invocation.idempotency_key.to_string(),
            arguments: invocation.arguments.clone(),
            user_id: invocation.identity.user_id.clone(),
        });
        if let Some(barrier) = self.gathers.get(invocation.tool_name) {
            barrier.wait().await;
        }
        match self.responders.get(invocation.tool_name) {
            Some(respond) => respond(&invocation),
            None => Err(unscripted(invocation.tool_name)),
        }
    }

    fn deduplicates(&self, tool: &tenx_artifact::Tool) -> bool {
        !self.not_deduplicating.contains(&tool.name)
    }
}

#[cfg(test)]
mod tests;
