//! Who may answer a question: `approvers` (any listed role or scope of the verified token) and
//! `separate_duties` (never the user who started the run). Refusals are 403
//! `APPROVER_REFUSED` and say which rule refused, without listing who would be allowed.

use serde_json::json;
use tenx_artifact::Approvers;

use crate::{ErrorCode, Identity, RunError};

/// Whether `answerer` may answer a question with these `approvers` and `separate_duties`, on a
/// run started by `requested_by`. `auth_on: false` is development mode: anyone may answer.
///
/// With auth, the answerer must be verified; with `approvers`, hold one of the listed roles
/// or one of the listed scopes (exact names); with `separate_duties`, not be `requested_by`.
/// Without `approvers`, whoever may act on the thread may answer (the server checked that).
///
/// # Errors
///
/// `APPROVER_REFUSED` (403), with `details.rule` `verified`, `approvers` or
/// `separate_duties`.
pub fn may_answer(
    approvers: Option<&Approvers>,
    separate_duties: bool,
    requested_by: Option<&str>,
    answerer: &Identity,
    auth_on: bool,
) -> Result<(), RunError> {
    if !auth_on {
        return Ok(());
    }
    let Some(user) = answerer.user_id.as_deref() else {
        return Err(refused("verified", "Only a verified user may answer this request"));
    };
    if let Some(approvers) = approvers {
        let has_role = answerer.roles.iter().any(|role| approvers.roles.contains(role));
        let has_scope = answerer.scopes.iter().any(|scope| approvers.scopes.contains(scope));
        if !has_role && !has_scope {
            return Err(refused(
                "approvers",
                "You may not answer this request: it needs a user holding one of its approver roles or scopes",
            ));
        }
    }
    if separate_duties && requested_by == Some(user) {
        return Err(refused(
            "separate_duties",
            "You may not answer this request: the user who started the run cannot approve its own request (separate duties)",
        ));
    }
    Ok(())
}

fn refused(rule: &str, message: &str) -> RunError {
    RunError::new(ErrorCode::ApproverRefused, message).with_details(json!({"rule": rule}))
}
