//! Tests of the queries on small programs held in memory.

use super::complete::{CandidateKind, complete};
use super::fields::Block;
use super::rename::{Refusal, rename};
use super::symbols::{OutlineKind, outline};
use super::{Index, fixes, hover};
use crate::resolve::DeclKind;
use crate::{LintLevels, MemoryReader, check, load_imports};
use tenx_diagnostics::{Code, FileId, SourceSet};

const MAIN: &str = r#"import "tools.tenx"
import std.approval.yes_no

tag orders "Reads orders"

model m {
  provider = scripted
  turns = [{ text: "hi" }]
}

agent support {
  model = m
  prompt = "Help."
  tools = tagged(orders) + [lookup]
  handoffs = [billing]
}

agent billing {
  model = m
  prompt = "Bill."
}

graph desk {
  entry = support
  nodes = [support, billing]

  support -> billing
  billing -> END
}
"#;

const TOOLS: &str = r#"tool lookup(order_id: string "The order") -> object {
  description = "Look up an order."
  tags = [orders]
  risk = low
  run = http(POST, "https://example.com/lookup")
}
"#;

fn program() -> (SourceSet, crate::Checked, FileId, FileId) {
    let mut reader = MemoryReader::new();
    reader.insert("app/main.tenx", MAIN).insert("app/tools.tenx", TOOLS);
    let mut sources = SourceSet::new();
    let root = sources.add("app/main.tenx", MAIN);
    load_imports(&mut sources, root, &mut reader);
    let checked = check(&mut sources, root, &LintLevels::default());
    let tools = sources.find("app/tools.tenx").unwrap();
    (sources, checked, root, tools)
}

fn at(text: &str, needle: &str, nth: usize) -> usize {
    text.match_indices(needle).nth(nth).unwrap().0
}

#[test]
fn definition_crosses_imports_and_the_stdlib() {
    let (sources, checked, root, tools) = program();
    let index = Index::new(&checked.program, &sources);
    // `lookup` in the agent's tools is declared in tools.tenx.
    let target = index.definition(root, at(MAIN, "lookup", 0) + 2).unwrap();
    assert_eq!(target.file, tools);
    assert_eq!(sources.get(tools).unwrap().slice(target.span), "lookup");
    // `yes_no` in the import is the stdlib's.
    let yes_no = index.definition(root, at(MAIN, "yes_no", 0)).unwrap();
    assert_eq!(sources.get(yes_no.file).unwrap().name, "<stdlib>/approval.tenx");
    // A graph node names the agent.
    let node = index.definition(root, at(MAIN, "billing", 2)).unwrap();
    assert_eq!(node.kind(), DeclKind::Agent);
    assert_eq!(node.span.start as usize, at(MAIN, "billing", 1));
}

#[test]
fn references_list_every_use_in_every_file() {
    let (sources, checked, root, tools) = program();
    let index = Index::new(&checked.program, &sources);
    let orders = index.definition(root, at(MAIN, "orders", 0)).unwrap();
    let refs = index.references(&orders);
    // The declaration, `tagged(orders)` and the tool's `tags = [orders]`.
    assert_eq!(refs.len(), 3, "{refs:?}");
    assert!(refs.iter().any(|(f, _)| *f == tools));
    let billing = index.definition(root, at(MAIN, "billing", 0)).unwrap();
    // handoffs, the declaration, nodes, and two edges.
    assert_eq!(index.references(&billing).len(), 5);
}

#[test]
fn rename_edits_every_file_and_refuses_collisions() {
    let (sources, checked, root, tools) = program();
    let index = Index::new(&checked.program, &sources);
    let lookup = index.definition(root, at(MAIN, "lookup", 0)).unwrap();
    let edits = rename(&index, &lookup, "find_order").unwrap();
    assert_eq!(edits.len(), 2);
    assert!(edits.iter().any(|(f, _)| *f == tools) && edits.iter().any(|(f, _)| *f == root));
    let refused = rename(&index, &lookup, "support").unwrap_err();
    assert!(
        matches!(refused, Refusal::Collides { ref what, .. } if what == "an agent"),
        "{refused:?}"
    );
    assert_eq!(
        refused.to_string(),
        "`support` is already declared as an agent: every declaration shares one namespace, so pick another name"
    );
    assert!(matches!(rename(&index, &lookup, "2x"), Err(Refusal::NotAName(_))));
    assert!(matches!(rename(&index, &lookup, "END"), Err(Refusal::Reserved(_))));
    let yes_no = index.definition(root, at(MAIN, "yes_no", 0)).unwrap();
    assert!(matches!(rename(&index, &yes_no, "ok"), Err(Refusal::Stdlib(_))));
}

