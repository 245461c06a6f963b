//! The standard library's `message_content` validator: each message's role must be one of
//! `allowed_roles` (default `["user"]`) and it may carry at most `max_blocks` content blocks
//! (default 50, from 1 to 1000). Role first, then blocks, message by message. It reads
//! messages, not text, so it cannot guard model output.

use serde_json::Value;

use super::args::Args;
use super::violation::{Finding, ViolationType};
use crate::wire::{Message, Role};

const PARAMETERS: &[&str] = &["allowed_roles", "max_blocks"];

/// `max_blocks`' default and range, as the standard library declares them.
const MAX_BLOCKS: (u64, u64, u64) = (50, 1, 1000);

/// A `message_content` use, ready to run.
pub(super) struct MessageContent {
    allowed_roles: Vec<Role>,
    max_blocks: u64,
}

impl MessageContent {
    /// Reads the merged arguments.
    pub(super) fn new(defaults: &Value, used: &Value) -> Result<Self, Finding> {
        let args = Args::merge(defaults, used, PARAMETERS)?;
        let allowed_roles = match args.strings("allowed_roles")? {
            None => vec![Role::User],
            Some(names) => names
                .iter()
                .map(|name| {
                    role(name).ok_or_else(|| {
                        Finding::misconfigured("args.allowed_roles", "expected user, assistant, system or tool")
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        let (default, min, max) = MAX_BLOCKS;
        let max_blocks = args.int("max_blocks", default, min, max)?;
        Ok(Self {
            allowed_roles,
            max_blocks,
        })
    }

    /// The first problem of `message`, if any.
    pub(super) fn check(&self, message: &Message) -> Option<Finding> {
        if !self.allowed_roles.contains(&message.role) {
            return Some(Finding::new(
                ViolationType::InvalidRole,
                "allowed_roles",
                format!("Invalid message role: {}", role_name(message.role)),
            ));
        }
        let blocks = message.content.len();
        let too_many = u64::try_from(blocks).map_or(true, |count| count > self.max_blocks);
        too_many.then(|| {
            Finding::new(
                ViolationType::TooManyBlocks,
                "max_blocks",
                format!("Too many content blocks: {blocks} (at most {})", self.max_blocks),
            )
        })
    }
}

fn role(name: &str) -> Option<Role> {
    match name {
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        "system" => Some(Role::System),
        "tool" => Some(Role::Tool),
        _ => None,
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
        Role::Tool => "tool",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::wire::ContentBlock;

    fn message(role: Role, blocks: usize) -> Message {
        let mut message = Message::text("m", role, "hi", 0.0);
        message.content = (0..blocks).map(|_| ContentBlock::text("x")).collect();
        message
    }

    #[test]
    fn only_user_messages_by_default() {
        let validator = MessageContent::new(&json!({}), &json!({})).unwrap();
        assert!(validator.check(&message(Role::User, 1)).is_none());
        let finding = validator.check(&message(Role::System, 1)).unwrap();
        assert_eq!(finding.violation_type, ViolationType::InvalidRole);
        assert_eq!(finding.message, "Invalid message role: system");
    }

    #[test]
    fn allowed_roles_widen_the_default() {
        let validator = MessageContent::new(
            &json!({"allowed_roles": ["user"]}),
            &json!({"allowed_roles": ["user", "tool"]}),
        )
        .unwrap();
        assert!(validator.check(&message(Role::Tool, 1)).is_none());
        assert!(validator.check(&message(Role::Assistant, 1)).is_some());
    }

    #[test]
    fn blocks_are_capped() {
        let validator = MessageContent::new(&json!({}), &json!({"max_blocks": 2})).unwrap();
        assert!(validator.check(&message(Role::User, 2)).is_none());
        let finding = validator.check(&message(Role::User, 3)).unwrap();
        assert_eq!(finding.violation_type, ViolationType::TooManyBlocks);
        assert_eq!(finding.message, "Too many content blocks: 3 (at most 2)");
    }

    #[test]
    fn the_role_is_checked_before_the_blocks() {
        let validator = MessageContent::new(&json!({}), &json!({"max_blocks": 1})).unwrap();
        let finding = validator.check(&message(Role::Assistant, 5)).unwrap();
        assert_eq!(finding.violation_type, ViolationType::InvalidRole);
    }

    #[test]
    fn bad_arguments_fail_closed() {
        for args in [
            json!({"allowed_roles": ["root"]}),
            json!({"max_blocks": 0}),
            json!({"max_blocks": 1001}),
            json!({"allowed_roles": "user"}),
        ] {
            let error = MessageContent::new(&json!({}), &args).err().unwrap();
            assert_eq!(error.violation_type, ViolationType::ValidatorMisconfigured, "{args}");
        }
    }
}
