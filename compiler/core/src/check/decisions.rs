//! Decisions: how the runtime reads a person's answer as approve, edit or reject.
//!
//! No `response` and the standard library's `yes_no` and `approve_edit_reject` (recognised by
//! their declaration in `std.approval`, never by name) have a fixed meaning, so a `decision`
//! there is an error (`TENX0410`). Any other response must say how it is read,
//! `decision = { field: "verdict", approve: "ship", edit: "amend" }` (`TENX0409`), and that rule
//! must fit the response schema ([`fit`]: `TENX0411`–`TENX0414`, `TENX0616`), and some whole
//! answer must be valid ([`whole`]: `TENX0414`). A program's own
//! schema named like a standard one is refused as a response (`TENX0613`): it used to stand in
//! for the standard one silently. An answer that can `edit` needs arguments to edit: a tool with
//! parameters (`TENX0614`), never an interrupt (`TENX0615`). An answer that can `respond`
//! answers a tool call in the tool's place: only a tool approval can (`TENX0628` at an
//! interrupt), and its response carries the result as `tool_result` (`TENX0417`).

mod fit;
mod whole;

use super::Facts;
use crate::ast::{Expr, SchemaRef};
use crate::decision::Response;
use crate::resolve::Program;
use crate::schema::Lowerer;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// What a checked answer can do besides approve and reject: where it says it can `edit` (when
/// every check of the rule passed) and `respond` (when the field can hold that value), and
/// whether its schema defines `tool_result`.
struct Reading {
    edit: Option<Span>,
    respond: Option<Span>,
    tool_result: bool,
}

/// Where an approval's answer is read: a tool's `approval` block or an interrupt.
struct Site<'a> {
    file: FileId,
    /// `approval of tool `x`` or `interrupt `x``.
    what: String,
    response: Option<&'a SchemaRef>,
    decision: Option<&'a Expr>,
    /// The `approval` keyword or the interrupt's name.
    span: Span,
}

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    let mut lowerer = Lowerer::new(program);
    for tool in &program.tools {
        let Some(approval) = &tool.decl.approval else { continue };
        let site = Site {
            file: tool.file,
            what: format!("the approval of tool `{}`", tool.decl.name.name),
            response: approval.response.as_ref(),
            decision: approval.decision.as_ref(),
            span: approval.span,
        };
        let Some(reading) = reading(program, &mut lowerer, &site, diagnostics) else {
            continue;
        };
        if let Some(respond_span) = reading.respond
            && !reading.tool_result
        {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0417,
                    format!(
                        "the response of the approval of tool `{}` can answer `respond` but defines no `tool_result`",
                        tool.decl.name.name
                    ),
                    tool.file,
                    respond_span,
                )
                .label("a response answers the call with its `tool_result`")
                .secondary(
                    tool.file,
                    approval.response.as_ref().map_or(approval.span, SchemaRef::span),
                    "the response schema",
                )
                .help("add `\"tool_result\": { … }` to the schema's `properties`, shaped like the tool's result, or remove `respond`"),
            );
        }
        let Some(edit_span) = reading.edit else {
            continue;
        };
        let parameters = lowerer.lower_tool_parameters(tool, &mut Vec::new());
        if !crate::decision::has_parameters(&parameters.value) {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0614,
                    format!(
                        "the approval of tool `{}` can answer `edit`, but the tool has no parameters to edit",
                        tool.decl.name.name
                    ),
                    tool.file,
                    edit_span,
                )
                .label("this answer can edit the call's arguments")
                .secondary(tool.file, tool.decl.name.span, "this tool takes no arguments")
                .help("use `yes_no`, or a decision without `edit`"),
            );
        }
    }
    for interrupt in &program.interrupts {
        let decl = &interrupt.decl;
        let site = Site {
            file: interrupt.file,
            what: format!("interrupt `{}`", decl.name.name),
            response: decl.response.as_ref(),
            decision: decl.decision.as_ref(),
            span: decl.name.span,
        };
        let Some(reading) = reading(program, &mut lowerer, &site, diagnostics) else {
            continue;
        };
        if let Some(respond_span) = reading.respond {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0628,
                    format!(
                        "interrupt `{}` can answer `respond`, but an interrupt has no tool call to answer",
                        decl.name.name
                    ),
                    interrupt.file,
                    respond_span,
                )
                .label("this answer would stand in for a tool's result")
                .help("remove `respond`; to answer a call in the tool's place, give the tool its own `approval` block with this decision")
                .note("at an interrupt, steer the run with a route on the answer written into state (graph `answers`)"),
            );
        }
        let Some(edit_span) = reading.edit else {
            continue;
        };
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0615,
                format!(
                    "interrupt `{}` can answer `edit`, but an interrupt has no arguments of its own to edit",
                    decl.name.name
                ),
                interrupt.file,
                edit_span,
            )
            .label("this answer can edit")
            .help("use `yes_no`, or a decision without `edit`")
            .note("an interrupt approves or rejects; a tool's own `approval` block can edit that tool's arguments"),
        );
    }
}

