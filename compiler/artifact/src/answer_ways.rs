//! Which ways out of an interrupt node can be taken only after its answer approved.
//!
//! When an interrupt node's way out is a route, every valid answer (approving or not) is written
//! into state through the graph's `writes`, and then the route decides. So a route arm is taken
//! only after an approving answer exactly when what it tests can hold the approve value only
//! because the answer approved:
//!
//! - the answer's decision property is *required* by the response schema (by the response or
//!   one of its parts, all of which apply), so every valid answer writes it (a property an
//!   answer leaves out would leave an older value in the state);
//! - a *decision path* is a state path that receives it: `to` of a write of the node's answer
//!   whose `field` is the decision's `field` (`verdict: verdict`), or `to` followed by the
//!   decision's `field` for a write of the whole answer; and that no other write of the same
//!   answer touches (the same path, one inside it or one holding it), since every write of the
//!   answer is made at the same step and the last one stays;
//! - the *values* of the decision are the values its schema lists: the `enum`, `const` or
//!   `"type": "boolean"` (`true` and `false`) of a part of it, kept only where every other such
//!   part lists them too. The parts are the property's schema in each part of the response (the
//!   response, its local `$ref`s and its `allOf` members, at any depth) and, within each, the
//!   schema with its local `$ref`s and `allOf` members. Every valid answer's decision is one of
//!   them (a part that lists nothing, or lists other kinds of values, only narrows what is valid
//!   further), so they may be more than a valid answer can carry, never fewer;
//! - the arm is a `label` arm of a route `by` a one-step decision path whose label is the
//!   decision's `approve` string; or a `when` arm whose condition is exactly `PATH == approve`
//!   for a decision path; or exactly `PATH != VALUE` for a decision path whose values are known
//!   and are all `VALUE` or `approve` (`verdict != "revise"` when the decision is `"approve"`
//!   or `"revise"`, `ok != false` for a boolean approving on `true`); or exactly `PATH`
//!   (truthy) for a decision path whose truthy values are known and all `approve` (`true` for a
//!   boolean: only `true` is truthy); or exactly `PATH in [V, …]` for a decision path when every
//!   listed value the decision can hold approves and one at least can (`verdict in ["publish",
//!   "publish_now"]` when no answer gives `"publish_now"`), or, with no values known, when every
//!   listed value is `approve`; or a condition that can hold only when one of those does: an
//!   `and` with one of them among its parts, an `or` whose parts all are such conditions (an
//!   empty `or` never holds), and a `not`, pushed inwards: `not (not C)` is `C`, `not (A and
//!   B)` is `not A or not B`, `not (A or B)` is `not A and not B`, and on a decision path whose
//!   values are known `not (PATH == V)` is `PATH != V`, `not (PATH != V)` is `PATH == V`, `not
//!   PATH` tests the falsy values and `not (PATH in [..])` the values the list leaves out. A
//!   negated test also holds where its path is unset, but a decision path whose values are known
//!   is set after every answer (they are strings or booleans), so there `!=` and `not` are the
//!   exact negations.
//!
//! Every other arm (other labels, other conditions, `else`) is *rejecting*: a rejecting answer
//! can take it. A plain edge out of an interrupt node is approving (a rejection ends the run
//! there); an `on_error` handler and a visit limit's exit from the node are rejecting. The
//! compiler classifies arms with these same functions, so `tenxc check` and [`crate::load`]
//! agree on every arm.

use serde_json::Value;

use crate::model::{Arm, CompareOp, Condition, Decision, Graph, Schema, Write, WriteSource};

/// How many local `$ref`s are followed from a property's schema before giving up.
const MAX_REFS: usize = 16;

/// What makes an arm out of one interrupt node approving in one graph: the decision's approve
/// value, the state paths that receive the decision value, and whether that value is a boolean.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerTest {
    /// The decision's `approve` value.
    pub approve: Value,
    /// The state paths that hold the answer's decision value once the answer is written.
    pub paths: Vec<Vec<String>>,
    /// Whether the decision's values are known and all booleans.
    pub boolean: bool,
    /// The values the decision property can hold, as its schema lists them (see the module's
    /// rules): never fewer than a valid answer can carry. `None` when no part lists them.
    pub values: Option<Vec<Value>>,
}

impl AnswerTest {
    /// The test for the interrupt node `node` of `graph`, read with `decision` against
    /// `response` (its response schema). No paths when the response does not require the
    /// decision property, or the graph writes no answer of the node that holds it.
    pub fn new(graph: &Graph, node: &str, decision: &Decision, response: &Schema) -> Self {
        Self::with_writes(graph.writes.iter(), node, decision, response)
    }

