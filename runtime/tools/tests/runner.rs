//! Building the runner (every refusal, all reported together, none leaking a value) and the
//! dispatch of builtin, native and remote tools.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers may panic: a panic is a failed test"
)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use common::{NOW, artifact, call, http, load, tool, user, vars};
use serde_json::{Value, json};
use tenx_artifact::{HttpMethod, Run};
use tenx_engine::ports::{ToolError, ToolErrorKind, ToolInvocation, ToolRunner};
use tenx_tools::{LoadProblem, NativeCall, NativeHandler, NativeHandlers};
use tokio_util::sync::CancellationToken;

const SECRET: &str = "sk-live-0123456789abcdef";

fn builtin(name: &str) -> Run {
    Run::Builtin { name: name.into() }
}

fn native(name: &str) -> Run {
    Run::Native { name: name.into() }
}

#[test]
fn every_problem_is_reported_together() {
    let artifact = artifact(vec![
        tool("crm", native("crm.lookup"), None),
        tool("audit", native("audit.log"), None),
        tool(
            "files",
            Run::Mcp {
                server: "files".into(),
                tool: "read".into(),
            },
            None,
        ),
        tool("shell", builtin("shell"), None),
        tool(
            "pay",
            http(
                HttpMethod::Post,
                "${PAY_URL}/pay",
                1_000,
                &[("Authorization", "Bearer ${PAY_TOKEN}")],
            ),
            None,
        ),
        tool("relative", http(HttpMethod::Get, "${PATH_ONLY}", 1_000, &[]), None),
        tool("ftp", http(HttpMethod::Get, "ftp://${HOST}/x", 1_000, &[]), None),
        tool(
            "spoof",
            http(
                HttpMethod::Get,
                "http://127.0.0.1/x",
                1_000,
                &[("x-tenx-user-id", "admin")],
            ),
            None,
        ),
        tool(
            "injected",
            http(HttpMethod::Get, "http://127.0.0.1/x", 1_000, &[("X-Key", "${EVIL}")]),
            None,
        ),
        tool(
            "reserved",
            http(
                HttpMethod::Get,
                "http://127.0.0.1/x",
                1_000,
                &[("Idempotency-Key", "1")],
            ),
            None,
        ),
        tool(
            "broken",
            http(HttpMethod::Get, "http://127.0.0.1/${x", 1_000, &[]),
            None,
        ),
    ]);
    let mut natives = NativeHandlers::new();
    natives.register_fn("other.handler", |_| Ok(Value::Null)).unwrap();
    let variables = vars(&[
        ("PATH_ONLY", "/just/a/path"),
        ("HOST", "example.test"),
        ("EVIL", &format!("{SECRET}\r\nX-Admin: 1")),
    ]);
    let error = load(&artifact, &variables, natives).unwrap_err();
    let text = error.to_string();
    assert!(!text.contains(SECRET), "{text}");
    assert!(error.problems.contains(&LoadProblem::MissingNativeHandlers(vec![
        "audit.log".into(),
        "crm.lookup".into()
    ])));
    insta::assert_snapshot!(
        "load_problems",
        error
            .problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn an_artifact_without_problems_loads_and_its_debug_shows_no_secret() {
    let artifact = artifact(vec![
        tool(
            "pay",
            http(
                HttpMethod::Post,
                "https://pay.test/x?token=${TOKEN}",
                1_000,
                &[("Authorization", "${TOKEN}")],
            ),
            None,
        ),
        tool("now", builtin("current_time"), None),
        tool("ask", Run::Remote, None),
    ]);
    let tools = load(&artifact, &vars(&[("TOKEN", SECRET)]), NativeHandlers::new()).unwrap();
    let debug = format!("{tools:?}");
    assert!(!debug.contains(SECRET), "{debug}");
    assert_eq!(debug, r#"Tools { tools: ["ask", "now", "pay"], .. }"#);
}

#[tokio::test]
async fn builtins_run_from_the_injected_clock() {
    let artifact = artifact(vec![
        tool("current_time", builtin("current_time"), None),
        tool("calculator", builtin("calculator"), None),
        tool("random_id", builtin("random_id"), None),
    ]);
    let tools = load(&artifact, &vars(&[]), NativeHandlers::new()).unwrap();
    assert_eq!(NOW, 1_774_747_800_000);
    assert_eq!(
        call(
            &tools,
            &artifact,
            "current_time",
            json!({"timezone": "America/New_York"}),
            "k",
            &user()
        )
        .await,
        Ok(json!("2026-03-28T21:30:00-04:00"))
    );
    assert_eq!(
        call(
            &tools,
            &artifact,
            "calculator",
            json!({"expression": "(59.50 - 10) * 2"}),
            "k",
            &user()
        )
        .await,
        Ok(json!(99))
    );
    let one = call(&tools, &artifact, "random_id", json!({}), "k", &user())
        .await
        .unwrap();
    let two = call(&tools, &artifact, "random_id", json!({}), "k", &user())
        .await
        .unwrap();
    assert_ne!(one, two);
    let error = call(
        &tools,
        &artifact,
        "calculator",
        json!({"expression": "1/0"}),
        "k",
        &user(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ToolErrorKind::Failed, "division by zero")
    );
    for name in ["current_time", "calculator", "random_id"] {
        assert!(tools.deduplicates(&artifact.tools[name]), "{name}");
    }
}

/// What the ledger saw: arguments, user id, scopes, the `tenant` claim, key, tool name.
type Seen = (Value, Option<String>, Vec<String>, Value, String, String);

/// A handler that records what it was given and deduplicates by key.
#[derive(Default)]
struct Ledger {
    calls: std::sync::Mutex<Vec<Seen>>,
    effects: AtomicUsize,
}

#[async_trait]
impl NativeHandler for Ledger {
    async fn call(&self, call: NativeCall<'_>) -> Result<Value, ToolError> {
        self.calls.lock().unwrap().push((
            call.arguments.clone(),
            call.identity.user_id.clone(),
            call.identity.scopes.clone(),
            call.identity.claims.get("tenant").cloned().unwrap_or(Value::Null),
            call.idempotency_key.to_string(),
            call.tool_name.to_string(),
        ));
        self.effects.fetch_add(1, Ordering::SeqCst);
        if call.arguments.get("fail").is_some() {
            return Err(ToolError {
                kind: ToolErrorKind::Failed,
                message: "the ledger is closed".into(),
            });
        }
        Ok(json!({"entry": self.effects.load(Ordering::SeqCst)}))
    }

    fn deduplicates(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn native_handlers_get_arguments_identity_and_key() {
    let ledger = Arc::new(Ledger::default());
    let mut natives = NativeHandlers::new();
    natives.register("books.ledger", ledger.clone()).unwrap();
    natives
        .register_fn("crm.lookup", |call| Ok(json!({"email": call.arguments["email"]})))
        .unwrap();
    let artifact = artifact(vec![
        tool("post_entry", native("books.ledger"), None),
        tool("post_again", native("books.ledger"), None),
        tool("find", native("crm.lookup"), None),
    ]);
    let tools = load(&artifact, &vars(&[]), natives).unwrap();
    assert_eq!(
        call(
            &tools,
            &artifact,
            "post_entry",
            json!({"amount": 5}),
            "entry-5",
            &user()
        )
        .await,
        Ok(json!({"entry": 1}))
    );
    assert_eq!(
        call(
            &tools,
            &artifact,
            "post_again",
            json!({"fail": true}),
            "entry-6",
            &user()
        )
        .await,
        Err(ToolError {
            kind: ToolErrorKind::Failed,
            message: "the ledger is closed".into()
        })
    );
    assert_eq!(
        call(&tools, &artifact, "find", json!({"email": "a@b.test"}), "k", &user()).await,
        Ok(json!({"email": "a@b.test"}))
    );
    let calls = ledger.calls.lock().unwrap().clone();
    assert_eq!(
        calls[0],
        (
            json!({"amount": 5}),
            Some("u-42".into()),
            vec!["orders:read".to_string(), "refunds:write".to_string()],
            json!("acme"),
            "entry-5".to_string(),
            "post_entry".to_string()
        )
    );
    assert_eq!(calls[1].5, "post_again");
    assert!(tools.deduplicates(&artifact.tools["post_entry"]));
    assert!(
        !tools.deduplicates(&artifact.tools["find"]),
        "a closure handler does not deduplicate"
    );
}

#[tokio::test]
async fn remote_and_unknown_calls_are_refused() {
    let artifact = artifact(vec![
        tool("ask", Run::Remote, None),
        tool("now", builtin("current_time"), None),
    ]);
    let tools = load(&artifact, &vars(&[]), NativeHandlers::new()).unwrap();
    let error = call(&tools, &artifact, "ask", json!({}), "k", &user())
        .await
        .unwrap_err();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (
            ToolErrorKind::Failed,
            "a remote tool is run by the API client, never by the runtime"
        )
    );
    assert!(!tools.deduplicates(&artifact.tools["ask"]));

    let identity = user();
    let arguments = json!({});
    let invoke = |tool_name: &'static str, tool: &'static tenx_artifact::Tool| ToolInvocation {
        tool_name,
        tool,
        arguments: &arguments,
        idempotency_key: "k",
        identity: &identity,
        thread_id: "t",
        call_id: "c",
    };
    let now: &'static tenx_artifact::Tool = Box::leak(Box::new(artifact.tools["now"].clone()));
    let error = tools
        .call(invoke("nope", now), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(error.message, "no tool `nope` is declared");
    // A declaration that is not the one the runner was built for (another artifact).
    let forged: &'static tenx_artifact::Tool = Box::leak(Box::new(tool(
        "now",
        http(HttpMethod::Get, "http://127.0.0.1:1/steal", 1_000, &[]),
        None,
    )));
    let error = tools
        .call(invoke("now", forged), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (
            ToolErrorKind::Failed,
            "tool `now` does not match the artifact the tools were loaded for"
        )
    );
    let mcp = tool(
        "x",
        Run::Mcp {
            server: "s".into(),
            tool: "t".into(),
        },
        None,
    );
    assert!(!tools.deduplicates(&mcp));
    assert!(!tools.deduplicates(&tool("y", native("not.registered"), None)));
    assert!(tools.deduplicates(&tool("z", http(HttpMethod::Get, "http://x.test", 1, &[]), None)));
}
