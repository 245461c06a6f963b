//! Moving a parsed item to another place in its file: every span it holds is shifted by the same
//! number of bytes. An editor's re-check reuses the parse of each item whose text did not
//! change (see [`crate::syntax::ParseCache`]), although an edit before it moved it. Each struct
//! is taken apart field by field, so a field added later without being shifted does not compile.

use super::*;
use tenx_diagnostics::{Diagnostic, Label, Span};

/// Shifts every span by `by` bytes.
pub trait Shift {
    /// Moves `self` by `by` bytes (negative: towards the start of the file).
    fn shift(&mut self, by: i64);
}

fn moved(at: u32, by: i64) -> u32 {
    u32::try_from(i64::from(at).saturating_add(by)).unwrap_or(at)
}

impl Shift for Span {
    fn shift(&mut self, by: i64) {
        self.start = moved(self.start, by);
        self.end = moved(self.end, by);
    }
}

/// Values that hold no span.
macro_rules! no_span {
    ($($ty:ty),* $(,)?) => {
        $(impl Shift for $ty {
            fn shift(&mut self, _by: i64) {}
        })*
    };
}

no_span!(
    String,
    bool,
    u64,
    Risk,
    CompareOp,
    ForkKind,
    serde_json::Value,
    serde_json::Map<String, serde_json::Value>,
    serde_json::Number,
    tenx_artifact::Turn,
);

impl<T: Shift> Shift for Option<T> {
    fn shift(&mut self, by: i64) {
        if let Some(value) = self {
            value.shift(by);
        }
    }
}

impl<T: Shift> Shift for Vec<T> {
    fn shift(&mut self, by: i64) {
        for value in self {
            value.shift(by);
        }
    }
}

impl<T: Shift> Shift for Box<T> {
    fn shift(&mut self, by: i64) {
        (**self).shift(by);
    }
}

impl<A: Shift, B: Shift> Shift for (A, B) {
    fn shift(&mut self, by: i64) {
        self.0.shift(by);
        self.1.shift(by);
    }
}

impl<A: Shift, B: Shift, C: Shift> Shift for (A, B, C) {
    fn shift(&mut self, by: i64) {
        self.0.shift(by);
        self.1.shift(by);
        self.2.shift(by);
    }
}

/// A struct shifted field by field; the pattern names every field, so none can be forgotten.
macro_rules! fields {
    ($($ty:path { $($field:ident),* $(,)? })*) => {
        $(impl Shift for $ty {
            fn shift(&mut self, by: i64) {
                let $ty { $($field),* } = self;
                $($field.shift(by);)*
            }
        })*
    };
}

fields! {
    Ident { name, span }
    Expr { kind, span }
    Arg { name, value }
    MapEntry { key, key_span, value }
    Import { target, span }
    TagDecl { name, description, span }
    SchemaDecl { name, ty, span }
    Param { name, optional, ty, default, description, span }
    ModelDecl { name, provider, model_name, base_url, api_key, params, turns, span, rules, fallback }
    Approval {
        message, reason, response, expires, on_reject, evidence, span, target, approvers,
        separate_duties, decision, feedback,
    }
    ToolDecl {
        name, params, result, parameters_schema, description, exposed_name, tags, risk, approval,
        idempotency_key, run, span, bind, risk_rules, retry,
    }
    RiskRule { risk, risk_span, condition, span }
    AgentDecl { name, model, prompt, tools, handoffs, output, span, guard, retries, payloads, input, agent_tools, description }
    AgentToolUse { agent, params }
    HandoffPayload { target, params }
    ValidatorDecl { name, params, description, builtin, deny_patterns, deny_keywords, max_length, span }
    InterruptDecl {
        name, message, reason, value, response, expires, approves, on_reject, span, target,
        evidence, approvers, separate_duties, decision, feedback,
    }
    GraphDecl {
        name, entry, nodes, validate, recursion_limit, state, edges, routes, span, entries,
        results, answers, visits, on_error, resume, retry, subgraphs, forks, reduce,
    }
    SubgraphMap { node, input, output, span }
    FieldMap { to, from }
    Fork { kind, from, branches, branches_span, over, item, join, max_concurrency, span }
    ReducerDecl { field, reduce, order, span }
    VisitLimit { node, max, exit }
    ErrorExit { node, target }
    AnswerWrite { node, property, field }
    ResultWrite { node, field, path }
    ValidatorUse { name, args, span }
    Edge { from, to, span }
    Route { from, by, arms, span }
    RouteArm { kind, target, span }
    NodeRetry { node, policy }
    TestDecl { name, name_span, graph, input, state, models, mocks, answers, expect, span }
    TestEntry { key, value }
    TestModel { model, turns }
    TestMock { tool, results }
    TestCall { tool, arguments }
    TestExpect { route, calls, approvals, state, message, status, error }
    Label { file, span, message }
    Diagnostic { code, severity, message, primary, secondary, help, notes }
}

