//! The shape of every tool name a model sees: model APIs (OpenAI's, Anthropic's) accept a
//! function name only if it matches `^[A-Za-z0-9_-]{1,64}$`, and the artifact's self-check
//! refuses any other. So: no empty `name = ""` (`TENX0204`), no ASCII character outside
//! `A-Z a-z 0-9 _ -` (`TENX0205`), no non-ASCII character, however much it looks like a letter
//! (`TENX0206`), no name longer than 64 characters (`TENX0207`), and no handoff whose generated
//! `transfer_to_<agent>` name is longer than 64 characters because of the agent's name
//! (`TENX0208`); an agent called as a tool (`agents = [...]`) is offered under the agent's
//! name, which is no longer than 64 characters either (`TENX0207`).
//!
//! Declared names are identifiers (ASCII letters, digits and `_`), so only a `name = "…"` can
//! be empty or hold a bad character; a declared name or a generated handoff name can only be
//! too long. Every tool and every handoff of the program is checked, used or not: a name that
//! no model API accepts is wrong wherever it is.

use super::Facts;
use crate::ast::ToolDecl;
use crate::resolve::{DeclKind, Located};
use tenx_diagnostics::{Code, Diagnostic, Span};

/// The longest name model APIs accept.
const MAX_NAME: usize = 64;

/// The prefix of every generated handoff tool (as [`crate::lower::HANDOFF_PREFIX`]).
const HANDOFF_PREFIX: &str = crate::lower::HANDOFF_PREFIX;

/// The rule, as the help texts state it.
const RULE: &str =
    "a tool name the model sees must match `^[A-Za-z0-9_-]{1,64}$`, the names OpenAI and Anthropic accept";

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    for tool in &program.tools {
        tool_name(facts, tool, diagnostics);
    }
    for agent in &program.agents {
        // An agent called as a tool is offered under its own name.
        for used in &agent.decl.agent_tools {
            let length = used.agent.name.chars().count();
            if length > MAX_NAME {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0207,
                        format!(
                            "the agent tool `{}…` has a name of {length} characters, longer than {MAX_NAME}",
                            used.agent.name.chars().take(20).collect::<String>()
                        ),
                        agent.file,
                        used.agent.span,
                    )
                    .label("an agent called as a tool is offered under the agent's name")
                    .help(format!("shorten the agent's name to at most {MAX_NAME} characters"))
                    .note(RULE),
                );
            }
        }
        for target in &agent.decl.handoffs {
            // A target that is not an agent is `TENX0101`/`TENX0102`, and generates nothing.
            let Some(symbol) = program.lookup(&target.name).filter(|s| s.kind() == DeclKind::Agent) else {
                continue;
            };
            let generated = format!("{HANDOFF_PREFIX}{}", target.name);
            let length = generated.chars().count();
            if length <= MAX_NAME {
                continue;
            }
            let over = length - MAX_NAME;
            let d = Diagnostic::new(
                Code::TENX0208,
                format!(
                    "the handoff to `{}` generates a tool name of {length} characters, longer than {MAX_NAME}",
                    target.name
                ),
                agent.file,
                target.span,
            )
            .label(format!(
                "generates `{HANDOFF_PREFIX}{}…`",
                target.name.chars().take(20).collect::<String>()
            ));
            diagnostics.push(
                d.secondary(symbol.file, symbol.span, "the agent's name makes the handoff tool name too long")
                    .help(format!(
                    "shorten the agent's name by at least {}: `{HANDOFF_PREFIX}` and the agent's name must fit in {MAX_NAME} characters, so a handoff target's name has at most {}",
                    characters(over, ""),
                    MAX_NAME - HANDOFF_PREFIX.len()
                ))
                .note(RULE),
            );
        }
    }
}

