//! Crash injection (issue 15, item 6): many approval flows (start, pause at the approval,
//! approve, the refund, the answer) on two replicas sharing one store, with `kill -9` of a
//! replica at random points, and every flow driven to an end afterwards.
//!
//! Flows run in batches of [`LANES`] at once; each batch has one victim (the replicas take
//! turns) and one kill. Each flow draws its kill point from a seeded RNG: `never` (it finishes
//! before the kill: a control), `before_pause` (its start request is sent a random 0 to 0.6
//! times the batch's quickest start's latency before the kill, so the kill lands before the thread
//! exists, mid-run, or after the pause), `after_pause` (paused and answered nothing),
//! `during_resume` (its approval is sent as randomly before the kill) or `during_tool`
//! (approved, and the payments stand-in holds its
//! refund request, effect applied, so the kill lands provably mid-call). After the kill, at
//! random, either the victim starts again first (its start-up recovery runs before it listens)
//! and each flow is driven to an end through either replica, or the survivor alone drives them
//! (its recovery sweep must take over the dead replica's threads) and the victim starts after.
//! Driving: a thread that does not exist is started again (only a start whose pause was never
//! acknowledged may be missing), a paused one is approved, a running one is waited for.
//!
//! Then: no acknowledged pause was lost (its thread exists, and while paused it waits at the
//! question the client was given); no order was refunded twice (the stand-in refunds once per
//! new idempotency key, so a key that changed would refund again); the refund request was sent
//! again only for a flow whose call the kill cut (`during_tool` exactly twice: the same key);
//! every thread ended in a state the engine defines (`completed`, or `error` with its code
//! surfaced; `interrupted_before` cannot remain, since the driver answers every question).
//!
//! The seed is printed; `TENX_CRASH_SEED` repeats a run, `TENX_CRASH_FLOWS` changes the number
//! of flows (200 by default).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::Value;

use super::api;
use super::cluster::{Backend, Cluster};
use super::replica::Replica;

/// Flows per batch (one kill per batch).
const LANES: usize = 10;
/// A request in flight is sent up to this many times the quickest staged start's latency (in
/// the same batch, on the same victim) before the kill, so the kill lands before, during and after
/// its commits on a fast store and a slow one alike.
const MAX_LEAD: f64 = 0.6;
/// How long one flow may take to reach an end after the restart.
const DRIVE_PATIENCE: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Point {
    Never,
    BeforePause,
    AfterPause,
    DuringResume,
    DuringTool,
}

const POINTS: [Point; 5] = [
    Point::Never,
    Point::BeforePause,
    Point::AfterPause,
    Point::DuringResume,
    Point::DuringTool,
];

impl Point {
    fn name(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::BeforePause => "before_pause",
            Self::AfterPause => "after_pause",
            Self::DuringResume => "during_resume",
            Self::DuringTool => "during_tool",
        }
    }
}

/// How a flow ended.
#[derive(Debug, Clone)]
enum End {
    /// `completed`: the thread's state.
    Completed(Value),
    /// `error`, with the code and message the thread shows.
    Error(String),
}

#[derive(Debug)]
struct Flow {
    thread: String,
    order: u32,
    key: String,
    point: Point,
    /// How long before the kill its request in flight is sent, in staged-start latencies
    /// (0 to [`MAX_LEAD`]).
    lead: f64,
    /// The `interrupt_id` a client was given for this thread's pause.
    acked: Option<String>,
    /// Whether its request in flight was answered before the kill (`None`: none in flight).
    answered_in_flight: Option<bool>,
    /// Its state as first read after the kill: `absent`, `running`, `interrupted_before`, …
    first_seen: Option<String>,
    /// How many times its start was sent again (the first one never reached the store).
    restarted_starts: usize,
    end: Option<End>,
}

