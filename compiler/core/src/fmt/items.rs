//! Top-level items: `import`, `tag`, `schema`, and the declarations with a block (`model`,
//! `tool`, `agent`, `validator`, `interrupt`, `graph`, `test`), each header on one line when
//! it fits (a tool's parameters go one per line when they do not).

use super::blocks::INDENT;
use super::cst::Node;
use super::printer::{Doc, Printer};
use tenx_grammar::Rule;

impl<'a> Printer<'a> {
    /// One top-level item.
    pub(crate) fn item(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for (i, child) in node.children.iter().enumerate() {
            let (space, part) = match child.rule {
                Rule::param_list => (false, self.param_list(child)),
                Rule::result_type => {
                    let arrow = self.punct(child.start, "->");
                    let ty = child.children.iter().fold(self.nil(), |d, t| {
                        let printed = self.type_expr(t);
                        d.append(printed)
                    });
                    (true, arrow.append(self.text(" ")).append(ty))
                }
                Rule::type_expr => {
                    let equals = self.punct(child.start, "=");
                    let ty = self.type_expr(child);
                    (true, equals.append(self.text(" ")).append(ty))
                }
                Rule::block => (true, self.block(child, INDENT)),
                Rule::graph_block => (true, self.graph_block(child, INDENT)),
                _ => (true, self.all_tokens(child)),
            };
            if i > 0 && space {
                doc = doc.append(self.text(" "));
            }
            doc = doc.append(part);
        }
        doc
    }
}
