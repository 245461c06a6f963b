//! `TENX0803`: string literals that look like secrets (API keys, tokens, private keys) in the
//! program's own files. The check reads the raw text of each file, so it sees every literal
//! (descriptions, prompts, URLs, defaults, map values, test blocks) with its exact position, and
//! never prints the secret: a diagnostic names only the kind of secret.

use super::Facts;
use aho_corasick::AhoCorasick;
use regex::{Regex, RegexSet};
use std::sync::LazyLock;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// One kind of secret.
struct Kind {
    /// What it looks like, for the message: `an OpenAI API key`.
    what: &'static str,
    pattern: &'static str,
    /// The match must hold a digit (real keys do; prose that happens to fit rarely does).
    needs_digit: bool,
    /// Texts one of which every match contains (a test proves it from the pattern). A literal
    /// without any of them is not searched with the patterns at all.
    triggers: &'static [&'static str],
}

/// The kinds of secret, in the order they are tried: the first kind whose pattern matches a
/// literal names it.
const KINDS: &[Kind] = &[
    Kind {
        what: "a private key",
        pattern: r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----",
        needs_digit: false,
        triggers: &["-----BEGIN "],
    },
    Kind {
        what: "an Anthropic API key",
        pattern: r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
        needs_digit: true,
        triggers: &["sk-"],
    },
    Kind {
        what: "an OpenAI API key",
        pattern: r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}",
        needs_digit: true,
        triggers: &["sk-"],
    },
    Kind {
        what: "an AWS access key id",
        pattern: r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        needs_digit: false,
        triggers: &["AKIA", "ASIA"],
    },
    Kind {
        what: "a GitHub token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        needs_digit: false,
        triggers: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    },
    Kind {
        what: "a Slack token",
        pattern: r"\bxox[baprs]-[A-Za-z0-9\-]{10,}",
        needs_digit: true,
        triggers: &["xox"],
    },
    Kind {
        what: "a Google API key",
        pattern: r"\bAIza[0-9A-Za-z_\-]{35}",
        needs_digit: false,
        triggers: &["AIza"],
    },
    Kind {
        what: "a JSON Web Token",
        pattern: r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        needs_digit: false,
        triggers: &["eyJ"],
    },
    Kind {
        what: "a bearer token",
        pattern: r"\bBearer\s+[A-Za-z0-9\-._~+/]{20,}=*",
        needs_digit: true,
        triggers: &["Bearer"],
    },
];

/// Every kind's triggers in one automaton: one pass over a literal says whether any pattern
/// could match it. Building it is cheap; compiling the patterns costs about as much as the rest
/// of checking a small program, so they are only compiled when a literal has a trigger.
static TRIGGERS: LazyLock<Option<AhoCorasick>> =
    LazyLock::new(|| AhoCorasick::new(KINDS.iter().flat_map(|kind| kind.triggers)).ok());

/// The compiled patterns: one set to find whether any kind matches, and each pattern to find
/// where. `None` if a pattern failed to compile (they are constants; a test proves they do).
struct Patterns {
    set: RegexSet,
    each: Vec<Regex>,
}

static PATTERNS: LazyLock<Option<Patterns>> = LazyLock::new(|| {
    let set = RegexSet::new(KINDS.iter().map(|kind| kind.pattern)).ok()?;
    let each = KINDS
        .iter()
        .map(|kind| Regex::new(kind.pattern))
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    Some(Patterns { set, each })
});

/// Reports the secret-looking literals of every file of the program that is not a stdlib module.
/// `skip` holds spans already reported as credentials (`TENX0802`).
pub(super) fn check(facts: &Facts<'_>, skip: &[(FileId, Span)], diagnostics: &mut Vec<Diagnostic>) {
    for file in facts.own_files() {
        let Some(source) = facts.sources.get(file) else {
            continue;
        };
        if source.name.starts_with("<stdlib>") {
            continue;
        }
        for (start, body) in string_literals(&source.text) {
            let span = Span::new(start, start + body.len());
            if skip
                .iter()
                .any(|(f, s)| *f == file && s.start <= span.start && span.end <= s.end)
            {
                continue;
            }
            if let Some((kind, found)) = find_secret(body) {
                diagnostics.push(report(file, Span::new(start + found.start, start + found.end), kind));
            }
        }
    }
}

/// The first secret in `text`: its kind and byte range.
fn find_secret(text: &str) -> Option<(&'static str, std::ops::Range<usize>)> {
    let triggers = TRIGGERS.as_ref()?;
    if !triggers.is_match(text) {
        return None;
    }
    let patterns = PATTERNS.as_ref()?;
    if !patterns.set.is_match(text) {
        return None;
    }
    for index in patterns.set.matches(text).iter() {
        let (Some(regex), Some(kind)) = (patterns.each.get(index), KINDS.get(index)) else {
            continue;
        };
        let accepted = regex
            .find_iter(text)
            .find(|m| !kind.needs_digit || m.as_str().bytes().any(|b| b.is_ascii_digit()));
        if let Some(m) = accepted {
            // A token at the end of a sentence: the full stop is not part of it.
            let end = m.start() + m.as_str().trim_end_matches('.').len();
            return Some((kind.what, m.start()..end));
        }
    }
    None
}

