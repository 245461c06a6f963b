//! `/console`: the approval console, a web page over the approvals API (issue 16). Its files
//! live in `runtime/server/console/` and are embedded here with `include_str!`, so the binary
//! serves them with no file system and no network: `GET /console` and `GET /console/` answer the
//! page, `GET /console/{file}` each script and the stylesheet ([`ASSETS`]), anything else under
//! `/console/` is 404. Every answer carries the console's own headers ([`HEADERS`]: a strict CSP
//! that allows nothing but this origin's scripts, styles and API, no referrer, no caching); the
//! middleware adds the API's security headers without replacing these
//! ([`crate::middleware`]). The routes are public: the page holds no data, and every API call it
//! makes carries the token the user signs in with.

use axum::extract::Path;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::envelope::ApiError;
use crate::openapi::schemas::ErrorEnvelope;

/// The console's Content-Security-Policy: this origin's scripts, styles and API only, no inline
/// code, no `<base>`, no form posts, never framed.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
    img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The headers of every console answer, beside its content type.
pub const HEADERS: [(&str, &str); 4] = [
    ("content-security-policy", CSP),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cache-control", "no-store"),
];

const HTML: &str = "text/html; charset=utf-8";
const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// The page.
const INDEX: &str = include_str!("../../console/index.html");

/// Every file under `/console/`: its name, content type and text. The page's modules import
/// one another by these names (`./api.js`).
pub const ASSETS: [(&str, &str, &str); 11] = [
    ("console.js", JAVASCRIPT, include_str!("../../console/console.js")),
    ("console.css", CSS, include_str!("../../console/console.css")),
    ("views.css", CSS, include_str!("../../console/views.css")),
    ("api.js", JAVASCRIPT, include_str!("../../console/api.js")),
    ("dom.js", JAVASCRIPT, include_str!("../../console/dom.js")),
    ("format.js", JAVASCRIPT, include_str!("../../console/format.js")),
    ("inbox.js", JAVASCRIPT, include_str!("../../console/inbox.js")),
    ("detail.js", JAVASCRIPT, include_str!("../../console/detail.js")),
    ("actions.js", JAVASCRIPT, include_str!("../../console/actions.js")),
    (
        "schema-form.js",
        JAVASCRIPT,
        include_str!("../../console/schema-form.js"),
    ),
    ("history.js", JAVASCRIPT, include_str!("../../console/history.js")),
];

/// `GET /console`.
#[utoipa::path(get, path = "/console", tag = "console", operation_id = "console_page",
    summary = "The approval console (an HTML page; see docs/serve.md)",
    responses((status = 200, description = "The page", content_type = "text/html")), security(()))]
pub async fn page() -> Response {
    answer(StatusCode::OK, HTML, INDEX)
}

/// `GET /console/`: the same page.
#[utoipa::path(get, path = "/console/", tag = "console", operation_id = "console_page_slash",
    summary = "The approval console, as `/console`",
    responses((status = 200, description = "The page", content_type = "text/html")), security(()))]
pub async fn page_slash() -> Response {
    answer(StatusCode::OK, HTML, INDEX)
}

/// `GET /console/{file}`: one of the page's scripts or its stylesheet.
#[utoipa::path(get, path = "/console/{file}", tag = "console", operation_id = "console_asset",
    summary = "A script or the stylesheet of the approval console",
    params(("file" = String, Path, description = "The file's name, e.g. `console.js` or `console.css`")),
    responses(
        (status = 200, description = "The file (`text/javascript` or `text/css`)"),
        (status = 404, description = "No such file", body = ErrorEnvelope),
    ),
    security(()))]
pub async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, content_type, text)) => answer(StatusCode::OK, content_type, text),
        None => with_headers(ApiError::http(StatusCode::NOT_FOUND, "Not Found").into_response()),
    }
}

fn answer(status: StatusCode, content_type: &'static str, text: &'static str) -> Response {
    let mut response = (status, text).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    with_headers(response)
}

fn with_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in HEADERS {
        headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    response
}
