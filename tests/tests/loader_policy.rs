//! The loader's re-proof of the risk policy agrees with the compiler's proof. Every program the
//! compiler refuses only for breaking the risk policy (`TENX0601`, `TENX0602`, `TENX0604`),
//! lowered anyway, is refused by `seal`, as the loader would refuse it; every program that
//! checks without errors seals and loads (`artifacts.rs`). And a built example, edited around
//! its approval and resealed with a correct id, is refused by `load`, as is a built `medium`
//! tool whose default confirmation was edited out, and a built interrupt whose route was edited
//! so that a rejecting answer reaches the tool it approves.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

use std::collections::BTreeSet;

use serde_json::{Value, json};
use tenx_artifact::{ArtifactId, PolicyViolation, SealError, TrustPolicy, load, seal};
use tenx_compiler::LintLevels;
use tenx_tests::{files_under, repo_root};

/// The codes of the risk policy: what the loader re-proves.
const POLICY_CODES: [&str; 4] = ["TENX0601", "TENX0602", "TENX0604", "TENX0627"];

/// Every program of the fixtures, the code catalog and the language reference, by name.
fn programs() -> Vec<(String, String)> {
    let root = repo_root();
    let mut programs: Vec<(String, String)> = files_under(&root.join("tests/fixtures"), "tenx")
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let name = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            Some((name, text))
        })
        .collect();
    let pages = files_under(&root.join("compiler/diagnostics/codes"), "md")
        .into_iter()
        .chain([root.join("docs/language.md")]);
    for page in pages {
        let markdown = std::fs::read_to_string(&page).unwrap();
        let stem = page.file_stem().unwrap().to_string_lossy().into_owned();
        for (index, (_, code)) in tenx_tests::tenx_blocks(&markdown).into_iter().enumerate() {
            programs.push((format!("{stem}-{index}.tenx"), code));
        }
    }
    programs
}

/// Checks a program and, if its only errors are policy errors, lowers it anyway: the error
/// codes and the artifact. `None` when it has other errors.
fn lower_despite_policy_errors(name: &str, text: &str) -> Option<(BTreeSet<String>, tenx_artifact::Artifact)> {
    let (mut sources, file, _) = tenx_tests::load_text(name, text, tenxc::disk::MAX_SOURCE_BYTES);
    let checked = tenx_compiler::check(&mut sources, file, &LintLevels::default());
    let errors: BTreeSet<String> = checked
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.code.as_str().to_string())
        .collect();
    if errors.iter().any(|code| !POLICY_CODES.contains(&code.as_str())) {
        return None;
    }
    let facts = tenx_compiler::check::Facts::new(&checked.program, &sources);
    Some((errors, tenx_compiler::lower::lower(&facts)))
}

#[test]
fn seal_refuses_exactly_the_programs_the_compiler_refuses_for_policy() {
    let mut refused = BTreeSet::new();
    let mut count = 0;
    for (name, text) in programs() {
        let Some((errors, artifact)) = lower_despite_policy_errors(&name, &text) else {
            continue;
        };
        match seal(artifact) {
            Ok(_) if errors.is_empty() => {}
            Ok(_) => panic!("{name}: the compiler reports {errors:?}, but the artifact seals"),
            Err(error) if errors.is_empty() => panic!("{name}: checks clean, but does not seal: {error}"),
            Err(SealError::PolicyViolation { violation, .. }) => {
                let code = code_of(&violation);
                assert!(
                    errors.contains(code),
                    "{name}: the compiler reports {errors:?}, seal {violation}"
                );
                refused.insert(code.to_owned());
                count += 1;
            }
            Err(error) => panic!("{name}: the compiler reports {errors:?}, seal {error}"),
        }
    }
    assert!(count >= 9, "only {count} programs were refused for their policy errors");
    // Each policy code was seen refused, from its fixtures and catalog pages.
    assert_eq!(refused, POLICY_CODES.iter().map(|c| (*c).to_string()).collect());
}

