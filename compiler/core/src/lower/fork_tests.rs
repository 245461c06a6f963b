//! Unit tests of the lowering of forks and reducers: a program with a `parallel` and a `map`
//! lowers to exactly these `forks` and `reducers` (sorted by node and by field), with a source
//! map entry per fork, and seals.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use super::tests::lower_allowing;
use serde_json::json;

const FORKS: &str = r#"
model m {
  provider = scripted
  turns    = [{ text: "done" }]
}

agent planner {
  model  = m
  prompt = "Plan {topic}."
  output = {
    "type": "object",
    "properties": { "sections": { "type": "array", "items": { "type": "string" } } },
    "required": ["sections"]
  }
}

agent web {
  model  = m
  prompt = "Search the web for {topic}."
  output = {
    "type": "object",
    "properties": { "notes": { "type": "array", "items": { "type": "string" } }, "headline": { "type": "string" } },
    "required": ["notes"]
  }
}

agent papers {
  model  = m
  prompt = "Search the papers on {topic}."
  output = {
    "type": "object",
    "properties": { "notes": { "type": "array", "items": { "type": "string" } }, "headline": { "type": "string" } },
    "required": ["notes"]
  }
}

agent gather {
  model  = m
  prompt = "Gather {notes} into sections."
}

agent summarise {
  model  = m
  prompt = "Summarise {section}."
  output = {
    "type": "object",
    "properties": { "cost": { "type": "number" } },
    "required": ["cost"]
  }
}

agent combine {
  model  = m
  prompt = "Combine the sections of {topic} ({headline}, {cost})."
}

graph research {
  entry  = planner
  nodes  = [planner, web, papers, gather, summarise, combine]
  reduce = { notes: append, headline: last(papers, web), cost: sum }

  state {
    topic: string "What to research"
    notes: list<string> = [] "What the searches found"
    headline?: string "The best headline"
    sections: list<string> = [] "The sections"
    section?: string "One section"
    cost: number = 0 "What it cost"
  }

  parallel planner {
    branches = [web, papers]
    join     = gather
  }
  web    -> gather
  papers -> gather

  map gather {
    over            = sections
    item            = section
    node            = summarise
    join            = combine
    max_concurrency = 3
  }
  summarise -> combine
  combine   -> END
}
"#;

#[test]
fn parallel_and_map_lower_to_forks_and_reducers() {
    let artifact = lower_allowing(FORKS, &[]);
    let graph = &artifact.graphs["research"];
    assert_eq!(
        serde_json::to_value(&graph.forks).unwrap(),
        json!([
            {
                "from": "gather", "kind": "map", "branches": ["summarise"], "over": "sections",
                "item": "section", "max_concurrency": 3, "join": "combine"
            },
            {
                "from": "planner", "kind": "parallel", "branches": ["web", "papers"], "over": null,
                "item": null, "max_concurrency": null, "join": "gather"
            }
        ])
    );
    assert_eq!(
        serde_json::to_value(&graph.reducers).unwrap(),
        json!([
            { "field": "cost", "reduce": "sum", "order": [] },
            { "field": "headline", "reduce": "last", "order": ["papers", "web"] },
            { "field": "notes", "reduce": "append", "order": [] }
        ])
    );
    let located = &artifact.source_map["graph.research.fork.planner"];
    assert_eq!((located.line, located.column), (71, 3));
    assert!(artifact.source_map.contains_key("graph.research.fork.gather"));
}
