//! `WS /v1/graph/ws` (reference-api.md §15): one run at a time per socket. A client frame is
//! `{"invoke_type": "fresh" | "resume", messages, resume, interrupt_id, tool_result, config,
//! initial_state, recursion_limit, response_granularity}`; the server answers with the stream's
//! chunks as text frames, then `{"event": "updates", "data": {"status": "done"}}` (after every
//! frame, so a client always knows when to send the next). A bad frame or a refusal gets an
//! `error` chunk first and the socket stays open; a frame over the size limit closes
//! it with 1009. The token comes from `Authorization`, from `Sec-WebSocket-Protocol:
//! 10xgraph-bearer, <token>` (or `agentflow-bearer`), or from `?token=`; a bad one closes the
//! socket with 1008 after the upgrade, as the reference does.

use std::collections::BTreeMap;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, header};
use axum::response::Response;
use serde_json::{Map, Value, json};
use tenx_engine::Identity;

use super::run::prepare_input;
use super::stream::start;
use crate::AppState;
use crate::envelope::ApiError;

const BEARER_PROTOCOLS: &[&str] = &["10xgraph-bearer", "agentflow-bearer"];

/// The upgrade.
#[utoipa::path(get, path = "/v1/graph/ws", tag = "graph",
    summary = "WebSocket: GraphInput frames in, stream chunks out; the token also from `Sec-WebSocket-Protocol: 10xgraph-bearer, <token>` or `?token=`",
    params(("token" = Option<String>, Query, description = "The bearer token, for clients that cannot set headers")),
    responses((status = 101, description = "Switching to the WebSocket protocol")),
    security(("bearer" = ["graph:stream"])))]
pub async fn ws(
    State(state): State<AppState>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let (token, protocol) = token(&headers, &query);
    let identity = match state.verifier() {
        None => Ok(Identity::anonymous()),
        Some(verifier) => match &token {
            Some(token) => verifier.verify(token),
            None => crate::auth::identify(Some(verifier), &headers),
        },
    }
    .and_then(|identity| crate::auth::require_scope(&identity, "graph:stream").map(|()| identity));
    let limit = state.settings().max_request_size;
    let mut upgrade = upgrade.max_message_size(limit).max_frame_size(limit);
    if let Some(protocol) = protocol {
        upgrade = upgrade.protocols([protocol]);
    }
    upgrade.on_upgrade(move |socket| serve(socket, state, identity))
}

/// The token and the bearer subprotocol to echo, from the headers or the query.
fn token(headers: &HeaderMap, query: &BTreeMap<String, String>) -> (Option<String>, Option<&'static str>) {
    let offered: Vec<String> = headers
        .get(header::SEC_WEBSOCKET_PROTOCOL)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.split(',').map(|part| part.trim().to_owned()).collect())
        .unwrap_or_default();
    for (index, part) in offered.iter().enumerate() {
        if let Some(protocol) = BEARER_PROTOCOLS.iter().find(|protocol| **protocol == part.as_str()) {
            return (offered.get(index.saturating_add(1)).cloned(), Some(protocol));
        }
    }
    if headers.contains_key(header::AUTHORIZATION) {
        return (None, None);
    }
    (query.get("token").cloned(), None)
}

