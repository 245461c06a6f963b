//! Lowering of `test` blocks: each field read into its typed form ([`TestDecl`]), with
//! shape errors (`TENX0105`–`TENX0108`) reported here; names are resolved by `check/tests.rs`.

use serde_json::{Map, Value};
use tenx_diagnostics::Span;
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

use super::blocks::{Fields, expected};
use super::model::empty_block;
use super::{Lower, child};
use crate::ast::{Expr, ExprKind, Ident, TestAnswer, TestCall, TestDecl, TestEntry, TestExpect, TestMock, TestModel};

impl Lower<'_> {
    pub(super) fn test(&mut self, pair: Pair<'_, Rule>) -> TestDecl {
        let span = self.span(&pair);
        let (name, name_span) = match child(&pair, Rule::string) {
            Some(s) => (self.string(&s), self.span(&s)),
            None => match child(&pair, Rule::ident) {
                Some(i) => (i.as_str().to_string(), self.span(&i)),
                None => (String::new(), span),
            },
        };
        let block = child(&pair, Rule::block).map(|b| self.block(b));
        let mut fields = Fields::new(block.unwrap_or_else(|| empty_block(span)), format!("test `{name}`"));
        let graph = fields.ident(self, "graph");
        let input = fields
            .string(self, "input")
            .and_then(|e| e.as_str().map(str::to_string));
        let state = fields
            .value(self, "state")
            .map(|v| self.entries("state", &v))
            .unwrap_or_default();
        let models = fields
            .value(self, "models")
            .map(|v| self.test_models(&v))
            .unwrap_or_default();
        let mocks = fields.value(self, "mocks").map(|v| self.mocks(&v)).unwrap_or_default();
        let answers = fields
            .value(self, "answers")
            .map(|v| self.answers(&v))
            .unwrap_or_default();
        let expect = match fields.block(self, "expect") {
            Some((key, block)) => {
                let mut inner = Fields::new(block, format!("the `{}` block of test `{name}`", key.name));
                let expect = self.expect(&mut inner);
                inner.finish(self);
                expect
            }
            None => TestExpect::default(),
        };
        fields.require(self, &input, "input", "input = \"Hello\"");
        fields.finish(self);
        TestDecl {
            name,
            name_span,
            graph,
            input,
            state,
            models,
            mocks,
            answers,
            expect,
            span,
        }
    }

    fn expect(&mut self, fields: &mut Fields) -> TestExpect {
        let route = fields
            .value(self, "route")
            .map(|v| super::blocks::ident_list(self, "route", &v));
        let calls = fields.value(self, "calls").map(|v| self.calls(&v));
        let approvals = fields.value(self, "approvals").map(|v| {
            list_items(&v)
                .iter()
                .filter_map(|item| match self.data("approvals", item) {
                    Some(Value::Object(map)) => Some(map),
                    Some(_) => {
                        expected(
                            self,
                            "approvals",
                            "a list of maps of question fields such as `{ message: \"…\" }`",
                            item,
                        );
                        None
                    }
                    None => None,
                })
                .collect()
        });
        let state = fields.value(self, "state").map(|v| self.entries("state", &v));
        let message = fields
            .string(self, "message")
            .and_then(|e| e.as_str().map(str::to_string));
        let status = fields.ident(self, "status").filter(|status| {
            let known = STATUSES.contains(&status.name.as_str());
            if !known {
                let found = Expr {
                    kind: ExprKind::Path(vec![status.clone()]),
                    span: status.span,
                };
                expected(self, "status", "`completed`, `interrupted` or `error`", &found);
            }
            known
        });
        let error = fields
            .string(self, "error")
            .and_then(|e| e.as_str().map(str::to_string));
        TestExpect {
            route,
            calls,
            approvals,
            state,
            message,
            status,
            error,
        }
    }

    /// A value that must be plain data (no names or calls).
    fn data(&mut self, name: &str, expr: &Expr) -> Option<Value> {
        let value = expr.to_json();
        if value.is_none() {
            expected(self, name, "plain data (strings, numbers, booleans, lists, maps)", expr);
        }
        value
    }

    /// `{ key: value, … }` with data values.
    fn entries(&mut self, name: &str, expr: &Expr) -> Vec<TestEntry> {
        let ExprKind::Map(entries) = &expr.kind else {
            expected(self, name, "a map such as `{ field: value }`", expr);
            return Vec::new();
        };
        entries
            .iter()
            .filter_map(|entry| {
                let value = self.data(&entry.key, &entry.value)?;
                Some(TestEntry {
                    key: key_ident(&entry.key, entry.key_span),
                    value,
                })
            })
            .collect()
    }

    fn test_models(&mut self, expr: &Expr) -> Vec<TestModel> {
        let ExprKind::Map(entries) = &expr.kind else {
            expected(self, "models", "a map such as `{ model: [{ text: \"Hello\" }] }`", expr);
            return Vec::new();
        };
        entries
            .iter()
            .map(|entry| {
                let turns = list_items(&entry.value)
                    .iter()
                    .filter_map(|turn| {
                        let lowered = crate::lower::script::turn(turn);
                        if lowered.is_none() {
                            expected(
                                self,
                                "models",
                                "a map of lists of turns: `{ text: \"…\" }` or `{ tool: \"name\", arguments: { … } }`",
                                turn,
                            );
                        }
                        lowered
                    })
                    .collect();
                TestModel {
                    model: key_ident(&entry.key, entry.key_span),
                    turns,
                }
            })
            .collect()
    }

    fn mocks(&mut self, expr: &Expr) -> Vec<TestMock> {
        self.entries("mocks", expr)
            .into_iter()
            .map(|entry| TestMock {
                tool: entry.key,
                results: match entry.value {
                    Value::Array(results) if !results.is_empty() => results,
                    other => vec![other],
                },
            })
            .collect()
    }

    fn answers(&mut self, expr: &Expr) -> Vec<TestAnswer> {
        list_items(expr).iter().filter_map(|item| self.answer(item)).collect()
    }

    fn answer(&mut self, item: &Expr) -> Option<TestAnswer> {
        const SHAPE: &str =
            "a list of `approve`, `reject`, `reject(\"reason\")`, `edit({ … })`, `expire` or answer maps";
        match &item.kind {
            ExprKind::Map(_) => return self.data("answers", item).map(TestAnswer::Value),
            ExprKind::Path(path) if path.len() == 1 => match path.first().map(|i| i.name.as_str()) {
                Some("approve") => return Some(TestAnswer::Approve),
                Some("reject") => return Some(TestAnswer::Reject(None)),
                Some("expire") => return Some(TestAnswer::Expire),
                _ => {}
            },
            ExprKind::Call { callee, args } if callee.len() == 1 && args.len() == 1 => {
                let arg = args.first().map(|a| &a.value);
                match (callee.first().map(|i| i.name.as_str()), arg) {
                    (Some("reject"), Some(reason)) if reason.as_str().is_some() => {
                        return Some(TestAnswer::Reject(reason.as_str().map(str::to_string)));
                    }
                    (Some("edit"), Some(arguments)) => {
                        if let Some(Value::Object(map)) = arguments.to_json() {
                            return Some(TestAnswer::Edit(map));
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        expected(self, "answers", SHAPE, item);
        None
    }

    fn calls(&mut self, expr: &Expr) -> Vec<TestCall> {
        list_items(expr)
            .iter()
            .filter_map(|item| match &item.kind {
                ExprKind::Path(path) if path.len() == 1 => path.first().map(|tool| TestCall {
                    tool: tool.clone(),
                    arguments: None,
                }),
                ExprKind::Call { callee, args } if callee.len() == 1 => {
                    let tool = callee.first()?.clone();
                    let mut arguments = Map::new();
                    for arg in args {
                        let Some(name) = &arg.name else {
                            expected(
                                self,
                                "calls",
                                "a list of tools with named arguments, as in `tool(order_id: \"1042\")`",
                                &arg.value,
                            );
                            return None;
                        };
                        arguments.insert(name.name.clone(), self.data(&name.name, &arg.value)?);
                    }
                    Some(TestCall {
                        tool,
                        arguments: Some(arguments),
                    })
                }
                _ => {
                    expected(self, "calls", "a list of tool names or `tool(name: value, …)`", item);
                    None
                }
            })
            .collect()
    }
}

/// The statuses a test can expect (`interrupted`: paused at a question or a remote call).
pub const STATUSES: [&str; 3] = ["completed", "interrupted", "error"];

/// The items of a list (a single value is a list of one).
fn list_items(expr: &Expr) -> Vec<Expr> {
    match &expr.kind {
        ExprKind::List(items) => items.clone(),
        _ => vec![expr.clone()],
    }
}

fn key_ident(key: &str, span: Span) -> Ident {
    Ident {
        name: key.to_string(),
        span,
    }
}
