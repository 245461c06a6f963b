//! The policy proof on small hand-written graphs: approvals on every path or not, loops that
//! re-approve or reuse an approval, handoff edges and route arms as ways on, unreachable nodes,
//! and a deep graph.

use std::collections::BTreeMap;

use serde_json::json;

use super::{PolicyViolation, check};
use crate::model::{
    Agent, Approval, Arm, Artifact, Edge, EdgeKind, Graph, Interrupt, Model, Node, NodeKind, Provider, Risk, Route,
    Run, Tool,
};

fn tool(risk: Risk, approved_by: &[&str]) -> Tool {
    Tool {
        name: "t".into(),
        description: String::new(),
        parameters: json!({"type": "object"}).into(),
        result: None,
        risk,
        tags: Vec::new(),
        approval: None,
        approved_by: approved_by.iter().map(|name| (*name).to_owned()).collect(),
        idempotency_key: None,
        run: Run::Remote,
        bindings: std::collections::BTreeMap::new(),
        risk_rules: None,
        retry: None,
    }
}

fn agent(allowed: &[&str]) -> Agent {
    Agent {
        model: "m".into(),
        prompt: String::new(),
        allowed_tools: allowed.iter().map(|name| (*name).to_owned()).collect(),
        handoffs: Vec::new(),
        output_schema: None,
        output_guards: Vec::new(),
        retries: 2,
        agent_tools: Vec::new(),
        input: crate::model::AgentInput::Conversation,
    }
}

fn interrupt(approves: &[&str]) -> Interrupt {
    Interrupt {
        message: String::new(),
        reason: "human_review".into(),
        value: None,
        response_schema: json!({}).into(),
        expires_ms: None,
        approves: approves.iter().map(|name| (*name).to_owned()).collect(),
        on_reject: crate::DEFAULT_ON_REJECT.into(),
        target: None,
        evidence: Vec::new(),
        approvers: None,
        separate_duties: false,
        decision: crate::Decision::yes_no(),
        feedback: None,
    }
}

/// Tools: `pay` (high, approved by the interrupt `approve`), `refund` (high, with its own
/// approval, and also listed by `approve`), `draft` (medium, with its default confirmation) and `wipe` (prohibited).
/// Interrupts: `approve`, and `other`, which approves nothing. Agents: `planner` (allowed
/// `draft`), `clerk` (allowed `pay`) and `cashier` (allowed `refund`).
fn world() -> Artifact {
    let mut artifact = Artifact::new("test");
    artifact.models.insert(
        "m".into(),
        Model {
            provider: Provider::Scripted,
            name: None,
            base_url: None,
            api_key_env: None,
            params: json!({}),
            script: Some(tenx_script()),
        },
    );
    let mut refund = tool(Risk::High, &["approve"]);
    refund.approval = Some(approval("Refund?", true));
    let mut draft = tool(Risk::Medium, &[]);
    draft.approval = Some(approval("Run `draft`?", false));
    artifact.tools.insert("pay".into(), tool(Risk::High, &["approve"]));
    artifact.tools.insert("refund".into(), refund);
    artifact.tools.insert("draft".into(), draft);
    artifact.tools.insert("wipe".into(), tool(Risk::Prohibited, &[]));
    artifact
        .interrupts
        .insert("approve".into(), interrupt(&["pay", "refund"]));
    artifact.interrupts.insert("other".into(), interrupt(&[]));
    artifact.agents.insert("planner".into(), agent(&["draft"]));
    artifact.agents.insert("clerk".into(), agent(&["pay"]));
    artifact.agents.insert("cashier".into(), agent(&["refund"]));
    artifact
}

/// A tool's own approval, yes or no.
fn approval(message: &str, separate_duties: bool) -> Approval {
    Approval {
        message: message.into(),
        reason: "tool_approval".into(),
        target: None,
        response_schema: json!({}).into(),
        expires_ms: None,
        on_reject: crate::DEFAULT_ON_REJECT.into(),
        evidence: Vec::new(),
        approvers: None,
        separate_duties,
        decision: crate::Decision::yes_no(),
        feedback: None,
    }
}

