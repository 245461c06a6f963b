//! Ed25519 keys, their text files, and signing a sealed artifact.
//!
//! A signature signs the ASCII bytes of `tenx-graph/3:` followed by the artifact id (see
//! [`signed_message`]); the id is the SHA-256 of the canonical body, so the signature covers
//! every byte of the body and the format it was sealed as.
//!
//! Key files are one line of text: `tenx-ed25519-secret:<base64>` holds the 32-byte secret seed,
//! `tenx-ed25519-public:<base64>` the 32-byte public key (standard base64 with padding).

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};
use sha2::{Digest as _, Sha256};

use crate::id::hex;
use crate::{Artifact, ArtifactId, FORMAT, SealError, SealedArtifact, seal};

const SECRET_PREFIX: &str = "tenx-ed25519-secret:";
const PUBLIC_PREFIX: &str = "tenx-ed25519-public:";

/// A secret signing key. Its bytes are wiped from memory when it is dropped.
#[derive(Clone)]
pub struct SecretKey(SigningKey);

/// A public key that verifies signatures, and that a [`crate::TrustPolicy`] can trust.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

/// A signature of a sealed artifact, with the key that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    public_key: PublicKey,
    signature: ed25519_dalek::Signature,
}

/// Why a key could not be made or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The key file is empty.
    #[error("key file is empty")]
    Empty,
    /// The key file holds more than one line.
    #[error("key file must be a single line")]
    MultipleLines,
    /// A public key was given where a secret key is needed.
    #[error("this is a public key; a secret key (`{SECRET_PREFIX}…`) is needed to sign")]
    PublicGivenForSecret,
    /// A secret key was given where a public key is needed.
    #[error("this is a secret key; give the public key (`{PUBLIC_PREFIX}…`) instead")]
    SecretGivenForPublic,
    /// The text does not start with the expected prefix.
    #[error("key file must start with `{expected}`")]
    WrongPrefix {
        /// The prefix that was expected.
        expected: &'static str,
    },
    /// The part after the prefix is not base64.
    #[error("key is not valid base64: {0}")]
    BadBase64(String),
    /// The key does not have 32 bytes.
    #[error("key must be 32 bytes, found {found}")]
    WrongLength {
        /// The number of bytes found.
        found: usize,
    },
    /// The bytes are not a usable Ed25519 public key.
    #[error("not a valid ed25519 public key")]
    InvalidPublicKey,
    /// The operating system could not supply randomness for a new key.
    #[error("could not read randomness from the operating system: {0}")]
    Randomness(String),
}

/// Makes a new key pair from operating-system randomness.
///
/// # Errors
///
/// [`KeyError::Randomness`] when the operating system has no randomness to give.
pub fn generate_keypair() -> Result<(SecretKey, PublicKey), KeyError> {
    let mut seed = [0_u8; 32];
    getrandom::fill(&mut seed).map_err(|error| KeyError::Randomness(error.to_string()))?;
    let secret = SecretKey(SigningKey::from_bytes(&seed));
    seed.fill(0);
    let public = secret.public_key();
    Ok((secret, public))
}

/// Seals `artifact` (see [`seal`]) and signs its id with `key`.
///
/// # Errors
///
/// As [`seal`].
pub fn sign(artifact: Artifact, key: &SecretKey) -> Result<SealedArtifact, SealError> {
    Ok(seal(artifact)?.signed_by(key))
}

/// The exact bytes a signature signs: `tenx-graph/3:` followed by the id.
pub fn signed_message(id: &ArtifactId) -> Vec<u8> {
    format!("{FORMAT}:{id}").into_bytes()
}

impl SecretKey {
    /// Reads a secret key file (`tenx-ed25519-secret:<base64>`, surrounding whitespace ignored).
    ///
    /// # Errors
    ///
    /// A [`KeyError`] saying what is wrong with the text.
    pub fn from_text(text: &str) -> Result<Self, KeyError> {
        let bytes = decode_key_text(text, SECRET_PREFIX, PUBLIC_PREFIX)?;
        Ok(Self(SigningKey::from_bytes(&bytes)))
    }

    /// The key file text, `tenx-ed25519-secret:<base64>` and a newline. Keep it private.
    pub fn to_text(&self) -> String {
        format!("{SECRET_PREFIX}{}\n", BASE64.encode(self.0.to_bytes()))
    }

    /// The public half of this key.
    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// Signs the id of a sealed artifact.
    pub(crate) fn sign_id(&self, id: &ArtifactId) -> Signature {
        Signature {
            public_key: self.public_key(),
            signature: self.0.sign(&signed_message(id)),
        }
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "SecretKey(public {})", self.public_key().fingerprint())
    }
}

impl PublicKey {
    /// Reads a public key file (`tenx-ed25519-public:<base64>`, surrounding whitespace ignored).
    ///
    /// # Errors
    ///
    /// A [`KeyError`] saying what is wrong with the text.
    pub fn from_text(text: &str) -> Result<Self, KeyError> {
        let bytes = decode_key_text(text, PUBLIC_PREFIX, SECRET_PREFIX)?;
        Self::from_bytes(&bytes)
    }

    /// The key file text, `tenx-ed25519-public:<base64>` and a newline.
    pub fn to_text(&self) -> String {
        format!("{PUBLIC_PREFIX}{}\n", self.to_base64())
    }

