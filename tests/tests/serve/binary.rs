//! The `tenx` binary's code in a child process (this test binary re-run as [`serve_child`],
//! which calls `tenx::main_with` exactly as `src/main.rs` does): it starts on its embedded
//! defaults, a pause survives a restart on SQLite, and every start-up refusal exits 2 with a
//! message that says why.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::harness::{read, user};

const ARGS: &str = "TENX_SERVE_TEST_ARGS";

#[test]
#[ignore = "the serve tests' child process, started by the tests below"]
fn serve_child() {
    let args: Vec<String> = serde_json::from_str(&std::env::var(ARGS).unwrap()).unwrap();
    let code = tenx::main_with(["tenx".to_owned(), "serve".to_owned()].into_iter().chain(args));
    let code = if code == std::process::ExitCode::SUCCESS { 0 } else { 2 };
    std::process::exit(code);
}

pub(super) struct Serving {
    child: Child,
    pub(super) base: String,
    stderr: mpsc::Receiver<String>,
}

impl Serving {
    fn kill(self) {
        drop(self);
    }

    /// Waits for the process to exit by itself: its exit status and the lines it printed.
    fn wait_for_exit(&mut self, limit: Duration) -> (Option<i32>, Vec<String>) {
        let deadline = std::time::Instant::now() + limit;
        let mut printed = Vec::new();
        loop {
            while let Ok(line) = self.stderr.try_recv() {
                printed.push(line);
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(50));
                while let Ok(line) = self.stderr.try_recv() {
                    printed.push(line);
                }
                return (status.code(), printed);
            }
            assert!(std::time::Instant::now() < deadline, "still running: {printed:#?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
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
        .env(ARGS, serde_json::to_string(args).unwrap())
        .env_remove("JWT_SECRET_KEY")
        .env_remove("JWT_PUBLIC_KEY_FILE")
        .env_remove("JWT_JWKS_FILE")
        .env_remove("JWT_ALGORITHM")
        .env_remove("MODE")
        .env_remove("ORIGINS")
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
pub(super) fn serve(args: &[&str], vars: &[(&str, &str)], dir: &Path) -> Serving {
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
    let mut seen = Vec::new();
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("no start: {seen:#?}"));
        if let Some(address) = line.strip_prefix("tenx serve: listening on ") {
            return Serving {
                child,
                base: address.trim().to_owned(),
                stderr: lines,
            };
        }
        seen.push(line);
    }
}

/// Runs `tenx serve` expecting it to refuse to start: its exit status and what it printed.
fn refuse(args: &[&str], vars: &[(&str, &str)], dir: &Path) -> (Option<i32>, String) {
    let mut child = command(args, vars, dir).spawn().unwrap();
    let mut text = String::new();
    child.stderr.take().unwrap().read_to_string(&mut text).unwrap();
    (child.wait().unwrap().code(), text)
}

fn refund_artifact(dir: &Path) -> PathBuf {
    let root = tenx_tests::repo_root();
    let text = std::fs::read_to_string(root.join("examples/refund_approval/main.tenx")).unwrap();
    let bytes = tenx_tests::sealed_bytes("examples/refund_approval/main.tenx", &text);
    let path = dir.join("refund.tenxg");
    std::fs::write(&path, bytes).unwrap();
    path
}

const URLS: &[(&str, &str)] = &[
    ("ORDERS_URL", "http://127.0.0.1:9"),
    ("PAYMENTS_URL", "http://127.0.0.1:9"),
];

pub(super) async fn post(base: &str, path: &str, body: Value) -> (u16, Value) {
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

#[tokio::test]
async fn serve_starts_on_its_defaults_and_a_pause_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = refund_artifact(dir.path());
    let artifact = artifact.to_str().unwrap();
    let first = serve(&[artifact, "--port", "0"], URLS, dir.path());
    assert!(first.base.starts_with("http://127.0.0.1:"), "{}", first.base);
    let (status, body) = post(
        &first.base,
        "/v1/graph/invoke",
        json!({"messages": [user("Refund order 1042, 59.00")], "config": {"thread_id": "kept"}, "response_granularity": "full"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["state"]["execution_meta"]["interrupt_data"]["interrupt"]["id"].clone();
    assert!(
        dir.path().join(".tenx/threads.sqlite").exists(),
        "SQLite in the local data directory"
    );
    first.kill();

    let second = serve(&[artifact, "--port", "0"], URLS, dir.path());
    let (status, body) = post(
        &second.base,
        "/v1/graph/invoke",
        json!({"resume": {"approved": "yes"}, "interrupt_id": id, "config": {"thread_id": "kept"}}),
    )
    .await;
    assert_eq!(status, 422, "the pause and its question survived: {body}");
    assert_eq!(body["error"]["code"], "INTERRUPT_002");
    // The SQLite file's inbox lists it, and the approvals API answers it once.
    let (status, inbox) = get(&second.base, "/v1/approvals").await;
    assert_eq!(status, 200, "{inbox}");
    assert_eq!(inbox["data"]["approvals"][0]["interrupt_id"], id, "{inbox}");
    let path = format!("/v1/approvals/{}/answer", id.as_str().unwrap());
    let (status, body) = post(
        &second.base,
        &path,
        json!({"resume": {"approved": false}, "note": "not today"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["outcome"], "rejected");
    let (_, inbox) = get(&second.base, "/v1/approvals").await;
    assert_eq!(inbox["data"]["approvals"], json!([]));
    let (_, records) = get(&second.base, "/v1/approval-records").await;
    assert_eq!(records["data"]["records"][0]["note"], "not today", "{records}");
    let _ = second.stderr.try_recv();
    second.kill();
}

#[tokio::test]
async fn serve_prints_its_settings_without_the_secret_and_warns_when_auth_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = refund_artifact(dir.path());
    let args = [artifact.to_str().unwrap(), "--port", "0", "--store", "memory"];
    let text = start_up_lines(&args, URLS, dir.path());
    assert!(text.contains("mode              development"), "{text}");
    assert!(text.contains("store             memory"), "{text}");
    assert!(text.contains("WARNING: auth is off"), "{text}");

    let secret = "a-secret-that-must-never-be-printed-0123";
    let vars = [URLS[0], URLS[1], ("JWT_SECRET_KEY", secret)];
    let text = start_up_lines(&args, &vars, dir.path());
    assert!(text.contains("auth              jwt HS256"), "{text}");
    assert!(!text.contains(secret), "{text}");
    assert!(!text.contains("WARNING: auth is off"), "{text}");
}

/// What `tenx serve` prints up to its `listening on` line; then it is stopped.
fn start_up_lines(args: &[&str], vars: &[(&str, &str)], dir: &Path) -> String {
    let mut child = command(args, vars, dir).spawn().unwrap();
    let mut printed = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let done = line.starts_with("tenx serve: listening on");
        printed.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    printed.join("\n")
}

#[test]
fn serve_refuses_to_start_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = refund_artifact(dir.path());
    let artifact = artifact.to_str().unwrap();

    let (code, text) = refuse(&[artifact, "--port", "0"], &[], dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("ORDERS_URL") && text.contains("PAYMENTS_URL"),
        "every missing variable at once: {text}"
    );

    let (code, text) = refuse(&[artifact, "--port", "0", "--mode", "production"], URLS, dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("production mode needs auth"), "{text}");

    let vars = [
        URLS[0],
        URLS[1],
        ("JWT_SECRET_KEY", "a-long-enough-secret-for-production-use"),
    ];
    let (code, text) = refuse(&[artifact, "--port", "0", "--mode", "production"], &vars, dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("production mode needs ORIGINS"), "{text}");

    let (code, text) = refuse(&[artifact, "--port", "0", "--require-signature"], URLS, dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("refused"), "{text}");

    let source = tenx_tests::repo_root().join("examples/refund_approval/main.tenx");
    let (code, text) = refuse(&[source.to_str().unwrap(), "--port", "0"], URLS, dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("tenx serve runs only sealed artifacts"), "{text}");

    std::fs::write(dir.path().join("tenx.toml"), "[serve]\nport = \"eighty\"\n").unwrap();
    let (code, text) = refuse(&[artifact], URLS, dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("tenx.toml"), "{text}");
}

#[test]
fn serve_refuses_public_key_settings_that_cannot_verify_and_starts_with_one_that_can() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = refund_artifact(dir.path());
    let artifact = artifact.to_str().unwrap();
    let keys = tenx_tests::repo_root().join("tests/testdata/jwt");
    let rsa = keys.join("rsa_public.pem");
    let rsa = rsa.to_str().unwrap();
    let args = [artifact, "--port", "0", "--store", "memory"];
    let with = |extra: &[(&'static str, &'static str)]| -> Vec<(&'static str, &'static str)> {
        URLS.iter().chain(extra).copied().collect()
    };
    let secret = ("JWT_SECRET_KEY", "a-long-enough-secret-for-production-use");
    let rsa: &'static str = Box::leak(rsa.to_owned().into_boxed_str());
    let cases: [(Vec<(&str, &str)>, &str); 4] = [
        (
            with(&[secret, ("JWT_PUBLIC_KEY_FILE", rsa), ("JWT_ALGORITHM", "RS256")]),
            "JWT_SECRET_KEY and JWT_PUBLIC_KEY_FILE: only one verification key may be set",
        ),
        (
            with(&[("JWT_PUBLIC_KEY_FILE", rsa)]),
            "JWT_ALGORITHM: JWT_PUBLIC_KEY_FILE is set: name its algorithm",
        ),
        (
            with(&[
                ("JWT_PUBLIC_KEY_FILE", "/nonexistent/key.pem"),
                ("JWT_ALGORITHM", "RS256"),
            ]),
            "cannot be read",
        ),
        (
            with(&[("JWT_PUBLIC_KEY_FILE", rsa), ("JWT_ALGORITHM", "ES256")]),
            "holds an RSA public key, but the algorithm needs",
        ),
    ];
    for (vars, expected) in cases {
        let (code, text) = refuse(&args, &vars, dir.path());
        assert_eq!(code, Some(2), "{text}");
        // miette wraps long lines under a `│` gutter: read the message as one line.
        let text = text.replace('│', " ").split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains(expected), "{expected}: {text}");
    }
    std::fs::write(
        dir.path().join("tenx.toml"),
        format!("[serve]\njwt_public_key_file = \"{rsa}\"\njwt_algorithm = \"RS256\"\n"),
    )
    .unwrap();
    let text = start_up_lines(
        &[artifact, "--port", "0", "--store", "memory", "--mode", "production"],
        &with(&[("ORIGINS", "https://app.example")]),
        dir.path(),
    );
    assert!(
        text.contains(&format!("auth              jwt RS256 (public key {rsa})")),
        "production starts with a public key from tenx.toml: {text}"
    );
}

const ECHO_PROGRAM: &str = r#"
model m {
  provider = scripted
  rules = [
    {
      match: "(?i)echo (?<words>.+)"
      turns: [
        { tool: "echo", arguments: { message: "{words}" } }
        { text: "{result}" }
      ]
    }
  ]
  fallback = { text: "Say: echo something" }
}

tool echo(message: string "What to echo") -> string {
  description = "Echo a message."
  risk = low
  run = mcp(server: "everything")
}

agent a {
  model = m
  prompt = "Echo what you are asked to."
  tools = [echo]
}

graph g {
  entry = a
  nodes = [a]
  a -> END
}
"#;

/// The everything MCP server's entry point and `node`, or `None` (after saying why) when they
/// are not installed; under CI they must be (`.ci/run` installs them).
fn everything_server() -> Option<(PathBuf, PathBuf)> {
    let script = tenx_tests::repo_root()
        .join("target/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let node = std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("node"))
        .find(|candidate| candidate.is_file());
    match node {
        Some(node) if script.is_file() => Some((node, script)),
        _ => {
            let message = "the MCP everything server (or node) is not installed: see the README";
            assert!(
                !std::env::var("CI").is_ok_and(|value| value == "true"),
                "{message} (.ci/run installs it)"
            );
            eprintln!("skipped: {message}");
            None
        }
    }
}

#[tokio::test]
async fn serve_attaches_the_mcp_servers_tenx_toml_configures_and_refuses_to_start_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("echo.tenxg");
    std::fs::write(
        &artifact,
        tenx_tests::sealed_bytes("tests/serve_echo.tenx", ECHO_PROGRAM),
    )
    .unwrap();
    let artifact = artifact.to_str().unwrap();

    let (code, text) = refuse(&[artifact, "--port", "0", "--store", "memory"], &[], dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("MCP servers that are not") && text.contains("`everything`"),
        "{text}"
    );

    let Some((node, script)) = everything_server() else {
        return;
    };
    std::fs::write(
        dir.path().join("tenx.toml"),
        format!(
            "[mcp.servers.everything]\ntransport = \"stdio\"\ncommand = {:?}\nargs = [{:?}]\n",
            node.display().to_string(),
            script.display().to_string()
        ),
    )
    .unwrap();
    let serving = serve(&[artifact, "--port", "0", "--store", "memory"], &[], dir.path());
    let (status, body) = post(
        &serving.base,
        "/v1/graph/invoke",
        json!({"messages": [user("echo hello from tenx")], "config": {"thread_id": "e1"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let last = body["data"]["messages"].as_array().unwrap().last().unwrap().clone();
    let text = last["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("hello from tenx"),
        "the MCP server's echo came back: {body}"
    );
    serving.kill();
}

pub(super) const SLOW_HTTP_PROGRAM: &str = r#"
model m {
  provider = scripted
  rules = [
    {
      match: "(?i)slow (?<words>.+)"
      turns: [
        { tool: "slow", arguments: { message: "{words}" } }
        { text: "{result}" }
      ]
    }
  ]
  fallback = { text: "Say: slow something" }
}

tool slow(message: string "What to echo, slowly") -> string {
  description = "Echo a message, slowly."
  risk = low
  run = http(POST, "${SLOW_URL}/slow", timeout: 30s)
}

agent a {
  model = m
  prompt = "Echo what you are asked to."
  tools = [slow]
}

graph g {
  entry = a
  nodes = [a]
  a -> END
}
"#;

/// What [`slow_service`] was sent: how many requests, and each one's `Idempotency-Key`.
#[derive(Clone, Default)]
pub(super) struct SlowRequests {
    count: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    keys: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl SlowRequests {
    pub(super) fn load(&self, order: std::sync::atomic::Ordering) -> usize {
        self.count.load(order)
    }

    /// Each request's `Idempotency-Key` (empty without one), in arrival order.
    pub(super) fn keys(&self) -> Vec<String> {
        self.keys.lock().unwrap().clone()
    }
}

/// A service on a loopback port that answers `done slowly` (text) after `delay`, counting the
/// requests. Like a service that deduplicates, it holds only the first request of each
/// `Idempotency-Key`: one that repeats a key is answered at once.
pub(super) fn slow_service(delay: Duration) -> (String, SlowRequests) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = SlowRequests::default();
    let seen = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0_usize;
                let mut key = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(value) = lower.strip_prefix("content-length:") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                    if lower.starts_with("idempotency-key:") {
                        key = line
                            .split_once(':')
                            .map(|(_, v)| v.trim().to_owned())
                            .unwrap_or_default();
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0_u8; length];
                let _ = reader.read_exact(&mut body);
                let repeat = {
                    let mut keys = seen.keys.lock().unwrap();
                    let repeat = !key.is_empty() && keys.contains(&key);
                    keys.push(key);
                    repeat
                };
                seen.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if !repeat {
                    std::thread::sleep(delay);
                }
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 11\r\nconnection: close\r\n\r\ndone slowly",
                );
            });
        }
    });
    (url, requests)
}

