//! A server for tests: one program compiled by the real compiler, an engine over the in-memory
//! store with fake tools, and the standard API's router listening on a loopback port.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::{Client, Method, RequestBuilder, Response};
use serde_json::{Value, json};
use tenx_artifact::{LoadedArtifact, Provider, TrustPolicy, load};
use tenx_engine::ports::{Clock, ModelClient, Ports, Store, ToolInvocation, ToolRunner};
use tenx_engine::testing::{FakeTools, SequentialIds};
use tenx_engine::{Engine, EngineOptions, MemoryStore, ScriptedModel};
use tenx_server::{AppState, JwtKey, JwtSettings, Mode, ServerSettings};

/// The JWT secret of every test server with auth.
pub const SECRET: &str = "serve-tests-secret-0123456789abcdef";

/// A user message.
pub fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

/// Compiles a program (errors fail the test), seals and loads it.
pub fn compile_named(name: &str, text: &str) -> LoadedArtifact {
    load(
        &tenx_tests::sealed_bytes(name, text),
        &TrustPolicy::signature_optional(),
    )
    .unwrap()
}

/// The refund example, compiled.
pub fn refund_example() -> LoadedArtifact {
    let path = tenx_tests::repo_root().join("examples/refund_approval/main.tenx");
    compile_named(
        "examples/refund_approval/main.tenx",
        &std::fs::read_to_string(path).unwrap(),
    )
}

/// Settings with auth on (development mode unless changed).
pub fn with_auth() -> ServerSettings {
    ServerSettings {
        jwt: Some(JwtSettings {
            key: JwtKey::Secret(SECRET.as_bytes().to_vec()),
            algorithm: "HS256".to_owned(),
            issuer: None,
            audience: None,
        }),
        ..ServerSettings::default()
    }
}

/// Production settings with auth and one origin.
pub fn production() -> ServerSettings {
    ServerSettings {
        mode: Mode::Production,
        origins: vec!["http://localhost:3000".to_owned()],
        ..with_auth()
    }
}

/// The ports a test replaces in a test server; each `None` keeps the default (every model plays
/// its own script, the system clock, a fresh in-memory store).
#[derive(Default)]
pub struct Setup {
    /// Every model is this client.
    pub model: Option<Arc<dyn ModelClient>>,
    /// The clock.
    pub clock: Option<Arc<dyn Clock>>,
    /// The store (two servers may share one).
    pub store: Option<Arc<MemoryStore>>,
    /// How long a request waits for a busy thread (300 ms by default).
    pub busy_wait: Option<Duration>,
    /// How long each tool call takes before the fake answers (none by default).
    pub tool_delay: Option<Duration>,
}

/// A running test server.
pub struct Server {
    pub base: String,
    pub store: Arc<MemoryStore>,
    pub tools: Arc<FakeTools>,
    pub engine: Engine,
    /// How many tool calls have begun (a slow tool counts before its delay).
    pub started_calls: Arc<AtomicUsize>,
    client: Client,
    token: Option<String>,
}

/// The fake tools, each call taking `delay` first, as a slow service would; a cancelled call
/// gives up at once, as the real runner's do.
struct Slow {
    tools: Arc<FakeTools>,
    delay: Duration,
    started: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl ToolRunner for Slow {
    async fn call(
        &self,
        invocation: ToolInvocation<'_>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Value, tenx_engine::ports::ToolError> {
        self.started.fetch_add(1, Ordering::SeqCst);
        if self.delay.is_zero() {
            return self.tools.call(invocation, cancel).await;
        }
        tokio::select! {
            () = cancel.cancelled() => {
                return Err(tenx_engine::ports::ToolError {
                    kind: tenx_engine::ports::ToolErrorKind::Failed,
                    message: "the call was cancelled".into(),
                });
            }
            () = tokio::time::sleep(self.delay) => {}
        }
        self.tools.call(invocation, cancel).await
    }

    fn deduplicates(&self, tool: &tenx_artifact::Tool) -> bool {
        self.tools.deduplicates(tool)
    }
}

impl Server {
    /// The refund example with fake tools (`issue_refund` answers `Refunded`), no auth.
    pub async fn refunds() -> Self {
        Self::start(refund_example(), refund_tools(), ServerSettings::default()).await
    }

    /// Serves `artifact` with `tools` and `settings` on 127.0.0.1, on a free port.
    pub async fn start(artifact: LoadedArtifact, tools: FakeTools, settings: ServerSettings) -> Self {
        Self::start_with(artifact, tools, settings, Setup::default()).await
    }

    /// As [`Server::start`], each tool call taking `delay`.
    pub async fn start_slow(
        artifact: LoadedArtifact,
        tools: FakeTools,
        delay: Duration,
        settings: ServerSettings,
    ) -> Self {
        let setup = Setup {
            tool_delay: Some(delay),
            ..Setup::default()
        };
        Self::start_with(artifact, tools, settings, setup).await
    }

