//! The environment an artifact needs, resolved once when it is loaded: every `${NAME}` of every
//! `http` tool's URL and header values, and the `api_key_env` of every model that calls a
//! provider. Every missing name is reported together, sorted, before anything runs; the values
//! are held in an [`Environment`] whose `Debug` never prints them.
//!
//! The artifact holds only what its graphs use (the compiler leaves out what no graph reaches),
//! so resolving every tool and model of the artifact is resolving what the served graphs need.
//! A variable that is set but empty counts as missing: an empty credential or URL is never what
//! was meant, and failing at load says so before a call fails.

use std::collections::BTreeMap;

use tenx_artifact::{Artifact, Model, Provider, Run};
use tenx_tools::env_template::{self, TemplateError};

/// The resolved values, by variable name. `Debug` shows the names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Environment {
    values: BTreeMap<String, String>,
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Environment")
            .field("variables", &self.values.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Environment {
    /// The value of `name`, if the artifact needs it (only needed names are held).
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// The API key of `model` (its `api_key_env`'s value), if it has one.
    pub fn api_key(&self, model: &Model) -> Option<&str> {
        model.api_key_env.as_deref().and_then(|name| self.value(name))
    }

    /// The names held, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }
}

impl tenx_tools::Variables for Environment {
    fn variable(&self, name: &str) -> Option<&str> {
        self.value(name)
    }
}

/// The artifact needs variables the environment does not hold (or it has a malformed `${`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingVariables {
    /// Each missing name, sorted, with the places that need it (`` tool `pay` URL ``,
    /// `` model `claude` api_key ``), in artifact order.
    pub missing: BTreeMap<String, Vec<String>>,
    /// Places whose template has a `${` that is not a `${NAME}` reference (the compiler refuses
    /// these, so only a hand-made artifact has one).
    pub malformed: Vec<String>,
}

impl MissingVariables {
    /// The missing names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.missing.keys().map(String::as_str).collect()
    }
}

impl std::fmt::Display for MissingVariables {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if !self.missing.is_empty() {
            let names: Vec<String> = self
                .missing
                .iter()
                .map(|(name, places)| format!("{name} ({})", places.join(", ")))
                .collect();
            parts.push(format!("environment variables not set: {}", names.join(", ")));
        }
        if !self.malformed.is_empty() {
            parts.push(format!(
                "a `${{` that is not a `${{NAME}}` reference in: {}",
                self.malformed.join(", ")
            ));
        }
        formatter.write_str(&parts.join("; "))
    }
}

impl std::error::Error for MissingVariables {}

/// Every variable `artifact` needs, with the places that need it, or the malformed places.
fn needed(artifact: &Artifact) -> (BTreeMap<String, Vec<String>>, Vec<String>) {
    let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut malformed = Vec::new();
    let mut scan = |text: &str, place: String| match env_template::variable_names(text) {
        Ok(found) => {
            for name in found {
                let places = names.entry(name.to_string()).or_default();
                if !places.contains(&place) {
                    places.push(place.clone());
                }
            }
        }
        Err(TemplateError::Malformed { .. } | TemplateError::Missing { .. }) => malformed.push(place),
    };
    for (tool, declaration) in &artifact.tools {
        if let Run::Http { url, headers, .. } = &declaration.run {
            scan(url, format!("tool `{tool}` URL"));
            for (header, value) in headers {
                scan(value, format!("tool `{tool}` header `{header}`"));
            }
        }
    }
    for (name, model) in &artifact.models {
        if let (Some(variable), false) = (&model.api_key_env, model.provider == Provider::Scripted) {
            names
                .entry(variable.clone())
                .or_default()
                .push(format!("model `{name}` api_key"));
        }
    }
    (names, malformed)
}

/// Resolves every variable `artifact` needs through `lookup` (the process environment, or a map
/// in tests). Fails with **all** missing names (and malformed templates) at once.
pub fn resolve(artifact: &Artifact, lookup: impl Fn(&str) -> Option<String>) -> Result<Environment, MissingVariables> {
    let (needed, malformed) = needed(artifact);
    let mut values = BTreeMap::new();
    let mut missing = BTreeMap::new();
    for (name, places) in needed {
        match lookup(&name).filter(|value| !value.is_empty()) {
            Some(value) => {
                values.insert(name, value);
            }
            None => {
                missing.insert(name, places);
            }
        }
    }
    if missing.is_empty() && malformed.is_empty() {
        Ok(Environment { values })
    } else {
        Err(MissingVariables { missing, malformed })
    }
}