#[tokio::test]
async fn sigterm_lets_the_step_in_flight_finish_and_checkpoint_then_the_server_exits() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("slow.tenxg");
    std::fs::write(
        &artifact,
        tenx_tests::sealed_bytes("tests/serve_slow_http.tenx", SLOW_HTTP_PROGRAM),
    )
    .unwrap();
    let artifact = artifact.to_str().unwrap();
    let (url, requests) = slow_service(Duration::from_millis(1500));
    let vars = [("SLOW_URL", url.as_str())];
    let mut serving = serve(&[artifact, "--port", "0"], &vars, dir.path());
    let base = serving.base.clone();
    let run = tokio::spawn(async move {
        post(
            &base,
            "/v1/graph/invoke",
            json!({"messages": [user("slow please")], "config": {"thread_id": "shut"}, "response_granularity": "full"}),
        )
        .await
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while requests.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline, "the tool call never began");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let terminated = Command::new("kill")
        .args(["-TERM", &serving.child.id().to_string()])
        .status()
        .unwrap();
    assert!(terminated.success());

    let (status, body) = run.await.unwrap();
    assert_eq!(status, 200, "the request in flight is answered: {body}");
    let meta = &body["data"]["state"]["execution_meta"];
    assert_eq!(
        meta["status"], "interrupted_after",
        "the run stopped after its step: {meta}"
    );
    assert_eq!(meta["interrupt_reason"], "stop_requested", "{meta}");
    let (code, printed) = serving.wait_for_exit(Duration::from_secs(30));
    assert_eq!(code, Some(0), "{printed:#?}");
    assert!(
        printed.iter().any(|line| line.contains("shutting down")),
        "{printed:#?}"
    );
    assert_eq!(
        printed.last().map(String::as_str),
        Some("tenx serve: stopped"),
        "{printed:#?}"
    );
    drop(serving);

    // The step was checkpointed: after a restart the tool's result is there, the call is not
    // sent again, and the thread goes on.
    let second = serve(&[artifact, "--port", "0"], &vars, dir.path());
    let (status, body) = get(&second.base, "/v1/threads/shut/state").await;
    assert_eq!(status, 200, "{body}");
    let context = body["data"]["state"]["context"].as_array().unwrap().clone();
    let results: Vec<&Value> = context.iter().filter(|message| message["role"] == "tool").collect();
    assert_eq!(results.len(), 1, "{context:#?}");
    assert!(
        results[0]["content"].to_string().contains("done slowly"),
        "{context:#?}"
    );
    assert_eq!(
        requests.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "sent once, not again at recovery"
    );
    let (status, body) = post(
        &second.base,
        "/v1/graph/invoke",
        json!({"messages": [user("hello")], "config": {"thread_id": "shut"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    second.kill();
}

pub(super) async fn get(base: &str, path: &str) -> (u16, Value) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    read(
        reqwest::Client::new()
            .get(format!("{base}{path}"))
            .send()
            .await
            .unwrap(),
    )
    .await
}