    /// [`Server::start`] with `model` answering for every model of the artifact.
    pub async fn start_with_model(
        artifact: LoadedArtifact,
        tools: FakeTools,
        settings: ServerSettings,
        model: Arc<dyn ModelClient>,
    ) -> Self {
        let setup = Setup {
            model: Some(model),
            ..Setup::default()
        };
        Self::start_with(artifact, tools, settings, setup).await
    }

    /// As [`Self::start`], with the ports `setup` replaces.
    pub async fn start_with(
        artifact: LoadedArtifact,
        tools: FakeTools,
        settings: ServerSettings,
        setup: Setup,
    ) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let store = setup.store.unwrap_or_default();
        let tools = Arc::new(tools);
        let started_calls = Arc::new(AtomicUsize::new(0));
        let runner = Arc::new(Slow {
            tools: tools.clone(),
            delay: setup.tool_delay.unwrap_or(Duration::ZERO),
            started: started_calls.clone(),
        });
        let mut models: std::collections::BTreeMap<String, Arc<dyn ModelClient>> = Default::default();
        for (name, model) in &artifact.artifact.models {
            let client: Arc<dyn ModelClient> = match &setup.model {
                Some(client) => Arc::clone(client),
                None => {
                    assert_eq!(model.provider, Provider::Scripted, "model `{name}` is not scripted");
                    Arc::new(ScriptedModel::new())
                }
            };
            models.insert(name.clone(), client);
        }
        let ports = Ports {
            store: store.clone(),
            models,
            tools: runner,
            clock: setup
                .clock
                .unwrap_or_else(|| Arc::new(tenx_runtime::ports::SystemClock)),
            ids: Arc::new(SequentialIds::new()),
        };
        let options = EngineOptions {
            busy_wait: setup.busy_wait.unwrap_or(Duration::from_millis(300)),
            auth: settings.jwt.is_some(),
            ..EngineOptions::default()
        };
        let engine = Engine::new(artifact, ports, options).unwrap();
        Self::serve_counted(engine, store, tools, started_calls, settings).await
    }

    /// Serves a built `engine` (over `store`; `tools` is what the test inspects).
    pub async fn serve(
        engine: Engine,
        store: Arc<MemoryStore>,
        tools: Arc<FakeTools>,
        settings: ServerSettings,
    ) -> Self {
        Self::serve_counted(engine, store, tools, Arc::new(AtomicUsize::new(0)), settings).await
    }

    /// [`Server::serve`], with the counter of begun tool calls the engine's runner keeps.
    async fn serve_counted(
        engine: Engine,
        store: Arc<MemoryStore>,
        tools: Arc<FakeTools>,
        started_calls: Arc<AtomicUsize>,
        settings: ServerSettings,
    ) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let state = AppState::new(engine.clone(), settings).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let app = tenx_server::router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            base,
            store,
            tools,
            engine,
            started_calls,
            client: Client::new(),
            token: None,
        }
    }

    /// The same server, calling with `token` as the bearer.
    pub fn as_user(&self, token: &str) -> Self {
        Self {
            base: self.base.clone(),
            store: self.store.clone(),
            tools: self.tools.clone(),
            engine: self.engine.clone(),
            started_calls: self.started_calls.clone(),
            client: self.client.clone(),
            token: Some(token.to_owned()),
        }
    }

    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let builder = self.client.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(token) => builder.bearer_auth(token),
            None => builder,
        }
    }

    /// POSTs a JSON body; returns the status and the JSON answer.
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        read(self.request(Method::POST, path).json(&body).send().await.unwrap()).await
    }

    /// GETs a path; returns the status and the JSON answer.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        read(self.request(Method::GET, path).send().await.unwrap()).await
    }

    /// The stored thread, serialised: "records nothing" compares these byte for byte.
    pub async fn snapshot(&self, thread: &str) -> String {
        serde_json::to_string(&self.store.load(thread).await.unwrap()).unwrap()
    }
}

/// The refund example's tools, faked.
pub fn refund_tools() -> FakeTools {
    FakeTools::new()
        .returns("issue_refund", json!("Refunded 5900 cents for order 1042"))
        .returns("lookup_order", json!({"order_id": "1042", "paid_cents": 5900}))
}

/// Status and JSON body of a response.
pub async fn read(response: Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

/// A token for `user_id` with extra claims, signed with [`SECRET`], valid for an hour.
pub fn token(user_id: &str, extra: Value) -> String {
    let mut claims = json!({"user_id": user_id, "exp": now() + 3600});
    if let (Some(claims), Some(extra)) = (claims.as_object_mut(), extra.as_object()) {
        claims.extend(extra.clone());
    }
    sign(&claims)
}

/// Signs any claims with [`SECRET`].
pub fn sign(claims: &Value) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        claims,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}