/// `TENX0204`–`TENX0207` for one tool.
fn tool_name(facts: &Facts<'_>, tool: &Located<ToolDecl>, diagnostics: &mut Vec<Diagnostic>) {
    let decl = &tool.decl;
    let declared = &decl.name.name;
    let Some((exposed, span)) = &decl.exposed_name else {
        // A declared name is an identifier: only its length can be wrong.
        let length = declared.chars().count();
        if length > MAX_NAME {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0207,
                    format!("the tool name `{declared}` is {length} characters long, longer than {MAX_NAME}"),
                    tool.file,
                    decl.name.span,
                )
                .label("the model sees the tool by this name")
                .help(format!(
                    "shorten the name by at least {}, or keep it and give the model a short one with `name = \"…\"`",
                    characters(length - MAX_NAME, "")
                ))
                .note(RULE),
            );
        }
        return;
    };
    let span = *span;
    if exposed.is_empty() {
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0204,
                format!("tool `{declared}` is exposed with an empty name"),
                tool.file,
                span,
            )
            .label("the model would see a tool without a name")
            .help(format!(
                "remove `name = \"\"` to expose the tool as `{declared}`, or write the name the model should see"
            ))
            .note(RULE),
        );
        return;
    }
    let text = facts.sources.get(tool.file).map(|f| f.text.as_str());
    let at = |index: usize, c: char| char_span(text, span, exposed, index, c);
    let ascii: Vec<(usize, char)> = exposed
        .char_indices()
        .filter(|&(_, c)| c.is_ascii() && !is_name_char(c))
        .collect();
    if let Some(&(index, c)) = ascii.first() {
        let others = ascii.len() - 1;
        let mut d = Diagnostic::new(
            Code::TENX0205,
            format!(
                "tool `{declared}` is exposed as `{}`, which has {}",
                shown(exposed),
                describe_ascii(c)
            ),
            tool.file,
            at(index, c),
        )
        .label(format!("{} is not allowed in a tool name", describe_ascii(c)));
        if others > 0 {
            d = d.note(format!(
                "{} in the same name {} not allowed either",
                characters(others, "more"),
                if others == 1 { "is" } else { "are" }
            ));
        }
        diagnostics.push(
            d.help(format!(
                "write the name with `_` or `-` instead: `{}`",
                suggest(exposed)
            ))
            .note(RULE),
        );
    }
    let foreign: Vec<(usize, char)> = exposed.char_indices().filter(|&(_, c)| !c.is_ascii()).collect();
    if let Some(&(index, c)) = foreign.first() {
        let others = foreign.len() - 1;
        let mut label = format!("{} is not ASCII", code_point(c));
        if let Some(like) = looks_like(c) {
            label.push_str(&format!(", though it looks like `{like}`"));
        }
        let mut d = Diagnostic::new(
            Code::TENX0206,
            format!(
                "tool `{declared}` is exposed as `{}`, which has the non-ASCII character {}",
                shown(exposed),
                code_point(c)
            ),
            tool.file,
            at(index, c),
        )
        .label(label);
        if others > 0 {
            d = d.note(format!(
                "the name has {} that {} not ASCII",
                characters(others, "more"),
                if others == 1 { "is" } else { "are" }
            ));
        }
        diagnostics.push(
            d.help(format!(
                "type the name again in ASCII letters, digits, `_` and `-`: `{}`",
                suggest(exposed)
            ))
            .note(RULE),
        );
    }
    let length = exposed.chars().count();
    if length > MAX_NAME {
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0207,
                format!("tool `{declared}` is exposed as a name of {length} characters, longer than {MAX_NAME}"),
                tool.file,
                span,
            )
            .label("the model sees the tool by this name")
            .help(format!(
                "shorten the name by at least {}",
                characters(length - MAX_NAME, "")
            ))
            .note(RULE),
        );
    }
}

/// "1 character", "3 more characters".
fn characters(count: usize, more: &str) -> String {
    let more = if more.is_empty() {
        String::new()
    } else {
        format!(" {more}")
    };
    let plural = if count == 1 { "" } else { "s" };
    format!("{count}{more} character{plural}")
}

/// `A-Z a-z 0-9 _ -`.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The span of the character at byte `index` of `decoded`, the value of the string literal at
/// `literal`: exact when the literal is written without escapes, else the whole literal.
fn char_span(text: Option<&str>, literal: Span, decoded: &str, index: usize, c: char) -> Span {
    let (start, end) = (literal.start as usize, literal.end as usize);
    let raw = text.and_then(|t| t.get(start..end));
    match raw.and_then(|r| r.strip_prefix('"')).and_then(|r| r.strip_suffix('"')) {
        Some(inner) if inner == decoded => {
            let at = start + 1 + index;
            Span::new(at, at + c.len_utf8())
        }
        _ => literal,
    }
}

