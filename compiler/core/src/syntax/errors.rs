//! Turns pest errors into `TENX0001` diagnostics with human rule names.
//!
//! [`describe`] matches every grammar rule with no catch-all arm, so a new rule cannot be added
//! without giving it a name people understand.

use tenx_diagnostics::{Code, Diagnostic, FileId, Span};
use tenx_grammar::Rule;
use tenx_grammar::pest::error::{Error, ErrorVariant, InputLocation};

/// What to call a rule in "expected …" messages; `None` for rules never worth naming.
pub fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::EOI => "end of input",
        Rule::WHITESPACE | Rule::comment | Rule::line_comment | Rule::block_comment => return None,
        Rule::nl | Rule::quote | Rule::backslash | Rule::slash | Rule::star => return None,
        Rule::file | Rule::item_chunk | Rule::item_strict | Rule::entry_only => return None,
        Rule::stray_text | Rule::bad_line | Rule::balanced | Rule::missing_close => return None,
        Rule::ident_char | Rule::ident | Rule::key | Rule::arg_name | Rule::node_ref => "a name",
        Rule::kw_import => "`import`",
        Rule::kw_tag => "`tag`",
        Rule::kw_schema => "`schema`",
        Rule::kw_model => "`model`",
        Rule::kw_tool => "`tool`",
        Rule::kw_agent => "`agent`",
        Rule::kw_validator => "`validator`",
        Rule::kw_interrupt => "`interrupt`",
        Rule::kw_graph => "`graph`",
        Rule::kw_test => "`test`",
        Rule::kw_route => "`route`",
        Rule::kw_by => "`by`",
        Rule::kw_when => "`when`",
        Rule::kw_else => "`else`",
        Rule::kw_state => "`state`",
        Rule::kw_and => "`and`",
        Rule::kw_or => "`or`",
        Rule::kw_not => "`not`",
        Rule::kw_in => "`in`",
        Rule::kw_handoffs => "`handoffs`",
        Rule::handoffs_entry => "`handoffs = [...]`",
        Rule::handoff_list => "a list of handoffs",
        Rule::handoff_item => "a handoff (`agent` or `agent(payload: type)`)",
        Rule::kw_agents => "`agents`",
        Rule::agents_entry => "`agents = [...]`",
        Rule::item => "a declaration (`model`, `tool`, `agent`, `graph`, …)",
        Rule::import_decl => "an import",
        Rule::import_path => "a module path",
        Rule::import_star => "`*`",
        Rule::tag_decl => "a tag declaration",
        Rule::schema_decl => "a schema declaration",
        Rule::model_decl => "a model declaration",
        Rule::tool_decl => "a tool declaration",
        Rule::agent_decl => "an agent declaration",
        Rule::validator_decl => "a validator declaration",
        Rule::interrupt_decl => "an interrupt declaration",
        Rule::graph_decl => "a graph declaration",
        Rule::test_decl => "a test declaration",
        Rule::result_type => "`->` and a result type",
        Rule::param_list => "a parameter list",
        Rule::param => "a parameter (`name: type`)",
        Rule::optional_mark => "`?`",
        Rule::param_default => "`=` and a default value",
        Rule::type_expr | Rule::named_type => "a type",
        Rule::type_generic => "`<`",
        Rule::block | Rule::graph_block => "`{`",
        Rule::entry => "an entry (`key = value`)",
        Rule::nested_block => "a block",
        Rule::assign | Rule::equals => "`=`",
        // Error productions are never suggested.
        Rule::colon_assign | Rule::fat_arrow => return None,
        Rule::close_brace => "`}`",
        Rule::edge => "an edge (`a -> b`)",
        Rule::arrow | Rule::thin_arrow => "`->`",
        Rule::route => "a route",
        Rule::route_by => "`by`",
        Rule::label_arm => "a label arm (`\"label\" -> node`)",
        Rule::when_arm => "a `when` arm",
        Rule::else_arm => "an `else` arm",
        Rule::state_block => "a `state` block",
        Rule::fork_block => "a `parallel` or `map` block",
        Rule::kw_parallel => "`parallel`",
        Rule::kw_map => "`map`",
        Rule::condition | Rule::cond_and | Rule::cond_not | Rule::cond_atom => "a condition",
        Rule::comparison => "a comparison",
        Rule::field_ref => "a state field",
        Rule::compare_op => "a comparison operator",
        Rule::value | Rule::term => "a value",
        Rule::boolean => "`true` or `false`",
        Rule::null => "`null`",
        Rule::duration => "a duration",
        Rule::number => "a number",
        Rule::call_args => "`(`",
        Rule::reference => "a name",
        Rule::arg => "an argument",
        Rule::list => "a list",
        Rule::map => "a map",
        Rule::map_entry => "a map entry (`key: value`)",
        Rule::map_key => "a map key",
        Rule::path => "a name",
        Rule::string | Rule::string_body => "a string",
        Rule::string_escape => "an escape sequence",
        Rule::text_block | Rule::text_body | Rule::raw_mark => "a text block",
    })
}

