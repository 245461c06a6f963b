//! `WS /v1/graph/ws`: runs, answers bound to their interrupt, bad frames that leave the socket
//! open, and auth on the handshake (reference-api.md §15, contract D1).

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::harness::{Server, refund_example, refund_tools, token, user, with_auth};

pub type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub async fn connect(server: &Server, protocol: Option<&str>) -> Socket {
    let url = format!("{}/v1/graph/ws", server.base.replace("http://", "ws://"));
    let mut request = url.into_client_request().unwrap();
    if let Some(protocol) = protocol {
        request
            .headers_mut()
            .insert("sec-websocket-protocol", protocol.parse().unwrap());
    }
    tokio_tungstenite::connect_async(request).await.unwrap().0
}

/// Sends a frame and reads chunks up to `done` (or a close).
pub async fn exchange(socket: &mut Socket, frame: &str) -> Vec<Value> {
    socket.send(Message::text(frame)).await.unwrap();
    let mut chunks = Vec::new();
    while let Some(message) = socket.next().await {
        match message.unwrap() {
            Message::Text(text) => {
                let chunk: Value = serde_json::from_str(text.as_str()).unwrap();
                let done = chunk["data"]["status"] == "done";
                chunks.push(chunk);
                if done {
                    break;
                }
            }
            Message::Close(frame) => {
                chunks.push(json!({"closed": frame.map(|frame| u16::from(frame.code))}));
                break;
            }
            _ => {}
        }
    }
    chunks
}

#[tokio::test]
async fn a_socket_runs_pauses_refuses_a_stale_answer_and_takes_the_right_one() {
    let server = Server::refunds().await;
    let mut socket = connect(&server, None).await;
    let frame = json!({"invoke_type": "fresh", "messages": [user("Refund order 1042, 59.00")],
        "config": {"thread_id": "w1"}, "response_granularity": "full"});
    let chunks = exchange(&mut socket, &frame.to_string()).await;
    let pause = chunks
        .iter()
        .find(|c| c["data"]["status"] == "interrupted")
        .expect("a pause");
    let id = pause["data"]["interrupt"]["id"].as_str().unwrap().to_owned();
    assert_eq!(chunks.last().unwrap()["data"]["status"], "done");

    let stale = json!({"invoke_type": "resume", "resume": {"approved": true}, "interrupt_id": "int_nope",
        "config": {"thread_id": "w1"}});
    let chunks = exchange(&mut socket, &stale.to_string()).await;
    assert_eq!(chunks[0]["event"], "error", "{chunks:?}");
    assert_eq!(chunks[0]["data"]["code"], "INTERRUPT_001");
    assert_eq!(chunks[0]["data"]["status_code"], 409);
    assert_eq!(server.tools.calls_of("issue_refund"), 0);

    let chunks = exchange(&mut socket, "not json").await;
    assert!(
        chunks[0]["data"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("Invalid request: "),
        "{chunks:?}"
    );

    let answer = json!({"invoke_type": "resume", "resume": {"approved": true}, "interrupt_id": id,
        "config": {"thread_id": "w1"}});
    let chunks = exchange(&mut socket, &answer.to_string()).await;
    assert!(chunks.iter().all(|c| c["event"] != "error"), "{chunks:?}");
    assert_eq!(server.tools.calls_of("issue_refund"), 1);
    let texts: Vec<&str> = chunks
        .iter()
        .filter(|c| c["message"]["role"] == "assistant" && c["message"]["delta"] == false)
        .filter_map(|c| c["message"]["content"][0]["text"].as_str())
        .collect();
    assert!(texts.contains(&"Refunded 5900 cents for order 1042"), "{texts:?}");
}

#[tokio::test]
async fn a_socket_without_a_valid_token_is_closed_with_1008_and_a_bearer_subprotocol_works() {
    let server = Server::start(refund_example(), refund_tools(), with_auth()).await;
    let mut socket = connect(&server, None).await;
    let chunks = exchange(&mut socket, &json!({"messages": [user("hi")]}).to_string()).await;
    assert_eq!(chunks[0]["event"], "error", "{chunks:?}");
    assert!(chunks.iter().any(|c| c["closed"] == 1008), "{chunks:?}");

    let bearer = format!("10xgraph-bearer, {}", token("alice", json!({})));
    let mut socket = connect(&server, Some(&bearer)).await;
    let chunks = exchange(
        &mut socket,
        &json!({"messages": [user("hi")], "config": {"thread_id": "w2"}}).to_string(),
    )
    .await;
    assert!(chunks.iter().all(|c| c["event"] != "error"), "{chunks:?}");
    assert_eq!(chunks.last().unwrap()["data"]["status"], "done");
}
