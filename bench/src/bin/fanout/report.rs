//! The table: each program's time in tenx and, where it has one, in LangGraph; beside each, its
//! time over the bare fetches on the run's critical path (one for one branch and for the
//! parallel eight, eight for the sequential ones: the stand-in's 20 ms, the timer's rounding and
//! the loopback exchange) and its CPU time per run, the framework's own cost being what is left
//! once the bare fetches are taken off; the ratios and the targets.

use std::collections::BTreeMap;
use std::time::Duration;

use tenx_bench::fanout::Program;
use tenx_bench::figures::Figures;

use crate::langgraph::LangGraph;
use crate::measure::Measured;

/// Everything one run measured.
pub(crate) struct Results {
    pub(crate) delay: Duration,
    pub(crate) tenx: BTreeMap<Program, Measured>,
    /// One bare fetch from the stand-in (POST, answer read): the floor under a run's wait.
    pub(crate) bare: Measured,
    pub(crate) skipped: Vec<(Program, String)>,
    pub(crate) langgraph: Result<LangGraph, String>,
}

/// Issue 14's targets: the parallel eight within this of one branch…
const PARALLEL_RATIO: f64 = 1.5;
/// …and LangGraph beaten by the engine benchmark's margin (its turn target, `engine`'s
/// `TURN_RATIO`), on the frameworks' own CPU per run: both wait for the same fetches, and on
/// this shared machine the wall time over the waits is mostly the scheduler's.
const LANGGRAPH_RATIO: f64 = 50.0;

pub(crate) fn print(results: &Results) {
    let lg = results.langgraph.as_ref().ok();
    let runs = results.bare.figures.samples;
    println!(
        "tenx fan-out benchmark: {}, in process, scripted models, each worker's `fetch` a real `http` call to a loopback stand-in that answers after {} ms",
        if cfg!(debug_assertions) {
            "DEBUG BUILD (not a measurement)"
        } else {
            "release"
        },
        results.delay.as_millis()
    );
    println!(
        "{runs} runs of each program and {runs} bare fetches (a new thread each run, all interleaved, after 3 unmeasured rounds)"
    );
    match &results.langgraph {
        Ok(_) => println!(
            "LangGraph beside it: bench/langgraph/fanout.py, the same flow with `Send` and its one-branch version (see its docstring for what differs)"
        ),
        Err(why) => println!("LangGraph skipped: {why}"),
    }
    println!("the engine, its tool client, the stand-in and LangGraph's Python share this machine's 2 cores\n");
    println!(
        "{:<34} {:>16} {:>7} {:>7}   {:>16} {:>7} {:>7}   {:>12}",
        "", "tenx ms", "own", "CPU", "LangGraph ms", "own", "CPU", "LG/tenx, CPU"
    );
    for program in Program::ALL {
        let Some(tenx) = results.tenx.get(&program) else {
            continue;
        };
        let theirs = lg.and_then(|lg| match program {
            Program::One => Some((lg.one, lg.bare)),
            Program::Parallel => Some((lg.parallel, lg.bare)),
            Program::Sequential => None,
        });
        let mine = Side::of(
            &tenx.figures,
            &tenx.cpu,
            &results.bare.figures,
            &results.bare.cpu,
            program,
        );
        let theirs = theirs.map(|(run, bare)| Side::of(&run.wall, &run.cpu, &bare.wall, &bare.cpu, program));
        println!(
            "{:<34} {:>16} {:>7} {:>7}   {:>16} {:>7} {:>7}   {:>12}",
            format!("{} ({})", program.label(), fetches(program)),
            timing(&tenx.figures),
            ms(mine.own_us),
            ms(tenx.cpu.median_us),
            theirs
                .as_ref()
                .map_or_else(|| "-".to_owned(), |side| timing(&side.wall)),
            theirs.as_ref().map_or_else(|| "-".to_owned(), |side| ms(side.own_us)),
            theirs.as_ref().map_or_else(|| "-".to_owned(), |side| ms(side.cpu_us)),
            theirs.as_ref().map_or_else(
                || "-".to_owned(),
                |side| format!(
                    "{}, {}",
                    ratio(side.wall.median_us / tenx.figures.median_us),
                    ratio(side.cpu_us / tenx.cpu.median_us)
                )
            ),
        );
    }
    println!(
        "{:<34} {:>16} {:>7} {:>7}   {:>16} {:>7} {:>7}",
        "bare fetch (POST, answer read)",
        timing(&results.bare.figures),
        "",
        ms(results.bare.cpu.median_us),
        lg.map_or_else(|| "-".to_owned(), |lg| timing(&lg.bare.wall)),
        "",
        lg.map_or_else(|| "-".to_owned(), |lg| ms(lg.bare.cpu.median_us)),
    );
    for (program, why) in &results.skipped {
        let label = format!("{} ({})", program.label(), fetches(*program));
        if let (Program::Parallel, Some(lg)) = (program, lg) {
            println!(
                "{label:<34} {:>16} {:>7} {:>7}   {:>16} {:>7} {:>7}",
                "skipped",
                "",
                "",
                timing(&lg.parallel.wall),
                ms(lg.parallel.wall.median_us - lg.bare.wall.median_us),
                ms(lg.parallel.cpu.median_us),
            );
        }
        println!("{label:<34} skipped: {why}");
    }
    println!();
    let median = |program| results.tenx.get(&program).copied();
    if let (Some(one), Some(parallel)) = (median(Program::One), median(Program::Parallel)) {
        let parallel_ratio = parallel.figures.median_us / one.figures.median_us;
        println!(
            "parallel 8 / one branch: {}   target ≤ {PARALLEL_RATIO}×: {}",
            ratio(parallel_ratio),
            verdict(parallel_ratio <= PARALLEL_RATIO)
        );
    } else {
        println!("parallel 8 / one branch: not measured   target ≤ {PARALLEL_RATIO}×: not checked");
    }
    if let (Some(sequential), Some(parallel)) = (median(Program::Sequential), median(Program::Parallel)) {
        println!(
            "sequential 8 / parallel 8: {}",
            ratio(sequential.figures.median_us / parallel.figures.median_us)
        );
    }
    let at_once: Vec<String> = results
        .tenx
        .iter()
        .map(|(program, measured)| format!("{}: {}", program.label(), measured.most_at_once))
        .collect();
    println!("most fetches the stand-in held at once: {}", at_once.join(", "));
    for program in [Program::One, Program::Parallel] {
        let (Some(lg), Some(tenx)) = (lg, median(program)) else {
            println!("LangGraph / tenx, {}: not measured", program.label());
            continue;
        };
        let run = if program == Program::One { lg.one } else { lg.parallel };
        let mine = Side::of(
            &tenx.figures,
            &tenx.cpu,
            &results.bare.figures,
            &results.bare.cpu,
            program,
        );
        let theirs = Side::of(&run.wall, &run.cpu, &lg.bare.wall, &lg.bare.cpu, program);
        let cpu = (mine.own_cpu_us > 0.0).then(|| theirs.own_cpu_us / mine.own_cpu_us);
        let wall = (mine.own_us > 0.0).then(|| theirs.own_us / mine.own_us);
        println!(
            "LangGraph / tenx, {}, own CPU: {}, own wall: {}   target ≥ {LANGGRAPH_RATIO}× (the engine benchmark's margin), on CPU: {}",
            program.label(),
            cpu.map_or_else(
                || "- (the bare fetches' CPU is more than the run's: concurrent fetches share wake-ups)".to_owned(),
                ratio
            ),
            wall.map_or_else(|| "- (tenx's is within the noise)".to_owned(), ratio),
            verdict(cpu.is_some_and(|cpu| cpu >= LANGGRAPH_RATIO))
        );
    }
    if let Some(lg) = lg {
        println!(
            "LangGraph parallel 8 / its one branch: {}",
            ratio(lg.parallel.wall.median_us / lg.one.wall.median_us)
        );
    }
    println!(
        "\nMedians (p90 in brackets) in ms of one full run. \"own\" is the wall median less its side's bare fetch median (tenx's http client; urllib for LangGraph) for each fetch on the run's critical path (1 for one branch and parallel 8, 8 for sequential 8), a difference of two medians, so noisy. \"CPU\" is the median CPU time of the process during a run (tenx's includes the stand-in's thread; LangGraph's Python process does not); \"own CPU\" takes off the bare fetch's CPU for each of the run's fetches."
    );
}

