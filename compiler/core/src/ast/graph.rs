//! Graph declarations: entry, nodes, edges, routes, state, validators.

use super::{Arg, Expr, Fork, Ident, Param, ReducerDecl};
use tenx_diagnostics::Span;

/// `graph NAME { ... }`.
#[derive(Debug, Clone)]
pub struct GraphDecl {
    /// The graph's name.
    pub name: Ident,
    /// `entry = node`.
    pub entry: Option<Ident>,
    /// `nodes = [...]`.
    pub nodes: Vec<Ident>,
    /// `validate = [...]`.
    pub validate: Vec<ValidatorUse>,
    /// `recursion_limit = 25`.
    pub recursion_limit: Option<(u64, Span)>,
    /// `state { ... }`.
    pub state: Vec<Param>,
    /// `a -> b`.
    pub edges: Vec<Edge>,
    /// `route a { ... }`.
    pub routes: Vec<Route>,
    /// The whole declaration.
    pub span: Span,
    /// `entries = [a, b]`: the other nodes a run may start at, besides `entry`.
    pub entries: Vec<Ident>,
    /// `results = { source: field.path }`: tool nodes, and tools agent nodes call, whose results
    /// are also written into state.
    pub results: Vec<ResultWrite>,
    /// `answers = { interrupt: field }` or `{ interrupt: { property: field } }`: interrupt
    /// answers written into state.
    pub answers: Vec<AnswerWrite>,
    /// `visits = { node: { max: 3, then: exit } }`: nodes a run enters at most `max` times,
    /// and where it goes instead.
    pub visits: Vec<VisitLimit>,
    /// `on_error = { node: handler }`: where the run goes when a node fails after its retries.
    pub on_error: Vec<ErrorExit>,
    /// `resume = last_agent`: where a thread's next run starts (`entry` when not set).
    pub resume: Option<Ident>,
    /// `retry = { node: { attempts: 2, … } }`: retry policies by node, in source order.
    pub retry: Vec<NodeRetry>,
    /// `subgraphs = { graph: { input: {…}, output: {…} } }`: the state mappings of subgraph
    /// nodes, in source order.
    pub subgraphs: Vec<super::SubgraphMap>,
    /// `parallel node { … }` and `map node { … }`, in source order.
    pub forks: Vec<Fork>,
    /// `reduce = { field: append, … }`, in source order.
    pub reduce: Vec<ReducerDecl>,
}

/// One entry of a graph's `visits`: a run enters `node` at most `max` times; a way that would
/// enter it once more leads to `exit` instead.
#[derive(Debug, Clone)]
pub struct VisitLimit {
    /// The limited node.
    pub node: Ident,
    /// `max: N`, with its span.
    pub max: (u64, Span),
    /// `then: node` or `then: END`.
    pub exit: Ident,
}

/// One entry of a graph's `on_error`: when `node` fails, the run goes to `target`.
#[derive(Debug, Clone)]
pub struct ErrorExit {
    /// The node that may fail.
    pub node: Ident,
    /// The node (or `END`) that runs next when it does.
    pub target: Ident,
}

/// One write of a graph's `answers`: the answer of the interrupt node `node` (the whole answer,
/// or its `property`) is written into the state field `field`.
#[derive(Debug, Clone)]
pub struct AnswerWrite {
    /// The interrupt node.
    pub node: Ident,
    /// The property of the answer written; `None` for the whole answer.
    pub property: Option<Ident>,
    /// The state field.
    pub field: Ident,
}

/// One entry of a graph's `results = { source: field.path }`: the result of the tool node, or of
/// every successful call of the tool by an agent node, named `node` is written into the state
/// field `field`, at `path` inside it (besides going into the conversation).
#[derive(Debug, Clone)]
pub struct ResultWrite {
    /// The tool node, or a tool an agent node of the graph calls.
    pub node: Ident,
    /// The state field.
    pub field: Ident,
    /// The properties inside `field` (`order.status`: `[status]`); empty for the whole field.
    pub path: Vec<Ident>,
}

/// A validator applied to a graph's input: `prompt_injection(max_length: 2000)`.
#[derive(Debug, Clone)]
pub struct ValidatorUse {
    /// The validator's name.
    pub name: Ident,
    /// Its arguments.
    pub args: Vec<Arg>,
    /// The whole use.
    pub span: Span,
}

/// `from -> to`.
#[derive(Debug, Clone)]
pub struct Edge {
    /// The source node.
    pub from: Ident,
    /// The target node (or `END`).
    pub to: Ident,
    /// The whole edge.
    pub span: Span,
}

/// `route from [by field] { arms }`.
#[derive(Debug, Clone)]
pub struct Route {
    /// The node the route leaves.
    pub from: Ident,
    /// `by field`: the state field whose value is the label.
    pub by: Option<Ident>,
    /// The arms, in order.
    pub arms: Vec<RouteArm>,
    /// The `route` keyword and source node.
    pub span: Span,
}

/// One arm of a route.
#[derive(Debug, Clone)]
pub struct RouteArm {
    /// What selects the arm.
    pub kind: ArmKind,
    /// Where it goes.
    pub target: Ident,
    /// The whole arm.
    pub span: Span,
}

/// What selects a route arm.
#[derive(Debug, Clone)]
pub enum ArmKind {
    /// `"label" -> target`.
    Label(String, Span),
    /// `when condition -> target`.
    When(Condition),
    /// `else -> target`.
    Else,
}

/// A condition over state fields.
#[derive(Debug, Clone)]
pub enum Condition {
    /// `a or b`.
    Or(Vec<Condition>),
    /// `a and b`.
    And(Vec<Condition>),
    /// `not a`.
    Not(Box<Condition>),
    /// `field op value`, or a bare boolean `field`.
    Compare {
        /// The state field (`a` or `a.b`).
        field: Vec<Ident>,
        /// The operator and value.
        op: Option<(CompareOp, Span, Expr)>,
        /// The whole comparison.
        span: Span,
    },
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `in`
    In,
}

impl CompareOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
            CompareOp::In => "in",
        }
    }
}

/// One entry of a graph's `retry`: the policy, as written, for the node `node` (read by
/// [`crate::retry`]).
#[derive(Debug, Clone)]
pub struct NodeRetry {
    /// The node whose calls are retried.
    pub node: Ident,
    /// The policy.
    pub policy: Expr,
}
