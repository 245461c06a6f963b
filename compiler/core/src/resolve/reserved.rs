//! Reserved names and bindings, checked on each module before its declarations join the
//! namespace: a declaration named `END` (`TENX0115`), and `run = builtin(…)` outside the
//! standard library (`TENX0116`). Tool names starting with `transfer_to_` are reserved too; that
//! is the tool-name check's (`TENX0202`).

use super::imports::LoadedModule;
use super::program::kind_of;
use crate::ast::{self, Item, RunBinding};
use tenx_artifact::{BUILTIN_TOOLS, BUILTIN_VALIDATORS, END};
use tenx_diagnostics::{Code, Diagnostic, FileId};

/// Reports reserved names and bindings. A declaration named `END` is removed, so that nothing
/// else reports it again; `END` is then treated like the name of a broken item.
pub(crate) fn check(modules: &mut [LoadedModule], diagnostics: &mut Vec<Diagnostic>) {
    for loaded in modules.iter_mut() {
        let file = loaded.module.file;
        let mut removed = false;
        loaded.module.items.retain(|item| {
            let reserved = ast::item_name(item).is_some_and(|name| name.name == END);
            if reserved {
                diagnostics.push(reserved_end(file, item));
                removed = true;
            }
            !reserved
        });
        if removed {
            loaded.broken.push(END.to_string());
        }
        if !loaded.stdlib {
            for item in &loaded.module.items {
                if let Some(d) = builtin_outside_stdlib(file, item) {
                    diagnostics.push(d);
                }
            }
        }
    }
}

/// `TENX0115`: a declaration named `END`.
fn reserved_end(file: FileId, item: &Item) -> Diagnostic {
    let kind = kind_of(item).map_or("declaration", |k| k.as_str());
    let span = ast::item_name(item).map(|n| n.span).unwrap_or_default();
    Diagnostic::new(
        Code::TENX0115,
        format!("the name `{END}` is reserved and cannot name {}", article(kind)),
        file,
        span,
    )
    .label(format!("`{END}` is the end of every graph"))
    .help(format!(
        "rename the {kind}; names are case-sensitive, so `end` or `finish` are free"
    ))
}

/// `TENX0116`: a tool or validator of the program (not of the standard library) bound with
/// `builtin(…)`.
fn builtin_outside_stdlib(file: FileId, item: &Item) -> Option<Diagnostic> {
    let (kind, name, handler, span, known) = match item {
        Item::Tool(tool) => match &tool.run {
            Some((RunBinding::Builtin(handler), span)) => (DeclWord::Tool, &tool.name, handler, *span, BUILTIN_TOOLS),
            _ => return None,
        },
        Item::Validator(validator) => {
            let handler = validator.builtin.as_ref()?;
            (
                DeclWord::Validator,
                &validator.name,
                handler,
                handler.span,
                BUILTIN_VALIDATORS,
            )
        }
        _ => return None,
    };
    let word = kind.word();
    let mut d = Diagnostic::new(
        Code::TENX0116,
        format!(
            "{word} `{}` runs `builtin({})`, which only the standard library may use",
            name.name, handler.name
        ),
        file,
        span,
    )
    .label("`builtin(…)` is reserved to the standard library");
    if known.contains(&handler.name.as_str()) {
        d = d.help(format!(
            "the standard library already declares it: remove this {word} and add `import std.{}.{}`",
            kind.module(),
            handler.name
        ));
    } else {
        let fix = match kind {
            DeclWord::Tool => {
                "bind the tool with `http(…)`, `remote` or `mcp(…)`, or with `native(\"name\")` for a handler the host provides in Rust"
            }
            DeclWord::Validator => {
                "declare what the validator refuses with `deny_patterns`, `deny_keywords` or `max_length`"
            }
        };
        d = d.help(fix);
    }
    Some(d)
}

/// The kinds of declaration that can be bound to a builtin.
#[derive(Clone, Copy)]
enum DeclWord {
    Tool,
    Validator,
}

impl DeclWord {
    fn word(self) -> &'static str {
        match self {
            DeclWord::Tool => "tool",
            DeclWord::Validator => "validator",
        }
    }

    /// The standard library module that declares the builtins of this kind.
    fn module(self) -> &'static str {
        match self {
            DeclWord::Tool => "tools",
            DeclWord::Validator => "validators",
        }
    }
}

fn article(word: &str) -> String {
    if word.starts_with(['a', 'i']) {
        format!("an {word}")
    } else {
        format!("a {word}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_file;

    /// Every `builtin(…)` of the standard library names a handler the runtime provides, of the
    /// right kind (the artifact refuses any other).
    #[test]
    fn stdlib_builtins_name_existing_handlers() {
        let mut seen = Vec::new();
        for module in tenx_stdlib::MODULES {
            let (parsed, _) = parse_file(FileId(0), module.source);
            for item in &parsed.items {
                match item {
                    Item::Tool(tool) => {
                        if let Some((RunBinding::Builtin(handler), _)) = &tool.run {
                            assert!(
                                BUILTIN_TOOLS.contains(&handler.name.as_str()),
                                "std.{}: tool `{}` runs unknown builtin `{}`",
                                module.name,
                                tool.name.name,
                                handler.name
                            );
                            seen.push(handler.name.clone());
                        }
                    }
                    Item::Validator(validator) => {
                        if let Some(handler) = &validator.builtin {
                            assert!(
                                BUILTIN_VALIDATORS.contains(&handler.name.as_str()),
                                "std.{}: validator `{}` runs unknown builtin `{}`",
                                module.name,
                                validator.name.name,
                                handler.name
                            );
                            seen.push(handler.name.clone());
                        }
                    }
                    _ => {}
                }
            }
        }
        // And every handler is bound by the standard library: none is dead.
        seen.sort();
        let mut all: Vec<&str> = BUILTIN_TOOLS.iter().chain(BUILTIN_VALIDATORS).copied().collect();
        all.sort_unstable();
        assert_eq!(seen, all);
    }
}
