//! The checkpoint format: which layout of [`super::ThreadRecord`] a stored checkpoint is in, so
//! that a tenx never misreads a checkpoint a newer tenx wrote (during a rolling upgrade, two
//! versions share one database) and refuses it by name instead.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

/// The format a checkpoint was written in. Its number rises whenever a newer tenx writes
/// something an older one would read differently; a tenx reads every format up to
/// [`CheckpointFormat::CURRENT`] and refuses a newer one.
///
/// - 1: checkpoints from before formats were numbered (they hold no `format`).
/// - 2: a fork's branch keeps only the state fields whose values differ from the state its fork
///   found (`BranchRun::state`); a tenx that reads format 1 would take those fields for the
///   branch's whole state.
///
/// A field an older tenx skips without reading anything else differently does not raise it:
/// `ThreadRecord::stopped_run` (a run a stop kept mid-fork), skipped, reads as the stopped
/// thread that tenx would have left itself; `InFlightCall::key`, skipped, only names calls in
/// `outcome_unknown` records.
///
/// A record is always written in the format of the tenx that writes it: serializing writes
/// [`CheckpointFormat::CURRENT`] whatever format the record was read in (every older format
/// this tenx reads is also valid in its own: a branch state kept whole is its fields over any
/// state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CheckpointFormat(u32);

impl CheckpointFormat {
    /// The format this tenx writes, and the newest it reads.
    pub const CURRENT: Self = Self(2);
    /// Checkpoints written before formats were numbered.
    pub const UNNUMBERED: Self = Self(1);

    /// Its number.
    pub fn number(self) -> u32 {
        self.0
    }

    /// The format of a number read from a checkpoint, if this tenx reads it.
    pub fn read(number: u64) -> Result<Self, UnknownFormat> {
        match u32::try_from(number) {
            Ok(number) if (Self::UNNUMBERED.0..=Self::CURRENT.0).contains(&number) => Ok(Self(number)),
            _ => Err(UnknownFormat(number)),
        }
    }

    /// The format of a checkpoint that holds none (serde's default for a missing `format`).
    pub(crate) fn unnumbered() -> Self {
        Self::UNNUMBERED
    }
}

impl Default for CheckpointFormat {
    /// A new record's format: the current one.
    fn default() -> Self {
        Self::CURRENT
    }
}

/// A checkpoint's format number this tenx does not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownFormat(pub u64);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let newest = CheckpointFormat::CURRENT.0;
        if self.0 > u64::from(newest) {
            write!(
                f,
                "it is in checkpoint format {}, which a newer tenx wrote; this one reads formats 1 to {newest} \
                 (run the thread with a tenx at least as new as the one that wrote it)",
                self.0
            )
        } else {
            write!(
                f,
                "checkpoint format {} does not exist (formats are 1 to {newest})",
                self.0
            )
        }
    }
}

impl std::error::Error for UnknownFormat {}

impl Serialize for CheckpointFormat {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(Self::CURRENT.0)
    }
}

impl<'de> Deserialize<'de> for CheckpointFormat {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let number = u64::deserialize(deserializer)?;
        Self::read(number).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_up_to_the_current_one_is_read_and_newer_ones_are_refused_by_name() {
        assert_eq!(CheckpointFormat::read(1), Ok(CheckpointFormat::UNNUMBERED));
        assert_eq!(CheckpointFormat::read(2), Ok(CheckpointFormat::CURRENT));
        let newer = CheckpointFormat::read(3).unwrap_err().to_string();
        assert_eq!(
            newer,
            "it is in checkpoint format 3, which a newer tenx wrote; this one reads formats 1 to 2 (run the \
             thread with a tenx at least as new as the one that wrote it)"
        );
        assert!(CheckpointFormat::read(u64::MAX).is_err());
        assert_eq!(
            CheckpointFormat::read(0).unwrap_err().to_string(),
            "checkpoint format 0 does not exist (formats are 1 to 2)"
        );
    }

    #[test]
    fn a_record_is_written_in_the_current_format_whatever_it_was_read_in() {
        let json = serde_json::to_string(&CheckpointFormat::UNNUMBERED).unwrap();
        assert_eq!(json, "2");
    }
}
