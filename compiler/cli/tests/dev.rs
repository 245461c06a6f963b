//! `tenxc dev` end to end: the real binary compiles the refund example, serves it, reloads it
//! when its source changes (threads kept), and keeps the last good graph serving when the source
//! stops checking.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{repo, temp_dir};

struct Dev {
    child: Child,
    address: String,
    lines: mpsc::Receiver<String>,
}

impl Dev {
    /// Stops it as Ctrl-C would (SIGTERM: runs end after their step, leases are released), so
    /// the next `tenxc dev` finds its threads free at once.
    fn stop(mut self) {
        let stopped = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .is_ok_and(|status| status.success());
        assert!(stopped, "kill -TERM");
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("tenxc dev did not stop within 20 s of SIGTERM");
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &std::path::Path) -> Dev {
    start_with(dir, "http://127.0.0.1:9")
}

/// Starts `tenxc dev` in `dir` with the payment service at `payments`.
fn start_with(dir: &std::path::Path, payments: &str) -> Dev {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tenxc"))
        .args(["dev", "main.tenx", "--port", "0"])
        .current_dir(dir)
        .env("ORDERS_URL", "http://127.0.0.1:9")
        .env("PAYMENTS_URL", payments)
        .env_remove("JWT_SECRET_KEY")
        .env_remove("MODE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (send, lines) = mpsc::channel();
    for stream in [
        Box::new(child.stderr.take().unwrap()) as Box<dyn Read + Send>,
        Box::new(child.stdout.take().unwrap()),
    ] {
        let send = send.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let mut seen = Vec::new();
    loop {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(120)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tenxc dev did not start: {seen:#?}");
        };
        if let Some(address) = line.strip_prefix("tenx serve: listening on http://") {
            return Dev {
                child,
                address: address.trim().to_owned(),
                lines,
            };
        }
        seen.push(line);
    }
}

/// One HTTP request over a plain socket; the response body.
fn http(address: &str, method: &str, path: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}

fn artifact_id(address: &str) -> String {
    let body = http(address, "GET", "/v1/graph", "");
    let start = body.find("\"artifact_id\":\"").unwrap() + "\"artifact_id\":\"".len();
    body[start..].split('"').next().unwrap().to_owned()
}

/// Waits until `line` is printed.
fn printed(dev: &Dev, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Ok(line) = dev.lines.recv_timeout(Duration::from_millis(200)) {
            if line.contains(what) {
                return line;
            }
            seen.push(line);
        }
    }
    panic!("`{what}` was never printed: {seen:#?}");
}

#[test]
fn dev_reloads_on_change_keeps_threads_and_keeps_the_last_good_graph() {
    let dir = temp_dir("dev");
    let source = std::fs::read_to_string(repo().join("examples/refund_approval/main.tenx")).unwrap();
    std::fs::write(dir.join("main.tenx"), &source).unwrap();
    let dev = start(&dir);
    let first = artifact_id(&dev.address);
    let hello =
        r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"config":{"thread_id":"kept"}}"#;
    assert!(http(&dev.address, "POST", "/v1/graph/invoke", hello).contains("\"thread_id\":\"kept\""));

    std::fs::write(
        dir.join("main.tenx"),
        source.replace("Refund part or all", "Refund all or part"),
    )
    .unwrap();
    let line = printed(&dev, "tenxc dev: reloaded, now serving ");
    let second = artifact_id(&dev.address);
    assert_ne!(first, second);
    assert!(line.ends_with(&second), "{line}");
    let state = http(&dev.address, "GET", "/v1/threads/kept/state", "");
    assert!(state.contains("\"context\""), "the thread survived the reload: {state}");

    std::fs::write(dir.join("main.tenx"), format!("{source}\ntool broken(\n")).unwrap();
    printed(&dev, "TENX0001");
    printed(&dev, "tenxc dev: the program has errors; still serving");
    assert_eq!(artifact_id(&dev.address), second, "the last good graph keeps serving");
}

/// A stand-in payment service on loopback: answers every request `Refunded` and counts them.
fn payments() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0_usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0_u8; length];
            let _ = reader.read_exact(&mut body);
            counted.fetch_add(1, Ordering::SeqCst);
            let answer = "Refunded 5900 cents on order 1042.";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, count)
}

/// The value of the first `"key":"…"` after `after` in `body`.
fn string_after(body: &str, after: &str, key: &str) -> String {
    let from = body.find(after).map_or(0, |at| at + after.len());
    let needle = format!("\"{key}\":\"");
    let start = body[from..]
        .find(&needle)
        .unwrap_or_else(|| panic!("no {key} after {after}: {body}"))
        + from
        + needle.len();
    body[start..].split('"').next().unwrap().to_owned()
}

