//! One attached MCP server: its connection (made at attach, made again with backoff after it
//! dies), the declared tools that run on it with their current verdicts, and the handler that
//! re-checks them when the server announces `notifications/tools/list_changed`.
//!
//! Nothing here ever adds a tool: the declared tools are fixed at attach (from the artifact), a
//! listing only decides whether each still matches its declaration. A declared tool that no
//! longer matches (removed, or its `inputSchema` changed incompatibly) fails closed at its next
//! call, and recovers when a later listing matches again.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, Tool as ListedTool};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService};
use rmcp::transport::common::client_side_sse::NeverRetry;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Map, Value};
use tenx_engine::ports::{ToolError, ToolErrorKind, ToolInvocation};
use tokio::time::Instant;

use crate::compat;
use crate::config::{ResolvedServer, ResolvedTransport};
use crate::listen::ListenClient;
use crate::result::{error, map_failure, map_result};

/// The first wait before reconnecting after a failed attempt; it doubles per failure.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait between reconnect attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A declared tool that runs on this server.
#[derive(Debug, Clone)]
pub(crate) struct Declared {
    /// Its name on the server (`run.tool`).
    pub(crate) remote: String,
    /// Its declared `parameters`.
    pub(crate) parameters: Value,
}

/// Whether a declared tool matches the server's last listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It exists and its `inputSchema` accepts what the declaration allows.
    Matches,
    /// The server does not list it.
    Missing,
    /// Its `inputSchema` does not accept what the declaration allows: why.
    Mismatch(Vec<String>),
    /// The server announced a change that could not be listed yet: list before calling.
    Unchecked,
}

/// The declared tools of one server and their verdicts, shared with the notification handler.
#[derive(Debug)]
pub(crate) struct Checks {
    /// The server's configured name.
    pub(crate) server: String,
    /// The declared tools, by declared name.
    pub(crate) declared: BTreeMap<String, Declared>,
    verdicts: Mutex<BTreeMap<String, Verdict>>,
    /// The names the server listed last (what it offers; never what a model sees).
    listed: Mutex<Vec<String>>,
    /// How many listings were applied (attach, reconnects and announced changes).
    listings: AtomicU64,
    /// How many `tools/list_changed` notifications arrived.
    announcements: AtomicU64,
    timeout: Duration,
}

impl Checks {
    pub(crate) fn new(server: &str, declared: BTreeMap<String, Declared>, timeout: Duration) -> Self {
        let verdicts = declared.keys().map(|name| (name.clone(), Verdict::Unchecked)).collect();
        Self {
            server: server.to_string(),
            declared,
            verdicts: Mutex::new(verdicts),
            listed: Mutex::new(Vec::new()),
            listings: AtomicU64::new(0),
            announcements: AtomicU64::new(0),
            timeout,
        }
    }

    /// Checks every declared tool against `listed` and records the verdicts.
    pub(crate) fn apply(&self, listed: &[ListedTool]) {
        let mut verdicts = BTreeMap::new();
        for (name, declared) in &self.declared {
            let verdict = match listed.iter().find(|tool| tool.name == declared.remote.as_str()) {
                None => Verdict::Missing,
                Some(tool) => {
                    let schema = Value::Object(tool.input_schema.as_ref().clone());
                    let problems = compat::problems(&declared.parameters, &schema);
                    if problems.is_empty() {
                        Verdict::Matches
                    } else {
                        Verdict::Mismatch(problems)
                    }
                }
            };
            verdicts.insert(name.clone(), verdict);
        }
        *self.verdicts.lock().unwrap_or_else(PoisonError::into_inner) = verdicts;
        let mut names: Vec<String> = listed.iter().map(|tool| tool.name.to_string()).collect();
        names.sort();
        *self.listed.lock().unwrap_or_else(PoisonError::into_inner) = names;
        self.listings.fetch_add(1, Ordering::SeqCst);
    }

    /// Every declared tool now unchecked (a change was announced and could not be listed).
    fn forget(&self) {
        let mut verdicts = self.verdicts.lock().unwrap_or_else(PoisonError::into_inner);
        for verdict in verdicts.values_mut() {
            *verdict = Verdict::Unchecked;
        }
    }

    pub(crate) fn verdict(&self, name: &str) -> Verdict {
        self.verdicts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned()
            .unwrap_or(Verdict::Unchecked)
    }