/// A name as shown in a message: control characters escaped, at most 80 characters.
fn shown(name: &str) -> String {
    let mut out: String = name.chars().take(80).flat_map(char::escape_debug).collect();
    if name.chars().count() > 80 {
        out.push('…');
    }
    out
}

/// The name with every character that is not allowed replaced (a look-alike by its ASCII
/// letter, anything else by `_`), cut to 64 characters.
fn suggest(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            c if is_name_char(c) => c,
            c => looks_like(c).unwrap_or('_'),
        })
        .take(MAX_NAME)
        .collect()
}

/// An ASCII character, described: "a space", "`.`".
fn describe_ascii(c: char) -> String {
    match c {
        ' ' => "a space".to_owned(),
        '\t' => "a tab".to_owned(),
        c if c.is_ascii_control() => format!("the control character {}", code_point(c)),
        c => format!("`{c}`"),
    }
}

/// `U+0430 CYRILLIC SMALL LETTER A`, or `U+1F600` for a character outside the table.
fn code_point(c: char) -> String {
    let number = format!("U+{:04X}", u32::from(c));
    match LOOK_ALIKES.iter().find(|(known, _, _)| *known == c) {
        Some((_, name, _)) => format!("{number} {name}"),
        None => number,
    }
}

/// The ASCII character `c` looks like, when the table knows it.
fn looks_like(c: char) -> Option<char> {
    LOOK_ALIKES
        .iter()
        .find(|(known, _, _)| *known == c)
        .and_then(|(_, _, like)| *like)
}

