//! Loading a sealed artifact: every check, in a fixed order, before anything may run.
//!
//! 1. the bytes are one JSON object with no duplicate keys;
//! 2. its `format` is known (`tenx-graph/3`); a newer `tenx-graph/N` is [`LoadError::FormatTooNew`], an
//!    older one [`LoadError::FormatTooOld`] (rebuild it);
//! 3. the envelope has exactly its fields, and `id` has the form of an artifact id;
//! 4. the canonical bytes of `artifact` hash to `id` ([`LoadError::SealMismatch`] otherwise);
//! 5. a signature is present if the policy requires one;
//! 6. a present signature is a valid Ed25519 signature of the id;
//! 7. its key is trusted, if the policy names trusted keys or requires a signature;
//! 8. the body deserialises strictly into [`Artifact`];
//! 9. the body is structurally consistent (the same checks as [`crate::seal`]);
//! 10. the body keeps the risk policy the compiler proves (see [`PolicyViolation`]), whoever
//!     signed it.

use serde::Deserialize;
use serde_json::Value;

use crate::check::check;
use crate::envelope::{ALGORITHM, EnvelopeIn, HEAD, SignatureIn};
use crate::id::shorten;
use crate::sign::decode_signature;
use crate::{Artifact, ArtifactId, FORMAT, PolicyViolation, PublicKey, Signature, policy, signed_message, strict_json};

const FORMAT_FAMILY: &str = "tenx-graph/";

/// Which signatures a host demands and whose it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPolicy {
    require_signature: bool,
    trusted_keys: Vec<PublicKey>,
}

impl TrustPolicy {
    /// Accepts unsigned artifacts. A signature that is present must still be valid; add keys
    /// with [`TrustPolicy::trust`] to also refuse signatures by any other key.
    pub fn signature_optional() -> Self {
        Self {
            require_signature: false,
            trusted_keys: Vec::new(),
        }
    }

    /// Accepts only artifacts with a valid signature by one of `keys`.
    ///
    /// With no keys, every artifact is refused.
    pub fn signature_required(keys: impl IntoIterator<Item = PublicKey>) -> Self {
        Self {
            require_signature: true,
            trusted_keys: keys.into_iter().collect(),
        }
    }

    /// This policy, also trusting `key`.
    #[must_use]
    pub fn trust(mut self, key: PublicKey) -> Self {
        if !self.trusted_keys.contains(&key) {
            self.trusted_keys.push(key);
        }
        self
    }

    /// Whether an unsigned artifact is refused.
    pub fn requires_signature(&self) -> bool {
        self.require_signature
    }

    /// The trusted keys.
    pub fn trusted_keys(&self) -> &[PublicKey] {
        &self.trusted_keys
    }

    fn checks_signer(&self) -> bool {
        self.require_signature || !self.trusted_keys.is_empty()
    }
}

/// An artifact that passed every check of [`load`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LoadedArtifact {
    /// Its id, verified against its content.
    pub id: ArtifactId,
    /// The artifact.
    pub artifact: Artifact,
    /// The key that signed it, if it was signed (the signature was verified).
    pub signer: Option<PublicKey>,
}

