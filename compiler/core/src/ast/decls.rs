//! Declarations other than graphs: imports, tags, schemas, models, tools, agents, validators,
//! interrupts, tests.

use super::{Arg, Expr, Ident};
use tenx_diagnostics::Span;

/// `import std.approval.yes_no`, `import std.approval.*` or `import "file.tenx"`.
#[derive(Debug, Clone)]
pub struct Import {
    /// What is imported.
    pub target: ImportTarget,
    /// The whole import.
    pub span: Span,
}

/// The two kinds of import.
#[derive(Debug, Clone)]
pub enum ImportTarget {
    /// A stdlib path such as `std.approval.yes_no`; `star` for `std.approval.*`.
    Std {
        /// The segments, `std` first.
        path: Vec<Ident>,
        /// Whether the path ends in `.*`.
        star: bool,
    },
    /// Another file of the project, relative to the importing file.
    File {
        /// The path as written.
        path: String,
        /// Where the string is written.
        span: Span,
    },
}

/// `tag billing "Moves money"`.
#[derive(Debug, Clone)]
pub struct TagDecl {
    /// The tag.
    pub name: Ident,
    /// What it means.
    pub description: Option<String>,
    /// The whole declaration.
    pub span: Span,
}

/// A type: a named type with optional generic and arguments, or an inline JSON Schema map.
#[derive(Debug, Clone)]
pub enum TypeExpr {
    /// `int(min: 1)`, `list<string>`, `enum("a", "b")`, `yes_no`.
    Named {
        /// The type's name.
        name: Ident,
        /// `<T>`.
        generic: Option<Box<TypeExpr>>,
        /// `(...)`.
        args: Vec<Arg>,
        /// The whole type.
        span: Span,
    },
    /// `{ "type": "object", ... }`.
    Schema(Expr),
}

impl TypeExpr {
    /// The whole type's span.
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Named { span, .. } => *span,
            TypeExpr::Schema(e) => e.span,
        }
    }
}

/// `schema NAME = TYPE`.
#[derive(Debug, Clone)]
pub struct SchemaDecl {
    /// The schema's name.
    pub name: Ident,
    /// Its type.
    pub ty: TypeExpr,
    /// The whole declaration.
    pub span: Span,
}

/// A tool parameter or state field: `name?: TYPE = default "description"`.
#[derive(Debug, Clone)]
pub struct Param {
    /// The name.
    pub name: Ident,
    /// Whether `?` marks it optional.
    pub optional: bool,
    /// The type.
    pub ty: TypeExpr,
    /// The default value.
    pub default: Option<Expr>,
    /// The description string.
    pub description: Option<String>,
    /// The whole parameter.
    pub span: Span,
}

/// A reference to a schema: a schema name or an inline JSON Schema map.
#[derive(Debug, Clone)]
pub enum SchemaRef {
    /// A declared (or imported) schema's name.
    Named(Ident),
    /// An inline schema.
    Inline(Expr),
}

impl SchemaRef {
    /// Where the reference is written.
    pub fn span(&self) -> Span {
        match self {
            SchemaRef::Named(i) => i.span,
            SchemaRef::Inline(e) => e.span,
        }
    }
}

/// `model NAME { ... }`.
#[derive(Debug, Clone)]
pub struct ModelDecl {
    /// The model's name in the program.
    pub name: Ident,
    /// `provider = openai`.
    pub provider: Option<Ident>,
    /// `name = "gpt-4o-mini"`: the provider's model name.
    pub model_name: Option<Expr>,
    /// `base_url = "..."`.
    pub base_url: Option<Expr>,
    /// `api_key = env("NAME")`.
    pub api_key: Option<Expr>,
    /// `params = { temperature: 0.2 }`.
    pub params: Option<Expr>,
    /// `turns = [...]`, for the scripted provider.
    pub turns: Option<Expr>,
    /// The whole declaration.
    pub span: Span,
    /// `rules = [{ match: "regex", turns: [...] }]`, for the scripted provider.
    pub rules: Option<Expr>,
    /// `fallback = { text: "..." }`, for the scripted provider: the turn when no rule matches.
    pub fallback: Option<Expr>,
}

