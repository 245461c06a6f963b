//! Lowering of models: provider, model name, base URL, parameters, the script of a scripted model, and the
//! *name* of the environment variable that holds the API key (never a value).

use super::Lowerer;
use crate::ast::{Expr, ExprKind};
use serde_json::Value;
use tenx_artifact::{Artifact, Model, Provider};

impl Lowerer<'_, '_> {
    pub(super) fn models(&self, artifact: &mut Artifact) {
        for &m in &self.reachable.models {
            let Some(located) = self.program.models.get(m) else {
                continue;
            };
            let decl = &located.decl;
            let provider = match decl.provider.as_ref().map(|p| p.name.as_str()) {
                Some("openai") => Provider::Openai,
                Some("anthropic") => Provider::Anthropic,
                Some("scripted") => Provider::Scripted,
                _ => continue,
            };
            let script = match provider {
                Provider::Scripted => Some(super::script::script(decl)),
                Provider::Openai | Provider::Anthropic => None,
            };
            let model = Model {
                provider,
                name: decl.model_name.as_ref().and_then(super::text),
                base_url: decl.base_url.as_ref().and_then(super::text),
                api_key_env: decl.api_key.as_ref().and_then(env_name),
                params: decl
                    .params
                    .as_ref()
                    .and_then(Expr::to_json)
                    .filter(Value::is_object)
                    .unwrap_or_else(|| Value::Object(serde_json::Map::new())),
                script,
            };
            let name = &decl.name.name;
            self.locate(artifact, format!("model.{name}"), located.file, decl.name.span);
            artifact.models.insert(name.clone(), model);
        }
    }
}

/// `NAME` of `env("NAME")`. Anything else was refused by the check stage (`TENX0802`) and is
/// never copied into the artifact.
fn env_name(expr: &Expr) -> Option<String> {
    let ExprKind::Call { callee, args } = &expr.kind else {
        return None;
    };
    if callee.len() != 1 || callee.first().is_none_or(|c| c.name != "env") {
        return None;
    }
    match args.as_slice() {
        [arg] if arg.name.is_none() => arg.value.as_str().map(str::to_string),
        _ => None,
    }
}
