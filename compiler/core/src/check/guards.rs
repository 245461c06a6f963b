//! Output guards: an agent's `guard` lists validators of the model's output (final answers and
//! tool-call arguments). A program's own validators and the standard library's
//! `prompt_injection` read any text; a standard library validator about something else (such as
//! `message_content`, which reads the roles and blocks of client messages) cannot guard output
//! (`TENX0705`). The range of `retries` is checked with the other limits (`TENX0702`, in
//! [`super::validators`]).

use super::Facts;
use tenx_artifact::OUTPUT_GUARD_BUILTINS as OUTPUT_BUILTINS;
use tenx_diagnostics::{Code, Diagnostic};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    for agent in &program.agents {
        let (file, decl) = (agent.file, &agent.decl);
        for use_ in &decl.guard {
            let Some(validator) = program.validator(&use_.name.name) else {
                continue;
            };
            let Some(builtin) = &validator.decl.builtin else {
                continue;
            };
            if OUTPUT_BUILTINS.contains(&builtin.name.as_str()) {
                continue;
            }
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0705,
                    format!(
                        "validator `{}` cannot guard the output of agent `{}`",
                        use_.name.name, decl.name.name
                    ),
                    file,
                    use_.name.span,
                )
                .label("checks client messages, not model output")
                .secondary(validator.file, validator.decl.name.span, "declared here")
                .help(format!(
                    "move it to the graph's `validate`; a guard takes {} or a validator of your own",
                    OUTPUT_BUILTINS
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        }
    }
}