/// The token found at `offset`, for "found …": a word, a symbol, or "end of input".
pub fn found_at(text: &str, offset: usize) -> String {
    let rest = text.get(offset..).unwrap_or("");
    let Some(first) = rest.chars().next() else {
        return "end of input".to_string();
    };
    if first == '\n' || first == '\r' {
        return "end of line".to_string();
    }
    let token: String = if first.is_alphanumeric() || first == '_' {
        rest.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .take(40)
            .collect()
    } else {
        let two: String = rest.chars().take(2).collect();
        if ["->", "=>", "==", "!=", "<=", ">=", "\"\"", "//", "/*"].contains(&two.as_str()) {
            two
        } else {
            first.to_string()
        }
    };
    format!("`{token}`")
}

/// The offset a pest error points at.
pub fn offset(error: &Error<Rule>) -> usize {
    match error.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    }
}

/// Whether a pest error is at the very start of its input (nothing could be read).
pub fn at_start(error: &Error<Rule>) -> bool {
    matches!(error.location, InputLocation::Pos(0))
}

/// Joins names as "a, b or c".
pub fn join_or(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Joins names as "a, b and c".
pub fn join_and(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A `TENX0001` diagnostic for a pest error in text that starts at byte `base` of `file`.
pub fn syntax_error(error: &Error<Rule>, text: &str, base: usize, file: FileId) -> Diagnostic {
    syntax_error_skipping(error, text, base, file, &[])
}

/// [`syntax_error`], leaving the rules in `skip` out of "expected …" (rules that cannot be right
/// where the error is, such as an edge outside a graph).
pub fn syntax_error_skipping(error: &Error<Rule>, text: &str, base: usize, file: FileId, skip: &[Rule]) -> Diagnostic {
    let offset = match error.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    let mut expected: Vec<&str> = match &error.variant {
        ErrorVariant::ParsingError { positives, .. } => positives
            .iter()
            .filter(|r| !skip.contains(r))
            .filter_map(|r| describe(*r))
            .collect(),
        ErrorVariant::CustomError { .. } => Vec::new(),
    };
    expected.sort_unstable();
    expected.dedup();
    let found = found_at(text, offset);
    let message = if expected.is_empty() {
        format!("unexpected {found}")
    } else {
        format!("expected {}, found {found}", join_or(&expected))
    };
    let width = text
        .get(offset..)
        .and_then(|s| s.chars().next())
        .map_or(0, char::len_utf8);
    let width = if found.starts_with("`") {
        found.len().saturating_sub(2).max(width)
    } else {
        width
    };
    let width = width.min(text.len().saturating_sub(offset));
    Diagnostic::new(
        Code::TENX0001,
        message,
        file,
        Span::new(base + offset, base + offset + width),
    )
    .label("unexpected here")
}
