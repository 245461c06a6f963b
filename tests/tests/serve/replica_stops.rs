//! Two `tenx serve` processes on one store: a stop or an `on_busy = "cancel"` sent to the
//! replica that does *not* run the thread reaches the one that does (SQLite: through the
//! store's `stops` table; PostgreSQL: a `NOTIFY` to the lease holder, on a schema of the test's
//! own, skipped without `TENX_TEST_DATABASE_URL`). The run on A is held mid-step by a tool
//! service that answers slowly; the request goes to B.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::binary::{SLOW_HTTP_PROGRAM, Serving, SlowRequests, get, post, serve, slow_service};
use super::harness::user;
use crate::pg_schema::Schema;

/// How long the tool service holds its answer: far longer than a stop may take to arrive.
const HOLD: Duration = Duration::from_secs(8);

struct Pair {
    _dir: tempfile::TempDir,
    a: Serving,
    b: Serving,
    requests: SlowRequests,
    /// PostgreSQL only: the test's schema, dropped after both replicas.
    _schema: Option<Schema>,
}

/// The store the two replicas share.
enum Shared {
    /// The SQLite file in their one directory (`.tenx/`).
    Sqlite,
    /// A PostgreSQL schema of the test's own.
    Postgres(Schema),
}

impl Shared {
    /// A schema of the test's own on `TENX_TEST_DATABASE_URL`, or `None` after saying the test
    /// skips.
    fn postgres(test: &str) -> Option<Self> {
        let Some(base) = std::env::var("TENX_TEST_DATABASE_URL")
            .ok()
            .filter(|url| !url.trim().is_empty())
        else {
            eprintln!("skipped {test} on PostgreSQL: TENX_TEST_DATABASE_URL is not set");
            return None;
        };
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros();
        let name = format!("tenx_stops_{test}_{}_{stamp}", std::process::id());
        Some(Self::Postgres(Schema { base, name }))
    }
}

/// Two replicas in one directory, on the shared store.
fn pair(shared: Shared) -> Pair {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("slow.tenxg");
    std::fs::write(
        &artifact,
        tenx_tests::sealed_bytes("tests/serve_slow_http.tenx", SLOW_HTTP_PROGRAM),
    )
    .unwrap();
    let artifact = artifact.to_str().unwrap().to_owned();
    let (url, requests) = slow_service(HOLD);
    let vars = [("SLOW_URL", url.as_str())];
    let (store, schema) = match shared {
        Shared::Sqlite => (None, None),
        Shared::Postgres(schema) => {
            let separator = if schema.base.contains('?') { '&' } else { '?' };
            let store = format!("{}{separator}schema={}", schema.base, schema.name);
            (Some(store), Some(schema))
        }
    };
    let mut args = vec![artifact.as_str(), "--port", "0"];
    if let Some(store) = &store {
        args.extend(["--store", store.as_str()]);
    }
    let a = serve(&args, &vars, dir.path());
    let b = serve(&args, &vars, dir.path());
    Pair {
        _dir: dir,
        a,
        b,
        requests,
        _schema: schema,
    }
}

/// Starts a run of `thread` on A and waits until its tool call is held by the service.
async fn held_on_a(pair: &Pair, thread: &str) -> tokio::task::JoinHandle<(u16, Value)> {
    let base = pair.a.base.clone();
    let body =
        json!({"messages": [user("slow please")], "config": {"thread_id": thread}, "response_granularity": "full"});
    let run = tokio::spawn(async move { post(&base, "/v1/graph/invoke", body).await });
    let deadline = Instant::now() + Duration::from_secs(30);
    while pair.requests.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the tool call never began");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    run
}

fn meta(state: &Value) -> &Value {
    &state["execution_meta"]
}

#[tokio::test]
async fn a_stop_sent_to_the_other_replica_stops_the_run_and_the_thread_stays_consistent() {
    stop_across(pair(Shared::Sqlite)).await;
}

