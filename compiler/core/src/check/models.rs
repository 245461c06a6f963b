//! Models and secrets: every provider is known (`TENX0801`), every credential is an
//! `env("NAME")` reference (`TENX0802`), `turns` appear only on scripted models (`TENX0804`), a
//! scripted model's rules and turns are well formed (`TENX0805`–`TENX0810`, `TENX0814`, see
//! [`script`]) and call tools its agents see with fitting arguments (`TENX0811`–`TENX0813`, see
//! [`script_tools`]), and no string literal in the program's own files looks like a secret
//! (`TENX0803`, see [`secrets`]).

mod script;
mod script_tools;
mod secrets;

pub(super) use secrets::string_literals;

use super::Facts;
use crate::ast::{Expr, ExprKind, ModelDecl};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// The providers tenx knows.
const PROVIDERS: &[&str] = &["openai", "anthropic", "scripted"];

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    // Literals already reported as credentials, so the secret scan does not repeat them.
    let mut credentials: Vec<(FileId, Span)> = Vec::new();
    for model in &facts.program.models {
        let (file, decl) = (model.file, &model.decl);
        let provider = decl.provider.as_ref().map(|p| p.name.as_str());
        if let Some(ident) = &decl.provider
            && !PROVIDERS.contains(&ident.name.as_str())
        {
            let help = crate::suggest::did_you_mean(&ident.name, PROVIDERS.iter())
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| {
                    "the providers are `openai` (and any OpenAI-compatible server, with `base_url`), `anthropic` and `scripted`".to_string()
                });
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0801,
                    format!("unknown provider `{}`", ident.name),
                    file,
                    ident.span,
                )
                .label("not a provider tenx knows")
                .help(help),
            );
        }
        if let Some(key) = &decl.api_key
            && let Some(problem) = credential_problem(key)
        {
            credentials.push((file, key.span));
            // A bare name shaped like a variable (`api_key = OPENAI_API_KEY`) was meant as one.
            let variable = key
                .as_ident()
                .map(|i| i.name.as_str())
                .filter(|n| is_env_name(n))
                .unwrap_or(env_name_for(provider));
            let mut d = Diagnostic::new(
                Code::TENX0802,
                format!("the `api_key` of model `{}` {problem}", decl.name.name),
                file,
                key.span,
            )
            .label("credentials must come from the environment")
            .help(format!(
                "write `api_key = env(\"{variable}\")` and set the variable where the runtime runs"
            ));
            if key.as_str().is_some() {
                d = d.note(
                    "a key written in the program ends up in version control and in the built artifact; if this one is real, rotate it",
                );
            }
            diagnostics.push(d);
        }
        check_turns(file, decl, provider, diagnostics);
        let known = provider.is_some_and(|p| PROVIDERS.contains(&p));
        let played = script::check(file, decl, provider, known, diagnostics);
        script_tools::check(facts, model, &played, diagnostics);
    }
    secrets::check(facts, &credentials, diagnostics);
}

/// What is wrong with an `api_key` value, or `None` when it is `env("NAME")`. Never includes the
/// value: it may be a real secret.
fn credential_problem(key: &Expr) -> Option<&'static str> {
    match &key.kind {
        ExprKind::Str(_) | ExprKind::Text(_) => Some("is written as a literal string"),
        ExprKind::Call { callee, args } if callee.len() == 1 && callee.first().is_some_and(|c| c.name == "env") => {
            let name = match args.as_slice() {
                [arg] if arg.name.is_none() => arg.value.as_str(),
                _ => None,
            };
            match name {
                Some(name) if is_env_name(name) => None,
                Some(_) => Some("names an invalid environment variable; use capitals, digits and `_`"),
                None => Some("must be `env(\"NAME\")` with one variable name"),
            }
        }
        _ => Some("must be an `env(\"NAME\")` reference"),
    }
}

/// Whether `name` is `[A-Z_][A-Z0-9_]*`.
fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The usual variable name for a provider's key.
fn env_name_for(provider: Option<&str>) -> &'static str {
    match provider {
        Some("anthropic") => "ANTHROPIC_API_KEY",
        _ => "OPENAI_API_KEY",
    }
}

/// `turns` belong to scripted models only.
fn check_turns(file: FileId, decl: &ModelDecl, provider: Option<&str>, diagnostics: &mut Vec<Diagnostic>) {
    let Some(turns) = &decl.turns else { return };
    let Some(provider) = provider.filter(|p| *p != "scripted" && PROVIDERS.contains(p)) else {
        return;
    };
    diagnostics.push(
        Diagnostic::new(
            Code::TENX0804,
            format!(
                "model `{}` has `turns`, but only `scripted` models play turns",
                decl.name.name
            ),
            file,
            turns.span,
        )
        .label(format!("an `{provider}` model answers for itself"))
        .help("remove `turns`, or set `provider = scripted` to replay these answers"),
    );
}
