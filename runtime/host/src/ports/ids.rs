//! Ids from the operating system's CSPRNG (`getrandom`): interrupt ids `int_` + 32 lowercase
//! hex digits (contract D1: an id cannot be guessed from another), run and message ids `run_` /
//! `msg_` + 32 hex, thread ids UUID v4.
//!
//! Every id is drawn from the OS random source, and from nothing else: there is no fallback
//! generator. [`OsIds::new`] reads the source once and refuses to build when it cannot. Should
//! a later read fail (on Linux it does not once the kernel's pool is ready), the id is **not
//! drawn**: the source counts the failure (`Ids::failures`) and returns a placeholder that is
//! not of the id's shape (`int_unavailable`); the engine then refuses to commit anything of the
//! request that drew it (`RANDOM_SOURCE_UNAVAILABLE`), so the placeholder is never stored,
//! never answered to a caller, and the thread stays at its last checkpoint.

use std::sync::atomic::{AtomicU64, Ordering};

use data_encoding::HEXLOWER;
use tenx_engine::ports::Ids;

/// The operating system's random source could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the operating system's random source could not be read")]
pub struct RandomSourceError;

/// Fills a buffer from a random source.
type Fill = fn(&mut [u8]) -> Result<(), RandomSourceError>;

/// The OS CSPRNG.
fn os_fill(bytes: &mut [u8]) -> Result<(), RandomSourceError> {
    getrandom::fill(bytes).map_err(|_| RandomSourceError)
}

/// What a failed draw returns after its prefix: not hex, so never mistaken for an id.
const UNAVAILABLE: &str = "unavailable";

/// Ids from the OS CSPRNG.
pub struct OsIds {
    fill: Fill,
    failures: AtomicU64,
}

impl std::fmt::Debug for OsIds {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("OsIds")
            .field("failures", &self.failures.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl OsIds {
    /// Checks that the random source can be read, refusing when it cannot.
    pub fn new() -> Result<Self, RandomSourceError> {
        Self::with_source(os_fill)
    }

    /// Over another source (tests make one fail).
    fn with_source(fill: Fill) -> Result<Self, RandomSourceError> {
        let mut probe = [0_u8; 16];
        fill(&mut probe)?;
        Ok(Self {
            fill,
            failures: AtomicU64::new(0),
        })
    }

    /// 16 bytes from the source, or `None` (counted) when it cannot be read.
    fn bytes(&self) -> Option<[u8; 16]> {
        let mut bytes = [0_u8; 16];
        match (self.fill)(&mut bytes) {
            Ok(()) => Some(bytes),
            Err(RandomSourceError) => {
                self.failures.fetch_add(1, Ordering::SeqCst);
                None
            }
        }
    }

    fn prefixed(&self, prefix: &str) -> String {
        let mut text = String::with_capacity(prefix.len().saturating_add(32));
        text.push_str(prefix);
        match self.bytes() {
            Some(bytes) => HEXLOWER.encode_append(&bytes, &mut text),
            None => text.push_str(UNAVAILABLE),
        }
        text
    }
}

impl Ids for OsIds {
    fn thread_id(&self) -> String {
        let Some(mut bytes) = self.bytes() else {
            return UNAVAILABLE.to_owned();
        };
        if let Some(version) = bytes.get_mut(6) {
            *version = (*version & 0x0f) | 0x40;
        }
        if let Some(variant) = bytes.get_mut(8) {
            *variant = (*variant & 0x3f) | 0x80;
        }
        // 8-4-4-4-12 hex digits.
        let mut text = String::with_capacity(36);
        for (index, digit) in HEXLOWER.encode(&bytes).chars().enumerate() {
            if matches!(index, 8 | 12 | 16 | 20) {
                text.push('-');
            }
            text.push(digit);
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

    fn failures(&self) -> u64 {
        self.failures.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::atomic::AtomicBool;

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
        let groups: Vec<usize> = thread.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{thread}");
        assert!(
            thread
                .bytes()
                .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f' | b'-')),
            "{thread}"
        );
        assert_eq!(&thread[14..15], "4", "{thread}");
        assert!(matches!(&thread[19..20], "8" | "9" | "a" | "b"), "{thread}");
        assert!(ids.run_id().starts_with("run_"));
        assert!(ids.message_id().starts_with("msg_"));
        assert_eq!(ids.failures(), 0);
    }

    /// A source the test breaks after construction.
    static BROKEN: AtomicBool = AtomicBool::new(false);

    fn breakable(bytes: &mut [u8]) -> Result<(), RandomSourceError> {
        if BROKEN.load(Ordering::SeqCst) {
            return Err(RandomSourceError);
        }
        os_fill(bytes)
    }

    fn always_broken(_: &mut [u8]) -> Result<(), RandomSourceError> {
        Err(RandomSourceError)
    }

    #[test]
    fn a_source_that_cannot_be_read_is_refused_at_construction() {
        assert_eq!(OsIds::with_source(always_broken).unwrap_err(), RandomSourceError);
    }

    #[test]
    fn a_failed_draw_is_counted_and_yields_no_id_of_the_ids_shape() {
        let ids = OsIds::with_source(breakable).unwrap();
        assert!(ids.interrupt_id().len() == 36 && ids.failures() == 0);
        BROKEN.store(true, Ordering::SeqCst);
        let drawn = [ids.interrupt_id(), ids.run_id(), ids.message_id(), ids.thread_id()];
        BROKEN.store(false, Ordering::SeqCst);
        assert_eq!(
            drawn,
            ["int_unavailable", "run_unavailable", "msg_unavailable", "unavailable"],
            "no id is made up when the source fails"
        );
        assert_eq!(ids.failures(), 4);
        // The source works again: ids are drawn again, and the count never goes back.
        let again = ids.interrupt_id();
        assert!(again.len() == 36 && again[4..].bytes().all(|byte| byte.is_ascii_hexdigit()));
        assert_eq!(ids.failures(), 4);
    }
}
