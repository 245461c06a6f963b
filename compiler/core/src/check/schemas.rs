//! Schemas: every JSON Schema of the program (tool parameters and results, approval and
//! interrupt responses, agent outputs and handoff payloads, `schema` declarations, graph state,
//! validator parameters)
//! is lowered once and checked (`TENX0401`–`TENX0408`, see [`crate::schema`]). A named schema is
//! checked at its declaration; where it is used, only what the use adds (a default, the rule
//! that a response is an object) is checked.

use super::Facts;
use crate::ast::SchemaRef;
use crate::schema::{self, Lowered, Lowerer, SchemaSite};
use tenx_diagnostics::{Diagnostic, FileId};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    let mut lowerer = Lowerer::new(program);
    schema::check_cycles(program, diagnostics);
    for decl in &program.schemas {
        if let Some(lowered) = lowerer.lower_type(decl.file, &decl.decl.ty, diagnostics) {
            schema::check_lowered(&lowered, SchemaSite::Schema, diagnostics);
        }
    }
    for tool in &program.tools {
        let (file, t) = (tool.file, &tool.decl);
        let parameters = lowerer.lower_tool_parameters(tool, diagnostics);
        let site = if t.params.is_some() || t.parameters_schema.is_none() {
            SchemaSite::Parameters
        } else {
            SchemaSite::Schema
        };
        schema::check_lowered(&parameters, site, diagnostics);
        too_deep_here(
            &parameters,
            || format!("the parameters of tool `{}`", t.name.name),
            diagnostics,
        );
        if let Some(result) = &t.result
            && let Some(lowered) = lowerer.lower_type(file, result, diagnostics)
        {
            schema::check_lowered(&lowered, SchemaSite::Schema, diagnostics);
            too_deep_here(
                &lowered,
                || format!("the result of tool `{}`", t.name.name),
                diagnostics,
            );
        }
        if let Some(response) = t.approval.as_ref().and_then(|a| a.response.as_ref()) {
            response_schema(&mut lowerer, file, response, "approval response", diagnostics);
        }
    }
    for agent in &program.agents {
        if let Some(output) = &agent.decl.output
            && let Some(lowered) = lowerer.lower_schema_ref(agent.file, output, diagnostics)
        {
            schema::check_lowered(&lowered, SchemaSite::Schema, diagnostics);
            too_deep_here(
                &lowered,
                || format!("the output of agent `{}`", agent.decl.name.name),
                diagnostics,
            );
        }
        for payload in agent.decl.payloads.iter().filter(|p| !p.params.is_empty()) {
            let lowered = lowerer.lower_params(agent.file, &payload.params, diagnostics);
            schema::check_lowered(&lowered, SchemaSite::Parameters, diagnostics);
            too_deep_here(
                &lowered,
                || format!("the payload of the handoff to `{}`", payload.target.name),
                diagnostics,
            );
        }
    }
    for interrupt in &program.interrupts {
        if let Some(response) = &interrupt.decl.response {
            response_schema(
                &mut lowerer,
                interrupt.file,
                response,
                "interrupt response",
                diagnostics,
            );
        }
    }
    for graph in &program.graphs {
        if !graph.decl.state.is_empty() {
            let lowered = lowerer.lower_params(graph.file, &graph.decl.state, diagnostics);
            schema::check_lowered(&lowered, SchemaSite::Parameters, diagnostics);
            too_deep_here(
                &lowered,
                || format!("the state of graph `{}`", graph.decl.name.name),
                diagnostics,
            );
        }
    }
    for validator in &program.validators {
        if let Some(params) = validator.decl.params.as_deref().filter(|p| !p.is_empty()) {
            let lowered = lowerer.lower_params(validator.file, params, diagnostics);
            schema::check_lowered(&lowered, SchemaSite::Parameters, diagnostics);
        }
    }
    for name in &lowerer.too_deep {
        let Some(decl) = program.schema(name) else { continue };
        diagnostics.push(
            Diagnostic::new(
                tenx_diagnostics::Code::TENX0407,
                format!(
                    "schema `{name}` nests more than {} levels deep once the schemas it uses are filled in",
                    schema::MAX_SCHEMA_DEPTH
                ),
                decl.file,
                decl.decl.name.span,
            )
            .label("too deep")
            .help("shorten the chain of named schemas it uses"),
        );
    }
}

fn response_schema(
    lowerer: &mut Lowerer<'_>,
    file: FileId,
    response: &SchemaRef,
    what: &str,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Some(lowered) = lowerer.lower_schema_ref(file, response, diagnostics) else {
        return;
    };
    schema::check_lowered(&lowered, SchemaSite::Schema, diagnostics);
    too_deep_here(&lowered, || format!("this {what}"), diagnostics);
    let program = lowerer.program();
    schema::check_response_object(program, &lowered, response, what, diagnostics);
}

/// `TENX0407` at a use: the schema the artifact gets here (parameters around a named schema,
/// lists of one) nests deeper than [`schema::MAX_SCHEMA_DEPTH`], though each named schema it
/// uses is within it. A named schema already too deep was replaced by `{}` and reported at its
/// declaration, so it is not reported again here.
fn too_deep_here(lowered: &Lowered, what: impl FnOnce() -> String, diagnostics: &mut Vec<Diagnostic>) {
    let depth = schema::nesting_depth(&lowered.value);
    if depth <= schema::MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(origin) = lowered.spans.get("") else { return };
    diagnostics.push(
        Diagnostic::new(
            tenx_diagnostics::Code::TENX0407,
            format!(
                "the schema of {} nests {depth} levels deep once the schemas it uses are filled in, more than {}",
                what(),
                schema::MAX_SCHEMA_DEPTH
            ),
            origin.file,
            origin.span,
        )
        .label("too deep")
        .help("shorten the chain of named schemas or lists it uses")
        .note("a sealed artifact holds each schema as JSON text that loaders read at most 128 levels deep"),
    );
}
