//! What an approval binds and who may give it: `seal` refuses, and `load` refuses once resealed,
//! an approval or interrupt whose evidence names no argument it has, whose approvers are
//! malformed or empty, or that separates duties without naming approvers.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::{Break, envelope, reseal, sample, seal_refused, to_bytes};
use serde_json::{Value, json};
use tenx_artifact::{Approvers, Artifact, Evidence, LoadError, TrustPolicy, load, seal};

fn refund(artifact: &mut Artifact) -> &mut tenx_artifact::Approval {
    artifact
        .tools
        .get_mut("issue_refund")
        .unwrap()
        .approval
        .as_mut()
        .unwrap()
}

fn review(artifact: &mut Artifact) -> &mut tenx_artifact::Interrupt {
    artifact.interrupts.get_mut("manager_review").unwrap()
}

#[test]
fn seal_refuses_what_nobody_could_answer_or_read() {
    let cases: [(&str, Break, &str); 9] = [
        (
            "separate duties without approvers",
            |a| refund(a).approvers = None,
            "tool `issue_refund`: approval: `separate_duties` is on but `approvers` is null",
        ),
        (
            "interrupt separate duties without approvers",
            |a| review(a).approvers = None,
            "interrupt `manager_review`: `separate_duties` is on but `approvers` is null",
        ),
        (
            "empty approvers",
            |a| {
                refund(a).approvers = Some(Approvers {
                    roles: Vec::new(),
                    scopes: Vec::new(),
                })
            },
            "`approvers` lists nobody",
        ),
        (
            "bad role",
            |a| refund(a).approvers.as_mut().unwrap().roles = vec!["support lead".into()],
            "role `support lead` must be 1 to 64",
        ),
        (
            "long role",
            |a| refund(a).approvers.as_mut().unwrap().roles = vec!["a".repeat(65)],
            "must be 1 to 64",
        ),
        (
            "bad scope",
            |a| refund(a).approvers.as_mut().unwrap().scopes = vec!["refunds".into()],
            "scope `refunds` must be `resource:action`",
        ),
        (
            "unknown param",
            |a| refund(a).evidence.push(Evidence::Param("customer".into())),
            "evidence names unknown parameter `customer`",
        ),
        (
            "param on an interrupt",
            |a| review(a).evidence.push(Evidence::Param("order_id".into())),
            "an interrupt has no arguments",
        ),
        (
            "empty state name",
            |a| review(a).evidence.push(Evidence::State(String::new())),
            "an evidence item names nothing",
        ),
    ];
    for (what, edit, expected) in cases {
        seal_refused(what, edit, expected);
    }
}

#[test]
fn separate_duties_off_needs_no_approvers() {
    let mut artifact = sample();
    refund(&mut artifact).approvers = None;
    refund(&mut artifact).separate_duties = false;
    seal(artifact).unwrap();
}

fn load_refuses(edit: impl FnOnce(&mut Value), expected: &str) {
    let mut edited = envelope(&seal(sample()).unwrap().to_bytes());
    edit(&mut edited);
    edited["signature"] = Value::Null;
    reseal(&mut edited);
    let error = load(&to_bytes(&edited), &TrustPolicy::signature_optional()).unwrap_err();
    let LoadError::Inconsistent(what) = &error else {
        panic!("expected Inconsistent, got {error}");
    };
    assert!(what.contains(expected), "expected `{expected}` in `{what}`");
}

#[test]
fn load_refuses_a_resealed_file_that_nobody_could_answer() {
    load_refuses(
        |e| e["artifact"]["tools"]["issue_refund"]["approval"]["approvers"] = Value::Null,
        "`separate_duties` is on but `approvers` is null",
    );
    load_refuses(
        |e| {
            e["artifact"]["interrupts"]["manager_review"]["approvers"] = json!({"roles": ["b", "a"], "scopes": []});
        },
        "`approvers.roles` must be sorted",
    );
    load_refuses(
        |e| {
            e["artifact"]["tools"]["issue_refund"]["approval"]["evidence"] = json!([{"param": "amount"}]);
        },
        "evidence names unknown parameter `amount`",
    );
}
