//! Every route the server mounts, in one table ([`table`]): the router is built from it and
//! `/openapi.json` is generated from the annotations of its handlers, so what is served and what
//! is documented come from the same rows. A row names a method, a path template and a handler;
//! the handler's `#[utoipa::path(…)]` documents it (a handler without one does not compile here).
//! The serve tests compare each row with its annotation and with the real router over HTTP.
//!
//! To add a route: write the handler with its `#[utoipa::path]` and add one row
//! (`mount!(PUT "/v1/threads/{thread_id}/state" => threads::put_state)`).

use axum::Router;
use axum::http::Method;
use axum::routing::{MethodFilter, MethodRouter};
use utoipa::openapi::path::{HttpMethod, Operation};

use super::{
    approval_records, approvals, console, event_source, health, introspect, run, stream, thread_writes, threads,
    unconfigured, ws,
};
use crate::config::ServerSettings;
use crate::{AppState, metrics, openapi};

/// What a route's annotation says: its path, methods and operation.
pub type Doc = fn() -> (String, Vec<HttpMethod>, Operation);

/// One mounted route.
pub struct Mounted {
    /// The method, or `None` for every method (the unconfigured store and file routes).
    pub method: Option<Method>,
    /// The path template as axum matches it (`{thread_id}`, `{*rest}`).
    pub path: &'static str,
    /// The handler.
    pub router: MethodRouter<AppState>,
    /// The handler's annotation.
    pub doc: Doc,
}

impl std::fmt::Debug for Mounted {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Mounted")
            .field("method", &self.method)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The annotation of the handler whose generated path type is `P`.
pub fn doc_of<P: utoipa::Path>() -> (String, Vec<HttpMethod>, Operation) {
    (P::path(), P::methods(), P::operation())
}

/// A row: `mount!(GET "/ping" => health::ping)`, or `ANY` for every method.
macro_rules! mount {
    (ANY $path:literal => $module:ident :: $handler:ident) => {
        pastey::paste! {
            Mounted {
                method: None,
                path: $path,
                router: axum::routing::any($module::$handler),
                doc: doc_of::<$module::[<__path_ $handler>]>,
            }
        }
    };
    ($method:ident $path:literal => $module:ident :: $handler:ident) => {
        pastey::paste! {
            Mounted {
                method: Some(Method::$method),
                path: $path,
                router: axum::routing::on(MethodFilter::$method, $module::$handler),
                doc: doc_of::<$module::[<__path_ $handler>]>,
            }
        }
    };
}

/// Every route these settings mount (`/metrics` only when metrics are on).
pub fn table(settings: &ServerSettings) -> Vec<Mounted> {
    let mut rows = vec![
        mount!(GET "/ping" => health::ping),
        mount!(GET "/health/live" => health::live),
        mount!(GET "/health/ready" => health::ready),
        mount!(GET "/openapi.json" => openapi::openapi_json),
        mount!(POST "/v1/graph/invoke" => run::invoke),
        mount!(POST "/v1/graph/stream" => stream::stream),
        mount!(GET "/v1/graph/stream" => event_source::stream),
        mount!(POST "/v1/graph/stop" => run::stop),
        mount!(GET "/v1/graph/ws" => ws::ws),
        mount!(GET "/v1/graph" => introspect::graph),
        mount!(GET "/v1/graph/tools" => introspect::tools),
        mount!(GET "/v1/graph:StateSchema" => introspect::state_schema),
        mount!(GET "/v1/threads" => threads::list),
        mount!(GET "/v1/threads/{thread_id}" => threads::read),
        mount!(DELETE "/v1/threads/{thread_id}" => threads::delete),
        mount!(GET "/v1/threads/{thread_id}/state" => threads::state_of),
        mount!(PUT "/v1/threads/{thread_id}/state" => thread_writes::put_state),
        mount!(DELETE "/v1/threads/{thread_id}/state" => thread_writes::clear_state),
        mount!(GET "/v1/threads/{thread_id}/messages" => threads::messages),
        mount!(POST "/v1/threads/{thread_id}/messages" => thread_writes::post_messages),
        mount!(GET "/v1/threads/{thread_id}/messages/{message_id}" => threads::message),
        mount!(DELETE "/v1/threads/{thread_id}/messages/{message_id}" => thread_writes::delete_message),
        mount!(GET "/v1/approvals" => approvals::list),
        mount!(POST "/v1/approvals/batch" => approvals::batch),
        mount!(GET "/v1/approvals/{interrupt_id}" => approvals::read),
        mount!(POST "/v1/approvals/{interrupt_id}/answer" => approvals::answer),
        mount!(POST "/v1/approvals/{interrupt_id}/escalate" => approvals::escalate),
        mount!(GET "/v1/approval-records" => approval_records::list),
        mount!(GET "/v1/approval-records/export" => approval_records::export),
        mount!(ANY "/v1/store/{*rest}" => unconfigured::store),
        mount!(ANY "/v1/files/upload" => unconfigured::files_upload),
        mount!(ANY "/v1/files/{*rest}" => unconfigured::files),
        mount!(GET "/v1/config/multimodal" => unconfigured::multimodal),
        mount!(GET "/console" => console::page),
        mount!(GET "/console/" => console::page_slash),
        mount!(GET "/console/{file}" => console::asset),
    ];
    if settings.metrics {
        rows.push(mount!(GET "/metrics" => metrics::route));
    }
    rows
}

/// The router of `rows`.
pub fn router(rows: Vec<Mounted>) -> Router<AppState> {
    rows.into_iter()
        .fold(Router::new(), |router, row| router.route(row.path, row.router))
}
