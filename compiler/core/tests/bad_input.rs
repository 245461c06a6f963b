//! Bad input never panics or hangs: empty and comment-only files, bracket nesting far beyond the
//! limit, a large file of valid declarations, thousands of broken lines (each reported), and
//! deterministic random text and mutations of an example program.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::disallowed_methods,
    reason = "test code (helpers included): a panic is a failed test; the test times itself and reads its size from the environment"
)]

use std::time::{Duration, Instant};
use tenx_compiler::{LintLevels, check};
use tenx_diagnostics::render::{HumanOptions, render_human};
use tenx_diagnostics::{Code, Diagnostic, SourceSet};

/// Checks `text` as the only file of a program.
fn run(text: &str) -> Vec<Diagnostic> {
    let mut sources = SourceSet::new();
    let root = sources.add("input.tenx", text);
    check(&mut sources, root, &LintLevels::default()).diagnostics
}

/// Checks `text` and renders the diagnostics, as `tenxc check` would print them: spans must
/// fall on character boundaries for the renderer.
fn run_and_render(text: &str) -> String {
    let mut sources = SourceSet::new();
    let root = sources.add("input.tenx", text);
    let diagnostics = check(&mut sources, root, &LintLevels::default()).diagnostics;
    render_human(&diagnostics, &sources, HumanOptions { color: false })
}

fn errors(diagnostics: &[Diagnostic]) -> Vec<&Diagnostic> {
    diagnostics.iter().filter(|d| d.is_error()).collect()
}

fn count(diagnostics: &[Diagnostic], code: Code) -> usize {
    diagnostics.iter().filter(|d| d.code == code).count()
}

/// A complete, clean program, used as the base of mutations.
const EXAMPLE: &str = r#"import std.approval.yes_no
import std.validators.prompt_injection

tag orders "Reads orders"

model desk_model {
  provider = scripted
  turns    = [{ text: "Hello." }, { tool: "lookup_order", arguments: { order_id: "1042" } }]
  params   = { temperature: 0, stop: ["\n\n"] }
}

schema verdict = enum("refund", "answer")

tool lookup_order(order_id: string(min_length: 1, max_length: 32) "The order number") -> object {
  description = "Look up one order."
  tags = [orders]
  risk = low
  run  = http(POST, "https://orders.example.com/lookup", timeout: 5s)
}

tool issue_refund(order_id: string "The order", amount_cents: int(min: 1, max: 50000) "Cents") -> string {
  description = "Refund an order."
  risk = high
  approval {
    message   = "Refund {amount_cents} cents for order {order_id}?"
    response  = yes_no
    expires   = 24h
    on_reject = "Refund declined."
    approvers = [role("support_lead")]
  }
  idempotency_key = "refund-{order_id}-{amount_cents}"
  run = http(POST, "https://payments.example.com/refunds", timeout: 10s)
}

agent triage {
  model    = desk_model
  prompt   = """
    Sort the customer's question about {topic}.
    """
  tools    = tagged(orders)
  handoffs = [refunds]
  output   = { "type": "object", "properties": { "decision": { "type": "string" } } }
}

agent refunds {
  model  = desk_model
  prompt = "Refund orders when asked."
  tools  = [issue_refund, lookup_order]
}

/* The desk: triage first, refunds on request. */
graph desk {
  entry    = triage
  nodes    = [triage, refunds]
  validate = [prompt_injection(max_length: 2000)]

  state {
    topic: string "What the customer asks about"
    decision?: verdict "What triage decided"
  }

  triage -> refunds
  route triage by decision {
    "refund"                                -> refunds
    when (topic == "x" or not (topic in ["a", "b"])) -> END
    else                                    -> END
  }
  refunds -> END
}
"#;

#[test]
fn the_example_is_clean() {
    let diagnostics = run(EXAMPLE);
    assert!(errors(&diagnostics).is_empty(), "{diagnostics:#?}");
}

#[test]
fn empty_file() {
    assert!(errors(&run("")).is_empty());
    assert!(errors(&run("\n\n   \t\r\n")).is_empty());
    assert!(errors(&run("\u{FEFF}")).is_empty());
}

#[test]
fn only_comments() {
    let text = "// one\n/* two\n   three */\n// four /* not a block\n/**/ //\n";
    assert!(errors(&run(text)).is_empty());
}