/// Why a sealed artifact was refused. Variants are listed in the order they are checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// Not JSON, not an object, a duplicate key, or an envelope field missing, extra or mistyped.
    #[error("invalid artifact envelope: {0}")]
    InvalidEnvelope(String),
    /// A later `tenx-graph/N` than this build reads.
    #[error("artifact format `{found}` is newer than this build supports (`{FORMAT}`); upgrade the runtime")]
    FormatTooNew {
        /// The format the file names.
        found: String,
    },
    /// An earlier `tenx-graph/N` that this build no longer reads: its body cannot say what the
    /// runtime must enforce (approvers, decisions, typed evidence, entries), so it is never
    /// guessed at.
    #[error("artifact format `{found}` is older than this build reads (`{FORMAT}`); rebuild it with `tenxc build`")]
    FormatTooOld {
        /// The format the file names.
        found: String,
    },
    /// A format string this build does not know at all.
    #[error("unknown artifact format `{found}` (expected `{FORMAT}`)")]
    UnknownFormat {
        /// The format the file names.
        found: String,
    },
    /// The content does not hash to the recorded id: the artifact was altered after sealing.
    #[error("artifact content does not match its seal: recorded id `{recorded}`, content hashes to `{computed}`")]
    SealMismatch {
        /// The id written in the envelope.
        recorded: String,
        /// The id of the content as found.
        computed: String,
    },
    /// The policy requires a signature and there is none.
    #[error("artifact is not signed, and this host requires a signature")]
    MissingSignature,
    /// The signature is malformed or does not verify.
    #[error("invalid artifact signature: {0}")]
    BadSignature(String),
    /// A valid signature by a key the policy does not trust.
    #[error("artifact is signed by untrusted key `{fingerprint}`")]
    UntrustedKey {
        /// The signing key's fingerprint.
        fingerprint: String,
    },
    /// The body does not have the artifact's shape.
    #[error("malformed artifact at `{path}`: {message}")]
    Malformed {
        /// Where in the body, e.g. `graphs.support.nodes.triage.kind` (`.` for the root).
        path: String,
        /// What is wrong there.
        message: String,
    },
    /// The body breaks a structural rule a runtime relies on.
    #[error("inconsistent artifact: {0}")]
    Inconsistent(String),
    /// The body breaks the risk policy the compiler proves: a tool can run around its
    /// approval, or a prohibited tool is offered or run. A valid, trusted signature does not
    /// excuse it.
    #[error("artifact breaks the risk policy: {violation}{}", crate::policy::and_more(.more))]
    PolicyViolation {
        /// The first violation found.
        violation: PolicyViolation,
        /// How many more there are.
        more: usize,
    },
}

/// Loads and verifies a sealed artifact (the bytes of a `.tenxg` file) under `policy`.
///
/// # Errors
///
/// The first [`LoadError`] found, in the order the module documentation lists.
pub fn load(bytes: &[u8], policy: &TrustPolicy) -> Result<LoadedArtifact, LoadError> {
    if let Some(result) = load_as_written(bytes, policy) {
        return result;
    }
    let value =
        strict_json::parse(bytes).map_err(|error| LoadError::InvalidEnvelope(format!("not valid JSON: {error}")))?;
    check_format(&value)?;
    let envelope: EnvelopeIn =
        serde_json::from_value(value).map_err(|error| LoadError::InvalidEnvelope(error.to_string()))?;
    let recorded: ArtifactId = envelope
        .id
        .parse()
        .map_err(|error| LoadError::InvalidEnvelope(format!("`id`: {error}")))?;
    let computed =
        ArtifactId::of_body(&envelope.artifact).map_err(|error| LoadError::InvalidEnvelope(error.to_string()))?;
    if computed != recorded {
        return Err(LoadError::SealMismatch {
            recorded: recorded.to_string(),
            computed: computed.to_string(),
        });
    }
    let signer = verify_signer(envelope.signature.as_ref(), &recorded, policy)?;
    let artifact = deserialize_body(envelope.artifact)?;
    finish(artifact, recorded, signer)
}

/// Step 2: the format, read before the rest of the envelope (a newer one may be shaped
/// differently).
/// Steps 5–7: the signature the policy needs, valid, by a trusted key.
fn verify_signer(
    block: Option<&SignatureIn>,
    recorded: &ArtifactId,
    policy: &TrustPolicy,
) -> Result<Option<Signature>, LoadError> {
    let signer = match block {
        None if policy.require_signature => return Err(LoadError::MissingSignature),
        None => None,
        Some(block) => Some(verify_signature(block, recorded)?),
    };
    if let Some(signature) = &signer
        && policy.checks_signer()
        && !policy.trusted_keys.contains(signature.public_key())
    {
        return Err(LoadError::UntrustedKey {
            fingerprint: signature.public_key().fingerprint(),
        });
    }
    Ok(signer)
}

/// The envelope after its body, as the sealer writes it: `"format":…,"id":…,"signature":…`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvelopeTail {
    format: String,
    id: String,
    #[serde(deserialize_with = "crate::model::required")]
    signature: Option<SignatureIn>,
}

/// What comes right after the body in a canonical envelope.
const TAIL_START: &str = ",\"format\":";

