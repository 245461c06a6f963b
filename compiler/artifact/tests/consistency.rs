//! Each structural rule: `seal` refuses an artifact that breaks it, naming the problem; the risk
//! policy is checked after them (its rules are tested in `policy.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::{Break, edge, node, sample, seal_refused};
use serde_json::json;
use tenx_artifact::{
    Arm, Artifact, EdgeKind, Handoff, NodeKind, PolicyViolation, Route, Schema, SealError, Write, WriteSource, seal,
};

fn graph(artifact: &mut Artifact) -> &mut tenx_artifact::Graph {
    artifact.graphs.get_mut("support_desk").unwrap()
}

#[test]
fn references_must_resolve() {
    let cases: [(&str, Break, &str); 8] = [
        (
            "entry",
            |a| graph(a).entry = "nowhere".into(),
            "entry `nowhere` is not a node",
        ),
        (
            "node ref",
            |a| graph(a).nodes.get_mut("close").unwrap().reference = "shred".into(),
            "node `close` runs unknown tool `shred`",
        ),
        (
            "node kind",
            |a| {
                // The answer written from `review` would be refused first.
                graph(a).writes.clear();
                graph(a).nodes.get_mut("review").unwrap().kind = NodeKind::Agent;
            },
            "node `review` runs unknown agent `manager_review`",
        ),
        (
            "edge target",
            |a| graph(a).edges.retain(|e| e.from != "close"),
            "node `close` has no way on",
        ),
        (
            "edge end",
            |a| graph(a).edges.push(edge("close", "nowhere", EdgeKind::Plain)),
            "leads to unknown node `nowhere`",
        ),
        (
            "agent model",
            |a| a.agents.get_mut("triage").unwrap().model = "gpt".into(),
            "unknown model `gpt`",
        ),
        (
            "input validator",
            |a| graph(a).input_validators[0].validator = "nope".into(),
            "input validator `nope` does not exist",
        ),
        (
            "approving interrupt",
            |a| a.tools.get_mut("close_account").unwrap().approved_by = vec!["boss".into()],
            "unknown interrupt `boss`",
        ),
    ];
    for (what, edit, expected) in cases {
        seal_refused(what, edit, expected);
    }
}

#[test]
fn every_node_has_exactly_one_way_on() {
    let cases: [(&str, Break, &str); 6] = [
        (
            "route and edge",
            |a| graph(a).edges.push(edge("review", "END", EdgeKind::Plain)),
            "node `review` has both a route and a plain edge",
        ),
        (
            "two routes",
            |a| {
                let route = graph(a).routes[0].clone();
                graph(a).routes.push(route);
            },
            "routes must be sorted by `from`, one per node",
        ),
        (
            "else not last",
            |a| graph(a).routes[0].arms.reverse(),
            "the `else` arm must be the last arm",
        ),
        (
            "no arms",
            |a| graph(a).routes[0].arms.clear(),
            "route from `review` has no arms",
        ),
        (
            "label twice",
            |a| {
                let arm = Arm::Label {
                    label: "approve".into(),
                    target: "END".into(),
                };
                graph(a).routes[0].arms.insert(0, arm);
            },
            "matches label `approve` twice",
        ),
        (
            "END as node",
            |a| {
                graph(a).nodes.insert("END".into(), node(NodeKind::Tool, "now"));
            },
            "`END` is reserved",
        ),
    ];
    for (what, edit, expected) in cases {
        seal_refused(what, edit, expected);
    }
}

#[test]
fn handoffs_match_edges_between_agent_nodes() {
    let cases: [(&str, Break, &str); 3] = [
        (
            "missing edge",
            |a| graph(a).edges.retain(|e| e.kind != EdgeKind::Handoff),
            "node `triage` must have exactly one handoff edge to a node of agent `billing`, found 0",
        ),
        (
            "undeclared edge",
            |a| graph(a).edges.push(edge("billing", "triage", EdgeKind::Handoff)),
            "handoff edge from `billing` to `triage` does not match a declared handoff",
        ),
        (
            "unknown target",
            |a| {
                a.agents.get_mut("billing").unwrap().handoffs = vec![Handoff {
                    tool_name: "transfer_to_ghost".into(),
                    target: "ghost".into(),
                    payload: Schema::from(tenx_artifact::EMPTY_PAYLOAD.parse::<serde_json::Value>().unwrap()),
                }];
            },
            "agent `billing` hands off to unknown agent `ghost`",
        ),
    ];
    for (what, edit, expected) in cases {
        seal_refused(what, edit, expected);
    }
}

