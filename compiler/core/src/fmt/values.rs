//! Values, types and parameters: `tagged(a) + [b]`, `{ key: value }`, `list<string>(max_items:
//! 3)`, `name?: int(min: 1) = 2 "What it is"`. Scalars (strings, text blocks, numbers,
//! durations, names) are written exactly as in the source.

use super::cst::Node;
use super::printer::{Doc, Printer};
use super::sequence::{LIST, MAP, PARENS};
use tenx_grammar::Rule;

impl<'a> Printer<'a> {
    /// A `value`: its terms joined by ` + `.
    pub(crate) fn value(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for (i, term) in node.children.iter().enumerate() {
            if i > 0 {
                doc = doc.append(self.text(" + "));
            }
            let printed = self.term(term);
            doc = doc.append(printed);
        }
        doc
    }

    /// One term of a value.
    fn term(&mut self, node: &Node) -> Doc<'a> {
        match node.rule {
            Rule::list => {
                let elements: Vec<&Node> = node.all(Rule::value).collect();
                self.bracketed(node, &elements, LIST, Printer::value)
            }
            Rule::map => self.map(node),
            Rule::reference => self.reference(node),
            _ => self.token(node),
        }
    }

    /// `{ key: value, … }`.
    pub(crate) fn map(&mut self, node: &Node) -> Doc<'a> {
        let entries: Vec<&Node> = node.all(Rule::map_entry).collect();
        self.bracketed(node, &entries, MAP, Printer::map_entry)
    }

    /// `key: value`.
    fn map_entry(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for child in &node.children {
            match child.rule {
                Rule::map_key => {
                    let key = self.all_tokens(child);
                    doc = doc.append(key).append(self.text(":"));
                }
                Rule::value => {
                    let value = self.value(child);
                    doc = doc.append(self.text(" ")).append(value);
                }
                _ => {}
            }
        }
        doc
    }

    /// A name or a call: `yes_no`, `std.approval.yes_no`, `env("KEY")`.
    fn reference(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for child in &node.children {
            let part = match child.rule {
                Rule::call_args => self.call_args(child),
                _ => self.token(child),
            };
            doc = doc.append(part);
        }
        doc
    }

    /// `(positional, named: value)`.
    pub(crate) fn call_args(&mut self, node: &Node) -> Doc<'a> {
        let args: Vec<&Node> = node.all(Rule::arg).collect();
        self.bracketed(node, &args, PARENS, Printer::arg)
    }

    /// `value` or `name: value`.
    fn arg(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for child in &node.children {
            match child.rule {
                Rule::arg_name => {
                    let name = self.all_tokens(child);
                    doc = doc.append(name).append(self.text(": "));
                }
                _ => {
                    let value = self.value(child);
                    doc = doc.append(value);
                }
            }
        }
        doc
    }

    /// A type: an inline schema (a map) or `name<T>(constraints)`.
    pub(crate) fn type_expr(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for child in &node.children {
            let part = match child.rule {
                Rule::map => self.map(child),
                Rule::named_type => self.named_type(child),
                _ => self.token(child),
            };
            doc = doc.append(part);
        }
        doc
    }

    /// `int(min: 1)`, `list<string>`, `enum("a", "b")`, a schema name.
    fn named_type(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for child in &node.children {
            let part = match child.rule {
                Rule::type_generic => {
                    let open = self.punct(child.start, "<");
                    let inner = child.children.iter().fold(self.nil(), |d, t| {
                        let printed = self.type_expr(t);
                        d.append(printed)
                    });
                    let close = self.punct(child.end.saturating_sub(1), ">");
                    open.append(inner).append(close)
                }
                Rule::call_args => self.call_args(child),
                _ => self.token(child),
            };
            doc = doc.append(part);
        }
        doc
    }

    /// `(a: int, b?: string "What b is")`.
    pub(crate) fn param_list(&mut self, node: &Node) -> Doc<'a> {
        let params: Vec<&Node> = node.all(Rule::param).collect();
        self.bracketed(node, &params, PARENS, Printer::param)
    }

    /// `name?: TYPE = default "description"`.
    pub(crate) fn param(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for child in &node.children {
            let part = match child.rule {
                Rule::ident => self.token(child),
                Rule::optional_mark => self.token(child),
                Rule::type_expr => {
                    let ty = self.type_expr(child);
                    self.text(": ").append(ty)
                }
                Rule::param_default => {
                    let value = child.children.iter().fold(self.nil(), |d, v| {
                        let printed = self.value(v);
                        d.append(printed)
                    });
                    self.text(" = ").append(value)
                }
                _ => {
                    let description = self.token(child);
                    self.text(" ").append(description)
                }
            };
            doc = doc.append(part);
        }
        doc
    }

    /// Every token of `node`, one after another with nothing between (a key, a name).
    pub(crate) fn all_tokens(&mut self, node: &Node) -> Doc<'a> {
        if super::trivia::is_token(node) {
            return self.token(node);
        }
        let mut doc = self.nil();
        for child in &node.children {
            let part = self.all_tokens(child);
            doc = doc.append(part);
        }
        doc
    }
}
