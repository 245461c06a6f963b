//! `GET /metrics`: the server's numbers in the Prometheus text format (OpenMetrics 1.0, which
//! Prometheus asks for and reads), from `prometheus-client`. What is counted: runs by outcome,
//! step and tool latency, the interrupts waiting for an answer, refusals by code, HTTP requests
//! by route and status. Label values come only from fixed, bounded sets (outcomes, node kinds,
//! the artifact's declared tool names, error codes, route templates, methods, statuses), never
//! from what a client sends: no user, thread or message ever becomes a label.
//!
//! The engine's numbers arrive through its event port: [`Observed`] wraps a run's
//! [`EventSink`] and times steps and tool calls from the events, so the engine knows nothing of
//! metrics. `[serve] metrics = false` leaves the route unmounted and counts nothing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tenx_artifact::NodeKind;
use tenx_engine::ports::{Event, EventSink};
use tenx_engine::thread::PendingKind;
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{Engine, RunError, RunOutput};

use crate::AppState;

type One = [(&'static str, &'static str); 1];
type Owned<const N: usize> = [(&'static str, String); N];
type Timings<L> = Family<L, Histogram, fn() -> Histogram>;

/// The kinds of pending interrupts, as the gauge labels them.
const PENDING_KINDS: [&str; 3] = ["approval", "interrupt", "remote_tool"];

/// How a run can end, as `tenx_runs_total` labels it.
const OUTCOMES: [&str; 7] = [
    "completed",
    "interrupted",
    "remote_tool",
    "stopped",
    "timed_out",
    "error",
    "other",
];

/// Every metric of one server.
pub struct Metrics {
    registry: Registry,
    runs: Family<One, Counter>,
    steps: Timings<One>,
    tools: Timings<Owned<2>>,
    pending: Family<One, Gauge>,
    refusals: Family<Owned<1>, Counter>,
    requests: Family<Owned<3>, Counter>,
    request_seconds: Timings<Owned<2>>,
    in_progress: Gauge,
    /// The threads paused in this process, by the kind of their wait (the gauge's source; the
    /// ids never leave this map).
    paused: Mutex<HashMap<String, &'static str>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn latency() -> Histogram {
    // 1 ms to about 65 s.
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
        0.001, 2.0, 17,
    ))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every metric registered, all at zero.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("tenx");
        let runs = Family::<One, Counter>::default();
        registry.register(
            "runs",
            "Runs that ended, by outcome (completed, interrupted, remote_tool, stopped, timed_out, error)",
            runs.clone(),
        );
        let steps: Timings<One> = Family::new_with_constructor(latency);
        registry.register(
            "step_duration_seconds",
            "How long a step took, by the kind of its node (agent, tool, interrupt)",
            steps.clone(),
        );
        let tools: Timings<Owned<2>> = Family::new_with_constructor(latency);
        registry.register(
            "tool_call_duration_seconds",
            "How long a tool call took, by declared tool and outcome (ok, error)",
            tools.clone(),
        );
        let pending = Family::<One, Gauge>::default();
        registry.register(
            "pending_interrupts",
            "Threads paused in this process and waiting, by kind (approval, interrupt, remote_tool)",
            pending.clone(),
        );
        let refusals = Family::<Owned<1>, Counter>::default();
        registry.register(
            "refusals",
            "Requests refused (4xx answers), by error code",
            refusals.clone(),
        );
        let requests = Family::<Owned<3>, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by method, route template and status",
            requests.clone(),
        );
        let request_seconds: Timings<Owned<2>> = Family::new_with_constructor(latency);
        registry.register(
            "http_request_duration_seconds",
            "How long answering took (to the first byte of a stream), by method and route template",
            request_seconds.clone(),
        );
        let in_progress = Gauge::default();
        registry.register(
            "runs_in_progress",
            "Runs in progress in this process",
            in_progress.clone(),
        );
        for kind in PENDING_KINDS {
            pending.get_or_create(&[("kind", kind)]).set(0);
        }
        for outcome in OUTCOMES {
            let _ = runs.get_or_create(&[("outcome", outcome)]);
        }
        Self {
            registry,
            runs,
            steps,
            tools,
            pending,
            refusals,
            requests,
            request_seconds,
            in_progress,
            paused: Mutex::new(HashMap::new()),
        }
    }

    /// The text Prometheus scrapes.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }

    /// One HTTP answer.
    pub fn request(&self, method: &str, route: &str, status: u16, seconds: f64, refusal: Option<&str>) {
        self.requests
            .get_or_create(&[
                ("method", method.to_owned()),
                ("route", route.to_owned()),
                ("status", status.to_string()),
            ])
            .inc();
        self.request_seconds
            .get_or_create(&[("method", method.to_owned()), ("route", route.to_owned())])
            .observe(seconds);
        if let Some(code) = refusal {
            self.refusals.get_or_create(&[("code", code.to_owned())]).inc();
        }
    }

    /// A run began (`+1`) or ended (`-1`) in this process.
    pub fn in_progress(&self, delta: i64) {
        self.in_progress.inc_by(delta);
    }

    /// A run ended with `outcome`; `timed_out` when the run timeout stopped it.
    pub fn run_ended(&self, outcome: &Result<RunOutput, RunError>, timed_out: bool) {
        let label = match outcome {
            Ok(output) => {
                let kind = output
                    .thread
                    .pending
                    .as_ref()
                    .map(|pending| pending_kind(&pending.kind));
                self.paused_now(&output.thread_id, kind);
                match (kind, output.thread.execution.status) {
                    (Some("remote_tool"), _) => "remote_tool",
                    (Some(_), _) => "interrupted",
                    (None, ExecutionStatus::Completed) => "completed",
                    (None, _) if timed_out => "timed_out",
                    (None, ExecutionStatus::InterruptedAfter) => "stopped",
                    (None, ExecutionStatus::Error) => "error",
                    (None, _) => "other",
                }
            }
            // A refusal is no run: it is counted with the answer, by its code.
            Err(error) if error.code.status() < 500 => return,
            Err(_) => "error",
        };
        self.runs.get_or_create(&[("outcome", label)]).inc();
    }

    /// The thread is gone (deleted): it waits for nothing any more.
    pub fn forget_thread(&self, thread_id: &str) {
        self.paused_now(thread_id, None);
    }

    fn paused_now(&self, thread_id: &str, kind: Option<&'static str>) {
        let Ok(mut paused) = self.paused.lock() else {
            return;
        };
        let changed = match kind {
            Some(kind) => paused.insert(thread_id.to_owned(), kind) != Some(kind),
            None => paused.remove(thread_id).is_some(),
        };
        if changed {
            for kind in PENDING_KINDS {
                let count = paused.values().filter(|paused| **paused == kind).count();
                self.pending
                    .get_or_create(&[("kind", kind)])
                    .set(i64::try_from(count).unwrap_or(i64::MAX));
            }
        }
    }
}

