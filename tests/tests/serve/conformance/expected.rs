//! What each scenario must show: the reference's facts (`reference_facts`, observed from
//! 10xgraph-api 0.9.0 with 10xgraph 0.10.3 on 2026-12-02, and what §17 states), and where tenx
//! differs ([`intended`]), each difference with its reason: a contract decision, something a
//! sealed `.tenx` program expresses another way, a choice tenx makes where the contract is
//! silent, or a known gap that is reported and not yet fixed. tenx must show the reference's
//! fact unless a listed difference names another value.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::Step;
use super::reference_facts::reference;

/// Why tenx differs from the reference on one fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The contract decides it (the item, and what it says).
    Contract(&'static str),
    /// The probe graph's Python does something a `.tenx` program says another way.
    Program(&'static str),
    /// The contract is silent; tenx chooses (the reason).
    Choice(&'static str),
    /// Not intended: a non-conformity found here and reported, not fixed yet.
    #[expect(
        dead_code,
        reason = "no non-conformity is open today; a newly found one is listed as a gap"
    )]
    Gap(&'static str),
}

impl Why {
    /// The headings the differences are printed under, in order.
    pub const SECTIONS: [&'static str; 4] = [
        "decided by the contract",
        "said another way by the .tenx program",
        "tenx's choice where the contract is silent",
        "KNOWN GAPS (not intended; reported)",
    ];

    /// The heading of this reason.
    pub fn section(&self) -> &'static str {
        let [contract, program, choice, gap] = Self::SECTIONS;
        match self {
            Self::Contract(_) => contract,
            Self::Program(_) => program,
            Self::Choice(_) => choice,
            Self::Gap(_) => gap,
        }
    }
}

impl std::fmt::Display for Why {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Contract(why) => write!(formatter, "contract: {why}"),
            Self::Program(why) => write!(formatter, "program: {why}"),
            Self::Choice(why) => write!(formatter, "tenx choice: {why}"),
            Self::Gap(why) => write!(formatter, "KNOWN GAP: {why}"),
        }
    }
}

/// One fact of one step: the reference's value, tenx's, and why they differ (if they do).
#[derive(Debug, Clone)]
pub struct Expectation {
    pub step: &'static str,
    pub fact: &'static str,
    pub reference: Value,
    pub tenx: Value,
    pub why: Option<Why>,
}

/// A difference: tenx shows `tenx` where the reference shows something else.
struct Difference {
    id: &'static str,
    step: &'static str,
    fact: &'static str,
    tenx: Value,
    why: Why,
}

fn d(id: &'static str, step: &'static str, fact: &'static str, tenx: Value, why: Why) -> Difference {
    Difference {
        id,
        step,
        fact,
        tenx,
        why,
    }
}

const D2: Why =
    Why::Contract("D2: a resume on a thread that is not paused is 409 INTERRUPT_003, without the reference's \"()\"");
const D7: Why = Why::Contract("D7: another user's thread reads as missing, 404, as a thread that does not exist");
const MISSING: Why =
    Why::Contract("clarification \"Missing threads\": a read or delete of a thread that does not exist is 404");
const BODY_REPR: Why = Why::Choice(
    "the reference's development message repeats the whole request body as Python repr; tenx gives the first detail's msg (the details are the reference's)",
);
const PAUSE_AFTER_CALL: Why = Why::Program(
    "the question is a tool's approval, asked after the model's call, so the call is part of the run's output; the reference's node calls interrupt() before it answers",
);
const TOOL_KEY: Why =
    Why::Program("a tool's approval: the reference's own key form for an interrupt inside a tool, tool:<call id>:0");
const APPROVED_RESULT: Why = Why::Program(
    "an approval's answer decides whether the tool runs; the model then answers with the tool's result (its message is part of the output), not with the answer",
);

