//! Interrupt answers written into state: `answers = { review: review_answer }` writes the whole
//! answer, `answers = { review: { verdict: review_verdict } }` one property of it. Each key is an
//! interrupt node of the graph (`TENX0302`, `TENX0335`); each property is one the interrupt's
//! response schema declares, itself or in a part every answer matches (a `$ref`, an `allOf`
//! member) (`TENX0336`); each field is a declared state field (`TENX0337`)
//! that can hold what the answer gives, an enum field every label the answer can give
//! (`TENX0338`); and no answer, or answer property, is written twice, and no two parts of one
//! answer go to one field (`TENX0339`).

use super::GraphCheck;
use super::routes::{FieldType, json_type, type_of};
use super::tool_nodes::never_fits;
use crate::ast::AnswerWrite;
use crate::resolve::DeclKind;
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, Span};

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let answers = c.g().answers.clone();
    let mut seen: BTreeMap<(String, Option<String>), Span> = BTreeMap::new();
    // The first write of each interrupt's answer into each state field.
    let mut targets: BTreeMap<(String, String), &AnswerWrite> = BTreeMap::new();
    for write in &answers {
        let key = (write.node.name.clone(), write.property.as_ref().map(|p| p.name.clone()));
        let span = write.property.as_ref().map_or(write.node.span, |p| p.span);
        if let Some(first) = seen.get(&key) {
            let what = describe(write);
            let d = Diagnostic::new(
                Code::TENX0339,
                format!("{what} is written twice in `answers`"),
                c.file,
                span,
            )
            .label("written again here")
            .secondary(c.file, *first, "first written here")
            .help("an answer goes to one state field: keep one entry");
            c.report(d);
            continue;
        }
        seen.insert(key, span);
        let target = (write.node.name.clone(), write.field.name.clone());
        if let Some(first) = targets.get(&target) {
            // Both would be written at the same step, in the order of the properties' names,
            // so the field would hold the later one: a route testing it for the decision would
            // read another part of the answer (a rejection could take the approving arm).
            let field = &write.field.name;
            let d = Diagnostic::new(
                Code::TENX0339,
                format!("{} and {} are both written to `{field}`", describe(first), describe(write)),
                c.file,
                write.field.span,
            )
            .label(format!("`{field}` written again here"))
            .secondary(c.file, first.field.span, format!("`{field}` first written here"))
            .help("write each part of an answer to its own state field")
            .note("both are written when the answer arrives, so the field would keep only one of them, and a route reading it could see another part of the answer than it tests");
            c.report(d);
            continue;
        }
        targets.insert(target, write);
        if let Some(d) = check_write(c, write) {
            c.report(d);
        }
    }
}

fn describe(write: &AnswerWrite) -> String {
    match &write.property {
        Some(p) => format!("`{}` of the answer to `{}`", p.name, write.node.name),
        None => format!("the answer to `{}`", write.node.name),
    }
}

fn check_write(c: &mut GraphCheck<'_, '_>, write: &AnswerWrite) -> Option<Diagnostic> {
    let graph = c.g().name.name.clone();
    let name = &write.node.name;
    if !c.check_node_ref(&write.node, "`answers`") {
        return None;
    }
    let node = c.topology.index.get(name).and_then(|&n| c.topology.nodes.get(n))?;
    let Some(interrupt) = node.decl.interrupt().and_then(|i| c.facts.program.interrupts.get(i)) else {
        let kind = if node.kind() == DeclKind::Agent {
            "an agent"
        } else {
            "a tool"
        };
        return Some(
            Diagnostic::new(
                Code::TENX0335,
                format!("`answers` names `{name}`, which is {kind} node, not an interrupt node"),
                c.file,
                write.node.span,
            )
            .label("not an interrupt node")
            .secondary(c.file, node.span, format!("`{name}` is {kind} node here"))
            .help(format!(
                "remove `{name}` from `answers`; write an agent's answer with `output`, a tool's result with `results`"
            )),
        );
    };
    let response = interrupt.decl.response.as_ref()?;
    let mut scratch = Vec::new();
    let schema = crate::schema::lower_schema_ref(c.facts.program, interrupt.file, response, &mut scratch)?.value;
    let held = match &write.property {
        None => FieldType::Object,
        Some(property) => {
            // Declared by the response or by one of its parts (its `$ref`s and `allOf`), all of
            // which every answer matches.
            let declared = tenx_artifact::answer_ways::places(&schema, &property.name);
            let Some(sub) = declared.first().and_then(|at| schema.pointer(at)) else {
                let parts = tenx_artifact::answer_ways::parts(&schema, String::new());
                let names: Vec<&String> = parts
                    .iter()
                    .filter_map(|at| schema.pointer(at)?.get("properties")?.as_object())
                    .flat_map(|p| p.keys())
                    .collect();
                let help = crate::did_you_mean(&property.name, names.iter().copied())
                    .map(|s| format!("did you mean `{s}`?"))
                    .unwrap_or_else(|| format!("write one of the properties the response of `{name}` declares"));
                return Some(
                    Diagnostic::new(
                        Code::TENX0336,
                        format!("the answer to `{name}` has no property `{}`", property.name),
                        c.file,
                        property.span,
                    )
                    .label("not a property of the response")
                    .secondary(interrupt.file, interrupt.decl.name.span, format!("`{name}` is declared here"))
                    .help(help)
                    .note("a person's answer is checked against the interrupt's `response` schema, so only its properties exist"),
                );
            };
            json_type(sub)
        }
    };
    let Some(field) = c.state_field(&write.field.name).cloned() else {
        let names: Vec<&str> = c.g().state.iter().map(|p| p.name.name.as_str()).collect();
        let field_name = &write.field.name;
        let help = crate::did_you_mean(field_name, names.iter())
            .map(|s| format!("did you mean `{s}`?"))
            .unwrap_or_else(|| {
                format!("declare `{field_name}` in the `state` of graph `{graph}`, with the answer's type")
            });
        return Some(
            Diagnostic::new(
                Code::TENX0337,
                format!(
                    "`answers` writes {} to `{field_name}`, which is not a state field of graph `{graph}`",
                    describe(write)
                ),
                c.file,
                write.field.span,
            )
            .label("no such state field")
            .help(help),
        );
    };
    let wanted = type_of(c, &field.ty, 0);
    let problem = if never_fits(&held, &wanted) {
        Some(format!("{} is {}", describe(write), held.describe()))
    } else {
        match (&held, &wanted) {
            (FieldType::Enum(given), FieldType::Enum(allowed)) => given
                .iter()
                .find(|v| !allowed.contains(v))
                .map(|v| format!("{} can be {v}", describe(write))),
            _ => None,
        }
    };
    let problem = problem?;
    let field_name = &write.field.name;
    Some(
        Diagnostic::new(
            Code::TENX0338,
            format!("{problem}, which the state field `{field_name}` cannot hold"),
            c.file,
            write.field.span,
        )
        .label("the answer does not always fit this field")
        .secondary(
            c.file,
            field.ty.span(),
            format!("`{field_name}` holds {}", wanted.describe()),
        )
        .secondary(
            interrupt.file,
            response.span(),
            format!("the response of `{name}` is declared here"),
        )
        .help(format!(
            "give `{field_name}` the type of the answer, with every label it can give"
        )),
    )
}
