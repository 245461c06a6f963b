//! The lower stage: turns a checked program into the [`tenx_artifact::Artifact`] the runtime
//! executes verbatim.
//!
//! It runs only on a program that checked without errors, so it never reports anything: a
//! declaration that is missing or malformed here was already reported by an earlier stage, and is
//! skipped. What goes into the artifact is what some graph can run: the graphs, their nodes, the
//! agents they run (and their handoff targets), the tools those agents see, the models of those
//! agents, the validators the graphs and agents use, and the interrupts that are nodes or approve a tool in
//! the artifact (see [`Reachable`]). Everything is keyed by declared name in `BTreeMap`s, so the
//! result depends only on the program, never on the order files were read in, file ids, paths,
//! time or machine. Pure: no IO.
//!
//! # Why the result always seals
//!
//! `tenxc check` accepts only what `tenxc build` can seal: every rule the artifact's self-check
//! (`tenx_artifact`'s `check.rs`), its risk policy (`policy/`), sealing and loading enforce is
//! either proved by a coded check or cannot fail for a lowered program. The property test
//! `tests/tests/check_implies_build/` holds this for thousands of mutated programs. Rule by rule:
//!
//! - *Models*: `api_key_env` names a variable (`TENX0802`; only `env("NAME")` is copied, see
//!   `lower/model.rs`); `params` is an object (anything else is written as `{}`).
//! - *Scripts*: a model has a `script` exactly when it is `scripted` (by construction,
//!   `lower/model.rs`); fixed `turns` never come with `rules` or a `fallback` (`TENX0805`); every
//!   rule's regex compiles within the size limit (`TENX0807`) and has no capture named `result`
//!   (`TENX0808`); turns are typed text or tool turns (`TENX0814`; a malformed one is never
//!   lowered).
//! - *Tool names*: every model-facing name matches `^[A-Za-z0-9_-]{1,64}$`
//!   (`TENX0204`–`TENX0207`), and so does every generated `transfer_to_<agent>` (`TENX0208`);
//!   no two names one agent sees are equal (`TENX0201`, `TENX0203`; `transfer_to_…` is reserved,
//!   `TENX0202`).
//! - *Schemas*: `parameters` is an object (a parameter list lowers to one; `parameters` is a
//!   schema name or a map, `TENX0108`, and a map is a valid schema, `TENX0401`); results,
//!   responses, outputs and state are schemas (lowered from types or valid maps, `TENX0401`;
//!   a missing response is the default one); none nests deeper than a sealed schema can
//!   (`TENX0407`). A handoff's `payload` is an object schema by construction (a parameter list,
//!   or none, lowers to one; its defaults fit, `TENX0403`, and it nests within the limit,
//!   `TENX0407`); a handoff is listed once per target (`TENX0203`), so no two payloads compete
//!   for one `tool_name`.
//! - *Sorted lists without repeats* (`tags`, `allowed_tools`, `handoffs`, `approves`,
//!   `approved_by`, `edges`, routes by node): `Artifact::normalize` sorts and dedups them; two
//!   routes from one node are `TENX0312`.
//! - *References* (an agent's model and tools, handoff targets, nodes, input validators,
//!   `approves`/`approved_by`, which mirror each other): names resolve to declarations of the
//!   right kind (`TENX0101`, `TENX0102`), every required field is present (`TENX0106`), providers
//!   are known (`TENX0801`), and `Reachable` lowers everything a lowered declaration names.
//! - *Numbers*: `timeout_ms` is at least 1 (0 becomes the default); `recursion_limit` is at
//!   least 1 (`TENX0702`); no number is infinite (a literal out of range is `TENX0108`); validator
//!   arguments are maps by construction.
//! - *Graphs*: the entry is a node (`TENX0301`, `TENX0302`); `END` is not a node (`TENX0325`)
//!   and no node is listed twice (`TENX0323`); edges and arms name nodes (`TENX0302`) and never
//!   leave `END` (`TENX0314`); a node has at most one plain edge or one route (`TENX0312`); an
//!   edge is a handoff edge only when its agent declares the handoff (`lower/graph.rs`); each
//!   handoff has its declared edge (`TENX0311`: a route arm does not count), once (`TENX0321`),
//!   to another agent node of the graph (`TENX0310`, `TENX0320`); a route has an `else`
//!   (`TENX0307`), last (`TENX0317`), and no label twice (`TENX0324`); every node has a way on
//!   (`TENX0304`, `TENX0316`) and is reachable (`TENX0303`).
//! - *Extra entries and state writes*: each extra entry is a node (`TENX0302`; lowering keeps
//!   only nodes, by construction) other than the entry (`TENX0326`; lowering drops it, by
//!   construction), sorted without repeats (`Artifact::normalize`; a repeat is `TENX0327`). A
//!   `writes` entry's `node` source is a tool node (`TENX0328`), its `tool` source a tool an
//!   agent node of the graph may call (`TENX0333`), its `interrupt` source an interrupt node
//!   (`TENX0335`) and a property its response (or a part of it every answer matches, read by
//!   `tenx_artifact::answer_ways::places` in both) declares (`TENX0336`), each source once (`TENX0332`,
//!   `TENX0339`), and its path
//!   a state field (`TENX0329`, `TENX0337`) then properties declared inside it (`TENX0334`): lowering keeps
//!   only such entries, the first per source (`lower/writes.rs`), so by construction; `writes` is
//!   sorted by `Artifact::normalize`. That the result fits the place written is not an artifact
//!   rule; check proves it (`TENX0330`, `TENX0331`).
//! - *Visit limits and `on_error`*: each names a node (`TENX0302`), once per map (`TENX0351`;
//!   lowering keeps the first, by construction), and leads to a node or `END` (`TENX0302`) other
//!   than itself (`TENX0350`, `TENX0352`); a limit's `max` is 1 to `MAX_VISITS` (`TENX0702`).
//!   Sealing sorts both lists. Their ways are part of the check's topology, so the risk policy
//!   below is proved on them too.
//! - *Forks and reducers* (`check/forks` in the artifact): a fork leaves a node (`TENX0302`)
//!   that has no edge, route or other fork (`TENX0312`); its branches and join are nodes or
//!   `END` (`TENX0302`), at least two distinct branches for a `parallel`, none the fork's node or
//!   its join, and a join other than the fork's node (`TENX0380`); a `map` has exactly one
//!   branch by construction (`node`, required, `TENX0106`) and `over` and `item` that are two
//!   state fields (`TENX0382`, `TENX0383`); `max_concurrency` is 1 to `MAX_WIDTH` (`TENX0702`);
//!   every branch is a region, and a fork inside a branch joins inside it (`TENX0381`),
//!   computed on the same ways as the artifact (`check/graph/forks.rs`). A reducer names a state field (`TENX0391`), once (`TENX0107`;
//!   lowering keeps the first), with an order only for `last` (`TENX0392`), of distinct first
//!   nodes of parallel branches (`TENX0392`). An interrupt-approved tool is never a branch's
//!   first node or a join (`TENX0629`), and the fork's ways are in the check topology, so the
//!   approval proof below holds on them. Sealing sorts both lists.
//! - *Retry policies*: every policy, a tool's `retry` and a graph's `retries`, has `attempts`
//!   2 to 10 (`TENX0707`), waits above zero with `backoff` at most `max_backoff` (`TENX0708`)
//!   and known classes (`TENX0709`; sorted and deduplicated by lowering), written as a map of
//!   known keys (`TENX0706`); `crate::retry::lower` writes only a policy that passes the
//!   artifact's own `RetryPolicy::problems`, so by construction. A graph's `retries` name nodes
//!   (`TENX0302`) once (`TENX0363`; lowering keeps the first) that are not interrupts
//!   (`TENX0360`; lowering drops them). The retry rule, that a retried tool is not `remote`
//!   (`TENX0362`) and has an `idempotency_key` unless it is a `low` risk `http` call with
//!   `GET`, `PUT` or `DELETE` (`TENX0361`), is proved by check for the tool's own policy and at
//!   every tool node with one, on the same `risk_level` and key lowering writes.
//! - *Resume*: `resume` is `entry` or `last_agent` (serde; any other value in source is
//!   `TENX0370`, and lowering writes `entry` for it, by construction). The resume nodes are not
//!   listed: the artifact derives them from its nodes and ways (`Graph::resume_nodes`), so they
//!   cannot disagree with the graph.
//! - *Risk policy*: `high` tools are approved (`TENX0601`), `prohibited` ones are never offered
//!   or run (`TENX0602`), and no path from any entry (`entry`, an extra entry, or with `resume =
//!   last_agent` a reachable agent node with a way to `END`) reaches an interrupt-approved tool
//!   around its approval (`TENX0604`), proved on the same ways (plain edges, handoff edges,
//!   route arms, `on_error` handlers, visit-limit exits) from the same starts; out of an
//!   approving interrupt node, only an approving way leads into a tool it approves
//!   (`TENX0627`): route arms are classified by the artifact's own rule
//!   (`tenx_artifact::answer_ways::AnswerTest`) on the lowered arm, the answer writes lowered
//!   as `lower/writes.rs` does and the decision from the shared `crate::decision::decision_of`,
//!   so check and the loader agree arm by arm (a decision property the response does not
//!   require is `TENX0412`). A `medium`
//!   tool has an approval or an approving interrupt by construction: one with neither gets the
//!   default confirmation (`lower/confirmation.rs`; `TENX0603` only warns).
//! - *Decisions*: no response and the standard library's schemas get their fixed rule (a
//!   `decision` there is `TENX0410`, a look-alike schema `TENX0613`); a custom response has a
//!   `decision` (`TENX0409`) that is a map with a non-empty `field` and `approve`/`edit` strings
//!   or booleans that differ (`TENX0411`), fitting the schema (`TENX0412`–`TENX0414`,
//!   `TENX0616`); `edit` appears only on the approval of a tool with parameters (`TENX0614`),
//!   never on an interrupt (`TENX0615`), judged by the same lowered parameters the artifact
//!   holds (`crate::decision::has_parameters`). `respond` is a string or boolean that differs
//!   from `approve` and `edit` (`TENX0411`; `Written::decision` drops it otherwise, by
//!   construction), only on a tool's approval (`TENX0628`), whose response defines
//!   `tool_result` (`TENX0417`).
//! - *Feedback*: an approval's or interrupt's `feedback` names a property of its response
//!   schema (`TENX0415`) whose schema, local `$ref`s followed, is `"type": "string"`
//!   (`TENX0416`), judged on the same lowered schema with the artifact's own
//!   `answer_ways::property`.
//! - *Approvals* (`check/approvals` in the artifact): a `param` evidence item is a parameter of
//!   the tool and an interrupt has none, and no item is empty (`check/evidence` lowers a name to
//!   `param` only when it is one, so by construction; a name is an identifier, never empty); a
//!   `state` item is a field of every graph that can run the step (`TENX0606`, not re-checked by
//!   the loader); approvers are valid roles and scopes (`TENX0608`, `TENX0609`, through the
//!   artifact's own `is_role`/`is_scope`), at least one (`TENX0610`); `separate_duties` is never
//!   on without approvers (`TENX0612`).
//! - *Output guards*: each of an agent's `output_guards` names a lowered validator (`TENX0101`,
//!   `TENX0102`; `Reachable` lowers the validators guards name) whose builtin, if any, reads
//!   model output (`TENX0705`), with arguments that are a map by construction; `retries` is at
//!   most `MAX_RETRIES` (`TENX0702`; left out, it is `DEFAULT_RETRIES`).
//! - *Agent inputs*: a `last` input's `count` is 1 to `MAX_INPUT_LAST` (`TENX0702`); every other
//!   form has nothing to check (`TENX0210` refuses a value of no form; left out, it is
//!   `conversation`).
//! - *JSON*: every value other than a schema nests at most as deep as the source allows
//!   (`syntax::chunks::MAX_NESTING` brackets, far below what loaders read); keys are unique
//!   (`BTreeMap`s).
//! - *Run bindings*: `http` header names are HTTP tokens (`TENX0117`), none is reserved to the
//!   runtime (`TENX0118`) or set twice case-insensitively (`TENX0119`), and values are one-line
//!   strings without control characters (`TENX0820`); `native` handler names match the name rule
//!   (`TENX0824`); `native_handlers` is exactly the set of the lowered tools' handlers, by
//!   construction (collected from the lowered tools above and sorted by `normalize`).
//! - *Bound arguments* (`check/bound` in the artifact): every bound name is a parameter
//!   (`TENX0617`; `check/bound_args` lowers only entries it accepts, so by construction), once
//!   (`TENX0209`; a `BTreeMap`); a claim name matches the claim rule (`TENX0618`, through the
//!   artifact's own `is_claim_name`); a `state` source is a field of every graph that can run the
//!   tool (`TENX0619`, the same graphs as approval evidence: an agent node whose agent may call
//!   it, itself or through agents it calls as tools at any depth, or a tool node). Types (`TENX0620`) and defaults (`TENX0621`) are proved by check only:
//!   the runtime validates every filled argument against `parameters` anyway.
//! - *Risk rules* (`check/risk_rules` in the artifact): `risk` is exactly the worst case of the
//!   base and the rules (`ToolDecl::risk_level`, which every policy check reads, so by
//!   construction); no rule and no base is `prohibited` (`TENX0624`); every field a condition
//!   reads is a parameter (`TENX0625`; the conditions parse, `TENX0622`, and give a risk level,
//!   `TENX0623`, or are not lowered). That comparisons fit the parameter types (`TENX0626`) is
//!   proved by check only.
//! - *Subgraphs* (`check/subgraphs` in the artifact): a subgraph node's `ref` is a graph
//!   (`TENX0101`, `TENX0102`), never its own or one that leads back to it, directly or through
//!   other graphs (`TENX0384`; subgraphs otherwise nest, with forks and inside branches); every
//!   subgraph node has exactly one entry in
//!   `subgraphs`, sorted by node (`lower/subgraphs` writes one per node, by construction), whose
//!   fields are state fields on the side they name (`TENX0386`); a subgraph node has no retry
//!   policy (`TENX0360`; lowering drops it).
//! - *Agent tools* (`check_agent` and `check/agent_tools` in the artifact): each names a lowered
//!   agent (`TENX0101`; `Reachable` follows `agents` at any depth) without handoffs of its own
//!   (`TENX0211`), and no agent reaches itself through agent tools (`TENX0213`); sorted without repeats (lowering keeps the first, `TENX0212` reports it);
//!   `parameters` is an object schema by construction (a parameter list or `{ input: string }`);
//!   the tool name is an identifier and not one of the caller's tool or handoff names
//!   (`TENX0212`), at most 64 characters (`TENX0207`).

