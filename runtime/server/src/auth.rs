//! Who is calling: the bearer token verified with the configured secret (`exp` required, `iss`
//! and `aud` when configured, `user_id` required) and turned into the engine's [`Identity`].
//! The token itself goes no further than this module: tools and the engine see claims only.
//! Without auth every caller is anonymous. The 401 answers are the reference's (§11), each with
//! `WWW-Authenticate: Bearer realm="auth_required"`.

use axum::http::{HeaderMap, StatusCode, header};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use tenx_engine::Identity;

use crate::config::JwtSettings;
use crate::envelope::ApiError;

/// A verifier built once from the settings.
#[derive(Clone)]
pub struct Verifier {
    key: DecodingKey,
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

impl Verifier {
    /// A verifier for HS256/384/512 tokens signed with the configured secret.
    pub fn new(settings: &JwtSettings) -> Result<Self, VerifierError> {
        let algorithm = match settings.algorithm.as_str() {
            "HS256" => Algorithm::HS256,
            "HS384" => Algorithm::HS384,
            "HS512" => Algorithm::HS512,
            other => return Err(VerifierError(format!("unsupported algorithm `{other}`"))),
        };
        let mut validation = Validation::new(algorithm);
        validation.set_required_spec_claims(&["exp"]);
        validation.leeway = 0;
        match &settings.issuer {
            Some(issuer) => validation.set_issuer(&[issuer]),
            None => validation.iss = None,
        }
        match &settings.audience {
            Some(audience) => validation.set_audience(&[audience]),
            None => validation.validate_aud = false,
        }
        let key = DecodingKey::from_secret(&settings.secret).map_err(|error| VerifierError(error.to_string()))?;
        Ok(Self { key, validation })
    }

    /// The identity a token carries, or the 401 the reference answers.
    pub fn verify(&self, token: &str) -> Result<Identity, ApiError> {
        let claims = match jsonwebtoken::decode::<Map<String, Value>>(token, &self.key, &self.validation) {
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
