//! `tenxc test [PATH...] [--filter NAME] [--format human|json|junit]`: compiles each program as
//! `tenxc build` does and runs its `test` blocks on the engine (`test_run.rs`), one line per
//! test as `cargo test` prints them, then the failures with a diff of expected and actual.
//!
//! Exit status: 0 every test passed, 1 a test failed, 2 a program does not check (its
//! diagnostics are printed and no test runs), or a usage or IO error.

use crate::check_cmd::{self, Coverage, LintArgs, ReportArgs};
use crate::test_run::{self, Mismatch};
use crate::{ColorChoice, Format, files};
use clap::{Args, ValueEnum};
use miette::{Result, miette};
use quick_xml::Writer;
use quick_xml::events::BytesText;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use tenx_artifact::TrustPolicy;
use tenx_diagnostics::{Diagnostic, SourceSet};

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Files or directories whose programs' tests run (default: the current directory).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Run only the tests whose name contains this text.
    #[arg(long, value_name = "NAME")]
    pub filter: Option<String>,
    /// How to report the results.
    #[arg(long, value_enum, default_value = "human")]
    pub format: TestFormat,
    #[command(flatten)]
    pub lints: LintArgs,
}

/// Output formats for test results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TestFormat {
    /// `test NAME ... ok`, a summary, then the failures with diffs.
    Human,
    /// One JSON document with every test.
    Json,
    /// JUnit XML, for CI test reports.
    Junit,
}

/// One test's result.
struct Outcome {
    file: String,
    name: String,
    millis: u128,
    /// Why the test could not run, when it could not.
    problem: Option<String>,
    mismatches: Vec<Mismatch>,
}

impl Outcome {
    fn passed(&self) -> bool {
        self.problem.is_none() && self.mismatches.is_empty()
    }
}