/// Every difference.
fn intended() -> Vec<Difference> {
    vec![
        d(
            "3",
            "full",
            "step",
            json!(1),
            Why::Contract(
                "run-time semantics \"Steps\": each model call and each tool round is one step (one model call here); the reference also counts the way to END",
            ),
        ),
        d(
            "3",
            "full",
            "is_new_thread",
            json!(false),
            Why::Choice(
                "the reference says true on every call with its in-memory checkpointer (a quirk, reference-api.md §4); tenx says whether the thread was new",
            ),
        ),
        d(
            "5",
            "empty_messages",
            "message",
            json!("Value error, messages must contain at least one message"),
            BODY_REPR,
        ),
        d("5", "not_json", "message", json!("JSON decode error"), BODY_REPR),
        d(
            "5",
            "recursion_limit_0",
            "message",
            json!("Input should be greater than or equal to 1"),
            BODY_REPR,
        ),
        d(
            "5",
            "role_bogus",
            "message",
            json!("Input should be 'user', 'assistant', 'system' or 'tool'"),
            BODY_REPR,
        ),
        d(
            "5",
            "content_string",
            "message",
            json!("'str' instances are not allowed as a Sequence value"),
            BODY_REPR,
        ),
        d(
            "6",
            "tool_call_block",
            "code",
            json!("TOOL_CALL_IN_CLIENT_MESSAGE"),
            Why::Contract("client input: a tool call in a client message is 422 TOOL_CALL_IN_CLIENT_MESSAGE"),
        ),
        d(
            "6",
            "tool_call_block",
            "message",
            json!("messages[0] carries a tool call; only the model may request tools"),
            Why::Contract("client input: the refusal's message names the message index and the reason"),
        ),
        d(
            "6",
            "tool_call_block",
            "detail_msg",
            Value::Null,
            Why::Contract("client input: a refusal with its own code, not a pydantic error, so no details"),
        ),
        d("7", "invoke", "roles", json!(["user", "assistant"]), PAUSE_AFTER_CALL),
        d("7", "invoke", "last_text", Value::Null, PAUSE_AFTER_CALL),
        d("7", "state", "interrupt_key", json!("tool:<call>:0"), TOOL_KEY),
        d(
            "8",
            "message_while_paused",
            "code",
            json!("INTERRUPT_004"),
            Why::Contract("D4: code INTERRUPT_004, the reference's message"),
        ),
        d(
            "9",
            "resume",
            "roles",
            json!(["user", "tool", "assistant"]),
            APPROVED_RESULT,
        ),
        d(
            "9",
            "resume",
            "last_text",
            json!("approved: confirmed"),
            APPROVED_RESULT,
        ),
        d("9", "resume_again", "status", json!(409), D2),
        d("9", "resume_again", "code", json!("INTERRUPT_003"), D2),
        d(
            "9",
            "resume_again",
            "message",
            json!("Nothing to resume: this thread is not paused at an interrupt"),
            D2,
        ),
        d(
            "10",
            "resume_null",
            "roles",
            json!(["user", "tool", "assistant"]),
            Why::Program(
                "a cancelled approval answers the model's call with the on_reject text (\"null\" here), so the tool message is part of the output",
            ),
        ),
        d("11", "invoke", "roles", json!(["user", "assistant"]), PAUSE_AFTER_CALL),
        d("11", "invoke", "last_text", Value::Null, PAUSE_AFTER_CALL),
        d("11", "first_pause", "interrupt_key", json!("tool:<call>:0"), TOOL_KEY),
        d(
            "11",
            "resume_1",
            "roles",
            json!(["user", "tool", "assistant"]),
            PAUSE_AFTER_CALL,
        ),
        d("11", "resume_1", "last_text", Value::Null, PAUSE_AFTER_CALL),
        d(
            "11",
            "second_pause",
            "interrupt_key",
            json!("tool:<call>:0"),
            Why::Program(
                "two questions are two approved calls, each its own interrupt (index 0 of its call), not two interrupt() calls of one node",
            ),
        ),
        d(
            "11",
            "resume_2",
            "roles",
            json!(["user", "tool", "assistant"]),
            APPROVED_RESULT,
        ),
        d("11", "resume_2", "last_text", json!("got confirmed"), APPROVED_RESULT),
        d(
            "11",
            "resume_with_a_string",
            "status",
            json!(422),
            Why::Contract("D3: answers are checked against the response schema (an approval's response is an object)"),
        ),
        d(
            "11",
            "resume_with_a_string",
            "code",
            json!("INTERRUPT_002"),
            Why::Contract("D3: code INTERRUPT_002"),
        ),
        d(
            "11",
            "resume_with_a_string",
            "message",
            json!(
                "Resume value does not match the response schema of interrupt 'int_<id>': $: expected object, got str"
            ),
            Why::Contract("D3: the seed's message, with the JSON path"),
        ),
        d("12", "resume_without_thread", "status", json!(409), D2),
        d("12", "resume_without_thread", "code", json!("INTERRUPT_003"), D2),
        d(
            "12",
            "resume_without_thread",
            "message",
            json!("Nothing to resume: this thread is not paused at an interrupt"),
            D2,
        ),
        d(
            "14",
            "wrong_call_id",
            "code",
            json!("TOOL_RESULT_UNEXPECTED"),
            Why::Contract(
                "client input: a result for no waiting call is 422 TOOL_RESULT_UNEXPECTED (the reference's message)",
            ),
        ),
        d(
            "14",
            "right_call_id",
            "roles",
            json!(["user", "tool", "assistant"]),
            Why::Choice(
                "the client's tool result is part of the run it continues, so the answer shows it before the model's reply",
            ),
        ),
        d(
            "15",
            "low",
            "delta_chunks",
            json!(2),
            Why::Program(
                "the scripted model streams its answer in pieces as a provider does (delta chunks before the whole message); the reference's node has no model to stream",
            ),
        ),
        d(
            "16",
            "invoke_dev",
            "status",
            json!(500),
            Why::Contract("D15: a node error is 500 NODE_001 in every mode"),
        ),
        d(
            "16",
            "invoke_dev",
            "code",
            json!("NODE_001"),
            Why::Contract("D15: a node error is 500 NODE_001 in every mode"),
        ),
        d(
            "16",
            "invoke_dev",
            "message",
            json!(
                "Error in node 'agent': model `reference_model` failed: scripted model `reference_model` has no turn left: rule 4 has 0 turn(s), all played in this run, and model call 1 of the run asked for another"
            ),
            Why::Contract("D15: development shows the cause (the reference's dev answer is its own pydantic bug)"),
        ),
        d("18", "get_unknown", "status", json!(404), MISSING),
        d("18", "get_unknown", "code", json!("RESOURCE_NOT_FOUND"), MISSING),
        d("18", "get_unknown", "message", json!("thread not found"), MISSING),
        d("18", "get_unknown", "data", Value::Null, MISSING),
        d("18", "state_unknown", "status", json!(404), MISSING),
        d("18", "state_unknown", "code", json!("RESOURCE_NOT_FOUND"), MISSING),
        d("18", "state_unknown", "message", json!("thread not found"), MISSING),
        d("18", "state_unknown", "data", Value::Null, MISSING),
        d("18", "delete_unknown", "status", json!(404), MISSING),
        d("18", "delete_unknown", "code", json!("RESOURCE_NOT_FOUND"), MISSING),
        d("18", "delete_unknown", "message", json!("thread not found"), MISSING),
        d(
            "19",
            "stop_blank",
            "message",
            json!("thread_id cannot be empty or whitespace"),
            BODY_REPR,
        ),
        d("20", "bob_reads_state", "status", json!(404), D7),
        d("20", "bob_reads_state", "code", json!("RESOURCE_NOT_FOUND"), D7),
        d("20", "bob_reads_state", "message", json!("thread not found"), D7),
        d("20", "bob_reads_unknown", "status", json!(404), D7),
        d("20", "bob_reads_unknown", "code", json!("RESOURCE_NOT_FOUND"), D7),
        d("20", "bob_reads_unknown", "message", json!("thread not found"), D7),
        d(
            "21",
            "request_5",
            "message",
            json!("Too many requests. Limit: 4 per 60s. Retry after 15s."),
            Why::Choice(
                "tenx's limiter (GCRA) frees one request every window/limit (15 s), and the message and Retry-After say when a retry succeeds; the reference's sliding window frees its first slot after the whole window",
            ),
        ),
    ]
}