#[test]
fn references_and_rename_reach_fork_blocks() {
    const FORKED: &str = r#"model m {
  provider = scripted
}

agent plan {
  model  = m
  prompt = "Plan."
}

agent web {
  model  = m
  prompt = "Search."
  output = { "type": "object", "properties": { "title": { "type": "string" } } }
}

agent papers {
  model  = m
  prompt = "Read."
  output = { "type": "object", "properties": { "title": { "type": "string" } } }
}

agent write {
  model  = m
  prompt = "Write."
}

graph g {
  entry  = plan
  nodes  = [plan, web, papers, write]
  reduce = { title: last(papers, web) }

  state {
    title?: string "A title"
  }

  parallel plan {
    branches = [web, papers]
    join     = write
  }
  web    -> write
  papers -> write
  write  -> END
}
"#;
    let mut sources = SourceSet::new();
    let root = sources.add("app/main.tenx", FORKED);
    let checked = check(&mut sources, root, &LintLevels::default());
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
    let index = Index::new(&checked.program, &sources);
    let web = index.definition(root, at(FORKED, "web", 0)).unwrap();
    // The declaration, `nodes`, `last(…)`, `branches` and the edge.
    assert_eq!(index.references(&web).len(), 5);
    let write = index.definition(root, at(FORKED, "write", 0)).unwrap();
    let edits = rename(&index, &write, "report").unwrap();
    // The declaration, `nodes`, the join, two edges into it and the one out of it.
    assert_eq!(edits.iter().filter(|(f, _)| *f == root).count(), 6, "{edits:?}");
}

#[test]
fn hover_shows_signature_description_fields_and_codes() {
    let (sources, checked, root, _) = program();
    let index = Index::new(&checked.program, &sources);
    let lookup = index.definition(root, at(MAIN, "lookup", 0)).unwrap();
    let text = hover::declaration(&checked.program, &sources, &lookup);
    assert!(
        text.contains("tool lookup(order_id: string \"The order\") -> object"),
        "{text}"
    );
    assert!(!text.contains("description ="), "{text}");
    assert!(text.contains("Look up an order."), "{text}");
    assert!(text.contains("Risk `low`, runs `http`, tags `orders`"), "{text}");
    assert!(text.contains("declared in `app/tools.tenx`, line 1"), "{text}");
    let field = hover::field(MAIN, at(MAIN, "handoffs", 0) + 1).unwrap();
    assert!(field.contains("hand the conversation"), "{field}");
    let entry = hover::field(MAIN, at(MAIN, "entry", 0)).unwrap();
    assert!(entry.contains("The node a run starts at"), "{entry}");
    assert_eq!(hover::field(MAIN, at(MAIN, "support", 0)), None);
    let code = hover::code(Code::TENX0101);
    assert!(code.starts_with("**TENX0101**"), "{code}");
    assert_eq!(hover::code_at("// allow TENX0604 here", 12), Some(Code::TENX0604));
}

fn labels(program: &crate::Program, text: &str, offset: usize) -> Vec<String> {
    complete(program, text, offset).into_iter().map(|c| c.label).collect()
}

