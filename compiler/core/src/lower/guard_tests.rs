//! Unit tests of the lowering of output guards and `retries` (arguments merged over the
//! declared defaults, the default budget, validators used only as guards kept), and of visit
//! limits and `on_error` handlers (sorted by node).

#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use crate::{LintLevels, compile};
use serde_json::json;
use tenx_artifact::{Artifact, DEFAULT_RETRIES, seal};
use tenx_diagnostics::SourceSet;

fn lower(text: &str) -> Artifact {
    let mut sources = SourceSet::new();
    let root = sources.add("app/main.tenx", text);
    let compiled = compile(&mut sources, root, &LintLevels::default());
    assert!(compiled.diagnostics.is_empty(), "{:#?}", compiled.diagnostics);
    let artifact = compiled.artifact.unwrap();
    seal(artifact.clone()).unwrap();
    artifact
}

const GUARDED: &str = r#"
import std.validators.prompt_injection

model local {
  provider = scripted
}

validator no_cards {
  deny_patterns = ["[0-9]{16}"]
}

agent desk {
  model   = local
  prompt  = "Answer."
  guard   = [no_cards, prompt_injection(max_length: 300)]
  retries = 4
}

agent closer {
  model  = local
  prompt = "Close."
}

graph g {
  entry = desk
  nodes = [desk, closer]

  desk   -> closer
  closer -> END
}
"#;

#[test]
fn guards_keep_their_order_and_arguments() {
    let artifact = lower(GUARDED);
    let desk = &artifact.agents["desk"];
    assert_eq!(desk.retries, 4);
    let names: Vec<&str> = desk.output_guards.iter().map(|g| g.validator.as_str()).collect();
    assert_eq!(names, ["no_cards", "prompt_injection"]);
    assert_eq!(desk.output_guards[0].args, json!({}));
    assert_eq!(desk.output_guards[1].args["max_length"], json!(300));
    assert_eq!(desk.output_guards[1].args["strict"], json!(true));
    // Validators used only as guards are in the artifact.
    assert!(artifact.validators.contains_key("no_cards"));
    assert!(artifact.validators.contains_key("prompt_injection"));
    let closer = &artifact.agents["closer"];
    assert_eq!(closer.retries, DEFAULT_RETRIES);
    assert!(closer.output_guards.is_empty());
}

#[test]
fn visit_limits_and_error_handlers_are_sorted_by_node() {
    let artifact = lower(
        r#"
model local {
  provider = scripted
}

agent writer {
  model  = local
  prompt = "Write."
}

agent judge {
  model  = local
  prompt = "Judge."
}

agent sorry {
  model  = local
  prompt = "Apologise."
}

graph g {
  entry    = writer
  nodes    = [writer, judge, sorry]
  visits   = { writer: { max: 3, then: sorry }, judge: { max: 5, then: END } }
  on_error = { writer: sorry, judge: END }

  writer -> judge
  judge  -> writer
  sorry  -> END
}
"#,
    );
    let graph = &artifact.graphs["g"];
    let limits: Vec<(&str, u64, &str)> = graph
        .visit_limits
        .iter()
        .map(|l| (l.node.as_str(), l.max, l.exit.as_str()))
        .collect();
    assert_eq!(limits, [("judge", 5, "END"), ("writer", 3, "sorry")]);
    let handlers: Vec<(&str, &str)> = graph
        .on_error
        .iter()
        .map(|e| (e.node.as_str(), e.target.as_str()))
        .collect();
    assert_eq!(handlers, [("judge", "END"), ("writer", "sorry")]);
}
