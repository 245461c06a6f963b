//! The keys a token may be verified with, built once at start from the configured algorithm and
//! key (a secret, a PEM public key file or a JWKS file). Every key is checked against the pinned
//! algorithm here: an RSA key for RS256, a P-256 key for ES256, an Ed25519 key for EdDSA, a
//! secret for HS256/384/512. A JWKS keeps only the keys usable for that algorithm and is
//! refused when none is. Which key verifies a token is [`KeySet::select`]'s answer.

use std::path::Path;

use ed25519_dalek::pkcs8::DecodePublicKey as _;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use rsa::pkcs1::{DecodeRsaPublicKey as _, EncodeRsaPublicKey as _};
use rsa::traits::PublicKeyParts as _;

use crate::config::JwtKey;

/// The smallest RSA modulus accepted, in bits.
const MIN_RSA_BITS: usize = 2048;

/// The key family an algorithm needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Hmac,
    Rsa,
    P256,
    Ed25519,
}

impl Family {
    fn of(algorithm: Algorithm) -> Option<Self> {
        match algorithm {
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => Some(Self::Hmac),
            Algorithm::RS256 => Some(Self::Rsa),
            Algorithm::ES256 => Some(Self::P256),
            Algorithm::EdDSA => Some(Self::Ed25519),
            _ => None,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Hmac => "a shared secret",
            Self::Rsa => "an RSA public key",
            Self::P256 => "an EC P-256 public key",
            Self::Ed25519 => "an Ed25519 public key",
        }
    }
}

/// The algorithms this server verifies, by their configured name.
pub fn algorithm(name: &str) -> Option<Algorithm> {
    match name {
        "HS256" => Some(Algorithm::HS256),
        "HS384" => Some(Algorithm::HS384),
        "HS512" => Some(Algorithm::HS512),
        "RS256" => Some(Algorithm::RS256),
        "ES256" => Some(Algorithm::ES256),
        "EdDSA" => Some(Algorithm::EdDSA),
        _ => None,
    }
}

/// The verification keys: one (a secret or a PEM key), or a JWKS's usable keys by `kid`.
#[derive(Clone)]
pub enum KeySet {
    /// The only key; a token's `kid` is not consulted.
    Single(DecodingKey),
    /// A JWKS's keys usable for the algorithm, each with its `kid` (if any).
    Jwks(Vec<(Option<String>, DecodingKey)>),
}

impl KeySet {
    /// Builds the keys for `algorithm` from `key`, reading the file it names.
    pub fn load(algorithm: Algorithm, key: &JwtKey) -> Result<Self, String> {
        let Some(family) = Family::of(algorithm) else {
            return Err(format!("JWT_ALGORITHM {algorithm:?} is not supported"));
        };
        match key {
            JwtKey::Secret(secret) => {
                if family != Family::Hmac {
                    return Err(format!(
                        "JWT_ALGORITHM {algorithm:?} verifies with a public key, not JWT_SECRET_KEY: set JWT_PUBLIC_KEY_FILE or JWT_JWKS_FILE instead"
                    ));
                }
                DecodingKey::from_secret(secret)
                    .map(Self::Single)
                    .map_err(|_| "JWT_SECRET_KEY is empty".to_owned())
            }
            JwtKey::PublicKeyFile(path) => {
                if family == Family::Hmac {
                    return Err(format!(
                        "JWT_ALGORITHM {algorithm:?} verifies with JWT_SECRET_KEY, not a public key: set JWT_ALGORITHM to RS256, ES256 or EdDSA for `{}`",
                        path.display()
                    ));
                }
                let text = read(path, "JWT_PUBLIC_KEY_FILE")?;
                pem_key(family, &text)
                    .map(Self::Single)
                    .map_err(|reason| format!("JWT_PUBLIC_KEY_FILE `{}`: {reason}", path.display()))
            }
            JwtKey::JwksFile(path) => {
                if family == Family::Hmac {
                    return Err(format!(
                        "JWT_ALGORITHM {algorithm:?} verifies with JWT_SECRET_KEY, not a JWKS: set JWT_ALGORITHM to RS256, ES256 or EdDSA for `{}`",
                        path.display()
                    ));
                }
                let text = read(path, "JWT_JWKS_FILE")?;
                jwks(algorithm, family, &text)
                    .map(Self::Jwks)
                    .map_err(|reason| format!("JWT_JWKS_FILE `{}`: {reason}", path.display()))
            }
        }
    }