pub fn run(args: &TestArgs) -> Result<ExitCode> {
    let lints = args.lints.lint_levels()?;
    let config = args.lints.config.as_deref();
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let roots = files::find_roots(&paths, config)?;
    let mut reader = files::disk_reader()?;
    let mut sources = SourceSet::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut coverage = Coverage::default();
    let mut programs = Vec::new();
    for found in &roots {
        let root = files::read_program(&mut sources, &mut reader, &found.name, config, &mut diagnostics)?;
        coverage.add(&sources, &found.name, root);
        let Some(root) = root else { continue };
        let compiled = tenx_compiler::compile(&mut sources, root, &lints);
        let clean = !compiled.diagnostics.iter().any(Diagnostic::is_error);
        diagnostics.extend(compiled.diagnostics);
        if let (Some(artifact), true) = (compiled.artifact, clean) {
            programs.push((found.name.clone(), artifact, compiled.tests));
        }
    }
    if diagnostics.iter().any(Diagnostic::is_error) {
        let report = ReportArgs {
            format: Format::Human,
            lints: args.lints.clone(),
            color: ColorChoice::Auto,
            max_diagnostics: 200,
        };
        diagnostics.retain(Diagnostic::is_error);
        check_cmd::print_diagnostics(&report, &mut diagnostics, &sources, &coverage);
        eprintln!("error: no test ran: a program does not check");
        return Ok(ExitCode::from(2));
    }
    let started = Instant::now();
    let mut outcomes = Vec::new();
    let mut filtered = 0;
    let human = args.format == TestFormat::Human;
    for (file, artifact, tests) in programs {
        let sealed = tenx_artifact::seal(artifact).map_err(|e| miette!("internal error: cannot seal `{file}`: {e}"))?;
        let loaded = tenx_artifact::load(&sealed.to_bytes(), &TrustPolicy::signature_optional())
            .map_err(|e| miette!("internal error: the engine's loader refuses `{file}`: {e}"))?;
        for test in &tests {
            if args.filter.as_ref().is_some_and(|f| !test.name.contains(f.as_str())) {
                filtered += 1;
                continue;
            }
            let clock = Instant::now();
            let (problem, mismatches) = match test_run::run(&loaded, test) {
                Ok(observed) => (None, test_run::compare(test, &observed)),
                Err(problem) => (Some(problem), Vec::new()),
            };
            let outcome = Outcome {
                file: file.clone(),
                name: test.name.clone(),
                millis: clock.elapsed().as_millis(),
                problem,
                mismatches,
            };
            if human {
                let verdict = if outcome.passed() { "ok" } else { "FAILED" };
                println!("test {} :: {} ... {verdict}", outcome.file, outcome.name);
            }
            outcomes.push(outcome);
        }
    }
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    let passed = outcomes.len() - failed;
    let seconds = started.elapsed().as_secs_f64();
    match args.format {
        TestFormat::Human => print_human(&outcomes, passed, failed, filtered, seconds),
        TestFormat::Json => println!("{}", json_report(&outcomes, passed, failed, filtered)),
        TestFormat::Junit => println!("{}", junit_report(&outcomes, seconds)?),
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_human(outcomes: &[Outcome], passed: usize, failed: usize, filtered: usize, seconds: f64) {
    let failures: Vec<&Outcome> = outcomes.iter().filter(|o| !o.passed()).collect();
    if !failures.is_empty() {
        println!("\nfailures:");
        for outcome in &failures {
            println!("\n---- {} :: {} ----", outcome.file, outcome.name);
            println!("{}", describe(outcome));
        }
        println!("\nfailures:");
        for outcome in &failures {
            println!("    {} :: {}", outcome.file, outcome.name);
        }
    }
    let verdict = if failed == 0 { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {verdict}. {passed} passed; {failed} failed; {filtered} filtered out; finished in {seconds:.2}s"
    );
}

/// Why a test failed: the problem, or each mismatched field with a diff.
fn describe(outcome: &Outcome) -> String {
    if let Some(problem) = &outcome.problem {
        return format!("the test could not run: {problem}");
    }
    outcome
        .mismatches
        .iter()
        .map(|m| {
            format!(
                "`{}` differs (- expected, + actual):\n{}",
                m.field,
                diff(&m.expected, &m.actual)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn diff(expected: &Value, actual: &Value) -> String {
    let expected = serde_json::to_string_pretty(expected).unwrap_or_default() + "\n";
    let actual = serde_json::to_string_pretty(actual).unwrap_or_default() + "\n";
    similar::TextDiff::from_lines(&expected, &actual)
        .iter_all_changes()
        .map(|change| {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            format!("{sign} {change}")
        })
        .collect()
}

fn json_report(outcomes: &[Outcome], passed: usize, failed: usize, filtered: usize) -> Value {
    let tests: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            json!({
                "file": o.file,
                "name": o.name,
                "outcome": if o.passed() { "ok" } else { "failed" },
                "millis": o.millis,
                "problem": o.problem,
                "mismatches": o.mismatches.iter().map(|m| json!({
                    "field": m.field, "expected": m.expected, "actual": m.actual,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "tests": tests, "passed": passed, "failed": failed, "filtered_out": filtered })
}

fn junit_report(outcomes: &[Outcome], seconds: f64) -> Result<String> {
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    writer
        .create_element("testsuites")
        .with_attribute(("name", "tenxc test"))
        .with_attribute(("tests", outcomes.len().to_string().as_str()))
        .with_attribute(("failures", failed.to_string().as_str()))
        .with_attribute(("time", format!("{seconds:.3}").as_str()))
        .write_inner_content(|w| {
            let mut files: Vec<&str> = outcomes.iter().map(|o| o.file.as_str()).collect();
            files.dedup();
            for file in files {
                let suite: Vec<&Outcome> = outcomes.iter().filter(|o| o.file == file).collect();
                let suite_failed = suite.iter().filter(|o| !o.passed()).count();
                w.create_element("testsuite")
                    .with_attribute(("name", file))
                    .with_attribute(("tests", suite.len().to_string().as_str()))
                    .with_attribute(("failures", suite_failed.to_string().as_str()))
                    .write_inner_content(|w| {
                        for outcome in suite {
                            let case = w
                                .create_element("testcase")
                                .with_attribute(("classname", file))
                                .with_attribute(("name", outcome.name.as_str()))
                                .with_attribute(("time", format!("{:.3}", outcome.millis as f64 / 1000.0).as_str()));
                            if outcome.passed() {
                                case.write_empty()?;
                            } else {
                                case.write_inner_content(|w| {
                                    w.create_element("failure")
                                        .with_attribute(("message", "expectations not met"))
                                        .write_text_content(BytesText::new(&describe(outcome)))?;
                                    Ok::<(), std::io::Error>(())
                                })?;
                            }
                        }
                        Ok::<(), std::io::Error>(())
                    })?;
            }
            Ok::<(), std::io::Error>(())
        })
        .map_err(|e| miette!("cannot write the JUnit report: {e}"))?;
    String::from_utf8(writer.into_inner()).map_err(|e| miette!("cannot write the JUnit report: {e}"))
}
