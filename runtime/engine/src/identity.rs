//! The verified identity of whoever starts a run or answers a question. The host verifies the
//! token; the engine only reads what the host passes (and never sees the token itself).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A verified caller. `user_id: None` is development mode without auth.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// The token's subject (`user_id` claim); `None` without auth.
    pub user_id: Option<String>,
    /// The token's roles.
    pub roles: Vec<String>,
    /// The token's `resource:action` scopes.
    pub scopes: Vec<String>,
    /// Every other claim, as verified (bound arguments may read string claims).
    pub claims: Map<String, Value>,
}

impl Identity {
    /// Development mode: nobody is identified.
    pub fn anonymous() -> Self {
        Self::default()
    }

    /// A user with an id and nothing else.
    pub fn user(user_id: impl Into<String>) -> Self {
        Self {
            user_id: Some(user_id.into()),
            ..Self::default()
        }
    }

    /// Whether the caller is identified (auth is on).
    pub fn is_verified(&self) -> bool {
        self.user_id.is_some()
    }
}
