//! (a′): the same turn as (a) with the desk's model an `openai` client against a local fake
//! chat-completions server (`tenx_models::test_support::FakeProvider`, loopback HTTP on its own
//! thread, streamed answers of the recorded OpenAI shape in `bench/fixtures/openai/`): the
//! tool call, then the answer. The turn makes two model calls, so the overhead per call is
//! (a′ − a) / 2: encoding the request, the HTTP round trip over loopback, the fake's own work,
//! SSE decoding and reassembly. The same two exchanges are then timed bare (POST and read the
//! whole body, nothing decoded), so the adapter's own share is the overhead less that.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tenx_artifact::{LoadedArtifact, Model, Provider};
use tenx_engine::MemoryStore;
use tenx_engine::ports::ModelClient;
use tenx_models::failure::Caller;
use tenx_models::test_support::{Canned, FakeProvider};
use tenx_models::transport::Endpoint;
use tenx_models::{ProviderOptions, Transport};
use tokio_util::sync::CancellationToken;

use crate::measure::Figures;
use crate::setup::engine_with;

/// The recorded answers, sent in pieces of this many bytes (events split across reads).
const PIECE: usize = 512;

/// Starts the fake on its own thread (so its work is not timed on the engine's) and returns its
/// base URL.
fn start_fake(root: &std::path::Path) -> Result<String, String> {
    let read = |name: &str| {
        std::fs::read(root.join("bench/fixtures/openai").join(name)).map_err(|error| format!("reading {name}: {error}"))
    };
    let answers = [
        Canned::sse(read("lookup_call.sse")?, PIECE),
        Canned::sse(read("lookup_answer.sse")?, PIECE),
    ];
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
            let _gone = sender.send(Err("cannot start the fake's runtime".to_owned()));
            return;
        };
        runtime.block_on(async move {
            match FakeProvider::cycling(answers).await {
                Ok(fake) => {
                    let _gone = sender.send(Ok(fake.url()));
                    std::future::pending::<()>().await;
                    drop(fake);
                }
                Err(error) => {
                    let _gone = sender.send(Err(format!("the fake provider did not start: {error}")));
                }
            }
        });
    });
    receiver
        .recv()
        .map_err(|_| "the fake provider's thread stopped".to_owned())?
}

/// What (a′) measured: the turns, and the bare HTTP round trips of the same two answers.
pub(crate) struct ProviderFigures {
    /// One turn (two model calls) against the fake.
    pub(crate) turn: Figures,
    /// The same two calls as bare HTTP exchanges (POST, read the whole body; no request
    /// encoding, SSE decoding or reassembly): what the loopback and the fake cost by themselves.
    pub(crate) round_trips: Figures,
}

/// (a′): `count` lookup turns against the fake, each on a new thread, after a warm-up; then
/// `count` pairs of bare round trips to it.
pub(crate) async fn turns(
    root: &std::path::Path,
    artifact: LoadedArtifact,
    count: usize,
) -> Result<ProviderFigures, String> {
    let url = start_fake(root)?;
    let declared = Model {
        provider: Provider::Openai,
        name: Some("gpt-4o-mini".into()),
        base_url: Some(format!("{url}/v1")),
        api_key_env: None,
        params: json!({}),
        script: None,
    };
    let transport = Transport::new(ProviderOptions::default()).map_err(|_| "no HTTP client".to_owned())?;
    let client: Arc<dyn ModelClient> = tenx_models::client_for("desk_model", &declared, None, &transport)
        .map_err(|error| format!("the openai client: {error}"))?;
    let engine = engine_with(artifact, Arc::new(MemoryStore::new()), Some(client))?;
    let turn = crate::measure::time_turns(&engine, count).await?;
    let round_trips = round_trips(&url, &transport, count).await?;
    Ok(ProviderFigures { turn, round_trips })
}

/// `count` pairs of bare exchanges with the fake through the same transport: the fake's two
/// answers, posted for and read whole.
async fn round_trips(url: &str, transport: &Transport, count: usize) -> Result<Figures, String> {
    let caller = Caller {
        provider: "openai",
        model: "gpt-4o-mini".into(),
    };
    let endpoint = Endpoint {
        url: format!("{url}/v1/chat/completions")
            .parse()
            .map_err(|_| "the fake's URL".to_owned())?,
        headers: reqwest::header::HeaderMap::new(),
    };
    let body = br#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"look up 1042"}],"stream":true}"#;
    let cancel = CancellationToken::new();
    let exchange = || async {
        let response = transport
            .post(&caller, &endpoint, body, &cancel)
            .await
            .map_err(|error| error.message)?;
        transport
            .read(&caller, response, 1 << 20, false, &cancel)
            .await
            .map_err(|error| error.message)
    };
    for _ in 0..50 {
        exchange().await?;
    }
    let mut samples = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        exchange().await?;
        exchange().await?;
        samples.push(started.elapsed().as_secs_f64() * 1e6);
    }
    Ok(Figures::of(samples))
}
