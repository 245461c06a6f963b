//! The `tenx` binary's code on PostgreSQL, in child processes (this test binary re-run as
//! `binary::serve_child`, which calls `tenx::main_with` as `src/main.rs` does): `tenx migrate`
//! prepares a schema of the test's own, `tenx serve --store postgres://…` pauses a refund at its
//! approval and is killed with SIGKILL, a second process started through `DATABASE_URL` finds
//! the pause and resumes it once; the settings line never shows the password. Needs
//! `TENX_TEST_DATABASE_URL`; without it the test says that it skips.

use crate::pg_schema::Schema;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::harness::{read, user};

/// A `tenx serve` child, killed (SIGKILL) when dropped.
struct Serving {
    child: Child,
    base: String,
    printed: Vec<String>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(args: &[&str], vars: &[(&str, &str)], dir: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--ignored",
            "--exact",
            "binary::serve_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("TENX_SERVE_TEST_ARGS", serde_json::to_string(args).unwrap())
        .env_remove("JWT_SECRET_KEY")
        .env_remove("JWT_PUBLIC_KEY_FILE")
        .env_remove("JWT_JWKS_FILE")
        .env_remove("MODE")
        .env_remove("DATABASE_URL")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, value) in vars {
        command.env(name, value);
    }
    command
}

/// Starts `tenx serve` and waits for its `listening on` line.
#[expect(
    clippy::zombie_processes,
    reason = "the child is returned in `Serving`, whose Drop kills and waits for it"
)]
fn serve(args: &[&str], vars: &[(&str, &str)], dir: &Path) -> Serving {
    let mut child = command(args, vars, dir).spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let mut printed = Vec::new();
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("no start: {printed:#?}"));
        if let Some(address) = line.strip_prefix("tenx serve: listening on ") {
            return Serving {
                child,
                base: address.trim().to_owned(),
                printed,
            };
        }
        printed.push(line);
    }
}

/// `tenx migrate ARGS` in this process's code (as the binary runs it): its exit code.
fn migrate(args: &[&str]) -> std::process::ExitCode {
    tenx::main_with(["tenx", "migrate"].iter().chain(args).map(|arg| (*arg).to_owned()))
}

