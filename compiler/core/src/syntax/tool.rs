//! Lowering of `tool` declarations: parameters, result, risk, approval, run binding.

use super::blocks::{Fields, expected};
use super::model::{decl_name, empty_block};
use super::{Lower, child};
use crate::ast::{Approval, Expr, ExprKind, Ident, Risk, RunBinding, SchemaRef, ToolDecl};
use tenx_diagnostics::{Code, Span};
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

impl Lower<'_> {
    pub(super) fn tool(&mut self, pair: Pair<'_, Rule>) -> ToolDecl {
        let span = self.span(&pair);
        let name = decl_name(self, &pair);
        let params = child(&pair, Rule::param_list).map(|p| self.param_list(p));
        let result = child(&pair, Rule::result_type)
            .and_then(|r| r.into_inner().next())
            .map(|t| self.type_expr(t));
        let block = child(&pair, Rule::block).map(|b| self.block(b));
        let mut fields = Fields::new(
            block.unwrap_or_else(|| empty_block(span)),
            format!("tool `{}`", name.name),
        );
        let description = fields.string(self, "description");
        let exposed_name = fields
            .string(self, "name")
            .and_then(|e| Some((e.as_str()?.to_string(), e.span)));
        // A schema name or an inline map, as `output` and `response` are: anything else (`true`)
        // is no object schema, which the model APIs and the artifact need for the arguments.
        let parameters_schema = fields.value(self, "parameters").filter(|v| match v.kind {
            ExprKind::Map(_) | ExprKind::Path(_) => true,
            _ => {
                expected(self, "parameters", "a schema name or an inline JSON Schema `{ … }`", v);
                false
            }
        });
        if let (Some(schema), Some(_)) = (&parameters_schema, &params) {
            let d = self
                .diag(
                    Code::TENX0108,
                    format!("tool `{}` has both a parameter list and `parameters`", name.name),
                    schema.span,
                )
                .label("second definition of the parameters")
                .help("keep either the parameter list or the inline `parameters` schema");
            self.report(d);
        }
        let tags = fields.ident_list(self, "tags");
        let risk = fields.value(self, "risk").and_then(|v| self.risk(&v));
        let mut risk_rules = fields
            .block(self, "risk_rules")
            .map(|(_, block)| self.risk_rules(block))
            .unwrap_or_default();
        self.prohibited_with_rules(risk, &mut risk_rules);
        let approval = fields
            .block(self, "approval")
            .map(|(key, block)| self.approval(key, block));
        let idempotency_key = fields.string(self, "idempotency_key");
        // The parameters the runtime fills; what each source means is checked in
        // `check/bound_args`.
        let bind = fields.value(self, "bind");
        // How a failed call is attempted again; read and checked in `check/retries`.
        let retry = fields.value(self, "retry");
        let run = fields
            .value(self, "run")
            .and_then(|v| self.run_binding(&v).map(|r| (r, v.span)));
        fields.require(
            self,
            &description,
            "description",
            "description = \"what the tool does\"",
        );
        fields.require(self, &run, "run", "run = http(POST, \"https://…\")");
        fields.finish(self);
        ToolDecl {
            name,
            params,
            result,
            parameters_schema,
            description,
            exposed_name,
            tags,
            risk,
            approval,
            idempotency_key,
            run,
            span,
            bind,
            risk_rules,
            retry,
        }
    }

    fn risk(&mut self, v: &Expr) -> Option<(Risk, Span)> {
        let risk = match v.as_ident().map(|i| i.name.as_str()) {
            Some("low") => Risk::Low,
            Some("medium") => Risk::Medium,
            Some("high") => Risk::High,
            Some("prohibited") => Risk::Prohibited,
            _ => {
                let help = v
                    .as_ident()
                    .and_then(|i| crate::suggest::did_you_mean(&i.name, &["low", "medium", "high", "prohibited"]))
                    .map(|s| format!("did you mean `{s}`?"));
                let d = self
                    .diag(
                        Code::TENX0108,
                        "`risk` must be `low`, `medium`, `high` or `prohibited`",
                        v.span,
                    )
                    .label("unknown risk level")
                    .maybe_help(help);
                self.report(d);
                return None;
            }
        };
        Some((risk, v.span))
    }

    fn approval(&mut self, key: Ident, block: super::blocks::BlockData) -> Approval {
        let mut fields = Fields::new(block, "`approval`".to_string());
        let message = fields.string(self, "message");
        let reason = fields.string(self, "reason");
        let response = fields
            .value(self, "response")
            .and_then(|v| self.schema_ref("response", v));
        let expires = fields.duration(self, "expires");
        let on_reject = fields.string(self, "on_reject");
        let evidence = fields.list(self, "evidence");
        let inputs = self.approval_inputs(&mut fields);
        let decision = fields.value(self, "decision");
        let feedback = fields.string(self, "feedback");
        fields.require(self, &message, "message", "message = \"Approve …?\"");
        fields.finish(self);
        Approval {
            message,
            reason,
            response,
            expires,
            on_reject,
            evidence,
            span: key.span,
            target: inputs.target,
            approvers: inputs.approvers,
            separate_duties: inputs.separate_duties,
            decision,
            feedback,
        }
    }

    /// A schema name or an inline schema map.
    pub(super) fn schema_ref(&mut self, field: &str, v: Expr) -> Option<SchemaRef> {
        match &v.kind {
            ExprKind::Map(_) => Some(SchemaRef::Inline(v)),
            ExprKind::Path(p) => p.last().cloned().map(SchemaRef::Named),
            _ => {
                expected(self, field, "a schema name or an inline JSON Schema `{ … }`", &v);
                None
            }
        }
    }

    fn run_binding(&mut self, v: &Expr) -> Option<RunBinding> {
        let bad = |lower: &mut Self, message: &str, span: Span| {
            let d = lower
                .diag(Code::TENX0108, message.to_string(), span)
                .label("not a run binding")
                .help("use `http(POST, \"https://…\", timeout: 10s)`, `remote`, `native(\"name\")`, `builtin(name)` or `mcp(server: \"…\", tool: \"…\")`");
            lower.report(d);
            None
        };
        match &v.kind {
            ExprKind::Path(p) if p.len() == 1 && p.first().is_some_and(|i| i.name == "remote") => {
                Some(RunBinding::Remote)
            }
            ExprKind::Call { callee, args } if callee.len() == 1 => {
                let kind = callee.first().map(|i| i.name.as_str()).unwrap_or("");
                let positional: Vec<&Expr> = args.iter().filter(|a| a.name.is_none()).map(|a| &a.value).collect();
                let named = |n: &str| {
                    args.iter()
                        .find(|a| a.name.as_ref().is_some_and(|i| i.name == n))
                        .map(|a| &a.value)
                };
                for arg in args.iter().filter_map(|a| a.name.as_ref()) {
                    let allowed: &[&str] = match kind {
                        "http" => &["method", "url", "timeout", "headers"],
                        "mcp" => &["server", "tool"],
                        _ => &[],
                    };
                    if !allowed.contains(&arg.name.as_str()) {
                        let d = self
                            .diag(
                                Code::TENX0108,
                                format!("`{kind}` has no argument `{}`", arg.name),
                                arg.span,
                            )
                            .label("unknown argument");
                        self.report(d);
                    }
                }
                match kind {
                    "http" => {
                        let method = named("method").or(positional.first().copied());
                        let url = named("url").or(positional.get(1).copied());
                        let method = match method.and_then(|m| m.as_ident()) {
                            Some(m) if ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&m.name.as_str()) => {
                                m.clone()
                            }
                            _ => {
                                return bad(
                                    self,
                                    "`http` needs a method: `GET`, `POST`, `PUT`, `PATCH` or `DELETE`",
                                    method.map_or(v.span, |m| m.span),
                                );
                            }
                        };
                        let Some(url) = url.filter(|u| u.as_str().is_some()).cloned() else {
                            return bad(self, "`http` needs a URL string", v.span);
                        };
                        let timeout_ms = match named("timeout") {
                            Some(Expr {
                                kind: ExprKind::Duration(ms),
                                ..
                            }) => Some(*ms),
                            Some(other) => {
                                expected(self, "timeout", "a duration such as `10s`", other);
                                None
                            }
                            None => None,
                        };
                        let headers = match named("headers") {
                            Some(
                                map @ Expr {
                                    kind: ExprKind::Map(_), ..
                                },
                            ) => Some(map.clone()),
                            Some(other) => {
                                expected(
                                    self,
                                    "headers",
                                    "a map of header names to strings, such as `{ \"Authorization\": \"Bearer ${TOKEN}\" }`",
                                    other,
                                );
                                None
                            }
                            None => None,
                        };
                        Some(RunBinding::Http {
                            method,
                            url,
                            timeout_ms,
                            headers,
                        })
                    }
                    "builtin" => match positional.first().and_then(|e| e.as_ident()) {
                        Some(i) => Some(RunBinding::Builtin(i.clone())),
                        None => bad(
                            self,
                            "`builtin` needs the builtin's name: `builtin(current_time)`",
                            v.span,
                        ),
                    },
                    "mcp" => {
                        let server = named("server").or(positional.first().copied()).and_then(|e| e.as_str());
                        let tool = named("tool").or(positional.get(1).copied()).and_then(|e| e.as_str());
                        match server {
                            Some(server) => Some(RunBinding::Mcp {
                                server: server.to_string(),
                                tool: tool.map(str::to_string),
                            }),
                            None => bad(self, "`mcp` needs a server name: `mcp(server: \"files\")`", v.span),
                        }
                    }
                    "native" => match positional.first().and_then(|e| Some((e.as_str()?, e.span))) {
                        Some((name, span)) if positional.len() == 1 => Some(RunBinding::Native {
                            name: name.to_string(),
                            span,
                        }),
                        _ => bad(
                            self,
                            "`native` needs the handler's name as one string: `native(\"crm.lookup\")`",
                            v.span,
                        ),
                    },
                    "remote" => Some(RunBinding::Remote),
                    _ => bad(
                        self,
                        "`run` must be `http(…)`, `remote`, `native(…)`, `builtin(…)` or `mcp(…)`",
                        v.span,
                    ),
                }
            }
            _ => bad(
                self,
                "`run` must be `http(…)`, `remote`, `native(…)`, `builtin(…)` or `mcp(…)`",
                v.span,
            ),
        }
    }
}