/// [`resolve`] from the process environment (a value that is not UTF-8 counts as missing).
pub fn resolve_from_process(artifact: &Artifact) -> Result<Environment, MissingVariables> {
    resolve(artifact, |name| std::env::var(name).ok())
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tenx_artifact::{HttpMethod, Risk, Schema, Tool};
    use tenx_tools::Variables;

    use super::*;

    const SECRET: &str = "sk-live-0123456789abcdef";

    fn http_tool(url: &str, headers: &[(&str, &str)]) -> Tool {
        Tool {
            name: "t".into(),
            description: "A tool.".into(),
            parameters: Schema::from_value(&json!({"type": "object"})),
            result: None,
            risk: Risk::Low,
            tags: Vec::new(),
            approval: None,
            approved_by: Vec::new(),
            idempotency_key: None,
            run: Run::Http {
                method: HttpMethod::Post,
                url: url.into(),
                timeout_ms: 1_000,
                headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            },
            bindings: BTreeMap::new(),
            risk_rules: None,
            retry: None,
        }
    }

    fn model(provider: Provider, key: Option<&str>) -> Model {
        Model {
            provider,
            name: Some("m".into()),
            base_url: None,
            api_key_env: key.map(str::to_string),
            params: json!({}),
            script: None,
        }
    }

    fn artifact() -> Artifact {
        let mut artifact = Artifact::new("tenxc test");
        artifact.tools.insert(
            "pay".into(),
            http_tool(
                "${PAY_URL}/pay?v=\\${NOT_A_VAR}",
                &[("Authorization", "Bearer ${PAY_TOKEN}")],
            ),
        );
        artifact.tools.insert(
            "docs".into(),
            http_tool("${DOCS_URL}/search", &[("X-Key", "${PAY_TOKEN}")]),
        );
        artifact.tools.insert(
            "now".into(),
            Tool {
                run: Run::Builtin {
                    name: "current_time".into(),
                },
                ..http_tool("", &[])
            },
        );
        artifact
            .models
            .insert("claude".into(), model(Provider::Anthropic, Some("ANTHROPIC_API_KEY")));
        artifact.models.insert("local".into(), model(Provider::Openai, None));
        artifact
            .models
            .insert("demo".into(), model(Provider::Scripted, Some("IGNORED_FOR_SCRIPTED")));
        artifact
    }

    fn lookup(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn every_needed_variable_is_resolved() {
        let environment = resolve(
            &artifact(),
            lookup(&[
                ("PAY_URL", "https://pay.test"),
                ("PAY_TOKEN", SECRET),
                ("DOCS_URL", "https://docs.test"),
                ("ANTHROPIC_API_KEY", "ak"),
                ("UNRELATED", "x"),
            ]),
        )
        .unwrap();
        assert_eq!(
            environment.names().collect::<Vec<_>>(),
            vec!["ANTHROPIC_API_KEY", "DOCS_URL", "PAY_TOKEN", "PAY_URL"]
        );
        assert_eq!(environment.value("PAY_TOKEN"), Some(SECRET));
        assert_eq!(environment.variable("PAY_URL"), Some("https://pay.test"));
        assert_eq!(environment.value("UNRELATED"), None);
        assert_eq!(environment.api_key(&artifact().models["claude"]), Some("ak"));
        assert_eq!(environment.api_key(&artifact().models["local"]), None);
        let debug = format!("{environment:?}");
        assert!(!debug.contains(SECRET) && !debug.contains("pay.test"), "{debug}");
        assert_eq!(
            debug,
            r#"Environment { variables: ["ANTHROPIC_API_KEY", "DOCS_URL", "PAY_TOKEN", "PAY_URL"], .. }"#
        );
    }

    #[test]
    fn every_missing_name_is_reported_together_and_sorted() {
        let error = resolve(
            &artifact(),
            lookup(&[("PAY_URL", "https://pay.test"), ("DOCS_URL", "")]),
        )
        .unwrap_err();
        assert_eq!(error.names(), vec!["ANTHROPIC_API_KEY", "DOCS_URL", "PAY_TOKEN"]);
        assert!(error.malformed.is_empty());
        assert_eq!(
            error.to_string(),
            "environment variables not set: ANTHROPIC_API_KEY (model `claude` api_key), DOCS_URL (tool `docs` URL), \
             PAY_TOKEN (tool `docs` header `X-Key`, tool `pay` header `Authorization`)"
        );
        let error = resolve(&artifact(), |_| None).unwrap_err();
        assert_eq!(
            error.names(),
            vec!["ANTHROPIC_API_KEY", "DOCS_URL", "PAY_TOKEN", "PAY_URL"]
        );
    }

    #[test]
    fn a_malformed_reference_fails_closed() {
        let mut artifact = Artifact::new("tenxc test");
        artifact
            .tools
            .insert("bad".into(), http_tool("https://x.test/${", &[("A", "${B C}")]));
        let error = resolve(&artifact, |_| Some("v".into())).unwrap_err();
        assert!(error.missing.is_empty());
        assert_eq!(error.malformed, vec!["tool `bad` URL", "tool `bad` header `A`"]);
        assert_eq!(
            error.to_string(),
            "a `${` that is not a `${NAME}` reference in: tool `bad` URL, tool `bad` header `A`"
        );
    }

    #[test]
    fn an_artifact_without_references_needs_nothing() {
        let environment = resolve(&Artifact::new("tenxc test"), |_| None).unwrap();
        assert_eq!(environment.names().count(), 0);
        assert_eq!(environment, Environment::default());
    }
}