    pub(crate) fn verdicts(&self) -> BTreeMap<String, Verdict> {
        self.verdicts.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub(crate) fn listed(&self) -> Vec<String> {
        self.listed.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub(crate) fn listings(&self) -> u64 {
        self.listings.load(Ordering::SeqCst)
    }

    pub(crate) fn announcements(&self) -> u64 {
        self.announcements.load(Ordering::SeqCst)
    }

    /// Lists the server's tools through `peer` and applies the listing; on failure every
    /// declared tool becomes unchecked (it is listed again before its next call).
    async fn relist(&self, peer: &Peer<RoleClient>) -> bool {
        match tokio::time::timeout(self.timeout, peer.list_all_tools()).await {
            Ok(Ok(listed)) => {
                self.apply(&listed);
                true
            }
            _ => {
                self.forget();
                false
            }
        }
    }
}

/// The client side of one connection: answers nothing the server asks beyond the defaults
/// (no roots, no sampling, no elicitation are offered) and re-checks on `tools/list_changed`.
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    checks: Arc<Checks>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        // Fail closed at once: until the new listing is checked, a call lists again first, so
        // no call reaches a tool the server changed after announcing it.
        self.checks.forget();
        self.checks.announcements.fetch_add(1, Ordering::SeqCst);
        let checks = Arc::clone(&self.checks);
        let peer = context.peer;
        // Listed on its own task: the connection's loop must keep running to receive the answer.
        tokio::spawn(async move { checks.relist(&peer).await });
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("tenx", env!("CARGO_PKG_VERSION")),
        )
    }
}

type Service = RunningService<RoleClient, Handler>;

/// The connection's state.
enum Link {
    /// Connected; the number tells connections apart (a reset names the one it gives up).
    Up(Service, u64),
    Down {
        failures: u32,
        retry_at: Instant,
    },
}

/// One attached server.
pub(crate) struct Server {
    pub(crate) checks: Arc<Checks>,
    config: ResolvedServer,
    link: tokio::sync::Mutex<Link>,
    /// How many connections were made (numbers them).
    connections: AtomicU64,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Server")
            .field("name", &self.checks.server)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The HTTP client for streamable-HTTP servers: rustls with ring, no redirects, no proxy.
fn http_client() -> Result<reqwest::Client, String> {
    let _already_installed = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(concat!("tenx/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|_| "the HTTP client could not be built".to_string())
}

/// Connects and lists the tools. The reason on failure names no URL, header or variable value.
async fn connect(config: &ResolvedServer, checks: &Arc<Checks>) -> Result<(Service, Vec<ListedTool>), String> {
    let handler = Handler {
        checks: Arc::clone(checks),
    };
    let attempt = async {
        let service = match &config.transport {
            ResolvedTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut process = tokio::process::Command::new(command);
                process.args(args).env_clear().envs(env).kill_on_drop(true);
                if let Some(cwd) = cwd {
                    process.current_dir(cwd);
                }
                let (transport, _stderr) = TokioChildProcess::builder(process)
                    .stderr(Stdio::inherit())
                    .spawn()
                    .map_err(|failure| format!("could not start `{command}`: {}", failure.kind()))?;
                handler
                    .serve(transport)
                    .await
                    .map_err(|_| "the server did not complete the MCP handshake".to_string())?
            }
            ResolvedTransport::Http { url, headers } => {
                let mut settings =
                    StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers.clone());
                // A broken answer stream fails its call at once (this runtime reconnects at the
                // next call, and checks the tools again) instead of waiting out the timeout. The
                // listen stream, which rmcp would then not open again either, is kept open by
                // `ListenClient` ([`crate::listen`]).
                settings.retry_config = Arc::new(NeverRetry::default());
                let transport = StreamableHttpClientTransport::with_client(ListenClient::new(http_client()?), settings);
                handler
                    .serve(transport)
                    .await
                    .map_err(|_| "could not connect, or the server did not complete the MCP handshake".to_string())?
            }
        };
        let listed = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|_| "the server did not answer `tools/list`".to_string())?;
        Ok((service, listed))
    };
    tokio::time::timeout(config.timeout, attempt)
        .await
        .map_err(|_| format!("no answer within {} ms", config.timeout.as_millis()))?
}

/// The wait after `failures` failed attempts in a row (reconnecting, or opening the listen
/// stream again).
pub(crate) fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_BACKOFF.saturating_mul(1_u32 << doublings).min(MAX_BACKOFF)
}

impl Server {
    /// Connects, lists and checks every declared tool: the server, or why it cannot be attached.
    pub(crate) async fn attach(
        name: &str,
        config: &ResolvedServer,
        declared: BTreeMap<String, Declared>,
    ) -> Result<Self, String> {
        let checks = Arc::new(Checks::new(name, declared, config.timeout));
        let (service, listed) = connect(config, &checks).await?;
        checks.apply(&listed);
        Ok(Self {
            checks,
            config: config.clone(),
            link: tokio::sync::Mutex::new(Link::Up(service, 0)),
            connections: AtomicU64::new(1),
        })
    }

