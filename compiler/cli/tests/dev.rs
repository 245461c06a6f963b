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
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{repo, temp_dir};

struct Dev {
    child: Child,
    address: String,
    lines: mpsc::Receiver<String>,
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &std::path::Path) -> Dev {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tenxc"))
        .args(["dev", "main.tenx", "--port", "0"])
        .current_dir(dir)
        .env("ORDERS_URL", "http://127.0.0.1:9")
        .env("PAYMENTS_URL", "http://127.0.0.1:9")
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
