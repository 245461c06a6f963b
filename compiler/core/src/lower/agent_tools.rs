//! Lowering of an agent's `agents = [...]` to [`AgentTool`]s: the tool is named after the agent
//! it calls, its parameters are the parameter list written with it (an object schema), or one
//! `input` string when none is written, and its description is the called agent's
//! `description`, else "Ask the agent `NAME`.".

use super::Lowerer;
use crate::ast::AgentDecl;
use serde_json::{Value, json};
use tenx_artifact::{AgentTool, Schema};
use tenx_diagnostics::FileId;

/// The parameter a call of an agent tool written without a parameter list takes.
pub const DEFAULT_INPUT: &str = "input";

impl Lowerer<'_, '_> {
    /// The agent tools of `decl`, declared in `file`, sorted by tool name (first use wins).
    pub(super) fn agent_tools(&self, file: FileId, decl: &AgentDecl) -> Vec<AgentTool> {
        let mut out: Vec<AgentTool> = Vec::with_capacity(decl.agent_tools.len());
        for used in &decl.agent_tools {
            let name = &used.agent.name;
            if out.iter().any(|t| &t.tool_name == name) {
                continue;
            }
            let Some(inner) = self.program.agent(name) else {
                continue;
            };
            let parameters = match &used.params {
                Some(params) => self.params_schema(file, params),
                None => default_parameters(name),
            };
            let description = inner
                .decl
                .description
                .as_ref()
                .and_then(super::text)
                .unwrap_or_else(|| default_description(name));
            out.push(AgentTool {
                tool_name: name.clone(),
                agent: name.clone(),
                description,
                parameters: Schema::from(parameters),
            });
        }
        out.sort();
        out
    }
}

/// What a calling model is told an agent tool does when the agent has no `description`.
pub fn default_description(agent: &str) -> String {
    format!("Ask the agent `{agent}`.")
}

/// `{ input: string }`: the parameters of an agent tool written without a parameter list, so
/// the model always has one string to pass.
fn default_parameters(agent: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            DEFAULT_INPUT: {
                "type": "string",
                "description": format!("What to ask the agent `{agent}`"),
            }
        },
        "required": [DEFAULT_INPUT],
        "additionalProperties": false,
    })
}
