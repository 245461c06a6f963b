//! Who is calling: the bearer token verified with the configured secret or public key (the
//! algorithm pinned by the settings, never taken from the token, so `alg: none` and an HS256
//! token against an RSA key are refused; `exp` required, `iss` and `aud` when configured,
//! `user_id` required) and turned into the engine's [`Identity`].
//! The token itself goes no further than this module: tools and the engine see claims only.
//! Without auth every caller is anonymous. The 401 answers are the reference's (§11), each with
//! `WWW-Authenticate: Bearer realm="auth_required"`.

use axum::http::{HeaderMap, StatusCode, header};
use jsonwebtoken::Validation;
use jsonwebtoken::errors::ErrorKind;
use serde_json::{Map, Value};
use tenx_engine::Identity;

use crate::config::{JwtSettings, SettingsError};
use crate::envelope::ApiError;
use crate::jwt_keys::{self, KeySet};

/// A verifier built once from the settings.
#[derive(Clone)]
pub struct Verifier {
    keys: KeySet,
    validation: Validation,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Verifier").finish_non_exhaustive()
    }
}

/// Why a verifier could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("JWT settings: {0}")]
pub struct VerifierError(String);

impl From<VerifierError> for SettingsError {
    fn from(error: VerifierError) -> Self {
        Self::Key(error.0)
    }
}

impl Verifier {
    /// A verifier for tokens of the configured algorithm only (HS256/384/512 with a secret,
    /// RS256, ES256 or EdDSA with a public key file or JWKS file, which is read here).
    pub fn new(settings: &JwtSettings) -> Result<Self, VerifierError> {
        let Some(algorithm) = jwt_keys::algorithm(&settings.algorithm) else {
            return Err(VerifierError(
                SettingsError::UnsupportedAlgorithm(settings.algorithm.clone()).to_string(),
            ));
        };
        let keys = KeySet::load(algorithm, &settings.key).map_err(VerifierError)?;
        let mut validation = Validation::new(algorithm);
        // A configured issuer or audience must be named: a token without the claim is refused,
        // not let through.
        let mut required = vec!["exp"];
        if settings.issuer.is_some() {
            required.push("iss");
        }
        if settings.audience.is_some() {
            required.push("aud");
        }
        validation.set_required_spec_claims(&required);
        validation.leeway = 0;
        match &settings.issuer {
            Some(issuer) => validation.set_issuer(&[issuer]),
            None => validation.iss = None,
        }
        match &settings.audience {
            Some(audience) => validation.set_audience(&[audience]),
            None => validation.validate_aud = false,
        }
        Ok(Self { keys, validation })
    }

    /// The identity a token carries, or the 401 the reference answers.
    pub fn verify(&self, token: &str) -> Result<Identity, ApiError> {
        let invalid = || unauthorized("INVALID_TOKEN", "Invalid token, please login again");
        // The header is read only to pick a JWKS key by `kid`; the algorithm stays the pinned one
        // (`decode` refuses a header naming any other, `none` included).
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid())?;
        let key = self.keys.select(header.kid.as_deref()).ok_or_else(invalid)?;
        let claims = match jsonwebtoken::decode::<Map<String, Value>>(token, key, &self.validation) {
            Ok(data) => data.claims,
            Err(error) => {
                return Err(match error.kind() {
                    ErrorKind::ExpiredSignature => {
                        unauthorized("EXPIRED_TOKEN", "Token has expired, please login again")
                    }
                    _ => unauthorized("INVALID_TOKEN", "Invalid token, please login again"),
                });
            }
        };
        let user_id = match claims.get("user_id") {
            Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
            Some(Value::Number(id)) => id.to_string(),
            _ => return Err(unauthorized("INVALID_TOKEN", "Invalid token, user_id missing")),
        };
        Ok(Identity {
            user_id: Some(user_id),
            roles: strings(claims.get("roles")),
            scopes: strings(claims.get("scopes")),
            claims,
        })
    }
}

/// The caller of a request: the verified identity, or anonymous without auth.
pub fn identify(verifier: Option<&Verifier>, headers: &HeaderMap) -> Result<Identity, ApiError> {
    let Some(verifier) = verifier else {
        return Ok(Identity::anonymous());
    };
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")))
        .map(str::trim)
        .filter(|token| !token.is_empty());
    match token {
        Some(token) => verifier.verify(token),
        None => Err(unauthorized("REVOKED_TOKEN", "Invalid token, please login again")),
    }
}

/// Whether the caller may use a route that needs `scope` (`resource:action`). Checked only when
/// the token declares scopes, as the reference does.
pub fn require_scope(identity: &Identity, scope: &str) -> Result<(), ApiError> {
    let declares_scopes = identity.claims.contains_key("scopes");
    if !declares_scopes || identity.scopes.iter().any(|held| held == scope || held == "*") {
        return Ok(());
    }
    Err(ApiError::http(
        StatusCode::FORBIDDEN,
        format!("Missing required scope: {scope}"),
    ))
}

fn unauthorized(code: &str, message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message)
        .header(header::WWW_AUTHENTICATE, "Bearer realm=\"auth_required\"")
}

fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        Some(Value::String(one)) => one.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}
