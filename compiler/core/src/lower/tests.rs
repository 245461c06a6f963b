//! Unit tests of the lowering: defaults, conditions, validator arguments, reachability and
//! credentials, each on a small clean program.

use crate::{LintLevels, compile};
use serde_json::json;
use tenx_artifact::{
    Arm, Artifact, CompareOp, Condition, EdgeKind, HttpMethod, Run, Validator, Write, WriteSource, seal,
};
use tenx_diagnostics::SourceSet;

fn lower(text: &str) -> Artifact {
    lower_allowing(text, &[])
}

/// Lowers a program whose only diagnostics have a code in `allowed`, and checks that it seals.
pub(super) fn lower_allowing(text: &str, allowed: &[&str]) -> Artifact {
    let mut sources = SourceSet::new();
    let root = sources.add("app/main.tenx", text);
    let compiled = compile(&mut sources, root, &LintLevels::default());
    let rendered: Vec<String> = compiled
        .diagnostics
        .iter()
        .filter(|d| !allowed.contains(&d.code.as_str()))
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    assert!(rendered.is_empty(), "{rendered:#?}");
    let artifact = compiled.artifact.expect("a clean program lowers");
    seal(artifact.clone()).expect("the lowered artifact seals");
    artifact
}

const ROUTED: &str = r#"
import std.tools.*
import std.validators.prompt_injection

model local {
  provider = openai
  name     = "llama3"
  base_url = "http://localhost:11434/v1"
  api_key  = env("LOCAL_KEY")
}

tool files(path: string "A path") -> string {
  description = "Read a file."
  run = mcp(server: "files")
}

tool fetch(url: string "A URL") -> string {
  description = "Fetch a page."
  run = http(GET, "${WEB_URL}/fetch")
}

tool send(to: string "Who") -> string {
  description = "Send a message."
  risk = high
  approval {
    message   = "Send to {to}?"
    target    = "recipient {to}"
    evidence  = [to, "policy-1"]
    approvers = [scope("mail:send"), role("sender"), role("admin")]
  }
  run = remote
}

agent grader {
  model  = local
  prompt = "Grade the text; answer with a score."
  tools  = [files, fetch, send, current_time]
  output = { "type": "object", "properties": { "score": { "type": "number" } } }
}

agent closer {
  model  = local
  prompt = "Close."
}

graph review {
  entry    = grader
  nodes    = [grader, closer]
  validate = [prompt_injection(max_length: 500)]

  state {
    score?: number "The grade"
    flagged: bool = false "Whether a person flagged it"
    region: string = "eu" "Where"
  }

  route grader {
    when score >= 0.5 and not (score > 0.99) -> closer
    when flagged or region in ["eu", "uk"] -> END
    else -> END
  }
  closer -> END
}
"#;

