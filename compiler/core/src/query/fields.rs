//! The fields of each block, with what each means: completion offers them and hover explains
//! them. The parser accepts exactly these (a test holds the two in step).

/// A block that has fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// `model NAME { … }`
    Model,
    /// `tool NAME(…) { … }`
    Tool,
    /// A tool's `approval { … }`
    Approval,
    /// `agent NAME { … }`
    Agent,
    /// `validator NAME { … }`
    Validator,
    /// `interrupt NAME { … }`
    Interrupt,
    /// `graph NAME { … }`
    Graph,
}

impl Block {
    /// The block a keyword opens (`tool` → [`Block::Tool`]).
    pub fn from_keyword(word: &str) -> Option<Block> {
        Some(match word {
            "model" => Block::Model,
            "tool" => Block::Tool,
            "approval" => Block::Approval,
            "agent" => Block::Agent,
            "validator" => Block::Validator,
            "interrupt" => Block::Interrupt,
            "graph" => Block::Graph,
            _ => return None,
        })
    }

    /// Its fields: name, whether it is written as a block (`state { … }`), and meaning.
    pub fn fields(self) -> &'static [Field] {
        match self {
            Block::Model => MODEL,
            Block::Tool => TOOL,
            Block::Approval => APPROVAL,
            Block::Agent => AGENT,
            Block::Validator => VALIDATOR,
            Block::Interrupt => INTERRUPT,
            Block::Graph => GRAPH,
        }
    }

    /// The field called `name`.
    pub fn field(self, name: &str) -> Option<&'static Field> {
        self.fields().iter().find(|f| f.name == name)
    }
}

/// One field of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Its name.
    pub name: &'static str,
    /// Whether it is written `name { … }` rather than `name = value`.
    pub block: bool,
    /// What it means.
    pub meaning: &'static str,
}

const fn value(name: &'static str, meaning: &'static str) -> Field {
    Field {
        name,
        block: false,
        meaning,
    }
}

const fn block(name: &'static str, meaning: &'static str) -> Field {
    Field {
        name,
        block: true,
        meaning,
    }
}

const MODEL: &[Field] = &[
    value(
        "provider",
        "The provider: `openai` (and OpenAI-compatible servers), `anthropic`, or `scripted` for tests and demos.",
    ),
    value("name", "The provider's model name, such as `\"gpt-4o-mini\"`."),
    value(
        "base_url",
        "The API's base URL, for OpenAI-compatible servers (vLLM, Ollama, llama.cpp).",
    ),
    value(
        "api_key",
        "Where the API key comes from: `env(\"NAME\")`. Never a literal key.",
    ),
    value(
        "params",
        "Sampling parameters passed to the provider: `{ temperature: 0.2 }`.",
    ),
    value("turns", "For `provider = scripted`: the model turns, in order."),
    value(
        "rules",
        "For `provider = scripted`: `[{ match: \"regex\", turns: [...] }]`, the turns for a matching message.",
    ),
    value("fallback", "For `provider = scripted`: the turn when no rule matches."),
];

const TOOL: &[Field] = &[
    value("description", "What the tool does, as the model reads it. Required."),
    value(
        "name",
        "The name the model sees, when it differs from the declared name.",
    ),
    value(
        "parameters",
        "The parameters as a JSON Schema, instead of a parameter list.",
    ),
    value("tags", "Tags that select the tool in an agent's `tools = tagged(…)`."),
    value(
        "risk",
        "`low` (runs automatically), `medium`, `high` (needs an approval) or `prohibited` (never offered).",
    ),
    block(
        "approval",
        "The human approval a call needs before it runs: message, response schema, expiry, approvers.",
    ),
    value(
        "idempotency_key",
        "A template over the parameters: calls with the same key run once.",
    ),
    value(
        "run",
        "How the tool runs: `http(METHOD, \"url\")`, `remote`, `mcp(server: …)`, `native(\"name\")` or `builtin(name)`.",
    ),
    value(
        "bind",
        "Parameters the runtime fills from the state or the caller, hidden from the model.",
    ),
    block(
        "risk_rules",
        "Risk that depends on the arguments: `high = \"amount_cents > 10000\"`, in order.",
    ),
    value(
        "retry",
        "How a failed call is attempted again: `{ attempts: 3, backoff: 1s }`.",
    ),
];