    /// [`AnswerTest::new`] with the graph's writes given (only those of `node` count).
    pub fn with_writes<'w>(
        writes: impl IntoIterator<Item = &'w Write>,
        node: &str,
        decision: &Decision,
        response: &Schema,
    ) -> Self {
        let response = response.to_value();
        let required = required(&response, &decision.field);
        // Every write of this node's answer: they are all made at the same step.
        let answer_writes: Vec<(&Vec<String>, &Option<String>)> = writes
            .into_iter()
            .filter(|_| required)
            .filter_map(|write| match &write.from {
                WriteSource::Interrupt { node: from, field } if from == node && !write.to.is_empty() => {
                    Some((&write.to, field))
                }
                _ => None,
            })
            .collect();
        let mut paths = Vec::new();
        for (index, &(to, field)) in answer_writes.iter().enumerate() {
            let path = match field {
                Some(field) if *field == decision.field => to.clone(),
                Some(_) => continue,
                None => {
                    let mut path = to.clone();
                    path.push(decision.field.clone());
                    path
                }
            };
            // Another write of the same answer into this path, or around or inside it, may land
            // after this one: the path would then hold another part of the answer, which a
            // rejecting answer chooses. It is no decision path (the check refuses such writes,
            // `TENX0339`; an artifact made by hand gets no approving arm from them).
            let clobbered = answer_writes
                .iter()
                .enumerate()
                .any(|(other, (written, _))| other != index && overlaps(written, &path));
            if !clobbered {
                paths.push(path);
            }
        }
        let values = values(&response, &decision.field);
        Self {
            approve: decision.approve.clone(),
            paths,
            boolean: values
                .as_ref()
                .is_some_and(|values| values.iter().all(Value::is_boolean)),
            values,
        }
    }

    /// Whether `arm`, of a route `by` this field, can be taken only after an approving answer.
    pub fn approves(&self, by: Option<&str>, arm: &Arm) -> bool {
        match arm {
            Arm::Label { label, .. } => {
                let Some(by) = by else { return false };
                self.approve.as_str() == Some(label.as_str())
                    && self
                        .paths
                        .iter()
                        .any(|path| path.len() == 1 && path.first().map(String::as_str) == Some(by))
            }
            Arm::When { condition, .. } => self.condition_approves(condition),
            Arm::Else { .. } => false,
        }
    }

    /// Whether `condition` holds only when the decision value is the approve value.
    pub fn condition_approves(&self, condition: &Condition) -> bool {
        self.holds_only_after_approval(condition, false)
    }

    /// Whether `condition`, or `not condition` when `negated`, holds only when the decision
    /// value is the approve value. `not` is pushed inwards: through `not` (`not (not C)` is
    /// `C`), over `and` and `or` (De Morgan), and into the tests of a decision path, where it
    /// turns `==` into `!=` and back, `in` into "none of", a truthy test into a falsy one. A
    /// negated test holds also where its path is unset, so it approves only where the values
    /// are known (strings or booleans, and every valid answer writes one of them): the path is
    /// then set after every answer, and the negation is the exact complement. The recursion
    /// follows the nesting of the condition, which the syntax stage bounds (and serde_json's
    /// depth limit, in an artifact).
    fn holds_only_after_approval(&self, condition: &Condition, negated: bool) -> bool {
        match (condition, negated) {
            (Condition::Not { condition }, _) => self.holds_only_after_approval(condition, !negated),
            // All must hold, so one that holds only after an approval is enough (`not (A or B)`
            // is `not A and not B`).
            (Condition::And { conditions }, false) | (Condition::Or { conditions }, true) => {
                conditions.iter().any(|c| self.holds_only_after_approval(c, negated))
            }
            // One must hold, so each must hold only after an approval (an empty `or` never holds;
            // `not (A and B)` is `not A or not B`, and `not` of an empty `and` never holds).
            (Condition::Or { conditions }, false) | (Condition::And { conditions }, true) => {
                !conditions.is_empty() && conditions.iter().all(|c| self.holds_only_after_approval(c, negated))
            }
            // The test for the truthy values (a non-empty string or `true`; the values are never
            // anything else), or for the falsy ones: each of them must approve.
            (Condition::Truthy { field }, _) => {
                self.paths.contains(field) && self.only_approves(|held| truthy(held) != negated)
            }
            (Condition::Compare { field, op, value }, _) => {
                self.paths.contains(field) && self.compare_approves(*op, value, negated)
            }
        }
    }

    /// Whether `PATH OP value` (or its negation) on a decision path holds only after approval.
    fn compare_approves(&self, op: CompareOp, value: &Value, negated: bool) -> bool {
        match (op, negated) {
            // The approve value alone: the path holds it only after an approving answer.
            (CompareOp::Eq, false) => *value == self.approve,
            // `not (PATH != approve)` is `PATH == approve` once the path is set.
            (CompareOp::Ne, true) => self.values.is_some() && *value == self.approve,
            // The test for every other value: each of them must approve.
            (CompareOp::Eq, true) | (CompareOp::Ne, false) => self.only_approves(|held| held != value),
            // The listed values: those the decision can hold must approve, and one at least must
            // be one it can hold; with no values known, each listed value must be the approve
            // value. A constant that is no list never matches.
            (CompareOp::In, false) => {
                let Some(listed) = value.as_array() else { return false };
                match &self.values {
                    Some(values) => {
                        let mut held = values.iter().filter(|held| listed.contains(held)).peekable();
                        held.peek().is_some() && held.all(|held| *held == self.approve)
                    }
                    None => !listed.is_empty() && listed.iter().all(|listed| *listed == self.approve),
                }
            }
            // The values it does not list: each of them must approve.
            (CompareOp::In, true) => value
                .as_array()
                .is_some_and(|listed| self.only_approves(|held| !listed.contains(held))),
            (CompareOp::Lt | CompareOp::Le | CompareOp::Gt | CompareOp::Ge | CompareOp::Contains, _) => false,
        }
    }

    /// Whether every value the decision can hold for which `holds` is true approves; false when
    /// the values are not known.
    fn only_approves(&self, holds: impl Fn(&Value) -> bool) -> bool {
        self.values.as_ref().is_some_and(|values| {
            values
                .iter()
                .filter(|held| holds(held))
                .all(|held| *held == self.approve)
        })
    }
}

