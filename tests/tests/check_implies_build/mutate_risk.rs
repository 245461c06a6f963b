//! The risk-rules mutation: a `risk_rules { … }` block added to a tool, with a rule of any level
//! (`prohibited` and odd names included) over a parameter of the tool or an odd name, compared
//! with a number, a string or nothing, or a condition that does not parse.

use fastrand::Rng;

/// Adds a `risk_rules` block with one or two rules to a random tool.
pub fn add_risk_rules(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let tools = super::mutate::blocks_of(lines, "tool");
    let (at, tool) = super::mutate::pick(rng, &tools)?.clone();
    let header = lines.get(at)?.clone();
    let mut params: Vec<String> = header
        .split_once('(')
        .map(|(_, rest)| {
            rest.split(',')
                .filter_map(|p| p.split_once(':'))
                .map(|(n, _)| n.trim().trim_end_matches('?').to_owned())
                .collect()
        })
        .unwrap_or_default();
    params.push("amount_cents".to_owned());
    let levels = ["low", "medium", "high", "prohibited", "hihg"];
    let mut rules = Vec::new();
    for _ in 0..rng.usize(1..=2) {
        let level = levels[rng.usize(0..levels.len())];
        let param = super::mutate::pick(rng, &params)?.clone();
        let condition = match rng.u8(0..5) {
            0 => format!("{param} > 100"),
            1 => format!("{param} == \\\"x\\\""),
            2 => param.clone(),
            3 => format!("not {param} in [1, 2] or {param} != null"),
            _ => format!("{param} is big"),
        };
        rules.push(format!("    {level} = \"{condition}\""));
    }
    let text = rules.join("; ");
    lines.insert(at + 1, "  }".to_owned());
    for rule in rules.into_iter().rev() {
        lines.insert(at + 1, rule);
    }
    lines.insert(at + 1, "  risk_rules {".to_owned());
    Some(format!("give tool `{tool}` risk rules {text}"))
}
