//! The engine's expressions: pure functions over JSON that the run loop calls.
//!
//! - [`template`]: filling prompts, messages, targets, interrupt values and idempotency keys
//!   ([`render`], [`render_value`], [`render_tree`], [`check`]).
//! - [`condition`]: route and risk-rule conditions ([`evaluate`]).
//! - [`route`]: which arm a route takes ([`choose`]).
//! - [`risk`]: a call's risk from its arguments ([`call_risk`]).
//! - [`path`]: reading and writing dotted state paths ([`read_path`], [`read_set`],
//!   [`write_path`]).
//!
//! None of them reads the clock, the environment or anything outside its arguments, and none
//! panics on any JSON value. The rules are documented in `docs/runtime.md`, "Templates,
//! conditions and state paths".

mod compare;
pub mod condition;
pub mod path;
pub mod risk;
pub mod route;
pub mod template;

pub use compare::{equal, order, truthy};
pub use condition::evaluate;
pub use path::{PathError, read_path, read_set, write_path};
pub use risk::call_risk;
pub use route::choose;
pub use template::{TemplateError, check, render, render_tree, render_value};
