//! Blocks (`{ key = value  nested { … } }`) and the [`Fields`] reader that each construct uses
//! to take its fields, reporting unknown, duplicate, missing and mistyped ones.

use super::Lower;
use super::bad_lines::Context;
use crate::ast::{Expr, ExprKind, Ident};
use tenx_diagnostics::{Code, Span};
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

/// A block's contents, lowered.
#[derive(Debug, Clone)]
pub(crate) struct BlockData {
    /// The `{`.
    pub open: Span,
    /// Entries and nested blocks, in order.
    pub fields: Vec<Field>,
    /// The keys of lines that could not be read (already reported): such a field is not
    /// reported missing as well.
    pub broken_keys: Vec<String>,
}

impl BlockData {
    /// An empty block opened at `open`.
    pub fn new(open: Span) -> Self {
        BlockData {
            open,
            fields: Vec::new(),
            broken_keys: Vec::new(),
        }
    }
}

/// `key = value` or `key { … }`.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub key: Ident,
    pub body: FieldBody,
    /// The whole entry.
    pub span: Span,
}

#[derive(Debug, Clone)]
pub(crate) enum FieldBody {
    Value(Expr),
    Block(BlockData),
    /// `handoffs = [a, b(x: int)]`: the list of names as a value, and the payload of each item
    /// written with a parameter list (see `syntax/handoffs.rs`).
    Handoffs(Expr, Vec<crate::ast::HandoffPayload>),
}

impl Lower<'_> {
    /// A `block` pair.
    pub fn block(&mut self, pair: Pair<'_, Rule>) -> BlockData {
        let start = self.span(&pair).start as usize;
        let mut block = BlockData::new(Span::new(start, start + 1));
        for part in pair.into_inner() {
            self.block_part(part, &mut block, Context::Block);
        }
        block
    }

    /// One part of a block: an entry, a nested block, a bad line or a missing `}`. `context`
    /// says what a bad line should have been (for error messages).
    pub fn block_part(&mut self, part: Pair<'_, Rule>, block: &mut BlockData, context: Context) {
        let fields = &mut block.fields;
        let whole = self.span(&part);
        match part.as_rule() {
            Rule::entry => {
                let mut inner = part.into_inner();
                let Some(key) = inner.next().and_then(|k| k.into_inner().next()).map(|k| self.ident(&k)) else {
                    return;
                };
                let mut value = None;
                for p in inner {
                    match p.as_rule() {
                        Rule::colon_assign => {
                            let span = self.span(&p);
                            let d = self
                                .diag(Code::TENX0007, format!("`{}` is set with `:`", key.name), span)
                                .label("expected `=`")
                                .help(format!(
                                    "write `{} = …`; `:` is for map entries and parameter types",
                                    key.name
                                ));
                            self.report(d);
                        }
                        _ => value = Some(self.value(p)),
                    }
                }
                if let Some(value) = value {
                    fields.push(Field {
                        key,
                        body: FieldBody::Value(value),
                        span: whole,
                    });
                }
            }
            Rule::handoffs_entry | Rule::agents_entry => {
                if let Some(field) = self.handoffs_entry(part) {
                    fields.push(field);
                }
            }
            Rule::nested_block => {
                let mut inner = part.into_inner();
                let key = inner.next().and_then(|k| k.into_inner().next()).map(|k| self.ident(&k));
                let body = inner.next().map(|b| self.block(b));
                if let (Some(key), Some(body)) = (key, body) {
                    fields.push(Field {
                        key,
                        body: FieldBody::Block(body),
                        span: whole,
                    });
                }
            }
            Rule::bad_line => {
                // A bad line that starts on the line of the entry before it (`tools = tagged(x`
                // reads as the entry `tools = tagged` and the bad line `(x`): the whole line is
                // bad, and the entry is dropped.
                // (pest counts the whitespace after an entry as part of it: trim it.)
                let previous = fields
                    .last()
                    .filter(|f| {
                        let entry = self.text_between(f.span.start as usize, f.span.end as usize);
                        let end = f.span.start as usize + entry.trim_end().len();
                        !self.text_between(end, whole.start as usize).contains('\n')
                    })
                    .map(|f| f.span);
                let start = match previous {
                    Some(span) => {
                        fields.pop();
                        span.start as usize
                    }
                    None => whole.start as usize,
                };
                let text = self.text_between(start, whole.end as usize);
                if let Some(key) = self.bad_text(start, text, context) {
                    block.broken_keys.push(key);
                }
            }
            Rule::missing_close => self.missing_close(block.open),
            _ => {}
        }
    }
}