/// The compiler's code for the rule a violation breaks.
fn code_of(violation: &PolicyViolation) -> &'static str {
    match violation {
        PolicyViolation::HighRiskWithoutApproval { .. } => "TENX0601",
        PolicyViolation::ProhibitedToolOffered { .. } | PolicyViolation::ProhibitedToolRun { .. } => "TENX0602",
        // The compiler always writes the default confirmation (`TENX0603` only warns about it).
        PolicyViolation::MediumRiskWithoutConfirmation { .. } => "TENX0603",
        PolicyViolation::RejectionReachesTool { .. } => "TENX0627",
        _ => "TENX0604",
    }
}

/// The research flow example, built and sealed, as an envelope to edit.
fn research_flow() -> Value {
    built("examples/research_flow/main.tenx")
}

/// A program that checks without errors, built and sealed, as an envelope to edit.
fn built(path: &str) -> Value {
    let text = std::fs::read_to_string(repo_root().join(path)).unwrap();
    let (errors, artifact) = lower_despite_policy_errors(path, &text).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    serde_json::from_slice(&seal(artifact).unwrap().to_bytes()).unwrap()
}

#[test]
fn a_built_example_edited_around_its_approval_is_refused() {
    // The reviewer's `publish` arm goes straight to the tool instead of the person.
    let mut envelope = research_flow();
    let arm = &mut envelope["artifact"]["graphs"]["research"]["routes"][0]["arms"][0];
    assert_eq!(arm["target"], "approve_publication");
    arm["target"] = json!("publish_report");
    assert_eq!(
        reseal_and_load(envelope),
        "artifact breaks the risk policy: graph `research`: tool `publish_report` (risk high) can \
         run without its approval: entry `researcher` → `writer` → `reviewer` → `publish_report`"
    );

    // The writer's model is given the tool itself.
    let mut envelope = research_flow();
    let tools = envelope["artifact"]["agents"]["writer"]["allowed_tools"]
        .as_array_mut()
        .unwrap();
    tools.push(json!("publish_report"));
    assert_eq!(
        reseal_and_load(envelope),
        "artifact breaks the risk policy: graph `research`: agent node `writer` can call tool \
         `publish_report` (risk high) without passing its approval: entry `researcher` → `writer` \
         calls `publish_report`"
    );
}

#[test]
fn a_built_route_edited_so_that_a_rejecting_answer_runs_the_tool_is_refused() {
    let path = "tests/fixtures/policy/answer_steers_the_run.tenx";
    // As built, only the `publish` arm (the approving answer) leads to the tool.
    let envelope = built(path);
    let route = &envelope["artifact"]["graphs"]["blog"]["routes"][0];
    assert_eq!(route["from"], "review");
    assert_eq!(
        route["arms"][0],
        json!({"kind": "label", "label": "publish", "target": "publish_post"})
    );
    assert_eq!(route["arms"][3], json!({"kind": "else", "target": "END"}));
    let review = &envelope["artifact"]["interrupts"]["review"];
    assert_eq!(review["feedback"], "note");

    // The `else` arm, which a rejecting answer takes, edited to lead to the tool.
    let mut envelope = built(path);
    envelope["artifact"]["graphs"]["blog"]["routes"][0]["arms"][3]["target"] = json!("publish_post");
    let expected = "artifact breaks the risk policy: graph `blog`: a rejecting answer to interrupt node \
                    `review` can lead to tool `publish_post` (risk high), which it approves: entry \
                    `writer` → `review` → `publish_post`";
    assert_eq!(reseal_and_load(envelope), expected);

    // The `revise` arm edited to the tool: a label that is not the approve value.
    let mut envelope = built(path);
    envelope["artifact"]["graphs"]["blog"]["routes"][0]["arms"][1]["target"] = json!("publish_post");
    assert_eq!(reseal_and_load(envelope), expected);

    // The answer's decision no longer written into `verdict`: the `publish` arm then tests a
    // value a rejecting answer may have left there.
    let mut envelope = built(path);
    let writes = envelope["artifact"]["graphs"]["blog"]["writes"].as_array_mut().unwrap();
    writes.retain(|w| w["from"]["interrupt"]["field"] != "verdict");
    assert_eq!(reseal_and_load(envelope), expected);

    // Another part of the answer written into `verdict` too: it may land after the decision, so
    // a rejection whose note says "publish" would take the `publish` arm (check refuses the
    // program, `TENX0339`; this is the loader's own proof).
    let mut envelope = built(path);
    let writes = envelope["artifact"]["graphs"]["blog"]["writes"].as_array_mut().unwrap();
    let note = writes
        .iter_mut()
        .find(|w| w["from"]["interrupt"]["field"] == "note")
        .unwrap();
    note["to"] = json!(["verdict"]);
    assert_eq!(reseal_and_load(envelope), expected);
}

