//! Lowering of values: strings (escapes), text blocks (indentation), numbers, durations, names,
//! calls, lists, maps and `+` joins.

use super::{Lower, children};
use crate::ast::{Arg, Expr, ExprKind, MapEntry};
use tenx_diagnostics::{Code, Span};
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

impl Lower<'_> {
    /// A `value` (or any term) pair as an expression.
    pub fn value(&mut self, pair: Pair<'_, Rule>) -> Expr {
        let span = self.span(&pair);
        match pair.as_rule() {
            Rule::value => {
                let mut terms: Vec<Expr> = pair.into_inner().map(|t| self.value(t)).collect();
                if terms.len() == 1
                    && let Some(term) = terms.pop()
                {
                    return term;
                }
                Expr {
                    kind: ExprKind::Join(terms),
                    span,
                }
            }
            Rule::string => Expr {
                kind: ExprKind::Str(self.string(&pair)),
                span,
            },
            Rule::text_block => Expr {
                kind: ExprKind::Text(self.text_block(&pair)),
                span,
            },
            Rule::duration => {
                let kind = match duration_ms(pair.as_str()) {
                    Some(ms) => ExprKind::Duration(ms),
                    None => {
                        let d = self
                            .diag(Code::TENX0108, "duration is too long", span)
                            .label("does not fit in 64 bits of milliseconds");
                        self.report(d);
                        ExprKind::Duration(u64::MAX)
                    }
                };
                Expr { kind, span }
            }
            Rule::number => {
                let kind = match number(pair.as_str()) {
                    Some(n) => ExprKind::Number(n),
                    None => {
                        let d = self
                            .diag(Code::TENX0108, "number is out of range", span)
                            .label("not a finite number");
                        self.report(d);
                        ExprKind::Null
                    }
                };
                Expr { kind, span }
            }
            Rule::boolean => Expr {
                kind: ExprKind::Bool(pair.as_str() == "true"),
                span,
            },
            Rule::null => Expr {
                kind: ExprKind::Null,
                span,
            },
            Rule::path => Expr {
                kind: ExprKind::Path(pair.into_inner().map(|p| self.ident(&p)).collect()),
                span,
            },
            Rule::reference => {
                let mut inner = pair.into_inner();
                let path = inner.next();
                // Without arguments, the span is the path's: the rule's own span can include
                // whitespace read while looking for `(`.
                let path_span = path.as_ref().map_or(span, |p| self.span(p));
                let callee: Vec<_> = path
                    .map(|p| p.into_inner().map(|i| self.ident(&i)).collect())
                    .unwrap_or_default();
                match inner.next() {
                    Some(args) => Expr {
                        kind: ExprKind::Call {
                            callee,
                            args: self.call_args(args),
                        },
                        span,
                    },
                    None => Expr {
                        kind: ExprKind::Path(callee),
                        span: path_span,
                    },
                }
            }
            Rule::list => Expr {
                kind: ExprKind::List(pair.into_inner().map(|v| self.value(v)).collect()),
                span,
            },
            Rule::map => {
                let entries = pair
                    .into_inner()
                    .filter_map(|entry| {
                        let mut inner = entry.into_inner();
                        let key_pair = inner.next()?.into_inner().next()?;
                        let key_span = self.span(&key_pair);
                        let key = match key_pair.as_rule() {
                            Rule::string => self.string(&key_pair),
                            _ => key_pair.as_str().to_string(),
                        };
                        let value = self.value(inner.next()?);
                        Some(MapEntry { key, key_span, value })
                    })
                    .collect();
                Expr {
                    kind: ExprKind::Map(entries),
                    span,
                }
            }
            _ => Expr {
                kind: ExprKind::Null,
                span,
            },
        }
    }

    /// The arguments of a `call_args` pair.
    pub fn call_args(&mut self, pair: Pair<'_, Rule>) -> Vec<Arg> {
        pair.into_inner()
            .filter_map(|arg| {
                let mut name = None;
                let mut value = None;
                for part in arg.into_inner() {
                    match part.as_rule() {
                        Rule::arg_name => name = part.into_inner().next().map(|i| self.ident(&i)),
                        _ => value = Some(self.value(part)),
                    }
                }
                Some(Arg { name, value: value? })
            })
            .collect()
    }

    /// The decoded text of a `string` pair; bad escapes are reported and kept as written.
    /// `\{`, `\}` and `\$` stay escaped: they are template syntax, read by
    /// [`crate::template`] and by the runtime that fills templates in.
    pub fn string(&mut self, pair: &Pair<'_, Rule>) -> String {
        let Some(body) = children(pair).into_iter().next() else {
            return String::new();
        };
        let base = self.span(&body).start as usize;
        let raw = body.as_str();
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some((_, e)) = chars.next() else { break };
            match e {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '{' => out.push_str("\\{"),
                '}' => out.push_str("\\}"),
                '$' => out.push_str("\\$"),
                'u' => {
                    let rest = raw.get(i + 2..).unwrap_or("");
                    let decoded = rest
                        .strip_prefix('{')
                        .and_then(|r| r.split_once('}'))
                        .filter(|(hex, _)| (1..=6).contains(&hex.len()))
                        .and_then(|(hex, _)| Some((hex.len(), char::from_u32(u32::from_str_radix(hex, 16).ok()?)?)));
                    match decoded {
                        Some((len, ch)) => {
                            out.push(ch);
                            for _ in 0..len + 2 {
                                chars.next();
                            }
                        }
                        None => self.bad_escape(
                            base + i,
                            2,
                            "`\\u` needs a hex code point in braces, such as `\\u{1F600}`",
                        ),
                    }
                }
                other => {
                    let help = if "dDwWsSbBpPAz".contains(other) {
                        format!("write `\\\\{other}` for a backslash followed by `{other}`, as in a regular expression")
                    } else if other.is_ascii_alphanumeric() {
                        format!("write `\\\\{other}` for a backslash followed by `{other}`")
                    } else {
                        format!("to keep the `{other}`, remove the backslash")
                    };
                    self.bad_escape(base + i, 1 + other.len_utf8(), &help);
                    out.push(other);
                }
            }
        }
        out
    }

    fn bad_escape(&mut self, at: usize, len: usize, help: &str) {
        let written = self.text_between(at, at + len);
        let d = self
            .diag(
                Code::TENX0008,
                format!("unknown escape sequence `{written}`"),
                Span::new(at, at + len),
            )
            .label("not a valid escape")
            .help(help)
            .note(format!("the escapes are {KNOWN_ESCAPES}"));
        self.report(d);
    }

    /// The text of a `"""` block: first newline dropped, common indentation removed. Text
    /// blocks are raw (no escapes); `\{` and `\}` stay as written, like in strings.
    ///
    /// A raw text block (`raw"""…"""`) has no placeholders: its `{` and `}` are stored escaped
    /// (`\{`, `\}`), which is how every template writes a literal brace.
    pub fn text_block(&mut self, pair: &Pair<'_, Rule>) -> String {
        let parts = children(pair);
        let is_raw = parts.iter().any(|p| p.as_rule() == Rule::raw_mark);
        let body = parts
            .iter()
            .find(|p| p.as_rule() == Rule::text_body)
            .map_or("", |b| b.as_str());
        let text = dedent(body);
        if is_raw {
            text.replace('{', "\\{").replace('}', "\\}")
        } else {
            text
        }
    }
}

