//! Who may answer an approval. `approvers = [role("support_lead"), scope("refunds:approve")]` on
//! a tool's `approval` or an `interrupt` lets a user whose verified token holds any listed role
//! or any listed scope answer. Items are `role("…")`/`scope("…")` calls with one string
//! (`TENX0608`); a role is 1–64 characters of `[A-Za-z0-9_.-]` and a scope is `resource:action`
//! (`TENX0609`); an empty list lets nobody answer (`TENX0610`); a repeat is `TENX0611`.
//!
//! `separate_duties` refuses the user who started the run as the approver of its own request.
//! It is on by default for a `high` tool's approval and for an interrupt that approves a `high`
//! tool. With it on and no `approvers`, nobody could ever answer: `TENX0612`.
//!
//! Lowering reads the same meaning through [`lower_approvers`] and the `separate_duties`
//! functions, so the artifact says exactly what was checked here.

use super::Facts;
use crate::ast::{Approval, Expr, ExprKind, InterruptDecl, Risk, ToolDecl};
use crate::resolve::{Located, Program};
use tenx_artifact::Approvers;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// The longest role name.
const MAX_ROLE: usize = 64;

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    for tool in &program.tools {
        let Some(approval) = &tool.decl.approval else { continue };
        if let Some(approvers) = &approval.approvers {
            check_list(tool.file, approvers, diagnostics);
        }
        if tool_separate_duties(&tool.decl, approval) && approval.approvers.is_none() {
            let why = match approval.separate_duties {
                Some((_, span)) => (
                    span,
                    "`separate_duties = true` refuses the user who started the run".to_string(),
                ),
                None => (
                    tool.decl.risk_span().unwrap_or(tool.decl.name.span),
                    "a `high` risk tool's approval separates duties by default".to_string(),
                ),
            };
            diagnostics.push(nobody(
                tool.file,
                approval.span,
                format!("nobody may answer the approval of tool `{}`", tool.decl.name.name),
                why,
            ));
        }
    }
    for interrupt in &program.interrupts {
        let decl = &interrupt.decl;
        if let Some(approvers) = &decl.approvers {
            check_list(interrupt.file, approvers, diagnostics);
        }
        if interrupt_separate_duties(program, decl) && decl.approvers.is_none() {
            let why = match decl.separate_duties {
                Some((_, span)) => (
                    span,
                    "`separate_duties = true` refuses the user who started the run".to_string(),
                ),
                None => {
                    let high = decl.approves.iter().find(|tool| is_high(program, &tool.name));
                    (
                        high.map_or(decl.name.span, |tool| tool.span),
                        format!(
                            "it approves `high` risk tool `{}`, so it separates duties by default",
                            high.map_or("", |tool| tool.name.as_str())
                        ),
                    )
                }
            };
            diagnostics.push(nobody(
                interrupt.file,
                decl.name.span,
                format!("nobody may answer interrupt `{}`", decl.name.name),
                why,
            ));
        }
    }
}

/// Whether a tool's approval refuses the user who started the run: as written, else `high`.
pub(crate) fn tool_separate_duties(tool: &ToolDecl, approval: &Approval) -> bool {
    approval
        .separate_duties
        .map_or(tool.risk_level() == Risk::High, |(on, _)| on)
}

/// Whether an interrupt refuses the user who started the run: as written, else whether any
/// tool it approves is `high`.
pub(crate) fn interrupt_separate_duties(program: &Program, interrupt: &InterruptDecl) -> bool {
    interrupt.separate_duties.map_or_else(
        || interrupt.approves.iter().any(|tool| is_high(program, &tool.name)),
        |(on, _)| on,
    )
}

fn is_high(program: &Program, tool: &str) -> bool {
    program
        .tool(tool)
        .is_some_and(|tool: &Located<ToolDecl>| tool.decl.risk_level() == Risk::High)
}

/// The roles and scopes of a checked `approvers` list (sorted when the artifact is normalised);
/// `None` when none is written.
pub(crate) fn lower_approvers(approvers: Option<&Expr>) -> Option<Approvers> {
    let mut out = Approvers {
        roles: Vec::new(),
        scopes: Vec::new(),
    };
    for item in items(approvers?) {
        match approver(item) {
            Ok((Kind::Role, name, _)) => out.roles.push(name.to_string()),
            Ok((Kind::Scope, name, _)) => out.scopes.push(name.to_string()),
            Err(_) => {}
        }
    }
    Some(out)
}

/// A role or a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Role,
    Scope,
}

/// The items of the list (a single item is accepted as a list of one).
fn items(approvers: &Expr) -> &[Expr] {
    match &approvers.kind {
        ExprKind::List(items) => items,
        _ => std::slice::from_ref(approvers),
    }
}