    /// A short name for display and logs: `ed25519:` and the first 16 hex digits of the SHA-256
    /// of the key bytes. Trust decisions compare whole keys, never fingerprints.
    pub fn fingerprint(&self) -> String {
        let digest = Sha256::digest(self.0.as_bytes());
        let full = hex(&digest);
        format!("ed25519:{}", full.get(..16).unwrap_or(&full))
    }

    /// The key bytes in standard base64, as written in the envelope.
    pub(crate) fn to_base64(&self) -> String {
        BASE64.encode(self.0.as_bytes())
    }

    /// Reads the key from the envelope's base64.
    pub(crate) fn from_base64(text: &str) -> Result<Self, KeyError> {
        Self::from_bytes(&decode_32(text)?)
    }

    fn from_bytes(bytes: &[u8; 32]) -> Result<Self, KeyError> {
        let key = VerifyingKey::from_bytes(bytes).map_err(|_| KeyError::InvalidPublicKey)?;
        if key.is_weak() {
            return Err(KeyError::InvalidPublicKey);
        }
        Ok(Self(key))
    }

    /// Checks `signature` over `message` (strict Ed25519: no malleable signatures).
    pub(crate) fn verify(&self, message: &[u8], signature: &ed25519_dalek::Signature) -> bool {
        self.0.verify_strict(message, signature).is_ok()
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "PublicKey({})", self.fingerprint())
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.fingerprint())
    }
}

impl Signature {
    /// The key that made the signature.
    pub fn public_key(&self) -> &PublicKey {
        &self.public_key
    }

    /// The 64 signature bytes in standard base64, as written in the envelope.
    pub(crate) fn to_base64(&self) -> String {
        BASE64.encode(self.signature.to_bytes())
    }

    pub(crate) fn from_parts(public_key: PublicKey, signature: ed25519_dalek::Signature) -> Self {
        Self { public_key, signature }
    }
}

/// Decodes the signature bytes of an envelope.
pub(crate) fn decode_signature(text: &str) -> Result<ed25519_dalek::Signature, String> {
    let bytes = BASE64
        .decode(text)
        .map_err(|error| format!("signature is not valid base64: {error}"))?;
    let bytes: [u8; 64] = bytes
        .try_into()
        .map_err(|bytes: Vec<u8>| format!("signature must be 64 bytes, found {}", bytes.len()))?;
    Ok(ed25519_dalek::Signature::from_bytes(&bytes))
}

fn decode_key_text(text: &str, prefix: &'static str, other: &'static str) -> Result<[u8; 32], KeyError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(KeyError::Empty);
    }
    if text.contains(['\n', '\r']) {
        return Err(KeyError::MultipleLines);
    }
    if text.starts_with(other) {
        return Err(if other == PUBLIC_PREFIX {
            KeyError::PublicGivenForSecret
        } else {
            KeyError::SecretGivenForPublic
        });
    }
    let Some(encoded) = text.strip_prefix(prefix) else {
        return Err(KeyError::WrongPrefix { expected: prefix });
    };
    decode_32(encoded)
}

fn decode_32(encoded: &str) -> Result<[u8; 32], KeyError> {
    let bytes = BASE64
        .decode(encoded)
        .map_err(|error| KeyError::BadBase64(error.to_string()))?;
    bytes
        .try_into()
        .map_err(|bytes: Vec<u8>| KeyError::WrongLength { found: bytes.len() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_text_round_trips() {
        let (secret, public) = generate_keypair().unwrap();
        let secret_again = SecretKey::from_text(&secret.to_text()).unwrap();
        assert_eq!(secret_again.public_key(), public);
        assert_eq!(PublicKey::from_text(&public.to_text()).unwrap(), public);
        assert!(public.fingerprint().starts_with("ed25519:"));
        assert_eq!(public.fingerprint().len(), "ed25519:".len() + 16);
    }

    #[test]
    fn key_text_errors_say_what_is_wrong() {
        let (secret, public) = generate_keypair().unwrap();
        assert_eq!(SecretKey::from_text("  \n").unwrap_err(), KeyError::Empty);
        assert_eq!(
            SecretKey::from_text(&public.to_text()).unwrap_err(),
            KeyError::PublicGivenForSecret
        );
        assert_eq!(
            PublicKey::from_text(&secret.to_text()).unwrap_err(),
            KeyError::SecretGivenForPublic
        );
        assert!(matches!(
            PublicKey::from_text("ssh-ed25519 AAAA").unwrap_err(),
            KeyError::WrongPrefix { .. }
        ));
        assert!(matches!(
            PublicKey::from_text("tenx-ed25519-public:!!!").unwrap_err(),
            KeyError::BadBase64(_)
        ));
        assert_eq!(
            PublicKey::from_text("tenx-ed25519-public:AAAA").unwrap_err(),
            KeyError::WrongLength { found: 3 }
        );
        let two_lines = format!("{}{}", public.to_text(), public.to_text());
        assert_eq!(PublicKey::from_text(&two_lines).unwrap_err(), KeyError::MultipleLines);
        let weak = format!("{PUBLIC_PREFIX}{}", BASE64.encode([0_u8; 32]));
        assert_eq!(PublicKey::from_text(&weak).unwrap_err(), KeyError::InvalidPublicKey);
        assert!(!format!("{secret:?}").contains(secret.to_text().trim()));
    }
}
