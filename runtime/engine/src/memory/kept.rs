//! How the in-memory store keeps a thread's checkpoint: **decoded while its run is in
//! progress** (status `running`: the engine commits it again after the next step, so packing
//! it would be wasted work on the hot path), **packed once the run is at rest** (paused,
//! completed, failed): the form that may stay for hours, so the one that must be small. Memory
//! is then bounded by the runs in progress, which the engine holds in memory anyway, plus the
//! packed threads at rest.

use std::sync::Arc;

use crate::ports::StoreError;
use crate::thread::ThreadRecord;
use crate::wire::ExecutionStatus;

use super::packed::Packed;

/// A stored checkpoint in one of its two forms. Cloning either shares it (a read takes a
/// handle under the store's lock and copies or decodes outside it).
#[derive(Debug, Clone)]
pub(super) enum Kept {
    /// Mid-run.
    Decoded(Arc<ThreadRecord>),
    /// At rest.
    Packed(Packed<ThreadRecord>),
}

impl Kept {
    /// The form for `thread` (encoding it when it is at rest).
    pub(super) fn of(thread: ThreadRecord) -> Result<Self, StoreError> {
        if thread.execution.status == ExecutionStatus::Running {
            return Ok(Self::Decoded(Arc::new(thread)));
        }
        Packed::pack(&thread, &format_args!("thread '{}'", thread.thread_id)).map(Self::Packed)
    }

    /// A fresh copy of the checkpoint, equal to the one committed.
    pub(super) fn read(&self, thread_id: &str) -> Result<ThreadRecord, StoreError> {
        match self {
            Self::Decoded(thread) => Ok(ThreadRecord::clone(thread)),
            Self::Packed(packed) => packed.unpack(&format_args!("thread '{thread_id}'")),
        }
    }
}
