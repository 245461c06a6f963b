//! What every measurement needs: the benchmark's sealed artifact, an engine over a given store
//! with the scripted model and zero-latency fake tools, and the requests the runs send.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::json;
use tenx_artifact::{LoadedArtifact, TrustPolicy, load};
use tenx_engine::ports::{ModelClient, Ports, Store};
use tenx_engine::testing::{FakeTools, ManualClock, SequentialIds};
use tenx_engine::wire::{Message, Role};
use tenx_engine::{Engine, EngineOptions, ResumeAnswer, RunRequest, ScriptedModel};

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Seals `bench/programs/refund_desk.tenx` with the release `tenxc` into `target/bench/` and
/// returns the artifact's path.
pub(crate) fn build_artifact(root: &Path) -> Result<PathBuf, String> {
    let tenxc = root.join("target/release/tenxc");
    if !tenxc.is_file() {
        return Err("build the release compiler first: cargo build --release -p tenxc".to_owned());
    }
    let source = root.join("bench/programs/refund_desk.tenx");
    let out = root.join("target/bench/refund_desk.tenxg");
    std::fs::create_dir_all(root.join("target/bench")).map_err(|error| format!("creating target/bench: {error}"))?;
    let built = Command::new(&tenxc)
        .arg("build")
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .output();
    match built {
        Ok(output) if output.status.success() => Ok(out),
        _ => Err(format!("`tenxc build {}` failed", source.display())),
    }
}

/// Reads and verifies the sealed artifact.
pub(crate) fn load_artifact(path: &Path) -> Result<LoadedArtifact, String> {
    let bytes = std::fs::read(path).map_err(|error| format!("reading {}: {error}", path.display()))?;
    load(&bytes, &TrustPolicy::signature_optional()).map_err(|_| "the benchmark artifact does not load".to_owned())
}

/// An engine over `store`: the artifact's models scripted, its tools answering at once.
pub(crate) fn engine(artifact: LoadedArtifact, store: Arc<dyn Store>) -> Result<Engine, String> {
    engine_with(artifact, store, None)
}

/// An engine over `store` whose models are all `client` (scripted when `None`), its tools
/// answering at once.
pub(crate) fn engine_with(
    artifact: LoadedArtifact,
    store: Arc<dyn Store>,
    client: Option<Arc<dyn ModelClient>>,
) -> Result<Engine, String> {
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    for name in artifact.artifact.models.keys() {
        let model: Arc<dyn ModelClient> = match &client {
            Some(client) => Arc::clone(client),
            None => Arc::new(ScriptedModel::new()),
        };
        models.insert(name.clone(), model);
    }
    let tools = FakeTools::new()
        .returns("lookup_order", json!({"order_id": "1042", "status": "shipped"}))
        .returns("issue_refund", json!("refunded"));
    let ports = Ports {
        store,
        models,
        tools: Arc::new(tools),
        clock: Arc::new(ManualClock::new(1_796_083_200_000)),
        ids: Arc::new(SequentialIds::new()),
    };
    Engine::new(artifact, ports, EngineOptions::default())
        .map_err(|error| format!("the engine refused the artifact: {error}"))
}

/// A user message on `thread`: `look up 1042` runs the lookup turn, `refund 1042` pauses at the
/// refund's approval.
pub(crate) fn ask(thread: &str, text: &str) -> RunRequest {
    RunRequest {
        thread_id: Some(thread.to_owned()),
        messages: vec![Message::text(String::new(), Role::User, text, 0.0)],
        ..RunRequest::default()
    }
}

/// The approval of the open question on `thread`.
pub(crate) fn approve(thread: &str) -> RunRequest {
    RunRequest {
        thread_id: Some(thread.to_owned()),
        resume: Some(ResumeAnswer {
            value: json!({"approved": true}),
            interrupt_id: None,
            note: None,
        }),
        ..RunRequest::default()
    }
}