/// A graph. A node's kind follows from its name: the name of a tool or an interrupt of
/// [`world`] runs that; any other name runs the agent named before its first `_` (`planner`,
/// `clerk_2`, `cashier`), or `planner`. Ways are plain edges, `~>` handoff edges, and `|`
/// separates the arms of a route: `"a -> b"`, `"a ~> b"`, `"a -> b | c | END"`.
fn graph(entry: &str, ways: &[&str]) -> Graph {
    let artifact = world();
    let mut nodes = BTreeMap::new();
    let mut edges = Vec::new();
    let mut routes = Vec::new();
    let mut add_node = |name: &str| {
        if name == "END" {
            return;
        }
        let node = if artifact.tools.contains_key(name) {
            Node {
                kind: NodeKind::Tool,
                reference: name.into(),
            }
        } else if artifact.interrupts.contains_key(name) {
            Node {
                kind: NodeKind::Interrupt,
                reference: name.into(),
            }
        } else {
            let agent = name.split('_').next().unwrap_or(name);
            let agent = if artifact.agents.contains_key(agent) {
                agent
            } else {
                "planner"
            };
            Node {
                kind: NodeKind::Agent,
                reference: agent.into(),
            }
        };
        nodes.insert(name.to_owned(), node);
    };
    add_node(entry);
    for way in ways {
        let (from, to, kind) = match (way.split_once(" -> "), way.split_once(" ~> ")) {
            (Some((from, to)), _) => (from, to, EdgeKind::Plain),
            (None, Some((from, to))) => (from, to, EdgeKind::Handoff),
            (None, None) => panic!("not a way: {way}"),
        };
        add_node(from);
        let targets: Vec<&str> = to.split(" | ").collect();
        for target in &targets {
            add_node(target);
        }
        if let [target] = targets.as_slice() {
            edges.push(Edge {
                from: from.into(),
                to: (*target).into(),
                kind,
            });
        } else {
            let arms = targets
                .iter()
                .map(|target| Arm::Else {
                    target: (*target).into(),
                })
                .collect();
            routes.push(Route {
                from: from.into(),
                by: None,
                arms,
            });
        }
    }
    Graph {
        entry: entry.into(),
        nodes,
        edges,
        routes,
        recursion_limit: 25,
        input_validators: Vec::new(),
        state_schema: json!({"type": "object"}).into(),
        entries: Vec::new(),
        writes: Vec::new(),
        visit_limits: Vec::new(),
        on_error: Vec::new(),
        resume: crate::Resume::Entry,
        retries: Vec::new(),
        forks: Vec::new(),
        reducers: Vec::new(),
        subgraphs: Vec::new(),
    }
}

/// The first violation of [`world`] with these graphs, and how many more there are.
fn proof(graphs: &[(&str, Graph)]) -> Option<(PolicyViolation, usize)> {
    let mut artifact = world();
    for (name, graph) in graphs {
        artifact.graphs.insert((*name).to_owned(), graph.clone());
    }
    check(&artifact).err().map(|refusal| (refusal.violation, refusal.more))
}

/// The first violation of one graph `g`.
fn violation(entry: &str, ways: &[&str]) -> Option<PolicyViolation> {
    proof(&[("g", graph(entry, ways))]).map(|(violation, _)| violation)
}

