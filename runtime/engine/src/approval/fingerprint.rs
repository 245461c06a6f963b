//! Fingerprints: `sha256:` and the 64 lowercase hex digits of the SHA-256 of a value's
//! canonical bytes (`tenx_artifact::canonical_json`, artifact.md §2).

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::{ErrorCode, RunError};

/// What every fingerprint starts with.
pub const FINGERPRINT_PREFIX: &str = "sha256:";

/// The fingerprint of `value`.
///
/// # Errors
///
/// `NODE_001` when the value holds a number that is not finite (which `serde_json` values
/// cannot, unless a crate turns on its `arbitrary_precision` feature).
pub(crate) fn digest(value: &Value) -> Result<String, RunError> {
    let bytes = tenx_artifact::canonical_json(value).map_err(|_| {
        RunError::new(
            ErrorCode::NodeFailed,
            "the approval package holds a number that is not finite",
        )
    })?;
    Ok(format!("{FINGERPRINT_PREFIX}{}", hex(&Sha256::digest(bytes))))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS.get(usize::from(byte >> 4)).copied().unwrap_or(b'0')));
        out.push(char::from(
            DIGITS.get(usize::from(byte & 0x0f)).copied().unwrap_or(b'0'),
        ));
    }
    out
}

/// Whether `text` is written as a fingerprint: `sha256:` and 64 lowercase hex digits.
pub fn is_fingerprint(text: &str) -> bool {
    text.strip_prefix(FINGERPRINT_PREFIX)
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn hashes_the_canonical_bytes() {
        // python3 -c 'import hashlib; print(hashlib.sha256(b"{\"a\":1,\"b\":[true,null]}").hexdigest())'
        assert_eq!(
            digest(&json!({"b": [true, null], "a": 1})).unwrap(),
            "sha256:1cc69c7fa23616ca2ec3ee70d24390a6225c8832db8a4c814c7e0e7f942f8668"
        );
    }

    #[test]
    fn recognises_fingerprints() {
        let good = digest(&json!(null)).unwrap();
        assert!(is_fingerprint(&good));
        assert!(!is_fingerprint(&good.to_uppercase()));
        assert!(!is_fingerprint("sha256:abc"));
        assert!(!is_fingerprint(good.trim_start_matches("sha256:")));
    }
}
