//! A sealed file written by an independent implementation (`fixtures/hello.py`: Python's `json.dumps` with sorted
//! keys and `hashlib.sha256`) loads, and the same program built here seals to the same bytes.
//! If this test fails, the byte format changed: that needs a new format version.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed test"
)]

use std::collections::BTreeMap;

use serde_json::json;
use tenx_artifact::{
    Agent, Artifact, Edge, EdgeKind, Graph, Model, Node, NodeKind, Provider, Script, SourceLocation, TrustPolicy, Turn,
    load, seal,
};

const HELLO: &[u8] = include_bytes!("fixtures/hello.tenxg");
const HELLO_ID: &str = "sha256:3d137fd98a51c7a65eb17841019f781690d636fe389efbb881a61d4e8d23e2c8";

fn hello() -> Artifact {
    let mut artifact = Artifact::new("tenxc 0.1.0");
    artifact.models.insert(
        "demo".into(),
        Model {
            provider: Provider::Scripted,
            name: None,
            base_url: None,
            api_key_env: None,
            params: json!({}),
            script: Some(Script {
                turns: vec![Turn::Text { text: "hello".into() }],
                rules: Vec::new(),
                fallback: None,
            }),
        },
    );
    artifact.agents.insert(
        "greeter".into(),
        Agent {
            model: "demo".into(),
            prompt: "Say hello.".into(),
            allowed_tools: Vec::new(),
            handoffs: Vec::new(),
            output_schema: None,
            output_guards: Vec::new(),
            retries: 2,
            agent_tools: Vec::new(),
            input: tenx_artifact::AgentInput::Conversation,
        },
    );
    let nodes = BTreeMap::from([(
        "greeter".to_owned(),
        Node {
            kind: NodeKind::Agent,
            reference: "greeter".into(),
        },
    )]);
    artifact.graphs.insert(
        "hello".into(),
        Graph {
            entry: "greeter".into(),
            nodes,
            edges: vec![Edge {
                from: "greeter".into(),
                to: "END".into(),
                kind: EdgeKind::Plain,
            }],
            routes: Vec::new(),
            recursion_limit: 25,
            input_validators: Vec::new(),
            state_schema: json!({"type": "object"}).into(),
            entries: Vec::new(),
            writes: Vec::new(),
            visit_limits: Vec::new(),
            on_error: Vec::new(),
            resume: tenx_artifact::Resume::Entry,
            retries: Vec::new(),
            forks: Vec::new(),
            reducers: Vec::new(),
            subgraphs: Vec::new(),
        },
    );
    artifact.source_map.insert(
        "graph.hello".into(),
        SourceLocation {
            file: "hello.tenx".into(),
            line: 1,
            column: 1,
        },
    );
    artifact
}

#[test]
fn the_golden_file_loads() {
    let loaded = load(HELLO, &TrustPolicy::signature_optional()).unwrap();
    assert_eq!(loaded.id.as_str(), HELLO_ID);
    assert_eq!(loaded.artifact, hello());
}

#[test]
fn the_same_program_seals_to_the_golden_bytes() {
    let sealed = seal(hello()).unwrap();
    assert_eq!(sealed.id().as_str(), HELLO_ID);
    assert_eq!(
        String::from_utf8(sealed.to_bytes()).unwrap(),
        String::from_utf8(HELLO.to_vec()).unwrap()
    );
}