#[test]
fn defaults_and_bindings() {
    let artifact = lower(ROUTED);
    let graph = &artifact.graphs["review"];
    assert_eq!(graph.recursion_limit, super::DEFAULT_RECURSION_LIMIT);
    assert_eq!(graph.input_validators[0].args["max_length"], json!(500));
    assert_eq!(graph.input_validators[0].args["strict"], json!(true));
    let Validator::Builtin { name, args } = &artifact.validators["prompt_injection"] else {
        panic!("prompt_injection is a builtin");
    };
    assert_eq!(name, "prompt_injection");
    assert_eq!(args["max_length"], json!(10000));

    let send = &artifact.tools["send"];
    let approval = send.approval.as_ref().unwrap();
    assert_eq!(approval.reason, super::DEFAULT_APPROVAL_REASON);
    assert_eq!(
        approval.response_schema,
        serde_json::from_str::<serde_json::Value>(super::DEFAULT_RESPONSE_SCHEMA)
            .unwrap()
            .into()
    );
    assert_eq!(
        approval.evidence,
        [
            tenx_artifact::Evidence::Param("to".into()),
            tenx_artifact::Evidence::Literal("policy-1".into())
        ]
    );
    assert_eq!(approval.target.as_deref(), Some("recipient {to}"));
    assert_eq!(
        approval.approvers,
        Some(tenx_artifact::Approvers {
            roles: vec!["admin".into(), "sender".into()],
            scopes: vec!["mail:send".into()],
        })
    );
    assert!(approval.separate_duties);
    assert_eq!(approval.expires_ms, None);
    assert_eq!(approval.on_reject, tenx_artifact::DEFAULT_ON_REJECT);
    assert_eq!(approval.decision, tenx_artifact::Decision::yes_no());
    assert_eq!(send.run, Run::Remote);
    assert_eq!(
        artifact.tools["files"].run,
        Run::Mcp {
            server: "files".into(),
            tool: "files".into()
        }
    );
    assert_eq!(
        artifact.tools["fetch"].run,
        Run::Http {
            method: HttpMethod::Get,
            url: "${WEB_URL}/fetch".into(),
            timeout_ms: super::DEFAULT_HTTP_TIMEOUT_MS,
            headers: Default::default(),
        }
    );
    let model = &artifact.models["local"];
    assert_eq!(model.api_key_env.as_deref(), Some("LOCAL_KEY"));
    assert_eq!(model.base_url.as_deref(), Some("http://localhost:11434/v1"));
    assert_eq!(model.params, json!({}));
    assert_eq!(model.script, None);
    // Only the stdlib tool the agent uses is included.
    assert!(artifact.tools.contains_key("current_time"));
    assert!(!artifact.tools.contains_key("calculator") && !artifact.tools.contains_key("random_id"));
    assert_eq!(
        artifact.agents["grader"].allowed_tools,
        ["current_time", "fetch", "files", "send"]
    );
    assert_eq!(artifact.source_map["tool.files"].file, "main.tenx");
    assert_eq!(artifact.source_map["tool.current_time"].file, "<stdlib>/tools.tenx");
}

#[test]
fn conditions_keep_their_shape_and_order() {
    let artifact = lower(ROUTED);
    let route = &artifact.graphs["review"].routes[0];
    assert_eq!(route.by, None);
    let [
        Arm::When {
            condition: first,
            target,
        },
        Arm::When { condition: second, .. },
        Arm::Else { .. },
    ] = route.arms.as_slice()
    else {
        panic!("unexpected arms {:?}", route.arms);
    };
    assert_eq!(target, "closer");
    let score = || vec!["score".to_string()];
    assert_eq!(
        *first,
        Condition::And {
            conditions: vec![
                Condition::Compare {
                    field: score(),
                    op: CompareOp::Ge,
                    value: json!(0.5)
                },
                Condition::Not {
                    condition: Box::new(Condition::Compare {
                        field: score(),
                        op: CompareOp::Gt,
                        value: json!(0.99)
                    })
                },
            ]
        }
    );
    assert_eq!(
        *second,
        Condition::Or {
            conditions: vec![
                Condition::Truthy {
                    field: vec!["flagged".into()]
                },
                Condition::Compare {
                    field: vec!["region".into()],
                    op: CompareOp::In,
                    value: json!(["eu", "uk"])
                },
            ]
        }
    );
}

