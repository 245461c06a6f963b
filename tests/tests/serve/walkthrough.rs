//! The README's main job and its walk-through cannot rot: the README quotes
//! `examples/refund_approval/walkthrough.sh` verbatim, and the demo (`refund-demo`, in a child
//! process: this test binary re-run as [`demo_child`], which calls `refund_demo::main_with` as
//! its `src/main.rs` does) serves the refund example on free loopback ports while bash and curl
//! run the script against it. The outcomes are asserted step by step: the pause, the open
//! request, every row of seed 003's error table with its exact message, the approval, the single
//! refund at the stand-in, the refused repeat, the busy thread. Ctrl-C (SIGINT) stops the demo
//! cleanly.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const ARGS: &str = "REFUND_DEMO_TEST_ARGS";
const SCRIPT: &str = "examples/refund_approval/walkthrough.sh";

#[test]
#[ignore = "the walk-through test's child process, started by the test below"]
fn demo_child() {
    let args: Vec<String> = serde_json::from_str(&std::env::var(ARGS).unwrap()).unwrap();
    let code = refund_demo::main_with(std::iter::once("refund-demo".to_owned()).chain(args));
    let code = if code == std::process::ExitCode::SUCCESS { 0 } else { 2 };
    std::process::exit(code);
}

#[test]
fn the_readme_quotes_the_walkthrough_script_verbatim() {
    let root = tenx_tests::repo_root();
    let script = std::fs::read_to_string(root.join(SCRIPT)).unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("```sh\n{script}```\n")),
        "README.md must quote {SCRIPT} whole, in one ```sh block"
    );
    assert!(
        readme.contains("```sh\ncargo run -p refund-demo\n```"),
        "the README's main job is `cargo run -p refund-demo`"
    );
}

/// Whether `program --version` runs; under `CI=true` a missing one fails the test.
fn available(program: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        assert!(
            !std::env::var("CI").is_ok_and(|value| value == "true"),
            "`{program}` is needed to run the walk-through, and CI=true"
        );
        eprintln!("skipped: `{program}` is not installed, so the walk-through cannot run");
    }
    found
}

struct Demo {
    child: Child,
    api: String,
    payments: String,
    lines: mpsc::Receiver<String>,
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Demo {
    /// The next line the demo prints within `wait`, if any.
    fn line(&self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }
}

/// Starts the demo in `dir` on free ports and waits until it listens.
#[expect(
    clippy::zombie_processes,
    reason = "the child is returned in `Demo`, whose Drop kills and waits for it"
)]
fn start(dir: &Path) -> Demo {
    let args = ["--port", "0", "--payments-port", "0"];
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "walkthrough::demo_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ARGS, serde_json::to_string(&args).unwrap())
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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
    let mut payments = None;
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("the demo did not start: {seen:#?}"));
        if let Some(rest) = line.strip_prefix("refund-demo: payments stand-in on ") {
            payments = rest.split_whitespace().next().map(str::to_owned);
        }
        if let Some(address) = line.strip_prefix("tenx serve: listening on ") {
            return Demo {
                child,
                api: address.trim().to_owned(),
                payments: payments.unwrap_or_else(|| panic!("no stand-in address: {seen:#?}")),
                lines,
            };
        }
        seen.push(line);
    }
}

/// The walk-through's answers: each JSON line, and each `status NNN` line, in order.
struct Transcript {
    json: Vec<Value>,
    statuses: Vec<u16>,
    text: String,
}

fn transcript(stdout: &str) -> Transcript {
    let mut json = Vec::new();
    let mut statuses = Vec::new();
    for line in stdout.lines() {
        if let Some(status) = line.strip_prefix("status ") {
            statuses.push(status.parse().unwrap());
        } else if line.starts_with('{') {
            json.push(serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")));
        }
    }
    Transcript {
        json,
        statuses,
        text: stdout.to_owned(),
    }
}

fn last_answer(body: &Value) -> String {
    let last = body["data"]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "assistant", "{body}");
    last["content"][0]["text"].as_str().unwrap().to_owned()
}

