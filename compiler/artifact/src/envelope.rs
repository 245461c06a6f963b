//! The sealed file's envelope: its JSON shape when read, and its canonical bytes when written.
//!
//! ```text
//! {"artifact":{…},"format":"tenx-graph/3","id":"sha256:…","signature":null}
//! {"artifact":{…},"format":"tenx-graph/3","id":"sha256:…",
//!  "signature":{"algorithm":"ed25519","public_key":"<base64>","signature":"<base64>"}}
//! ```

use serde::Deserialize;
use serde_json::Value;

use crate::canonical::write_string;
use crate::{ArtifactId, FORMAT, Signature};

/// The only signature algorithm of `tenx-graph/3`.
pub(crate) const ALGORITHM: &str = "ed25519";

/// The envelope as read, before anything in it is trusted.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EnvelopeIn {
    /// Read separately (and first) by the loader; kept here so the shape is complete.
    #[serde(rename = "format")]
    pub(crate) _format: String,
    pub(crate) id: String,
    pub(crate) artifact: Value,
    #[serde(deserialize_with = "crate::model::required")]
    pub(crate) signature: Option<SignatureIn>,
}

/// The signature block as read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SignatureIn {
    pub(crate) algorithm: String,
    pub(crate) public_key: String,
    pub(crate) signature: String,
}

/// What a canonical envelope starts with, before the body.
pub(crate) const HEAD: &[u8] = b"{\"artifact\":";

/// The canonical bytes of an envelope around an already canonical `body`.
///
/// Keys are written in sorted order by hand (`artifact`, `format`, `id`, `signature`; inside the
/// signature `algorithm`, `public_key`, `signature`), so the result equals [`crate::canonical_json`]
/// of the same envelope as a JSON value.
pub(crate) fn write(body: &[u8], id: &ArtifactId, signature: Option<&Signature>) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 256);
    out.extend_from_slice(HEAD);
    out.extend_from_slice(body);
    write_tail(&mut out, id, signature);
    out
}

/// The canonical bytes after the body: `,"format":…,"id":…,"signature":…}`.
pub(crate) fn tail(id: &ArtifactId, signature: Option<&Signature>) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_tail(&mut out, id, signature);
    out
}

fn write_tail(out: &mut Vec<u8>, id: &ArtifactId, signature: Option<&Signature>) {
    out.extend_from_slice(b",\"format\":");
    write_string(out, FORMAT);
    out.extend_from_slice(b",\"id\":");
    write_string(out, id.as_str());
    out.extend_from_slice(b",\"signature\":");
    match signature {
        None => out.extend_from_slice(b"null"),
        Some(signature) => {
            out.extend_from_slice(b"{\"algorithm\":");
            write_string(out, ALGORITHM);
            out.extend_from_slice(b",\"public_key\":");
            write_string(out, &signature.public_key().to_base64());
            out.extend_from_slice(b",\"signature\":");
            write_string(out, &signature.to_base64());
            out.push(b'}');
        }
    }
    out.push(b'}');
}