/// Whether a decision value is truthy in a condition: `true` or a non-empty string.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        _ => false,
    }
}

/// Whether writing one of these state paths can change the other: one is the other or holds it.
fn overlaps(a: &[String], b: &[String]) -> bool {
    a.iter().zip(b).all(|(x, y)| x == y)
}

/// How many schemas [`parts`] visits from one schema before it stops.
const MAX_PARTS: usize = 64;

/// The pointers (into `root`) of the schemas every value at the pointer `start` must match: the
/// schema itself, then the targets of its local `$ref`s and the members of its `allOf`, at any
/// depth (each once, [`MAX_PARTS`] at most), as draft 2020-12 applies them together.
pub fn parts(root: &Value, start: String) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(at) = queue.pop_front() {
        if out.len() >= MAX_PARTS {
            break;
        }
        if out.contains(&at) {
            continue;
        }
        let Some(schema) = root.pointer(&at) else { continue };
        if let Some(target) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| local_target(root, &at, reference))
        {
            queue.push_back(target);
        }
        if let Some(Value::Array(all)) = schema.get("allOf") {
            queue.extend((0..all.len()).map(|i| format!("{at}/allOf/{i}")));
        }
        out.push(at);
    }
    out
}

/// The pointer in `root` that the `$ref` `reference` of the schema at the pointer `at` names,
/// when it is certain: a fragment-only reference (`#/$defs/x`) that no `$id` between the root
/// and `at` rebases (an embedded resource's `#` is its own root, not the document's) and that
/// holds no percent-escape (a validator decodes it, `pointer` would not). Any other reference
/// is not followed: a part left out only widens what [`values`] and [`required`] conclude from
/// the parts, in the safe direction.
fn local_target(root: &Value, at: &str, reference: &str) -> Option<String> {
    let target = reference.strip_prefix('#')?;
    if target.contains('%') {
        return None;
    }
    let mut prefix = String::new();
    for segment in at.split('/').skip(1) {
        prefix.push('/');
        prefix.push_str(segment);
        if root.pointer(&prefix).and_then(|schema| schema.get("$id")).is_some() {
            return None;
        }
    }
    Some(target.to_owned())
}

/// The pointers of the schemas of the top-level property `name` of the object schema `root`:
/// `…/properties/NAME` of each of the response's [`parts`] that declares it.
pub fn places(root: &Value, name: &str) -> Vec<String> {
    let escaped = name.replace('~', "~0").replace('/', "~1");
    parts(root, String::new())
        .into_iter()
        .filter(|at| {
            root.pointer(at)
                .and_then(|schema| schema.get("properties"))
                .and_then(|properties| properties.get(name))
                .is_some()
        })
        .map(|at| format!("{at}/properties/{escaped}"))
        .collect()
}

/// Whether every valid answer to the object schema `root` carries the top-level property
/// `name`: one of the response's [`parts`] lists it in `required`.
pub fn required(root: &Value, name: &str) -> bool {
    parts(root, String::new()).iter().any(|at| {
        root.pointer(at)
            .and_then(|schema| schema.get("required"))
            .and_then(Value::as_array)
            .is_some_and(|names| names.iter().any(|required| required.as_str() == Some(name)))
    })
}

/// The values a schema lists for a decision: its `enum` or `const` of strings or booleans, or
/// both booleans for `"type": "boolean"`; `None` when it is none of these.
pub fn listed(schema: &Value) -> Option<Vec<Value>> {
    let answer = |v: &Value| matches!(v, Value::String(_) | Value::Bool(_));
    if let Some(values) = schema.get("enum") {
        let values = values.as_array()?;
        return (!values.is_empty() && values.iter().all(answer)).then(|| values.clone());
    }
    if let Some(value) = schema.get("const") {
        return answer(value).then(|| vec![value.clone()]);
    }
    (schema.get("type").and_then(Value::as_str) == Some("boolean")).then(|| vec![Value::Bool(true), Value::Bool(false)])
}

