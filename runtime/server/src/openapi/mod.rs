//! `GET /openapi.json`: an OpenAPI 3.1 document generated from the handlers. Each handler carries
//! its own `#[utoipa::path(…)]` (method, path, parameters, body, answers, and its scope as the
//! `bearer` security requirement); [`document`] gathers the annotations of exactly the routes the
//! router mounts ([`crate::routes::table`]), so a route is documented by one annotation and a
//! route mounted without one does not compile. [`schemas`] holds the documented shapes.

pub mod approval_schemas;
pub mod schemas;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;
use utoipa::openapi::path::HttpMethod;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::AppState;
use crate::routes::table::Mounted;

/// The name of the security scheme every scoped route requires.
pub const BEARER: &str = "bearer";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "tenx standard API",
        description = "The 10xGraph HTTP API served by `tenx serve` over a sealed tenx artifact (docs/serve.md). \
            A route's `bearer` security requirement lists the scope (`resource:action`) a token that declares \
            `scopes` must hold; public routes require nothing. Without auth every caller is anonymous.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    components(schemas(
        schemas::SuccessEnvelope,
        schemas::SuccessMetadata,
        schemas::ErrorEnvelope,
        schemas::ErrorObject,
        schemas::ErrorMetadata,
        schemas::GraphInput,
        schemas::InputMessage,
        schemas::Role,
        schemas::RunConfig,
        schemas::Granularity,
        schemas::OnBusy,
        schemas::StopRequest,
        schemas::DeleteThreadRequest,
        schemas::PutStateRequest,
        schemas::PostMessagesRequest,
        schemas::ThreadWriteOptions,
        schemas::Live,
        schemas::Ready,
        approval_schemas::ApprovalAnswer,
        approval_schemas::Escalation,
        approval_schemas::BatchApproval,
    )),
    modifiers(&Bearer),
)]
struct Base;

struct Bearer;

impl utoipa::Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            BEARER,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "A JWT verified with the server's key as JWT_ALGORITHM pins it: a JWT_SECRET_KEY \
                         (HS256/384/512) or a public key or JWKS file (RS256, ES256, EdDSA); \
                         `exp` and `user_id` are required, `iss`/`aud` when configured.",
                    ))
                    .build(),
            ),
        );
    }
}

/// The document for the routes `mounted`.
pub fn document(mounted: &[Mounted]) -> utoipa::openapi::OpenApi {
    let mut openapi = Base::openapi();
    openapi.info.version = env!("CARGO_PKG_VERSION").to_owned();
    for route in mounted {
        let (path, methods, operation) = (route.doc)();
        if methods.len() == 1 {
            openapi.paths.add_path_operation(path, methods, operation);
            continue;
        }
        // One handler for several methods: each operation gets an id of its own.
        for method in methods {
            let mut operation = operation.clone();
            operation.operation_id = operation
                .operation_id
                .map(|id| format!("{id}_{}", method_name(&method)));
            openapi.paths.add_path_operation(&path, vec![method], operation);
        }
    }
    openapi
}

fn method_name(method: &HttpMethod) -> &'static str {
    match method {
        HttpMethod::Get => "get",
        HttpMethod::Post => "post",
        HttpMethod::Put => "put",
        HttpMethod::Delete => "delete",
        HttpMethod::Options => "options",
        HttpMethod::Head => "head",
        HttpMethod::Patch => "patch",
        HttpMethod::Trace => "trace",
    }
}

/// The document, serialised once when the router is built.
#[derive(Debug, Clone)]
pub struct Document(pub std::sync::Arc<str>);

/// `GET /openapi.json`.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "operations",
    summary = "This document (OpenAPI 3.1)",
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json")),
    security(()),
)]
pub async fn openapi_json(State(state): State<AppState>) -> Response {
    let mut response = (StatusCode::OK, state.openapi().0.to_string()).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