/// Splits a canonical envelope into its body's text and its tail (as bytes and as read),
/// without reading the body: the body is everything between [`HEAD`] and the last
/// [`TAIL_START`] (the tail itself holds no such text). `None` if the bytes are not laid out
/// that way.
fn split_as_written(bytes: &[u8]) -> Option<(&str, &str, EnvelopeTail)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let rest = text.strip_prefix(std::str::from_utf8(HEAD).ok()?)?;
    let tail_at = rest.rfind(TAIL_START)?;
    let (body, tail_text) = rest.split_at(tail_at);
    let tail = tail_text.strip_prefix(',')?;
    let tail: EnvelopeTail = serde_json::from_str(&format!("{{{tail}")).ok()?;
    Some((body, tail_text, tail))
}

/// The fast path, for a file exactly as [`crate::seal`] writes it (the usual case): the body's
/// bytes as stored hash to the recorded id, and the whole file is byte-for-byte the canonical
/// envelope around them. Then the body is deserialised straight from its bytes, with no JSON
/// tree, no re-canonicalisation and no separate pass to find where it ends. Any other file
/// (reformatted, altered, or not canonical) returns `None` and takes the full path, which decides
/// the precise error. Bytes that hash to the recorded id are the bytes that were sealed, so
/// integrity is the same on both paths. Two differences, only for hand-made files: the full path
/// refuses a repeated key anywhere, where here a repeated key inside a map of the body keeps its
/// last value; and a non-canonical body whose id is the hash of its bytes as written loads here,
/// where the full path (hashing the canonical form) refuses it. No sealer writes either, and for
/// a signed artifact the signer sealed exactly these bytes.
fn load_as_written(bytes: &[u8], policy: &TrustPolicy) -> Option<Result<LoadedArtifact, LoadError>> {
    let (body, tail_text, tail) = split_as_written(bytes)?;
    if tail.format != FORMAT {
        return None;
    }
    let recorded: ArtifactId = tail.id.parse().ok()?;
    // Hashing and deserialising are independent; on a large body they run side by side. The
    // deserialised body is only used once the hash matches.
    // Plain deserialisation: tracking the path of every field costs a third of the time, and on
    // an error the full path runs again and reports where. It also proves the body is one JSON
    // value: trailing bytes are an error.
    let (computed, artifact) = side_by_side(
        body.len() >= PARALLEL_FROM_BYTES,
        || ArtifactId::of_canonical_bytes(body.as_bytes()),
        || serde_json::from_str::<Artifact>(body).ok(),
    );
    if computed? != recorded {
        return None;
    }
    let signer = match verify_signer(tail.signature.as_ref(), &recorded, policy) {
        Ok(signer) => signer,
        Err(error) => return Some(Err(error)),
    };
    // The file is `HEAD`, the body, and the tail; the first two are so by construction.
    if crate::envelope::tail(&recorded, signer.as_ref()) != tail_text.as_bytes() {
        return None;
    }
    Some(finish(artifact?, recorded, signer))
}

/// Bodies from this size on are hashed on a second thread while they are deserialised; for
/// smaller ones starting a thread costs more than it saves.
const PARALLEL_FROM_BYTES: usize = 1 << 20;

/// Runs `first` and `second`, on two threads when `parallel`, and returns both results.
/// `first` gives `None` if its thread could not be started or panicked; the caller then takes
/// the slow path.
fn side_by_side<A: Send, B>(
    parallel: bool,
    first: impl FnOnce() -> A + Send,
    second: impl FnOnce() -> B,
) -> (Option<A>, B) {
    if !parallel {
        return (Some(first()), second());
    }
    std::thread::scope(|scope| match std::thread::Builder::new().spawn_scoped(scope, first) {
        Ok(handle) => {
            let second = second();
            (handle.join().ok(), second)
        }
        Err(_) => (None, second()),
    })
}