const APPROVAL: &[Field] = &[
    value("message", "What the approver reads: a template over the parameters."),
    value(
        "reason",
        "A machine-readable reason for the pause, such as `\"tool_approval\"`.",
    ),
    value("response", "The schema of the approver's answer, such as `yes_no`."),
    value(
        "expires",
        "How long the approval may wait, such as `24h`; then the call is rejected.",
    ),
    value("on_reject", "What the model is told when the call is rejected."),
    value(
        "evidence",
        "Parameters and literals shown to the approver beside the message.",
    ),
    value(
        "target",
        "What the call acts on, a template over the parameters: `\"order {order_id}\"`.",
    ),
    value("approvers", "Who may answer: `[role(\"…\"), scope(\"…\")]`."),
    value(
        "separate_duties",
        "Whether the caller may approve their own call (`false` allows it).",
    ),
    value(
        "decision",
        "How a custom `response` reads as approve, edit or reject: `{ field: \"verdict\", approve: \"ship\" }`.",
    ),
    value(
        "feedback",
        "The string property of the answer returned to the model with `on_reject`.",
    ),
];

const AGENT: &[Field] = &[
    value("model", "The `model` declaration the agent calls."),
    value(
        "prompt",
        "The system prompt: a string or a `\"\"\"` text block, a template over the state.",
    ),
    value(
        "tools",
        "The tools the model may call: names, and `tagged(tag, …)` for every tool with a tag, joined with `+`.",
    ),
    value(
        "handoffs",
        "The agents this agent may hand the conversation to, optionally with typed payloads.",
    ),
    value("output", "The schema the final answer must match (structured output)."),
    value(
        "guard",
        "Validators of the model's output: final answers and tool-call arguments.",
    ),
    value(
        "retries",
        "How many times the model is asked again after an answer fails its guard or `output`.",
    ),
    value(
        "input",
        "What the model sees of the conversation: `conversation` (the default), `none`, `last(N)` or a template string.",
    ),
    value(
        "agents",
        "Other agents the model may call as tools, each optionally with a parameter list.",
    ),
    value(
        "description",
        "What a model that calls this agent as a tool is told it does.",
    ),
];

const VALIDATOR: &[Field] = &[
    value("description", "What the validator rejects."),
    value("run", "`builtin(name)`: a standard-library validator (stdlib only)."),
    value(
        "deny_patterns",
        "Regular expressions: a message matching any is rejected.",
    ),
    value("deny_keywords", "Words: a message containing any is rejected."),
    value("max_length", "The longest message accepted, in characters."),
];

const INTERRUPT: &[Field] = &[
    value("message", "What the person reads: a template over the state."),
    value("reason", "A machine-readable reason for the pause."),
    value("value", "Data shown with the message."),
    value("response", "The schema of the person's answer."),
    value("expires", "How long the step may wait, such as `24h`."),
    value(
        "approves",
        "High-risk tools this step approves: the graph may then call them without their own approval.",
    ),
    value("on_reject", "The run's final message when the answer rejects."),
    value("target", "What the step is about, a template over the state."),
    value("evidence", "State fields and literals shown beside the message."),
    value("approvers", "Who may answer: `[role(\"…\"), scope(\"…\")]`."),
    value(
        "separate_duties",
        "Whether the caller may answer their own step (`false` allows it).",
    ),
    value("decision", "How a custom `response` reads as approve or reject."),
    value(
        "feedback",
        "The string property of the answer added to the final message on a rejection.",
    ),
];

const GRAPH: &[Field] = &[
    value("entry", "The node a run starts at."),
    value("nodes", "The graph's nodes: agents, tools and interrupts."),
    value(
        "validate",
        "Validators applied to the user's input before the run starts.",
    ),
    value("recursion_limit", "The most node steps one run may take."),
    block("state", "The typed state fields the nodes read and write."),
    value("entries", "Other nodes a run may start at, besides `entry`."),
    value(
        "results",
        "Tool results also written into state: `{ tool: field.path }`.",
    ),
    value(
        "answers",
        "Interrupt answers written into state: `{ interrupt: field }`.",
    ),
    value(
        "visits",
        "Nodes a run enters at most `max` times, and where it goes instead: `{ node: { max: 3, then: exit } }`.",
    ),
    value(
        "on_error",
        "Where the run goes when a node fails after its retries: `{ node: handler }`.",
    ),
    value(
        "resume",
        "Where a thread's next run starts (`entry` when not set), such as `last_agent`.",
    ),
    value("retry", "Retry policies by node: `{ node: { attempts: 2 } }`."),
    value(
        "subgraphs",
        "How subgraph nodes map state: `{ graph: { input: { inner: outer }, output: { outer: inner } } }`.",
    ),
    value(
        "reduce",
        "How the values parallel branches wrote into a field merge at the join: `{ notes: append }`.",
    ),
];