    /// The key for a token whose header names `kid`: the only key of a PEM or secret; in a JWKS
    /// the key with that `kid`, or the only key when the token names none. `None` refuses.
    pub fn select(&self, kid: Option<&str>) -> Option<&DecodingKey> {
        match self {
            Self::Single(key) => Some(key),
            Self::Jwks(keys) => match kid {
                Some(kid) => keys
                    .iter()
                    .find(|(key_id, _)| key_id.as_deref() == Some(kid))
                    .map(|(_, key)| key),
                None => match keys.as_slice() {
                    [(_, only)] => Some(only),
                    _ => None,
                },
            },
        }
    }
}

fn read(path: &Path, setting: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|error| format!("{setting} `{}` cannot be read: {error}", path.display()))
}

/// A PEM public key of `family`: SPKI (`PUBLIC KEY`) for every family, PKCS#1
/// (`RSA PUBLIC KEY`) for RSA.
fn pem_key(family: Family, text: &[u8]) -> Result<DecodingKey, String> {
    let (label, der) = pem_rfc7468::decode_vec(text).map_err(|error| format!("not a PEM file ({error})"))?;
    match label {
        "PUBLIC KEY" => {}
        "RSA PUBLIC KEY" if family == Family::Rsa => {
            let key = rsa::PublicKey::from_pkcs1_der(&der)
                .map_err(|error| format!("not a valid RSA public key ({error})"))?;
            return rsa_key(&key);
        }
        label if label.contains("PRIVATE") => {
            return Err(format!(
                "holds a private key (`{label}`): give the public key only (`openssl pkey -pubout`)"
            ));
        }
        label => return Err(format!("holds `{label}`, not a public key")),
    }
    let wrong = |actual: &str| format!("holds {actual}, but the algorithm needs {}", family.describe());
    match family {
        Family::Rsa => match rsa::PublicKey::from_public_key_der(&der) {
            Ok(key) => rsa_key(&key),
            Err(_) => Err(wrong(&spki_kind(&der))),
        },
        Family::P256 => match p256::PublicKey::from_public_key_der(&der) {
            Ok(key) => Ok(DecodingKey::from_ec_der(&key.to_sec1_bytes())),
            Err(_) => Err(wrong(&spki_kind(&der))),
        },
        Family::Ed25519 => match ed25519_dalek::VerifyingKey::from_public_key_der(&der) {
            Ok(key) => Ok(DecodingKey::from_ed_der(key.as_bytes())),
            Err(_) => Err(wrong(&spki_kind(&der))),
        },
        Family::Hmac => Err(wrong("a public key")),
    }
}

fn rsa_key(key: &rsa::PublicKey) -> Result<DecodingKey, String> {
    let bits = key.size().saturating_mul(8);
    if bits < MIN_RSA_BITS {
        return Err(format!(
            "the RSA key has {bits} bits; at least {MIN_RSA_BITS} are required"
        ));
    }
    let der = key
        .to_pkcs1_der()
        .map_err(|error| format!("the RSA key cannot be encoded ({error})"))?;
    Ok(DecodingKey::from_rsa_der(der.as_bytes()))
}

/// What kind of key an SPKI structure holds, for an error message.
fn spki_kind(der: &[u8]) -> String {
    if rsa::PublicKey::from_public_key_der(der).is_ok() {
        "an RSA public key".to_owned()
    } else if p256::PublicKey::from_public_key_der(der).is_ok() {
        "an EC P-256 public key".to_owned()
    } else if ed25519_dalek::VerifyingKey::from_public_key_der(der).is_ok() {
        "an Ed25519 public key".to_owned()
    } else {
        "a public key of a kind not supported here".to_owned()
    }
}

