//! `cargo run --release -p tenx-bench --bin lsp`: how long `tenxc lsp` takes to check a program
//! again after an edit, measured as an editor sees it: from sending `didChange` to receiving the
//! `publishDiagnostics` of that version, over stdio with JSON-RPC.
//!
//! Programs: the benchmark's generated 100,000-line program (target: under 300 ms) and the
//! refund example (target: under 20 ms). Each edit types or deletes a comment line at the end;
//! the server checks the whole program again (parsing again only the items whose text changed). Beside each, in the same run: `tenxc check` of the
//! same file as a fresh process (what an editor without a server would pay). Medians of
//! [`EDITS`] edits after [`WARM_UP`] unmeasured ones, because the machine is shared and noisy.
//! Build the compiler first: `cargo build --release -p tenxc`.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

const EDITS: usize = 21;
const WARM_UP: usize = 3;
const PATIENCE: Duration = Duration::from_secs(120);

struct Server {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
}

/// The next message the server wrote, as JSON (the framing is `lsp-server`'s).
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let message = lsp_server::Message::read(reader).ok()??;
    serde_json::to_value(message).ok()
}

impl Server {
    fn start(tenxc: &Path, folder: &Path) -> Result<Server, String> {
        let mut child = Command::new(tenxc)
            .arg("lsp")
            .current_dir(folder)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", tenxc.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let (send, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if send.send(message).is_err() {
                    break;
                }
            }
        });
        let mut server = Server { child, stdin, incoming };
        let folder_uri = uri(folder)?;
        server.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": null, "capabilities": {}, "workspaceFolders": [{ "uri": folder_uri, "name": "bench" }],
        }}))?;
        server.wait(|m| m.get("id") == Some(&json!(1)))?;
        server.send(&json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }))?;
        Ok(server)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let message: lsp_server::Message = serde_json::from_value(message.clone()).map_err(|e| e.to_string())?;
        message.write(&mut self.stdin).map_err(|e| e.to_string())
    }

    fn wait(&mut self, wanted: impl Fn(&Value) -> bool) -> Result<Value, String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .incoming
                .recv_timeout(left)
                .map_err(|_| "the server did not answer in time".to_string())?;
            if wanted(&message) {
                return Ok(message);
            }
        }
    }

    /// Opens the document (`change` is `None`) or sends one incremental change at `version`,
    /// and waits for its diagnostics; the time between, and how many errors were published.
    fn edit(
        &mut self,
        uri: &str,
        version: i64,
        text: &str,
        change: Option<Value>,
    ) -> Result<(Duration, usize), String> {
        let start = Instant::now();
        let message = match change {
            None => json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
                "textDocument": { "uri": uri, "languageId": "tenx", "version": version, "text": text } } }),
            Some(change) => json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": { "uri": uri, "version": version }, "contentChanges": [change] } }),
        };
        self.send(&message)?;
        let published = self.wait(|m| {
            m.get("method").and_then(Value::as_str) == Some("textDocument/publishDiagnostics")
                && m.pointer("/params/uri").and_then(Value::as_str) == Some(uri)
                && m.pointer("/params/version").and_then(Value::as_i64) == Some(version)
        })?;
        let errors = published
            .pointer("/params/diagnostics")
            .and_then(Value::as_array)
            .map_or(0, |list| {
                list.iter()
                    .filter(|d| d.get("severity").and_then(Value::as_i64) == Some(1))
                    .count()
            });
        Ok((start.elapsed(), errors))
    }

    fn stop(mut self) {
        let _ = self.send(&json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown" }));
        let _ = self.wait(|m| m.get("id") == Some(&json!(2)));
        let _ = self.send(&json!({ "jsonrpc": "2.0", "method": "exit" }));
        let _ = self.child.wait();
    }
}

fn uri(path: &Path) -> Result<String, String> {
    let path = path.canonicalize().map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!("file://{}", path.display()).replace(' ', "%20"))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The median re-check after an edit, the first check, and `tenxc check` as a process.
