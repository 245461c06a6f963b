//! Approvals, as the contract's "Approvals" section decides them: the package a person is shown
//! and its fingerprint ([`ApprovalRequest`]), the evidence it binds, how an answer is read
//! ([`read_answer`]) and an edit checked ([`check_edit`]), who may answer ([`may_answer`]), when
//! a question lapses ([`expires_at`]), and the records every decision and tool call leaves
//! ([`ApprovalRecord`], [`ToolCallRecord`]), and what the approvals inbox shows of an open
//! question ([`ApprovalSummary`], [`ApprovalDetail`], [`difference`], [`check_batch`]). Pure functions over the artifact and the run; the
//! run loop calls them and owns the order.

mod answer;
mod approvers;
mod edit;
mod evidence;
mod expiry;
mod fingerprint;
mod package;
mod records;
mod view;

pub use answer::{Verdict, check_answer, read_answer};
pub use approvers::may_answer;
pub use edit::check_edit;
pub use evidence::{ResolvedEvidence, resolve_evidence};
pub use expiry::{check_in_time, expires_at, is_expired};
pub use fingerprint::{FINGERPRINT_PREFIX, is_fingerprint};
pub use package::{ActionContext, ApprovalRequest, CallRisk, PackageForm};
pub use records::{ApprovalOutcome, ApprovalRecord, ToolCallOutcome, ToolCallRecord};
pub use view::{
    ApprovalDetail, ApprovalSummary, BatchLimits, Difference, EscalationView, Refusal, ReplacedView, ResponseKind,
    amount_of, check_batch, difference,
};
