//! The wire shapes of the standard API (`spec/reference-api.md` §4, §6, §7): messages and their
//! content blocks, tool calls, token usage, the execution metadata of a thread and interrupt
//! objects. The engine stores and returns exactly these, so the server can send them unchanged.
//! They derive `Serialize` because they cross process boundaries (HTTP and checkpoints).

mod block;
mod execution;
mod interrupt;
mod message;
mod usage;

pub use block::{ContentBlock, ToolResultStatus};
pub use execution::{ExecutionMeta, ExecutionStatus, StopState};
pub use interrupt::InterruptObject;
pub use message::{FunctionCall, Message, Role, ToolCall};
pub use usage::TokenUsage;