#[test]
fn dev_asks_a_pending_approval_again_after_a_reload_and_only_the_new_answer_runs_the_tool() {
    let dir = temp_dir("dev-reask");
    let source = std::fs::read_to_string(repo().join("examples/refund_approval/main.tenx")).unwrap();
    std::fs::write(dir.join("main.tenx"), &source).unwrap();
    let (payments_url, refunds) = payments();
    let dev = start_with(&dir, &payments_url);
    let refund = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"Refund order 1042, 59.00"}]}],"config":{"thread_id":"paused"},"response_granularity":"full"}"#;
    let paused = http(&dev.address, "POST", "/v1/graph/invoke", refund);
    let old_id = string_after(&paused, "\"interrupt\":", "id");
    assert!(old_id.starts_with("int_"), "{paused}");
    assert!(
        paused.contains("Approve a refund of 5900 cents for order 1042?"),
        "{paused}"
    );

    std::fs::write(
        dir.join("main.tenx"),
        source.replace(
            "Approve a refund of {amount_cents} cents for order {order_id}?",
            "Refund {amount_cents} cents on order {order_id}? (edited)",
        ),
    )
    .unwrap();
    printed(&dev, "tenxc dev: reloaded, now serving ");
    let line = printed(&dev, "tenxc dev: thread paused: asked again as ");
    assert!(line.contains(&old_id), "{line}");
    let state = http(&dev.address, "GET", "/v1/threads/paused/state", "");
    let new_id = string_after(&state, "\"interrupt\":", "id");
    assert_ne!(new_id, old_id, "a new question: {state}");
    assert!(line.contains(&new_id), "{line}");
    assert!(
        state.contains("Refund 5900 cents on order 1042? (edited)"),
        "the new build's question: {state}"
    );
    assert!(
        state.contains(&artifact_id(&dev.address)),
        "the new policy revision: {state}"
    );

    let answer = |id: &str| {
        format!(r#"{{"resume":{{"approved":true}},"interrupt_id":"{id}","config":{{"thread_id":"paused"}}}}"#)
    };
    let refused = http(&dev.address, "POST", "/v1/graph/invoke", &answer(&old_id));
    assert!(
        refused.contains("\"INTERRUPT_001\""),
        "the old id is refused: {refused}"
    );
    assert_eq!(refunds.load(Ordering::SeqCst), 0, "nothing ran");

    let done = http(&dev.address, "POST", "/v1/graph/invoke", &answer(&new_id));
    assert!(done.contains("Refunded 5900 cents on order 1042."), "{done}");
    assert_eq!(refunds.load(Ordering::SeqCst), 1, "the refund ran once");
    let again = http(&dev.address, "POST", "/v1/graph/invoke", &answer(&new_id));
    assert!(again.contains("\"INTERRUPT_003\""), "{again}");
    assert_eq!(refunds.load(Ordering::SeqCst), 1);
}

#[test]
fn dev_asks_again_at_start_when_an_earlier_session_left_a_question_of_another_build() {
    let dir = temp_dir("dev-reask-restart");
    let source = std::fs::read_to_string(repo().join("examples/refund_approval/main.tenx")).unwrap();
    std::fs::write(dir.join("main.tenx"), &source).unwrap();
    let (payments_url, refunds) = payments();
    let first = start_with(&dir, &payments_url);
    let refund = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"Refund order 1042, 59.00"}]}],"config":{"thread_id":"left"},"response_granularity":"full"}"#;
    let paused = http(&first.address, "POST", "/v1/graph/invoke", refund);
    let old_id = string_after(&paused, "\"interrupt\":", "id");
    // Stopped as a person stops it (a killed one leaves its thread's lease until it expires;
    // then the question is asked again by the thread's next run, tests/tests/engine/reask.rs).
    first.stop();

    // Edited while no `tenxc dev` ran: the next one asks the question again as it starts.
    std::fs::write(
        dir.join("main.tenx"),
        source.replace("expires   = 24h", "expires   = 12h"),
    )
    .unwrap();
    let second = start_with(&dir, &payments_url);
    let state = http(&second.address, "GET", "/v1/threads/left/state", "");
    let new_id = string_after(&state, "\"interrupt\":", "id");
    assert_ne!(new_id, old_id, "asked again at start: {state}");
    let answer =
        format!(r#"{{"resume":{{"approved":true}},"interrupt_id":"{new_id}","config":{{"thread_id":"left"}}}}"#);
    let done = http(&second.address, "POST", "/v1/graph/invoke", &answer);
    assert!(done.contains("Refunded 5900 cents on order 1042."), "{done}");
    assert_eq!(refunds.load(Ordering::SeqCst), 1, "the refund ran once");
}
