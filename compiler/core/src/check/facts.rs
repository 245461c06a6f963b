//! Facts every check needs, computed once: which tools each agent can see (by name and by
//! tag), which agents see each tool, which agents each agent reaches through agent tools, and
//! which declarations graphs use as nodes.

use super::agent_tools::AgentCalls;
use super::topology::Topology;
use crate::ast::ToolSelector;
use crate::ids::IdVec;
use crate::resolve::{AgentId, DeclKind, DeclRef, GraphId, Program, ToolId};
use std::collections::BTreeSet;
use tenx_diagnostics::SourceSet;

/// Shared facts about a program.
#[derive(Debug)]
pub struct Facts<'p> {
    /// The program.
    pub program: &'p Program,
    /// The source files (for checks that read raw text, such as templates).
    pub sources: &'p SourceSet,
    /// For each agent, the tools it can see, sorted.
    pub visible_tools: IdVec<AgentId, Vec<ToolId>>,
    /// For each tool, the agents that can see it, sorted.
    pub seen_by: IdVec<ToolId, Vec<AgentId>>,
    /// Declarations used as nodes by some graph.
    pub used_as_node: BTreeSet<DeclRef>,
    /// For each graph, its nodes and transitions by id.
    pub topologies: IdVec<GraphId, Topology>,
    /// For each agent, the agents it reaches through agent tools, at any depth.
    pub(crate) agent_calls: AgentCalls<'p>,
}

impl<'p> Facts<'p> {
    /// The program's own files: the root and every file that declares something, without the
    /// standard library's modules and other programs checked in the same run. Checks that scan
    /// raw text (secrets, environment references) read these and nothing else.
    pub fn own_files(&self) -> BTreeSet<tenx_diagnostics::FileId> {
        let program = self.program;
        let mut files = BTreeSet::from([program.root]);
        files.extend(program.tags.iter().filter(|d| !d.stdlib).map(|d| d.file));
        files.extend(program.schemas.iter().filter(|d| !d.stdlib).map(|d| d.file));
        files.extend(program.models.iter().filter(|d| !d.stdlib).map(|d| d.file));
        files.extend(program.tools.iter().filter(|d| !d.stdlib).map(|d| d.file));
        files.extend(program.agents.iter().filter(|d| !d.stdlib).map(|d| d.file));
        files.extend(program.validators.iter().filter(|d| !d.stdlib).map(|d| d.file));
        files.extend(program.interrupts.iter().filter(|d| !d.stdlib).map(|d| d.file));
        files.extend(program.graphs.iter().filter(|d| !d.stdlib).map(|d| d.file));
        files
    }

    /// Computes the facts.
    pub fn new(program: &'p Program, sources: &'p SourceSet) -> Self {
        let mut visible_tools = IdVec::new();
        let mut seen_by = IdVec::filled(Vec::new(), program.tools.len());
        // tag name → tools carrying it
        let mut by_tag: std::collections::BTreeMap<&str, Vec<ToolId>> = Default::default();
        for (i, tool) in program.tools.iter_enumerated() {
            for tag in &tool.decl.tags {
                by_tag.entry(tag.name.as_str()).or_default().push(i);
            }
        }
        for (a, agent) in program.agents.iter_enumerated() {
            let mut tools = BTreeSet::new();
            for selector in &agent.decl.tools {
                match selector {
                    ToolSelector::Named(name) => {
                        if let Some(tool) = program
                            .lookup_as(&name.name, &[DeclKind::Tool])
                            .and_then(|s| s.decl.tool())
                        {
                            tools.insert(tool);
                        }
                    }
                    ToolSelector::Tagged { tags, .. } => {
                        for tag in tags {
                            tools.extend(by_tag.get(tag.name.as_str()).into_iter().flatten().copied());
                        }
                    }
                }
            }
            for &t in &tools {
                if let Some(list) = seen_by.get_mut(t) {
                    list.push(a);
                }
            }
            visible_tools.push(tools.into_iter().collect());
        }
        let mut used_as_node = BTreeSet::new();
        for graph in &program.graphs {
            for node in &graph.decl.nodes {
                if let Some(symbol) =
                    program.lookup_as(&node.name, &[DeclKind::Agent, DeclKind::Tool, DeclKind::Interrupt])
                {
                    used_as_node.insert(symbol.decl);
                }
            }
        }
        let topologies = program.graphs.map(|g| Topology::build(program, g.file, &g.decl));
        Facts {
            program,
            sources,
            visible_tools,
            seen_by,
            used_as_node,
            topologies,
            agent_calls: AgentCalls::new(program),
        }
    }

    /// The tools carrying `tag`.
    pub fn tools_tagged(&self, tag: &str) -> impl Iterator<Item = ToolId> + '_ {
        let tag = tag.to_string();
        self.program
            .tools
            .iter_enumerated()
            .filter(move |(_, t)| t.decl.tags.iter().any(|g| g.name == tag))
            .map(|(i, _)| i)
    }
}