#[test]
fn a_not_equal_arm_approves_only_while_the_response_lists_no_other_rejecting_value() {
    let path = "tests/fixtures/policy/answer_not_the_other_value.tenx";
    // As built, `verdict != "hold"` can be taken only by a "refund": the loader agrees.
    let envelope = built(path);
    let route = &envelope["artifact"]["graphs"]["refunds"]["routes"][0];
    assert_eq!(route["arms"][0]["condition"]["op"], "ne");
    let expected = "artifact breaks the risk policy: graph `refunds`: a rejecting answer to interrupt node \
                    `review_refund` can lead to tool `refund` (risk high), which it approves: entry \
                    `support` → `review_refund` → `refund`";

    // The response edited to allow a third verdict: a "drop" takes the arm too.
    let mut envelope = built(path);
    let response = &mut envelope["artifact"]["interrupts"]["review_refund"]["response_schema"];
    let verdict = &mut response["properties"]["verdict"];
    assert_eq!(verdict["enum"], json!(["refund", "hold"]));
    verdict["enum"] = json!(["refund", "hold", "drop"]);
    assert_eq!(reseal_and_load(envelope), expected);

    // The verdict edited to a free string: its values are no longer known.
    let mut envelope = built(path);
    let response = &mut envelope["artifact"]["interrupts"]["review_refund"]["response_schema"];
    response["properties"]["verdict"] = json!({"type": "string"});
    assert_eq!(reseal_and_load(envelope), expected);
}

#[test]
fn a_negated_equal_arm_approves_only_while_every_other_value_approves() {
    let path = "tests/fixtures/policy/answer_not_equal_to_the_other_value.tenx";
    // As built, `not (verdict == "hold")` can be taken only by a "refund": the loader agrees.
    let envelope = built(path);
    let route = &envelope["artifact"]["graphs"]["refunds"]["routes"][0];
    assert_eq!(route["arms"][0]["condition"]["kind"], "not");
    let expected = "artifact breaks the risk policy: graph `refunds`: a rejecting answer to interrupt node \
                    `review_refund` can lead to tool `refund` (risk high), which it approves: entry \
                    `support` → `review_refund` → `refund`";

    // The response edited to allow a third verdict: a "drop" takes the arm too.
    let mut envelope = built(path);
    let verdict = &mut envelope["artifact"]["interrupts"]["review_refund"]["response_schema"]["properties"]["verdict"];
    assert_eq!(verdict["enum"], json!(["refund", "hold"]));
    verdict["enum"] = json!(["refund", "hold", "drop"]);
    assert_eq!(reseal_and_load(envelope), expected);
}

#[test]
fn an_in_arm_approves_only_while_every_listed_value_an_answer_gives_approves() {
    let path = "tests/fixtures/policy/answer_in_approving_values.tenx";
    // As built, `verdict in ["refund", "refund_all"]` can be taken only by a "refund" (no answer
    // gives "refund_all"): the loader agrees.
    let envelope = built(path);
    let route = &envelope["artifact"]["graphs"]["refunds"]["routes"][0];
    assert_eq!(route["arms"][0]["condition"]["op"], "in");
    let expected = "artifact breaks the risk policy: graph `refunds`: a rejecting answer to interrupt node \
                    `review_refund` can lead to tool `refund` (risk high), which it approves: entry \
                    `support` → `review_refund` → `refund`";

    // The response edited so that an answer can give "refund_all", which does not approve.
    let mut envelope = built(path);
    let verdict = &mut envelope["artifact"]["interrupts"]["review_refund"]["response_schema"]["properties"]["verdict"];
    assert_eq!(verdict["enum"], json!(["refund", "hold"]));
    verdict["enum"] = json!(["refund", "hold", "refund_all"]);
    assert_eq!(reseal_and_load(envelope), expected);

    // The verdict edited to a free string: "refund_all" can be given too.
    let mut envelope = built(path);
    let response = &mut envelope["artifact"]["interrupts"]["review_refund"]["response_schema"];
    response["properties"]["verdict"] = json!({"type": "string"});
    assert_eq!(reseal_and_load(envelope), expected);
}