/// The escapes a string may hold, for help texts.
const KNOWN_ESCAPES: &str = "`\\\"` `\\\\` `\\n` `\\t` `\\r` `\\{` `\\}` `\\$` `\\u{…}`";

/// Removes the first newline, a whitespace-only last line, and the common indentation.
pub fn dedent(raw: &str) -> String {
    let body = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .unwrap_or(raw);
    let body = match body.rfind('\n') {
        Some(n) if body.get(n + 1..).is_some_and(|tail| tail.trim().is_empty()) => body.get(..n).unwrap_or(body),
        _ => body,
    };
    let indent = body
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    body.lines()
        .map(|l| l.get(indent..).unwrap_or(l.trim_start_matches([' ', '\t'])))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Milliseconds in a duration literal such as `24h`.
pub fn duration_ms(text: &str) -> Option<u64> {
    let digits_end = text.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = text.split_at(digits_end);
    let n: u64 = digits.parse().ok()?;
    let factor = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    n.checked_mul(factor)
}

/// A JSON number from a number literal: an integer when it fits, else a finite float.
pub fn number(text: &str) -> Option<serde_json::Number> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(i.into());
    }
    text.parse::<f64>().ok().and_then(serde_json::Number::from_f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedents_text_blocks() {
        assert_eq!(dedent("\n    one\n      two\n    "), "one\n  two");
        assert_eq!(dedent("inline"), "inline");
    }

    #[test]
    fn durations() {
        assert_eq!(duration_ms("24h"), Some(86_400_000));
        assert_eq!(duration_ms("500ms"), Some(500));
        assert_eq!(duration_ms("99999999999999999999d"), None);
    }

    #[test]
    fn numbers() {
        assert_eq!(number("42"), Some(42.into()));
        assert!(number("1e999").is_none());
    }
}
