//! Figures for the provider adapters (run with `cargo run --release -p tenx-models --example
//! provider_bench --features test-support`):
//!
//! - reassembling a 1,000-chunk streamed answer (text, and tool-call arguments), from the bytes
//!   through SSE decoding to the reply, median of many runs (target: under 1 ms);
//! - one model call against the local fake OpenAI server (streamed, loopback HTTP) beside one
//!   call of the scripted model: the difference is the adapter's overhead per call.
//!
//! Medians, never single runs: the machine is shared and noisy.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark binary: a failure should stop it"
)]

use std::convert::Infallible;
use std::time::{Duration, Instant};

use serde_json::json;
use tenx_artifact::{Model, Provider, Script, Turn};
use tenx_engine::ScriptedModel;
use tenx_engine::ports::{DeltaSink, ModelClient, ModelRequest};
use tenx_engine::wire::{Message, Role};
use tenx_models::call::{Assembler, assemble};
use tenx_models::failure::Caller;
use tenx_models::openai::StreamAssembler;
use tenx_models::sse::Events;
use tenx_models::test_support::{Canned, FakeProvider};
use tenx_models::{ProviderOptions, Transport};
use tokio_util::sync::CancellationToken;

/// Counts pieces.
struct Count(usize);

impl DeltaSink for Count {
    fn text(&mut self, _: &str) {
        self.0 += 1;
    }
}

/// One chunk in OpenAI's shape with `delta`.
fn chunk(delta: &serde_json::Value, finish: Option<&str>) -> String {
    let chunk = json!({"id": "chatcmpl-AxJ3kQ9nW2v7b1YqL0cT4mZrP8sDf", "object": "chat.completion.chunk",
        "created": 1_738_000_000, "model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_72ed7ab54c",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}], "usage": null});
    format!("data: {chunk}\n\n")
}

/// A streamed answer of `count` text chunks, or of one tool call in `count` argument pieces.
fn stream(count: usize, tool: bool) -> Vec<u8> {
    let mut body = String::new();
    if tool {
        body.push_str(&chunk(
            &json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_1",
                "type": "function", "function": {"name": "write", "arguments": ""}}]}),
            None,
        ));
    }
    for index in 0..count {
        let delta = if tool {
            json!({"tool_calls": [{"index": 0, "function": {"arguments": format!("w{index} ")}}]})
        } else {
            json!({"content": format!(" word{index}")})
        };
        body.push_str(&chunk(&delta, None));
    }
    body.push_str(&chunk(&json!({}), Some("stop")));
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// The median of `runs`.
fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs.get(runs.len() / 2).copied().unwrap_or_default()
}

/// Reassembles `body` (read in pieces of 1,400 bytes, as a network delivers it) once.
async fn reassemble(body: &[u8], caller: &Caller) -> Duration {
    let pieces: Vec<Result<bytes::Bytes, Infallible>> = body
        .chunks(1_400)
        .map(|piece| Ok(bytes::Bytes::copy_from_slice(piece)))
        .collect();
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let events = Events::from_bytes(futures_util::stream::iter(pieces), Duration::from_secs(5));
    let mut sink = Count(0);
    let reply = assemble(caller, events, StreamAssembler::new(None), None, &mut sink, &cancel)
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(!reply.text.is_empty() || !reply.tool_calls.is_empty());
    elapsed
}

/// Reassembles already-framed `data` payloads once (no SSE decoding).
fn assemble_only(data: &[String], caller: &Caller) -> Duration {
    let started = Instant::now();
    let mut assembler = StreamAssembler::new(None);
    let mut sink = Count(0);
    for payload in data {
        assembler.push(caller, payload, &mut sink).unwrap();
    }
    let reply = assembler.finish(caller, None, &mut sink).unwrap();
    let elapsed = started.elapsed();
    assert!(!reply.text.is_empty() || !reply.tool_calls.is_empty());
    elapsed
}