#[test]
fn a_medium_tool_gets_the_default_confirmation_and_an_edit_that_drops_it_is_refused() {
    let mut envelope = built("tests/fixtures/policy/medium_risk_without_confirmation.tenx");
    let approval = &mut envelope["artifact"]["tools"]["create_draft"]["approval"];
    assert_eq!(
        approval["message"],
        "Run `create_draft` with title: {title}, body: {body}?"
    );
    assert_eq!(approval["reason"], "confirmation");
    assert_eq!(
        approval["decision"],
        json!({"field": "approved", "approve": true, "edit": null, "respond": null})
    );
    assert_eq!(approval["separate_duties"], false);
    *approval = Value::Null;
    assert_eq!(
        reseal_and_load(envelope),
        "artifact breaks the risk policy: tool `create_draft` has risk `medium` but neither an \
         approval (the default confirmation) nor an approving interrupt"
    );
}

#[test]
fn a_built_example_given_an_extra_entry_past_its_approval_is_refused() {
    // A run may start at the approval itself: it still passes the person.
    let mut envelope = research_flow();
    envelope["artifact"]["graphs"]["research"]["entries"] = json!(["approve_publication"]);
    envelope["id"] = json!(ArtifactId::of_body(&envelope["artifact"]).unwrap().to_string());
    let bytes = serde_json::to_vec(&envelope).unwrap();
    assert!(load(&bytes, &TrustPolicy::signature_optional()).is_ok());

    // A run may start at the tool node, after the interrupt that guards it.
    let mut envelope = research_flow();
    envelope["artifact"]["graphs"]["research"]["entries"] = json!(["publish_report"]);
    assert_eq!(
        reseal_and_load(envelope),
        "artifact breaks the risk policy: graph `research`: tool `publish_report` (risk high) can \
         run without its approval: entry `publish_report`"
    );

    // A run may start at the reviewer, whose `publish` arm is edited to skip the person: the
    // path starts at the extra entry.
    let mut envelope = research_flow();
    envelope["artifact"]["graphs"]["research"]["entries"] = json!(["reviewer"]);
    envelope["artifact"]["graphs"]["research"]["routes"][0]["arms"][0]["target"] = json!("publish_report");
    assert_eq!(
        reseal_and_load(envelope),
        "artifact breaks the risk policy: graph `research`: tool `publish_report` (risk high) can \
         run without its approval: entry `reviewer` → `publish_report`"
    );
}

#[test]
fn an_on_error_way_or_a_visit_exit_around_the_approval_is_refused() {
    // A bounded loop that ends at `END` and a failure handler that is not gated load.
    let mut envelope = research_flow();
    let graph = &mut envelope["artifact"]["graphs"]["research"];
    graph["visit_limits"] = json!([{"node": "writer", "max": 3, "exit": "END"}]);
    graph["on_error"] = json!([{"node": "publish_report", "target": "reviewer"}]);
    envelope["id"] = json!(ArtifactId::of_body(&envelope["artifact"]).unwrap().to_string());
    let bytes = serde_json::to_vec(&envelope).unwrap();
    assert!(load(&bytes, &TrustPolicy::signature_optional()).is_ok());

    // The writer fails over to the gated tool: a way around the person.
    let mut envelope = research_flow();
    envelope["artifact"]["graphs"]["research"]["on_error"] = json!([{"node": "writer", "target": "publish_report"}]);
    assert_eq!(
        reseal_and_load(envelope),
        "artifact breaks the risk policy: graph `research`: tool `publish_report` (risk high) can \
         run without its approval: entry `researcher` → `writer` → `publish_report`"
    );

    // The person may be asked once; a second `publish` verdict would go straight to the tool.
    let mut envelope = research_flow();
    envelope["artifact"]["graphs"]["research"]["visit_limits"] =
        json!([{"node": "approve_publication", "max": 1, "exit": "publish_report"}]);
    assert_eq!(
        reseal_and_load(envelope),
        "artifact breaks the risk policy: graph `research`: tool `publish_report` (risk high) can \
         run without its approval: entry `researcher` → `writer` → `reviewer` → `publish_report`"
    );

    // The tool fails over to its own approval, whose exit once used up is the tool: the tool
    // can run again without a new approval.
    let mut envelope = research_flow();
    let graph = &mut envelope["artifact"]["graphs"]["research"];
    graph["on_error"] = json!([{"node": "publish_report", "target": "approve_publication"}]);
    graph["visit_limits"] = json!([{"node": "approve_publication", "max": 2, "exit": "publish_report"}]);
    let message = reseal_and_load(envelope);
    assert!(message.contains("`publish_report`"), "{message}");
}

