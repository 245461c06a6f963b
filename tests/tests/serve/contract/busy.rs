//! One run per thread (D6) and the request field `on_busy`: `"wait"` (the default) waits for the
//! active run and then runs; `"cancel"` stops the active run, then runs this one. (A wait that
//! gives up is 409 `THREAD_BUSY`, in `approvals.rs`.)

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::super::harness::{Server, Setup, user};
use super::super::steered::Steered;
use super::shop_with;

/// The shop with a wait for busy threads long enough for any machine.
async fn shop(steered: &Steered) -> Server {
    let setup = Setup {
        busy_wait: Some(Duration::from_secs(10)),
        ..Setup::default()
    };
    shop_with(steered, Default::default(), setup).await
}

/// Waits until the model was asked `calls` times (the run holding the thread is in its call).
async fn asked(steered: &Steered, calls: usize) {
    for _ in 0..500 {
        if steered.seen_tools.lock().unwrap().len() >= calls {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the model was never asked");
}

/// Invokes `text` on `thread` with `on_busy` (when given) in a task of its own.
fn invoke(server: &Server, thread: &str, text: &str, on_busy: Option<&str>) -> tokio::task::JoinHandle<(u16, Value)> {
    let server = server.as_user("");
    let mut body = json!({"messages": [user(text)], "config": {"thread_id": thread}, "response_granularity": "full"});
    if let Some(mode) = on_busy {
        body["on_busy"] = json!(mode);
    }
    tokio::spawn(async move { server.post("/v1/graph/invoke", body).await })
}

/// The texts of the thread's assistant messages, in order.
fn answers(body: &Value) -> Vec<String> {
    body["data"]["state"]["context"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "assistant")
        .map(|message| message["content"][0]["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn a_second_request_waits_for_the_active_run_then_runs() {
    let steered = Steered::default();
    steered.slow(Duration::from_millis(300), "first");
    steered.text("second");
    let server = shop(&steered).await;
    let first = invoke(&server, "b1", "one", None);
    asked(&steered, 1).await;
    let second = invoke(&server, "b1", "two", Some("wait"));
    let (status, body) = first.await.unwrap();
    assert_eq!(status, 200, "{body}");
    let (status, body) = second.await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        answers(&body),
        ["first", "second"],
        "one after the other, never interleaved"
    );
}

#[tokio::test]
async fn on_busy_cancel_stops_the_active_run_and_runs_this_one() {
    let steered = Steered::default();
    steered.slow(Duration::from_secs(20), "never");
    steered.text("now");
    let server = shop(&steered).await;
    let started = Instant::now();
    let first = invoke(&server, "b2", "one", None);
    asked(&steered, 1).await;
    let (status, body) = invoke(&server, "b2", "two", Some("cancel")).await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(started.elapsed() < Duration::from_secs(10), "the slow run was stopped");
    let texts = answers(&body);
    assert_eq!(texts.last().map(String::as_str), Some("now"), "{body}");
    assert!(!texts.iter().any(|text| text == "never"), "{body}");
    let (status, body) = first.await.unwrap();
    assert_eq!(status, 200, "{body}");
    let meta = &body["data"]["state"]["execution_meta"];
    assert_eq!(
        meta["stop_current_execution"], "stopped",
        "the first run was stopped: {meta}"
    );
    assert_eq!(meta["interrupt_reason"], "stop_requested", "{meta}");
    let (status, body) = server
        .post("/v1/graph/invoke", json!({"messages": [user("x")], "on_busy": "later"}))
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["details"][0]["loc"], json!(["body", "on_busy"]));
}