mod agent;
mod agent_tools;
#[cfg(test)]
mod compose_tests;
mod confirmation;
mod decision;
#[cfg(test)]
mod decision_tests;
#[cfg(test)]
mod fork_tests;
mod forks;
mod graph;
#[cfg(test)]
mod guard_tests;
mod interrupt;
mod loops;
mod model;
mod reachable;
mod retries;
pub(crate) mod script;
mod source_map;
mod subgraphs;
#[cfg(test)]
mod tests;
mod tool;
mod validator;
mod writes;

use crate::ast::{Expr, Param, SchemaRef, ToolDecl, TypeExpr};
use crate::check::Facts;
use crate::resolve::{Located, Program};
use serde_json::Value;
use std::cell::RefCell;
use tenx_artifact::Artifact;
use tenx_diagnostics::{FileId, Span};

pub use agent::HANDOFF_PREFIX;
pub use confirmation::CONFIRMATION_REASON;
pub(crate) use forks::reduction;
pub use graph::{DEFAULT_RECURSION_LIMIT, lower_condition};
pub use interrupt::DEFAULT_INTERRUPT_REASON;
pub use reachable::Reachable;
use source_map::SourceMapper;
pub use tool::{DEFAULT_APPROVAL_REASON, DEFAULT_HTTP_TIMEOUT_MS, DEFAULT_RESPONSE_SCHEMA};