fn pending_kind(kind: &PendingKind) -> &'static str {
    match kind {
        PendingKind::ToolApproval { .. } => "approval",
        PendingKind::InterruptNode { .. } => "interrupt",
        PendingKind::RemoteTool { .. } => "remote_tool",
    }
}

/// `GET /metrics` (public, like `/health`; mounted only with `[serve] metrics = true`).
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "operations",
    summary = "Prometheus metrics (OpenMetrics text); public, like /health",
    responses((status = 200, description = "The metrics", content_type = "application/openmetrics-text")),
    security(()),
)]
pub async fn route(State(state): State<AppState>) -> Response {
    let text = state.metrics().map(Metrics::encode).unwrap_or_default();
    let mut response = (StatusCode::OK, text).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}

/// A run's event sink, observed: steps and tool calls are timed from the events before they go
/// on to `inner`. It also notes that the run has begun (its first event: the thread is held).
pub struct Observed<S> {
    inner: S,
    metrics: Option<std::sync::Arc<Metrics>>,
    engine: Engine,
    step: Option<(Instant, &'static str)>,
    calls: HashMap<String, Instant>,
    began: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl<S: EventSink> Observed<S> {
    /// Observes the run of `engine` whose events go to `inner`; `began`, when given, turns true
    /// at its first event.
    pub fn new(
        inner: S,
        metrics: Option<std::sync::Arc<Metrics>>,
        engine: Engine,
        began: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    ) -> Self {
        Self {
            inner,
            metrics,
            engine,
            step: None,
            calls: HashMap::new(),
            began,
        }
    }

    fn close_step(&mut self) {
        if let (Some((started, kind)), Some(metrics)) = (self.step.take(), &self.metrics) {
            metrics
                .steps
                .get_or_create(&[("kind", kind)])
                .observe(started.elapsed().as_secs_f64());
        }
    }

    fn node_kind(&self, node: &str) -> &'static str {
        let kind = self
            .engine
            .artifact()
            .artifact
            .graphs
            .values()
            .find_map(|graph| graph.nodes.get(node))
            .map(|node| node.kind);
        match kind {
            Some(NodeKind::Agent) => "agent",
            Some(NodeKind::Tool) => "tool",
            Some(NodeKind::Interrupt) => "interrupt",
            Some(NodeKind::Graph) => "graph",
            None => "other",
        }
    }

    fn tool_label(&self, tool: &str) -> String {
        if self.engine.artifact().artifact.tools.contains_key(tool) {
            tool.to_owned()
        } else {
            "other".to_owned()
        }
    }

    /// The run is over: an open step ends here.
    pub fn finish(mut self) {
        self.close_step();
    }
}

impl<S: EventSink> EventSink for Observed<S> {
    fn emit(&mut self, event: Event) {
        if let Some(began) = &self.began {
            began.store(true, std::sync::atomic::Ordering::Release);
        }
        if self.metrics.is_some() {
            match &event {
                Event::NodeStarted { node, .. } => {
                    self.close_step();
                    self.step = Some((Instant::now(), self.node_kind(node)));
                }
                Event::NodeFinished { .. }
                | Event::Interrupted { .. }
                | Event::Error { .. }
                | Event::RunFinished { .. } => self.close_step(),
                Event::ToolCall { call_id, .. } => {
                    self.calls.insert(call_id.clone(), Instant::now());
                }
                Event::ToolResult {
                    tool,
                    call_id,
                    is_error,
                    ..
                } => {
                    if let (Some(started), Some(metrics)) = (self.calls.remove(call_id), &self.metrics) {
                        let outcome = if *is_error { "error" } else { "ok" };
                        metrics
                            .tools
                            .get_or_create(&[("tool", self.tool_label(tool)), ("outcome", outcome.to_owned())])
                            .observe(started.elapsed().as_secs_f64());
                    }
                }
                _ => {}
            }
        }
        if self.inner.listening() {
            self.inner.emit(event);
        }
    }

