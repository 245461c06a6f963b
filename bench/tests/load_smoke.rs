//! The serve benchmark's generator against the bare handler for 50 requests over loopback, so
//! the bench code cannot rot unnoticed: every request is answered 200 and counted once.

use std::time::Duration;

use bytes::Bytes;
use tenx_bench::{bare, load};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generator_drives_the_bare_handler_for_50_requests() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(bare::serve(listener));
    let workload = load::Workload::Post {
        path: "/v1/graph/invoke".to_owned(),
        body: Bytes::from_static(
            br#"{"messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]}"#,
        ),
    };
    let figures = load::run(addr, &workload, 4, load::Until::Count(50)).await.unwrap();
    assert_eq!(figures.samples, 50);
    assert_eq!(figures.done, 50);
    assert!(figures.p50_us > 0.0 && figures.p50_us <= figures.p99_us, "{figures:?}");

    let timed = load::Until::Elapsed {
        warm_up: Duration::from_millis(20),
        measure: Duration::from_millis(100),
    };
    let figures = load::run(addr, &workload, 2, timed).await.unwrap();
    assert!(
        figures.samples > 0 && figures.done >= figures.samples as u64,
        "{figures:?}"
    );
}

#[tokio::test]
async fn a_refused_request_fails_the_measurement_with_its_status() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(bare::serve(listener));
    let workload = load::Workload::Post {
        path: "/v1/graph/invoke".to_owned(),
        body: Bytes::from_static(b"not json"),
    };
    let error = load::run(addr, &workload, 1, load::Until::Count(3)).await.unwrap_err();
    assert!(
        error.contains("400") || error.contains("415") || error.contains("422"),
        "{error}"
    );
}

#[test]
fn the_interrupt_id_is_read_from_a_full_answer() {
    let body = br#"{"data": {"state": {"execution_meta": {"interrupt_data": {"interrupt": {"id": "int_1"}}}}}}"#;
    assert_eq!(
        load::interrupt_id(body, "data.state.execution_meta").as_deref(),
        Some("int_1")
    );
    assert_eq!(load::interrupt_id(b"{}", "data.state.execution_meta"), None);
}