/// Reads one item: `role("…")` or `scope("…")` with one string argument, giving the kind, the
/// text and the string's span; else the message and help of `TENX0608`.
fn approver(item: &Expr) -> Result<(Kind, &str, Span), (String, String)> {
    const HELP: &str = "write `role(\"support_lead\")` or `scope(\"refunds:approve\")`";
    let ExprKind::Call { callee, args } = &item.kind else {
        let hint = match &item.kind {
            ExprKind::Str(s) if s.contains(':') => format!("write `scope(\"{s}\")`"),
            ExprKind::Str(s) | ExprKind::Text(s) => format!("write `role(\"{s}\")`"),
            ExprKind::Path(path) if path.len() == 1 => {
                let name = path.first().map_or("", |i| i.name.as_str());
                format!("write `role(\"{name}\")`")
            }
            _ => HELP.to_string(),
        };
        return Err((
            format!(
                "an approver must be `role(\"…\")` or `scope(\"…\")`, not {}",
                item.describe()
            ),
            hint,
        ));
    };
    let kind = match callee.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().as_slice() {
        ["role"] => Kind::Role,
        ["scope"] => Kind::Scope,
        _ => {
            let written = callee.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(".");
            let help = crate::suggest::did_you_mean(&written, ["role", "scope"].iter())
                .map_or_else(|| HELP.to_string(), |close| format!("did you mean `{close}`?"));
            return Err((
                format!("`{written}(…)` is no approver: only `role` and `scope` are"),
                help,
            ));
        }
    };
    let what = if kind == Kind::Role { "role" } else { "scope" };
    match args.as_slice() {
        [arg] if arg.name.is_none() => match &arg.value.kind {
            ExprKind::Str(text) => Ok((kind, text.as_str(), arg.value.span)),
            _ => Err((
                format!("`{what}(…)` takes one string, not {}", arg.value.describe()),
                format!("write the {what} in quotes, like `{what}(\"…\")`"),
            )),
        },
        _ => Err((
            format!("`{what}(…)` takes exactly one string"),
            format!("list each {what} as its own item: `{what}(\"a\"), {what}(\"b\")`"),
        )),
    }
}

/// Whether `role` is 1–64 characters of `[A-Za-z0-9_.-]` (the artifact's own rule).
fn valid_role(role: &str) -> bool {
    tenx_artifact::is_role(role)
}

/// Whether `scope` is `resource:action` (the artifact's own rule).
fn valid_scope(scope: &str) -> bool {
    tenx_artifact::is_scope(scope)
}

fn check_list(file: FileId, approvers: &Expr, diagnostics: &mut Vec<Diagnostic>) {
    let items = items(approvers);
    if items.is_empty() {
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0610,
                "`approvers` is empty, so nobody could answer",
                file,
                approvers.span,
            )
            .label("no role or scope")
            .help("list who may answer, like `approvers = [role(\"support_lead\")]`, or remove `approvers`"),
        );
        return;
    }
    let mut seen: Vec<(Kind, &str, Span)> = Vec::new();
    for item in items {
        let (kind, text, span) = match approver(item) {
            Ok(found) => found,
            Err((message, help)) => {
                diagnostics.push(
                    Diagnostic::new(Code::TENX0608, message, file, item.span)
                        .label("not an approver")
                        .help(help),
                );
                continue;
            }
        };
        let valid = match kind {
            Kind::Role => valid_role(text),
            Kind::Scope => valid_scope(text),
        };
        if !valid {
            let (message, help) = match kind {
                Kind::Role => (
                    format!("`{text}` is not a valid role"),
                    format!("a role is 1 to {MAX_ROLE} letters, digits, `_`, `.` or `-`, like `support_lead`"),
                ),
                Kind::Scope if !text.contains(':') && valid_role(text) => (
                    format!("`{text}` is not a valid scope"),
                    format!("a scope is `resource:action`, like `refunds:approve`; for a role write `role(\"{text}\")`"),
                ),
                Kind::Scope => (
                    format!("`{text}` is not a valid scope"),
                    "a scope is `resource:action` of letters, digits, `_`, `.` or `-` (and `*` in the action), like `refunds:approve`".to_string(),
                ),
            };
            diagnostics.push(
                Diagnostic::new(Code::TENX0609, message, file, span)
                    .label("not a valid name")
                    .help(help),
            );
            continue;
        }
        if let Some((_, _, first)) = seen.iter().find(|(k, t, _)| *k == kind && *t == text) {
            let what = if kind == Kind::Role { "role" } else { "scope" };
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0611,
                    format!("{what} `{text}` is listed twice in `approvers`"),
                    file,
                    item.span,
                )
                .label("listed again here")
                .secondary(file, *first, "first listed here")
                .help("remove one of them"),
            );
            continue;
        }
        seen.push((kind, text, item.span));
    }
}

/// `TENX0612`: separate duties on, nobody named.
fn nobody(file: FileId, span: Span, message: String, (why_span, why): (Span, String)) -> Diagnostic {
    Diagnostic::new(Code::TENX0612, message, file, span)
        .label("no `approvers`, and the user who started the run may not answer")
        .secondary(file, why_span, why)
        .help(
            "add `approvers = [role(\"…\")]`, or write `separate_duties = false` to let the user who started the run approve their own request",
        )
}
