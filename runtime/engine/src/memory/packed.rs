//! The compact form the in-memory store keeps its values in: one MessagePack buffer per value
//! instead of the decoded tree.
//!
//! Why: a decoded thread paused at an approval is about 20 KB of small heap blocks (every
//! `serde_json` object is a B-tree with its own nodes, and the question appears both in the
//! pending call and in `execution.interrupt_data`); the same thread packed is under 4 KB in one
//! block. Packing uses field names (structs as maps), so every shape the engine serialises
//! reads back equal: internally tagged enums, `serde_json::Value`s, integers as integers and
//! floats with their exact bits (MessagePack stores `f64` as its 8 bytes, where a JSON text
//! would round-trip through decimal).

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ports::StoreError;

/// The buffer a checkpoint is first encoded into, in bytes (a paused thread packs to under 4 KB).
pub(super) const CHECKPOINT_BUFFER: usize = 4096;

/// The buffer a receipt or a record is first encoded into, in bytes.
const SMALL_BUFFER: usize = 256;

/// A value of type `T`, packed. Cloning shares the bytes, so a read copies them out of the
/// store's lock cheaply and decodes outside it.
///
/// The bytes stay in the buffer they were encoded into (no copy into an exact-sized block: that
/// copy was a whole checkpoint's bytes at every step of a run). A value kept for long is trimmed
/// first ([`Packed::from_packed`], [`Packed::pack`]), so it holds no spare capacity.
pub(super) struct Packed<T> {
    bytes: Arc<Vec<u8>>,
    kind: PhantomData<fn() -> T>,
}

impl<T: Serialize + DeserializeOwned> Packed<T> {
    /// Packs `value`; `what` names it in the error (a value that cannot be encoded, which the
    /// engine's own types never are).
    pub(super) fn pack(value: &T, what: &dyn fmt::Display) -> Result<Self, StoreError> {
        Self::pack_from(Vec::with_capacity(SMALL_BUFFER), value, what)
    }

    /// Packs a thread's checkpoint: as [`Packed::pack`], from a buffer sized for one.
    pub(super) fn pack_checkpoint(value: &T, what: &dyn fmt::Display) -> Result<Self, StoreError> {
        Self::pack_from(Vec::with_capacity(CHECKPOINT_BUFFER), value, what)
    }

    /// Encodes `value` into `bytes` (sized for a typical value of its kind, so encoding does
    /// not grow it step by step), trimmed to its length.
    fn pack_from(mut bytes: Vec<u8>, value: &T, what: &dyn fmt::Display) -> Result<Self, StoreError> {
        rmp_serde::encode::write_named(&mut bytes, value)
            .map_err(|error| StoreError::Failed(format!("encoding {what}: {error}")))?;
        Ok(Self::from_packed(bytes, true))
    }

    /// The value back, equal to the one packed.
    pub(super) fn unpack(&self, what: &dyn fmt::Display) -> Result<T, StoreError> {
        rmp_serde::from_slice(&self.bytes).map_err(|error| StoreError::Failed(format!("decoding {what}: {error}")))
    }

    /// The packed size in bytes.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.bytes.len()
    }
}

impl<T> Packed<T> {
    /// `bytes`, which hold a `T` packed as [`Packed::pack`] packs it (a checkpoint packed by
    /// `super::checkpoint`), trimmed to their length when the value is `kept` for long (a
    /// checkpoint at rest); a step's checkpoint, replaced at the next step, keeps its buffer.
    pub(super) fn from_packed(mut bytes: Vec<u8>, kept: bool) -> Self {
        if kept {
            bytes.shrink_to_fit();
        }
        Self {
            bytes: Arc::new(bytes),
            kind: PhantomData,
        }
    }

    /// The packed bytes.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl<T> Clone for Packed<T> {
    fn clone(&self) -> Self {
        Self {
            bytes: Arc::clone(&self.bytes),
            kind: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Packed<T> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Packed({} bytes)", self.bytes.len())
    }
}
