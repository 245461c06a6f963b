//! How the store packs a lent checkpoint (`Store::commit_checkpoint`: every step of a run): into
//! the bytes `rmp_serde::encode::write_named` writes for it, except that each message of the
//! conversation the checkpoint it replaces already held is copied from that checkpoint's bytes
//! instead of being encoded again. A run only adds messages, so a step encodes its new messages
//! and copies the others: a run's conversation is encoded about once, where it was encoded again
//! at every step (a cost that grew with the square of its length).
//!
//! A message is copied when the replaced checkpoint has one with the same id at the same place
//! in the conversation: an id names one message of a thread for good (a thread's history is
//! never rewritten, `run::write_rules`), and the engine gives every message an id before it
//! enters the conversation. Debug builds check that promise: they encode each copied message
//! again and refuse the commit ([`StoreError::Failed`]) when the bytes differ, so a message
//! changed under its id fails the engine's tests instead of going unnoticed.

use std::ops::Range;
use std::sync::Arc;

use serde::Serialize;

use crate::ports::StoreError;
use crate::thread::ThreadRecord;
use crate::wire::Message;

/// Where one message of a packed conversation lies in its checkpoint's bytes.
#[derive(Debug, Clone)]
pub(super) struct Span {
    /// The message's id (shared with the spans of the checkpoints that copy it).
    id: Arc<str>,
    range: Range<usize>,
}

/// The spans of a checkpoint's messages, in order; shared by the store's handles to it.
pub(super) type Spans = Arc<[Span]>;

impl Span {
    /// Whether this span's message was copied from `held`'s (they share its id).
    #[cfg(test)]
    pub(super) fn copied_from(&self, held: &Self) -> bool {
        Arc::ptr_eq(&self.id, &held.id)
    }
}

/// A packed checkpoint whose messages may be copied: its bytes and its messages' spans.
#[derive(Debug, Clone, Copy)]
pub(super) struct Previous<'p> {
    pub(super) bytes: &'p [u8],
    pub(super) spans: &'p [Span],
}

/// How many fields a [`ThreadRecord`] writes (every one: none is skipped).
const FIELDS: u32 = 15;

/// Packs `thread` as `write_named` does into `bytes`, copying the messages `previous` holds (see
/// the module docs); `what` names it in errors. Returns the spans of its messages.
pub(super) fn pack(
    bytes: &mut Vec<u8>,
    thread: &ThreadRecord,
    previous: Option<Previous<'_>>,
    what: &dyn std::fmt::Display,
) -> Result<Vec<Span>, StoreError> {
    let failed = |error: String| StoreError::Failed(format!("encoding {what}: {error}"));
    // Every field, so that a field added to the record fails to build here until it is packed.
    let ThreadRecord {
        thread_id,
        artifact_id,
        graph,
        owner,
        version,
        created_at,
        updated_at,
        state,
        context,
        execution,
        pending,
        run,
        resume_at,
        model_cursors,
        substitutions,
    } = thread;
    rmp::encode::write_map_len(bytes, FIELDS).map_err(|error| failed(error.to_string()))?;
    field(bytes, "thread_id", thread_id).map_err(failed)?;
    field(bytes, "artifact_id", artifact_id).map_err(failed)?;
    field(bytes, "graph", graph).map_err(failed)?;
    field(bytes, "owner", owner).map_err(failed)?;
    field(bytes, "version", version).map_err(failed)?;
    field(bytes, "created_at", created_at).map_err(failed)?;
    field(bytes, "updated_at", updated_at).map_err(failed)?;
    field(bytes, "state", state).map_err(failed)?;
    key(bytes, "context").map_err(failed)?;
    let spans = conversation(bytes, context, previous).map_err(failed)?;
    field(bytes, "execution", execution).map_err(failed)?;
    field(bytes, "pending", pending).map_err(failed)?;
    field(bytes, "run", run).map_err(failed)?;
    field(bytes, "resume_at", resume_at).map_err(failed)?;
    field(bytes, "model_cursors", model_cursors).map_err(failed)?;
    field(bytes, "substitutions", substitutions).map_err(failed)?;
    Ok(spans)
}

/// A struct's field name, as `write_named` writes it.
fn key(bytes: &mut Vec<u8>, name: &str) -> Result<(), String> {
    rmp::encode::write_str(bytes, name).map_err(|error| error.to_string())
}

/// A field: its name, then its value.
fn field<T: Serialize + ?Sized>(bytes: &mut Vec<u8>, name: &str, value: &T) -> Result<(), String> {
    key(bytes, name)?;
    rmp_serde::encode::write_named(bytes, value).map_err(|error| error.to_string())
}

/// The conversation: each message copied from `previous` where it holds it, else encoded.
fn conversation(bytes: &mut Vec<u8>, context: &[Message], previous: Option<Previous<'_>>) -> Result<Vec<Span>, String> {
    let length = u32::try_from(context.len()).map_err(|_| "the conversation is too long".to_owned())?;
    rmp::encode::write_array_len(bytes, length).map_err(|error| error.to_string())?;
    let mut spans = Vec::with_capacity(context.len());
    for (index, message) in context.iter().enumerate() {
        let start = bytes.len();
        let held = previous.and_then(|previous| {
            let span = previous
                .spans
                .get(index)
                .filter(|span| !message.message_id.is_empty() && *span.id == *message.message_id)?;
            Some((Arc::clone(&span.id), previous.bytes.get(span.range.clone())?))
        });
        let id = match held {
            Some((id, packed)) => {
                bytes.extend_from_slice(packed);
                if cfg!(debug_assertions) {
                    same_as_encoded(message, packed)?;
                }
                id
            }
            None => {
                rmp_serde::encode::write_named(bytes, message).map_err(|error| error.to_string())?;
                Arc::from(message.message_id.as_str())
            }
        };
        spans.push(Span {
            id,
            range: start..bytes.len(),
        });
    }
    Ok(spans)
}

/// Debug builds: `packed`, copied for `message`, is what `message` encodes to.
fn same_as_encoded(message: &Message, packed: &[u8]) -> Result<(), String> {
    let encoded = rmp_serde::to_vec_named(message).map_err(|error| error.to_string())?;
    if encoded == packed {
        return Ok(());
    }
    Err(format!(
        "message '{}' changed under its id (a thread's history is never rewritten)",
        message.message_id
    ))
}