/// The whole test: the flows, the kills, the checks, the counts.
pub async fn crash_injection(backend: Backend) {
    let seed = match std::env::var("TENX_CRASH_SEED") {
        Ok(text) => text.trim().parse::<u64>().unwrap(),
        Err(_) => fastrand::u64(..),
    };
    let total = match std::env::var("TENX_CRASH_FLOWS") {
        Ok(text) => text.trim().parse::<usize>().unwrap(),
        Err(_) => 200,
    };
    let name = backend.name();
    println!("crash injection on {name}: seed {seed} (TENX_CRASH_SEED={seed} repeats the draws), {total} flows");
    let mut rng = fastrand::Rng::with_seed(seed);
    let cluster = Cluster::new(backend);
    let mut replicas = [Some(cluster.replica().await), Some(cluster.replica().await)];
    let began = Instant::now();
    let mut flows = Vec::new();
    let (mut kills, mut restarted_first) = (0, 0);
    for (batch, indexes) in (0..total).collect::<Vec<_>>().chunks(LANES).enumerate() {
        let batch_flows: Vec<Flow> = indexes.iter().map(|&index| draw(index, &mut rng)).collect();
        let victim = batch % 2;
        let (done, restart_first) = run_batch(&cluster, &mut replicas, victim, batch_flows, &mut rng).await;
        flows.extend(done);
        kills += 1;
        restarted_first += usize::from(restart_first);
    }
    let took = began.elapsed();
    for replica in replicas.iter_mut().flatten() {
        replica.assert_alive();
    }
    check_and_report(&cluster, &flows, (kills, restarted_first), took, name);
}

fn draw(index: usize, rng: &mut fastrand::Rng) -> Flow {
    let order = 10_000 + u32::try_from(index).unwrap();
    Flow {
        thread: format!("flow-{index}"),
        order,
        key: api::order_key(order),
        point: POINTS[rng.usize(..POINTS.len())],
        lead: rng.f64() * MAX_LEAD,
        acked: None,
        answered_in_flight: None,
        first_seen: None,
        restarted_starts: 0,
        end: None,
    }
}

fn base(replicas: &[Option<Replica>; 2], index: usize) -> String {
    replicas[index].as_ref().unwrap().base.clone()
}

/// One batch: stage each flow, send the requests in flight, kill the victim, restart it, drive
/// every flow to an end.
async fn run_batch(
    cluster: &Cluster,
    replicas: &mut [Option<Replica>; 2],
    victim: usize,
    mut flows: Vec<Flow>,
    rng: &mut fastrand::Rng,
) -> (Vec<Flow>, bool) {
    let target = base(replicas, victim);
    let payments = &cluster.payments;

    // 1. Each flow goes as far as its kill point lets it, on the victim.
    let staged = join_all(flows.iter().map(|flow| stage(&target, flow))).await;
    let mut latencies = Vec::new();
    for (flow, (acked, latency)) in flows.iter_mut().zip(staged) {
        flow.acked = acked;
        latencies.extend(latency);
    }
    // The quickest staged start (ten at once are slower than one alone; a batch may stage
    // none: then 20 ms).
    let latency = latencies.into_iter().min().unwrap_or(Duration::from_millis(20));
    let mut held = Vec::new();
    for flow in flows.iter().filter(|flow| flow.point == Point::DuringTool) {
        payments.hold(&flow.key);
        let (base, thread, interrupt) = (target.clone(), flow.thread.clone(), flow.acked.clone().unwrap());
        held.push(tokio::spawn(
            async move { api::approve(&base, &thread, &interrupt).await },
        ));
    }
    for flow in flows.iter().filter(|flow| flow.point == Point::DuringTool) {
        let arrived = super::replica::within(
            Duration::from_secs(60),
            || async move { payments.requests(&flow.key) == 1 },
        )
        .await;
        assert!(
            arrived,
            "{}: the refund request never reached the stand-in",
            flow.thread
        );
    }

    // 2. The requests in flight, each sent its lead before the kill; then `kill -9`.
    let kill_at = tokio::time::Instant::now() + latency.mul_f64(MAX_LEAD) + Duration::from_millis(5);
    let in_flight: Vec<_> = flows
        .iter()
        .enumerate()
        .filter(|(_, flow)| matches!(flow.point, Point::BeforePause | Point::DuringResume))
        .map(|(index, flow)| {
            let (base, thread, order, point) = (target.clone(), flow.thread.clone(), flow.order, flow.point);
            let interrupt = flow.acked.clone();
            let send_at = kill_at.checked_sub(latency.mul_f64(flow.lead)).unwrap_or(kill_at);
            let sent = tokio::spawn(async move {
                tokio::time::sleep_until(send_at).await;
                match point {
                    Point::BeforePause => api::start(&base, &thread, order).await,
                    _ => api::approve(&base, &thread, &interrupt.unwrap()).await,
                }
            });
            (index, sent)
        })
        .collect();
    tokio::time::sleep_until(kill_at).await;
    replicas[victim].take().unwrap().kill();

    for (index, sent) in in_flight {
        let answer = sent.await.unwrap();
        let flow = &mut flows[index];
        flow.answered_in_flight = Some(answer.is_ok());
        if let Ok((200, body)) = &answer
            && let Some(id) = api::interrupt_id(body)
        {
            flow.acked = Some(id);
        }
    }
    for (flow, call) in flows
        .iter_mut()
        .filter(|flow| flow.point == Point::DuringTool)
        .zip(held)
    {
        let answer = call.await.unwrap();
        assert!(
            answer.is_err(),
            "{}: the killed replica answered a call the stand-in still held: {answer:?}",
            flow.thread
        );
        flow.answered_in_flight = Some(false);
        payments.release(&flow.key);
    }

    // 3. Every flow is driven to an end: either the victim starts again first (its start-up
    //    recovery continues what it left) and both replicas serve, or the survivor alone serves
    //    (its recovery sweep takes the dead replica's threads once their leases expire) and the
    //    victim starts again afterwards.
    let seeds: Vec<u64> = flows.iter().map(|_| rng.u64(..)).collect();
    let restart_first = rng.bool();
    if restart_first {
        replicas[victim] = Some(cluster.replica().await);
    }
    let bases = if restart_first {
        [base(replicas, 0), base(replicas, 1)]
    } else {
        let survivor = base(replicas, 1 - victim);
        [survivor.clone(), survivor]
    };
    join_all(
        flows
            .iter_mut()
            .zip(seeds)
            .map(|(flow, seed)| drive(flow, &bases, seed)),
    )
    .await;
    if !restart_first {
        replicas[victim] = Some(cluster.replica().await);
    }
    (flows, restart_first)
}

