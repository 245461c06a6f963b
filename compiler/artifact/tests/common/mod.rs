//! Shared test helpers: a small but complete sample artifact, and ways to edit sealed bytes.

#![allow(dead_code, reason = "each test file uses a different subset of the helpers")]

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tenx_artifact::{
    Agent, Approval, Approvers, Arm, Artifact, ArtifactId, CompareOp, Condition, Decision, Edge, EdgeKind, Evidence,
    Graph, Handoff, HttpMethod, Interrupt, Model, Node, NodeKind, Provider, Risk, Route, Run, Schema, Script,
    SourceLocation, Tool, Turn, Validator, ValidatorUse, Write, WriteSource,
};

pub fn node(kind: NodeKind, reference: &str) -> Node {
    Node {
        kind,
        reference: reference.to_owned(),
    }
}

pub fn edge(from: &str, to: &str, kind: EdgeKind) -> Edge {
    Edge {
        from: from.to_owned(),
        to: to.to_owned(),
        kind,
    }
}

pub fn tool(name: &str, risk: Risk, tags: &[&str], run: Run) -> Tool {
    Tool {
        name: name.to_owned(),
        description: format!("The {name} tool."),
        parameters: json!({"type": "object", "properties": {"order_id": {"type": "string"}},
                           "required": ["order_id"], "additionalProperties": false})
        .into(),
        result: None,
        risk,
        tags: tags.iter().map(|tag| (*tag).to_owned()).collect(),
        approval: None,
        approved_by: Vec::new(),
        idempotency_key: None,
        run,
        bindings: std::collections::BTreeMap::new(),
        risk_rules: None,
        retry: None,
    }
}

