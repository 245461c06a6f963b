//! The store (long-term memory) and file routes. tenx serves neither yet, so each answers 503
//! exactly as the reference does when nothing is configured, instead of a 404 that would read
//! as a missing route.

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{any, get};

use crate::AppState;
use crate::envelope::ApiError;

/// The routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/store/{*rest}", any(store))
        .route("/v1/files/upload", any(files))
        .route("/v1/files/{*rest}", any(files))
        .route("/v1/config/multimodal", get(files))
}

async fn store() -> ApiError {
    ApiError::http(StatusCode::SERVICE_UNAVAILABLE, "Store is not configured")
}

async fn files() -> ApiError {
    ApiError::http(StatusCode::SERVICE_UNAVAILABLE, "Media storage is not configured")
}