async fn post(base: &str, path: &str, body: Value) -> (u16, Value) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    read(
        reqwest::Client::new()
            .post(format!("{base}{path}"))
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

fn refund_artifact(dir: &Path) -> std::path::PathBuf {
    let root = tenx_tests::repo_root();
    let text = std::fs::read_to_string(root.join("examples/refund_approval/main.tenx")).unwrap();
    let bytes = tenx_tests::sealed_bytes("examples/refund_approval/main.tenx", &text);
    let path = dir.join("refund.tenxg");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_on_postgres_keeps_a_pause_across_a_kill_and_resumes_it_once() {
    let Some(base) = std::env::var("TENX_TEST_DATABASE_URL")
        .ok()
        .filter(|url| !url.is_empty())
    else {
        eprintln!("skipping: TENX_TEST_DATABASE_URL is not set");
        return;
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let schema = Schema {
        base: base.clone(),
        name: format!("tenx_serve_test_{}_{nanos}", std::process::id()),
    };
    let separator = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{separator}schema={}", schema.name);
    // A password in the URL (the test database trusts local connections, so any works).
    let with_password = url.replacen("postgres://postgres@", "postgres://postgres:s3cret-pw@", 1);

    // The operator's command first: it creates and migrates the schema, and exits 0.
    let migrated = {
        let url = url.clone();
        std::thread::spawn(move || migrate(&["--database-url", &url]))
            .join()
            .unwrap()
    };
    assert_eq!(migrated, std::process::ExitCode::SUCCESS);

    let dir = tempfile::tempdir().unwrap();
    let artifact = refund_artifact(dir.path());
    let artifact = artifact.to_str().unwrap();
    let urls = [
        ("ORDERS_URL", "http://127.0.0.1:9"),
        ("PAYMENTS_URL", "http://127.0.0.1:9"),
    ];
    let first = serve(&[artifact, "--port", "0", "--store", &with_password], &urls, dir.path());
    let printed = first.printed.join("\n");
    assert!(
        printed.contains("store             postgres postgres://postgres:***@"),
        "{printed}"
    );
    assert!(!printed.contains("s3cret-pw"), "{printed}");
    let (status, body) = post(
        &first.base,
        "/v1/graph/invoke",
        json!({"messages": [user("Refund order 1042, 59.00")], "config": {"thread_id": "kept"}, "response_granularity": "full"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["state"]["execution_meta"]["interrupt_data"]["interrupt"]["id"].clone();
    assert!(id.is_string(), "paused at the approval: {body}");
    drop(first); // SIGKILL
    assert!(
        !dir.path().join(".tenx/threads.sqlite").exists(),
        "no SQLite file was made"
    );

    // The second process reads the store from DATABASE_URL.
    let second = serve(
        &[artifact, "--port", "0"],
        &[urls[0], urls[1], ("DATABASE_URL", &url)],
        dir.path(),
    );
    let ready = reqwest::get(format!("{}/health/ready", second.base)).await.unwrap();
    assert_eq!(ready.status(), 200);
    // PostgreSQL's inbox lists the kept question, and the approvals API answers it.
    let (status, inbox) = super::binary::get(&second.base, "/v1/approvals").await;
    assert_eq!(status, 200, "{inbox}");
    assert_eq!(inbox["data"]["approvals"][0]["interrupt_id"], id, "{inbox}");
    let path = format!("/v1/approvals/{}/answer", id.as_str().unwrap());
    let (status, body) = post(&second.base, &path, json!({"resume": {"approved": false}})).await;
    assert_eq!(status, 200, "the pause survived the kill and is answered: {body}");
    let (_, records) = super::binary::get(&second.base, "/v1/approval-records").await;
    assert_eq!(records["data"]["records"][0]["decision"], "reject", "{records}");
    let (status, body) = post(
        &second.base,
        "/v1/graph/invoke",
        json!({"resume": {"approved": true}, "interrupt_id": id, "config": {"thread_id": "kept"}}),
    )
    .await;
    assert_eq!(status, 409, "answered once: {body}");
    assert_eq!(body["error"]["code"], "INTERRUPT_003");
    drop(second);
    drop(schema);
}

#[test]
fn migrate_refuses_a_url_that_is_not_postgres_and_an_unreachable_database() {
    assert_eq!(
        migrate(&["--database-url", "sqlite://x"]),
        std::process::ExitCode::from(2)
    );
    // Nothing listens on port 1: a clear failure, exit 2.
    assert_eq!(
        migrate(&["--store", "postgres://u:pw@127.0.0.1:1/d?connect_timeout=2"]),
        std::process::ExitCode::from(2)
    );
}

#[test]
fn serve_refuses_a_postgres_url_with_an_unreadable_root_certificate_and_never_prints_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = refund_artifact(dir.path());
    let args = [
        artifact.to_str().unwrap(),
        "--port",
        "0",
        "--store",
        "postgres://ann:hunter2@127.0.0.1:1/tenx?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    ];
    let urls = [
        ("ORDERS_URL", "http://127.0.0.1:9"),
        ("PAYMENTS_URL", "http://127.0.0.1:9"),
    ];
    let mut child = command(&args, &urls, dir.path()).spawn().unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut text).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(2), "{text}");
    // The report wraps long lines: compare without the layout.
    let flat: String = text.chars().filter(|c| !c.is_whitespace() && *c != '│').collect();
    assert!(
        flat.contains("`sslrootcert=/nonexistent/ca.pem`cannotberead:Nosuchfileordirectory"),
        "{text}"
    );
    assert!(text.contains("postgres://ann:***@127.0.0.1:1/tenx"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}