/// The keys of a JWKS usable for `algorithm`; refused when none is, when a usable key cannot be
/// built, or when two usable keys share a `kid`.
fn jwks(algorithm: Algorithm, family: Family, text: &[u8]) -> Result<Vec<(Option<String>, DecodingKey)>, String> {
    let set: JwkSet = serde_json::from_slice(text).map_err(|error| format!("not a JWKS ({error})"))?;
    let mut keys: Vec<(Option<String>, DecodingKey)> = Vec::new();
    for jwk in &set.keys {
        if !usable(algorithm, family, jwk) {
            continue;
        }
        let kid = jwk.common.key_id.clone();
        let name = kid
            .as_deref()
            .map_or_else(|| "a key without kid".to_owned(), |kid| format!("key `{kid}`"));
        let key = jwk_key(family, jwk).map_err(|reason| format!("{name}: {reason}"))?;
        if keys.iter().any(|(other, _)| *other == kid) {
            return Err(format!("{name} appears twice"));
        }
        keys.push((kid, key));
    }
    if keys.is_empty() {
        return Err(format!(
            "has no key usable for {algorithm:?} ({} wanted, `use` \"sig\" or absent, `alg` {algorithm:?} or absent)",
            family.describe()
        ));
    }
    Ok(keys)
}

fn usable(algorithm: Algorithm, family: Family, jwk: &Jwk) -> bool {
    let purpose_ok = matches!(jwk.common.public_key_use, None | Some(PublicKeyUse::Signature));
    let algorithm_ok = jwk
        .common
        .key_algorithm
        .is_none_or(|named| KeyAlgorithm::from(algorithm) == named);
    let family_ok = match (&jwk.algorithm, family) {
        (AlgorithmParameters::RSA(_), Family::Rsa) => true,
        (AlgorithmParameters::EllipticCurve(params), Family::P256) => params.curve == EllipticCurve::P256,
        (AlgorithmParameters::OctetKeyPair(params), Family::Ed25519) => params.curve == EllipticCurve::Ed25519,
        _ => false,
    };
    purpose_ok && algorithm_ok && family_ok
}

/// A JWK's key, checked by building it with the key's own crate.
fn jwk_key(family: Family, jwk: &Jwk) -> Result<DecodingKey, String> {
    let invalid = |what: &str| format!("not a valid {what}");
    match (&jwk.algorithm, family) {
        (AlgorithmParameters::RSA(params), Family::Rsa) => {
            let n = base64url(&params.n).ok_or_else(|| invalid("RSA modulus"))?;
            let e = base64url(&params.e).ok_or_else(|| invalid("RSA exponent"))?;
            let key = rsa::PublicKey::new(
                rsa::BoxedUint::from_be_slice_vartime(&n),
                rsa::BoxedUint::from_be_slice_vartime(&e),
            )
            .map_err(|error| format!("not a valid RSA public key ({error})"))?;
            rsa_key(&key)
        }
        (AlgorithmParameters::EllipticCurve(params), Family::P256) => {
            let x = base64url(&params.x).ok_or_else(|| invalid("EC x coordinate"))?;
            let y = base64url(&params.y).ok_or_else(|| invalid("EC y coordinate"))?;
            let mut point = Vec::with_capacity(1 + x.len() + y.len());
            point.push(0x04);
            point.extend_from_slice(&x);
            point.extend_from_slice(&y);
            let key = p256::PublicKey::from_sec1_bytes(&point).map_err(|_| invalid("P-256 public key"))?;
            Ok(DecodingKey::from_ec_der(&key.to_sec1_bytes()))
        }
        (AlgorithmParameters::OctetKeyPair(params), Family::Ed25519) => {
            let x = base64url(&params.x).ok_or_else(|| invalid("Ed25519 public key"))?;
            let bytes: [u8; 32] = x.try_into().map_err(|_| invalid("Ed25519 public key"))?;
            let key = ed25519_dalek::VerifyingKey::from_bytes(&bytes).map_err(|_| invalid("Ed25519 public key"))?;
            Ok(DecodingKey::from_ed_der(key.as_bytes()))
        }
        _ => Err(format!("is not {}", family.describe())),
    }
}

/// Unpadded base64url, as JWKs write their numbers.
fn base64url(text: &str) -> Option<Vec<u8>> {
    use base64ct::Encoding as _;
    base64ct::Base64UrlUnpadded::decode_vec(text.trim_end_matches('=')).ok()
}