/// A tool's risk level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Risk {
    /// Runs automatically.
    Low,
    /// Should be confirmed.
    Medium,
    /// Must be approved before it runs.
    High,
    /// Must never be offered.
    Prohibited,
}

impl Risk {
    /// `low`, `medium`, `high`, `prohibited`.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
            Risk::Prohibited => "prohibited",
        }
    }
}

/// An `approval { ... }` block of a tool.
#[derive(Debug, Clone)]
pub struct Approval {
    /// `message = "Approve {x}?"`.
    pub message: Option<Expr>,
    /// `reason = "tool_approval"`.
    pub reason: Option<Expr>,
    /// `response = yes_no`.
    pub response: Option<SchemaRef>,
    /// `expires = 24h`, in milliseconds.
    pub expires: Option<(u64, Span)>,
    /// `on_reject = "Refund declined."`.
    pub on_reject: Option<Expr>,
    /// `evidence = [order_id, "policy-rule-3"]`.
    pub evidence: Vec<Expr>,
    /// The `approval` keyword.
    pub span: Span,
    /// `target = "order {order_id}"`: a template over the parameters.
    pub target: Option<Expr>,
    /// `approvers = [role("…"), scope("…")]`, as written (checked in `check/approvers`).
    pub approvers: Option<Expr>,
    /// `separate_duties = true|false`, when written.
    pub separate_duties: Option<(bool, Span)>,
    /// `decision = { field: "verdict", approve: "ship", edit: "amend" }`: how a custom
    /// `response` reads as approve, edit, respond or reject.
    pub decision: Option<Expr>,
    /// `feedback = "note"`: the string property of the answer returned to the model with
    /// `on_reject` on a rejection.
    pub feedback: Option<Expr>,
}

/// How a tool runs.
#[derive(Debug, Clone)]
pub enum RunBinding {
    /// `http(POST, "url", timeout: 10s)`.
    Http {
        /// The HTTP method.
        method: Ident,
        /// The URL (may hold `${ENV}` references).
        url: Expr,
        /// The timeout in milliseconds.
        timeout_ms: Option<u64>,
        /// `headers: { "Authorization": "Bearer ${TOKEN}" }`: the map as written (its keys and
        /// values are checked by `check/bindings`).
        headers: Option<Expr>,
    },
    /// `remote`: the API client runs it and posts the result back.
    Remote,
    /// `builtin(name)`: a stdlib function.
    Builtin(Ident),
    /// `mcp(server: "files", tool: "read_file")`.
    Mcp {
        /// The MCP server's name.
        server: String,
        /// The tool's name on the server (defaults to the tool's name).
        tool: Option<String>,
    },
    /// `native("crm.lookup")`: a handler the host registers under that name.
    Native {
        /// The handler's name, as written.
        name: String,
        /// Where the name is written.
        span: Span,
    },
}

impl RunBinding {
    /// `http`, `remote`, `builtin`, `mcp`, `native`.
    pub fn source(&self) -> &'static str {
        match self {
            RunBinding::Http { .. } => "http",
            RunBinding::Remote => "remote",
            RunBinding::Builtin(_) => "builtin",
            RunBinding::Mcp { .. } => "mcp",
            RunBinding::Native { .. } => "native",
        }
    }
}

