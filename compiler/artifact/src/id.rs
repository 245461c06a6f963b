//! The artifact id: `sha256:` and the lowercase hex SHA-256 of the body's canonical bytes.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::{SealError, canonical_json};

const PREFIX: &str = "sha256:";

/// The content address of an artifact body, `sha256:<64 lowercase hex digits>`.
///
/// Threads, checkpoints and interrupts are stamped with it; two builds of the same program by
/// the same compiler have the same id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ArtifactId(String);

impl ArtifactId {
    /// The id of a body given as canonical bytes (see [`canonical_json`]).
    pub fn of_canonical_bytes(bytes: &[u8]) -> Self {
        Self(format!("{PREFIX}{}", hex(&Sha256::digest(bytes))))
    }

    /// The id of a body given as a JSON value: its canonical bytes, hashed.
    ///
    /// # Errors
    ///
    /// As [`canonical_json`].
    pub fn of_body(body: &Value) -> Result<Self, SealError> {
        Ok(Self::of_canonical_bytes(&canonical_json(body)?))
    }

    /// The id as text, e.g. `sha256:9f86d0…`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ArtifactId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl Serialize for ArtifactId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Text that is not an artifact id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an artifact id (expected `sha256:` and 64 lowercase hex digits)")]
pub struct ParseIdError(String);

impl FromStr for ArtifactId {
    type Err = ParseIdError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let digits = text.strip_prefix(PREFIX).unwrap_or_default();
        let is_hex = |byte: &u8| byte.is_ascii_digit() || (b'a'..=b'f').contains(byte);
        if digits.len() == 64 && digits.as_bytes().iter().all(is_hex) {
            Ok(Self(text.to_owned()))
        } else {
            Err(ParseIdError(shorten(text)))
        }
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &byte in bytes {
        for nibble in [byte >> 4, byte & 0x0f] {
            let digit = DIGITS.get(usize::from(nibble)).copied().unwrap_or(b'0');
            out.push(char::from(digit));
        }
    }
    out
}

/// `text` cut to at most 80 characters, for error messages that quote user input.
pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(MAX).collect();
        short.push('…');
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_is_sha256_of_the_bytes() {
        let id = ArtifactId::of_canonical_bytes(b"abc");
        assert_eq!(
            id.as_str(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(id.as_str().parse::<ArtifactId>().unwrap(), id);
    }

    #[test]
    fn parse_refuses_other_text() {
        for text in [
            "",
            "sha256:",
            "sha256:ABC",
            "md5:00",
            &format!("sha256:{}", "A".repeat(64)),
        ] {
            assert!(text.parse::<ArtifactId>().is_err(), "{text}");
        }
    }
}
