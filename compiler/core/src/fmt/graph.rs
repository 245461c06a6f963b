//! Graph blocks: fields, edges `a -> b` (arrows aligned down runs of edges), routes with their
//! arms (arrows aligned), `parallel`/`map` blocks, and the `state { … }` block. Conditions stay on one line.

use super::blocks::{INDENT, Shape};
use super::cst::Node;
use super::printer::{Doc, Printer};
use tenx_grammar::Rule;

/// Line kinds that align: edges, and a route's arms.
const EDGE: u8 = 1;
const ARM: u8 = 2;

impl<'a> Printer<'a> {
    /// A graph's block.
    pub(crate) fn graph_block(&mut self, node: &Node, indent: usize) -> Doc<'a> {
        self.statements(node, node.start, indent, Printer::graph_entry)
    }

    /// One entry of a graph.
    fn graph_entry(&mut self, node: &Node, indent: usize) -> Shape<'a> {
        match node.rule {
            Rule::edge => self.arrow_line(node, EDGE),
            Rule::route => Shape::Plain(self.route(node, indent)),
            Rule::state_block => Shape::Plain(self.state_block(node, indent)),
            Rule::fork_block => Shape::Plain(self.fork_block(node, indent)),
            _ => self.block_entry(node, indent),
        }
    }

    /// `head -> target`, for edges and route arms: everything before the arrow is the head.
    fn arrow_line(&mut self, node: &Node, kind: u8) -> Shape<'a> {
        let arrow_at = node.children.iter().position(|c| c.rule == Rule::arrow);
        let (before, after) = node.children.split_at(arrow_at.unwrap_or(node.children.len()));
        let mut head = self.nil();
        for (i, child) in before.iter().enumerate() {
            if i > 0 {
                head = head.append(self.text(" "));
            }
            let part = match child.rule {
                Rule::condition => self.condition(child),
                _ => self.all_tokens(child),
            };
            head = head.append(part);
        }
        let head_width = self.flat(&head).map(|t| t.chars().count());
        let mut sep = self.nil();
        let mut tail = self.nil();
        for child in after {
            if child.rule == Rule::arrow {
                let arrow = self.all_tokens(child);
                sep = self.text(" ").append(arrow).append(self.text(" "));
            } else {
                tail = self.all_tokens(child);
            }
        }
        let tail_width = self.flat(&tail).map(|t| t.chars().count());
        let sep_width = self.flat(&sep).map_or(4, |t| t.chars().count());
        Shape::Aligned {
            kind,
            head,
            head_width,
            sep,
            sep_width,
            tail,
            tail_width,
        }
    }

    /// `route node by field { arms }`.
    fn route(&mut self, node: &Node, indent: usize) -> Doc<'a> {
        let mut doc = self.nil();
        for child in &node.children {
            match child.rule {
                Rule::kw_route => doc = doc.append(self.token(child)),
                Rule::node_ref => {
                    let name = self.all_tokens(child);
                    doc = doc.append(self.text(" ")).append(name);
                }
                Rule::route_by => {
                    for part in &child.children {
                        let printed = self.token(part);
                        doc = doc.append(self.text(" ")).append(printed);
                    }
                }
                _ => {}
            }
        }
        let open_at = node
            .children
            .iter()
            .take_while(|c| {
                !matches!(
                    c.rule,
                    Rule::label_arm | Rule::when_arm | Rule::else_arm | Rule::close_brace
                )
            })
            .last()
            .map_or(node.start, |c| c.end);
        let open_at = self
            .src
            .get(open_at..)
            .and_then(|s| s.find('{'))
            .map_or(open_at, |n| open_at + n);
        let arms = self.statements(node, open_at, indent + INDENT, Printer::route_arm);
        doc.append(self.text(" ")).append(arms)
    }

    /// `parallel node { … }` or `map node { … }`: the keyword, the node and an ordinary block.
    fn fork_block(&mut self, node: &Node, indent: usize) -> Doc<'a> {
        let mut doc = self.nil();
        for (i, child) in node.children.iter().enumerate() {
            let part = match child.rule {
                Rule::block => self.block(child, indent + INDENT),
                _ => self.all_tokens(child),
            };
            if i > 0 {
                doc = doc.append(self.text(" "));
            }
            doc = doc.append(part);
        }
        doc
    }

    /// One arm of a route.
    fn route_arm(&mut self, node: &Node, _indent: usize) -> Shape<'a> {
        self.arrow_line(node, ARM)
    }

    /// `state { name: TYPE "description" … }`.
    fn state_block(&mut self, node: &Node, indent: usize) -> Doc<'a> {
        let keyword = node.child(Rule::kw_state).map_or(node.start, |k| k.end);
        let keyword_doc = node.child(Rule::kw_state).map(|k| self.token(k));
        let open_at = self
            .src
            .get(keyword..)
            .and_then(|s| s.find('{'))
            .map_or(keyword, |n| keyword + n);
        let fields = self.statements(node, open_at, indent + INDENT, |printer, param, _| {
            Shape::Plain(printer.param(param))
        });
        keyword_doc
            .unwrap_or_else(|| self.nil())
            .append(self.text(" "))
            .append(fields)
    }

    /// A condition, on one line: `score < 0.5 and not (done or verdict in ["a", "b"])`.
    pub(crate) fn condition(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for (i, child) in node.children.iter().enumerate() {
            let part = match child.rule {
                Rule::cond_and | Rule::cond_not => self.condition(child),
                Rule::condition => {
                    let open = self.punct(child.start, "(");
                    let inner = self.condition(child);
                    let close = self.punct(child.end, ")");
                    open.append(inner).append(close)
                }
                Rule::comparison => self.comparison(child),
                _ => self.token(child),
            };
            if i > 0 {
                doc = doc.append(self.text(" "));
            }
            doc = doc.append(part);
        }
        doc
    }

    /// `field.path`, or `field.path OP value`.
    fn comparison(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for (i, child) in node.children.iter().enumerate() {
            let part = match child.rule {
                Rule::value => self.value(child),
                _ => self.token(child),
            };
            if i > 0 {
                doc = doc.append(self.text(" "));
            }
            doc = doc.append(part);
        }
        doc
    }
}