fn report(file: FileId, span: Span, kind: &str) -> Diagnostic {
    Diagnostic::new(
        Code::TENX0803,
        format!("a string literal looks like {kind}"),
        file,
        span,
    )
    .label(format!("looks like {kind}"))
    .help("remove it from the program and rotate it if it is real; read secrets from the environment: `api_key = env(\"NAME\")` for a model, `${NAME}` in an `http` URL or header value")
    .note("a secret written in the program is kept by version control and copied into the built artifact")
}

/// The string literals of a `.tenx` text: `(offset of the body, body)` for every `"…"` and
/// `"""…"""`, skipping comments. An unterminated literal ends at the end of its line (`"…"`) or
/// of the text (`"""`).
pub(crate) fn string_literals(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = text.get(i..).and_then(|r| r.find('\n')).map_or(text.len(), |n| i + n);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text
                    .get(i + 2..)
                    .and_then(|r| r.find("*/"))
                    .map_or(text.len(), |n| i + 2 + n + 2);
            }
            b'"' if text.get(i..).is_some_and(|r| r.starts_with("\"\"\"")) => {
                let start = i + 3;
                let end = text
                    .get(start..)
                    .and_then(|r| r.find("\"\"\""))
                    .map_or(text.len(), |n| start + n);
                found.push((start, text.get(start..end).unwrap_or("")));
                i = (end + 3).min(text.len());
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                loop {
                    match bytes.get(j) {
                        None | Some(b'"') | Some(b'\n') => break,
                        Some(b'\\') => {
                            // An escape: skip the next character, unless the line ends.
                            j += 1;
                            if bytes.get(j) != Some(&b'\n') {
                                j += text.get(j..).and_then(|r| r.chars().next()).map_or(0, char::len_utf8);
                            }
                        }
                        Some(_) => j += 1,
                    }
                }
                let end = j.min(text.len());
                found.push((start, text.get(start..end).unwrap_or("")));
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(text: &str) -> Option<&'static str> {
        find_secret(text).map(|(k, _)| k)
    }

    #[test]
    fn patterns_compile() {
        assert!(PATTERNS.is_some());
        assert!(TRIGGERS.is_some());
    }

    #[test]
    fn every_match_of_a_pattern_holds_one_of_its_triggers() {
        // Every match starts with one of the pattern's literal prefixes; each prefix must start
        // with a trigger, so a literal without a trigger cannot match and may be skipped.
        use regex_syntax::hir::literal::Extractor;
        for kind in KINDS {
            let hir = regex_syntax::parse(kind.pattern).unwrap();
            let prefixes = Extractor::new().extract(&hir);
            let literals = prefixes
                .literals()
                .unwrap_or_else(|| panic!("{}: no finite prefixes", kind.what));
            assert!(!literals.is_empty(), "{}", kind.what);
            for literal in literals {
                let bytes = literal.as_bytes();
                assert!(
                    kind.triggers.iter().any(|t| bytes.starts_with(t.as_bytes())),
                    "{}: prefix {:?} has none of the triggers {:?}",
                    kind.what,
                    String::from_utf8_lossy(bytes),
                    kind.triggers
                );
            }
        }
    }

    #[test]
    fn recognises_secret_shapes() {
        assert_eq!(kind_of("sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"), Some("an OpenAI API key"));
        assert_eq!(kind_of("key sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv"), Some("an OpenAI API key"));
        assert_eq!(
            kind_of("sk-ant-api03-Ab3dEf6hIj9kLm2nOp5qRs"),
            Some("an Anthropic API key")
        );
        assert_eq!(kind_of("AKIAIOSFODNN7EXAMPLE"), Some("an AWS access key id"));
        assert_eq!(
            kind_of("ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3d"),
            Some("a GitHub token")
        );
        assert_eq!(kind_of("xoxb-1234567890-abcdefghij"), Some("a Slack token"));
        assert_eq!(
            kind_of("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
            Some("a Google API key")
        );
        assert_eq!(kind_of("-----BEGIN RSA PRIVATE KEY-----"), Some("a private key"));
        assert_eq!(
            kind_of("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlX2hlcmU"),
            Some("a JSON Web Token")
        );
        assert_eq!(
            kind_of("Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
            Some("a bearer token")
        );
    }

    #[test]
    fn ignores_ordinary_text() {
        for text in [
            "Ask the customer for the order number.",
            "risk-assessment-of-the-whole-thing",
            "sk-this-is-a-long-descriptive-name",
            "Bearer ${API_TOKEN}",
            "Bearer authentication-is-required-here",
            "${ORDERS_URL}/orders/lookup",
            "-----BEGIN PUBLIC KEY-----",
        ] {
            assert_eq!(kind_of(text), None, "{text}");
        }
    }

    #[test]
    fn finds_literals_and_skips_comments() {
        let text = "// \"not this\"\n/* \"nor\n this\" */ a = \"one \\\" two\" b = \"\"\"\nthree\n\"\"\" c = \"\"";
        let bodies: Vec<&str> = string_literals(text).into_iter().map(|(_, b)| b).collect();
        assert_eq!(bodies, vec!["one \\\" two", "\nthree\n", ""]);
        let (start, body) = string_literals("x = \"abc\"")[0];
        assert_eq!(&"x = \"abc\""[start..start + body.len()], "abc");
        assert_eq!(string_literals("\"unterminated\nnext").len(), 1);
    }
}