#[test]
fn handoffs_interrupts_and_state() {
    let artifact = lower(
        r#"
import std.approval.yes_no

model m {
  provider = scripted
}

tool publish(topic: string "The topic") -> string {
  description = "Publish."
  risk = high
  run  = remote
}

agent front {
  model    = m
  prompt   = "Route."
  handoffs = [back]
}

agent back {
  model  = m
  prompt = "Answer."
}

interrupt approve {
  message   = "Publish {topic}?"
  response  = yes_no
  approves  = [publish]
  target    = "post {topic}"
  evidence  = [topic, "editorial-policy"]
  approvers = [role("editor")]
}

graph flow {
  entry           = front
  nodes           = [front, back, approve, publish]
  recursion_limit = 7

  state {
    topic: string "What to publish"
  }

  front   -> back
  front   -> approve
  back    -> END
  approve -> publish
  publish -> END
}
"#,
    );
    let graph = &artifact.graphs["flow"];
    assert_eq!(graph.recursion_limit, 7);
    let kind = |from: &str, to: &str| {
        graph
            .edges
            .iter()
            .find(|e| e.from == from && e.to == to)
            .map(|e| e.kind)
    };
    assert_eq!(kind("front", "back"), Some(EdgeKind::Handoff));
    assert_eq!(kind("front", "approve"), Some(EdgeKind::Plain));
    assert_eq!(artifact.agents["front"].handoffs[0].tool_name, "transfer_to_back");
    // A handoff without a payload gets the empty object schema.
    assert_eq!(
        artifact.agents["front"].handoffs[0].payload.as_json(),
        tenx_artifact::EMPTY_PAYLOAD
    );
    assert_eq!(artifact.tools["publish"].approved_by, ["approve"]);
    let interrupt = &artifact.interrupts["approve"];
    assert_eq!(interrupt.reason, super::DEFAULT_INTERRUPT_REASON);
    assert_eq!(interrupt.approves, ["publish"]);
    assert_eq!(interrupt.target.as_deref(), Some("post {topic}"));
    assert_eq!(
        interrupt.evidence,
        [
            tenx_artifact::Evidence::State("topic".into()),
            tenx_artifact::Evidence::Literal("editorial-policy".into())
        ]
    );
    assert!(interrupt.separate_duties);
    assert_eq!(
        interrupt.approvers.as_ref().map(|a| a.roles.clone()),
        Some(vec!["editor".to_string()])
    );
    assert_eq!(interrupt.response_schema.to_value()["required"], json!(["approved"]));
    assert_eq!(graph.state_schema.to_value()["required"], json!(["topic"]));
    assert_eq!(
        artifact.models["m"].script,
        Some(tenx_artifact::Script {
            turns: Vec::new(),
            rules: Vec::new(),
            fallback: None
        })
    );
    assert_eq!(artifact.source_map["graph.flow.edge.front.back"].line, 43);
}

#[test]
fn a_handoff_payload_is_its_parameters_as_an_object_schema() {
    let artifact = lower(
        r#"
model m {
  provider = scripted
}

agent front {
  model    = m
  prompt   = "Route."
  handoffs = [back(reason: string(max_length: 200) "Why", priority?: enum("low", "high"))]
}

agent back {
  model  = m
  prompt = "Answer."
}

graph flow {
  entry = front
  nodes = [front, back]

  front -> back
  front -> END
  back  -> END
}
"#,
    );
    let handoff = &artifact.agents["front"].handoffs[0];
    assert_eq!(handoff.tool_name, "transfer_to_back");
    assert_eq!(
        handoff.payload.as_json(),
        r#"{"additionalProperties":false,"properties":{"priority":{"enum":["low","high"],"type":"string"},"reason":{"description":"Why","maxLength":200,"type":"string"}},"required":["reason"],"type":"object"}"#
    );
}

#[test]
fn the_default_response_schema_text_is_the_value() {
    let text: serde_json::Value = serde_json::from_str(super::DEFAULT_RESPONSE_SCHEMA).unwrap();
    assert_eq!(text, super::tool::default_response_schema());
}

#[test]
fn unicode_escapes_in_templates_and_double_negation() {
    let artifact = lower(
        r#"
model m {
  provider = scripted
}

agent front {
  model  = m
  prompt = "Smile \u{1F600} at {name}, \{literally\}."
}

agent back {
  model  = m
  prompt = "Answer."
}

graph flow {
  entry = front
  nodes = [front, back]

  state {
    name: string "Who"
    done: bool "Whether it is done"
  }

  route front {
    when not not done -> END
    when not not not done -> back
    else -> END
  }
  back -> END
}
"#,
    );
    // The escape is decoded; escaped braces stay escaped for the runtime; `{name}` is kept.
    assert_eq!(
        artifact.agents["front"].prompt,
        "Smile \u{1F600} at {name}, \\{literally\\}."
    );
    let done = || Condition::Truthy {
        field: vec!["done".into()],
    };
    let [
        Arm::When { condition: first, .. },
        Arm::When { condition: second, .. },
        Arm::Else { .. },
    ] = artifact.graphs["flow"].routes[0].arms.as_slice()
    else {
        panic!("unexpected arms {:?}", artifact.graphs["flow"].routes[0].arms);
    };
    assert_eq!(*first, done());
    assert_eq!(
        *second,
        Condition::Not {
            condition: Box::new(done())
        }
    );
}