/// Decodes the SSE framing of `body` once (no reassembly).
async fn decode_only(body: &[u8], caller: &Caller) -> Duration {
    let pieces: Vec<Result<bytes::Bytes, Infallible>> = body
        .chunks(1_400)
        .map(|piece| Ok(bytes::Bytes::copy_from_slice(piece)))
        .collect();
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let mut events = Events::from_bytes(futures_util::stream::iter(pieces), Duration::from_secs(5));
    let mut count = 0_usize;
    while events.next(caller, &cancel).await.unwrap().is_some() {
        count += 1;
    }
    let elapsed = started.elapsed();
    assert!(count > 1_000);
    elapsed
}

/// Median time of `runs` calls of `client`.
async fn calls(client: &dyn ModelClient, model: &Model, runs: usize) -> Duration {
    let messages = [std::sync::Arc::new(Message::text(
        "m",
        Role::User,
        "Refund order 1042, 59.00",
        0.0,
    ))];
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let request = ModelRequest {
            model_name: "m",
            model,
            thread_id: "t",
            node: "n",
            agent: "a",
            system: "You are a support agent.".into(),
            messages: &messages,
            tools: Vec::new().into(),
            output_schema: None,
            run_input: "Refund order 1042, 59.00",
            cursor: None,
            run_id: "r",
        };
        let started = Instant::now();
        client
            .complete(request, &mut Count(0), &CancellationToken::new())
            .await
            .unwrap();
        times.push(started.elapsed());
    }
    median(times)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let caller = Caller {
        provider: "openai",
        model: "bench".into(),
    };
    for (label, tool) in [("text", false), ("tool-call arguments", true)] {
        let body = stream(1_000, tool);
        for _ in 0..20 {
            reassemble(&body, &caller).await;
        }
        let mut runs = Vec::new();
        for _ in 0..300 {
            runs.push(reassemble(&body, &caller).await);
        }
        println!(
            "reassemble a 1,000-chunk stream ({label}, {} KB), bytes to reply: median {:?}",
            body.len() / 1024,
            median(runs)
        );
        let data: Vec<String> = String::from_utf8(body.clone())
            .unwrap()
            .split("\n\n")
            .filter_map(|event| event.strip_prefix("data: "))
            .map(str::to_owned)
            .collect();
        let assembled: Vec<Duration> = (0..300).map(|_| assemble_only(&data, &caller)).collect();
        let mut decoded = Vec::new();
        for _ in 0..300 {
            decoded.push(decode_only(&body, &caller).await);
        }
        println!(
            "  of which: SSE decoding median {:?}, reassembly of the decoded events median {:?}",
            median(decoded),
            median(assembled)
        );
    }

    let answer = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openai/text.sse")).unwrap();
    let fake = FakeProvider::start([Canned::sse(answer, 1_400)]).await.unwrap();
    let declared = Model {
        provider: Provider::Openai,
        name: Some("gpt-4o-mini".into()),
        base_url: Some(format!("{}/v1", fake.url())),
        api_key_env: None,
        params: json!({}),
        script: None,
    };
    let transport = Transport::new(ProviderOptions::default()).unwrap();
    let openai = tenx_models::client_for("m", &declared, None, &transport).unwrap();
    calls(openai.as_ref(), &declared, 20).await;
    let provider = calls(openai.as_ref(), &declared, 300).await;
    let scripted_model = Model {
        provider: Provider::Scripted,
        name: None,
        base_url: None,
        api_key_env: None,
        params: json!({}),
        script: Some(Script {
            turns: Vec::new(),
            rules: Vec::new(),
            fallback: Some(Turn::Text {
                text: "Your refund of 59.00 was issued.".into(),
            }),
        }),
    };
    let scripted = calls(&ScriptedModel::new(), &scripted_model, 300).await;
    println!("one call, scripted model: median {scripted:?}");
    println!("one call, openai against the local fake (loopback HTTP, streamed): median {provider:?}");
    println!(
        "overhead per call (openai over loopback minus scripted): {:?}",
        provider.saturating_sub(scripted)
    );
}