/// Takes a flow as far as its kill point allows before the kill: the interrupt id it was
/// given, if it paused, and how long its start took.
async fn stage(base: &str, flow: &Flow) -> (Option<String>, Option<Duration>) {
    if flow.point == Point::BeforePause {
        return (None, None);
    }
    let began = Instant::now();
    let (status, body) = api::start(base, &flow.thread, flow.order).await.unwrap();
    let took = began.elapsed();
    assert_eq!(status, 200, "{}: {body}", flow.thread);
    assert_eq!(api::status(&body), "interrupted_before", "{}: {body}", flow.thread);
    let interrupt = api::interrupt_id(&body).unwrap();
    if flow.point == Point::Never {
        let (status, body) = api::approve(base, &flow.thread, &interrupt).await.unwrap();
        assert_eq!(status, 200, "{}: {body}", flow.thread);
        assert_eq!(api::status(&body), "completed", "{}: {body}", flow.thread);
    }
    (Some(interrupt), Some(took))
}

/// Drives a flow to an end through either replica, chosen at random for each request.
async fn drive(flow: &mut Flow, bases: &[String; 2], seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let deadline = Instant::now() + DRIVE_PATIENCE;
    let mut last = Value::Null;
    loop {
        assert!(
            Instant::now() < deadline,
            "{} ({}) never reached an end; last read: {last}",
            flow.thread,
            flow.point.name()
        );
        let base = &bases[rng.usize(..2)];
        let (status, body) = api::state(base, &flow.thread).await.unwrap();
        if status == 404 {
            assert!(
                flow.acked.is_none(),
                "LOST: {} was paused at {:?} and its thread is gone: {body}",
                flow.thread,
                flow.acked
            );
            flow.first_seen.get_or_insert_with(|| "absent".to_owned());
            flow.restarted_starts += 1;
            let (status, body) = api::start(base, &flow.thread, flow.order).await.unwrap();
            // 422 `INTERRUPT_004`: the thread is paused now. The victim's last commit (its
            // start's, sent to PostgreSQL just before the kill) can land after the read that
            // found no thread, on a loaded machine; the next read answers the question.
            let paused_meanwhile =
                status == 422 && body.pointer("/error/code").and_then(Value::as_str) == Some("INTERRUPT_004");
            assert!(
                status == 200 || status == 409 || paused_meanwhile,
                "{}: a start again: {status} {body}",
                flow.thread
            );
            continue;
        }
        assert_eq!(status, 200, "{}: {body}", flow.thread);
        let now = api::status(&body).to_owned();
        flow.first_seen.get_or_insert_with(|| now.clone());
        match now.as_str() {
            "interrupted_before" => {
                let open = api::interrupt_id(&body).unwrap();
                if let Some(acked) = &flow.acked {
                    assert_eq!(
                        &open, acked,
                        "{}: the pause a client was given is not the open one",
                        flow.thread
                    );
                }
                flow.acked = Some(open.clone());
                let (status, answer) = api::approve(base, &flow.thread, &open).await.unwrap();
                // 409: another request (or a recovery) got there first.
                assert!(
                    status == 200 || status == 409,
                    "{}: approving: {status} {answer}",
                    flow.thread
                );
            }
            // Its run goes on somewhere (a request, or a recovery once the dead lease expired).
            "running" => tokio::time::sleep(Duration::from_millis(50)).await,
            "completed" => {
                flow.end = Some(End::Completed(body));
                return;
            }
            "error" => {
                let internal = &api::meta(&body)["internal_data"];
                flow.end = Some(End::Error(format!("{} {}", internal["error_code"], internal["error"])));
                return;
            }
            other => panic!(
                "{} ({}): a state no flow should end in: {other}: {body}",
                flow.thread,
                flow.point.name()
            ),
        }
        last = body;
    }
}