/// `tool NAME(PARAMS) -> RESULT { ... }`.
#[derive(Debug, Clone)]
pub struct ToolDecl {
    /// The tool's name in the program.
    pub name: Ident,
    /// The parameter list, when written.
    pub params: Option<Vec<Param>>,
    /// `-> TYPE`.
    pub result: Option<TypeExpr>,
    /// `parameters = { JSON Schema }`, instead of a parameter list.
    pub parameters_schema: Option<Expr>,
    /// `description = "..."`.
    pub description: Option<Expr>,
    /// `name = "..."`: the name the model sees.
    pub exposed_name: Option<(String, Span)>,
    /// `tags = [...]`.
    pub tags: Vec<Ident>,
    /// `risk = ...`.
    pub risk: Option<(Risk, Span)>,
    /// `approval { ... }`.
    pub approval: Option<Approval>,
    /// `idempotency_key = "..."`.
    pub idempotency_key: Option<Expr>,
    /// `run = ...`.
    pub run: Option<(RunBinding, Span)>,
    /// The whole declaration.
    pub span: Span,
    /// `bind = { order_id: state.order_id, user_id: caller.user_id }`: parameters the runtime
    /// fills, as written (checked and read by `check/bound_args`).
    pub bind: Option<Expr>,
    /// `risk_rules { high = "amount_cents > 10000" }`: argument-dependent risk, in order.
    pub risk_rules: Vec<RiskRule>,
    /// `retry = { attempts: 3, backoff: 1s, … }`: how a failed call is attempted again, as
    /// written (read by [`crate::retry`], checked in `check/retries`).
    pub retry: Option<Expr>,
}

/// One entry of a tool's `risk_rules { … }`: the call's risk when the condition holds on its
/// arguments.
#[derive(Debug, Clone)]
pub struct RiskRule {
    /// The risk the rule gives.
    pub risk: Risk,
    /// Where the risk is written (the entry's key).
    pub risk_span: Span,
    /// The condition over the parameters, read from the string.
    pub condition: super::Condition,
    /// The condition string.
    pub span: Span,
}

impl ToolDecl {
    /// The name the model sees.
    pub fn model_name(&self) -> &str {
        self.exposed_name.as_ref().map_or(&self.name.name, |(n, _)| n)
    }

    /// The worst-case risk: the highest of the base risk (`low` when not written) and every
    /// risk rule's. Every policy check reads this, so a tool that may be `high` is treated as one.
    pub fn risk_level(&self) -> Risk {
        self.risk_rules.iter().map(|r| r.risk).fold(self.base_risk(), Ord::max)
    }

    /// Where the worst-case risk is written: the first rule that gives it when it is above the
    /// base, else `risk = …`, else `None`.
    pub fn risk_span(&self) -> Option<Span> {
        let base = self.base_risk();
        self.risk_rules
            .iter()
            .filter(|r| r.risk > base)
            .find(|r| r.risk == self.risk_level())
            .map(|r| r.risk_span)
            .or(self.risk.map(|(_, span)| span))
    }

    /// The risk of a call no risk rule matches, `low` when not written.
    pub fn base_risk(&self) -> Risk {
        self.risk.map_or(Risk::Low, |(r, _)| r)
    }

    /// Whether some call may have `risk`: the base or a rule gives it.
    pub fn may_be(&self, risk: Risk) -> bool {
        self.base_risk() == risk || self.risk_rules.iter().any(|r| r.risk == risk)
    }
}

/// One part of an agent's `tools = ...`.
#[derive(Debug, Clone)]
pub enum ToolSelector {
    /// `tagged(a, b)`: every tool with any of these tags.
    Tagged {
        /// The tags.
        tags: Vec<Ident>,
        /// The whole `tagged(...)`.
        span: Span,
    },
    /// A tool by name.
    Named(Ident),
}