/// The compiler name written into every artifact: `tenxc` and the workspace version.
pub const COMPILER: &str = concat!("tenxc ", env!("CARGO_PKG_VERSION"));

/// Lowers a program that checked without errors into an (unsealed) artifact.
pub fn lower(facts: &Facts<'_>) -> Artifact {
    let reachable = Reachable::compute(facts);
    let lowerer = Lowerer {
        facts,
        program: facts.program,
        reachable: &reachable,
        sources: SourceMapper::new(facts.sources, facts.program.root),
        schemas: RefCell::new(crate::schema::Lowerer::new(facts.program)),
    };
    let mut artifact = Artifact::new(COMPILER);
    lowerer.graphs(&mut artifact);
    lowerer.agents(&mut artifact);
    lowerer.tools(&mut artifact);
    lowerer.models(&mut artifact);
    lowerer.validators(&mut artifact);
    lowerer.interrupts(&mut artifact);
    // Every handler a lowered `native` tool runs, so the list matches the tools by construction.
    artifact.native_handlers = artifact
        .tools
        .values()
        .filter_map(|tool| match &tool.run {
            tenx_artifact::Run::Native { name } => Some(name.clone()),
            _ => None,
        })
        .collect();
    // Sorted now, as `seal` would sort them, so an unsealed artifact (`tenxc graph` of a `.tenx`
    // file) reads exactly like the sealed one.
    artifact.normalize();
    artifact
}

