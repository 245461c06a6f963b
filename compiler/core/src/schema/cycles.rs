//! `TENX0408` for named schemas that contain themselves (`schema a = list<a>`, a name in a schema
//! position of its own inline map, or `a` → `b` → `a`): lowering one would never end. An iterative depth-first search over the schemas; each
//! back edge is one cycle, reported once, at the use that closes it.

use super::lower::schema_uses;
use crate::ast::Ident;
use crate::ids::IdVec;
use crate::resolve::{Program, SchemaId};
use tenx_diagnostics::{Code, Diagnostic};

/// Reports every cycle among the program's named schemas.
pub fn check_cycles(program: &Program, diagnostics: &mut Vec<Diagnostic>) {
    let edges: IdVec<SchemaId, Vec<(SchemaId, &Ident)>> = program.schemas.map(|schema| {
        let mut uses: Vec<(SchemaId, &Ident)> = schema_uses(&schema.decl.ty)
            .into_iter()
            .filter_map(|name| Some((program.lookup(&name.name)?.decl.schema()?, name)))
            .collect();
        uses.sort_by_key(|(_, name)| name.span.start);
        uses
    });
    // 0: not visited, 1: on the current path, 2: done.
    let mut state = IdVec::filled(0u8, edges.len());
    for start in edges.ids() {
        if state.get(start) != Some(&0) {
            continue;
        }
        let mut path: Vec<(SchemaId, usize)> = vec![(start, 0)];
        if let Some(s) = state.get_mut(start) {
            *s = 1;
        }
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            let Some(&(target, name)) = edges.get(node).and_then(|e| e.get(*next)) else {
                if let Some(s) = state.get_mut(node) {
                    *s = 2;
                }
                path.pop();
                continue;
            };
            *next += 1;
            match state.get(target) {
                Some(0) => {
                    if let Some(s) = state.get_mut(target) {
                        *s = 1;
                    }
                    path.push((target, 0));
                }
                Some(1) => {
                    let members: Vec<SchemaId> = path.iter().map(|(n, _)| *n).skip_while(|n| *n != target).collect();
                    report(program, node, target, name, &members, diagnostics);
                }
                _ => {}
            }
        }
    }
}

fn report(
    program: &Program,
    from: SchemaId,
    target: SchemaId,
    name: &Ident,
    members: &[SchemaId],
    diagnostics: &mut Vec<Diagnostic>,
) {
    let (Some(from), Some(target_decl)) = (program.schemas.get(from), program.schemas.get(target)) else {
        return;
    };
    let schema = &target_decl.decl.name.name;
    let mut d = if members.len() <= 1 {
        Diagnostic::new(
            Code::TENX0408,
            format!("schema `{schema}` contains itself"),
            from.file,
            name.span,
        )
        .label(format!("`{schema}` is used inside its own definition"))
    } else {
        let chain: Vec<String> = members
            .iter()
            .filter_map(|m| program.schemas.get(*m))
            .map(|s| format!("`{}`", s.decl.name.name))
            .chain(std::iter::once(format!("`{schema}`")))
            .collect();
        Diagnostic::new(
            Code::TENX0408,
            format!("schema `{schema}` contains itself through `{}`", from.decl.name.name),
            from.file,
            name.span,
        )
        .label(format!("`{schema}` is used here, inside `{}`", from.decl.name.name))
        .note(format!("the cycle is {}", chain.join(" → ")))
        .secondary(
            target_decl.file,
            target_decl.decl.name.span,
            format!("`{schema}` is declared here"),
        )
    };
    d = d.help("a schema cannot contain itself; for recursive data, write an inline schema that refers to itself with `$defs` and `\"$ref\"`");
    diagnostics.push(d);
}