/// `agent NAME { ... }`.
#[derive(Debug, Clone)]
pub struct AgentDecl {
    /// The agent's name.
    pub name: Ident,
    /// `model = ...`.
    pub model: Option<Ident>,
    /// `prompt = ...`.
    pub prompt: Option<Expr>,
    /// `tools = ...`.
    pub tools: Vec<ToolSelector>,
    /// `handoffs = [...]`.
    pub handoffs: Vec<Ident>,
    /// `output = SCHEMA`.
    pub output: Option<SchemaRef>,
    /// The whole declaration.
    pub span: Span,
    /// `guard = [...]`: validators of the model's output (final answers and tool-call arguments).
    pub guard: Vec<super::ValidatorUse>,
    /// `retries = N`: how many times the model is asked again after an answer fails its guard or
    /// its `output` schema.
    pub retries: Option<(u64, Span)>,
    /// The typed payloads of `handoffs`: one per item written with a parameter list,
    /// `escalation(reason: string "Why")`, in the order written.
    pub payloads: Vec<HandoffPayload>,
    /// `input = …`: what the model is shown of the conversation (left out: all of it).
    pub input: Option<super::AgentInput>,
    /// `agents = [spanish(text: string "…"), critic]`: other agents the model may call as tools.
    pub agent_tools: Vec<super::AgentToolUse>,
    /// `description = "…"`: what a model that calls this agent as a tool is told it does.
    pub description: Option<Expr>,
}

/// The payload of one handoff: the parameters the model passes when it hands off.
#[derive(Debug, Clone)]
pub struct HandoffPayload {
    /// The handoff target, as written in `handoffs`.
    pub target: Ident,
    /// The parameters, written like a tool's.
    pub params: Vec<Param>,
}

impl AgentDecl {
    /// The payload parameters of the (first) handoff to `target`, when it declares any.
    pub fn payload(&self, target: &str) -> Option<&[Param]> {
        self.payloads
            .iter()
            .find(|p| p.target.name == target)
            .map(|p| p.params.as_slice())
    }
}

/// `validator NAME(PARAMS) { ... }`.
#[derive(Debug, Clone)]
pub struct ValidatorDecl {
    /// The validator's name.
    pub name: Ident,
    /// Parameters (stdlib validators).
    pub params: Option<Vec<Param>>,
    /// `description = "..."`.
    pub description: Option<Expr>,
    /// `run = builtin(name)` (stdlib validators).
    pub builtin: Option<Ident>,
    /// `deny_patterns = ["regex", ...]`.
    pub deny_patterns: Vec<Expr>,
    /// `deny_keywords = ["word", ...]`.
    pub deny_keywords: Vec<Expr>,
    /// `max_length = 4000`.
    pub max_length: Option<Expr>,
    /// The whole declaration.
    pub span: Span,
}

/// `interrupt NAME { ... }`: an explicit human step.
#[derive(Debug, Clone)]
pub struct InterruptDecl {
    /// The step's name.
    pub name: Ident,
    /// `message = "..."`.
    pub message: Option<Expr>,
    /// `reason = "..."`.
    pub reason: Option<Expr>,
    /// `value = { ... }`.
    pub value: Option<Expr>,
    /// `response = SCHEMA`.
    pub response: Option<SchemaRef>,
    /// `expires = 24h`.
    pub expires: Option<(u64, Span)>,
    /// `approves = [tool, ...]`.
    pub approves: Vec<Ident>,
    /// `on_reject = "..."`.
    pub on_reject: Option<Expr>,
    /// The whole declaration.
    pub span: Span,
    /// `target = "..."`: a template over the state.
    pub target: Option<Expr>,
    /// `evidence = [field, "literal"]`.
    pub evidence: Vec<Expr>,
    /// `approvers = [role("…"), scope("…")]`, as written (checked in `check/approvers`).
    pub approvers: Option<Expr>,
    /// `separate_duties = true|false`, when written.
    pub separate_duties: Option<(bool, Span)>,
    /// `decision = { field: "verdict", approve: "ship" }`: how a custom `response` reads as
    /// approve or reject.
    pub decision: Option<Expr>,
    /// `feedback = "note"`: the string property of the answer added to the run's final message
    /// when a rejection ends it.
    pub feedback: Option<Expr>,
}