async fn serve(mut socket: WebSocket, state: AppState, identity: Result<Identity, ApiError>) {
    let identity = match identity {
        Ok(identity) => identity,
        Err(error) => {
            let _ = socket.send(text(&error_chunk(&error.message, Some(&error)))).await;
            close(&mut socket, 1008, "authentication failed").await;
            return;
        }
    };
    while let Some(frame) = socket.recv().await {
        let frame = match frame {
            Ok(frame) => frame,
            Err(error) => {
                let too_big = error.to_string().to_lowercase().contains("too long")
                    || error.to_string().to_lowercase().contains("size");
                if too_big {
                    close(&mut socket, 1009, "message too big").await;
                }
                return;
            }
        };
        let body = match frame {
            Message::Text(text) => text,
            Message::Binary(_) => {
                let chunk = error_chunk("Invalid request: frames must be JSON text", None);
                if socket.send(text(&chunk)).await.is_err() {
                    return;
                }
                continue;
            }
            Message::Close(_) => return,
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        if !run_frame(&mut socket, &state, &identity, body.as_str()).await {
            return;
        }
    }
}

/// Runs one client frame; `false` when the socket is gone.
async fn run_frame(socket: &mut WebSocket, state: &AppState, identity: &Identity, body: &str) -> bool {
    let refusal = match frame_input(body) {
        Err(reason) => Some(error_chunk(&format!("Invalid request: {reason}"), None)),
        Ok(input) => {
            let started = match prepare_input(state, identity.clone(), &input).await {
                Ok(prepared) => start(state, prepared).await,
                Err(error) => Err(error),
            };
            match started {
                Ok(mut chunks) => {
                    while let Some(chunk) = chunks.recv().await {
                        if socket.send(text(&chunk)).await.is_err() {
                            return false;
                        }
                    }
                    None
                }
                Err(error) => Some(error_chunk(&error.message, Some(&error))),
            }
        }
    };
    if let Some(chunk) = refusal
        && socket.send(text(&chunk)).await.is_err()
    {
        return false;
    }
    socket
        .send(text(&json!({"event": "updates", "data": {"status": "done"}})))
        .await
        .is_ok()
}

/// A frame as a graph input: `invoke_type` decides whether `messages` are needed; a
/// `tool_result` becomes the `tool` message that answers a waiting remote call.
fn frame_input(body: &str) -> Result<Value, String> {
    let Ok(Value::Object(mut frame)) = serde_json::from_str::<Value>(body) else {
        return Err("a frame is one JSON object".to_owned());
    };
    let kind = frame.remove("invoke_type");
    match kind.as_ref().and_then(Value::as_str).unwrap_or("fresh") {
        "fresh" => {
            if frame
                .get("messages")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
            {
                return Err("invoke_type 'fresh' needs messages".to_owned());
            }
        }
        "resume" => {
            let thread = frame
                .get("config")
                .and_then(|config| config.get("thread_id"))
                .and_then(Value::as_str)
                .map(str::trim);
            if thread.is_none_or(|thread| thread.is_empty() || thread == "new") {
                return Err("invoke_type 'resume' needs config.thread_id".to_owned());
            }
            if let Some(result) = frame.remove("tool_result") {
                let results = match result {
                    Value::Array(results) => results,
                    one => vec![one],
                };
                let blocks: Vec<Value> = results
                    .into_iter()
                    .map(|result| {
                        let mut block = match result {
                            Value::Object(block) => block,
                            other => Map::from_iter([("output".to_owned(), other)]),
                        };
                        block.insert("type".to_owned(), json!("tool_result"));
                        Value::Object(block)
                    })
                    .collect();
                frame.insert("messages".to_owned(), json!([{"role": "tool", "content": blocks}]));
            } else if !frame.contains_key("resume") {
                return Err("invoke_type 'resume' needs resume (an answer) or tool_result".to_owned());
            }
        }
        other => return Err(format!("unknown invoke_type '{other}'")),
    }
    if let Some(Value::Object(config)) = frame.get_mut("config")
        && config
            .get("thread_id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.trim() == "new")
    {
        config.remove("thread_id");
    }
    Ok(Value::Object(frame))
}

fn error_chunk(reason: &str, error: Option<&ApiError>) -> Value {
    json!({
        "event": "error",
        "message": null,
        "state": null,
        "data": {
            "reason": reason,
            "code": error.map(|error| error.code.clone()),
            "status_code": error.map(|error| error.status.as_u16()),
        },
        "thread_id": null,
        "run_id": null,
        "metadata": {},
    })
}

fn text(chunk: &Value) -> Message {
    Message::Text(Utf8Bytes::from(serde_json::to_string(chunk).unwrap_or_default()))
}

async fn close(socket: &mut WebSocket, code: u16, reason: &'static str) {
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        })))
        .await;
}