#[test]
fn deep_square_brackets() {
    let text = format!("schema s = {}\n", "[".repeat(10_000));
    assert_eq!(count(&run(&text), Code::TENX0005), 1);
    let closed = format!("schema s = {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    assert_eq!(count(&run(&closed), Code::TENX0005), 1);
}

#[test]
fn deep_braces() {
    let text = format!("model m {}\n", "{".repeat(10_000));
    assert_eq!(count(&run(&text), Code::TENX0005), 1);
    let closed = format!(
        "model m {{ params = {}{} }}\n",
        "{ a: ".repeat(10_000),
        "}".repeat(10_000)
    );
    assert_eq!(count(&run(&closed), Code::TENX0005), 1);
}

#[test]
fn deep_parentheses_in_a_condition() {
    let text = format!(
        "graph g {{\n  route a {{\n    when {}x{} -> END\n    else -> END\n  }}\n}}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    assert_eq!(count(&run(&text), Code::TENX0005), 1);
    let unclosed = format!(
        "graph g {{\n  route a {{\n    when {}x -> END\n  }}\n}}\n",
        "(".repeat(10_000)
    );
    assert_eq!(count(&run(&unclosed), Code::TENX0005), 1);
}

/// Nesting just under the limit is parsed, on a test thread's small stack, without overflow.
#[test]
fn deep_list_generics() {
    // `list<` nests like a bracket; 10,000 of them are refused before parsing.
    let text = format!("schema s = {}string{}\n", "list<".repeat(10_000), ">".repeat(10_000));
    let diagnostics = run(&text);
    assert_eq!(count(&diagnostics, Code::TENX0005), 1);
    // `<` in a comparison is not a generic.
    let condition = "graph g {\n  entry = a\n  route a { when x<1 -> END else -> END }\n}\n";
    assert_eq!(count(&run(condition), Code::TENX0005), 0);
}

#[test]
fn a_long_chain_of_named_schemas_is_cut() {
    // Each schema uses the next: inlining them all would build a value thousands of levels
    // deep. The chain is cut (TENX0407) instead of overflowing the stack.
    let mut text = String::new();
    for i in 0..5_000 {
        text.push_str(&format!("schema s{i} = list<s{}>\n", i + 1));
    }
    text.push_str("schema s5000 = string\n");
    let diagnostics = run(&text);
    assert!(count(&diagnostics, Code::TENX0407) >= 1);
    assert!(diagnostics.iter().all(|d| d.code == Code::TENX0407));
}

#[test]
fn nesting_at_the_limit_is_parsed() {
    let depth = tenx_compiler::syntax::chunks::MAX_NESTING - 3;
    let list = format!(
        "model m {{\n  provider = scripted\n  params = {{ x: {}1{} }}\n}}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    assert_eq!(count(&run(&list), Code::TENX0005), 0);
    let map = format!(
        "model m {{\n  provider = scripted\n  params = {}1{}\n}}\n",
        "{ a: ".repeat(depth),
        " }".repeat(depth)
    );
    assert_eq!(count(&run(&map), Code::TENX0005), 0);
    let condition = format!(
        "graph g {{\n  route a {{\n    when {}x == 1{} -> END\n    else -> END\n  }}\n}}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let diagnostics = run(&condition);
    assert_eq!(count(&diagnostics, Code::TENX0005), 0);
    assert_eq!(count(&diagnostics, Code::TENX0001), 0, "{diagnostics:#?}");
    let types = format!(
        "schema s = {}string{}\n",
        "list<".repeat(depth / 2),
        ">".repeat(depth / 2)
    );
    assert!(errors(&run(&types)).is_empty());
}

/// The size of the large-file test, in MB: 2 by default, `TENX_LARGE_FILE_MB` to change it. A
/// debug build checks 10 MB (about 90,000 declarations) in about 15 s on an idle machine and
/// 27 s on a busy one, so the default keeps the suite quick.
fn large_file_bytes() -> usize {
    let mb = std::env::var("TENX_LARGE_FILE_MB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(2);
    mb * 1024 * 1024
}

#[test]
fn a_large_file_of_valid_declarations() {
    let size = large_file_bytes();
    let mut text = String::with_capacity(size + 4096);
    text.push_str("model desk_model {\n  provider = scripted\n}\n\n");
    let mut i = 0usize;
    while text.len() < size {
        text.push_str(&format!(
            "tag group_{i} \"Tools of group {i}\"\n\n\
             tool lookup_{i}(order_id: string(min_length: 1) \"The order number\") -> object {{\n  \
               description = \"Look up one order of group {i}.\"\n  \
               tags = [group_{i}]\n  \
               risk = low\n  \
               run  = http(POST, \"https://orders.example.com/{i}\", timeout: 5s)\n\
             }}\n\n\
             agent agent_{i} {{\n  \
               model  = desk_model\n  \
               prompt = \"Answer questions about group {i}.\"\n  \
               tools  = tagged(group_{i})\n\
             }}\n\n\
             graph graph_{i} {{\n  entry = agent_{i}\n  nodes = [agent_{i}]\n\n  agent_{i} -> END\n}}\n\n"
        ));
        i += 1;
    }
    let started = Instant::now();
    let diagnostics = run(&text);
    let took = started.elapsed();
    assert!(errors(&diagnostics).is_empty(), "{:#?}", diagnostics.first());
    assert!(
        took < Duration::from_secs(60),
        "{} declarations ({} bytes) took {took:?}",
        i * 4,
        text.len()
    );
}

#[test]
fn an_error_on_every_one_of_5000_lines() {
    // Each line is a top-level item of its own, with a string that is never closed.
    let text: String = (0..5_000).map(|i| format!("tag t{i} \"never closed\n")).collect();
    let diagnostics = run(&text);
    assert_eq!(count(&diagnostics, Code::TENX0003), 5_000);
    assert_eq!(errors(&diagnostics).len(), 5_000);

    // Inside one block: each line is a broken entry, reported on its own.
    let mut block = String::from("model m {\n  provider = scripted\n");
    for i in 0..4_998 {
        if i % 2 == 0 {
            block.push_str(&format!("  field_{i} = \"never closed\n"));
        } else {
            block.push_str(&format!("  field_{i} $ {i}\n"));
        }
    }
    block.push_str("}\n");
    let diagnostics = run(&block);
    assert_eq!(count(&diagnostics, Code::TENX0003), 2_499, "{:#?}", diagnostics.first());
    assert_eq!(count(&diagnostics, Code::TENX0001), 2_499, "{:#?}", diagnostics.first());
    assert_eq!(errors(&diagnostics).len(), 4_998);
}

#[test]
fn five_thousand_unknown_names_are_each_reported() {
    let mut text = String::from("model desk_model {\n  provider = scripted\n}\n\n");
    text.push_str("agent support {\n  model  = desk_model\n  prompt = \"Answer.\"\n  tools  = [\n");
    for i in 0..5_000 {
        text.push_str(&format!("    missing_tool_{i}\n"));
    }
    text.push_str("  ]\n}\n\ngraph desk {\n  entry = support\n  nodes = [support]\n\n  support -> END\n}\n");
    let diagnostics = run(&text);
    assert_eq!(count(&diagnostics, Code::TENX0101), 5_000);
    assert_eq!(errors(&diagnostics).len(), 5_000);
}

#[test]
fn brackets_left_open_line_after_line_are_not_reported_as_deep_nesting() {
    let mut block = String::from("model m {\n");
    for i in 0..5_000 {
        block.push_str(&format!("  field_{i} = [1, 2\n"));
    }
    block.push_str("}\n");
    let diagnostics = run(&block);
    assert_eq!(count(&diagnostics, Code::TENX0005), 0);
    assert_eq!(count(&diagnostics, Code::TENX0001), 1, "{diagnostics:#?}");
}

/// A small deterministic xorshift generator.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Pieces that random text is made of: printable characters and the language's tokens.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "<",
    ">",
    "\"",
    "\"\"\"",
    "/*",
    "*/",
    "//",
    "\n",
    " ",
    "\t",
    "=",
    ":",
    ",",
    "->",
    "=>",
    "+",
    "?",
    ".",
    "*",
    "\\",
    "\\u{",
    "${",
    "-",
    "1",
    "2.5e3",
    "24h",
    "x",
    "END",
    "model",
    "tool",
    "agent",
    "graph",
    "route",
    "when",
    "else",
    "state",
    "test",
    "import",
    "std",
    "tag",
    "schema",
    "interrupt",
    "validator",
    "by",
    "and",
    "or",
    "not",
    "in",
    "é",
    "💥",
    "\u{FEFF}",
    "\r",
];

fn random_text(rng: &mut XorShift, len: usize) -> String {
    let mut text = String::new();
    for _ in 0..len {
        if rng.below(3) == 0 {
            let c = char::from(b' ' + rng.below(95) as u8);
            text.push(c);
        } else {
            text.push_str(rng.pick(PIECES));
        }
    }
    text
}

/// Char boundaries of `text`, for cutting it anywhere without splitting a character.
fn boundaries(text: &str) -> Vec<usize> {
    text.char_indices().map(|(i, _)| i).chain([text.len()]).collect()
}

fn mutate(rng: &mut XorShift, text: &str) -> String {
    let cuts = boundaries(text);
    let mut a = cuts[rng.below(cuts.len())];
    let mut b = cuts[rng.below(cuts.len())];
    if a > b {
        std::mem::swap(&mut a, &mut b);
    }
    match rng.below(5) {
        // Delete a range.
        0 => format!("{}{}", &text[..a], &text[b..]),
        // Insert random text.
        1 => {
            let len = rng.below(8) + 1;
            format!("{}{}{}", &text[..a], random_text(rng, len), &text[a..])
        }
        // Duplicate a range.
        2 => format!("{}{}", &text[..b], &text[a..]),
        // Cut the file short.
        3 => text[..a].to_string(),
        // Replace one character by a bracket, quote or arrow piece.
        _ => {
            let next = cuts.iter().copied().find(|&c| c > a).unwrap_or(a);
            let piece = rng.pick(&["{", "}", "[", "]", "(", ")", "\"", "=>", ":", "/*", "\"\"\""]);
            format!("{}{}{}", &text[..a], piece, &text[next..])
        }
    }
}

#[test]
fn random_printable_text_never_panics() {
    let mut rng = XorShift(0x7e4_c0de_5eed);
    for _ in 0..400 {
        let len = rng.below(60);
        let text = random_text(&mut rng, len);
        let _ = run_and_render(&text);
    }
}

#[test]
fn mutations_of_an_example_never_panic() {
    let mut rng = XorShift(0xdead_beef_cafe);
    for _ in 0..300 {
        let mut text = EXAMPLE.to_string();
        for _ in 0..rng.below(4) + 1 {
            text = mutate(&mut rng, &text);
        }
        let _ = run_and_render(&text);
    }
}
