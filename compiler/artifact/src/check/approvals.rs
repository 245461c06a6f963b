//! Self-checks of what an approval binds and who may give it, on tools' approvals and on
//! interrupts: evidence names what it can (a `param` item names a parameter of the tool, and an
//! interrupt has none), `approvers` lists valid roles and scopes, sorted, at least one, and an
//! approval that separates duties names approvers (else nobody could ever answer).

use super::{Problems, check_sorted};
use crate::model::{Approvers, Artifact, Evidence};

/// The longest role name.
const MAX_ROLE: usize = 64;

pub(super) fn check(artifact: &Artifact, problems: &mut Problems) {
    for (name, tool) in &artifact.tools {
        let Some(approval) = &tool.approval else { continue };
        let what = format!("tool `{name}`: approval");
        let params = tool.parameters.to_value();
        let properties = params.get("properties").and_then(|p| p.as_object());
        for item in &approval.evidence {
            if let Evidence::Param(param) = item
                && !properties.is_some_and(|p| p.contains_key(param))
            {
                problems.push(format!("{what}: evidence names unknown parameter `{param}`"));
            }
            check_evidence_name(item, &what, problems);
        }
        check_who(approval.approvers.as_ref(), approval.separate_duties, &what, problems);
    }
    for (name, interrupt) in &artifact.interrupts {
        let what = format!("interrupt `{name}`");
        for item in &interrupt.evidence {
            if let Evidence::Param(param) = item {
                problems.push(format!(
                    "{what}: evidence names parameter `{param}`, but an interrupt has no arguments"
                ));
            }
            check_evidence_name(item, &what, problems);
        }
        check_who(interrupt.approvers.as_ref(), interrupt.separate_duties, &what, problems);
    }
}

fn check_evidence_name(item: &Evidence, what: &str, problems: &mut Problems) {
    if let Evidence::Param(name) | Evidence::State(name) = item
        && name.is_empty()
    {
        problems.push(format!("{what}: an evidence item names nothing"));
    }
}

fn check_who(approvers: Option<&Approvers>, separate_duties: bool, what: &str, problems: &mut Problems) {
    let Some(approvers) = approvers else {
        if separate_duties {
            problems.push(format!(
                "{what}: `separate_duties` is on but `approvers` is null, so nobody could answer"
            ));
        }
        return;
    };
    if approvers.roles.is_empty() && approvers.scopes.is_empty() {
        problems.push(format!("{what}: `approvers` lists nobody"));
    }
    for role in approvers.roles.iter().filter(|role| !is_role(role)) {
        problems.push(format!(
            "{what}: role `{role}` must be 1 to {MAX_ROLE} of `A-Z a-z 0-9 _ . -`"
        ));
    }
    for scope in approvers.scopes.iter().filter(|scope| !is_scope(scope)) {
        problems.push(format!("{what}: scope `{scope}` must be `resource:action`"));
    }
    check_sorted(&approvers.roles, || format!("{what}: `approvers.roles`"), problems);
    check_sorted(&approvers.scopes, || format!("{what}: `approvers.scopes`"), problems);
}

/// Whether `role` is a role name: 1–64 characters of `[A-Za-z0-9_.-]`.
pub fn is_role(role: &str) -> bool {
    !role.is_empty() && role.len() <= MAX_ROLE && role.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// Whether `scope` is a `resource:action` scope: `^[A-Za-z0-9_.-]+:[A-Za-z0-9_.*-]+$`.
pub fn is_scope(scope: &str) -> bool {
    let Some((resource, action)) = scope.split_once(':') else {
        return false;
    };
    !resource.is_empty()
        && !action.is_empty()
        && resource
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
        && action
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.*-".contains(&b))
}