/// One side's figures for one program, with the bare fetches taken off.
struct Side {
    wall: Figures,
    cpu_us: f64,
    /// The wall median less the bare fetches on the critical path.
    own_us: f64,
    /// The CPU median less the bare fetches' CPU for every fetch of the run.
    own_cpu_us: f64,
}

impl Side {
    fn of(wall: &Figures, cpu: &Figures, bare: &Figures, bare_cpu: &Figures, program: Program) -> Self {
        #[expect(clippy::cast_precision_loss, reason = "at most eight fetches")]
        let workers = program.workers() as f64;
        Self {
            wall: *wall,
            cpu_us: cpu.median_us,
            own_us: wall.median_us - bare.median_us * f64::from(critical_fetches(program)),
            own_cpu_us: cpu.median_us - bare_cpu.median_us * workers,
        }
    }
}

/// The fetches a run waits for one after another.
fn critical_fetches(program: Program) -> u32 {
    match program {
        Program::One | Program::Parallel => 1,
        Program::Sequential => 8,
    }
}

fn fetches(program: Program) -> &'static str {
    match program {
        Program::One => "1 fetch",
        Program::Sequential => "8 fetches in turn",
        Program::Parallel => "8 fetches at once",
    }
}

fn timing(figures: &Figures) -> String {
    format!("{} ({})", ms(figures.median_us), ms(figures.p90_us))
}

fn ms(us: f64) -> String {
    format!("{:.2}", us / 1000.0)
}

fn ratio(ratio: f64) -> String {
    format!("{ratio:.2}×")
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}
