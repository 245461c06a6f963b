//! One `tenx serve` replica: this test binary re-run as [`serve_child`], which calls
//! `tenx::main_with` exactly as the `tenx` binary's `main` does, so each replica is a real
//! process with its own store connections, leases and recovery. Started with the cluster's
//! arguments (artifact, `--config`, the backend's store arguments, `--port 0`), read until its
//! `listening on` line, and ended with `kill -9` (SIGKILL: no shutdown, no lease released).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// The child's arguments after `tenx serve`, as JSON (its presence makes the process a child).
const ARGS: &str = "TENX_REPLICA_ARGS";

/// Generous: the machine is shared, and a start-up recovers runs before it listens.
const START_PATIENCE: Duration = Duration::from_secs(120);

/// The replica's body; a no-op unless a test started this binary as a replica.
#[test]
#[ignore = "a replica's process, started by the tests"]
fn serve_child() {
    let Ok(args) = std::env::var(ARGS) else { return };
    let args: Vec<String> = serde_json::from_str(&args).unwrap();
    let code = tenx::main_with(["tenx".to_owned(), "serve".to_owned()].into_iter().chain(args));
    std::process::exit(if code == std::process::ExitCode::SUCCESS { 0 } else { 2 });
}

/// A running replica. Dropping it kills it (a failed test orphans nothing).
pub struct Replica {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Every line it printed (kept to explain a failure).
    printed: Arc<Mutex<Vec<String>>>,
}

impl Replica {
    /// Starts `tenx serve ARGS` in `dir` with `vars`, and waits until it listens (after its
    /// start-up recovery).
    pub fn start(args: &[String], vars: &[(String, String)], dir: &Path) -> Self {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args([
                "--ignored",
                "--exact",
                "replica::serve_child",
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
            .env_remove("RUN_TIMEOUT_SECONDS")
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in vars {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let printed = Arc::new(Mutex::new(Vec::new()));
        let (send, listening) = mpsc::channel();
        let kept = printed.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(address) = line.strip_prefix("tenx serve: listening on ") {
                    let _ = send.send(address.trim().to_owned());
                }
                kept.lock().unwrap().push(line);
            }
        });
        let Ok(base) = listening.recv_timeout(START_PATIENCE) else {
            let _ = child.kill();
            let status = child.wait().unwrap();
            panic!("the replica did not start ({status}): {:#?}", printed.lock().unwrap());
        };
        Self { child, base, printed }
    }

    /// `kill -9`: the process dies where it is, its leases unreleased; then it is reaped.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        assert!(!status.success(), "killed, not finished: {status}");
    }

    /// Whether it is still running (a replica that exited by itself is a failure to explain).
    pub fn assert_alive(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!(
                "the replica {} exited ({status}): {:#?}",
                self.base,
                self.printed.lock().unwrap()
            );
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Polls `ready` (async) until it holds or `limit` passes; whether it held.
pub async fn within<F, Fut>(limit: Duration, mut ready: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    loop {
        if ready().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
