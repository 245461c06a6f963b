//! The typed form of a `test` block: what a scripted test runs (graph, input, initial state,
//! scripted model turns, mocked tool results, approval answers) and what it expects.

use serde_json::{Map, Value};
use tenx_diagnostics::Span;

use super::Ident;

/// `test "name" { ... }`.
#[derive(Debug, Clone, Default)]
pub struct TestDecl {
    /// The test's name.
    pub name: String,
    /// Where the name is written.
    pub name_span: Span,
    /// `graph = name`: the graph the test runs (`None`: the program's only graph).
    pub graph: Option<Ident>,
    /// `input = "…"`: the user message that starts the run.
    pub input: Option<String>,
    /// `state = { field: value }`: state set before the run starts.
    pub state: Vec<TestEntry>,
    /// `models = { model: [turn, …] }`: the turns each model plays, in order, instead of its
    /// own provider or script.
    pub models: Vec<TestModel>,
    /// `mocks = { tool: result }` or `{ tool: [result, …] }`: what each tool returns.
    pub mocks: Vec<TestMock>,
    /// `answers = [approve, reject("…"), edit({ … }), expire, { … }]`: the answers to the
    /// questions the run asks, in order.
    pub answers: Vec<TestAnswer>,
    /// `expect { … }`.
    pub expect: TestExpect,
    /// The whole declaration.
    pub span: Span,
}

/// A `key: value` entry of a test map whose key is a name the checker resolves.
#[derive(Debug, Clone, PartialEq)]
pub struct TestEntry {
    /// The key (a state field or tool name).
    pub key: Ident,
    /// The value, as JSON.
    pub value: Value,
}

/// The turns one model plays in a test.
#[derive(Debug, Clone, PartialEq)]
pub struct TestModel {
    /// The model.
    pub model: Ident,
    /// Its turns, in order.
    pub turns: Vec<tenx_artifact::Turn>,
}

/// What one mocked tool returns: `results` in order, the last one repeating.
#[derive(Debug, Clone, PartialEq)]
pub struct TestMock {
    /// The tool.
    pub tool: Ident,
    /// Its results (a list written in the test is a sequence; `[[…]]` returns one list).
    pub results: Vec<Value>,
}

/// One scripted answer to a question the run asks.
#[derive(Debug, Clone, PartialEq)]
pub enum TestAnswer {
    /// `approve`: the answer the question's response reads as approval.
    Approve,
    /// `reject` or `reject("reason")`.
    Reject(Option<String>),
    /// `edit({ argument: value })`: approve with changed arguments.
    Edit(Map<String, Value>),
    /// `expire`: the clock passes the question's expiry, then an approval is sent.
    Expire,
    /// `{ … }`: this exact answer value (an interrupt node's answer).
    Value(Value),
}

/// A tool call the test expects: the tool and, when written, exactly its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct TestCall {
    /// The tool.
    pub tool: Ident,
    /// `tool(name: value, …)`: the arguments the call ran with; `None` for a bare name.
    pub arguments: Option<Map<String, Value>>,
}

/// `expect { … }`: every field is optional; what is written is compared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestExpect {
    /// `route = [a, b, END]`: the nodes the run went through, in order.
    pub route: Option<Vec<Ident>>,
    /// `calls = [tool, tool(arg: value)]`: the tools that ran, in order.
    pub calls: Option<Vec<TestCall>>,
    /// `approvals = [{ field: value }]`: the questions asked, compared on the fields written.
    pub approvals: Option<Vec<Map<String, Value>>>,
    /// `state = { field: value }`: the final state, compared on the fields written.
    pub state: Option<Vec<TestEntry>>,
    /// `message = "…"`: the last assistant message's text.
    pub message: Option<String>,
    /// `status = completed`: the thread's final status.
    pub status: Option<Ident>,
    /// `error = "CODE"`: the error code the last request was refused with.
    pub error: Option<String>,
}