#[test]
fn handoff_payloads_are_object_schemas() {
    fn payload(a: &mut Artifact) -> &mut Schema {
        &mut a.agents.get_mut("triage").unwrap().handoffs[0].payload
    }
    let cases: [(&str, Break, &str); 4] = [
        (
            "true",
            |a| *payload(a) = Schema::from(json!(true)),
            "agent `triage`: the payload of handoff `transfer_to_billing` must be an object schema",
        ),
        (
            "a string schema",
            |a| *payload(a) = Schema::from(json!({"type": "string"})),
            "agent `triage`: the payload of handoff `transfer_to_billing` must be an object schema",
        ),
        (
            "no type",
            |a| *payload(a) = Schema::from(json!({"properties": {}})),
            "agent `triage`: the payload of handoff `transfer_to_billing` must be an object schema",
        ),
        (
            "properties as a list",
            |a| *payload(a) = Schema::from(json!({"type": "object", "properties": ["reason"]})),
            "agent `triage`: the payload of handoff `transfer_to_billing` must be an object schema",
        ),
    ];
    for (what, edit, expected) in cases {
        seal_refused(what, edit, expected);
    }
    // The sample's payload, and the empty one, are accepted.
    seal(sample()).unwrap();
    let mut empty = sample();
    *payload(&mut empty) = Schema::from(tenx_artifact::EMPTY_PAYLOAD.parse::<serde_json::Value>().unwrap());
    seal(empty).unwrap();
}

#[test]
fn tools_and_their_approvers_are_consistent() {
    let cases: [(&str, Break, &str); 4] = [
        (
            "one-sided approval",
            |a| a.interrupts.get_mut("manager_review").unwrap().approves.clear(),
            "the interrupt does not list the tool in `approves`",
        ),
        (
            "name claimed twice",
            |a| {
                a.agents.get_mut("triage").unwrap().handoffs[0].tool_name = "lookup_order".into();
            },
            "tool name `lookup_order` is claimed by both tool `lookup_order` and the handoff",
        ),
        (
            "bad function name",
            |a| a.tools.get_mut("now").unwrap().name = "what time is it".into(),
            "model-facing name `what time is it`",
        ),
        (
            "secret in api_key_env",
            |a| a.models.get_mut("support").unwrap().api_key_env = Some("sk-live-123".into()),
            "`api_key_env` must name an environment variable",
        ),
    ];
    for (what, edit, expected) in cases {
        seal_refused(what, edit, expected);
    }
}

#[test]
fn the_risk_policy_is_checked_after_the_structure() {
    // A prohibited tool offered to an agent breaks the policy, not the structure.
    let mut artifact = sample();
    graph(&mut artifact).edges.push(edge("review", "END", EdgeKind::Plain));
    let offer = |a: &mut Artifact| {
        let triage = a.agents.get_mut("triage").unwrap();
        triage.allowed_tools.push("wipe_database".into());
    };
    offer(&mut artifact);
    // With a structural problem too, the structural one is reported.
    assert!(matches!(seal(artifact), Err(SealError::Inconsistent(_))));
    let mut artifact = sample();
    offer(&mut artifact);
    assert_eq!(
        seal(artifact).unwrap_err(),
        SealError::PolicyViolation {
            violation: PolicyViolation::ProhibitedToolOffered {
                agent: "triage".into(),
                tool: "wipe_database".into(),
            },
            more: 0,
        }
    );
    // Both halves of an approval gone: a `high` tool with neither gate.
    let mut artifact = sample();
    artifact.tools.get_mut("close_account").unwrap().approved_by.clear();
    artifact.interrupts.get_mut("manager_review").unwrap().approves.clear();
    artifact.tools.get_mut("issue_refund").unwrap().approval = None;
    let error = seal(artifact).unwrap_err();
    assert_eq!(
        error,
        SealError::PolicyViolation {
            violation: PolicyViolation::HighRiskWithoutApproval {
                tool: "close_account".into()
            },
            more: 1,
        }
    );
    assert!(error.to_string().ends_with("interrupt (and 1 more problem)"), "{error}");
}

#[test]
fn schemas_and_limits_have_their_kinds() {
    let cases: [(&str, Break, &str); 3] = [
        (
            "state schema",
            |a| {
                // The answer written into the state would be refused first.
                graph(a).writes.clear();
                graph(a).state_schema = json!("object").into();
            },
            "`state_schema` must be a schema",
        ),
        (
            "parameters",
            |a| a.tools.get_mut("now").unwrap().parameters = json!(true).into(),
            "`parameters` must be",
        ),
        (
            "recursion limit",
            |a| graph(a).recursion_limit = 0,
            "`recursion_limit` must be at least 1",
        ),
    ];
    for (what, edit, expected) in cases {
        seal_refused(what, edit, expected);
    }
}

#[test]
fn builtins_name_a_handler_the_runtime_has() {
    let cases: [(&str, Break, &str); 2] = [
        (
            "builtin tool",
            |a| {
                a.tools.get_mut("now").unwrap().run = tenx_artifact::Run::Builtin { name: "shell".into() };
            },
            "tool `now` runs unknown builtin `shell`",
        ),
        (
            "builtin validator",
            |a| {
                a.validators.insert(
                    "prompt_injection".into(),
                    tenx_artifact::Validator::Builtin {
                        name: "anything".into(),
                        args: json!({}),
                    },
                );
            },
            "validator `prompt_injection` runs unknown builtin `anything`",
        ),
    ];
    for (what, edit, expected) in cases {
        seal_refused(what, edit, expected);
    }
}

