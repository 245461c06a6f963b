//! One small check per grammar construct: each input parses completely with its rule.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers report a failure by panicking"
)]

use tenx_grammar::pest::Parser;
use tenx_grammar::{Rule, TenxParser};

fn parses(rule: Rule, input: &str) {
    let mut pairs = TenxParser::parse(rule, input).unwrap_or_else(|e| panic!("{input}\n{e}"));
    let pair = pairs.next().unwrap();
    assert_eq!(pair.as_str(), input, "rule {rule:?} did not consume all of the input");
}

fn rejects(rule: Rule, input: &str) {
    let ok = TenxParser::parse(rule, input).is_ok_and(|mut p| p.next().is_some_and(|p| p.as_str() == input));
    assert!(!ok, "rule {rule:?} should reject {input:?}");
}

#[test]
fn values() {
    parses(Rule::value, "24h");
    parses(Rule::value, "500ms");
    parses(Rule::value, "-1.5e3");
    parses(Rule::value, "\"a \\\"quoted\\\" {x}\"");
    parses(Rule::value, "\"\"\"\n  many\n  lines\n\"\"\"");
    parses(Rule::value, "[a, b c]");
    parses(Rule::value, "{ \"type\": \"object\", required: [\"a\"] }");
    parses(Rule::value, "tagged(billing) + [lookup_order]");
    parses(Rule::value, "env(\"OPENAI_API_KEY\")");
    parses(Rule::value, "http(POST, \"${URL}/refund\", timeout: 10s)");
    parses(Rule::value, "std.approval.yes_no");
    parses(Rule::value, "true");
    parses(Rule::value, "null");
    rejects(Rule::value, "\"unterminated");
    rejects(Rule::value, "12abc");
}

#[test]
fn items() {
    parses(Rule::import_decl, "import std.approval.yes_no");
    parses(Rule::import_decl, "import std.approval.*");
    parses(Rule::import_decl, "import \"billing.tenx\"");
    parses(Rule::tag_decl, "tag billing \"Moves money\"");
    parses(Rule::schema_decl, "schema verdict = enum(\"go\", \"stop\")");
    parses(Rule::model_decl, "model m { provider = openai }");
    parses(
        Rule::tool_decl,
        "tool refund(order_id: string \"The order\", amount?: int(min: 1) = 5) -> { \"type\": \"string\" } {\n  risk = high\n  approval { expires = 24h }\n}",
    );
    parses(Rule::agent_decl, "agent a { tools = tagged(x) }");
    parses(
        Rule::validator_decl,
        "validator v(max_length: int = 10) { run = builtin(v) }",
    );
    parses(Rule::interrupt_decl, "interrupt review { expires = 1d }");
    parses(Rule::test_decl, "test \"refund is approved\" { }");
}

#[test]
fn graphs() {
    parses(
        Rule::graph_decl,
        "graph g {\n  entry = a\n  state { score: number }\n  a -> b\n  route b by verdict {\n    \"go\" -> c\n    when score >= 0.5 and not (done) -> a\n    else -> END\n  }\n}",
    );
    parses(Rule::edge, "a => b");
}

#[test]
fn handoffs_with_payloads() {
    parses(Rule::handoffs_entry, "handoffs = [billing]");
    parses(Rule::handoffs_entry, "handoffs = []");
    parses(
        Rule::handoffs_entry,
        "handoffs = [billing, escalation(reason: string(max_length: 200) \"Why\", priority?: enum(\"low\", \"high\") = \"low\")]",
    );
    parses(
        Rule::handoffs_entry,
        "handoffs = [\n  billing\n  escalation(\n    reason: string,\n  ),\n]",
    );
    parses(Rule::block, "{\n  handoffs = [a(x: int)]\n  model = m\n}");
    // Other forms are ordinary entries, read (and reported) by the agent.
    rejects(Rule::handoffs_entry, "handoffs = billing");
    rejects(Rule::handoffs_entry, "handoffs = [billing] + [x]");
    rejects(Rule::handoffs_entry, "handoffs = [std.billing]");
    rejects(Rule::handoffs_entry, "handoffs: [billing]");
    parses(Rule::entry, "handoffs = [billing] + [x]");
}

#[test]
fn recovery_rules() {
    parses(Rule::block, "{\n  good = 1\n  this is not an entry\n  also = 2\n}");
    parses(Rule::entry, "risk: high");
    // A block with no closing brace ends at the end of its chunk.
    parses(Rule::item_chunk, "tool t {\n  risk = high\n");
}

#[test]
fn agents_as_tools_with_parameters() {
    parses(Rule::agents_entry, "agents = [spanish]");
    parses(Rule::agents_entry, "agents = []");
    parses(
        Rule::agents_entry,
        "agents = [spanish(text: string \"The text to translate\"), critic]",
    );
    parses(Rule::block, "{\n  agents = [a(x: int)]\n  model = m\n}");
    // Other forms are ordinary entries, read (and reported) by the agent.
    rejects(Rule::agents_entry, "agents = spanish");
    rejects(Rule::agents_entry, "agents = [a] + [b]");
    rejects(Rule::agents_entry, "agentsx = [a]");
    parses(Rule::entry, "agents = spanish");
}
