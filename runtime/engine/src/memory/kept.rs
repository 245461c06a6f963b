//! How the in-memory store keeps a thread's checkpoint: **packed** once the run is at rest
//! (paused, completed, failed), the form that may stay for hours, so the one that must be
//! small; and packed too when the engine **lends** it (`Store::commit_checkpoint`, every step of
//! a run), because keeping a lent checkpoint decoded would mean copying the whole thread and
//! dropping the copy it replaces, which costs more than encoding it. Only a checkpoint given
//! owned in a `Commit` while its run is in progress (status `running`) is kept **decoded**, as
//! given. Memory is then bounded by the packed threads plus the few decoded ones.

use std::sync::Arc;

use crate::ports::StoreError;
use crate::thread::ThreadRecord;
use crate::wire::ExecutionStatus;

use super::checkpoint::{self, Previous, Spans};
use super::packed::{CHECKPOINT_BUFFER, Packed};

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
        Packed::pack_checkpoint(&thread, &format_args!("thread '{}'", thread.thread_id)).map(Self::Packed)
    }

    /// The form for a lent `thread`: always packed. Keeping it decoded would need a copy of
    /// the whole thread, and packing it costs less than making that copy and dropping the one
    /// it replaces (the engine lends every step's checkpoint: see `Store::commit_checkpoint`).
    /// The messages `previous` (the checkpoint it replaces) holds are copied, not encoded again
    /// ([`checkpoint`]). While its run is in progress, its messages' spans come with it, for the
    /// next step to copy; at rest they are dropped (a paused thread stays small).
    pub(super) fn of_lent(
        thread: &ThreadRecord,
        previous: Option<Previous<'_>>,
    ) -> Result<(Self, Option<Spans>), StoreError> {
        let held = previous.map_or(0, |previous| previous.bytes.len());
        let mut bytes = Vec::with_capacity(CHECKPOINT_BUFFER.max(held.saturating_add(held / 4)));
        let what = format_args!("thread '{}'", thread.thread_id);
        let spans = checkpoint::pack(&mut bytes, thread, previous, &what)?;
        let running = thread.execution.status == ExecutionStatus::Running;
        Ok((
            Self::Packed(Packed::from_packed(bytes, !running)),
            running.then(|| Arc::new(spans)),
        ))
    }

    /// A fresh copy of the checkpoint, equal to the one committed.
    pub(super) fn read(&self, thread_id: &str) -> Result<ThreadRecord, StoreError> {
        match self {
            Self::Decoded(thread) => Ok(ThreadRecord::clone(thread)),
            Self::Packed(packed) => packed.unpack(&format_args!("thread '{thread_id}'")),
        }
    }
}
