//! The crash test: a child process (this test binary, re-run with an environment variable)
//! takes the thread's lease and commits in a loop, printing each version once `commit` has
//! returned; the parent kills it with SIGKILL (`kill -9`) at random points, several times, and
//! after each kill reopens the file and checks it: consistent (`integrity_check`), every version
//! the child reported is there, no commit is half-applied (each version's receipt and record
//! are there exactly once), and the dead child's lease frees itself for the next child.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{done, markers, receipt, record, save, temp_file, thread};
use rusqlite::Connection;
use tenx_engine::ports::{Commit, ReceiptState, Store};
use tenx_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};

/// Set in the child: the store file to commit into.
const CHILD_FILE: &str = "TENX_SQLITE_CRASH_CHILD";
/// Set in the child: `full` or `normal`.
const CHILD_SYNC: &str = "TENX_SQLITE_CRASH_SYNC";
/// The thread the children write.
const THREAD: &str = "t";

fn options(synchronous: Synchronous) -> SqliteOptions {
    SqliteOptions {
        synchronous,
        lease_ttl: Duration::from_millis(300),
        lease_poll: Duration::from_millis(5),
        ..SqliteOptions::default()
    }
}

/// The child's body: runs only when the parent starts this binary with [`CHILD_FILE`] set.
#[test]
#[ignore = "the crash test's child process, started by `commits_survive_kill_9_at_random_points`"]
fn crash_child() {
    let Some(path) = std::env::var_os(CHILD_FILE) else {
        return;
    };
    let synchronous = match std::env::var(CHILD_SYNC).as_deref() {
        Ok("normal") => Synchronous::Normal,
        _ => Synchronous::Full,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let store = SqliteStore::open_with(&path, options(synchronous)).await.unwrap();
        // The previous child died holding this lease: it frees itself when it expires.
        let _lease = store.lock(THREAD).await.unwrap();
        let mut out = std::io::stdout().lock();
        writeln!(out, "locked").unwrap();
        out.flush().unwrap();
        let mut version = match store.load(THREAD).await.unwrap() {
            Some(stored) => stored.version,
            None => {
                store.commit(save(thread(THREAD, None, 1, 1), None)).await.unwrap();
                1
            }
        };
        loop {
            let next = version + 1;
            let key = format!("k{next}");
            // The in-flight marker, then the step with its receipt and record, as the engine
            // writes a tool call.
            store
                .commit(markers(
                    vec![receipt(THREAD, &key, ReceiptState::InFlight { started_at: next })],
                    Vec::new(),
                ))
                .await
                .unwrap();
            let step = Commit {
                thread: Some(thread(THREAD, None, next, next)),
                expected_version: Some(version),
                receipts: vec![receipt(THREAD, &key, done("refunded"))],
                records: vec![record(THREAD, next)],
            };
            store.commit(step).await.unwrap();
            writeln!(out, "done {next}").unwrap();
            out.flush().unwrap();
            version = next;
        }
    });
}

/// A small xorshift, seeded from the clock (the seed is printed so a failure can be replayed).
struct Random(u64);

impl Random {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

/// Checks the file after a kill; returns the stored version.
async fn check(path: &Path, reported: u64) -> u64 {
    let integrity: String = Connection::open(path)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let store = SqliteStore::open(path).await.unwrap();
    let stored = store.load(THREAD).await.unwrap().unwrap();
    let version = stored.version;
    // Every reported commit is there; at most one more (it returned, the print did not happen).
    assert!(
        version == reported || version == reported + 1,
        "stored {version}, reported {reported}"
    );
    assert_eq!(stored, thread(THREAD, None, version, version));
    // Each step's record exactly once, in order, none from a step that did not commit.
    let ats: Vec<u64> = store.records(THREAD).await.unwrap().iter().map(|r| r.at).collect();
    assert_eq!(ats, (2..=version).collect::<Vec<_>>());
    for n in 2..=version {
        let stored = store.receipt(THREAD, &format!("k{n}")).await.unwrap();
        assert_eq!(stored, Some(receipt(THREAD, &format!("k{n}"), done("refunded"))));
    }
    // At most the marker of the step the kill interrupted is left in flight.
    let in_flight: Vec<String> = store
        .in_flight(THREAD)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.key)
        .collect();
    assert!(
        in_flight.is_empty() || in_flight == [format!("k{}", version + 1)],
        "{in_flight:?} at version {version}"
    );
    version
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_survive_kill_9_at_random_points() {
    let (_dir, path) = temp_file();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("crash test seed {seed}");
    let mut random = Random(seed);
    let binary = std::env::current_exe().unwrap();
    let mut reported = 0;
    let mut commits_seen = 0;
    for round in 0..6 {
        let sync = if round % 2 == 0 { "full" } else { "normal" };
        let mut child = Command::new(&binary)
            .args(["--exact", "crash_child", "--ignored", "--nocapture", "--test-threads=1"])
            .env(CHILD_FILE, &path)
            .env(CHILD_SYNC, sync)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (lines, received) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if lines.send(line).is_err() {
                    return;
                }
            }
        });
        // Wait until the child holds the lease (the previous child's lease has expired) and
        // has committed once, then kill it at a random point of its loop.
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut lines = Vec::new();
        while !lines.iter().any(|line: &String| line.starts_with("done ")) {
            let line = received
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("round {round}: the child never committed: {lines:?}"));
            lines.push(line);
        }
        let delay = random.below(250);
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        lines.extend(received.try_iter());
        let before = reported;
        for line in &lines {
            if let Some(version) = line.strip_prefix("done ") {
                let version: u64 = version.parse().unwrap();
                assert!(version > reported, "versions go up");
                reported = version;
            }
        }
        let stored = check(&path, reported).await;
        commits_seen += reported - before;
        println!("round {round} ({sync}): killed after {delay} ms, reported {reported}, stored {stored}");
        // The next child continues from what is stored, including an unreported last commit.
        reported = stored;
    }
    assert!(commits_seen >= 6, "the children barely committed ({commits_seen})");
}
