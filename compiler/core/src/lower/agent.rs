//! Lowering of agents: model, prompt, the exact tools the model may call (tags and names already
//! resolved by the check stage's facts) and the handoffs with their generated tool names and
//! payload schemas (an object schema, empty for a handoff without a payload), and what the model
//! sees of the conversation (`input`).

use super::Lowerer;
use crate::ast;
use tenx_artifact::{Agent, AgentInput, Artifact, DEFAULT_RETRIES, Handoff, Schema};

/// The prefix of the generated tool a handoff gives its agent: `transfer_to_billing`.
pub const HANDOFF_PREFIX: &str = "transfer_to_";

impl Lowerer<'_, '_> {
    pub(super) fn agents(&self, artifact: &mut Artifact) {
        for &a in &self.reachable.agents {
            let Some(located) = self.program.agents.get(a) else {
                continue;
            };
            let decl = &located.decl;
            let Some(model) = &decl.model else { continue };
            let allowed_tools = self
                .facts
                .visible_tools
                .get(a)
                .into_iter()
                .flatten()
                .filter_map(|&t| self.program.tools.get(t))
                .map(|tool| tool.decl.name.name.clone())
                .collect();
            let handoffs = decl
                .handoffs
                .iter()
                .map(|target| Handoff {
                    tool_name: format!("{HANDOFF_PREFIX}{}", target.name),
                    target: target.name.clone(),
                    payload: Schema::from(
                        self.params_schema(located.file, decl.payload(&target.name).unwrap_or_default()),
                    ),
                })
                .collect();
            let agent = Agent {
                model: model.name.clone(),
                prompt: decl.prompt.as_ref().and_then(super::text).unwrap_or_default(),
                allowed_tools,
                handoffs,
                output_schema: decl
                    .output
                    .as_ref()
                    .and_then(|schema| self.schema_ref(located.file, schema))
                    .map(Schema::from),
                output_guards: self.validator_uses(&decl.guard),
                retries: decl.retries.map_or(DEFAULT_RETRIES, |(n, _)| n),
                agent_tools: self.agent_tools(located.file, decl),
                input: decl.input.as_ref().map_or(AgentInput::Conversation, input),
            };
            let name = &decl.name.name;
            self.locate(artifact, format!("agent.{name}"), located.file, decl.name.span);
            artifact.agents.insert(name.clone(), agent);
        }
    }
}

/// An `input` as the artifact holds it. A count out of range is refused by the check stage
/// (`TENX0702`) before lowering; were one lowered, a negative count would become 0, which the
/// artifact's own check refuses like any count out of range.
fn input(written: &ast::AgentInput) -> AgentInput {
    match written {
        ast::AgentInput::Conversation(_) => AgentInput::Conversation,
        ast::AgentInput::None(_) => AgentInput::None,
        ast::AgentInput::Last { count, .. } => AgentInput::Last {
            count: u64::try_from(*count).unwrap_or(0),
        },
        ast::AgentInput::Template(expr) => AgentInput::Template {
            template: super::text(expr).unwrap_or_default(),
        },
    }
}