/// Steps 8 (format of the body), 9 (consistency) and 10 (risk policy), shared by both paths.
fn finish(artifact: Artifact, id: ArtifactId, signer: Option<Signature>) -> Result<LoadedArtifact, LoadError> {
    if artifact.format != FORMAT {
        return Err(LoadError::Malformed {
            path: "format".to_owned(),
            message: format!(
                "body format `{}` differs from the envelope's `{FORMAT}`",
                shorten(&artifact.format)
            ),
        });
    }
    check(&artifact).map_err(LoadError::Inconsistent)?;
    policy::check(&artifact).map_err(|refusal| LoadError::PolicyViolation {
        violation: refusal.violation,
        more: refusal.more,
    })?;
    Ok(LoadedArtifact {
        id,
        artifact,
        signer: signer.map(|signature| signature.public_key().clone()),
    })
}

fn check_format(value: &Value) -> Result<(), LoadError> {
    let Some(object) = value.as_object() else {
        return Err(LoadError::InvalidEnvelope("expected a JSON object".to_owned()));
    };
    let Some(format) = object.get("format") else {
        return Err(LoadError::InvalidEnvelope("missing field `format`".to_owned()));
    };
    let Some(format) = format.as_str() else {
        return Err(LoadError::InvalidEnvelope("`format` must be a string".to_owned()));
    };
    if format == FORMAT {
        return Ok(());
    }
    // `tenx-graph/N` with N a decimal number without leading zeros, compared with this build's
    // own N by length first and then digit by digit, so a huge N is never parsed.
    fn version(text: &str) -> Option<&str> {
        text.strip_prefix(FORMAT_FAMILY).filter(|digits| {
            !digits.is_empty() && !digits.starts_with('0') && digits.bytes().all(|byte| byte.is_ascii_digit())
        })
    }
    let found = shorten(format);
    Err(match (version(format), version(FORMAT)) {
        (Some(theirs), Some(ours)) if (theirs.len(), theirs) < (ours.len(), ours) => LoadError::FormatTooOld { found },
        (Some(_), _) => LoadError::FormatTooNew { found },
        (None, _) => LoadError::UnknownFormat { found },
    })
}

/// Step 6: a present signature must be well-formed and verify against the id.
fn verify_signature(block: &SignatureIn, id: &ArtifactId) -> Result<Signature, LoadError> {
    if block.algorithm != ALGORITHM {
        return Err(LoadError::BadSignature(format!(
            "unsupported algorithm `{}` (expected `{ALGORITHM}`)",
            shorten(&block.algorithm)
        )));
    }
    let public_key = PublicKey::from_base64(&block.public_key)
        .map_err(|error| LoadError::BadSignature(format!("public key: {error}")))?;
    let signature = decode_signature(&block.signature).map_err(LoadError::BadSignature)?;
    if !public_key.verify(&signed_message(id), &signature) {
        return Err(LoadError::BadSignature(format!(
            "signature by `{}` does not match the artifact id",
            public_key.fingerprint()
        )));
    }
    Ok(Signature::from_parts(public_key, signature))
}

/// Step 8: strict deserialisation, with the path of the first problem.
fn deserialize_body(body: Value) -> Result<Artifact, LoadError> {
    serde_path_to_error::deserialize(body).map_err(|error| LoadError::Malformed {
        path: error.path().to_string(),
        message: error.inner().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::split_as_written;
    use crate::{Artifact, seal};

    #[test]
    fn a_sealed_file_splits_at_its_body() {
        let mut artifact = Artifact::new("tenxc test");
        artifact.compiler = "a \",\"format\": b".to_owned();
        let sealed = seal(artifact).unwrap();
        let bytes = sealed.to_bytes();
        let (body, tail_text, tail) = split_as_written(&bytes).unwrap();
        assert_eq!(format!("{{\"artifact\":{body}{tail_text}").as_bytes(), bytes);
        assert!(body.starts_with("{\"agents\":") && body.ends_with('}'), "{body}");
        assert!(body.contains(",\"format\":\"tenx-graph/3\""), "{body}");
        assert_eq!(tail.id, sealed.id().as_str());
        assert!(tail.signature.is_none());
        assert!(split_as_written(b"{\"artifact\":{}}").is_none());
        assert!(
            split_as_written(b"{ \"artifact\":{},\"format\":\"tenx-graph/3\",\"id\":\"x\",\"signature\":null}")
                .is_none()
        );
    }
}