#[tokio::test]
async fn a_stop_sent_to_the_other_replica_stops_the_run_on_postgres() {
    if let Some(shared) = Shared::postgres("stop") {
        stop_across(pair(shared)).await;
    }
}

#[tokio::test]
async fn on_busy_cancel_sent_to_the_other_replica_stops_the_run_there_and_runs_at_once() {
    busy_cancel_across(pair(Shared::Sqlite)).await;
}

#[tokio::test]
async fn on_busy_cancel_sent_to_the_other_replica_stops_the_run_there_on_postgres() {
    if let Some(shared) = Shared::postgres("busy") {
        busy_cancel_across(pair(shared)).await;
    }
}

async fn stop_across(pair: Pair) {
    let run = held_on_a(&pair, "across").await;
    let asked = Instant::now();
    let (status, body) = post(&pair.b.base, "/v1/graph/stop", json!({"thread_id": "across"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"],
        json!({"ok": true, "running": true}),
        "B sent the stop to A"
    );

    let (status, body) = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .unwrap()
        .unwrap();
    let took = asked.elapsed();
    assert_eq!(status, 200, "{body}");
    assert!(
        took < HOLD,
        "the run stopped after {took:?}, not when the tool answered"
    );
    let stopped = meta(&body["data"]["state"]);
    assert_eq!(stopped["status"], "interrupted_after", "{stopped}");
    assert_eq!(stopped["interrupt_reason"], "stop_requested", "{stopped}");

    // Both replicas read the same stopped thread, and nothing runs it any more.
    for replica in [&pair.a, &pair.b] {
        let (status, body) = get(&replica.base, "/v1/threads/across/state").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(meta(&body["data"]["state"])["status"], "interrupted_after", "{body}");
    }
    let (_, body) = post(&pair.b.base, "/v1/graph/stop", json!({"thread_id": "across"})).await;
    assert_eq!(
        body["data"],
        json!({"ok": true, "running": false, "reason": "not-running"})
    );
    // The thread goes on with a new message, on either replica.
    let (status, body) = post(
        &pair.b.base,
        "/v1/graph/invoke",
        json!({"messages": [user("hello")], "config": {"thread_id": "across"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // The call the stop cut short was sent: the next run sends it again under the same key (as
    // recovery after a crash would), never a second call under another.
    let keys = pair.requests.keys();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(!keys[0].is_empty() && keys[0] == keys[1], "{keys:?}");
}

async fn busy_cancel_across(pair: Pair) {
    let run = held_on_a(&pair, "busy").await;
    let asked = Instant::now();
    let (status, body) = post(
        &pair.b.base,
        "/v1/graph/invoke",
        json!({"messages": [user("hello")], "config": {"thread_id": "busy"}, "on_busy": "cancel", "response_granularity": "full"}),
    )
    .await;
    let took = asked.elapsed();
    assert_eq!(status, 200, "{body}");
    assert!(
        took < HOLD,
        "B ran after {took:?}: it waited for A's step instead of cancelling it"
    );
    assert_eq!(meta(&body["data"]["state"])["status"], "completed", "{body}");

    let (status, first) = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, 200, "{first}");
    let stopped = meta(&first["data"]["state"]);
    assert_eq!(stopped["status"], "interrupted_after", "{stopped}");
    assert_eq!(stopped["interrupt_reason"], "stop_requested", "{stopped}");

    // The thread ends with B's run: A's stop was committed before it.
    let (_, state) = get(&pair.a.base, "/v1/threads/busy/state").await;
    assert_eq!(meta(&state["data"]["state"])["status"], "completed", "{state}");
    let context = state["data"]["state"]["context"].as_array().unwrap();
    let users = context.iter().filter(|message| message["role"] == "user").count();
    assert_eq!(users, 2, "both messages are in the thread: {context:#?}");
    // B's run first finished the call A's stop cut short, under the same key.
    let keys = pair.requests.keys();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(!keys[0].is_empty() && keys[0] == keys[1], "{keys:?}");
}