    fn listening(&self) -> bool {
        self.metrics.is_some() || self.began.is_some() || self.inner.listening()
    }
}

#[cfg(test)]
mod tests {
    use super::Metrics;

    fn sample(text: &str, series: &str) -> Option<String> {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ').map(str::to_owned))
    }

    #[test]
    fn the_pending_gauge_counts_each_paused_thread_once_by_kind() {
        let metrics = Metrics::new();
        metrics.paused_now("a", Some("approval"));
        metrics.paused_now("b", Some("approval"));
        metrics.paused_now("c", Some("remote_tool"));
        metrics.paused_now("a", Some("approval"));
        let text = metrics.encode();
        assert_eq!(
            sample(&text, r#"tenx_pending_interrupts{kind="approval"}"#).as_deref(),
            Some("2")
        );
        assert_eq!(
            sample(&text, r#"tenx_pending_interrupts{kind="remote_tool"}"#).as_deref(),
            Some("1")
        );
        assert_eq!(
            sample(&text, r#"tenx_pending_interrupts{kind="interrupt"}"#).as_deref(),
            Some("0")
        );
        metrics.forget_thread("a");
        metrics.forget_thread("never-paused");
        metrics.paused_now("c", None);
        let text = metrics.encode();
        assert_eq!(
            sample(&text, r#"tenx_pending_interrupts{kind="approval"}"#).as_deref(),
            Some("1")
        );
        assert_eq!(
            sample(&text, r#"tenx_pending_interrupts{kind="remote_tool"}"#).as_deref(),
            Some("0")
        );
        assert!(!text.contains("\"a\""), "thread ids never become labels: {text}");
    }

    #[test]
    fn requests_are_counted_by_method_route_and_status_and_refusals_by_code() {
        let metrics = Metrics::new();
        metrics.request("POST", "/v1/graph/invoke", 422, 0.002, Some("INTERRUPT_004"));
        metrics.request("POST", "/v1/graph/invoke", 422, 0.003, Some("INTERRUPT_004"));
        metrics.request("GET", "/ping", 200, 0.0001, None);
        let text = metrics.encode();
        assert_eq!(
            sample(
                &text,
                r#"tenx_http_requests_total{method="POST",route="/v1/graph/invoke",status="422"}"#
            )
            .as_deref(),
            Some("2")
        );
        assert_eq!(
            sample(&text, r#"tenx_refusals_total{code="INTERRUPT_004"}"#).as_deref(),
            Some("2")
        );
        assert_eq!(
            sample(
                &text,
                r#"tenx_http_request_duration_seconds_count{method="GET",route="/ping"}"#
            )
            .as_deref(),
            Some("1")
        );
        assert!(text.contains("# TYPE tenx_runs counter"), "{text}");
        assert!(text.trim_end().ends_with("# EOF"), "{text}");
    }
}
