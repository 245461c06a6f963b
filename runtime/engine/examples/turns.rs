//! Runs the engine benchmark's turn (user → agent → tool → agent on a new thread, in-memory
//! store, scripted model, zero-latency fake tools) a given number of times, untimed, so a
//! profiler sees nothing else: the artifact comes on standard input (the bench builds it at
//! `target/bench/refund_desk.tenxg`). Instructions per turn are the difference of two runs:
//!
//! ```sh
//! cargo build --release -p tenx-engine --example turns
//! valgrind --tool=callgrind ./target/release/examples/turns 1   < target/bench/refund_desk.tenxg
//! valgrind --tool=callgrind ./target/release/examples/turns 101 < target/bench/refund_desk.tenxg
//! ```
//!
//! (the second total minus the first, over 100). See CONTRIBUTING.md, "Measuring speed".

use std::collections::BTreeMap;
use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;
use tenx_artifact::{TrustPolicy, load};
use tenx_engine::ports::{ModelClient, NullEvents, Ports};
use tenx_engine::testing::{FakeTools, ManualClock, SequentialIds};
use tenx_engine::wire::{Message, Role};
use tenx_engine::{Engine, EngineOptions, MemoryStore, RunRequest, ScriptedModel};

fn main() -> ExitCode {
    let turns: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let mut bytes = Vec::new();
    if std::io::stdin().read_to_end(&mut bytes).is_err() {
        eprintln!("cannot read the artifact from standard input");
        return ExitCode::from(2);
    }
    let Ok(artifact) = load(&bytes, &TrustPolicy::signature_optional()) else {
        eprintln!("standard input is not a sealed artifact (give target/bench/refund_desk.tenxg)");
        return ExitCode::from(2);
    };
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    for name in artifact.artifact.models.keys() {
        models.insert(name.clone(), Arc::new(ScriptedModel::new()));
    }
    let tools = FakeTools::new()
        .returns("lookup_order", json!({"order_id": "1042", "status": "shipped"}))
        .returns("issue_refund", json!("refunded"));
    let ports = Ports {
        store: Arc::new(MemoryStore::new()),
        models,
        tools: Arc::new(tools),
        clock: Arc::new(ManualClock::new(1_796_083_200_000)),
        ids: Arc::new(SequentialIds::new()),
    };
    let Ok(engine) = Engine::new(artifact, ports, EngineOptions::default()) else {
        eprintln!("the engine refused the artifact");
        return ExitCode::from(2);
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_time().build() else {
        eprintln!("cannot start a tokio runtime");
        return ExitCode::from(2);
    };
    runtime.block_on(async {
        for index in 0..turns {
            let request = RunRequest {
                thread_id: Some(format!("t{index}")),
                messages: vec![Message::text(String::new(), Role::User, "look up 1042", 0.0)],
                ..RunRequest::default()
            };
            if let Err(error) = engine.run(request, &mut NullEvents).await {
                eprintln!("turn {index} failed: {error:?}");
                return ExitCode::from(1);
            }
        }
        ExitCode::SUCCESS
    })
}
