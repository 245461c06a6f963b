//! `tenxc inspect FILE [--trust KEY.public...] [--require-signature]`: verifies a sealed artifact
//! exactly as a host would (`tenx_artifact::load`) and prints what it will run: its id, signer,
//! graphs, agents with their tools and handoffs, tools by risk, approvals, interrupts and models.
//! A refused artifact is an error (exit 2) that says why.

use clap::Args;
use miette::{IntoDiagnostic, Result, WrapErr, miette};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tenx_artifact::{
    Approvers, Artifact, Evidence, LoadError, LoadedArtifact, NodeKind, PublicKey, Risk, Run, TrustPolicy,
};

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The sealed artifact (`.tenxg`) to verify and summarise.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Trust signatures by this public key file (`tenxc keygen` writes `NAME.public`); a
    /// signature by any other key is refused. Repeatable.
    #[arg(long, value_name = "PUBKEYFILE")]
    pub trust: Vec<PathBuf>,
    /// Refuse an unsigned artifact (and, with no `--trust`, every artifact).
    #[arg(long)]
    pub require_signature: bool,
}

pub fn run(args: &InspectArgs) -> Result<ExitCode> {
    let keys = args
        .trust
        .iter()
        .map(|path| read_public_key(path))
        .collect::<Result<Vec<_>>>()?;
    let policy = if args.require_signature {
        TrustPolicy::signature_required(keys)
    } else {
        keys.into_iter()
            .fold(TrustPolicy::signature_optional(), TrustPolicy::trust)
    };
    let loaded = load_file(&args.file, &policy)?;
    print!("{}", summary(&args.file, &loaded, &policy));
    Ok(ExitCode::SUCCESS)
}

/// Reads and verifies an artifact file; a refusal becomes an error that says why and what to do.
pub fn load_file(path: &Path, policy: &TrustPolicy) -> Result<LoadedArtifact> {
    let bytes = std::fs::read(path)
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot read `{}`", path.display()))?;
    tenx_artifact::load(&bytes, policy).map_err(|error| refusal(path, &error))
}

/// A load error as a report: one code and help per kind of refusal.
fn refusal(path: &Path, error: &LoadError) -> miette::Report {
    let (code, help) = match error {
        LoadError::InvalidEnvelope(_) => ("tenx::artifact::invalid", "this is not a sealed tenx artifact (`.tenxg`), or it is damaged; rebuild it with `tenxc build`".to_string()),
        LoadError::FormatTooNew { .. } => ("tenx::artifact::too_new", "it was built by a newer tenxc; upgrade this tool (and the runtime) to read it".to_string()),
        LoadError::FormatTooOld { .. } => ("tenx::artifact::too_old", "it was built by an older tenxc; rebuild it from its sources with `tenxc build`".to_string()),
        LoadError::UnknownFormat { .. } => ("tenx::artifact::unknown_format", "this is not a tenx graph artifact".to_string()),
        LoadError::SealMismatch { .. } => ("tenx::artifact::altered", "the file was changed after it was built; rebuild it from its sources with `tenxc build`".to_string()),
        LoadError::MissingSignature => ("tenx::artifact::unsigned", "sign it with `tenxc build --sign KEY.secret`, or drop `--require-signature`".to_string()),
        LoadError::BadSignature(_) => ("tenx::artifact::bad_signature", "the signature does not belong to this content: the file was altered or the signature copied; rebuild and sign it again".to_string()),
        LoadError::UntrustedKey { .. } => ("tenx::artifact::untrusted", "if you trust the signer, pass their public key with `--trust KEY.public`".to_string()),
        LoadError::Malformed { .. } | LoadError::Inconsistent(_) => ("tenx::artifact::malformed", "the file was edited or written by an incompatible compiler; rebuild it with `tenxc build`".to_string()),
        LoadError::PolicyViolation { .. } => ("tenx::artifact::policy", "`tenxc build` never writes this: the file was edited after it was built (a signature does not excuse it); rebuild it from its sources with `tenxc build`".to_string()),
        _ => ("tenx::artifact::refused", "rebuild it with `tenxc build`".to_string()),
    };
    miette!(code = code, help = help, "refusing `{}`: {error}", path.display())
}

/// Reads a public key file for `--trust`.
pub fn read_public_key(path: &Path) -> Result<PublicKey> {
    let text = std::fs::read_to_string(path)
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot read the public key `{}`", path.display()))?;
    PublicKey::from_text(&text).map_err(|error| {
        miette!(
            help = "pass the `NAME.public` file that `tenxc keygen -o NAME` wrote",
            "`{}` is not a public key: {error}",
            path.display()
        )
    })
}

