//! The store (long-term memory) and file routes. tenx serves neither yet, so each answers 503
//! exactly as the reference does when nothing is configured, instead of a 404 that would read
//! as a missing route. Every method is mounted; the document lists the usual ones.

use axum::http::StatusCode;

use crate::envelope::ApiError;
use crate::openapi::schemas::UnconfiguredResponses;

/// `/v1/store/{*rest}`.
#[utoipa::path(method(get, post, put, delete, patch), path = "/v1/store/{rest}", tag = "unconfigured",
    summary = "Long-term memory: not configured (503)",
    params(("rest" = String, Path, description = "Any path below /v1/store/")),
    responses(UnconfiguredResponses), security(()))]
pub async fn store() -> ApiError {
    ApiError::http(StatusCode::SERVICE_UNAVAILABLE, "Store is not configured")
}

/// `/v1/files/upload`.
#[utoipa::path(method(get, post, put, delete, patch), path = "/v1/files/upload", tag = "unconfigured",
    summary = "File upload: not configured (503)", responses(UnconfiguredResponses), security(()))]
pub async fn files_upload() -> ApiError {
    media_not_configured()
}

/// `/v1/files/{*rest}`.
#[utoipa::path(method(get, post, put, delete, patch), path = "/v1/files/{rest}", tag = "unconfigured",
    summary = "Files: not configured (503)",
    params(("rest" = String, Path, description = "Any path below /v1/files/")),
    responses(UnconfiguredResponses), security(()))]
pub async fn files() -> ApiError {
    media_not_configured()
}

/// `GET /v1/config/multimodal`.
#[utoipa::path(get, path = "/v1/config/multimodal", tag = "unconfigured",
    summary = "Media settings: not configured (503)", responses(UnconfiguredResponses), security(()))]
pub async fn multimodal() -> ApiError {
    media_not_configured()
}

fn media_not_configured() -> ApiError {
    ApiError::http(StatusCode::SERVICE_UNAVAILABLE, "Media storage is not configured")
}