#[test]
fn the_first_problem_is_reported_with_a_count_of_the_rest() {
    let mut artifact = sample();
    graph(&mut artifact).entry = "nowhere".into();
    graph(&mut artifact).recursion_limit = 0;
    let Err(SealError::Inconsistent(message)) = seal(artifact) else {
        panic!("expected Inconsistent");
    };
    assert!(message.ends_with("(and 1 more problem)"), "{message}");
}

#[test]
fn an_empty_program_and_a_wrong_format_seal_as_expected() {
    assert!(seal(Artifact::new("tenxc 0.1.0")).is_ok());
    let mut artifact = Artifact::new("tenxc 0.1.0");
    artifact.format = "tenx-graph/1".into();
    assert_eq!(
        seal(artifact).unwrap_err(),
        SealError::WrongFormat {
            found: "tenx-graph/1".into()
        }
    );
    // Routes may be given in any order; seal sorts them.
    let mut artifact = sample();
    graph(&mut artifact).routes.push(Route {
        from: "close".into(),
        by: None,
        arms: vec![Arm::Else { target: "END".into() }],
    });
    graph(&mut artifact).edges.retain(|e| e.from != "close");
    graph(&mut artifact).routes.reverse();
    let sealed = seal(artifact).unwrap();
    let routes = &sealed.artifact().graphs["support_desk"].routes;
    assert_eq!(routes[0].from, "close");
}

#[test]
fn extra_entries_and_state_writes_name_what_exists() {
    fn write(from: WriteSource, to: &[&str]) -> Write {
        Write {
            from,
            to: to.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
    let cases: [(&str, Break, &str); 10] = [
        (
            "extra entry unknown",
            |a| graph(a).entries = vec!["nowhere".into()],
            "extra entry `nowhere` is not a node",
        ),
        (
            "extra entry is the entry",
            |a| graph(a).entries = vec!["triage".into()],
            "extra entry `triage` is the graph's `entry`",
        ),
        (
            "a write from an agent node",
            |a| graph(a).writes = vec![write(WriteSource::Node("triage".into()), &["decision"])],
            "`writes` names node `triage`, which is not a tool node",
        ),
        (
            "a write from a tool no agent node calls",
            |a| graph(a).writes = vec![write(WriteSource::Tool("close_account".into()), &["decision"])],
            "`writes` names tool `close_account`, which no agent node of the graph may call",
        ),
        (
            "a write to a field not in the state",
            |a| graph(a).writes = vec![write(WriteSource::Node("close".into()), &["receipt"])],
            "the result of node `close` is written to `receipt`, and `receipt` is not a property of `state_schema`",
        ),
        (
            "a write to an undeclared property",
            |a| graph(a).writes = vec![write(WriteSource::Node("close".into()), &["order", "status"])],
            "written to `order.status`, and `status` is not a declared property at that path",
        ),
        (
            "a source written twice",
            |a| {
                graph(a).writes = vec![
                    write(WriteSource::Node("close".into()), &["customer"]),
                    write(WriteSource::Node("close".into()), &["decision"]),
                ]
            },
            "the result of node `close` is written twice in `writes`",
        ),
        (
            "an answer of an agent node",
            |a| {
                let from = WriteSource::Interrupt {
                    node: "triage".into(),
                    field: None,
                };
                graph(a).writes = vec![write(from, &["order"])]
            },
            "`writes` names node `triage`, which is not an interrupt node",
        ),
        (
            "an answer property the response does not declare",
            |a| {
                let from = WriteSource::Interrupt {
                    node: "review".into(),
                    field: Some("nowhere".into()),
                };
                graph(a).writes = vec![write(from, &["decision"])]
            },
            "`writes` names `nowhere` of the answer to `review`, which its response schema does not declare",
        ),
        (
            "an empty path",
            |a| graph(a).writes = vec![write(WriteSource::Node("close".into()), &[])],
            "is written to ``, an empty path",
        ),
    ];
    for (what, edit, expected) in cases {
        seal_refused(what, edit, expected);
    }
    // The same fields, naming what exists, seal.
    let mut artifact = sample();
    graph(&mut artifact).entries = vec!["review".into()];
    graph(&mut artifact).writes = vec![
        write(WriteSource::Node("close".into()), &["decision"]),
        write(WriteSource::Tool("lookup_order".into()), &["order"]),
        write(
            WriteSource::Interrupt {
                node: "review".into(),
                field: None,
            },
            &["customer"],
        ),
        write(
            WriteSource::Interrupt {
                node: "review".into(),
                field: Some("decision".into()),
            },
            &["decision"],
        ),
    ];
    assert!(seal(artifact).is_ok());
}
