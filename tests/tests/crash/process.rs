//! Starting, reading and killing children.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::child;

/// Generous: the machine is shared and may be loaded.
pub const PATIENCE: Duration = Duration::from_secs(120);

pub struct Child {
    process: std::process::Child,
    lines: mpsc::Receiver<Value>,
}

/// What a child is started with: the store, the artifact, the action and its environment.
pub fn spawn(store: &Path, artifact: &Path, vars: &[(&str, &str)]) -> Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--ignored",
            "--exact",
            "child::crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(child::STORE, store)
        .env(child::ARTIFACT, artifact)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (name, value) in vars {
        command.env(name, value);
    }
    let mut process = command.spawn().unwrap();
    let stdout = process.stdout.take().unwrap();
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // libtest may print `test child::crash_child ... ` before the child's first line.
            let Some(start) = line.find('{') else { continue };
            if let Ok(value) = serde_json::from_str::<Value>(line[start..].trim())
                && send.send(value).is_err()
            {
                break;
            }
        }
    });
    Child { process, lines }
}

impl Child {
    /// The next line whose `event` is `event` (earlier lines are skipped).
    pub fn expect(&self, event: &str) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line["event"] == event => return line,
                Ok(_) => {}
                Err(error) => panic!("the child never said `{event}`: {error}"),
            }
        }
    }

    /// `kill -9`, then reap it.
    pub fn kill(mut self) {
        self.process.kill().unwrap();
        let status = self.process.wait().unwrap();
        assert!(!status.success(), "the child was killed, not finished: {status}");
    }

    /// Waits for the child to exit by itself, successfully.
    pub fn exits(mut self) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.process.try_wait().unwrap() {
                assert!(status.success(), "the child failed: {status}");
                return;
            }
            assert!(Instant::now() < deadline, "the child did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Child {
    /// A child left running by a failed test is killed, never orphaned.
    fn drop(&mut self) {
        if matches!(self.process.try_wait(), Ok(None)) {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}

/// Polls `ready` until it holds (never sleep-and-hope).
pub fn eventually(what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