fn path(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

fn bypassed(names: &[&str]) -> Option<PolicyViolation> {
    Some(PolicyViolation::ApprovalBypassed {
        graph: "g".into(),
        tool: "pay".into(),
        risk: Risk::High,
        path: path(names),
    })
}

fn reused(names: &[&str]) -> Option<PolicyViolation> {
    Some(PolicyViolation::ApprovalReused {
        graph: "g".into(),
        tool: "pay".into(),
        risk: Risk::High,
        path: path(names),
    })
}

#[test]
fn an_approval_on_every_path_is_accepted() {
    let ways = ["planner -> approve", "approve -> pay", "pay -> END"];
    assert_eq!(violation("planner", &ways), None);
}

#[test]
fn a_loop_that_passes_the_approval_each_time_is_accepted() {
    let ways = ["planner -> END | approve", "approve -> pay", "pay -> planner"];
    assert_eq!(violation("planner", &ways), None);
}

#[test]
fn a_loop_back_to_the_tool_without_the_approval_is_refused() {
    let ways = [
        "planner -> approve",
        "approve -> pay",
        "pay -> planner_keeper",
        "planner_keeper -> END | pay",
    ];
    assert_eq!(violation("planner", &ways), reused(&["pay", "planner_keeper", "pay"]));
}

#[test]
fn a_tool_that_can_run_again_straight_after_itself_is_refused() {
    let ways = ["planner -> approve", "approve -> pay", "pay -> pay | END"];
    assert_eq!(violation("planner", &ways), reused(&["pay", "pay"]));
}

#[test]
fn an_approval_on_only_some_paths_is_refused() {
    let ways = ["planner -> pay | approve", "approve -> pay", "pay -> END"];
    assert_eq!(violation("planner", &ways), bypassed(&["planner", "pay"]));
}

#[test]
fn a_handoff_edge_around_the_approval_is_refused() {
    let ways = [
        "planner -> approve",
        "planner ~> planner_desk",
        "planner_desk -> pay",
        "approve -> pay",
        "pay -> END",
    ];
    assert_eq!(
        violation("planner", &ways),
        bypassed(&["planner", "planner_desk", "pay"])
    );
}

#[test]
fn a_run_that_starts_at_the_tool_is_refused() {
    let ways = ["pay -> END", "approve -> pay"];
    assert_eq!(violation("pay", &ways), bypassed(&["pay"]));
}

#[test]
fn a_node_between_the_approval_and_the_tool_is_refused() {
    let ways = ["approve -> planner", "planner -> pay", "pay -> END"];
    assert_eq!(
        violation("approve", &ways),
        Some(PolicyViolation::StepAfterApproval {
            graph: "g".into(),
            node: "planner".into(),
            tool: "pay".into(),
            risk: Risk::High,
            path: path(&["approve", "planner", "pay"]),
        })
    );
}

#[test]
fn an_interrupt_that_approves_another_tool_does_not_count() {
    let ways = ["planner -> other", "other -> pay", "pay -> END"];
    assert_eq!(violation("planner", &ways), bypassed(&["planner", "other", "pay"]));
}

#[test]
fn nodes_no_run_reaches_are_not_checked() {
    // An agent that may call `pay`, and a way into `pay` that skips the approval, both
    // unreachable from the entry; a prohibited tool node is refused even there.
    let ways = [
        "planner -> approve",
        "approve -> pay",
        "pay -> END",
        "clerk -> pay",
        "planner_orphan -> pay",
    ];
    assert_eq!(violation("planner", &ways), None);
    let ways = ["planner -> END", "wipe -> END"];
    assert_eq!(
        violation("planner", &ways),
        Some(PolicyViolation::ProhibitedToolRun {
            graph: "g".into(),
            node: "wipe".into(),
            tool: "wipe".into(),
        })
    );
}

#[test]
fn an_agent_that_may_call_the_tool_is_refused_even_after_the_approval() {
    let ways = ["approve -> clerk", "clerk -> END"];
    let found = violation("approve", &ways);
    assert_eq!(
        found,
        Some(PolicyViolation::AgentCallsApprovedTool {
            graph: "g".into(),
            node: "clerk".into(),
            tool: "pay".into(),
            risk: Risk::High,
            path: path(&["approve", "clerk"]),
            through: 0,
        })
    );
    assert_eq!(
        found.map(|violation| violation.to_string()).unwrap_or_default(),
        "graph `g`: agent node `clerk` can call tool `pay` (risk high) without passing its \
         approval: entry `approve` → `clerk` calls `pay`"
    );
}

#[test]
fn a_tool_with_its_own_approval_is_gated_wherever_it_runs() {
    // `draft` asks its own confirmation at every call and no interrupt approves it.
    let ways = ["planner -> draft", "draft -> END"];
    assert_eq!(violation("planner", &ways), None);
}

#[test]
fn a_tool_with_its_own_approval_that_an_interrupt_approves_keeps_the_node_rules() {
    // An agent may call `refund`: its call asks the tool's own approval.
    assert_eq!(violation("cashier", &["cashier -> END"]), None);
    assert_eq!(violation("approve", &["approve -> refund", "refund -> END"]), None);
    // Its node runs only straight after the interrupt that approves it: otherwise a "no" there
    // could detour to the tool, where a call its risk rules rate `low` runs without asking.
    let detour = ["approve -> refund | cashier", "cashier -> refund", "refund -> END"];
    assert_eq!(
        violation("approve", &detour),
        Some(PolicyViolation::StepAfterApproval {
            graph: "g".into(),
            node: "cashier".into(),
            tool: "refund".into(),
            risk: Risk::High,
            path: path(&["approve", "cashier", "refund"]),
        })
    );
    assert_eq!(
        violation("cashier", &["cashier -> refund", "refund -> END"]),
        Some(PolicyViolation::ApprovalBypassed {
            graph: "g".into(),
            tool: "refund".into(),
            risk: Risk::High,
            path: path(&["cashier", "refund"]),
        })
    );
}

#[test]
fn confirmed_medium_tools_and_agents_in_no_graph_are_not_refused() {
    // `planner` may call the medium tool `draft`; `clerk`, which may call `pay`, is in no graph.
    assert_eq!(violation("planner", &["planner -> END"]), None);
}

#[test]
fn a_medium_tool_without_its_confirmation_is_refused() {
    let mut artifact = world();
    if let Some(draft) = artifact.tools.get_mut("draft") {
        draft.approval = None;
    }
    let refusal = check(&artifact).err().map(|refusal| refusal.violation);
    assert_eq!(
        refusal,
        Some(PolicyViolation::MediumRiskWithoutConfirmation { tool: "draft".into() })
    );
}

#[test]
fn a_medium_tool_approved_by_an_interrupt_needs_no_confirmation() {
    let mut artifact = world();
    if let Some(draft) = artifact.tools.get_mut("draft") {
        draft.approval = None;
        draft.approved_by = vec!["other".into()];
    }
    if let Some(other) = artifact.interrupts.get_mut("other") {
        other.approves = vec!["draft".into()];
    }
    assert!(check(&artifact).is_ok());
}

#[test]
fn a_prohibited_tool_in_an_allowed_list_is_refused() {
    let mut artifact = world();
    artifact.agents.insert("spy".into(), agent(&["wipe"]));
    let refusal = check(&artifact).err().map(|refusal| refusal.violation);
    assert_eq!(
        refusal,
        Some(PolicyViolation::ProhibitedToolOffered {
            agent: "spy".into(),
            tool: "wipe".into(),
        })
    );
}

#[test]
fn the_first_violation_is_explained_and_the_others_counted() {
    let bad = graph("pay", &["pay -> END"]);
    let found = proof(&[("b", bad.clone()), ("a", bad)]);
    let Some((PolicyViolation::ApprovalBypassed { graph, .. }, more)) = found else {
        panic!("{found:?}");
    };
    assert_eq!((graph.as_str(), more), ("a", 1));
}

#[test]
fn a_deep_graph_needs_no_deep_stack_and_its_path_is_shortened() {
    let names: Vec<String> = (0..100_000).map(|index| format!("planner_{index:06}")).collect();
    let mut ways: Vec<String> = names
        .windows(2)
        .map(|pair| format!("{} -> {}", pair[0], pair[1]))
        .collect();
    ways.push(format!("{} -> pay | approve", names[names.len() - 1]));
    ways.push("approve -> pay".into());
    ways.push("pay -> END".into());
    let ways: Vec<&str> = ways.iter().map(String::as_str).collect();
    let Some(found) = violation(&names[0], &ways) else {
        panic!("the way around the approval was not found");
    };
    let PolicyViolation::ApprovalBypassed { path, .. } = &found else {
        panic!("{found}");
    };
    assert_eq!(path.len(), 100_001);
    assert_eq!(
        found.to_string(),
        "graph `g`: tool `pay` (risk high) can run without its approval: entry `planner_000000` → \
         `planner_000001` → `planner_000002` → `planner_000003` → … 99993 more steps … → \
         `planner_099997` → `planner_099998` → `planner_099999` → `pay`"
    );
}

/// One graph `g` whose run may also start at `entries`.
fn violation_with_entries(entry: &str, entries: &[&str], ways: &[&str]) -> Option<PolicyViolation> {
    let mut g = graph(entry, ways);
    g.entries = entries.iter().map(|name| (*name).to_owned()).collect();
    proof(&[("g", g)]).map(|(violation, _)| violation)
}

#[test]
fn an_extra_entry_at_the_approval_is_accepted() {
    let ways = ["planner -> approve", "approve -> pay", "pay -> END"];
    assert_eq!(violation_with_entries("planner", &["approve"], &ways), None);
}

#[test]
fn an_extra_entry_after_the_approval_is_refused() {
    let ways = [
        "planner -> approve",
        "approve -> planner_post",
        "planner_post -> pay",
        "pay -> END",
    ];
    // From the entry alone the step between approval and tool is the violation; the extra
    // entry `planner_post` reaches the tool without passing the approval at all.
    assert_eq!(
        violation_with_entries("planner", &["planner_post"], &ways),
        bypassed(&["planner_post", "pay"])
    );
}

#[test]
fn an_extra_entry_at_the_tool_is_refused() {
    let ways = ["planner -> approve", "approve -> pay", "pay -> END"];
    assert_eq!(violation_with_entries("planner", &["pay"], &ways), bypassed(&["pay"]));
}

#[test]
fn an_extra_entry_makes_an_agent_that_calls_the_tool_reachable() {
    // `clerk` is reachable only from the extra entry, and may call `pay` itself.
    let ways = ["planner -> END", "clerk -> END"];
    assert_eq!(violation("planner", &ways), None);
    assert_eq!(
        violation_with_entries("planner", &["clerk"], &ways),
        Some(PolicyViolation::AgentCallsApprovedTool {
            graph: "g".into(),
            node: "clerk".into(),
            tool: "pay".into(),
            risk: Risk::High,
            path: path(&["clerk"]),
            through: 0,
        })
    );
}

/// An empty script.
fn tenx_script() -> crate::Script {
    crate::Script {
        turns: Vec::new(),
        rules: Vec::new(),
        fallback: None,
    }
}

/// One graph `g` whose thread resumes at the agent that ended its last run.
fn violation_resuming(entry: &str, ways: &[&str]) -> Option<PolicyViolation> {
    let mut g = graph(entry, ways);
    g.resume = crate::Resume::LastAgent;
    proof(&[("g", g)]).map(|(violation, _)| violation)
}

#[test]
fn a_resume_node_is_a_start_of_the_proof() {
    // `planner_post` ends runs, so a thread's next run may start there and reach `pay` around
    // the approval; from the entry alone the same graph breaks the rule one step later.
    let ways = [
        "planner -> approve",
        "approve -> pay",
        "pay -> planner_post",
        "planner_post -> pay | END",
    ];
    assert_eq!(violation_resuming("planner", &ways), bypassed(&["planner_post", "pay"]));
    assert_eq!(violation("planner", &ways), reused(&["pay", "planner_post", "pay"]));
}

#[test]
fn resuming_at_the_last_agent_keeps_a_sound_graph_sound() {
    let ways = [
        "planner -> approve",
        "approve -> pay",
        "pay -> planner_post",
        "planner_post -> END",
    ];
    assert_eq!(violation_resuming("planner", &ways), None);
}
