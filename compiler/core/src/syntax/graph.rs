//! Lowering of `graph` declarations: entry, extra entries, nodes, validators, state, edges,
//! routes and result fields.

use super::bad_lines::Context;
use super::blocks::{BlockData, Fields, expected};
use super::model::decl_name;
use super::{Lower, child, mistakes};
use crate::ast::{ArmKind, CompareOp, Condition, ExprKind, GraphDecl, Ident, Route, RouteArm, ValidatorUse};
use tenx_diagnostics::{Code, Span};
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

impl Lower<'_> {
    pub(super) fn graph(&mut self, pair: Pair<'_, Rule>) -> GraphDecl {
        let span = self.span(&pair);
        let name = decl_name(self, &pair);
        let mut edges = Vec::new();
        let mut routes = Vec::new();
        let mut forks = Vec::new();
        let mut state = Vec::new();
        let mut state_span: Option<Span> = None;
        let mut block = BlockData::new(span);
        if let Some(body) = child(&pair, Rule::graph_block) {
            let start = self.span(&body).start as usize;
            block.open = Span::new(start, start + 1);
            for part in body.into_inner() {
                match part.as_rule() {
                    Rule::edge => {
                        if let Some(edge) = self.edge(part) {
                            edges.push(edge);
                        }
                    }
                    Rule::route => routes.push(self.route(part)),
                    Rule::fork_block => forks.push(self.fork(part)),
                    Rule::state_block => {
                        let here = self.state_keyword(&part);
                        if let Some(first) = state_span {
                            let d = self
                                .diag(
                                    Code::TENX0107,
                                    format!("graph `{}` has two `state` blocks", name.name),
                                    here,
                                )
                                .label("second `state` block")
                                .secondary(self.file, first, "first `state` block")
                                .help("declare all state fields in one `state` block");
                            self.report(d);
                        }
                        state_span.get_or_insert(here);
                        // The state block's `{`.
                        let whole = self.span(&part);
                        let brace = part
                            .as_str()
                            .find('{')
                            .map_or(whole.start as usize, |n| whole.start as usize + n);
                        let open = Span::new(brace, brace + 1);
                        for field in part.into_inner() {
                            match field.as_rule() {
                                Rule::param => state.extend(self.param(field)),
                                Rule::bad_line => {
                                    self.bad_line(&field, Context::State);
                                }
                                Rule::missing_close => self.missing_close(open),
                                _ => {}
                            }
                        }
                    }
                    Rule::bad_line => {
                        // `a -> b -> c`: the edge `a -> b` was read, and `-> c` is left over.
                        let whole = self.span(&part);
                        let chain = edges
                            .last()
                            .filter(|e: &&crate::ast::Edge| {
                                !self
                                    .text_between(e.to.span.end as usize, whole.start as usize)
                                    .contains('\n')
                            })
                            .cloned()
                            .and_then(|e| Some((e, self.chained_nodes(whole.start as usize, part.as_str())?)));
                        match chain {
                            Some((first, rest)) => {
                                let more = self.chained_edge(&first, rest);
                                edges.extend(more);
                            }
                            None => {
                                // `rout triage by verdict { … }`: a misspelt `route`, read as one.
                                let text = part.as_str();
                                let word = mistakes::first_word(text);
                                let start = whole.start as usize;
                                let route = mistakes::near_graph_keyword(word).and_then(|keyword| {
                                    let mut route =
                                        self.read_respelt(start, text, word, keyword, Rule::route, |l, p| {
                                            Some(l.route(p))
                                        })?;
                                    route.span.start = start as u32;
                                    let d = mistakes::keyword_diagnostic(self.file, word, keyword, start);
                                    self.report(d);
                                    Some(route)
                                });
                                match route {
                                    Some(route) => routes.push(route),
                                    None => self.block_part(part, &mut block, Context::Graph),
                                }
                            }
                        }
                    }
                    _ => self.block_part(part, &mut block, Context::Graph),
                }
            }
        }
        let mut fields = Fields::new(block, format!("graph `{}`", name.name));
        let entry = fields.ident(self, "entry");
        let nodes = fields.ident_list(self, "nodes");
        let validate = fields
            .value(self, "validate")
            .map(|v| self.validator_uses("validate", &v))
            .unwrap_or_default();
        let recursion_limit = fields.count(self, "recursion_limit");
        let entries = fields.ident_list(self, "entries");
        let results = fields
            .value(self, "results")
            .map(|v| self.result_writes(&v))
            .unwrap_or_default();
        let answers = fields
            .value(self, "answers")
            .map(|v| self.answer_writes(&v))
            .unwrap_or_default();
        let visits = fields
            .value(self, "visits")
            .map(|v| self.visit_limits(&v))
            .unwrap_or_default();
        let on_error = fields
            .value(self, "on_error")
            .map(|v| self.error_exits(&v))
            .unwrap_or_default();
        let resume = fields.ident(self, "resume");
        let retry = fields
            .value(self, "retry")
            .map(|v| self.node_retries(&v))
            .unwrap_or_default();
        let subgraphs = fields
            .value(self, "subgraphs")
            .map(|v| self.subgraph_maps(&v))
            .unwrap_or_default();
        let reduce = fields
            .value(self, "reduce")
            .map(|v| self.reducers(&v))
            .unwrap_or_default();
        fields.finish(self);
        GraphDecl {
            name,
            entry,
            nodes,
            validate,
            recursion_limit,
            state,
            edges,
            routes,
            span,
            entries,
            results,
            answers,
            visits,
            on_error,
            resume,
            retry,
            subgraphs,
            forks,
            reduce,
        }
    }

    fn state_keyword(&self, pair: &Pair<'_, Rule>) -> Span {
        child(pair, Rule::kw_state).map_or_else(|| self.span(pair), |k| self.span(&k))
    }

    fn edge(&mut self, pair: Pair<'_, Rule>) -> Option<crate::ast::Edge> {
        let span = self.span(&pair);
        let mut nodes = Vec::new();
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::node_ref => nodes.extend(part.into_inner().next().map(|i| self.ident(&i))),
                Rule::arrow => self.arrow(&part),
                _ => {}
            }
        }
        let mut nodes = nodes.into_iter();
        Some(crate::ast::Edge {
            from: nodes.next()?,
            to: nodes.next()?,
            span,
        })
    }

    /// Reports `=>` used as an arrow.
    fn arrow(&mut self, pair: &Pair<'_, Rule>) {
        if let Some(fat) = child(pair, Rule::fat_arrow) {
            let span = self.span(&fat);
            let d = self
                .diag(Code::TENX0004, "`=>` is not an arrow in `.tenx`", span)
                .label("write `->` here")
                .help("edges and route arms use `->`");
            self.report(d);
        }
    }

    fn route(&mut self, pair: Pair<'_, Rule>) -> Route {
        let whole = self.span(&pair);
        let mut from = Ident {
            name: String::new(),
            span: whole,
        };
        let mut by = None;
        let mut arms = Vec::new();
        let mut header_end = whole.start;
        // `else` arms read from a misspelt keyword (`otherwise -> END`).
        let mut respelt_else = Vec::new();
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::node_ref => {
                    if let Some(i) = part.into_inner().next() {
                        from = self.ident(&i);
                        header_end = from.span.end;
                    }
                }
                Rule::route_by => by = child(&part, Rule::ident).map(|i| self.ident(&i)),
                Rule::label_arm | Rule::when_arm | Rule::else_arm => arms.extend(self.arm(part)),
                Rule::bad_line => {
                    // `els -> END`, `if score < 1 -> x`: a misspelt arm keyword.
                    let start = self.span(&part).start as usize;
                    let text = part.as_str();
                    let word = mistakes::first_word(text);
                    match mistakes::near_arm_keyword(word) {
                        Some(keyword) => {
                            let d = mistakes::keyword_diagnostic(self.file, word, keyword, start);
                            self.report(d);
                            let rule = if keyword == "else" {
                                Rule::else_arm
                            } else {
                                Rule::when_arm
                            };
                            let arm = self.read_respelt(start, text, word, keyword, rule, |l, p| l.arm(p));
                            arms.extend(arm.map(|mut arm| {
                                arm.span.start = start as u32;
                                if matches!(arm.kind, ArmKind::Else) {
                                    respelt_else.push(arm.span);
                                }
                                arm
                            }));
                        }
                        None => {
                            self.bad_line(&part, Context::Route);
                        }
                    }
                }
                Rule::missing_close => self.missing_close(Span::new(whole.start as usize, header_end as usize)),
                _ => {}
            }
        }
        // A misspelt `else` next to a real one is reported already: not a second `else` too.
        let real_else = arms
            .iter()
            .any(|a| matches!(a.kind, ArmKind::Else) && !respelt_else.contains(&a.span));
        if real_else {
            arms.retain(|a| !respelt_else.contains(&a.span));
        }
        Route {
            from,
            by,
            arms,
            span: Span {
                start: whole.start,
                end: header_end,
            },
        }
    }

    fn arm(&mut self, pair: Pair<'_, Rule>) -> Option<RouteArm> {
        let span = self.span(&pair);
        let rule = pair.as_rule();
        let mut kind = match rule {
            Rule::else_arm => Some(ArmKind::Else),
            _ => None,
        };
        let mut target = None;
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::string => {
                    let s = self.span(&part);
                    kind = Some(ArmKind::Label(self.string(&part), s));
                }
                Rule::condition => kind = Some(ArmKind::When(self.condition(part))),
                Rule::arrow => self.arrow(&part),
                Rule::node_ref => target = part.into_inner().next().map(|i| self.ident(&i)),
                _ => {}
            }
        }
        Some(RouteArm {
            kind: kind?,
            target: target?,
            span,
        })
    }

    pub(super) fn condition(&mut self, pair: Pair<'_, Rule>) -> Condition {
        let span = self.span(&pair);
        match pair.as_rule() {
            Rule::condition | Rule::cond_and => {
                let is_or = pair.as_rule() == Rule::condition;
                let mut parts: Vec<Condition> = pair
                    .into_inner()
                    .filter(|p| !matches!(p.as_rule(), Rule::kw_or | Rule::kw_and))
                    .map(|p| self.condition(p))
                    .collect();
                if parts.len() == 1
                    && let Some(one) = parts.pop()
                {
                    return one;
                }
                if is_or {
                    Condition::Or(parts)
                } else {
                    Condition::And(parts)
                }
            }
            Rule::cond_not => {
                // `not not x` is `x`: conditions are two-valued (an unset field makes a
                // comparison false, and `not` makes that true), so only the parity of the `not`s
                // matters, and a long chain never nests deeply.
                let nots = pair
                    .clone()
                    .into_inner()
                    .filter(|p| p.as_rule() == Rule::kw_not)
                    .count();
                let inner = pair
                    .into_inner()
                    .find(|p| p.as_rule() != Rule::kw_not)
                    .map(|p| self.condition(p))
                    .unwrap_or(Condition::And(Vec::new()));
                if nots % 2 == 1 {
                    Condition::Not(Box::new(inner))
                } else {
                    inner
                }
            }
            Rule::comparison => {
                let mut field = Vec::new();
                let mut op = None;
                let mut value = None;
                for part in pair.into_inner() {
                    match part.as_rule() {
                        Rule::field_ref => field = part.into_inner().map(|i| self.ident(&i)).collect(),
                        Rule::compare_op => {
                            let op_span = self.span(&part);
                            op = Some((compare_op(part.as_str()), op_span));
                        }
                        _ => value = Some(self.value(part)),
                    }
                }
                let op = match (op, value) {
                    (Some((op, op_span)), Some(value)) => Some((op, op_span, value)),
                    _ => None,
                };
                Condition::Compare { field, op, span }
            }
            _ => Condition::And(Vec::new()),
        }
    }

    /// The validators of a `validate` (graph) or `guard` (agent) field.
    pub(super) fn validator_uses(&mut self, field: &str, v: &crate::ast::Expr) -> Vec<ValidatorUse> {
        let items: Vec<&crate::ast::Expr> = match &v.kind {
            ExprKind::List(items) => items.iter().collect(),
            _ => vec![v],
        };
        let mut out = Vec::new();
        for item in items {
            match &item.kind {
                ExprKind::Path(p) => {
                    if let Some(name) = p.last() {
                        out.push(ValidatorUse {
                            name: name.clone(),
                            args: Vec::new(),
                            span: item.span,
                        });
                    }
                }
                ExprKind::Call { callee, args } => {
                    if let Some(name) = callee.last() {
                        out.push(ValidatorUse {
                            name: name.clone(),
                            args: args.clone(),
                            span: item.span,
                        });
                    }
                }
                _ => expected(self, field, "validator names or calls", item),
            }
        }
        out
    }
}

fn compare_op(text: &str) -> CompareOp {
    match text {
        "==" => CompareOp::Eq,
        "!=" => CompareOp::Ne,
        "<" => CompareOp::Lt,
        "<=" => CompareOp::Le,
        ">" => CompareOp::Gt,
        ">=" => CompareOp::Ge,
        _ => CompareOp::In,
    }
}
