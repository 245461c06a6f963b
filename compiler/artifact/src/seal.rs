//! Sealing: normalise and self-check an artifact, compute its canonical bytes and id, and wrap
//! it in the envelope that is written to a `.tenxg` file.

use std::fmt;

use crate::check::check;
use crate::{Artifact, ArtifactId, FORMAT, PolicyViolation, SecretKey, Signature, envelope, policy};

/// An artifact with its id (and maybe a signature), ready to be written to a `.tenxg` file.
#[derive(Clone)]
pub struct SealedArtifact {
    id: ArtifactId,
    artifact: Artifact,
    body: Vec<u8>,
    signature: Option<Signature>,
}

/// Why an artifact could not be sealed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// The artifact's `format` is not the one this crate writes.
    #[error("cannot seal format `{found}`; this crate writes `{FORMAT}`")]
    WrongFormat {
        /// The format the artifact named.
        found: String,
    },
    /// A number in the artifact is NaN or infinite.
    #[error("artifact contains a number that is not finite")]
    NonFiniteNumber,
    /// The artifact could not be turned into JSON.
    #[error("artifact could not be serialised: {0}")]
    Serialize(String),
    /// The artifact breaks a rule a runtime relies on (the loader would refuse it).
    #[error("inconsistent artifact: {0}")]
    Inconsistent(String),
    /// The artifact breaks the risk policy (the loader would refuse it): a compiler that
    /// proves the policy never gets here.
    #[error("artifact breaks the risk policy: {violation}{}", crate::policy::and_more(.more))]
    PolicyViolation {
        /// The first violation found.
        violation: PolicyViolation,
        /// How many more there are.
        more: usize,
    },
}

/// Seals an artifact, unsigned.
///
/// Sorts its order-insensitive lists ([`Artifact::normalize`]), refuses it if it breaks a rule
/// the loader checks (structure, then the risk policy), and computes its canonical bytes and
/// id. The same artifact always seals to the same bytes.
///
/// # Errors
///
/// [`SealError`] when the format is not [`FORMAT`], the artifact is inconsistent or breaks the
/// risk policy, or it holds a non-finite number.
pub fn seal(mut artifact: Artifact) -> Result<SealedArtifact, SealError> {
    if artifact.format != FORMAT {
        return Err(SealError::WrongFormat { found: artifact.format });
    }
    artifact.normalize();
    check(&artifact).map_err(SealError::Inconsistent)?;
    policy::check(&artifact).map_err(|refusal| SealError::PolicyViolation {
        violation: refusal.violation,
        more: refusal.more,
    })?;
    let body = crate::canonical::canonical_bytes(&artifact)?;
    let id = ArtifactId::of_canonical_bytes(&body);
    Ok(SealedArtifact {
        id,
        artifact,
        body,
        signature: None,
    })
}

impl fmt::Debug for SealedArtifact {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("SealedArtifact")
            .field("id", &self.id)
            .field("signer", &self.signature.as_ref().map(Signature::public_key))
            .field("body_bytes", &self.body.len())
            .finish_non_exhaustive()
    }
}

impl SealedArtifact {
    /// The artifact id, `sha256:…`.
    pub fn id(&self) -> &ArtifactId {
        &self.id
    }

    /// The sealed (normalised) artifact.
    pub fn artifact(&self) -> &Artifact {
        &self.artifact
    }

    /// The signature, if the artifact is signed.
    pub fn signature(&self) -> Option<&Signature> {
        self.signature.as_ref()
    }

    /// The canonical bytes of the body, which the id is the hash of.
    pub fn body_bytes(&self) -> &[u8] {
        &self.body
    }

    /// The same artifact, signed with `key` (any earlier signature is replaced).
    #[must_use]
    pub fn signed_by(mut self, key: &SecretKey) -> Self {
        self.signature = Some(key.sign_id(&self.id));
        self
    }

    /// The `.tenxg` file contents: the canonical bytes of the envelope (no trailing newline).
    pub fn to_bytes(&self) -> Vec<u8> {
        envelope::write(&self.body, &self.id, self.signature.as_ref())
    }

    /// The artifact, without the seal.
    pub fn into_artifact(self) -> Artifact {
        self.artifact
    }
}
