//! The typed AST: what the syntax stage produces from pest pairs. Every node carries byte spans;
//! no pest type appears here.

mod agent_input;
mod compose;
mod decls;
mod expr;
mod fork;
mod graph;
mod shift;
mod test;

pub use agent_input::AgentInput;
pub use compose::*;
pub use decls::*;
pub use expr::*;
pub use fork::*;
pub use graph::*;
pub use shift::Shift;
pub use test::*;

use tenx_diagnostics::{FileId, Span};

/// A name as written, with its span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    /// The text.
    pub name: String,
    /// Where it is written.
    pub span: Span,
}

/// One parsed source file.
#[derive(Debug, Clone, Default)]
pub struct Module {
    /// The file.
    pub file: FileId,
    /// Its top-level items, in source order.
    pub items: Vec<Item>,
}

/// A top-level item.
#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "items are built once per declaration and moved into the program's vectors; boxing buys nothing"
)]
pub enum Item {
    /// `import ...`
    Import(Import),
    /// `tag ...`
    Tag(TagDecl),
    /// `schema ... = ...`
    Schema(SchemaDecl),
    /// `model ... { }`
    Model(ModelDecl),
    /// `tool ... { }`
    Tool(ToolDecl),
    /// `agent ... { }`
    Agent(AgentDecl),
    /// `validator ... { }`
    Validator(ValidatorDecl),
    /// `interrupt ... { }`
    Interrupt(InterruptDecl),
    /// `graph ... { }`
    Graph(GraphDecl),
    /// `test "..." { }`
    Test(TestDecl),
}

/// The declared name of an item, for items that declare one.
pub fn item_name(item: &Item) -> Option<&Ident> {
    match item {
        Item::Tag(d) => Some(&d.name),
        Item::Schema(d) => Some(&d.name),
        Item::Model(d) => Some(&d.name),
        Item::Tool(d) => Some(&d.name),
        Item::Agent(d) => Some(&d.name),
        Item::Validator(d) => Some(&d.name),
        Item::Interrupt(d) => Some(&d.name),
        Item::Graph(d) => Some(&d.name),
        Item::Import(_) | Item::Test(_) => None,
    }
}
