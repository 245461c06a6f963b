//! The fan-out benchmark's pieces, so the bench cannot rot unnoticed: the fetch stand-in answers
//! after its delay and serves concurrent requests concurrently, and the three programs seal with
//! the compiler library and run once through the host's real `http` tool runner against it (the
//! parallel one with its eight fetches waiting at the same time).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use std::sync::Arc;

use serde_json::json;
use tenx_bench::fanout::{self, Program};
use tenx_bench::fetch::{FetchStandIn, Fetcher};
use tenx_bench::figures::Figures;

#[expect(clippy::unwrap_used, reason = "test helper: the manifest is inside the workspace")]
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stand_in_answers_after_its_delay_and_waits_for_concurrent_requests_together() {
    let delay = Duration::from_millis(200);
    let standin = FetchStandIn::start(delay).unwrap();
    let fetcher = Arc::new(Fetcher::new(&standin.url()).unwrap());
    let started = Instant::now();
    let answer = fetcher.fetch("rust").await.unwrap();
    assert!(started.elapsed() >= delay, "{:?}", started.elapsed());
    assert_eq!(answer, json!({"topic": "rust", "summary": "what is known about rust"}));
    assert_eq!(standin.answered(), 1);
    assert_eq!(standin.most_in_flight(), 1);

    standin.reset_most_in_flight();
    let started = Instant::now();
    let calls: Vec<_> = (0..8)
        .map(|index| {
            let fetcher = Arc::clone(&fetcher);
            tokio::spawn(async move { fetcher.fetch(&format!("t{index}")).await })
        })
        .collect();
    for (index, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap().unwrap()["topic"], json!(format!("t{index}")));
    }
    // Eight waits one after another would take 1.6 s.
    assert!(started.elapsed() < delay * 4, "{:?}", started.elapsed());
    assert_eq!(standin.answered(), 9);
    assert_eq!(standin.most_in_flight(), 8);

    // The floor of the parallel program: eight at once on this one task, answers in order.
    standin.reset_most_in_flight();
    let topics = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let started = Instant::now();
    let answers = fetcher.fetch_all(&topics).await.unwrap();
    assert!(started.elapsed() < delay * 4, "{:?}", started.elapsed());
    let got: Vec<&str> = answers.iter().filter_map(|answer| answer["topic"].as_str()).collect();
    assert_eq!(got, topics);
    assert_eq!(standin.answered(), 17);
    assert_eq!(standin.most_in_flight(), 8);
}

#[tokio::test]
async fn the_stand_in_reads_its_own_threads_cpu_time() {
    let standin = FetchStandIn::start(Duration::from_millis(1)).unwrap();
    let fetcher = Fetcher::new(&standin.url()).unwrap();
    // Linux, which the bench runs on, has `/proc/thread-self`.
    let before = standin.cpu_us().unwrap();
    for index in 0..20 {
        fetcher.fetch(&format!("t{index}")).await.unwrap();
    }
    let after = standin.cpu_us().unwrap();
    assert!(after > before, "{before} → {after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_one_branch_and_sequential_programs_seal_and_run_once_against_the_stand_in() {
    let delay = Duration::from_millis(20);
    let standin = FetchStandIn::start(delay).unwrap();
    for (program, fetches) in [(Program::One, 1), (Program::Sequential, 8)] {
        let artifact = fanout::seal(&root(), program).unwrap();
        let engine = fanout::engine(artifact, &standin.url()).unwrap();
        let before = standin.answered();
        let started = Instant::now();
        fanout::run_once(&engine, program, &format!("smoke-{program:?}"))
            .await
            .unwrap();
        assert!(
            started.elapsed() >= delay * fetches,
            "{program:?}: {:?}",
            started.elapsed()
        );
        assert_eq!(standin.answered() - before, u64::from(fetches), "{program:?}");
        assert_eq!(standin.most_in_flight(), 1, "{program:?}");
    }
}

#[tokio::test]
async fn a_run_whose_tool_cannot_be_reached_is_an_error_not_a_figure() {
    // Nothing listens on the stand-in's port once it is dropped; bind one and let it go.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", free.local_addr().unwrap());
    drop(free);
    let artifact = fanout::seal(&root(), Program::One).unwrap();
    let engine = fanout::engine(artifact, &url).unwrap();
    let error = fanout::run_once(&engine, Program::One, "unreachable")
        .await
        .unwrap_err();
    assert!(error.starts_with("a fetch on thread unreachable failed"), "{error}");
}

#[test]
fn figures_are_the_median_and_the_90th_percentile() {
    let figures = Figures::of((1..=10).rev().map(f64::from).collect());
    assert_eq!(figures.samples, 10);
    assert!((figures.median_us - 6.0).abs() < f64::EPSILON, "{figures:?}");
    assert!((figures.p90_us - 10.0).abs() < f64::EPSILON, "{figures:?}");
    let parsed = Figures::from_json(Some(&json!({"median_us": 2.5, "p90_us": 4.0})), 3).unwrap();
    assert!((parsed.median_us - 2.5).abs() < f64::EPSILON && parsed.samples == 3);
    assert!(Figures::from_json(Some(&json!({"median_us": 2.5})), 3).is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_parallel_program_seals_and_its_eight_fetches_wait_at_the_same_time() {
    let delay = Duration::from_millis(200);
    let standin = FetchStandIn::start(delay).unwrap();
    let artifact = fanout::seal(&root(), Program::Parallel).unwrap();
    let engine = fanout::engine(artifact, &standin.url()).unwrap();
    let started = Instant::now();
    fanout::run_once(&engine, Program::Parallel, "smoke-parallel")
        .await
        .unwrap();
    let elapsed = started.elapsed();
    // Eight waits one after another would take 1.6 s.
    assert!(elapsed >= delay && elapsed < delay * 4, "{elapsed:?}");
    assert_eq!(standin.answered(), 8);
    assert_eq!(standin.most_in_flight(), 8);
}