/// The support desk: triage hands off to billing; billing may issue refunds (approval-gated);
/// closing an account is a tool node behind a human review step with a route.
pub fn sample() -> Artifact {
    let mut artifact = Artifact::new("tenxc 0.1.0");

    artifact.models.insert(
        "support".into(),
        Model {
            provider: Provider::Openai,
            name: Some("gpt-4o-mini".into()),
            base_url: Some("http://127.0.0.1:11434/v1".into()),
            api_key_env: Some("OPENAI_API_KEY".into()),
            params: json!({"temperature": 0.2, "max_tokens": 512}),
            script: None,
        },
    );
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

    let lookup = tool(
        "lookup_order",
        Risk::Low,
        &["read", "orders"],
        Run::Http {
            method: HttpMethod::Post,
            url: "${ORDERS_URL}/lookup".into(),
            timeout_ms: 5000,
            headers: BTreeMap::new(),
        },
    );
    let mut refund = tool(
        "issue_refund",
        Risk::High,
        &["billing", "write"],
        Run::Http {
            method: HttpMethod::Post,
            url: "${PAYMENTS_URL}/refund".into(),
            timeout_ms: 10_000,
            headers: BTreeMap::from([("Authorization".to_owned(), "Bearer ${PAY_TOKEN}".to_owned())]),
        },
    );
    refund.approval = Some(Approval {
        message: "Approve a refund of {amount_cents} cents for order {order_id}?".into(),
        reason: "tool_approval".into(),
        target: Some("order {order_id}".into()),
        response_schema: json!({"type": "object", "properties": {"approved": {"type": "boolean"}},
                                "required": ["approved"]})
        .into(),
        expires_ms: Some(86_400_000),
        on_reject: "Refund declined.".into(),
        evidence: vec![
            Evidence::Param("order_id".into()),
            Evidence::Literal("refund-policy-7".into()),
        ],
        approvers: Some(Approvers {
            roles: vec!["support_lead".into()],
            scopes: vec!["refunds:approve".into()],
        }),
        separate_duties: true,
        decision: Decision::yes_no(),
        feedback: None,
    });
    refund.idempotency_key = Some("refund-{order_id}".into());
    let mut close = tool("close_account", Risk::High, &["accounts"], Run::Remote);
    close.approved_by = vec!["manager_review".into()];
    close.result = Some(json!({"type": "object"}).into());
    let mut weather = tool(
        "weather",
        Risk::Medium,
        &[],
        Run::Mcp {
            server: "weather".into(),
            tool: "forecast".into(),
        },
    );
    // A medium tool's default confirmation, as the compiler writes it.
    weather.approval = Some(Approval {
        message: "Run `weather`?".into(),
        reason: "confirmation".into(),
        target: None,
        response_schema: json!({"type": "object", "properties": {"approved": {"type": "boolean"}},
                                "required": ["approved"]})
        .into(),
        expires_ms: None,
        on_reject: tenx_artifact::DEFAULT_ON_REJECT.into(),
        evidence: Vec::new(),
        approvers: None,
        separate_duties: false,
        decision: Decision::yes_no(),
        feedback: None,
    });
    let clock = tool(
        "now",
        Risk::Low,
        &[],
        Run::Builtin {
            name: "current_time".into(),
        },
    );
    let wipe = tool("wipe_database", Risk::Prohibited, &[], Run::Remote);
    for (name, tool) in [
        ("lookup_order", lookup),
        ("issue_refund", refund),
        ("close_account", close),
        ("weather", weather),
        ("now", clock),
        ("wipe_database", wipe),
    ] {
        artifact.tools.insert(name.into(), tool);
    }

    artifact.agents.insert(
        "triage".into(),
        Agent {
            model: "support".into(),
            prompt: "Route billing questions to billing.".into(),
            allowed_tools: vec!["lookup_order".into(), "now".into()],
            handoffs: vec![Handoff {
                tool_name: "transfer_to_billing".into(),
                target: "billing".into(),
                payload: Schema::from(json!({
                    "type": "object",
                    "properties": { "reason": { "type": "string", "description": "Why billing must look" } },
                    "required": ["reason"],
                    "additionalProperties": false
                })),
            }],
            output_schema: None,
            output_guards: Vec::new(),
            retries: 2,
            agent_tools: Vec::new(),
            input: tenx_artifact::AgentInput::Conversation,
        },
    );
    artifact.agents.insert(
        "billing".into(),
        Agent {
            model: "support".into(),
            prompt: "You are a support agent. Refund orders when asked.".into(),
            allowed_tools: vec!["issue_refund".into(), "lookup_order".into(), "weather".into()],
            handoffs: Vec::new(),
            output_schema: Some(json!({"type": "object", "properties": {"route": {"type": "string"}}}).into()),
            output_guards: Vec::new(),
            retries: 2,
            agent_tools: Vec::new(),
            input: tenx_artifact::AgentInput::Conversation,
        },
    );

    artifact.validators.insert(
        "prompt_injection".into(),
        Validator::Builtin {
            name: "prompt_injection".into(),
            args: json!({"strict": true}),
        },
    );
    artifact.validators.insert(
        "no_secrets".into(),
        Validator::Declared {
            deny_patterns: vec!["(?i)api[_-]?key".into()],
            deny_keywords: vec!["password".into()],
            max_length: Some(4000),
        },
    );

    artifact.interrupts.insert(
        "manager_review".into(),
        Interrupt {
            message: "Close the account of {customer}?".into(),
            reason: "human_review".into(),
            value: Some(json!({"customer": "{customer}"})),
            response_schema: json!({"type": "object", "properties": {"decision": {"enum": ["approve", "deny"]}},
                                    "required": ["decision"]})
            .into(),
            expires_ms: None,
            approves: vec!["close_account".into()],
            on_reject: "The manager declined.".into(),
            target: Some("customer {customer}".into()),
            evidence: vec![Evidence::State("customer".into())],
            approvers: Some(Approvers {
                roles: vec!["manager".into()],
                scopes: Vec::new(),
            }),
            separate_duties: true,
            decision: Decision {
                field: "decision".into(),
                approve: json!("approve"),
                edit: None,
                respond: None,
            },
            feedback: None,
        },
    );

    let mut nodes = BTreeMap::new();
    nodes.insert("triage".into(), node(NodeKind::Agent, "triage"));
    nodes.insert("billing".into(), node(NodeKind::Agent, "billing"));
    nodes.insert("review".into(), node(NodeKind::Interrupt, "manager_review"));
    nodes.insert("close".into(), node(NodeKind::Tool, "close_account"));
    artifact.graphs.insert(
        "support_desk".into(),
        Graph {
            entry: "triage".into(),
            nodes,
            edges: vec![
                edge("triage", "billing", EdgeKind::Handoff),
                edge("triage", "review", EdgeKind::Plain),
                edge("billing", "END", EdgeKind::Plain),
                edge("close", "END", EdgeKind::Plain),
            ],
            routes: vec![Route {
                from: "review".into(),
                by: Some("decision".into()),
                arms: vec![
                    Arm::Label {
                        label: "approve".into(),
                        target: "close".into(),
                    },
                    Arm::When {
                        condition: Condition::Or {
                            conditions: vec![
                                Condition::Compare {
                                    field: vec!["order".into(), "total".into()],
                                    op: CompareOp::Gt,
                                    value: json!(100.5),
                                },
                                Condition::Not {
                                    condition: Box::new(Condition::Truthy {
                                        field: vec!["customer".into()],
                                    }),
                                },
                                Condition::And { conditions: Vec::new() },
                            ],
                        },
                        target: "END".into(),
                    },
                    Arm::Else { target: "END".into() },
                ],
            }],
            recursion_limit: 25,
            input_validators: vec![
                ValidatorUse {
                    validator: "prompt_injection".into(),
                    args: json!({"max_length": 2000}),
                },
                ValidatorUse {
                    validator: "no_secrets".into(),
                    args: json!({}),
                },
            ],
            state_schema: json!({"type": "object", "properties": {
                "decision": {"type": "string"}, "customer": {"type": "string"},
                "order": {"type": "object"}}})
            .into(),
            entries: Vec::new(),
            // Every answer to `review` is written into `decision` before its route decides, so
            // only an approving answer takes the `approve` arm to `close`.
            writes: vec![Write {
                from: WriteSource::Interrupt {
                    node: "review".into(),
                    field: Some("decision".into()),
                },
                to: vec!["decision".into()],
            }],
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
        "graph.support_desk.node.triage".into(),
        SourceLocation {
            file: "support_desk/main.tenx".into(),
            line: 40,
            column: 3,
        },
    );
    artifact.source_map.insert(
        "tool.issue_refund".into(),
        SourceLocation {
            file: "support_desk/main.tenx".into(),
            line: 12,
            column: 1,
        },
    );
    artifact
}

/// Parses sealed bytes into the envelope as a JSON value.
pub fn envelope(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// Writes an envelope back to bytes (not necessarily canonical: the loader must not care).
pub fn to_bytes(envelope: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(envelope).unwrap()
}

/// Recomputes the envelope's id from its (edited) body, as a forger would.
pub fn reseal(envelope: &mut Value) {
    let id = ArtifactId::of_body(&envelope["artifact"]).unwrap();
    envelope["id"] = Value::String(id.to_string());
}

/// An edit of a sealed file's envelope.
pub type Edit = fn(&mut Value);

/// An edit of the sample artifact, before sealing.
pub type Break = fn(&mut Artifact);

/// Seals the sample after `edit` and asserts that `seal` refuses it as inconsistent, with a
/// message containing `expected`; `what` names the case in a failure.
pub fn seal_refused(what: &str, edit: Break, expected: &str) {
    let mut artifact = sample();
    edit(&mut artifact);
    match tenx_artifact::seal(artifact) {
        Err(tenx_artifact::SealError::Inconsistent(message)) => {
            assert!(
                message.contains(expected),
                "{what}: expected `{expected}` in `{message}`"
            );
        }
        other => panic!("{what}: expected Inconsistent, got {other:?}"),
    }
}