/// Takes a construct's fields one by one and reports what is left over.
pub(crate) struct Fields {
    fields: Vec<(Field, bool)>,
    asked: Vec<&'static str>,
    /// What the block belongs to, for messages: "tool `refund`".
    owner: String,
    open: Span,
    broken_keys: Vec<String>,
}

impl Fields {
    /// A reader over a block; `owner` is used in messages ("tool `refund`").
    pub fn new(block: BlockData, owner: String) -> Self {
        Fields {
            fields: block.fields.into_iter().map(|f| (f, false)).collect(),
            asked: Vec::new(),
            owner,
            open: block.open,
            broken_keys: block.broken_keys,
        }
    }

    /// Takes the field `name`; a second occurrence is reported as a duplicate.
    pub fn take(&mut self, lower: &mut Lower<'_>, name: &'static str) -> Option<Field> {
        self.asked.push(name);
        let mut first: Option<Field> = None;
        for (field, taken) in self.fields.iter_mut().filter(|(f, _)| f.key.name == name) {
            *taken = true;
            match &first {
                None => first = Some(field.clone()),
                Some(previous) => {
                    let d = lower
                        .diag(
                            Code::TENX0107,
                            format!("`{name}` is set twice in {}", self.owner),
                            field.key.span,
                        )
                        .label("set again here")
                        .secondary(lower.file, previous.key.span, "first set here")
                        .help("remove one of them");
                    lower.report(d);
                }
            }
        }
        first
    }

    /// Takes a field that must be a value.
    pub fn value(&mut self, lower: &mut Lower<'_>, name: &'static str) -> Option<Expr> {
        let field = self.take(lower, name)?;
        value_of(lower, name, field)
    }

    /// Takes a field that must be a block.
    pub fn block(&mut self, lower: &mut Lower<'_>, name: &'static str) -> Option<(Ident, BlockData)> {
        let field = self.take(lower, name)?;
        match field.body {
            FieldBody::Block(b) => Some((field.key, b)),
            FieldBody::Value(v) | FieldBody::Handoffs(v, _) => {
                let d = lower
                    .diag(Code::TENX0108, format!("`{name}` must be a block"), v.span)
                    .label(format!("found {}", v.describe()))
                    .help(format!("write `{name} {{ … }}`"));
                lower.report(d);
                None
            }
        }
    }

    /// Takes a field that must be a string or text block.
    pub fn string(&mut self, lower: &mut Lower<'_>, name: &'static str) -> Option<Expr> {
        let v = self.value(lower, name)?;
        if v.as_str().is_some() {
            return Some(v);
        }
        expected(lower, name, "a string", &v);
        None
    }

    /// Takes a field that must be a single name.
    pub fn ident(&mut self, lower: &mut Lower<'_>, name: &'static str) -> Option<Ident> {
        let v = self.value(lower, name)?;
        if let Some(i) = v.as_ident() {
            return Some(i.clone());
        }
        expected(lower, name, "a name", &v);
        None
    }

    /// Takes a field that must be a list of names (a single name is accepted too).
    pub fn ident_list(&mut self, lower: &mut Lower<'_>, name: &'static str) -> Vec<Ident> {
        let Some(v) = self.value(lower, name) else {
            return Vec::new();
        };
        ident_list(lower, name, &v)
    }

    /// Takes a field that must be a duration.
    pub fn duration(&mut self, lower: &mut Lower<'_>, name: &'static str) -> Option<(u64, Span)> {
        let v = self.value(lower, name)?;
        if let ExprKind::Duration(ms) = v.kind {
            return Some((ms, v.span));
        }
        expected(lower, name, "a duration such as `24h` or `30s`", &v);
        None
    }

