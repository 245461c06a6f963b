//! The servers under load, each its own process on a free loopback port: the release
//! `tenx serve` (memory, SQLite or PostgreSQL store, data in a temporary directory), and the
//! bare handler (the benchmark binary re-run as `serve bare`). Dropping one kills it. Its memory is read from
//! `/proc/PID/status`. Also what both benchmarks set up alike: the workspace root, the sealed
//! refund example, the `TENX_BENCH_*` settings.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The argument that runs the bare handler's child.
pub const BARE: &str = "bare";

const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running server process.
pub struct Server {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Resident memory of a process, in bytes: now and its peak.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// `VmRSS`.
    pub rss: u64,
    /// `VmHWM`.
    pub peak: u64,
}

impl Server {
    /// `tenx serve ARTIFACT --port 0 --store STORE --data-dir DIR/data` in `dir` (so no
    /// `tenx.toml` of the workspace is read), its tools pointed at the stand-in. `store` is
    /// `memory`, `sqlite` or a `postgres://` URL (named only as `postgres` in errors).
    ///
    /// # Errors
    ///
    /// The process cannot start, or prints no address within a minute.
    pub fn tenx(tenx: &Path, artifact: &Path, store: &str, dir: &Path, standin: SocketAddr) -> Result<Self, String> {
        let url = format!("http://{standin}");
        let mut command = Command::new(tenx);
        command
            .arg("serve")
            .arg(artifact)
            .args(["--port", "0", "--store", store, "--data-dir"])
            .arg(dir.join("data"))
            .current_dir(dir)
            .env("ORDERS_URL", &url)
            .env("PAYMENTS_URL", &url)
            .env_remove("JWT_SECRET_KEY")
            .env_remove("MODE")
            .env_remove("ORIGINS")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .map_err(|error| format!("starting {}: {error}", tenx.display()))?;
        let lines = child.stderr.take().map(|stderr| reader(BufReader::new(stderr)));
        let addr = listening(lines, "tenx serve: listening on http://");
        let name = if store.starts_with("postgres") {
            "postgres"
        } else {
            store
        };
        Self::started(child, addr, &format!("tenx serve ({name})"))
    }

    /// The bare handler: this binary as `serve bare`, which prints its address on stdout.
    ///
    /// # Errors
    ///
    /// The process cannot start, or prints no address within a minute.
    pub fn bare() -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|error| format!("finding the bench binary: {error}"))?;
        let mut child = Command::new(exe)
            .arg(BARE)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|error| format!("starting the bare handler: {error}"))?;
        let lines = child.stdout.take().map(|stdout| reader(BufReader::new(stdout)));
        let addr = listening(lines, "");
        Self::started(child, addr, "the bare handler")
    }

    fn started(mut child: Child, addr: Result<SocketAddr, String>, what: &str) -> Result<Self, String> {
        match addr {
            Ok(addr) => Ok(Self { child, addr }),
            Err(why) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!("{what} did not start: {why}"))
            }
        }
    }

    /// The process's resident memory now and at its peak (`VmRSS`, `VmHWM`).
    ///
    /// # Errors
    ///
    /// `/proc/PID/status` cannot be read or lacks the fields.
    pub fn memory(&self) -> Result<Memory, String> {
        let path = format!("/proc/{}/status", self.child.id());
        let status = std::fs::read_to_string(&path).map_err(|error| format!("reading {path}: {error}"))?;
        let field = |name: &str| -> Option<u64> {
            let line = status.lines().find(|line| line.starts_with(name))?;
            let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kilobytes * 1024)
        };
        match (field("VmRSS:"), field("VmHWM:")) {
            (Some(rss), Some(peak)) => Ok(Memory { rss, peak }),
            _ => Err(format!("{path} has no VmRSS or VmHWM")),
        }
    }
}

/// Sends every line of `stream` on a channel from a thread of its own, which keeps reading
/// (so the child never blocks on a full pipe) until the stream closes.
fn reader(stream: impl BufRead + Send + 'static) -> mpsc::Receiver<String> {
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stream.lines() {
            let Ok(line) = line else { break };
            let _ = send.send(line);
        }
    });
    lines
}

/// Waits for the line that starts with `prefix` and reads the address after it.
fn listening(lines: Option<mpsc::Receiver<String>>, prefix: &str) -> Result<SocketAddr, String> {
    let lines = lines.ok_or("no output to read")?;
    let mut seen = Vec::new();
    loop {
        match lines.recv_timeout(START_TIMEOUT) {
            Ok(line) => {
                if let Some(rest) = line.strip_prefix(prefix)
                    && let Ok(addr) = rest.trim().parse()
                {
                    return Ok(addr);
                }
                seen.push(line);
            }
            Err(_) => return Err(format!("no address printed; it said: {}", seen.join(" | "))),
        }
    }
}

/// The bare handler's child: serves on a free loopback port (a multi-threaded runtime, as
/// `tenx serve` has) and prints the address.
///
/// # Errors
///
/// The runtime, the socket or the server fails.
pub fn bare_child() -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("the bare handler's runtime: {error}"))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|error| format!("binding the bare handler: {error}"))?;
        let addr = listener
            .local_addr()
            .map_err(|error| format!("the bare handler's address: {error}"))?;
        println!("{addr}");
        crate::bare::serve(listener)
            .await
            .map_err(|error| format!("the bare handler failed: {error}"))
    })
}

/// A whole-number setting from the environment, or `default` when unset or not a number.
#[must_use]
pub fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// The workspace root.
#[must_use]
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Seals `examples/refund_approval/main.tenx` with the release `tenxc` into `target/bench/`.
///
/// # Errors
///
/// `tenxc` is missing or the build fails (with what it said).
pub fn build_artifact(root: &Path) -> Result<PathBuf, String> {
    let tenxc = root.join("target/release/tenxc");
    let source = root.join("examples/refund_approval/main.tenx");
    let out = root.join("target/bench/refund_approval.tenxg");
    std::fs::create_dir_all(root.join("target/bench")).map_err(|error| format!("creating target/bench: {error}"))?;
    let built = Command::new(&tenxc)
        .arg("build")
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .output();
    match built {
        Ok(output) if output.status.success() => Ok(out),
        Ok(output) => Err(format!(
            "`tenxc build {}` failed: {}",
            source.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(error) => Err(format!(
            "running {}: {error} (cargo build --release -p tenxc)",
            tenxc.display()
        )),
    }
}