/// The text `tenxc inspect` prints.
fn summary(path: &Path, loaded: &LoadedArtifact, policy: &TrustPolicy) -> String {
    let artifact = &loaded.artifact;
    let mut out = String::new();
    let signer = match &loaded.signer {
        None => "unsigned".to_string(),
        Some(key) if policy.trusted_keys().contains(key) => format!("{} (trusted)", key.fingerprint()),
        Some(key) => format!("{} (valid signature; no key trusted)", key.fingerprint()),
    };
    let _ = writeln!(out, "artifact  {}", path.display());
    let _ = writeln!(out, "id        {}", loaded.id);
    let _ = writeln!(out, "format    {}", artifact.format);
    let _ = writeln!(out, "compiler  {}", artifact.compiler);
    let _ = writeln!(out, "signer    {signer}");
    graphs(&mut out, artifact);
    agents(&mut out, artifact);
    tools(&mut out, artifact);
    approvals(&mut out, artifact);
    interrupts(&mut out, artifact);
    models(&mut out, artifact);
    out
}

fn graphs(out: &mut String, artifact: &Artifact) {
    let _ = writeln!(out, "\ngraphs ({})", artifact.graphs.len());
    for (name, graph) in &artifact.graphs {
        let count = |kind: NodeKind| graph.nodes.values().filter(|n| n.kind == kind).count();
        let _ = writeln!(
            out,
            "  {name}: entry {}, {}, recursion limit {}",
            graph.entry,
            plural(graph.nodes.len(), "node"),
            graph.recursion_limit
        );
        let _ = writeln!(
            out,
            "    nodes: {} agent, {} tool, {} interrupt{}; {}, {}",
            count(NodeKind::Agent),
            count(NodeKind::Tool),
            count(NodeKind::Interrupt),
            match count(NodeKind::Graph) {
                0 => String::new(),
                graphs => format!(", {graphs} subgraph"),
            },
            plural(graph.edges.len(), "edge"),
            plural(graph.routes.len(), "route")
        );
        if !graph.entries.is_empty() {
            let _ = writeln!(out, "    may also start at: {}", graph.entries.join(", "));
        }
        if graph.resume == tenx_artifact::Resume::LastAgent {
            let _ = writeln!(
                out,
                "    resumes a thread at the agent that ended its last run: {}",
                graph.resume_nodes().join(", ")
            );
        }
        for used in &graph.input_validators {
            let _ = writeln!(out, "    validates input with {} {}", used.validator, used.args);
        }
    }
}

fn agents(out: &mut String, artifact: &Artifact) {
    let _ = writeln!(out, "\nagents ({})", artifact.agents.len());
    for (name, agent) in &artifact.agents {
        let _ = writeln!(out, "  {name} (model {})", agent.model);
        let _ = writeln!(out, "    tools: {}", list(agent.allowed_tools.iter().cloned()));
        let handoffs = agent
            .handoffs
            .iter()
            .map(|h| format!("{} via {}", h.target, h.tool_name));
        let _ = writeln!(out, "    handoffs: {}", list(handoffs));
    }
}

fn tools(out: &mut String, artifact: &Artifact) {
    let _ = writeln!(out, "\ntools by risk ({})", artifact.tools.len());
    if !artifact.native_handlers.is_empty() {
        let _ = writeln!(
            out,
            "  native handlers the host must register: {}",
            artifact.native_handlers.join(", ")
        );
    }
    for risk in [Risk::Prohibited, Risk::High, Risk::Medium, Risk::Low] {
        let of_risk: Vec<_> = artifact.tools.iter().filter(|(_, t)| t.risk == risk).collect();
        if of_risk.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {}", risk_name(risk));
        for (name, tool) in of_risk {
            let run = match &tool.run {
                Run::Http {
                    method,
                    url,
                    timeout_ms,
                    headers,
                } => {
                    let method = serde_json::to_value(method).ok();
                    let method = method.as_ref().and_then(|m| m.as_str()).unwrap_or("?");
                    // Header names only: a value's text is the program's, not worth a line.
                    let headers = if headers.is_empty() {
                        String::new()
                    } else {
                        let names: Vec<&str> = headers.keys().map(String::as_str).collect();
                        format!(", headers {}", names.join(", "))
                    };
                    format!("http {method} {url} (timeout {}{headers})", duration(*timeout_ms))
                }
                Run::Native { name } => format!("native {name} (a handler of the host)"),
                Run::Remote => "remote (the API client runs it)".to_string(),
                Run::Builtin { name } => format!("builtin {name}"),
                Run::Mcp { server, tool } => format!("mcp {server}/{tool}"),
            };
            let mut gates = Vec::new();
            if tool.approval.is_some() {
                gates.push("approval".to_string());
            }
            if !tool.approved_by.is_empty() {
                gates.push(format!("approved by {}", tool.approved_by.join(", ")));
            }
            let gates = if gates.is_empty() {
                String::new()
            } else {
                format!("; {}", gates.join("; "))
            };
            let exposed = if &tool.name == name {
                String::new()
            } else {
                format!(" (model sees `{}`)", tool.name)
            };
            let _ = writeln!(out, "    {name}{exposed}: {run}{gates}");
        }
    }
}