#[test]
fn the_readme_walkthrough_runs_against_the_demo_and_refunds_once() {
    if !available("bash") || !available("curl") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let demo = start(dir.path());
    let script = tenx_tests::repo_root().join(SCRIPT);
    let output = Command::new("bash")
        .arg(&script)
        .env("API", &demo.api)
        .env("PAYMENTS", &demo.payments)
        .env_remove("TOKENS")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.is_empty(), "the walk-through printed errors: {stderr}");
    let run = transcript(&stdout);

    // Every request's status, in the script's order. The last two race by design (whichever
    // resume takes the thread first runs the slow refund, the other is refused as busy); the
    // script gives the background approval 2 s to take it, so the refusal is printed first.
    let (settled, raced) = run.statuses.split_at(run.statuses.len() - 2);
    assert_eq!(settled, [200, 200, 409, 422, 422, 403, 403, 403, 200, 409], "{stdout}");
    let mut raced = raced.to_vec();
    raced.sort_unstable();
    assert_eq!(raced, [200, 409], "{stdout}");

    // 1. Other text gets the scripted model's plain answer.
    assert_eq!(
        last_answer(&run.json[0]),
        "I can refund an order. Write, for example: Refund order 1042, 59.00"
    );

    // 2–3. The pause, and the open request read from the thread's state.
    let id = stdout
        .lines()
        .find(|line| line.starts_with("int_"))
        .unwrap_or_else(|| panic!("no interrupt id printed: {stdout}"))
        .to_owned();
    assert_eq!(id.len(), 36, "{id}");
    assert!(run.text.contains(&format!("\"interrupt\":{{\"id\":\"{id}\"")));
    assert!(
        run.text
            .contains("\"message\":\"Approve a refund of 5900 cents for order 1042?\"")
    );
    assert!(run.text.contains("\"approved\":{\"description\""), "{stdout}");
    let paused = &run.json[1];
    assert!(paused["data"]["messages"].as_array().unwrap().iter().any(|message| {
        message["content"][0]["name"] == "issue_refund"
            && message["content"][0]["args"] == json!({"order_id": "1042", "amount_cents": 5900})
    }));

    // 4. Nothing refunded before the answer.
    assert_eq!(run.json[2], json!({}));

    // 5. The seed's error table, exactly, then the approvers rule.
    let errors: Vec<(String, String)> = run
        .json
        .iter()
        .filter(|body| body.get("error").is_some())
        .map(|body| {
            (
                body["error"]["code"].as_str().unwrap().to_owned(),
                body["error"]["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let approver = "You may not answer this request: it needs a user holding one of its approver roles or scopes";
    let expected = [
        (
            "INTERRUPT_001",
            format!("interrupt_id 'int_nope' does not match the open interrupt '{id}'"),
        ),
        (
            "INTERRUPT_002",
            format!(
                "Resume value does not match the response schema of interrupt '{id}': $.approved: expected boolean, got str"
            ),
        ),
        (
            "INTERRUPT_004",
            format!("Thread is paused at interrupt '{id}' in node 'support'. Resume it with {{'resume': value}}."),
        ),
        ("HTTPException", "Not authorized to invoke graph".to_owned()),
        // Bob neither owns the thread nor may answer its question: D7 (nothing about it told).
        ("HTTPException", "Not authorized to invoke graph".to_owned()),
        // Alice owns it, but asked: separate duties.
        ("APPROVER_REFUSED", approver.to_owned()),
        (
            "INTERRUPT_003",
            "Nothing to resume: this thread is not paused at an interrupt".to_owned(),
        ),
        ("THREAD_BUSY", "thread is busy".to_owned()),
    ];
    let expected: Vec<(String, String)> = expected
        .into_iter()
        .map(|(code, message)| (code.to_owned(), message))
        .collect();
    assert_eq!(errors, expected, "{stdout}");

    // 6–8. The approval runs the refund once; approving again refunds nothing.
    // (Answers in order: hello, the pause, `{}`, six refusals, then the approval.)
    assert_eq!(
        last_answer(&run.json[9]),
        "Refunded 5900 cents for order 1042",
        "{stdout}"
    );
    let once = json!({"refund-1042-5900": {"order_id": "1042", "amount_cents": 5900, "requests": 1}});
    let listed: Vec<&Value> = run
        .json
        .iter()
        .filter(|body| body.get("refund-1042-5900").is_some())
        .collect();
    assert_eq!(listed.len(), 3, "{stdout}");
    assert_eq!(*listed[0], once);
    assert_eq!(*listed[1], once, "approving again refunded nothing");

    // 9. The busy thread's approval finished after the refusal, and refunded once too.
    let last = run.json.last().unwrap();
    assert_eq!(
        *last,
        json!({
            "refund-1042-5900": {"order_id": "1042", "amount_cents": 5900, "requests": 1},
            "refund-1043-1250": {"order_id": "1043", "amount_cents": 1250, "requests": 1},
        })
    );
    let answers: Vec<String> = run
        .json
        .iter()
        .filter_map(|body| {
            let last = body["data"]["messages"].as_array()?.last()?;
            last["content"][0]["text"].as_str().map(str::to_owned)
        })
        .collect();
    assert_eq!(
        answers
            .iter()
            .filter(|text| *text == "Refunded 1250 cents for order 1043")
            .count(),
        1,
        "{stdout}"
    );

    // The stand-in's own record, read directly: the same two refunds.
    let direct = Command::new("curl")
        .args(["-s", &format!("{}/refunds", demo.payments)])
        .output()
        .unwrap();
    let direct: Value = serde_json::from_slice(&direct.stdout).unwrap();
    assert_eq!(direct, *last);

    // The demo serves the approval console, and carol's token reads the record of her answers
    // through the approvals API the console reads.
    let page = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{content_type}",
            &format!("{}/console", demo.api),
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&page.stdout), "200 text/html; charset=utf-8");
    let tokens = std::fs::read_to_string(dir.path().join(".tenx/refund-demo.env")).unwrap();
    let carol = tokens
        .lines()
        .find_map(|line| line.strip_prefix("CAROL="))
        .unwrap()
        .trim_matches(|c| c == '"' || c == '\'');
    let records = Command::new("curl")
        .args([
            "-s",
            "-H",
            &format!("authorization: Bearer {carol}"),
            &format!("{}/v1/approval-records", demo.api),
        ])
        .output()
        .unwrap();
    let records: Value = serde_json::from_slice(&records.stdout).unwrap();
    let answered_by_carol = records["data"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|record| record["kind"] == "approval" && record["answered_by"] == "carol")
        .count();
    assert_eq!(answered_by_carol, 2, "{records}");

    // Ctrl-C stops the API and the stand-in; the demo printed one line per refund.
    let pid = demo.child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let mut printed = Vec::new();
    while let Some(line) = demo.line(Duration::from_secs(30)) {
        let done = line == "refund-demo: payments stand-in stopped";
        printed.push(line);
        if done {
            break;
        }
    }
    assert_eq!(
        printed.last().map(String::as_str),
        Some("refund-demo: payments stand-in stopped"),
        "{printed:#?}"
    );
    let refunded: Vec<&String> = printed
        .iter()
        .filter(|line| line.starts_with("payments stand-in: refunded "))
        .collect();
    assert_eq!(
        refunded,
        [
            "payments stand-in: refunded 5900 cents for order 1042 (Idempotency-Key refund-1042-5900)",
            "payments stand-in: refunded 1250 cents for order 1043 (Idempotency-Key refund-1043-1250)",
        ],
        "{printed:#?}"
    );
    let mut demo = demo;
    assert_eq!(demo.child.wait().unwrap().code(), Some(0));
}