/// Characters people paste into names without seeing it: their Unicode names, and the ASCII
/// character they look like. A small table instead of a dependency on the whole Unicode name
/// list; anything else is named by its code point alone.
const LOOK_ALIKES: &[(char, &str, Option<char>)] = &[
    ('\u{00A0}', "NO-BREAK SPACE", Some('_')),
    ('\u{00AD}', "SOFT HYPHEN", Some('-')),
    ('\u{200B}', "ZERO WIDTH SPACE", None),
    ('\u{200C}', "ZERO WIDTH NON-JOINER", None),
    ('\u{200D}', "ZERO WIDTH JOINER", None),
    ('\u{2010}', "HYPHEN", Some('-')),
    ('\u{2011}', "NON-BREAKING HYPHEN", Some('-')),
    ('\u{2012}', "FIGURE DASH", Some('-')),
    ('\u{2013}', "EN DASH", Some('-')),
    ('\u{2014}', "EM DASH", Some('-')),
    ('\u{2212}', "MINUS SIGN", Some('-')),
    ('\u{FEFF}', "ZERO WIDTH NO-BREAK SPACE", None),
    ('\u{0391}', "GREEK CAPITAL LETTER ALPHA", Some('A')),
    ('\u{0392}', "GREEK CAPITAL LETTER BETA", Some('B')),
    ('\u{0395}', "GREEK CAPITAL LETTER EPSILON", Some('E')),
    ('\u{0397}', "GREEK CAPITAL LETTER ETA", Some('H')),
    ('\u{0399}', "GREEK CAPITAL LETTER IOTA", Some('I')),
    ('\u{039A}', "GREEK CAPITAL LETTER KAPPA", Some('K')),
    ('\u{039C}', "GREEK CAPITAL LETTER MU", Some('M')),
    ('\u{039D}', "GREEK CAPITAL LETTER NU", Some('N')),
    ('\u{039F}', "GREEK CAPITAL LETTER OMICRON", Some('O')),
    ('\u{03A1}', "GREEK CAPITAL LETTER RHO", Some('P')),
    ('\u{03A4}', "GREEK CAPITAL LETTER TAU", Some('T')),
    ('\u{03A5}', "GREEK CAPITAL LETTER UPSILON", Some('Y')),
    ('\u{03A7}', "GREEK CAPITAL LETTER CHI", Some('X')),
    ('\u{0396}', "GREEK CAPITAL LETTER ZETA", Some('Z')),
    ('\u{03B1}', "GREEK SMALL LETTER ALPHA", Some('a')),
    ('\u{03B9}', "GREEK SMALL LETTER IOTA", Some('i')),
    ('\u{03BD}', "GREEK SMALL LETTER NU", Some('v')),
    ('\u{03BF}', "GREEK SMALL LETTER OMICRON", Some('o')),
    ('\u{03C1}', "GREEK SMALL LETTER RHO", Some('p')),
    ('\u{03C5}', "GREEK SMALL LETTER UPSILON", Some('u')),
    ('\u{0405}', "CYRILLIC CAPITAL LETTER DZE", Some('S')),
    (
        '\u{0406}',
        "CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I",
        Some('I'),
    ),
    ('\u{0408}', "CYRILLIC CAPITAL LETTER JE", Some('J')),
    ('\u{0410}', "CYRILLIC CAPITAL LETTER A", Some('A')),
    ('\u{0412}', "CYRILLIC CAPITAL LETTER VE", Some('B')),
    ('\u{0415}', "CYRILLIC CAPITAL LETTER IE", Some('E')),
    ('\u{041A}', "CYRILLIC CAPITAL LETTER KA", Some('K')),
    ('\u{041C}', "CYRILLIC CAPITAL LETTER EM", Some('M')),
    ('\u{041D}', "CYRILLIC CAPITAL LETTER EN", Some('H')),
    ('\u{041E}', "CYRILLIC CAPITAL LETTER O", Some('O')),
    ('\u{0420}', "CYRILLIC CAPITAL LETTER ER", Some('P')),
    ('\u{0421}', "CYRILLIC CAPITAL LETTER ES", Some('C')),
    ('\u{0422}', "CYRILLIC CAPITAL LETTER TE", Some('T')),
    ('\u{0425}', "CYRILLIC CAPITAL LETTER HA", Some('X')),
    ('\u{0430}', "CYRILLIC SMALL LETTER A", Some('a')),
    ('\u{0435}', "CYRILLIC SMALL LETTER IE", Some('e')),
    ('\u{043E}', "CYRILLIC SMALL LETTER O", Some('o')),
    ('\u{0440}', "CYRILLIC SMALL LETTER ER", Some('p')),
    ('\u{0441}', "CYRILLIC SMALL LETTER ES", Some('c')),
    ('\u{0443}', "CYRILLIC SMALL LETTER U", Some('y')),
    ('\u{0445}', "CYRILLIC SMALL LETTER HA", Some('x')),
    ('\u{0455}', "CYRILLIC SMALL LETTER DZE", Some('s')),
    ('\u{0456}', "CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I", Some('i')),
    ('\u{0458}', "CYRILLIC SMALL LETTER JE", Some('j')),
    ('\u{0501}', "CYRILLIC SMALL LETTER KOMI DE", Some('d')),
    ('\u{0131}', "LATIN SMALL LETTER DOTLESS I", Some('i')),
    ('\u{0261}', "LATIN SMALL LETTER SCRIPT G", Some('g')),
    ('\u{FF3F}', "FULLWIDTH LOW LINE", Some('_')),
    ('\u{FF0D}', "FULLWIDTH HYPHEN-MINUS", Some('-')),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `name` is a tool name model APIs accept: `^[A-Za-z0-9_-]{1,64}$`.
    fn is_model_name(name: &str) -> bool {
        (1..=MAX_NAME).contains(&name.len()) && name.chars().all(is_name_char)
    }

    #[test]
    fn the_rule_is_the_artifacts() {
        assert!(is_model_name("lookup_order-2"));
        assert!(is_model_name(&"a".repeat(64)));
        assert!(!is_model_name(&"a".repeat(65)));
        assert!(!is_model_name(""));
        assert!(!is_model_name("look up"));
        assert!(!is_model_name("lookup_\u{043E}rder"));
    }

    #[test]
    fn look_alikes_are_named() {
        assert_eq!(code_point('\u{0430}'), "U+0430 CYRILLIC SMALL LETTER A");
        assert_eq!(code_point('\u{1F600}'), "U+1F600");
        assert_eq!(suggest("lookup_\u{043E}rder now"), "lookup_order_now");
    }
}
