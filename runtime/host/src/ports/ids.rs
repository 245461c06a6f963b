//! Ids from the operating system's CSPRNG (`getrandom`): interrupt ids `int_` + 32 lowercase
//! hex digits (contract D1: an id cannot be guessed from another), run and message ids `run_` /
//! `msg_` + 32 hex, thread ids UUID v4.
//!
//! The `Ids` port cannot fail, so [`OsIds::new`] reads the random source once and refuses to
//! build when it cannot; should a later read fail (on Linux it does not once the kernel's pool
//! is ready), the id is the SHA-256 of a 32-byte secret drawn at construction and a counter:
//! still unpredictable to anyone without the secret, never a guessable sequence.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};
use tenx_engine::ports::Ids;

/// The operating system's random source could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the operating system's random source could not be read")]
pub struct RandomSourceError;

/// Ids from the OS CSPRNG.
pub struct OsIds {
    secret: [u8; 32],
    counter: AtomicU64,
}

impl std::fmt::Debug for OsIds {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("OsIds").finish_non_exhaustive()
    }
}

impl OsIds {
    /// Reads the random source once (the fallback secret), refusing when it cannot be read.
    pub fn new() -> Result<Self, RandomSourceError> {
        let mut secret = [0_u8; 32];
        getrandom::fill(&mut secret).map_err(|_| RandomSourceError)?;
        Ok(Self {
            secret,
            counter: AtomicU64::new(0),
        })
    }

    /// 16 unpredictable bytes.
    fn bytes(&self) -> [u8; 16] {
        let mut bytes = [0_u8; 16];
        if getrandom::fill(&mut bytes).is_ok() {
            return bytes;
        }
        self.hashed()
    }

    /// The fallback: SHA-256 of the secret and a counter, truncated to 16 bytes.
    fn hashed(&self) -> [u8; 16] {
        let mut bytes = [0_u8; 16];
        let count = self.counter.fetch_add(1, Ordering::Relaxed);
        let digest = Sha256::new()
            .chain_update(self.secret)
            .chain_update(count.to_le_bytes())
            .finalize();
        for (byte, hashed) in bytes.iter_mut().zip(digest.iter()) {
            *byte = *hashed;
        }
        bytes
    }

    fn prefixed(&self, prefix: &str) -> String {
        let mut text = String::with_capacity(prefix.len().saturating_add(32));
        text.push_str(prefix);
        for byte in self.bytes() {
            let _ = write!(text, "{byte:02x}");
        }
        text
    }
}

impl Ids for OsIds {
    fn thread_id(&self) -> String {
        let mut bytes = self.bytes();
        if let Some(version) = bytes.get_mut(6) {
            *version = (*version & 0x0f) | 0x40;
        }
        if let Some(variant) = bytes.get_mut(8) {
            *variant = (*variant & 0x3f) | 0x80;
        }
        let mut text = String::with_capacity(36);
        for (index, byte) in bytes.iter().enumerate() {
            if matches!(index, 4 | 6 | 8 | 10) {
                text.push('-');
            }
            let _ = write!(text, "{byte:02x}");
        }
        text
    }

    fn run_id(&self) -> String {
        self.prefixed("run_")
    }

    fn message_id(&self) -> String {
        self.prefixed("msg_")
    }

    fn interrupt_id(&self) -> String {
        self.prefixed("int_")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn ids_have_their_shapes_and_do_not_repeat() {
        let ids = OsIds::new().unwrap();
        let interrupts: BTreeSet<String> = (0..1000).map(|_| ids.interrupt_id()).collect();
        assert_eq!(interrupts.len(), 1000);
        for id in &interrupts {
            assert_eq!(id.len(), 36);
            assert!(id.starts_with("int_"));
            assert!(
                id[4..].bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f')),
                "{id}"
            );
        }
        let thread = ids.thread_id();
        assert_eq!(thread.len(), 36);
        assert_eq!(&thread[14..15], "4", "{thread}");
        assert!(matches!(&thread[19..20], "8" | "9" | "a" | "b"), "{thread}");
        assert!(ids.run_id().starts_with("run_"));
        assert!(ids.message_id().starts_with("msg_"));
    }

    #[test]
    fn the_fallback_never_repeats_and_differs_per_process() {
        let ids = OsIds::new().unwrap();
        let hashed: BTreeSet<[u8; 16]> = (0..1000).map(|_| ids.hashed()).collect();
        assert_eq!(hashed.len(), 1000);
        let other = OsIds::new().unwrap();
        assert_ne!(ids.secret, other.secret, "each instance draws its own secret");
    }
}
