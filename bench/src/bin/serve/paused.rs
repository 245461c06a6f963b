//! Many threads paused at the refund's approval, served from SQLite: a fresh `tenx serve`
//! pauses `count` new threads (16 clients), its resident memory is read from `/proc`, and then
//! one of them picked at random is resumed: its state is read back over HTTP, the answer bound
//! to its interrupt id runs the refund, and the stand-in counts exactly one more refund.

use std::net::SocketAddr;
use std::path::Path;

use bytes::Bytes;
use hyper::Method;
use tenx_bench::load::{self, Until, Workload};

use tenx_bench::child::{Memory, Server};
use tenx_bench::standin::StandIn;

const PREFIX: &str = "paused-";
const CLIENTS: usize = 16;

/// What the paused-threads measurement found.
pub(crate) struct Paused {
    pub(crate) threads: u64,
    pub(crate) before: Memory,
    pub(crate) after: Memory,
    pub(crate) seconds: f64,
    /// The resumed thread and the assistant's answer.
    pub(crate) resumed: Result<(String, String), String>,
}

pub(crate) async fn measure(
    tenx: &Path,
    artifact: &Path,
    dir: &Path,
    standin: &StandIn,
    message: &str,
    count: u64,
) -> Result<Paused, String> {
    let server = Server::tenx(tenx, artifact, "sqlite", dir, standin.addr)?;
    // One pause first, so what every process allocates once counts as the baseline.
    let warm = Workload::Pause {
        message: message.to_owned(),
        prefix: "warm-".to_owned(),
        resume: false,
    };
    load::run(server.addr, &warm, 1, Until::Count(1)).await?;
    let before = server.memory()?;
    let workload = Workload::Pause {
        message: message.to_owned(),
        prefix: PREFIX.to_owned(),
        resume: false,
    };
    let figures = load::run(server.addr, &workload, CLIENTS, Until::Count(count)).await?;
    let after = server.memory()?;
    #[expect(clippy::cast_precision_loss, reason = "a figure to print")]
    let seconds = figures.samples as f64 / figures.throughput;
    let pick = fastrand::u64(0..count);
    let resumed = resume(server.addr, &format!("{PREFIX}{pick}"), standin).await;
    Ok(Paused {
        threads: figures.done,
        before,
        after,
        seconds,
        resumed,
    })
}

/// Reads `thread`'s open interrupt from its state, approves it, and checks that one refund ran.
async fn resume(addr: SocketAddr, thread: &str, standin: &StandIn) -> Result<(String, String), String> {
    let mut sender = load::connection(addr).await?;
    let state = load::send(
        &mut sender,
        Method::GET,
        &format!("/v1/threads/{thread}/state"),
        Bytes::new(),
    )
    .await?;
    let interrupt =
        load::interrupt_id(&state, "data.state.execution_meta").ok_or_else(|| format!("{thread} is not paused"))?;
    let refunds = standin.refunds();
    let answer = load::post(&mut sender, "/v1/graph/invoke", load::resume_body(thread, &interrupt)).await?;
    let moved = standin.refunds().saturating_sub(refunds);
    if moved != 1 {
        return Err(format!("resuming {thread} made {moved} refunds, not 1"));
    }
    let text = last_text(&answer).ok_or_else(|| format!("resuming {thread} answered no text"))?;
    Ok((thread.to_owned(), text))
}

/// The text of the last message of an invoke answer.
fn last_text(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let last = value.get("data")?.get("messages")?.as_array()?.last()?;
    let text = last.get("content")?.get(0)?.get("text")?.as_str()?;
    Some(text.to_owned())
}
