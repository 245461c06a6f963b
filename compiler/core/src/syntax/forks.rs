//! A graph's forks, `parallel node { branches = [a, b]  join = c }` and
//! `map node { over = list  item = field  node = start  join = c }`, and its
//! `reduce = { field: append, other: last(a, b) }`. Only the shape is read here; the graph checks
//! prove that the names are nodes and state fields and that the branches are regions.

use super::Lower;
use super::bad_lines::Context;
use super::blocks::{BlockData, Fields, expected, ident_list};
use crate::ast::{Expr, ExprKind, Fork, ForkKind, Ident, MapEntry, ReducerDecl};
use tenx_diagnostics::Code;
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

/// The reductions a reducer may name.
const REDUCTIONS: &[&str] = &["append", "merge", "sum", "last"];

/// How `reduce` is written, for messages.
const REDUCE_SHAPE: &str =
    "a map of state fields to `append`, `merge`, `sum`, `last` or `last(a, b)`, such as `{ notes: append }`";

impl Lower<'_> {
    /// A `fork_block` pair.
    pub(super) fn fork(&mut self, pair: Pair<'_, Rule>) -> Fork {
        let whole = self.span(&pair);
        let mut kind = ForkKind::Parallel;
        let mut from = Ident {
            name: String::new(),
            span: whole,
        };
        let mut block = BlockData::new(whole);
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::kw_map => kind = ForkKind::Map,
                Rule::node_ref => {
                    if let Some(i) = part.into_inner().next() {
                        from = self.ident(&i);
                    }
                }
                Rule::block => {
                    let start = self.span(&part).start as usize;
                    block = BlockData::new(tenx_diagnostics::Span::new(start, start + 1));
                    for entry in part.into_inner() {
                        self.block_part(entry, &mut block, Context::Block);
                    }
                }
                _ => {}
            }
        }
        let mut fields = Fields::new(block, format!("{} `{}`", kind.keyword(), from.name));
        let (branches, branches_span, over, item) = match kind {
            ForkKind::Parallel => {
                let value = fields.value(self, "branches");
                fields.require(self, &value, "branches", "branches = [first, second]");
                let span = value.as_ref().map(|v| v.span);
                let branches = value.map(|v| ident_list(self, "branches", &v)).unwrap_or_default();
                (branches, span, None, None)
            }
            ForkKind::Map => {
                let over = fields.ident(self, "over");
                fields.require(self, &over, "over", "over = list_field");
                let item = fields.ident(self, "item");
                fields.require(self, &item, "item", "item = item_field");
                let node = fields.ident(self, "node");
                fields.require(self, &node, "node", "node = first_node_of_each_branch");
                let span = node.as_ref().map(|n| n.span);
                (node.into_iter().collect(), span, over, item)
            }
        };
        let join = fields.ident(self, "join");
        fields.require(self, &join, "join", "join = node_after_the_branches");
        let max_concurrency = fields.count(self, "max_concurrency");
        fields.finish(self);
        let span = tenx_diagnostics::Span {
            start: whole.start,
            end: from.span.end.max(whole.start),
        };
        Fork {
            kind,
            from,
            branches,
            branches_span,
            over,
            item,
            join,
            max_concurrency,
            span,
        }
    }

    /// The entries of a `reduce` map; anything else is reported (`TENX0108`).
    pub(super) fn reducers(&mut self, value: &Expr) -> Vec<ReducerDecl> {
        let ExprKind::Map(entries) = &value.kind else {
            expected(self, "reduce", REDUCE_SHAPE, value);
            return Vec::new();
        };
        let mut out = Vec::with_capacity(entries.len());
        let mut seen: Vec<&MapEntry> = Vec::new();
        for entry in entries {
            let field = Ident {
                name: entry.key.clone(),
                span: entry.key_span,
            };
            if let Some(first) = seen.iter().find(|e| e.key == entry.key) {
                let d = self
                    .diag(
                        Code::TENX0107,
                        format!("`reduce` names `{}` twice", entry.key),
                        entry.key_span,
                    )
                    .label("named again here")
                    .secondary(self.file, first.key_span, "first named here")
                    .help("give each field one reducer");
                self.report(d);
                continue;
            }
            seen.push(entry);
            let (reduce, order) = match &entry.value.kind {
                ExprKind::Path(path) if path.len() == 1 => (path.first().cloned(), None),
                ExprKind::Call { callee, args } if callee.len() == 1 => {
                    let mut order = Vec::with_capacity(args.len());
                    for arg in args {
                        match (&arg.name, arg.value.as_ident()) {
                            (None, Some(name)) => order.push(name.clone()),
                            _ => {
                                let d = self
                                    .diag(Code::TENX0108, format!("`{}(…)` takes node names", callee.first().map_or("last", |c| c.name.as_str())), arg.value.span)
                                    .label(format!("found {}", arg.value.describe()))
                                    .help("name the first nodes of the parallel branches, in the order they win: `last(a, b)`");
                                self.report(d);
                            }
                        }
                    }
                    (callee.first().cloned(), Some(order))
                }
                _ => (None, None),
            };
            match reduce {
                Some(reduce) if crate::lower::reduction(&reduce.name).is_none() => {
                    let help = crate::suggest::did_you_mean(&reduce.name, REDUCTIONS).map_or_else(
                        || "write `append`, `merge`, `sum`, `last` or `last(a, b)`".to_owned(),
                        |s| format!("did you mean `{s}`?"),
                    );
                    let d = self
                        .diag(
                            Code::TENX0108,
                            format!("`{}` is not a reduction", reduce.name),
                            reduce.span,
                        )
                        .label("unknown reduction")
                        .help(help);
                    self.report(d);
                }
                Some(reduce) => out.push(ReducerDecl {
                    field,
                    reduce,
                    order,
                    span: entry.value.span,
                }),
                None => expected(self, "reduce", REDUCE_SHAPE, &entry.value),
            }
        }
        out
    }
}
