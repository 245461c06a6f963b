//! Bound arguments: tool parameters the runtime fills, from a state field of the run or from the
//! verified caller, instead of the model. A bound parameter stays in the tool's `parameters`
//! (what the runtime validates, normalises and shows to the approver) and is removed from the
//! schema the model sees, which [`model_parameters`] derives: the artifact stores the full
//! schema and the bindings, never a second schema that could disagree with them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where the runtime takes a bound argument from. Written `{"state": field}`,
/// `{"caller": "user_id" | "scopes" | "roles"}` or `{"claim": name}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum BoundSource {
    /// The value of this top-level state field of the run.
    State(String),
    /// An attribute of the verified caller (the user who started the run).
    Caller(CallerAttribute),
    /// The named claim of the caller's verified token, a string. Tools get claims, never the
    /// bearer token itself.
    Claim(String),
}

/// What the runtime knows of the verified caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallerAttribute {
    /// The token's subject, a string.
    UserId,
    /// The token's scopes, a list of strings.
    Scopes,
    /// The token's roles, a list of strings.
    Roles,
}

impl CallerAttribute {
    /// Every attribute, as the language writes it after `caller.`.
    pub const ALL: [(&'static str, CallerAttribute); 3] = [
        ("user_id", CallerAttribute::UserId),
        ("scopes", CallerAttribute::Scopes),
        ("roles", CallerAttribute::Roles),
    ];

    /// `user_id`, `scopes` or `roles`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UserId => "user_id",
            Self::Scopes => "scopes",
            Self::Roles => "roles",
        }
    }

    /// Whether the value is a list of strings (else a string).
    pub fn is_list(self) -> bool {
        matches!(self, Self::Scopes | Self::Roles)
    }
}

/// The longest claim name.
pub const MAX_CLAIM: usize = 128;

/// Whether `name` is a claim name: 1 to 128 of `A-Z a-z 0-9 _ . : / -` (namespaced claims such
/// as `https://example.com/tenant` included).
pub fn is_claim_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_CLAIM
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.:/-".contains(&b))
}

/// The schema the model sees: `parameters` without the bound names, in `properties` and in
/// `required`. Anything else is kept as it is.
pub fn model_parameters<'a>(parameters: &Value, bound: impl IntoIterator<Item = &'a str>) -> Value {
    let mut schema = parameters.clone();
    let bound: Vec<&str> = bound.into_iter().collect();
    if bound.is_empty() {
        return schema;
    }
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.retain(|name, _| !bound.contains(&name.as_str()));
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| !name.as_str().is_some_and(|n| bound.contains(&n)));
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_model_never_sees_a_bound_name() {
        let full = json!({
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "user_id": {"type": "string"}, "note": {"type": "string"}},
            "required": ["order_id", "user_id"]
        });
        let seen = model_parameters(&full, ["user_id"]);
        assert_eq!(
            seen,
            json!({
                "type": "object",
                "properties": {"order_id": {"type": "string"}, "note": {"type": "string"}},
                "required": ["order_id"]
            })
        );
    }

    #[test]
    fn sources_are_written_as_tagged_objects() {
        let sources = [
            BoundSource::State("order_id".into()),
            BoundSource::Caller(CallerAttribute::UserId),
            BoundSource::Claim("tenant".into()),
        ];
        let written = serde_json::to_string(&sources).unwrap_or_default();
        assert_eq!(
            written,
            r#"[{"state":"order_id"},{"caller":"user_id"},{"claim":"tenant"}]"#
        );
    }

    #[test]
    fn claim_names() {
        assert!(is_claim_name("tenant"));
        assert!(is_claim_name("https://example.com/tenant"));
        assert!(!is_claim_name(""));
        assert!(!is_claim_name("a b"));
    }
}