/// Checks how a site's answer is read; what it can do besides approve and reject.
fn reading(
    program: &Program,
    lowerer: &mut Lowerer<'_>,
    site: &Site<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Reading> {
    let response_span = site.response.map_or(site.span, SchemaRef::span);
    match Response::of(program, site.response) {
        Response::Unresolved => None,
        Response::Default | Response::Standard(_) if site.decision.is_some() => {
            let decision = site.decision?;
            let (fixed, read) = match Response::of(program, site.response) {
                Response::Standard(name) => (
                    format!("`std.approval.{name}`"),
                    "this response is read by the standard rule",
                ),
                _ => (
                    "the default yes-or-no response".to_string(),
                    "no `response`: the answer is a plain yes or no",
                ),
            };
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0410,
                    format!("`decision` on {fixed}, whose meaning is fixed"),
                    site.file,
                    decision.span,
                )
                .label("remove this")
                .secondary(site.file, response_span, read)
                .help(
                    "remove `decision`, or use a response schema of your own and keep `decision` to say how it is read",
                ),
            );
            None
        }
        Response::Default => None,
        Response::Standard(name) => Some(Reading {
            edit: (name == "approve_edit_reject").then_some(response_span),
            respond: None,
            tool_result: false,
        }),
        Response::Shadowing(decl) => {
            let name = &decl.decl.name.name;
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0613,
                    format!("response `{name}` is the program's own schema, not `std.approval.{name}`"),
                    site.file,
                    response_span,
                )
                .label("this names the program's schema")
                .secondary(decl.file, decl.decl.name.span, "declared here, taking the standard library's name")
                .help(format!(
                    "import `std.approval.{name}` and remove this schema, or rename it and declare `decision = {{ field: \"…\", approve: … }}`"
                ))
                .note("the runtime reads a response by its `decision`; a look-alike of a standard schema gets none"),
            );
            None
        }
        Response::Custom => {
            let response = site.response?;
            let lowered = lowerer.lower_schema_ref(site.file, response, &mut Vec::new())?;
            if lowered.value.get("type").and_then(serde_json::Value::as_str) != Some("object") {
                return None; // `TENX0404`
            }
            let Some(decision) = site.decision else {
                let example = fit::suggestion(&lowered.value)
                    .unwrap_or_else(|| "decision = { field: \"approved\", approve: true }".to_string());
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0409,
                        format!("the response of {} has no `decision`", site.what),
                        site.file,
                        response_span,
                    )
                    .label("the runtime could not tell approve from reject")
                    .help(format!(
                        "say which field decides and which value approves, such as `{example}`, or use `std.approval.yes_no`"
                    )),
                );
                return None;
            };
            let written = fit::written(site, decision, diagnostics)?;
            fit::check(site, response_span, &lowered, &written, diagnostics)
        }
    }
}
