//! The approval record over the API: every decision, escalation and tool call, oldest first,
//! across threads, as the caller may see it (`tenx_engine::Engine::approval_records`), in
//! pages (`after` a record's `seq`) and as one JSON Lines export. Records carry no secrets and
//! no message bodies beyond the normalised arguments.

use std::collections::BTreeMap;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use serde_json::{Map, Value, json};
use tenx_engine::ports::NumberedRecord;

use super::approvals::READ_SCOPE;
use super::{api_error, caller};
use crate::AppState;
use crate::envelope::{ApiError, ApiResult, ok};
use crate::openapi::approval_schemas::ApprovalResponses;

/// One record as the API shows it: its fields, with its `seq`, thread, time and kind.
fn shown(numbered: &NumberedRecord) -> Value {
    let mut object = match &numbered.record.fields {
        Value::Object(fields) => fields.clone(),
        other => {
            let mut wrapped = Map::new();
            wrapped.insert("fields".to_owned(), other.clone());
            wrapped
        }
    };
    object.insert("seq".to_owned(), json!(numbered.seq));
    object.insert("thread_id".to_owned(), json!(numbered.record.thread_id));
    object.insert("at_ms".to_owned(), json!(numbered.record.at));
    object.insert("kind".to_owned(), json!(numbered.record.kind));
    Value::Object(object)
}

/// `after` (a `seq`, 0 by default) and `limit` (1 to 1000, 100 by default).
fn paging(query: &BTreeMap<String, String>) -> Result<(u64, usize), ApiError> {
    let number = |name: &str, default: u64| -> Result<u64, ApiError> {
        query.get(name).map_or(Ok(default), |text| {
            text.trim().parse::<u64>().map_err(|_| {
                ApiError::invalid_field(
                    json!(["query", name]),
                    "Input should be a valid non-negative integer",
                    "int_parsing",
                )
            })
        })
    };
    let after = number("after", 0)?;
    let limit = number("limit", 100)?;
    if limit == 0 || limit > 1000 {
        return Err(ApiError::http(
            StatusCode::UNPROCESSABLE_ENTITY,
            "limit must be between 1 and 1000",
        ));
    }
    Ok((after, usize::try_from(limit).unwrap_or(1000)))
}

/// `GET /v1/approval-records?after&limit`.
#[utoipa::path(get, path = "/v1/approval-records", operation_id = "list_approval_records", tag = "approvals",
    summary = "The approval record as the caller may see it: decisions, escalations and tool calls, oldest first, paged by `seq`",
    params(("after" = Option<u64>, Query, description = "Records after this `seq` (0)"), ("limit" = Option<u64>, Query, description = "At most this many, 1 to 1000 (100)")),
    responses(ApprovalResponses), security(("bearer" = ["approvals:read"])))]
pub async fn list(
    State(state): State<AppState>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    let identity = caller(&state, &headers, READ_SCOPE)?;
    let (after, limit) = paging(&query)?;
    let page = state
        .engine()
        .approval_records(&identity, after, limit)
        .await
        .map_err(|error| api_error(&state, error))?;
    let records: Vec<Value> = page.records.iter().map(shown).collect();
    Ok(ok(json!({"records": records, "next_after": page.next_after})))
}

/// `GET /v1/approval-records/export`: every record the caller may see, one JSON object per
/// line (`application/x-ndjson`).
#[utoipa::path(get, path = "/v1/approval-records/export", operation_id = "export_approval_records", tag = "approvals",
    summary = "The approval record as JSON Lines, every record the caller may see",
    responses(ApprovalResponses), security(("bearer" = ["approvals:read"])))]
pub async fn export(State(state): State<AppState>, headers: HeaderMap) -> Result<axum::response::Response, ApiError> {
    const PAGE: usize = 1000;
    let identity = caller(&state, &headers, READ_SCOPE)?;
    let engine = state.engine();
    let mut lines = String::new();
    let mut after = 0_u64;
    loop {
        let page = engine
            .approval_records(&identity, after, PAGE)
            .await
            .map_err(|error| api_error(&state, error))?;
        for record in &page.records {
            lines.push_str(&shown(record).to_string());
            lines.push('\n');
        }
        match page.next_after {
            Some(next) if next > after => after = next,
            _ => break,
        }
    }
    let mut response = (StatusCode::OK, lines).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"approval-records.jsonl\""),
    );
    Ok(response)
}