#[test]
fn extra_entries_are_sorted_and_a_tool_node_writes_its_result() {
    let artifact = lower(include_str!("../../../../tests/fixtures/graph/extra_entries.tenx"));
    let graph = &artifact.graphs["newsletter"];
    assert_eq!(graph.entry, "writer");
    assert_eq!(graph.entries, ["approve_send"]);
    assert_eq!(
        graph.writes,
        [Write {
            from: WriteSource::Node("send_newsletter".into()),
            to: vec!["campaign_url".into()],
        }]
    );
    assert!(graph.state_schema.to_value()["properties"]["campaign_url"].is_object());
}

#[test]
fn a_tool_an_agent_calls_writes_at_a_path() {
    let artifact = lower(include_str!(
        "../../../../tests/fixtures/graph/result_of_agent_tool_call.tenx"
    ));
    let graph = &artifact.graphs["support"];
    assert_eq!(
        graph.writes,
        [Write {
            from: WriteSource::Tool("lookup_order".into()),
            to: vec!["ticket".into(), "order".into()],
        }]
    );
}

#[test]
fn interrupt_answers_are_written_by_property() {
    let artifact = lower(include_str!("../../../../tests/fixtures/graph/answers_into_state.tenx"));
    let graph = &artifact.graphs["blog"];
    let answer = |field: &str, to: &str| Write {
        from: WriteSource::Interrupt {
            node: "review".into(),
            field: Some(field.into()),
        },
        to: vec![to.into()],
    };
    assert_eq!(graph.writes, [answer("comment", "note"), answer("verdict", "verdict")]);
}

#[test]
fn headers_and_native_handlers_are_lowered() {
    let artifact = lower(
        r#"
model m {
  provider = scripted
}

tool pay(order_id: string "The order") -> object {
  description = "Pay."
  run = http(POST, "${PAY_URL}/pay", headers: { "Authorization": "Bearer ${PAY_TOKEN}", X_Trace: "\$1" })
}

tool crm(order_id: string "The order") -> object {
  description = "Find the customer."
  run = native("crm.lookup")
}

tool crm_again(order_id: string "The order") -> object {
  description = "Find the customer again."
  run = native("crm.lookup")
}

tool audit(order_id: string "The order") -> object {
  description = "Audit."
  run = native("audit.log")
}

agent a {
  model  = m
  prompt = "Help."
  tools  = [pay, crm, crm_again, audit]
}

graph g {
  entry = a
  nodes = [a]
  a -> END
}
"#,
    );
    let Run::Http { headers, .. } = &artifact.tools["pay"].run else {
        panic!("{:?}", artifact.tools["pay"].run);
    };
    assert_eq!(headers.len(), 2);
    assert_eq!(headers["Authorization"], "Bearer ${PAY_TOKEN}");
    assert_eq!(headers["X_Trace"], "\\$1");
    assert_eq!(
        artifact.tools["crm"].run,
        Run::Native {
            name: "crm.lookup".into()
        }
    );
    assert_eq!(
        artifact.native_handlers,
        vec!["audit.log".to_owned(), "crm.lookup".to_owned()]
    );
}

#[test]
fn an_agents_input_is_lowered_as_written_and_defaults_to_the_conversation() {
    let artifact = lower(
        r#"
model m {
  provider = scripted
}

agent whole {
  model  = m
  prompt = "All of it."
}

agent fresh {
  model  = m
  prompt = "None of it."
  input  = none
}

agent critic {
  model  = m
  prompt = "The end of it."
  input  = last(3)
}

agent section {
  model  = m
  prompt = "A part of it."
  input  = """Section {topic}"""
}

graph g {
  entry = whole
  nodes = [whole, fresh, critic, section]
  state {
    topic: string
  }

  whole -> fresh
  fresh -> critic
  critic -> section
  section -> END
}
"#,
    );
    let input = |name: &str| serde_json::to_value(&artifact.agents[name].input).unwrap();
    assert_eq!(input("whole"), json!({"kind": "conversation"}));
    assert_eq!(input("fresh"), json!({"kind": "none"}));
    assert_eq!(input("critic"), json!({"kind": "last", "count": 3}));
    assert_eq!(
        input("section"),
        json!({"kind": "template", "template": "Section {topic}"})
    );
}
