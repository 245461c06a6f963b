//! Composition: a graph's `subgraphs = { graph: { input: {…}, output: {…} } }` (how a subgraph
//! node maps state in and out) and an agent's `agents = [name(params…)]` (other agents its model
//! may call as tools).

use super::{Ident, Param};
use tenx_diagnostics::Span;

/// One entry of a graph's `subgraphs`: the state mapping of the subgraph node `node`.
#[derive(Debug, Clone)]
pub struct SubgraphMap {
    /// The subgraph node (the name of the graph it runs).
    pub node: Ident,
    /// `input: { inner_field: outer_field }`: each inner field and the outer field it starts with.
    pub input: Vec<FieldMap>,
    /// `output: { outer_field: inner_field }`: each outer field and the inner field it takes.
    pub output: Vec<FieldMap>,
    /// The whole entry.
    pub span: Span,
}

/// One `to: from` pair of a subgraph mapping.
#[derive(Debug, Clone)]
pub struct FieldMap {
    /// The field written (the key).
    pub to: Ident,
    /// The field read (the value).
    pub from: Ident,
}

/// One item of an agent's `agents = [...]`: an agent offered to the model as a tool.
#[derive(Debug, Clone)]
pub struct AgentToolUse {
    /// The agent called.
    pub agent: Ident,
    /// The parameters of the call, when written (`spanish(text: string "…")`).
    pub params: Option<Vec<Param>>,
}
