//! Lowering of validators: a standard library validator (with parameters and
//! `run = builtin(name)`) becomes a `builtin` with its declared defaults as `args`; a validator
//! declared in the program becomes a `declared` one with its patterns, keywords and length.
//! The arguments of each use, merged over the defaults, are written in the graph's
//! `input_validators` (see [`super::graph`]).

use super::Lowerer;
use crate::ast::{Expr, ValidatorDecl};
use serde_json::{Map, Value};
use tenx_artifact::{Artifact, Validator};

impl Lowerer<'_, '_> {
    pub(super) fn validators(&self, artifact: &mut Artifact) {
        for &v in &self.reachable.validators {
            let Some(located) = self.program.validators.get(v) else {
                continue;
            };
            let decl = &located.decl;
            let validator = match &decl.builtin {
                Some(builtin) => Validator::Builtin {
                    name: builtin.name.clone(),
                    args: Value::Object(defaults(decl)),
                },
                None => Validator::Declared {
                    deny_patterns: decl.deny_patterns.iter().filter_map(super::text).collect(),
                    deny_keywords: decl.deny_keywords.iter().filter_map(super::text).collect(),
                    max_length: decl
                        .max_length
                        .as_ref()
                        .and_then(Expr::as_i64)
                        .and_then(|n| u64::try_from(n).ok()),
                },
            };
            let name = &decl.name.name;
            self.locate(artifact, format!("validator.{name}"), located.file, decl.name.span);
            artifact.validators.insert(name.clone(), validator);
        }
    }
}

/// The declared defaults of a validator's parameters, by name (parameters without a default
/// are left out).
pub(super) fn defaults(decl: &ValidatorDecl) -> Map<String, Value> {
    decl.params
        .iter()
        .flatten()
        .filter_map(|param| Some((param.name.name.clone(), param.default.as_ref()?.to_json()?)))
        .collect()
}