/// The checks over every flow, and the printed counts.
fn check_and_report(cluster: &Cluster, flows: &[Flow], kills: (usize, usize), took: Duration, name: &str) {
    let (kills, restarted_first) = kills;
    let payments = &cluster.payments;
    let mut completed = 0;
    let mut unknown = 0;
    let mut errors = Vec::new();
    let mut resent = 0;
    for flow in flows {
        let requests = payments.requests(&flow.key);
        let refunds = payments.refunds(&flow.order.to_string());
        assert!(
            refunds <= 1,
            "{}: order {} refunded {refunds} times",
            flow.thread,
            flow.order
        );
        match flow.point {
            // The kill cut this call, held by the stand-in: recovery sent the same key again.
            Point::DuringTool => assert_eq!(requests, 2, "{}: the refund requests", flow.thread),
            // The kill may have cut the call or not.
            Point::DuringResume => assert!(requests <= 2, "{}: {requests} refund requests", flow.thread),
            // No kill could cut its call: sent once.
            _ => assert!(requests <= 1, "{}: {requests} refund requests", flow.thread),
        }
        resent += requests.saturating_sub(1);
        match flow.end.as_ref().unwrap() {
            End::Completed(state) => {
                let results = api::tool_results(state);
                assert_eq!(results.len(), 1, "{}: one tool result: {results:?}", flow.thread);
                if results[0].contains("(outcome_unknown)") {
                    unknown += 1;
                    continue;
                }
                let expected = format!("Refunded 5900 cents on order {} (refund 1).", flow.order);
                assert!(results[0].contains(&expected), "{}: {results:?}", flow.thread);
                assert_eq!(api::last_text(state), expected, "{}", flow.thread);
                assert_eq!(refunds, 1, "{}", flow.thread);
                completed += 1;
            }
            End::Error(error) => {
                assert!(!error.trim().is_empty(), "{}: an error without a code", flow.thread);
                errors.push(format!("{}: {error}", flow.thread));
            }
        }
    }
    assert_eq!(payments.keyless(), 0, "refund requests without an idempotency key");
    let twice = payments.all_refunds().values().filter(|times| **times > 1).count();

    println!(
        "crash injection on {name}: {} flows in batches of {LANES}, {kills} kill -9s, each followed by a restart, in {:.1} s",
        flows.len(),
        took.as_secs_f64()
    );
    println!(
        "  after {restarted_first} kills the victim started again before the flows were driven on; after {} the survivor alone drove them, then the victim started",
        kills - restarted_first
    );
    println!("  kill point      flows  in flight answered/cut  first state read after the kill");
    for point in POINTS {
        let of: Vec<&Flow> = flows.iter().filter(|flow| flow.point == point).collect();
        let answered = of.iter().filter(|flow| flow.answered_in_flight == Some(true)).count();
        let cut = of.iter().filter(|flow| flow.answered_in_flight == Some(false)).count();
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for flow in &of {
            *seen.entry(flow.first_seen.as_deref().unwrap_or("?")).or_default() += 1;
        }
        println!(
            "  {:<15} {:>5}  {:>8}/{:<4}         {seen:?}",
            point.name(),
            of.len(),
            answered,
            cut
        );
    }
    let starts_again: usize = flows.iter().map(|flow| flow.restarted_starts).sum();
    println!(
        "  ends: completed {completed}, completed with the refund's outcome unknown {unknown}, error {}, paused 0, lost 0",
        errors.len()
    );
    println!(
        "  acknowledged pauses lost 0; orders refunded twice {twice}; refund requests sent again with the same key {resent}; starts that never reached the store, sent again {starts_again}"
    );
    for error in &errors {
        println!("  error: {error}");
    }
    assert_eq!(twice, 0);
    assert_eq!(completed + unknown + errors.len(), flows.len());
}
