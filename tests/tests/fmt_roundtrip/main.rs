//! Property: `tenxc fmt` is idempotent and never changes what a program builds to, over the
//! programs of the `check_implies_build` generator (the repository's programs, mutated), each
//! also laid out badly on purpose first: lines indented at random and empty lines added, outside
//! text blocks.
//!
//! Deterministic: a fixed seed and case count by default (more cases are drawn until a quarter of
//! that count built, up to four times as many). A longer run:
//! `TENX_PROPTEST_SEED=<n> TENX_PROPTEST_CASES=<n> cargo test --release -p tenx-tests --test
//! fmt_roundtrip -- --nocapture`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

#[path = "../check_implies_build/mutate.rs"]
mod mutate;
#[path = "../check_implies_build/mutate_fork.rs"]
mod mutate_fork;
#[path = "../check_implies_build/mutate_retry.rs"]
mod mutate_retry;
#[path = "../check_implies_build/mutate_risk.rs"]
mod mutate_risk;
#[path = "../check_implies_build/seeds.rs"]
mod seeds;

use tenx_tests::formatting::{build, format};

/// The seed of a default run.
const DEFAULT_SEED: u64 = 0x0f0a_7001;

/// The number of programs of a default run.
const DEFAULT_CASES: usize = 300;

/// A number from the environment, or the default.
fn setting<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .map(|value| {
            value
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("{name} must be a number"))
        })
        .unwrap_or(default)
}

/// `text` with its layout spoiled: each line outside a text block indented by 0 to 6 more
/// spaces, and now and then an empty line after it. Neither changes what the program means.
fn spoil(rng: &mut fastrand::Rng, text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut in_text_block = false;
    for line in text.lines() {
        let opens_or_closes = line.matches("\"\"\"").count() % 2 == 1;
        if !in_text_block {
            out.push_str(&" ".repeat(rng.usize(0..=6)));
        }
        out.push_str(line);
        out.push('\n');
        if opens_or_closes {
            in_text_block = !in_text_block;
        }
        if !in_text_block && rng.u8(0..8) == 0 {
            out.push('\n');
        }
    }
    out
}

#[test]
fn formatting_mutated_programs_keeps_their_artifact() {
    let seed = setting("TENX_PROPTEST_SEED", DEFAULT_SEED);
    let cases = setting("TENX_PROPTEST_CASES", DEFAULT_CASES);
    let seeds = seeds::all();
    // The seeds that build are picked more often: mutations of them build more often.
    let clean: Vec<usize> = (0..seeds.len())
        .filter(|&i| build(&seeds[i].name, &seeds[i].text, false).is_some())
        .collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut built, mut formatted_count) = (0usize, 0usize);
    let mut failures = Vec::new();
    // At least `cases` programs, and on until a quarter of that many built (the seeds' mix moves
    // with every fixture added, and so does how many of a fixed sample build), within a bound.
    let mut case = 0;
    while case < cases || (built * 4 < cases && case < cases.saturating_mul(4)) {
        case += 1;
        let case_seed = rng.u64(..);
        let mut case_rng = fastrand::Rng::with_seed(case_seed);
        let index = if case_rng.u8(0..3) < 2 && !clean.is_empty() {
            clean[case_rng.usize(0..clean.len())]
        } else {
            case_rng.usize(0..seeds.len())
        };
        let start = &seeds[index];
        let (mutated, applied) = mutate::mutate(&mut case_rng, &start.text);
        let text = spoil(&mut case_rng, &mutated);
        let formatted = match format(&text) {
            Ok(Some(formatted)) => formatted,
            Ok(None) => continue,
            Err(at) => {
                failures.push(format!(
                    "case {case} (case seed {case_seed}): the formatter would change the program at byte {at}\n{text}"
                ));
                continue;
            }
        };
        formatted_count += 1;
        let context = || {
            format!(
                "case {case} (TENX_PROPTEST_SEED={seed}, case seed {case_seed}), from `{}`, mutations {applied:?}\n\
                 ----- program\n{text}----- formatted\n{formatted}-----",
                start.name
            )
        };
        if format(&formatted) != Ok(Some(formatted.clone())) {
            failures.push(format!("formatting twice changes it: {}", context()));
            continue;
        }
        let before = build(&start.name, &text, false);
        let after = build(&start.name, &text, true);
        if before.is_some() {
            built += 1;
        }
        let same = match (&before, &after) {
            (Some(b), Some(a)) => b.meaning == a.meaning && b.declared == a.declared,
            (None, None) => true,
            _ => false,
        };
        if !same {
            failures.push(format!("the formatted program builds differently: {}", context()));
        }
    }
    println!("fmt_roundtrip: seed {seed}, {case} programs: {formatted_count} formatted, {built} built the same");
    assert!(
        failures.is_empty(),
        "{} failures; the first ones:\n\n{}",
        failures.len(),
        failures.iter().take(3).cloned().collect::<Vec<_>>().join("\n\n")
    );
    assert!(
        built * 4 >= cases,
        "only {built} of {case} programs built (at least {} wanted); the property proves little",
        cases.div_ceil(4)
    );
}