struct Figures {
    first: Duration,
    recheck: Duration,
    recheck_p90: Duration,
    process: Duration,
}

fn measure(tenxc: &Path, folder: &Path, file: &Path) -> Result<Figures, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let uri = uri(file)?;
    let mut server = Server::start(tenxc, folder)?;
    let (first, errors) = server.edit(&uri, 1, &text, None)?;
    if errors > 0 {
        return Err(format!("{} does not check clean ({errors} errors)", file.display()));
    }
    // A comment line typed at the end, then deleted, as an editor sends it: the range only.
    let end = text.lines().count();
    let mut times = Vec::with_capacity(EDITS);
    for n in 0..WARM_UP + EDITS {
        let version = i64::try_from(n).unwrap_or(i64::MAX).saturating_add(2);
        let change = if n % 2 == 0 {
            json!({ "range": { "start": { "line": end, "character": 0 }, "end": { "line": end, "character": 0 } },
                    "text": format!("// edit {n}\n") })
        } else {
            json!({ "range": { "start": { "line": end, "character": 0 }, "end": { "line": end + 1, "character": 0 } },
                    "text": "" })
        };
        let (took, _) = server.edit(&uri, version, "", Some(change))?;
        if n >= WARM_UP {
            times.push(took);
        }
    }
    server.stop();
    let mut sorted = times.clone();
    sorted.sort();
    let recheck_p90 = sorted.get(sorted.len() * 9 / 10).copied().unwrap_or_default();
    let mut process = Vec::with_capacity(EDITS);
    for _ in 0..EDITS.min(11) {
        let start = Instant::now();
        let status = Command::new(tenxc)
            .arg("check")
            .arg(file)
            .current_dir(folder)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| e.to_string())?;
        process.push(start.elapsed());
        if !status.success() {
            return Err(format!("`tenxc check {}` failed", file.display()));
        }
    }
    Ok(Figures {
        first,
        recheck: median(times),
        recheck_p90,
        process: median(process),
    })
}

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let tenxc = root.join("target/release/tenxc");
    if !tenxc.is_file() {
        eprintln!("build the release compiler first: cargo build --release -p tenxc");
        return ExitCode::from(2);
    }
    let dir = root.join("target/bench/lsp");
    let large = dir.join("generated_100000.tenx");
    if let Err(e) =
        std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&large, tenx_bench::generate::program(100_000)))
    {
        eprintln!("cannot write {}: {e}", large.display());
        return ExitCode::from(2);
    }
    let example = root.join("examples/refund_approval");
    let cases: [(&str, PathBuf, PathBuf, Duration); 2] = [
        ("100,000-line program", dir.clone(), large, Duration::from_millis(300)),
        (
            "refund example",
            example.clone(),
            example.join("main.tenx"),
            Duration::from_millis(20),
        ),
    ];
    println!("tenxc lsp: re-check after an edit, didChange to publishDiagnostics ({EDITS} edits, medians)\n");
    let mut ok = true;
    for (label, folder, file, target) in cases {
        match measure(&tenxc, &folder, &file) {
            Ok(f) => {
                let met = f.recheck < target;
                ok &= met;
                println!("{label}:");
                println!("  first check (didOpen)           {:>9.2} ms", ms(f.first));
                println!(
                    "  re-check after an edit          {:>9.2} ms   (p90 {:.2} ms; target < {} ms: {})",
                    ms(f.recheck),
                    ms(f.recheck_p90),
                    target.as_millis(),
                    if met { "met" } else { "MISSED" }
                );
                println!(
                    "  baseline: `tenxc check` process {:>9.2} ms   (re-check is {:.2}x of it)",
                    ms(f.process),
                    f.recheck.as_secs_f64() / f.process.as_secs_f64().max(1e-9)
                );
            }
            Err(error) => {
                eprintln!("{label}: {error}");
                return ExitCode::from(2);
            }
        }
    }
    if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
