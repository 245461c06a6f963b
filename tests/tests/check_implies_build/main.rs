//! Property: `tenxc check` accepts only what `tenxc build` can seal. Thousands of programs,
//! made by mutating the fixtures, the examples and the catalog's and the language reference's
//! programs, are compiled the way the CLI compiles them; for every one that checks without an
//! error, lowering must give an artifact, sealing it must succeed, and loading the sealed bytes
//! must succeed. A failure prints the program, the mutations and the seeds that made it.
//!
//! The run is deterministic: a fixed seed and case count by default (a few seconds in a debug
//! build). A longer run: `TENX_PROPTEST_SEED=<n> TENX_PROPTEST_CASES=<n> cargo test -p
//! tenx-tests --test check_implies_build -- --nocapture` (see CONTRIBUTING.md).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod mutate;
mod mutate_fork;
mod mutate_retry;
mod mutate_risk;
mod seeds;

use std::panic::{AssertUnwindSafe, catch_unwind};
use tenx_artifact::{TrustPolicy, load, seal};
use tenx_compiler::LintLevels;
use tenx_diagnostics::Diagnostic;

/// The seed of a default run.
const DEFAULT_SEED: u64 = 0x7e4c_0008;

/// The number of programs of a default run.
const DEFAULT_CASES: usize = 2000;

/// What became of one program.
enum Verdict {
    /// `check` reported an error: nothing to prove.
    Refused,
    /// `check` passed, and the program built and loaded.
    Built,
    /// `check` passed but building or loading failed (or something panicked): a bug.
    Broken(String),
}

/// Compiles `text` as the root file `name`, then seals and loads the artifact.
fn build(name: &str, text: &str) -> Verdict {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let (mut sources, root, loaded) = tenx_tests::load_text(name, text, tenxc::disk::MAX_SOURCE_BYTES);
        let compiled = tenx_compiler::compile(&mut sources, root, &LintLevels::default());
        let refused = loaded.iter().chain(&compiled.diagnostics).any(Diagnostic::is_error);
        (refused, compiled.artifact)
    }));
    let (refused, artifact) = match outcome {
        Ok(result) => result,
        Err(_) => return Verdict::Broken("the compiler panicked".to_owned()),
    };
    if refused {
        return Verdict::Refused;
    }
    let Some(artifact) = artifact else {
        return Verdict::Broken("the program checked without errors but lowered to no artifact".to_owned());
    };
    let sealed = match seal(artifact) {
        Ok(sealed) => sealed,
        Err(error) => return Verdict::Broken(format!("internal error: cannot seal the artifact: {error}")),
    };
    match load(&sealed.to_bytes(), &TrustPolicy::signature_optional()) {
        Ok(_) => Verdict::Built,
        Err(error) => Verdict::Broken(format!("the sealed artifact does not load: {error}")),
    }
}

/// A number from the environment, or the default.
fn setting<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(value) => value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {value:?}")),
        Err(_) => default,
    }
}

#[test]
fn every_program_check_accepts_builds_and_loads() {
    let seed = setting("TENX_PROPTEST_SEED", DEFAULT_SEED);
    let cases = setting("TENX_PROPTEST_CASES", DEFAULT_CASES);
    let seeds = seeds::all();
    assert!(seeds.len() > 100, "only {} seed programs", seeds.len());
    // The seeds that check clean are picked more often: mutations of them pass more often.
    let clean: Vec<usize> = (0..seeds.len())
        .filter(|&i| matches!(build(&seeds[i].name, &seeds[i].text), Verdict::Built))
        .collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut refused, mut built) = (0usize, 0usize);
    // Built programs with a `parallel` or `map` block: the fork rules are exercised.
    let mut forked = 0usize;
    let mut broken = Vec::new();
    // How often each kind of failure was seen (its message up to the first backtick).
    let mut kinds: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for case in 0..cases {
        // Each case has a seed of its own, printed on failure.
        let case_seed = rng.u64(..);
        let mut case_rng = fastrand::Rng::with_seed(case_seed);
        let index = if case_rng.u8(0..3) < 2 && !clean.is_empty() {
            clean[case_rng.usize(0..clean.len())]
        } else {
            case_rng.usize(0..seeds.len())
        };
        let start = &seeds[index];
        let (text, applied) = mutate::mutate(&mut case_rng, &start.text);
        match build(&start.name, &text) {
            Verdict::Refused => refused += 1,
            Verdict::Built => {
                built += 1;
                let forks = text
                    .lines()
                    .any(|l| l.trim_start().starts_with("parallel ") || l.trim_start().starts_with("map "));
                forked += usize::from(forks);
            }
            Verdict::Broken(why) => broken.push({
                *kinds
                    .entry(why.split('`').next().unwrap_or_default().to_owned())
                    .or_default() += 1;
                format!(
                    "case {case} (TENX_PROPTEST_SEED={seed}, case seed {case_seed}), from `{}`\n\
                 mutations: {applied:?}\n{why}\n----- program\n{text}-----",
                    start.name
                )
            }),
        }
    }
    println!(
        "check_implies_build: seed {seed}, {cases} programs from {} seeds ({} clean): \
         {built} passed check and built ({forked} with a fork), {refused} refused by check, {} broken",
        seeds.len(),
        clean.len(),
        broken.len()
    );
    assert!(
        broken.is_empty(),
        "{} programs pass `check` but do not build and load ({kinds:#?}); the first ones:\n\n{}",
        broken.len(),
        broken.iter().take(5).cloned().collect::<Vec<_>>().join("\n\n")
    );
    // The property says nothing about refused programs: most of the run must be programs that
    // pass, or it proves little.
    assert!(
        built * 4 >= cases,
        "only {built} of {cases} programs passed check; the mutations are too destructive"
    );
}
