//! Blocking SQLite off the async runtime: a [`Worker`] owns one or more connections, each on
//! its own OS thread, and runs jobs sent over a channel. An async caller awaits a oneshot reply,
//! so no runtime worker thread ever blocks on SQLite. The store has one writer worker (one
//! connection: writes are serialised in arrival order) and one reader worker (read-only
//! connections, which WAL lets run beside the writer).
//!
//! A job whose caller stopped waiting still runs to its end (a commit is applied whole or not
//! at all, whether or not anyone reads the answer). The threads end when the last handle to the
//! worker is dropped.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;
use tenx_engine::ports::StoreError;
use tokio::sync::oneshot;

use crate::error::stopped;

/// A unit of work on a connection.
type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// Threads that own connections and run jobs.
#[derive(Debug)]
pub(crate) struct Worker {
    jobs: Sender<Job>,
}

impl Worker {
    /// Starts `count` threads named `name`, each opening its own connection with `open` (on
    /// that thread, so opening never blocks the caller's runtime). Fails with the first
    /// connection that does not open; the threads already started then stop.
    pub(crate) async fn start<F>(name: &str, count: usize, open: F) -> Result<Self, StoreError>
    where
        F: Fn() -> Result<Connection, StoreError> + Send + Sync + 'static,
    {
        let (jobs, queue) = channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let open = Arc::new(open);
        let mut ready = Vec::new();
        for index in 0..count.max(1) {
            let (opened, is_open) = oneshot::channel();
            let (queue, open) = (Arc::clone(&queue), Arc::clone(&open));
            std::thread::Builder::new()
                .name(format!("{name}-{index}"))
                .spawn(move || match open() {
                    Ok(connection) => {
                        if opened.send(Ok(())).is_ok() {
                            serve(connection, &queue);
                        }
                    }
                    Err(error) => {
                        let _ignored = opened.send(Err(error));
                    }
                })
                .map_err(|error| StoreError::Failed(format!("starting a SQLite thread: {error}")))?;
            ready.push(is_open);
        }
        for is_open in ready {
            is_open.await.map_err(|_| stopped())??;
        }
        Ok(Self { jobs })
    }

    /// Runs `job` on one of the worker's connections and returns its result.
    pub(crate) async fn run<T, F>(&self, job: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Box::new(move |connection| {
                let _unread = reply.send(job(connection));
            }))
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Queues `job` without waiting for it (a lease release from `Drop`). Jobs run in the
    /// order they were queued, so a later job of the same worker sees its effect.
    pub(crate) fn send(&self, job: impl FnOnce(&mut Connection) + Send + 'static) {
        // A worker that has stopped has closed its connection; there is nothing left to do.
        let _stopped = self.jobs.send(Box::new(job));
    }
}

/// A thread's loop: takes the next job, runs it, until every handle to the worker is gone.
fn serve(mut connection: Connection, queue: &Mutex<Receiver<Job>>) {
    loop {
        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        match next {
            Ok(job) => job(&mut connection),
            Err(_) => return,
        }
    }
}