/// The expectations of scenario `id`.
pub fn expectations(id: &str) -> Vec<Expectation> {
    let differences = intended();
    reference(id)
        .into_iter()
        .map(|(step, fact, reference)| {
            let difference = differences
                .iter()
                .find(|d| d.id == id && d.step == step && d.fact == fact);
            Expectation {
                step,
                fact,
                tenx: difference.map_or_else(|| reference.clone(), |d| d.tenx.clone()),
                why: difference.map(|d| d.why),
                reference,
            }
        })
        .collect()
}

/// Every observed fact as `(step, fact, value)`.
fn flatten(steps: &[Step]) -> Vec<(&'static str, &'static str, Value)> {
    steps
        .iter()
        .flat_map(|step| step.facts.iter().map(|(fact, value)| (step.name, *fact, value.clone())))
        .collect()
}

/// The value of `(step, fact)` among `facts`, `null` when absent.
fn value_of(facts: &[(&'static str, &'static str, Value)], step: &str, fact: &str) -> Value {
    facts
        .iter()
        .find(|(s, f, _)| *s == step && *f == fact)
        .map_or(Value::Null, |(_, _, value)| value.clone())
}

/// Every `(step, fact)` named by the expectations or observed.
fn keys<'a>(
    expectations: &'a [Expectation],
    observed: &[&'a [(&'static str, &'static str, Value)]],
) -> BTreeSet<(&'static str, &'static str)> {
    expectations
        .iter()
        .map(|e| (e.step, e.fact))
        .chain(observed.iter().flat_map(|facts| facts.iter().map(|(s, f, _)| (*s, *f))))
        .collect()
}

