//! The code table: the only registry of diagnostic codes.
//!
//! Each row is `CODE "kebab-name" Severity "summary"`. The kebab name names the bad pattern, so it
//! reads after "deny" or "allow". Codes are never reused: a retired code stays here. Ranges:
//! `00xx` syntax, `01xx` names and fields, `02xx` tool names, `03xx` graph structure, `04xx`
//! schemas, `05xx` templates, `06xx` policy, `07xx` validators, `08xx` models and secrets, `09xx`
//! unused declarations, `10xx` test blocks. Every code has a catalog page `codes/TENXnnnn.md`,
//! embedded here; a retired code ([`Code::is_retired`]) keeps its row and its page.

use serde::Serialize;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The program is rejected.
    Error,
    /// The program is accepted; `--deny warnings` rejects it.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

macro_rules! code_table {
    ($( $code:ident $name:literal $severity:ident $summary:literal; )*) => {
        /// A stable diagnostic code such as `TENX0302`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[expect(missing_docs, reason = "each code is documented by its catalog page")]
        pub enum Code { $( $code, )* }

        impl Code {
            /// Every code, in table order.
            pub const ALL: &'static [Code] = &[ $( Code::$code, )* ];

            /// The code as written: `TENX0302`.
            pub fn as_str(self) -> &'static str {
                match self { $( Code::$code => stringify!($code), )* }
            }

            /// The kebab name: `unknown-node`.
            pub fn name(self) -> &'static str {
                match self { $( Code::$code => $name, )* }
            }

            /// The severity the code has unless a lint level changes it.
            pub fn default_severity(self) -> Severity {
                match self { $( Code::$code => Severity::$severity, )* }
            }

            /// One line saying what the code reports.
            pub fn summary(self) -> &'static str {
                match self { $( Code::$code => $summary, )* }
            }

            /// The catalog page (Markdown) printed by `tenxc explain`.
            pub fn page(self) -> &'static str {
                match self { $( Code::$code => include_str!(concat!("../codes/", stringify!($code), ".md")), )* }
            }
        }
    };
}