#[test]
fn a_built_example_resumed_at_its_last_agent_is_proved_from_there() {
    // Resuming at the agent that ended the last run keeps the approval in place.
    let mut envelope = research_flow();
    envelope["artifact"]["graphs"]["research"]["resume"] = json!("last_agent");
    envelope["id"] = json!(ArtifactId::of_body(&envelope["artifact"]).unwrap().to_string());
    let bytes = serde_json::to_vec(&envelope).unwrap();
    assert!(load(&bytes, &TrustPolicy::signature_optional()).is_ok());

    // The reviewer, which can end a run, is a resume node: with its `publish` arm edited to
    // skip the person, the shortest bypass starts where a thread's next run may begin.
    let mut envelope = research_flow();
    envelope["artifact"]["graphs"]["research"]["resume"] = json!("last_agent");
    envelope["artifact"]["graphs"]["research"]["routes"][0]["arms"][0]["target"] = json!("publish_report");
    assert_eq!(
        reseal_and_load(envelope),
        "artifact breaks the risk policy: graph `research`: tool `publish_report` (risk high) can \
         run without its approval: entry `reviewer` → `publish_report`"
    );

    // Any other value is not a way to resume, and the artifact does not load.
    let mut envelope = research_flow();
    envelope["artifact"]["graphs"]["research"]["resume"] = json!("anywhere");
    assert!(reseal_and_load(envelope).contains("resume"));
}

#[test]
fn a_tool_edited_to_lower_its_worst_case_risk_below_its_rules_is_refused() {
    let envelope = built("tests/fixtures/risk/refund_rules.tenx");
    let tool = &envelope["artifact"]["tools"]["issue_refund"];
    assert_eq!(tool["risk"], "high");
    assert_eq!(tool["risk_rules"]["base"], "low");
    assert_eq!(tool["risk_rules"]["rules"][0]["risk"], "high");

    // `risk` lowered to the base (and the approval dropped): a `high` rule would escape.
    let mut edited = envelope.clone();
    edited["artifact"]["tools"]["issue_refund"]["risk"] = json!("low");
    edited["artifact"]["tools"]["issue_refund"]["approval"] = Value::Null;
    let error = reseal_and_load(edited);
    assert!(
        error.contains("tool `issue_refund`: risk rule 0 gives `high`, above the tool's risk `low`"),
        "{error}"
    );

    // The rule lowered instead, so the rules no longer give the declared worst case.
    let mut edited = envelope.clone();
    edited["artifact"]["tools"]["issue_refund"]["risk_rules"]["rules"][0]["risk"] = json!("medium");
    let error = reseal_and_load(edited);
    assert!(
        error.contains("tool `issue_refund`: `risk` is `high`, but its risk rules can give at most `medium`"),
        "{error}"
    );

    // A rule edited to `prohibited`.
    let mut edited = envelope;
    edited["artifact"]["tools"]["issue_refund"]["risk_rules"]["rules"][1]["risk"] = json!("prohibited");
    let error = reseal_and_load(edited);
    assert!(error.contains("risk rule 1 gives `prohibited`"), "{error}");
}

/// Reseals the edited envelope and loads it: the error (the edit must be refused).
fn reseal_and_load(envelope: Value) -> String {
    tenx_tests::reseal_and_load(envelope).expect("the edited artifact loaded")
}