/// Shared state of one lowering.
struct Lowerer<'a, 'p> {
    facts: &'a Facts<'p>,
    program: &'p Program,
    reachable: &'a Reachable,
    sources: SourceMapper<'a>,
    /// Lowers types and schemas, lowering each named schema once. Its diagnostics are dropped:
    /// the check stage already reported them.
    schemas: RefCell<crate::schema::Lowerer<'p>>,
}

impl Lowerer<'_, '_> {
    /// Records where `key` (`tool.issue_refund`, …) was declared.
    fn locate(&self, artifact: &mut Artifact, key: String, file: FileId, span: Span) {
        if let Some(location) = self.sources.location(file, span) {
            artifact.source_map.insert(key, location);
        }
    }

    /// The JSON Schema a schema reference in `file` stands for: a declared schema (inlined) or
    /// the inline map.
    fn schema_ref(&self, file: FileId, schema: &SchemaRef) -> Option<Value> {
        let lowered = self
            .schemas
            .borrow_mut()
            .lower_schema_ref(file, schema, &mut Vec::new());
        lowered.map(|l| l.value)
    }

    /// The JSON Schema of a parameter list (graph state), declared in `file`.
    fn params_schema(&self, file: FileId, params: &[Param]) -> Value {
        self.schemas
            .borrow_mut()
            .lower_params(file, params, &mut Vec::new())
            .value
    }

    /// The JSON Schema of a type (`-> RESULT`), declared in `file`; `{}` when it names nothing.
    fn type_schema(&self, file: FileId, ty: &TypeExpr) -> Value {
        let lowered = self.schemas.borrow_mut().lower_type(file, ty, &mut Vec::new());
        lowered.map_or_else(|| Value::Object(serde_json::Map::new()), |l| l.value)
    }

    /// The JSON Schema of a tool's arguments: its parameter list or its `parameters` schema.
    fn tool_parameters(&self, tool: &Located<ToolDecl>) -> Value {
        self.schemas
            .borrow_mut()
            .lower_tool_parameters(tool, &mut Vec::new())
            .value
    }
}

/// The text of a string or text block, as the syntax stage decoded it (`\{`, `\}` and `\$` stay
/// escaped: templates keep them for the runtime).
fn text(expr: &Expr) -> Option<String> {
    expr.as_str().map(str::to_string)
}