#[test]
fn completion_follows_the_context() {
    let (_, checked, _, _) = program();
    let p = &checked.program;
    // Agents in `handoffs = [`.
    let h = labels(p, MAIN, at(MAIN, "[billing]", 0) + 1);
    assert_eq!(h, ["billing", "support"]);
    // Tools and `tagged` in `tools = … + [`, tags in `tagged(`.
    let t = labels(p, MAIN, at(MAIN, "[lookup]", 0) + 1);
    assert_eq!(t, ["lookup", "tagged"]);
    assert_eq!(labels(p, MAIN, at(MAIN, "tagged(", 0) + 7), ["orders"]);
    // Graph nodes after `->`.
    let after_arrow = at(MAIN, "-> billing", 0) + 3;
    assert_eq!(labels(p, MAIN, after_arrow), ["support", "billing", "END"]);
    // Fields at the start of a line in an agent.
    let typing = MAIN.replace("  prompt = \"Bill.\"\n", "  prompt = \"Bill.\"\n  ou\n");
    let fields = labels(p, &typing, at(&typing, "  ou\n", 0) + 4);
    assert!(
        fields.contains(&"output".to_string()) && fields.contains(&"handoffs".to_string()),
        "{fields:?}"
    );
    // Schemas and built-in types after `name:`.
    let types = labels(p, TOOLS, at(TOOLS, "string", 0));
    assert!(
        types.contains(&"string".to_string()) && types.contains(&"yes_no".to_string()),
        "{types:?}"
    );
    // Stdlib modules, then a module's declarations, after `import`.
    assert_eq!(labels(p, "import ", 7), ["std.approval", "std.tools", "std.validators"]);
    let decls = complete(p, "import std.approval.", 20);
    assert!(
        decls
            .iter()
            .any(|c| c.label == "yes_no" && c.kind == CandidateKind::Declaration(DeclKind::Schema))
    );
    // Nothing inside a string.
    assert!(labels(p, MAIN, at(MAIN, "Help", 0) + 1).is_empty());
}

#[test]
fn every_listed_field_is_one_the_parser_takes() {
    let heads = [
        (Block::Model, "model m {\n", "}\n"),
        (Block::Tool, "tool t() {\n", "}\n"),
        (Block::Approval, "tool t() {\n  approval {\n", "  }\n}\n"),
        (Block::Agent, "agent a {\n", "}\n"),
        (Block::Validator, "validator v {\n", "}\n"),
        (Block::Interrupt, "interrupt i {\n", "}\n"),
        (Block::Graph, "graph g {\n", "}\n"),
    ];
    for (block, open, close) in heads {
        for field in block.fields() {
            let line = if field.block {
                format!("  {} {{ }}\n", field.name)
            } else {
                format!("  {} = 1\n", field.name)
            };
            let text = format!("{open}{line}{close}");
            let (_, diagnostics) = crate::syntax::parse_file(FileId(0), &text);
            assert!(
                diagnostics.iter().all(|d| d.code != Code::TENX0105),
                "{block:?} `{}` is not a field: {diagnostics:?}",
                field.name
            );
        }
    }
}

#[test]
fn outline_lists_items_and_their_parts() {
    let items = outline(FileId(0), MAIN);
    let names: Vec<&str> = items.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "import \"tools.tenx\"",
            "import std.approval.yes_no",
            "orders",
            "m",
            "support",
            "billing",
            "desk"
        ]
    );
    assert_eq!(items.last().unwrap().kind, OutlineKind::Declaration(DeclKind::Graph));
    let tool = outline(FileId(0), TOOLS);
    assert_eq!(tool.first().unwrap().children.first().unwrap().name, "order_id");
}

#[test]
fn did_you_mean_becomes_an_edit() {
    let text = MAIN.replace("tools = tagged(orders) + [lookup]", "tools = tagged(orders) + [lookp]");
    let mut reader = MemoryReader::new();
    reader
        .insert("app/main.tenx", text.as_str())
        .insert("app/tools.tenx", TOOLS);
    let mut sources = SourceSet::new();
    let root = sources.add("app/main.tenx", text.as_str());
    load_imports(&mut sources, root, &mut reader);
    let checked = check(&mut sources, root, &LintLevels::default());
    let unknown = checked.diagnostics.iter().find(|d| d.code == Code::TENX0101).unwrap();
    let fix = fixes::fix(unknown).unwrap();
    assert_eq!(fix.text, "lookup");
    assert_eq!(text.get(fix.span.range()), Some("lookp"));
}