code_table! {
    TENX0001 "syntax-error"                    Error   "the text is not valid `.tenx`";
    TENX0002 "unclosed-block"                  Error   "a block opened with `{` is never closed";
    TENX0003 "unterminated-string"             Error   "a string has no closing quote";
    TENX0004 "fat-arrow"                       Error   "`=>` is written where an edge needs `->`";
    TENX0005 "nesting-too-deep"                Error   "brackets are nested deeper than the compiler accepts";
    TENX0006 "invalid-utf8"                    Error   "a source file is not valid UTF-8";
    TENX0007 "colon-assignment"                Error   "`key: value` is written where a block entry needs `key = value`";
    TENX0008 "invalid-escape"                  Error   "a string contains an unknown escape sequence";
    TENX0009 "test-block-not-run"              Warning "retired: `test` blocks run with `tenxc test`; this code is no longer reported";
    TENX0010 "unterminated-comment"            Error   "a `/*` comment has no closing `*/`";
    TENX0011 "look-alike-character"            Error   "code holds a non-ASCII look-alike or invisible character, such as a no-break space or a curly quote";
    TENX0012 "single-quoted-string"            Error   "a string is written in single quotes";
    TENX0013 "missing-comma"                   Error   "two parameters or arguments follow each other without a `,`";
    TENX0014 "non-ascii-name"                  Error   "a name holds a letter that is not ASCII";
    TENX0015 "chained-edge"                    Error   "edges are chained (`a -> b -> c`) instead of written one by one";
    TENX0016 "misspelt-keyword"                Error   "a keyword, or `END`, is misspelt or in the wrong case";
    TENX0101 "unknown-name"                    Error   "a name is used but never declared";
    TENX0102 "wrong-kind"                      Error   "a name refers to a declaration of the wrong kind";
    TENX0103 "duplicate-declaration"           Error   "a name is declared more than once";
    TENX0104 "unresolved-import"               Error   "an import names a module, declaration or file that does not exist";
    TENX0105 "unknown-field"                   Error   "a block contains a field it does not have";
    TENX0106 "missing-field"                   Error   "a block lacks a field it needs";
    TENX0107 "duplicate-field"                 Error   "a field is set twice in one block";
    TENX0108 "invalid-value"                   Error   "a field's value has the wrong shape";
    TENX0109 "unknown-tag"                     Error   "a tag is used but never declared";
    TENX0110 "unknown-type"                    Error   "a parameter or state field has a type that does not exist";
    TENX0111 "duplicate-parameter"             Error   "a parameter or state field is declared twice";
    TENX0112 "import-outside-project"          Error   "an import resolves to a file outside the project folder";
    TENX0113 "import-not-a-file"               Error   "an import names a directory, a device or anything else that is not a regular file";
    TENX0114 "import-too-large"                Error   "an imported file is larger than a source file may be";
    TENX0115 "reserved-name"                   Error   "a declaration is named `END`, which the language reserves";
    TENX0116 "builtin-outside-stdlib"          Error   "a tool or validator outside the standard library runs `builtin(…)`";
    TENX0117 "invalid-header-name"             Error   "an `http` header name is not an HTTP token";
    TENX0118 "reserved-header"                 Error   "an `http` tool sets a header the runtime writes itself";
    TENX0119 "duplicate-header"                Error   "an `http` tool sets one header twice, compared case-insensitively";
    TENX0201 "tool-name-collision"             Error   "two tools visible to one agent claim the same name";
    TENX0202 "reserved-handoff-name"           Error   "a tool that is not a handoff is named `transfer_to_*`";
    TENX0203 "handoff-name-collision"          Error   "a handoff's generated tool name collides with another name";
    TENX0204 "empty-tool-name"                 Error   "a tool is exposed to the model with an empty `name`";
    TENX0205 "tool-name-character"             Error   "a model-visible tool name has an ASCII character other than `A-Z a-z 0-9 _ -`";
    TENX0206 "non-ascii-tool-name"             Error   "a model-visible tool name has a non-ASCII character, such as a look-alike letter";
    TENX0207 "tool-name-too-long"              Error   "a model-visible tool name is longer than 64 characters";
    TENX0208 "handoff-name-too-long"           Error   "an agent's name makes a handoff's generated `transfer_to_…` tool name longer than 64 characters";
    TENX0209 "parameter-bound-twice"           Error   "a tool's `bind` names the same parameter twice";
    TENX0210 "malformed-agent-input"           Error   "an agent's `input` is not `conversation`, `none`, `last(N)` with a whole number, or a template string";
    TENX0211 "agent-tool-hands-off"            Error   "an agent used as a tool has `handoffs` of its own";
    TENX0212 "agent-tool-name-taken"           Error   "an agent tool's name is also the name of one of the calling agent's tools or handoff tools";
    TENX0213 "agent-tool-cycle"                Error   "agents call each other as tools in a circle, or an agent lists itself in `agents`";
    TENX0301 "missing-entry"                   Error   "a graph has no entry node";
    TENX0302 "unknown-node"                    Error   "an edge, route or entry names a node the graph does not have";
    TENX0303 "unreachable-node"                Error   "a node cannot be reached from the graph's entry";
    TENX0304 "no-path-to-end"                  Error   "a node has no path to `END`, or no way on when it succeeds (only its `on_error` handler leaves it)";
    TENX0305 "cycle-without-exit"              Error   "a cycle of nodes has no way out";
    TENX0306 "cycle-exits-by-recursion-limit"  Warning "a cycle ends only when the recursion limit stops the run";
    TENX0307 "route-without-fallback"          Error   "a conditional route has no `else` arm";
    TENX0308 "route-label-not-produced"        Error   "a route arm handles a label that its field never holds";
    TENX0309 "route-label-not-handled"         Warning "a label the route's field can hold has no arm of its own";
    TENX0310 "handoff-target-not-in-graph"     Error   "a handoff names something that is not an agent node of the same graph";
    TENX0311 "handoff-without-edge"            Error   "a handoff has no declared edge from the agent to its target";
    TENX0312 "ambiguous-successor"             Error   "a node has more than one way to continue and nothing to choose between them";
    TENX0313 "unknown-state-field"             Error   "a route or template reads a state field the graph does not declare";
    TENX0314 "edge-from-end"                   Error   "an edge or route leaves `END`";
    TENX0315 "condition-type-mismatch"         Error   "a route condition compares a state field with a value of another type";
    TENX0316 "missing-default-edge"            Error   "an agent that can hand off has no edge for when it does not";
    TENX0317 "arm-after-else"                  Error   "a route arm comes after `else` and can never be taken";
    TENX0320 "self-handoff"                    Error   "an agent hands off to itself";
    TENX0321 "duplicate-handoff-edge"          Error   "the same handoff edge is declared twice in a graph";
    TENX0322 "unfillable-tool-node-parameter"  Error   "a tool node has a required parameter that no state field can fill";
    TENX0323 "duplicate-node"                  Error   "a graph lists the same node twice in `nodes`";
    TENX0324 "duplicate-route-arm"             Error   "a route has two `else` arms, or two arms for one label";
    TENX0325 "end-listed-as-node"              Error   "a graph lists the built-in `END` in its `nodes`";
    TENX0326 "entry-in-entries"                Error   "a graph's `entries` lists its `entry`";
    TENX0327 "duplicate-extra-entry"           Error   "a graph lists the same node twice in `entries`";
    TENX0328 "result-of-non-tool-node"         Error   "`results` names a node that is not a tool node";
    TENX0329 "undeclared-result-field"         Error   "`results` writes a tool's result to a state field the graph does not declare";
    TENX0330 "untyped-tool-result"             Error   "`results` writes the result of a tool that declares no result type";
    TENX0331 "result-type-mismatch"            Error   "`results` writes a tool's result to a state field that never holds its type";
    TENX0332 "duplicate-result-node"           Error   "`results` lists the same tool node or tool twice";
    TENX0333 "result-of-uncalled-tool"         Error   "`results` names a tool that is not a node of the graph and no agent node of it calls itself (a call inside an agent tool writes no state)";
    TENX0334 "result-path-unknown-property"    Error   "`results` writes to a path whose property the state field's schema does not declare";
    TENX0335 "answer-of-non-interrupt"         Error   "`answers` names a node that is not an interrupt node";
    TENX0336 "answer-property-unknown"         Error   "`answers` writes a property the interrupt's response does not declare";
    TENX0337 "answer-field-undeclared"         Error   "`answers` writes to something that is not a state field of the graph";
    TENX0338 "answer-type-mismatch"            Error   "`answers` writes an answer, or a label of it, that the state field cannot hold";
    TENX0339 "duplicate-answer-write"          Error   "`answers` writes the same answer or answer property twice";
    TENX0340 "unwritten-state-read"            Error   "a state field is read, but it is not an input and nothing writes it";
    TENX0341 "output-type-mismatch"            Error   "an agent's `output` property or handoff payload parameter writes a state field that cannot hold it";
    TENX0342 "route-label-never-written"       Error   "a route's label arm names a label no writer of its field can give";
    TENX0343 "answer-writes-approved-input"    Error   "`answers` writes an interrupt's answer into a state field that the call it approves reads, so the approval never matches the call";
    TENX0350 "visit-exit-into-itself"          Error   "a visit limit's exit is the node it limits";
    TENX0351 "node-listed-twice-in-loop-map"   Error   "a node is listed twice in `visits` or in `on_error`";
    TENX0352 "error-handler-is-the-node"       Error   "a node's `on_error` handler is the node itself";
    TENX0353 "route-ignores-answer"            Warning "a route out of an interrupt node reads nothing its answer writes into state";
    TENX0360 "retry-on-interrupt-node"         Error   "a graph's `retry` gives an interrupt node (or a subgraph node) a retry policy";
    TENX0361 "retry-without-idempotency"       Error   "a retry policy is on a tool whose repeated call could act twice: no `idempotency_key`, and no low-risk `http` call with an idempotent method";
    TENX0362 "retry-on-remote-tool"            Error   "a retry policy is on a tool the client runs (`run = remote`)";
    TENX0363 "node-listed-twice-in-retry"      Error   "a graph's `retry` lists the same node twice";
    TENX0370 "unknown-resume-mode"             Error   "a graph's `resume` is neither `entry` nor `last_agent`";
    TENX0371 "resume-without-agent-end"        Warning "a graph resumes at the last agent, but no agent node can end a run";
    TENX0372 "unknown-path-segment"            Error   "a dotted path names a field its state field's schema does not define";
    TENX0380 "fork-shape"                      Error   "a `parallel` has fewer than two branches or one twice, or a fork's branch or join is its own node or join";
    TENX0381 "fork-region"                     Error   "a branch of a fork is not a region of its own: it leads back to its fork, shares a node with another branch, is entered from outside, or holds a start; or a fork joins outside the branch it forks in";
    TENX0382 "map-over-not-list"               Error   "a `map`'s `over` is not a state field holding a list";
    TENX0383 "map-item-type"                   Error   "a `map`'s `item` is not a state field, is its `over`, or cannot hold the list's items";
    TENX0390 "branch-write-conflict"           Error   "a state field is written by two branches of one fork, or by a map's branch, and has no reducer";
    TENX0391 "reducer-type"                    Error   "a reducer does not fit its field: `append` on a non-list, `merge` on a non-object, `sum` on a non-number, or a field the graph does not declare";
    TENX0392 "reducer-order"                   Error   "a `last(…)` names a node that starts no parallel branch, one twice, or leaves out a branch that writes the field; or another reduction has arguments";
    TENX0393 "unused-reducer"                  Warning "a reducer names a field no branch of any fork writes";
    TENX0373 "typed-field-output"              Error   "an agent's `output` is a typed field such as `string`, not the schema of an object";
    TENX0384 "subgraph-cycle"                  Error   "a graph runs itself as a subgraph, directly or through other graphs";
    TENX0385 "subgraph-nesting"                Error   "retired: subgraphs nest, with forks and inside branches; this code is no longer reported";
    TENX0386 "subgraph-mapping"                Error   "a subgraph mapping names a field that is not a state field, maps a value its field cannot hold, leaves a required inner field unfilled, or maps a node that is not a subgraph node";
    TENX0401 "invalid-schema"                  Error   "a JSON Schema is not valid under draft 2020-12";
    TENX0402 "required-not-in-properties"      Error   "a schema requires a property it does not define";
    TENX0403 "default-mismatch"                Error   "a default or example does not match its own schema";
    TENX0404 "response-schema-not-object"      Error   "an approval response schema does not describe an object";
    TENX0405 "unknown-schema-keyword"          Warning "a JSON Schema uses a keyword that draft 2020-12 does not define";
    TENX0406 "invalid-type-constraint"         Error   "a type's constraint is unknown, mistyped or contradictory";
    TENX0407 "schema-nested-too-deep"          Error   "a schema nests too deep once the named schemas it uses are filled in";
    TENX0408 "recursive-schema"                Error   "a named schema contains itself, directly or through other schemas";
    TENX0409 "response-without-decision"       Error   "a custom approval response does not say which answer approves";
    TENX0410 "decision-on-fixed-response"      Error   "a `decision` is given for a response whose meaning is fixed";
    TENX0411 "malformed-decision"              Error   "a `decision` is not a map of `field`, `approve` and optional `edit` and `respond`";
    TENX0412 "decision-field-not-required"     Error   "a `decision` field is not a required property of the response";
    TENX0413 "unreadable-decision-field"       Error   "a `decision` field is not a boolean or a fixed set of strings";
    TENX0414 "impossible-decision-value"       Error   "a `decision` value is one its field can never hold";
    TENX0415 "unknown-feedback-property"       Error   "`feedback` names a property the response schema does not define";
    TENX0416 "feedback-not-a-string"           Error   "`feedback` names a response property that is not a string";
    TENX0417 "respond-without-tool-result"     Error   "a response that can `respond` defines no `tool_result` property";
    TENX0420 "unknown-schema-reference"        Error   "a name in a schema position of an inline JSON Schema names no schema or type";
    TENX0421 "schema-name-as-data"             Error   "a schema name is written where an inline JSON Schema holds JSON data";
    TENX0501 "unknown-placeholder"             Error   "a template placeholder names no parameter or state field";
    TENX0502 "malformed-placeholder"           Error   "a template has an unclosed or empty `{}` placeholder";
    TENX0601 "high-risk-without-approval"      Error   "a `high` risk tool has no approval";
    TENX0602 "prohibited-tool-visible"         Error   "a `prohibited` tool is visible to an agent or used as a node";
    TENX0603 "medium-risk-without-confirmation" Warning "a `medium` risk tool has no approval of its own and gets the default confirmation";
    TENX0604 "approval-bypass"                 Error   "a path reaches an approval-gated tool without passing its approval";
    TENX0605 "tag-matches-no-tool"             Warning "a tag selection matches no tool";
    TENX0606 "unknown-evidence"                Error   "an evidence name is neither a parameter nor a state field of every graph that can run the step";
    TENX0607 "malformed-evidence"              Error   "an evidence item is not a name or a string";
    TENX0608 "malformed-approver"              Error   "an `approvers` item is not `role(\"…\")` or `scope(\"…\")` with one string";
    TENX0609 "invalid-approver-name"           Error   "a role or scope in `approvers` is not a valid role name or `resource:action` scope";
    TENX0610 "empty-approvers"                 Error   "`approvers` is an empty list, so nobody could answer";
    TENX0611 "repeated-approver"               Warning "a role or scope is listed twice in `approvers`";
    TENX0612 "approval-nobody-may-answer"      Error   "an approval separates duties but names no approvers, so nobody could answer";
    TENX0613 "shadowed-standard-response"      Error   "a response names the program's own schema called like a standard one";
    TENX0614 "edit-without-parameters"         Error   "a tool's approval can answer `edit`, but the tool has no parameters";
    TENX0615 "edit-on-interrupt"               Error   "an interrupt's answer can `edit`, but an interrupt has no arguments";
    TENX0616 "edit-without-edited-arguments"   Error   "a response that can `edit` defines no `edited_arguments` object";
    TENX0617 "bound-name-not-a-parameter"      Error   "a tool's `bind` names something that is not one of its parameters";
    TENX0618 "unknown-binding-source"          Error   "a bound parameter's source is not `state.FIELD`, `caller.user_id`, `caller.scopes`, `caller.roles` or `caller.claim(\"name\")`";
    TENX0619 "bound-state-field-missing"       Error   "a parameter is bound to a state field that a graph where the tool can run does not declare";
    TENX0620 "binding-type-mismatch"           Error   "a bound parameter's type can never hold what its source gives";
    TENX0621 "bound-parameter-with-default"    Error   "a bound parameter has a default, which the runtime never uses";
    TENX0622 "unreadable-risk-condition"       Error   "a risk rule's condition is not a string holding a condition over the parameters";
    TENX0623 "unknown-risk-rule-level"         Error   "a `risk_rules` entry is not named `low`, `medium` or `high`";
    TENX0624 "prohibited-risk-rule"            Error   "a risk rule makes a call `prohibited`: a tool that may be prohibited must be split";
    TENX0625 "risk-rule-unknown-parameter"     Error   "a risk rule's condition reads something that is not one of the tool's parameters";
    TENX0626 "risk-rule-type-mismatch"         Error   "a risk rule compares a parameter with a value its type can never hold";
    TENX0627 "rejection-reaches-approved-tool" Error   "a way a rejecting answer takes out of an approving interrupt leads into the tool it approves";
    TENX0628 "respond-on-interrupt"            Error   "an interrupt's answer can `respond`, but an interrupt has no tool call to answer";
    TENX0629 "approval-across-fork"            Error   "a tool an interrupt approves is the first node of a fork's branch or a fork's join, so its approval would cross the fork";
    TENX0630 "two-approved-tool-nodes"         Error   "an approving interrupt's ways lead to two tool nodes it approves, but its question shows one call";
    TENX0701 "invalid-regex"                   Error   "a validator's regular expression does not compile";
    TENX0702 "limit-out-of-range"              Error   "a length, count or cap is outside its allowed range";
    TENX0703 "invalid-validator-argument"      Error   "a validator is used with an argument it does not take, of the wrong type, or without one it needs";
    TENX0704 "validator-checks-nothing"        Error   "a declared validator has no pattern, keyword or length to check";
    TENX0705 "input-validator-as-output-guard" Error   "an agent's `guard` names a validator that checks client messages, not model output";
    TENX0706 "malformed-retry-policy"          Error   "a retry policy is not a map of `attempts`, `backoff`, `max_backoff` and `on`, or has a key it does not know, twice, or with a value of the wrong kind";
    TENX0707 "retry-attempts-out-of-range"     Error   "a retry policy's `attempts` is not 2 to 10";
    TENX0708 "bad-retry-delay"                 Error   "a retry policy's `backoff` or `max_backoff` is zero, or `backoff` is longer than `max_backoff`";
    TENX0709 "bad-retry-error-class"           Error   "a retry policy's `on` names an error class that does not exist, one twice, or none";
    TENX0801 "unknown-provider"                Error   "a model names a provider tenx does not know";
    TENX0802 "literal-credential"              Error   "a credential is written as a literal instead of `env(\"NAME\")`";
    TENX0803 "secret-literal"                  Error   "a string literal looks like a secret";
    TENX0804 "turns-on-unscripted-model"       Error   "a model that is not `scripted` has `turns`";
    TENX0805 "turns-with-rules"                Error   "a scripted model has both fixed `turns` and `rules` or a `fallback`";
    TENX0806 "rules-on-unscripted-model"       Error   "a model that is not `scripted` has `rules` or a `fallback`";
    TENX0807 "invalid-rule-regex"              Error   "a scripted rule's `match` is not a valid regex or is too large";
    TENX0808 "reserved-capture-name"           Error   "a scripted rule's regex names a capture `result`";
    TENX0809 "unknown-capture"                 Error   "a scripted turn's placeholder names no capture of its rule";
    TENX0810 "bad-conversion"                  Error   "a placeholder conversion is unknown or not the whole value of an argument";
    TENX0811 "conversion-type-mismatch"        Error   "a placeholder's value does not fit the type of the parameter it fills";
    TENX0812 "script-tool-not-visible"         Error   "a scripted turn calls a tool that an agent using the model cannot see";
    TENX0813 "script-arguments-invalid"        Error   "a scripted tool call's arguments do not match the tool's parameters";
    TENX0814 "malformed-turn"                  Error   "a scripted turn or rule has the wrong shape";
    TENX0820 "invalid-header-value"            Error   "an `http` header value is not a one-line string or holds a control character";
    TENX0821 "malformed-env-reference"         Error   "a `${` in a URL or header value does not start a well-formed `${NAME}` reference";
    TENX0822 "env-reference-outside-binding"   Error   "a `${…}` environment reference is written outside an `http` URL or header value";
    TENX0823 "credential-in-url"               Warning "an `http` URL passes a credential-like query parameter from the environment";
    TENX0824 "invalid-native-name"             Error   "a `native(…)` handler name does not follow the handler name rule";
    TENX0901 "unused-tool"                     Warning "a tool is visible to no agent and used by no graph";
    TENX0902 "unused-model"                    Warning "a model is used by no agent";
    TENX0903 "unused-validator"                Warning "a validator is used by no graph";
    TENX1001 "unknown-test-graph"              Error   "a `test` block runs a graph the program does not declare, or does not say which";
    TENX1002 "unknown-test-tool"               Error   "a `test` block mocks or expects a call of a tool the program does not declare";
    TENX1003 "unknown-test-node"               Error   "a `test` block expects a route through a node its graph does not have";
    TENX1004 "unknown-test-state-field"        Error   "a `test` block sets or expects a state field its graph does not declare";
    TENX1005 "unknown-test-model"              Error   "a `test` block scripts a model the program does not declare";
    TENX1006 "duplicate-test-name"             Error   "two `test` blocks of a file have the same name";
}

impl Code {
    /// Codes no longer reported: kept so that an old `--allow` still parses and no code is
    /// ever reused with another meaning.
    pub const RETIRED: &'static [Code] = &[Code::TENX0009, Code::TENX0385];

    /// Whether the code is retired (see [`Code::RETIRED`]).
    pub fn is_retired(self) -> bool {
        Code::RETIRED.contains(&self)
    }

    /// Looks a code up by `TENX0302`, `tenx0302` or its kebab name `unknown-node`.
    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str().eq_ignore_ascii_case(text) || c.name() == text)
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