/// The values the top-level property `name` of the object schema `root` can hold, as its schema
/// lists them: those the first part that lists values lists and every other such part lists too
/// (parts: [`parts`] of each of its [`places`]). Never fewer than a valid answer can carry;
/// `None` when no part lists values.
pub fn values(root: &Value, name: &str) -> Option<Vec<Value>> {
    let mut values: Option<Vec<Value>> = None;
    for place in places(root, name) {
        for at in parts(root, place) {
            let Some(listed) = root.pointer(&at).and_then(listed) else {
                continue;
            };
            match &mut values {
                None => values = Some(listed),
                Some(kept) => kept.retain(|value| listed.contains(value)),
            }
        }
    }
    values
}

/// The schema of the top-level property `name` of the object schema `root`, local `$ref`s
/// followed.
pub fn property<'v>(root: &'v Value, name: &str) -> Option<&'v Value> {
    let mut pointer = format!("/properties/{}", name.replace('~', "~0").replace('/', "~1"));
    for _ in 0..MAX_REFS {
        let at = root.pointer(&pointer)?;
        let Some(reference) = at.get("$ref").and_then(Value::as_str) else {
            return Some(at);
        };
        pointer = local_target(root, &pointer, reference)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::AnswerTest;
    use crate::model::{Arm, CompareOp, Condition, Decision, Graph, Schema, Write, WriteSource};
    use serde_json::{Value, json};

    fn graph(writes: Vec<Write>) -> Graph {
        let mut graph: Graph = serde_json::from_value(json!({
            "entry": "review", "nodes": {}, "edges": [], "routes": [], "recursion_limit": 25,
            "input_validators": [], "state_schema": {"type": "object"}, "entries": [], "writes": [],
            "visit_limits": [], "on_error": [], "resume": "entry", "retries": [],
            "forks": [], "reducers": [], "subgraphs": []
        }))
        .unwrap();
        graph.writes = writes;
        graph
    }

    fn write(field: Option<&str>, to: &[&str]) -> Write {
        Write {
            from: WriteSource::Interrupt {
                node: "review".to_owned(),
                field: field.map(str::to_owned),
            },
            to: to.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn verdict() -> (Decision, Schema) {
        let decision = Decision {
            field: "verdict".to_owned(),
            approve: json!("publish"),
            edit: None,
            respond: None,
        };
        let schema = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {"enum": ["publish", "revise"]}},
            "required": ["verdict"]
        }));
        (decision, schema)
    }

    fn label(label: &str) -> Arm {
        Arm::Label {
            label: label.to_owned(),
            target: "x".to_owned(),
        }
    }

    #[test]
    fn only_the_approve_label_of_the_written_decision_approves() {
        let (decision, schema) = verdict();
        let test = AnswerTest::new(
            &graph(vec![write(Some("verdict"), &["choice"])]),
            "review",
            &decision,
            &schema,
        );
        assert!(test.approves(Some("choice"), &label("publish")));
        assert!(!test.approves(Some("choice"), &label("revise")));
        assert!(!test.approves(Some("other"), &label("publish")));
        assert!(!test.approves(None, &label("publish")));
        assert!(!test.approves(Some("choice"), &Arm::Else { target: "x".to_owned() }));
        let eq = |field: &[&str], value: Value| Arm::When {
            condition: Condition::Compare {
                field: field.iter().map(|s| (*s).to_owned()).collect(),
                op: CompareOp::Eq,
                value,
            },
            target: "x".to_owned(),
        };
        assert!(test.approves(None, &eq(&["choice"], json!("publish"))));
        assert!(!test.approves(None, &eq(&["choice"], json!("revise"))));
        // A write of the whole answer: the decision is one step inside it.
        let whole = AnswerTest::new(&graph(vec![write(None, &["answer"])]), "review", &decision, &schema);
        assert!(whole.approves(None, &eq(&["answer", "verdict"], json!("publish"))));
        assert!(!whole.approves(Some("answer"), &label("publish")));
    }

    #[test]
    fn nothing_approves_when_the_decision_is_not_required_or_not_written() {
        let (decision, _) = verdict();
        let optional = Schema::from(json!({"type": "object", "properties": {"verdict": {"enum": ["publish"]}}}));
        let test = AnswerTest::new(
            &graph(vec![write(Some("verdict"), &["choice"])]),
            "review",
            &decision,
            &optional,
        );
        assert!(!test.approves(Some("choice"), &label("publish")));
        let (decision, schema) = verdict();
        let other = AnswerTest::new(
            &graph(vec![write(Some("note"), &["choice"])]),
            "review",
            &decision,
            &schema,
        );
        assert!(!other.approves(Some("choice"), &label("publish")));
    }

    #[test]
    fn a_decision_path_another_part_of_the_answer_is_written_to_is_no_decision_path() {
        let (decision, schema) = verdict();
        let eq = |field: &[&str]| Arm::When {
            condition: Condition::Compare {
                field: field.iter().map(|s| (*s).to_owned()).collect(),
                op: CompareOp::Eq,
                value: json!("publish"),
            },
            target: "x".to_owned(),
        };
        // `{ verdict: v, note: v }`: `note` may land last, so `v` can hold a rejection's note.
        let shared = graph(vec![write(Some("verdict"), &["v"]), write(Some("note"), &["v"])]);
        let test = AnswerTest::new(&shared, "review", &decision, &schema);
        assert!(!test.approves(Some("v"), &label("publish")));
        assert!(!test.approves(None, &eq(&["v"])));
        // The whole answer to `ans`, and a property to `ans` too (or inside it).
        for other in [&["ans"][..], &["ans", "verdict"][..]] {
            let around = graph(vec![write(None, &["ans"]), write(Some("note"), other)]);
            let test = AnswerTest::new(&around, "review", &decision, &schema);
            assert!(!test.approves(None, &eq(&["ans", "verdict"])), "{other:?}");
        }
        // Other parts of the answer in other fields leave the decision path alone.
        let apart = graph(vec![write(Some("verdict"), &["v"]), write(Some("note"), &["note"])]);
        let test = AnswerTest::new(&apart, "review", &decision, &schema);
        assert!(test.approves(Some("v"), &label("publish")));
        assert!(test.approves(None, &eq(&["v"])));
    }

    #[test]
    fn a_boolean_decision_approves_when_truthy() {
        let schema = Schema::from(json!({
            "type": "object",
            "properties": {"approved": {"$ref": "#/$defs/flag"}},
            "required": ["approved"],
            "$defs": {"flag": {"type": "boolean"}}
        }));
        let graph = graph(vec![write(Some("approved"), &["ok"])]);
        let test = AnswerTest::new(&graph, "review", &Decision::yes_no(), &schema);
        let truthy = |field: &str| Condition::Truthy {
            field: vec![field.to_owned()],
        };
        assert!(test.condition_approves(&truthy("ok")));
        assert!(!test.condition_approves(&truthy("other")));
        assert!(!test.condition_approves(&Condition::Not {
            condition: Box::new(truthy("ok"))
        }));
        // A decision field that may hold strings: a non-empty string is truthy too.
        let strings = Schema::from(json!({
            "type": "object",
            "properties": {"approved": {"enum": [true, "maybe"]}},
            "required": ["approved"]
        }));
        let loose = AnswerTest::new(&graph, "review", &Decision::yes_no(), &strings);
        assert!(!loose.condition_approves(&truthy("ok")));
    }

    #[test]
    fn a_conjunction_with_the_approval_approves_and_a_disjunction_only_of_approvals() {
        let schema = Schema::from(json!({
            "type": "object",
            "properties": {"approved": {"type": "boolean"}},
            "required": ["approved"]
        }));
        let graph = graph(vec![write(Some("approved"), &["ok"])]);
        let test = AnswerTest::new(&graph, "review", &Decision::yes_no(), &schema);
        let truthy = |field: &str| Condition::Truthy {
            field: vec![field.to_owned()],
        };
        let kind = Condition::Compare {
            field: vec!["kind".to_owned()],
            op: CompareOp::Eq,
            value: json!("refund"),
        };
        let not = |condition: Condition| Condition::Not {
            condition: Box::new(condition),
        };
        let and = |conditions: Vec<Condition>| Condition::And { conditions };
        let or = |conditions: Vec<Condition>| Condition::Or { conditions };
        // `ok and kind == "refund"`: approved, then the state decides more.
        assert!(test.condition_approves(&and(vec![truthy("ok"), kind.clone()])));
        assert!(test.condition_approves(&and(vec![kind.clone(), truthy("ok")])));
        assert!(!test.condition_approves(&and(vec![kind.clone(), truthy("other")])));
        assert!(!test.condition_approves(&and(Vec::new())), "always true");
        // `ok or kind == "refund"` holds after a rejection too.
        assert!(!test.condition_approves(&or(vec![truthy("ok"), kind.clone()])));
        assert!(test.condition_approves(&or(vec![truthy("ok"), and(vec![truthy("ok"), kind])])));
        assert!(!test.condition_approves(&or(Vec::new())));
        // `not (not ok)` is `ok`; `not ok` is the rejection.
        assert!(test.condition_approves(&not(not(truthy("ok")))));
        assert!(!test.condition_approves(&not(not(not(truthy("ok"))))));
    }

    #[test]
    fn not_the_other_value_approves_when_every_remaining_value_approves() {
        let ne = |field: &str, value: Value| Condition::Compare {
            field: vec![field.to_owned()],
            op: CompareOp::Ne,
            value,
        };
        let graph = graph(vec![write(Some("verdict"), &["v"])]);
        let two = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {"type": "string", "enum": ["publish", "revise"]}},
            "required": ["verdict"]
        }));
        let (decision, three) = verdict();
        let test = AnswerTest::new(&graph, "review", &decision, &two);
        assert!(test.condition_approves(&ne("v", json!("revise"))));
        assert!(!test.condition_approves(&ne("v", json!("publish"))), "the rejection");
        assert!(
            !test.condition_approves(&ne("v", json!("drop"))),
            "holds after every answer"
        );
        assert!(!test.condition_approves(&ne("other", json!("revise"))));
        let three = Schema::from({
            let mut three = three.to_value();
            three["properties"]["verdict"]["enum"] = json!(["publish", "revise", "drop"]);
            three
        });
        let test = AnswerTest::new(&graph, "review", &decision, &three);
        assert!(
            !test.condition_approves(&ne("v", json!("revise"))),
            "a drop is no approval"
        );
        // The values are those every part lists: here the `allOf` leaves two.
        let narrowed = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {
                "enum": ["publish", "revise", "drop"],
                "allOf": [{"$ref": "#/$defs/two"}]
            }},
            "required": ["verdict"],
            "$defs": {"two": {"enum": ["publish", "revise", "later"]}}
        }));
        let test = AnswerTest::new(&graph, "review", &decision, &narrowed);
        assert_eq!(test.values, Some(vec![json!("publish"), json!("revise")]));
        assert!(test.condition_approves(&ne("v", json!("revise"))));
        // A free string: its values are not known.
        let free = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {"type": "string"}},
            "required": ["verdict"]
        }));
        let test = AnswerTest::new(&graph, "review", &decision, &free);
        assert!(!test.condition_approves(&ne("v", json!("revise"))));
        // A boolean: `!= false` is `== true`.
        let yes_no = Schema::from(json!({
            "type": "object",
            "properties": {"approved": {"type": "boolean"}},
            "required": ["approved"]
        }));
        let ok = graph_with(write_field("approved", "ok"));
        let test = AnswerTest::new(&ok, "review", &Decision::yes_no(), &yes_no);
        assert!(test.condition_approves(&ne("ok", json!(false))));
        assert!(!test.condition_approves(&ne("ok", json!(true))));
        assert!(
            !test.condition_approves(&ne("ok", json!("false"))),
            "holds after every answer"
        );
        assert!(test.condition_approves(&Condition::And {
            conditions: vec![ne("ok", json!(false)), ne("kind", json!("refund"))]
        }));
    }

    #[test]
    fn a_decision_declared_and_required_in_an_all_of_part_is_read() {
        let schema = Schema::from(json!({
            "type": "object",
            "allOf": [
                {"$ref": "#/$defs/decided"},
                {"properties": {"verdict": {"type": "string"}}}
            ],
            "$defs": {"decided": {
                "properties": {"verdict": {"enum": ["publish", "revise"]}},
                "required": ["verdict"]
            }}
        }));
        let (decision, _) = verdict();
        let test = AnswerTest::new(
            &graph(vec![write(Some("verdict"), &["v"])]),
            "review",
            &decision,
            &schema,
        );
        assert_eq!(test.paths, vec![vec!["v".to_owned()]]);
        assert_eq!(test.values, Some(vec![json!("publish"), json!("revise")]));
        assert!(test.approves(Some("v"), &label("publish")));
        // Declared inside an `anyOf` only: an answer matches one branch, which proves nothing.
        let any = Schema::from(json!({
            "type": "object",
            "anyOf": [{"properties": {"verdict": {"enum": ["publish"]}}, "required": ["verdict"]}]
        }));
        let test = AnswerTest::new(&graph(vec![write(Some("verdict"), &["v"])]), "review", &decision, &any);
        assert!(test.paths.is_empty());
        assert_eq!(test.values, None);
    }

    fn compare(field: &str, op: CompareOp, value: Value) -> Condition {
        Condition::Compare {
            field: vec![field.to_owned()],
            op,
            value,
        }
    }

    fn not(condition: Condition) -> Condition {
        Condition::Not {
            condition: Box::new(condition),
        }
    }

    #[test]
    fn not_turns_equal_into_not_equal_and_back() {
        let graph = graph(vec![write(Some("verdict"), &["v"])]);
        let two = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {"enum": ["publish", "revise"]}},
            "required": ["verdict"]
        }));
        let (decision, three) = verdict();
        let three = Schema::from({
            let mut three = three.to_value();
            three["properties"]["verdict"]["enum"] = json!(["publish", "revise", "drop"]);
            three
        });
        let test = AnswerTest::new(&graph, "review", &decision, &two);
        // `not (v == "revise")` is `v != "revise"`; `not (v != "publish")` is `v == "publish"`.
        assert!(test.condition_approves(&not(compare("v", CompareOp::Eq, json!("revise")))));
        assert!(!test.condition_approves(&not(compare("v", CompareOp::Eq, json!("publish")))));
        assert!(test.condition_approves(&not(compare("v", CompareOp::Ne, json!("publish")))));
        assert!(!test.condition_approves(&not(compare("v", CompareOp::Ne, json!("revise")))));
        assert!(!test.condition_approves(&not(compare("other", CompareOp::Eq, json!("revise")))));
        // A third value that does not approve takes `not (v == "revise")` too.
        let test = AnswerTest::new(&graph, "review", &decision, &three);
        assert!(!test.condition_approves(&not(compare("v", CompareOp::Eq, json!("revise")))));
        assert!(test.condition_approves(&not(compare("v", CompareOp::Ne, json!("publish")))));
        // No values known: a null answer leaves the path unset, and `not (v != "publish")` holds.
        let nullable = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {"type": ["string", "null"]}},
            "required": ["verdict"]
        }));
        let test = AnswerTest::new(&graph, "review", &decision, &nullable);
        assert!(test.condition_approves(&compare("v", CompareOp::Eq, json!("publish"))));
        assert!(!test.condition_approves(&not(compare("v", CompareOp::Ne, json!("publish")))));
        assert!(!test.condition_approves(&not(compare("v", CompareOp::Eq, json!("revise")))));
        // Other comparisons say nothing about the decision, negated or not.
        assert!(!test.condition_approves(&not(compare("v", CompareOp::Lt, json!("revise")))));
    }

    #[test]
    fn not_is_pushed_over_and_or_and_a_truthy_test() {
        let yes_no = Schema::from(json!({
            "type": "object",
            "properties": {"approved": {"type": "boolean"}},
            "required": ["approved"]
        }));
        let ok = graph_with(write_field("approved", "ok"));
        let test = AnswerTest::new(&ok, "review", &Decision::yes_no(), &yes_no);
        let no = compare("ok", CompareOp::Eq, json!(false));
        let urgent = Condition::Truthy {
            field: vec!["urgent".to_owned()],
        };
        let and = |conditions: Vec<Condition>| Condition::And { conditions };
        let or = |conditions: Vec<Condition>| Condition::Or { conditions };
        // `not (ok == false or urgent)` is `ok != false and not urgent`.
        assert!(test.condition_approves(&not(or(vec![no.clone(), urgent.clone()]))));
        // `not (ok == false and urgent)` holds after a no when `urgent` is unset.
        assert!(!test.condition_approves(&not(and(vec![no.clone(), urgent.clone()]))));
        assert!(test.condition_approves(&not(and(vec![no.clone(), not(truthy_of("ok"))]))));
        assert!(!test.condition_approves(&not(and(Vec::new()))), "never holds");
        assert!(!test.condition_approves(&not(or(Vec::new()))), "always holds");
        // `not ok` holds after a no; with `approve: false` it is the approval.
        assert!(!test.condition_approves(&not(truthy_of("ok"))));
        let refuse = Decision {
            approve: json!(false),
            ..Decision::yes_no()
        };
        let test = AnswerTest::new(&ok, "review", &refuse, &yes_no);
        assert!(test.condition_approves(&not(truthy_of("ok"))));
        assert!(!test.condition_approves(&truthy_of("ok")));
    }

    fn truthy_of(field: &str) -> Condition {
        Condition::Truthy {
            field: vec![field.to_owned()],
        }
    }

    #[test]
    fn in_a_list_approves_when_every_value_it_can_hold_there_approves() {
        let graph = graph(vec![write(Some("verdict"), &["v"])]);
        let decision = Decision {
            field: "verdict".to_owned(),
            approve: json!("approve"),
            edit: None,
            respond: None,
        };
        let listed = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {"enum": ["approve", "reject", "later"]}},
            "required": ["verdict"]
        }));
        let test = AnswerTest::new(&graph, "review", &decision, &listed);
        let is_in = |field: &str, values: Value| compare(field, CompareOp::In, values);
        assert!(test.condition_approves(&is_in("v", json!(["approve"]))));
        // A value no answer gives is never there.
        assert!(test.condition_approves(&is_in("v", json!(["approve", "approve_small"]))));
        assert!(!test.condition_approves(&is_in("v", json!(["approve", "reject"]))));
        assert!(
            !test.condition_approves(&is_in("v", json!(["approve_small"]))),
            "never holds"
        );
        assert!(!test.condition_approves(&is_in("v", json!([]))));
        assert!(!test.condition_approves(&is_in("v", json!("approve"))), "no list");
        assert!(!test.condition_approves(&is_in("other", json!(["approve"]))));
        // `not in`: the values it does not list must approve.
        assert!(test.condition_approves(&not(is_in("v", json!(["reject", "later"])))));
        assert!(!test.condition_approves(&not(is_in("v", json!(["reject"])))));
        assert!(!test.condition_approves(&not(is_in("v", json!("reject")))));
        // No values known: every listed value must be the approve value.
        let free = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {"type": "string"}},
            "required": ["verdict"]
        }));
        let test = AnswerTest::new(&graph, "review", &decision, &free);
        assert!(test.condition_approves(&is_in("v", json!(["approve", "approve"]))));
        assert!(!test.condition_approves(&is_in("v", json!(["approve", "approve_small"]))));
        assert!(!test.condition_approves(&is_in("v", json!([]))));
        assert!(!test.condition_approves(&not(is_in("v", json!(["reject"])))));
        // A boolean decision: `ok in [true]` is `ok`.
        let yes_no = Schema::from(json!({
            "type": "object",
            "properties": {"approved": {"type": "boolean"}},
            "required": ["approved"]
        }));
        let ok = graph_with(write_field("approved", "ok"));
        let test = AnswerTest::new(&ok, "review", &Decision::yes_no(), &yes_no);
        assert!(test.condition_approves(&is_in("ok", json!([true]))));
        assert!(!test.condition_approves(&is_in("ok", json!([true, false]))));
        assert!(
            test.condition_approves(&is_in("ok", json!([true, "false"]))),
            "the string is no answer"
        );
    }

    #[test]
    fn a_reference_a_validator_resolves_elsewhere_is_not_followed() {
        let ne_hold = Condition::Compare {
            field: vec!["v".to_owned()],
            op: CompareOp::Ne,
            value: json!("hold"),
        };
        let graph = graph(vec![write(Some("verdict"), &["v"])]);
        let (decision, _) = verdict();
        let decision = Decision {
            approve: json!("refund"),
            ..decision
        };
        // Inside a resource with its own `$id`, `#` is that resource: `#/$defs/inner` is its own
        // free string, not the document's enum, so "drop" is a valid answer.
        let rebased = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {"$ref": "#/$defs/v"}},
            "required": ["verdict"],
            "$defs": {
                "v": {"$id": "https://schemas.example/v", "$ref": "#/$defs/inner",
                      "$defs": {"inner": {"type": "string"}}},
                "inner": {"enum": ["refund", "hold"]}
            }
        }));
        let test = AnswerTest::new(&graph, "review", &decision, &rebased);
        assert_eq!(test.values, None);
        assert!(!test.condition_approves(&ne_hold));
        // A validator decodes `%20`; a JSON pointer would name another schema.
        let escaped = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {"$ref": "#/$defs/a%20b"}},
            "required": ["verdict"],
            "$defs": {"a b": {"type": "string"}, "a%20b": {"enum": ["refund", "hold"]}}
        }));
        let test = AnswerTest::new(&graph, "review", &decision, &escaped);
        assert_eq!(test.values, None);
        assert!(!test.condition_approves(&ne_hold));
        assert_eq!(super::property(&escaped.to_value(), "verdict"), None);
        // The document's own references are followed as before.
        let plain = Schema::from(json!({
            "type": "object",
            "properties": {"verdict": {"$ref": "#/$defs/inner"}},
            "required": ["verdict"],
            "$defs": {"inner": {"enum": ["refund", "hold"]}}
        }));
        let test = AnswerTest::new(&graph, "review", &decision, &plain);
        assert!(test.condition_approves(&ne_hold));
    }

    fn graph_with(write: Write) -> Graph {
        graph(vec![write])
    }

    fn write_field(field: &str, to: &str) -> Write {
        write(Some(field), &[to])
    }

    #[test]
    fn truthy_values_of_a_listed_decision_approve_only_when_all_approve() {
        let truthy = Condition::Truthy {
            field: vec!["ok".to_owned()],
        };
        let ok = graph_with(write_field("approved", "ok"));
        // An `enum` of both booleans is a boolean too.
        let both = Schema::from(json!({
            "type": "object",
            "properties": {"approved": {"enum": [false, true]}},
            "required": ["approved"]
        }));
        let test = AnswerTest::new(&ok, "review", &Decision::yes_no(), &both);
        assert!(test.boolean);
        assert!(test.condition_approves(&truthy));
        // An empty string is falsy: `"go"` is the only truthy value.
        let strings = Schema::from(json!({
            "type": "object",
            "properties": {"approved": {"enum": ["go", ""]}},
            "required": ["approved"]
        }));
        let go = Decision {
            approve: json!("go"),
            ..Decision::yes_no()
        };
        let test = AnswerTest::new(&ok, "review", &go, &strings);
        assert!(!test.boolean);
        assert!(test.condition_approves(&truthy));
    }
}