fn approvals(out: &mut String, artifact: &Artifact) {
    let gated: Vec<_> = artifact
        .tools
        .iter()
        .filter_map(|(n, t)| Some((n, t.approval.as_ref()?)))
        .collect();
    let _ = writeln!(out, "\napprovals ({})", gated.len());
    for (name, approval) in gated {
        let _ = writeln!(out, "  {name}: {}", quoted(&approval.message));
        let _ = writeln!(
            out,
            "    reason {}, expires {}, answer {}",
            approval.reason,
            approval
                .expires_ms
                .map_or("never".to_string(), |ms| format!("after {}", duration(ms))),
            answer(&approval.response_schema)
        );
        gate(
            out,
            Gate {
                target: approval.target.as_deref(),
                evidence: &approval.evidence,
                approvers: approval.approvers.as_ref(),
                separate_duties: approval.separate_duties,
                on_reject: &approval.on_reject,
            },
        );
    }
}

/// Who may answer an approval or interrupt, what it binds, and what happens on rejection.
struct Gate<'a> {
    target: Option<&'a str>,
    evidence: &'a [Evidence],
    approvers: Option<&'a Approvers>,
    separate_duties: bool,
    on_reject: &'a str,
}

fn gate(out: &mut String, gate: Gate<'_>) {
    if let Some(target) = gate.target {
        let _ = writeln!(out, "    target: {}", quoted(target));
    }
    if !gate.evidence.is_empty() {
        let items = gate.evidence.iter().map(|item| match item {
            Evidence::Param(name) => format!("argument {name}"),
            Evidence::State(name) => format!("state {name}"),
            Evidence::Literal(text) => quoted(text),
        });
        let _ = writeln!(out, "    evidence: {}", items.collect::<Vec<_>>().join(", "));
    }
    let who = match gate.approvers {
        None => "whoever may act on the thread".to_string(),
        Some(approvers) => {
            let roles = approvers.roles.iter().map(|role| format!("role {role}"));
            let scopes = approvers.scopes.iter().map(|scope| format!("scope {scope}"));
            roles.chain(scopes).collect::<Vec<_>>().join(" or ")
        }
    };
    let duties = if gate.separate_duties {
        ", never the user who started the run"
    } else {
        ""
    };
    let _ = writeln!(out, "    approvers: {who}{duties}");
    let _ = writeln!(out, "    on reject: {}", quoted(gate.on_reject));
}

fn interrupts(out: &mut String, artifact: &Artifact) {
    let _ = writeln!(out, "\ninterrupts ({})", artifact.interrupts.len());
    for (name, interrupt) in &artifact.interrupts {
        let _ = writeln!(out, "  {name}: {}", quoted(&interrupt.message));
        let _ = writeln!(
            out,
            "    approves {}; reason {}, expires {}, answer {}",
            list(interrupt.approves.iter().cloned()),
            interrupt.reason,
            interrupt
                .expires_ms
                .map_or("never".to_string(), |ms| format!("after {}", duration(ms))),
            answer(&interrupt.response_schema)
        );
        gate(
            out,
            Gate {
                target: interrupt.target.as_deref(),
                evidence: &interrupt.evidence,
                approvers: interrupt.approvers.as_ref(),
                separate_duties: interrupt.separate_duties,
                on_reject: &interrupt.on_reject,
            },
        );
    }
}

fn models(out: &mut String, artifact: &Artifact) {
    let _ = writeln!(out, "\nmodels ({})", artifact.models.len());
    for (name, model) in &artifact.models {
        let provider = serde_json::to_value(model.provider).ok();
        let provider = provider.as_ref().and_then(|p| p.as_str()).unwrap_or("?");
        let mut text = format!("  {name}: {provider}");
        if let Some(model_name) = &model.name {
            text.push_str(&format!(" {model_name}"));
        }
        if let Some(base_url) = &model.base_url {
            text.push_str(&format!(" at {base_url}"));
        }
        if let Some(variable) = &model.api_key_env {
            text.push_str(&format!(", key from ${variable}"));
        }
        if let Some(script) = &model.script {
            if script.rules.is_empty() {
                text.push_str(&format!(", {}", plural(script.turns.len(), "scripted turn")));
            } else {
                text.push_str(&format!(", {}", plural(script.rules.len(), "scripted rule")));
            }
        }
        let _ = writeln!(out, "{text}");
    }
}

/// The properties an answer must have: `{approved}`, `{decision, comment?, edited_arguments?}`.
fn answer(schema: &tenx_artifact::Schema) -> String {
    let schema = schema.to_value();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else {
        return "any object".to_string();
    };
    let names: Vec<String> = properties
        .keys()
        .map(|k| {
            if required.contains(&k.as_str()) {
                k.clone()
            } else {
                format!("{k}?")
            }
        })
        .collect();
    format!("{{{}}}", names.join(", "))
}

fn risk_name(risk: Risk) -> &'static str {
    match risk {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
        Risk::Prohibited => "prohibited",
    }
}

/// A duration in milliseconds in its largest whole unit up to hours: `48h`, `90s`, `1500ms`.
pub fn duration(ms: u64) -> String {
    for (unit, size) in [("h", 3_600_000), ("m", 60_000), ("s", 1_000)] {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// Text from the artifact as a JSON string: quoted, control characters escaped.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn list(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