    /// Takes a field that must be a whole number ≥ 0.
    pub fn count(&mut self, lower: &mut Lower<'_>, name: &'static str) -> Option<(u64, Span)> {
        let v = self.value(lower, name)?;
        if let Some(n) = v.as_i64().and_then(|n| u64::try_from(n).ok()) {
            return Some((n, v.span));
        }
        expected(lower, name, "a whole number", &v);
        None
    }

    /// Takes a field that must be a list of values (a single value is accepted too).
    pub fn list(&mut self, lower: &mut Lower<'_>, name: &'static str) -> Vec<Expr> {
        match self.value(lower, name) {
            Some(Expr {
                kind: ExprKind::List(items),
                ..
            }) => items,
            Some(other) => vec![other],
            None => Vec::new(),
        }
    }

    /// Reports every field nobody took, suggesting the closest known field.
    pub fn finish(self, lower: &mut Lower<'_>) {
        for (field, taken) in &self.fields {
            if *taken {
                continue;
            }
            let help = crate::suggest::did_you_mean(&field.key.name, &self.asked)
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| format!("{} has the fields {}", self.owner, list_names(&self.asked)));
            let d = lower
                .diag(
                    Code::TENX0105,
                    format!("{} has no field `{}`", self.owner, field.key.name),
                    field.key.span,
                )
                .label("unknown field")
                .help(help);
            lower.report(d);
        }
    }

    /// Reports a field this construct needs but lacks.
    pub fn require<T>(&self, lower: &mut Lower<'_>, value: &Option<T>, name: &str, example: &str) {
        // A field that is written but invalid, or on a line that could not be read, has
        // already been reported.
        let written = self.fields.iter().any(|(f, _)| f.key.name == name) || self.broken_keys.iter().any(|k| k == name);
        if value.is_none() && !lower.truncated && !written {
            let d = lower
                .diag(Code::TENX0106, format!("{} has no `{name}`", self.owner), self.open)
                .label(format!("`{name}` is required here"))
                .help(format!("add `{example}`"));
            lower.report(d);
        }
    }
}

fn list_names(names: &[&str]) -> String {
    let mut v: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    v.dedup();
    let refs: Vec<&str> = v.iter().map(String::as_str).collect();
    super::errors::join_or(&refs).replacen(" or ", " and ", 1)
}

/// Reports a field value of the wrong shape.
pub(crate) fn expected(lower: &mut Lower<'_>, name: &str, what: &str, found: &Expr) {
    let mut d = lower
        .diag(Code::TENX0108, format!("`{name}` must be {what}"), found.span)
        .label(format!("found {}", found.describe()));
    // `provider = "openai"`: a name in quotes.
    if let ExprKind::Str(text) = &found.kind
        && what.contains("name")
        && text.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        d = d.help(format!("write the name without quotes: `{text}`"));
    }
    lower.report(d);
}

/// The names of a list of names (or a single name); anything else is reported.
pub(crate) fn ident_list(lower: &mut Lower<'_>, name: &str, v: &Expr) -> Vec<Ident> {
    let items: Vec<&Expr> = match &v.kind {
        ExprKind::List(items) => items.iter().collect(),
        _ => vec![v],
    };
    let mut out = Vec::new();
    for item in items {
        match item.as_ident() {
            Some(i) => out.push(i.clone()),
            None => expected(lower, name, "a list of names", item),
        }
    }
    out
}

/// The value of a field taken for `name`; a block is reported (`TENX0108`).
pub(super) fn value_of(lower: &mut Lower<'_>, name: &str, field: Field) -> Option<Expr> {
    match field.body {
        FieldBody::Value(v) | FieldBody::Handoffs(v, _) => Some(v),
        FieldBody::Block(_) => {
            let d = lower
                .diag(
                    Code::TENX0108,
                    format!("`{name}` must be a value, not a block"),
                    field.key.span,
                )
                .label("written as a block")
                .help(format!("write `{name} = …`"));
            lower.report(d);
            None
        }
    }
}
