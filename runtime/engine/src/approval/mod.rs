//! Approvals.
