//! Ids that count, so tests and snapshots are deterministic.
//!
//! **Not for production.** The interrupt ids have the production shape (`int_` + 32 lowercase
//! hex digits) but they are a counter, so anyone can guess the next one; the `Ids` port requires
//! a CSPRNG for real hosts, and a host must never wire this type.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::ports::Ids;

/// Counting ids, one counter per kind: `thread_1`, `run_1`, `msg_1`,
/// `int_00000000000000000000000000000001`. Guessable: for tests only.
#[derive(Debug, Default)]
pub struct SequentialIds {
    threads: AtomicU64,
    runs: AtomicU64,
    messages: AtomicU64,
    interrupts: AtomicU64,
}

impl SequentialIds {
    /// Counters at zero (the first id of each kind ends in 1).
    pub fn new() -> Self {
        Self::default()
    }
}

/// The next value of a counter, from 1.
fn next(counter: &AtomicU64) -> u64 {
    counter.fetch_add(1, Ordering::SeqCst).wrapping_add(1)
}

impl Ids for SequentialIds {
    fn thread_id(&self) -> String {
        format!("thread_{}", next(&self.threads))
    }

    fn run_id(&self) -> String {
        format!("run_{}", next(&self.runs))
    }

    fn message_id(&self) -> String {
        format!("msg_{}", next(&self.messages))
    }

    fn interrupt_id(&self) -> String {
        format!("int_{:032x}", next(&self.interrupts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_counts_on_its_own() {
        let ids = SequentialIds::new();
        assert_eq!(ids.thread_id(), "thread_1");
        assert_eq!(ids.message_id(), "msg_1");
        assert_eq!(ids.message_id(), "msg_2");
        assert_eq!(ids.run_id(), "run_1");
        assert_eq!(ids.thread_id(), "thread_2");
        assert_eq!(ids.interrupt_id(), "int_00000000000000000000000000000001");
        assert_eq!(ids.interrupt_id(), "int_00000000000000000000000000000002");
    }

    #[test]
    fn interrupt_ids_have_the_production_shape() {
        let ids = SequentialIds::new();
        for _ in 0..20 {
            let id = ids.interrupt_id();
            let hex = id.strip_prefix("int_").unwrap();
            assert_eq!(hex.len(), 32);
            assert!(
                hex.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
                "{id}"
            );
        }
    }
}
