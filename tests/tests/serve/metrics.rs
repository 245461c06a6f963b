//! `GET /metrics` over loopback HTTP: runs by outcome, step and tool latencies, pending
//! interrupts, refusals by code and HTTP requests by route and status, in the Prometheus
//! (OpenMetrics) text format, with no user, thread or message text in any label.

use serde_json::json;

use super::harness::{Server, user};

const REFUND: &str = "Refund order 1042, 59.00";

/// The value of the sample `name{labels}` (labels written as in the text), or 0.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map_or(0.0, |value| value.trim().parse().unwrap())
}

async fn metrics(server: &Server) -> String {
    let response = server.request(reqwest::Method::GET, "/metrics").send().await.unwrap();
    assert_eq!(response.status(), 200);
    let kind = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    response.text().await.unwrap()
}

#[tokio::test]
async fn metrics_count_runs_steps_tools_interrupts_refusals_and_requests_with_bounded_labels() {
    let server = Server::refunds().await;
    let before = metrics(&server).await;
    assert_eq!(sample(&before, r#"tenx_pending_interrupts{kind="approval"}"#), 0.0);
    assert!(before.trim_end().ends_with("# EOF"), "{before}");

    let (status, _) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hello there")], "config": {"thread_id": "m-plain"}}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user(REFUND)], "config": {"thread_id": "m-refund"}, "response_granularity": "full"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["state"]["execution_meta"]["interrupt_data"]["interrupt"]["id"].clone();
    let paused = metrics(&server).await;
    assert_eq!(
        sample(&paused, r#"tenx_pending_interrupts{kind="approval"}"#),
        1.0,
        "{paused}"
    );

    // A new message to the paused thread is refused: counted by its code, no run.
    let (status, _) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hello?")], "config": {"thread_id": "m-refund"}}),
        )
        .await;
    assert_eq!(status, 422);
    let (status, _) = server
        .post(
            "/v1/graph/invoke",
            json!({"resume": {"approved": true}, "interrupt_id": id, "config": {"thread_id": "m-refund"}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(server.get("/v1/no-such-route").await.0, 404);

    let text = metrics(&server).await;
    assert_eq!(sample(&text, r#"tenx_runs_total{outcome="completed"}"#), 2.0, "{text}");
    assert_eq!(
        sample(&text, r#"tenx_runs_total{outcome="interrupted"}"#),
        1.0,
        "{text}"
    );
    assert_eq!(
        sample(&text, r#"tenx_pending_interrupts{kind="approval"}"#),
        0.0,
        "answered: {text}"
    );
    assert_eq!(
        sample(&text, r#"tenx_refusals_total{code="INTERRUPT_004"}"#),
        1.0,
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            r#"tenx_tool_call_duration_seconds_count{tool="issue_refund",outcome="ok"}"#
        ),
        1.0,
        "{text}"
    );
    assert!(
        sample(&text, r#"tenx_step_duration_seconds_count{kind="agent"}"#) >= 3.0,
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            r#"tenx_http_requests_total{method="POST",route="/v1/graph/invoke",status="200"}"#
        ),
        3.0,
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            r#"tenx_http_requests_total{method="POST",route="/v1/graph/invoke",status="422"}"#
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            r#"tenx_http_requests_total{method="GET",route="unmatched",status="404"}"#
        ),
        1.0,
        "{text}"
    );
    assert_eq!(sample(&text, "tenx_runs_in_progress"), 0.0, "{text}");
    // Names and labels only: a sample's value (a latency such as 0.001042537) may hold any
    // digits by chance.
    let names_and_labels: String = text
        .lines()
        .map(|line| match line.starts_with('#') {
            true => line,
            false => line.rsplit_once(' ').map_or(line, |(name, _value)| name),
        })
        .collect::<Vec<_>>()
        .join("\n");
    for private in [
        "m-refund",
        "m-plain",
        "hello",
        "Refund",
        "1042",
        "no-such-route",
        "anonymous",
    ] {
        assert!(
            !names_and_labels.contains(private),
            "`{private}` in the metrics: {text}"
        );
    }

    let (status, _) = server
        .request(reqwest::Method::DELETE, "/v1/threads/m-refund")
        .json(&json!({"config": {}}))
        .send()
        .await
        .map(|response| (response.status().as_u16(), ()))
        .unwrap();
    assert_eq!(status, 200);
}
