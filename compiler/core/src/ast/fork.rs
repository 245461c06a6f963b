//! Parallel branches of a graph: `parallel node { … }` and `map node { … }` (the way on out of a
//! node into branches that run at once), and the graph's `reduce = { field: REDUCTION }`.

use super::Ident;
use tenx_diagnostics::Span;

/// Which kind of fork a block declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkKind {
    /// `parallel node { branches = [a, b]  join = c }`.
    Parallel,
    /// `map node { over = list  item = field  node = start  join = c }`.
    Map,
}

impl ForkKind {
    /// The keyword, as written.
    pub fn keyword(self) -> &'static str {
        match self {
            ForkKind::Parallel => "parallel",
            ForkKind::Map => "map",
        }
    }
}

/// `parallel from { … }` or `map from { … }`.
#[derive(Debug, Clone)]
pub struct Fork {
    /// `parallel` or `map`.
    pub kind: ForkKind,
    /// The node whose way on this fork is.
    pub from: Ident,
    /// `parallel`: `branches = [a, b]`; `map`: the one `node = start`. The first node of each
    /// branch, in order.
    pub branches: Vec<Ident>,
    /// The `branches` (or `node`) value as written, for labels.
    pub branches_span: Option<Span>,
    /// `map`: `over = field`.
    pub over: Option<Ident>,
    /// `map`: `item = field`.
    pub item: Option<Ident>,
    /// `join = node` or `join = END`.
    pub join: Option<Ident>,
    /// `max_concurrency = N`, with the span of `N`.
    pub max_concurrency: Option<(u64, Span)>,
    /// The keyword and the fork's node.
    pub span: Span,
}

/// One entry of a graph's `reduce = { field: REDUCTION }`.
#[derive(Debug, Clone)]
pub struct ReducerDecl {
    /// The state field.
    pub field: Ident,
    /// `append`, `merge`, `sum` or `last`, as written (checked by the graph checks).
    pub reduce: Ident,
    /// `last(a, b)`: the names in the parentheses; `None` without parentheses. A name that is
    /// not a plain name is reported by the syntax stage and left out.
    pub order: Option<Vec<Ident>>,
    /// The whole entry's value.
    pub span: Span,
}