/// Checks tenx's facts against the expectations: one line per failure.
pub fn judge_tenx(id: &str, steps: &[Step]) -> Vec<String> {
    let expectations = expectations(id);
    let mine = flatten(steps);
    let mut failures = Vec::new();
    for (step, fact) in keys(&expectations, &[&mine]) {
        let ours = value_of(&mine, step, fact);
        match expectations.iter().find(|e| e.step == step && e.fact == fact) {
            None => failures.push(format!("{step}.{fact} = {ours}: no expectation lists it")),
            Some(e) if e.tenx != ours => failures.push(format!(
                "{step}.{fact}: expected {} ({}), got {ours}",
                e.tenx,
                e.why
                    .map_or_else(|| "as the reference".to_owned(), |why| why.to_string())
            )),
            Some(_) => {}
        }
    }
    failures
}

/// The outcome of comparing the two servers on one scenario.
pub struct Judged {
    /// Each difference, with its reason.
    pub differences: Vec<(Why, String)>,
    /// What should not be: an unlisted difference, a listed one that did not show, a reference
    /// fact the table states wrongly, a tenx fact that is not what the table says.
    pub failures: Vec<String>,
}

/// Compares the reference's facts with tenx's for scenario `id`.
pub fn judge_pair(id: &str, theirs: &[Step], mine: &[Step]) -> Judged {
    let expectations = expectations(id);
    let theirs = flatten(theirs);
    let mine = flatten(mine);
    let mut differences = Vec::new();
    let mut failures = Vec::new();
    for (step, fact) in keys(&expectations, &[&theirs, &mine]) {
        let reference = value_of(&theirs, step, fact);
        let ours = value_of(&mine, step, fact);
        let expectation = expectations.iter().find(|e| e.step == step && e.fact == fact);
        match expectation {
            None => failures.push(format!(
                "{id} {step}.{fact}: no expectation lists it (reference {reference}, tenx {ours})"
            )),
            Some(e) => {
                if e.reference != reference {
                    failures.push(format!(
                        "{id} {step}.{fact}: the reference showed {reference}, the table says {}",
                        e.reference
                    ));
                }
                if e.tenx != ours {
                    failures.push(format!(
                        "{id} {step}.{fact}: tenx showed {ours}, the table says {}",
                        e.tenx
                    ));
                }
                match (reference == ours, e.why) {
                    (true, None) => {}
                    (true, Some(why)) => {
                        failures.push(format!("{id} {step}.{fact}: listed ({why}) but both show {ours}"));
                    }
                    (false, Some(why)) => {
                        differences.push((
                            why,
                            format!("{id} {step}.{fact}: reference {reference}, tenx {ours} ({why})"),
                        ));
                    }
                    (false, None) => {
                        failures.push(format!(
                            "{id} {step}.{fact}: reference {reference}, tenx {ours}, not listed"
                        ));
                    }
                }
            }
        }
    }
    Judged { differences, failures }
}