    /// A live peer: the current connection, or a new one (listed and checked again) when it died
    /// and the backoff allows an attempt now.
    async fn peer(&self) -> Result<(Peer<RoleClient>, u64), ToolError> {
        let mut link = self.link.lock().await;
        if let Link::Up(service, number) = &*link {
            if !service.is_closed() && !service.peer().is_transport_closed() {
                return Ok((service.peer().clone(), *number));
            }
            *link = Link::Down {
                failures: 0,
                retry_at: Instant::now(),
            };
        }
        let Link::Down { failures, retry_at } = &*link else {
            return Err(error(
                ToolErrorKind::Connection,
                "the MCP connection is in an unknown state",
            ));
        };
        let (failures, retry_at) = (*failures, *retry_at);
        let now = Instant::now();
        if now < retry_at {
            return Err(error(
                ToolErrorKind::Connection,
                format!(
                    "MCP server `{}` is down; the next attempt to reconnect is in {} ms",
                    self.checks.server,
                    retry_at.saturating_duration_since(now).as_millis()
                ),
            ));
        }
        match connect(&self.config, &self.checks).await {
            Ok((service, listed)) => {
                self.checks.apply(&listed);
                let peer = service.peer().clone();
                let number = self.connections.fetch_add(1, Ordering::SeqCst);
                *link = Link::Up(service, number);
                Ok((peer, number))
            }
            Err(reason) => {
                let failures = failures.saturating_add(1);
                *link = Link::Down {
                    failures,
                    retry_at: Instant::now() + backoff(failures),
                };
                Err(error(
                    ToolErrorKind::Connection,
                    format!("could not reconnect to MCP server `{}`: {reason}", self.checks.server),
                ))
            }
        }
    }

    /// Gives up connection `number` (its call broke or timed out: the server may be gone, or the
    /// session lost), so the next call connects again and lists and checks the tools again.
    /// A newer connection made meanwhile is kept.
    async fn reset(&self, number: u64) {
        let mut link = self.link.lock().await;
        if matches!(&*link, Link::Up(_, current) if *current == number) {
            *link = Link::Down {
                failures: 0,
                retry_at: Instant::now(),
            };
        }
    }

    /// Runs one call of the declared tool `name`.
    pub(crate) async fn call(&self, name: &str, invocation: &ToolInvocation<'_>) -> Result<Value, ToolError> {
        let Some(declared) = self.checks.declared.get(name) else {
            return Err(error(ToolErrorKind::Failed, format!("no tool `{name}` is declared")));
        };
        let (peer, number) = self.peer().await?;
        if self.checks.verdict(name) == Verdict::Unchecked {
            self.checks.relist(&peer).await;
        }
        match self.checks.verdict(name) {
            Verdict::Matches => {}
            Verdict::Missing => {
                return Err(error(
                    ToolErrorKind::Failed,
                    format!(
                        "MCP server `{}` no longer has tool `{}` (declared as `{name}`), so it is not called",
                        self.checks.server, declared.remote
                    ),
                ));
            }
            Verdict::Mismatch(problems) => {
                return Err(error(
                    ToolErrorKind::Failed,
                    format!(
                        "MCP tool `{}` on server `{}` no longer matches the declaration of `{name}`, so it is not called: {}",
                        declared.remote,
                        self.checks.server,
                        problems.join("; ")
                    ),
                ));
            }
            Verdict::Unchecked => {
                return Err(error(
                    ToolErrorKind::Connection,
                    format!(
                        "MCP server `{}` announced a change to its tools that could not be checked, so `{name}` is not called",
                        self.checks.server
                    ),
                ));
            }
        }
        let arguments = match invocation.arguments {
            Value::Object(arguments) => arguments.clone(),
            Value::Null => Map::new(),
            _ => {
                return Err(error(
                    ToolErrorKind::Failed,
                    "the arguments of an MCP tool must be an object",
                ));
            }
        };
        let request = CallToolRequestParams::new(declared.remote.clone()).with_arguments(arguments);
        // Dropping the request (timeout, or the runner's cancellation) sends
        // `notifications/cancelled` to the server.
        let outcome = match tokio::time::timeout(self.config.timeout, peer.call_tool(request)).await {
            Err(_) => Err(error(
                ToolErrorKind::Timeout,
                format!(
                    "MCP server `{}` did not answer within {} ms",
                    self.checks.server,
                    self.config.timeout.as_millis()
                ),
            )),
            Ok(Err(failure)) => Err(map_failure(&self.checks.server, name, failure)),
            Ok(Ok(answer)) => map_result(name, answer, invocation.tool.result.as_ref()),
        };
        if let Err(failure) = &outcome
            && matches!(failure.kind, ToolErrorKind::Connection | ToolErrorKind::Timeout)
        {
            self.reset(number).await;
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_a_ceiling() {
        assert_eq!(backoff(1), Duration::from_millis(200));
        assert_eq!(backoff(2), Duration::from_millis(400));
        assert_eq!(backoff(5), Duration::from_millis(3_200));
        assert_eq!(backoff(20), MAX_BACKOFF);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }
}
