//! Lowering of agents: model, prompt, the exact tools the model may call (tags and names already
//! resolved by the check stage's facts) and the handoffs with their generated tool names and
//! payload schemas (an object schema, empty for a handoff without a payload).

use super::Lowerer;
use tenx_artifact::{Agent, Artifact, DEFAULT_RETRIES, Handoff, Schema};

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
            };
            let name = &decl.name.name;
            self.locate(artifact, format!("agent.{name}"), located.file, decl.name.span);
            artifact.agents.insert(name.clone(), agent);
        }
    }
}