no_span!(
    tenx_diagnostics::FileId,
    tenx_diagnostics::Code,
    tenx_diagnostics::Severity
);

impl Shift for ExprKind {
    fn shift(&mut self, by: i64) {
        match self {
            ExprKind::Str(_)
            | ExprKind::Text(_)
            | ExprKind::Number(_)
            | ExprKind::Duration(_)
            | ExprKind::Bool(_)
            | ExprKind::Null => {}
            ExprKind::Path(path) => path.shift(by),
            ExprKind::Call { callee, args } => {
                callee.shift(by);
                args.shift(by);
            }
            ExprKind::List(values) | ExprKind::Join(values) => values.shift(by),
            ExprKind::Map(entries) => entries.shift(by),
        }
    }
}

impl Shift for Item {
    fn shift(&mut self, by: i64) {
        match self {
            Item::Import(d) => d.shift(by),
            Item::Tag(d) => d.shift(by),
            Item::Schema(d) => d.shift(by),
            Item::Model(d) => d.shift(by),
            Item::Tool(d) => d.shift(by),
            Item::Agent(d) => d.shift(by),
            Item::Validator(d) => d.shift(by),
            Item::Interrupt(d) => d.shift(by),
            Item::Graph(d) => d.shift(by),
            Item::Test(d) => d.shift(by),
        }
    }
}

impl Shift for ImportTarget {
    fn shift(&mut self, by: i64) {
        match self {
            ImportTarget::Std { path, star } => {
                path.shift(by);
                star.shift(by);
            }
            ImportTarget::File { path, span } => {
                path.shift(by);
                span.shift(by);
            }
        }
    }
}

impl Shift for TypeExpr {
    fn shift(&mut self, by: i64) {
        match self {
            TypeExpr::Named {
                name,
                generic,
                args,
                span,
            } => {
                name.shift(by);
                generic.shift(by);
                args.shift(by);
                span.shift(by);
            }
            TypeExpr::Schema(expr) => expr.shift(by),
        }
    }
}

impl Shift for SchemaRef {
    fn shift(&mut self, by: i64) {
        match self {
            SchemaRef::Named(name) => name.shift(by),
            SchemaRef::Inline(expr) => expr.shift(by),
        }
    }
}

impl Shift for RunBinding {
    fn shift(&mut self, by: i64) {
        match self {
            RunBinding::Http {
                method,
                url,
                timeout_ms,
                headers,
            } => {
                method.shift(by);
                url.shift(by);
                timeout_ms.shift(by);
                headers.shift(by);
            }
            RunBinding::Remote | RunBinding::Mcp { server: _, tool: _ } => {}
            RunBinding::Builtin(name) => name.shift(by),
            RunBinding::Native { name, span } => {
                name.shift(by);
                span.shift(by);
            }
        }
    }
}

impl Shift for ToolSelector {
    fn shift(&mut self, by: i64) {
        match self {
            ToolSelector::Tagged { tags, span } => {
                tags.shift(by);
                span.shift(by);
            }
            ToolSelector::Named(name) => name.shift(by),
        }
    }
}

impl Shift for ArmKind {
    fn shift(&mut self, by: i64) {
        match self {
            ArmKind::Label(_, span) => span.shift(by),
            ArmKind::When(condition) => condition.shift(by),
            ArmKind::Else => {}
        }
    }
}

impl Shift for Condition {
    fn shift(&mut self, by: i64) {
        match self {
            Condition::Or(parts) | Condition::And(parts) => parts.shift(by),
            Condition::Not(inner) => inner.shift(by),
            Condition::Compare { field, op, span } => {
                field.shift(by);
                op.shift(by);
                span.shift(by);
            }
        }
    }
}

impl Shift for TestAnswer {
    fn shift(&mut self, _by: i64) {}
}
