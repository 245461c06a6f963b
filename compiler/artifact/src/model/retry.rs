//! Retry policies: how often the runtime attempts a tool call or a model call again after a
//! transport error, how long it waits between attempts, and which errors it retries. A tool's
//! own policy is [`super::Tool::retry`]; a graph overrides it at a tool node, or gives an agent
//! node's model calls one, with [`NodeRetry`].

use serde::{Deserialize, Serialize};

use super::{HttpMethod, Risk, Run, Tool};

/// The fewest attempts a policy may allow (the first try and one retry).
pub const MIN_ATTEMPTS: u64 = 2;
/// The most attempts a policy may allow, the first try included.
pub const MAX_ATTEMPTS: u64 = 10;
/// `attempts` when the program leaves it out.
pub const DEFAULT_ATTEMPTS: u64 = 3;
/// `backoff` when the program leaves it out: one second.
pub const DEFAULT_BACKOFF_MS: u64 = 1_000;
/// `max_backoff` when the program leaves it out: thirty seconds.
pub const DEFAULT_MAX_BACKOFF_MS: u64 = 30_000;

/// When and how a failed call is attempted again.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// How many attempts one call may take, the first included: [`MIN_ATTEMPTS`] to
    /// [`MAX_ATTEMPTS`].
    pub attempts: u64,
    /// The cap of the wait before the first retry, in milliseconds (at least 1); it doubles
    /// for each later retry.
    pub backoff_ms: u64,
    /// The largest cap of any wait, and of an honoured `Retry-After`, in milliseconds: at
    /// least `backoff_ms`.
    pub max_backoff_ms: u64,
    /// The error classes that are retried: sorted, without repeats, never empty. Any other
    /// failure is never retried.
    pub on: Vec<RetryOn>,
}

impl RetryPolicy {
    pub(crate) fn normalize(&mut self) {
        super::sort_unique(&mut self.on);
    }

    /// What is wrong with the policy's numbers and classes, if anything.
    pub fn problems(&self) -> Vec<String> {
        let mut found = Vec::new();
        if !(MIN_ATTEMPTS..=MAX_ATTEMPTS).contains(&self.attempts) {
            found.push(format!(
                "`attempts` must be {MIN_ATTEMPTS} to {MAX_ATTEMPTS}, not {}",
                self.attempts
            ));
        }
        if self.backoff_ms == 0 {
            found.push("`backoff_ms` must be at least 1".to_owned());
        }
        if self.max_backoff_ms < self.backoff_ms {
            found.push(format!(
                "`max_backoff_ms` ({}) must be at least `backoff_ms` ({})",
                self.max_backoff_ms, self.backoff_ms
            ));
        }
        if self.on.is_empty() {
            found.push("`on` must name at least one error class".to_owned());
        }
        let sorted = self.on.windows(2).all(|pair| match pair {
            [a, b] => a < b,
            _ => true,
        });
        if !sorted {
            found.push("`on` must be sorted and without repeats".to_owned());
        }
        found
    }
}

/// An error class a [`RetryPolicy`] can retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryOn {
    /// The attempt got no answer within its timeout.
    Timeout,
    /// The attempt could not connect, or its connection was reset or closed before an answer.
    Connection,
    /// The service refused the attempt for its rate (HTTP 429).
    RateLimited,
    /// The service failed (HTTP 5xx).
    ServerError,
}

impl RetryOn {
    /// Every class, in the artifact's order.
    pub const ALL: [RetryOn; 4] = [Self::Timeout, Self::Connection, Self::RateLimited, Self::ServerError];

    /// The class as the language and the artifact write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Connection => "connection",
            Self::RateLimited => "rate_limited",
            Self::ServerError => "server_error",
        }
    }

    /// The class written `name`, if there is one.
    pub fn parse(name: &str) -> Option<RetryOn> {
        Self::ALL.into_iter().find(|class| class.as_str() == name)
    }
}

/// A graph's retry policy for one node: at a tool node it replaces the tool's own policy, at an
/// agent node it retries the agent's model calls. Never at an interrupt node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeRetry {
    /// An agent or tool node of the graph.
    pub node: String,
    /// The policy at that node.
    pub policy: RetryPolicy,
}

/// Why the calls of `tool` may not be retried at all, or `None` when they may: a call is
/// retried only when a repeat cannot act twice. That holds for a tool with an
/// `idempotency_key`, and for a `low` risk `http` tool whose method is idempotent by HTTP's
/// own rules (`GET`, `PUT`, `DELETE`). A `remote` tool never: the client runs it, not the
/// runtime.
pub fn retry_refusal(tool: &Tool) -> Option<&'static str> {
    match &tool.run {
        Run::Remote => Some("the client runs it (`remote`), so the runtime cannot attempt it again"),
        _ if tool.idempotency_key.is_some() => None,
        Run::Http {
            method: HttpMethod::Get | HttpMethod::Put | HttpMethod::Delete,
            ..
        } if tool.risk == Risk::Low => None,
        _ => Some(
            "it has no `idempotency_key`, and is not a `low` risk `http` call with an idempotent method (`GET`, `PUT`, `DELETE`)",
        ),
    }
}
