//! The reviewer's note: `feedback = "note"` on a tool's `approval` or an interrupt names the
//! property of the answer whose text goes back with `on_reject` (to the model as the rejected
//! call's result, or as the final message of a run the rejection ends). It must be a property the
//! response schema defines (`TENX0415`) and a string (`TENX0416`); named schemas and local
//! `$ref`s are followed, as for a `decision`.

use super::Facts;
use crate::ast::{Expr, SchemaRef};
use crate::schema::Lowerer;
use serde_json::Value;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// Where a note is read: a tool's approval or an interrupt.
struct Site<'a> {
    file: FileId,
    /// `the approval of tool `x`` or `interrupt `x``.
    what: String,
    response: Option<&'a SchemaRef>,
    feedback: &'a Expr,
    /// The `approval` keyword or the interrupt's name.
    span: Span,
}

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    let mut lowerer = Lowerer::new(program);
    let mut sites = Vec::new();
    for tool in &program.tools {
        let Some(approval) = &tool.decl.approval else { continue };
        let Some(feedback) = &approval.feedback else { continue };
        sites.push(Site {
            file: tool.file,
            what: format!("the approval of tool `{}`", tool.decl.name.name),
            response: approval.response.as_ref(),
            feedback,
            span: approval.span,
        });
    }
    for interrupt in &program.interrupts {
        let Some(feedback) = &interrupt.decl.feedback else {
            continue;
        };
        sites.push(Site {
            file: interrupt.file,
            what: format!("interrupt `{}`", interrupt.decl.name.name),
            response: interrupt.decl.response.as_ref(),
            feedback,
            span: interrupt.decl.name.span,
        });
    }
    for site in sites {
        check_site(&mut lowerer, &site, diagnostics);
    }
}

fn check_site(lowerer: &mut Lowerer<'_>, site: &Site<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let Some(name) = site.feedback.as_str() else { return };
    let Some(response) = site.response else {
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0415,
                format!("`feedback` names `{name}`, but {} has no `response` to read it from", site.what),
                site.file,
                site.feedback.span,
            )
            .label("no response property of this name")
            .secondary(site.file, site.span, "the answer is a plain yes or no, `{\"approved\": true|false}`")
            .help(format!(
                "declare a `response` with a string property `{name}`, such as `std.approval.approve_edit_reject` and `feedback = \"comment\"`"
            )),
        );
        return;
    };
    let Some(lowered) = lowerer.lower_schema_ref(site.file, response, &mut Vec::new()) else {
        return; // an unknown schema is reported by name resolution
    };
    let root = &lowered.value;
    let Some(property) = tenx_artifact::answer_ways::property(root, name) else {
        let strings: Vec<&str> = root
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(key, _)| is_string(root, key))
            .map(|(key, _)| key.as_str())
            .collect();
        let help = match crate::suggest::did_you_mean(name, &strings) {
            Some(near) => format!("did you mean `{near}`?"),
            None if strings.is_empty() => {
                format!("add a string property `{name}` to the response schema, where the reviewer writes why")
            }
            None => format!(
                "its string properties: {}",
                strings.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
            ),
        };
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0415,
                format!(
                    "`feedback` names `{name}`, which the response of {} does not define",
                    site.what
                ),
                site.file,
                site.feedback.span,
            )
            .label("no such property")
            .secondary(site.file, response.span(), "the response schema")
            .help(help),
        );
        return;
    };
    if property.get("type").and_then(Value::as_str) != Some("string") {
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0416,
                format!(
                    "`feedback` names `{name}`, which is not a string in the response of {}",
                    site.what
                ),
                site.file,
                site.feedback.span,
            )
            .label("the reviewer's note must be text")
            .secondary(site.file, response.span(), "the response schema")
            .help(format!(
                "give `{name}` `\"type\": \"string\"`, or name the property where the reviewer writes why"
            )),
        );
    }
}

/// Whether the property `name` of `root` is a string.
fn is_string(root: &Value, name: &str) -> bool {
    tenx_artifact::answer_ways::property(root, name)
        .and_then(|p| p.get("type"))
        .and_then(Value::as_str)
        == Some("string")
}
