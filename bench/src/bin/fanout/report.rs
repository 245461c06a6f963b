//! The table: each program's time in tenx and, where it has one, in LangGraph; beside each, what
//! it costs over its *floor*, the bare fetches its run waits for (one bare fetch for one branch,
//! eight in turn for the sequential eight, eight at once for the parallel eight: the stand-in's
//! 20 ms, the timer's rounding and the loopback exchanges), on wall time and on CPU time. That
//! difference is the framework's own cost; the ratios and the targets.

use std::collections::BTreeMap;
use std::time::Duration;

use tenx_bench::fanout::Program;
use tenx_bench::figures::Figures;

use crate::langgraph::{LangGraph, LoadedLangGraph, Timed};
use crate::load::{BATCHES, CONCURRENCY, Loaded, LoadedRounds};
use crate::measure::Measured;

/// Everything one run measured.
pub(crate) struct Results {
    pub(crate) delay: Duration,
    pub(crate) tenx: BTreeMap<Program, Measured>,
    /// One bare fetch from the stand-in (POST, answer read).
    pub(crate) bare: Measured,
    /// Eight bare fetches at once.
    pub(crate) bare_eight: Measured,
    /// Whether the stand-in thread's CPU time was taken off tenx's.
    pub(crate) standin_cpu: bool,
    /// The same programs and floors under load.
    pub(crate) loaded: LoadedRounds,
    pub(crate) skipped: Vec<(Program, String)>,
    pub(crate) langgraph: Result<LangGraph, String>,
}

/// One round's ratios, the figures the targets are judged on (`None`: not measured, or tenx's
/// own cost was within the noise).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Ratios {
    /// The parallel eight's wall time over one branch's.
    parallel_over_one: Option<f64>,
    /// LangGraph's own CPU over tenx's, in single runs: one branch, the parallel eight.
    single: Pair,
    /// The same under load, against LangGraph's lower own CPU (loaded or single runs).
    loaded: Pair,
}

/// A ratio for one branch and one for the parallel eight.
#[derive(Debug, Clone, Copy, Default)]
struct Pair {
    one: Option<f64>,
    parallel: Option<f64>,
}

impl Pair {
    /// The slot of `program` (the sequential eight has none).
    fn slot(&mut self, program: Program) -> Option<&mut Option<f64>> {
        match program {
            Program::One => Some(&mut self.one),
            Program::Parallel => Some(&mut self.parallel),
            Program::Sequential => None,
        }
    }
}

/// Issue 14's targets: the parallel eight within this of one branch…
const PARALLEL_RATIO: f64 = 1.5;
/// …and LangGraph beaten by the engine benchmark's margin (its turn target, `engine`'s
/// `TURN_RATIO`), on the frameworks' own cost: both wait for the same fetches.
const LANGGRAPH_RATIO: f64 = 50.0;

/// A wall time and a CPU time per run, and the same less the run's floor.
#[derive(Debug, Clone, Copy)]
struct Side {
    wall: Figures,
    cpu_us: f64,
    /// The wall median less the floor's.
    own_us: f64,
    /// The CPU median less the floor's.
    own_cpu_us: f64,
}

impl Side {
    /// `wall` and `cpu` over the floor `floor_wall`/`floor_cpu`, taken `times` times.
    fn of(wall: &Figures, cpu: &Figures, (floor_wall, floor_cpu): (&Figures, &Figures), times: f64) -> Self {
        Self {
            wall: *wall,
            cpu_us: cpu.median_us,
            own_us: wall.median_us - floor_wall.median_us * times,
            own_cpu_us: cpu.median_us - floor_cpu.median_us * times,
        }
    }

    fn tenx(program: Program, measured: &Measured, results: &Results) -> Self {
        let (floor, times) = match program {
            Program::One => (&results.bare, 1.0),
            Program::Sequential => (&results.bare, 8.0),
            Program::Parallel => (&results.bare_eight, 1.0),
        };
        Self::of(&measured.figures, &measured.cpu, (&floor.figures, &floor.cpu), times)
    }

    fn langgraph(program: Program, lg: &LangGraph) -> Option<Self> {
        let (run, floor): (Timed, Timed) = match program {
            Program::One => (lg.one, lg.bare),
            Program::Parallel => (lg.parallel, lg.bare_eight),
            Program::Sequential => return None,
        };
        Some(Self::of(&run.wall, &run.cpu, (&floor.wall, &floor.cpu), 1.0))
    }
}

/// Prints one round's table and verdicts; returns its ratios.
pub(crate) fn print(results: &Results) -> Ratios {
    let mut ratios = Ratios::default();
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
        "{runs} runs of each program and of each floor (a new thread each run, all interleaved, after 3 unmeasured rounds)"
    );
    match &results.langgraph {
        Ok(_) => println!(
            "LangGraph beside it: bench/langgraph/fanout.py, the same flow with `Send` and its one-branch version (see its docstring for what differs)"
        ),
        Err(why) => println!("LangGraph skipped: {why}"),
    }
    println!(
        "the engine, its tool client, the stand-in and LangGraph's Python share this machine's 2 cores; tenx's CPU {}\n",
        if results.standin_cpu {
            "is its process's less the stand-in's thread"
        } else {
            "INCLUDES the stand-in's thread (its schedstat could not be read)"
        }
    );
    println!(
        "{:<34} {:>16} {:>7} {:>7} {:>7}   {:>16} {:>7} {:>7} {:>7}",
        "", "tenx ms", "own", "CPU", "own CPU", "LangGraph ms", "own", "CPU", "own CPU"
    );
    for program in Program::ALL {
        let Some(tenx) = results.tenx.get(&program) else {
            continue;
        };
        let mine = Side::tenx(program, tenx, results);
        let theirs = lg.and_then(|lg| Side::langgraph(program, lg));
        let other = |pick: fn(&Side) -> String| theirs.as_ref().map_or_else(|| "-".to_owned(), pick);
        println!(
            "{:<34} {:>16} {:>7} {:>7} {:>7}   {:>16} {:>7} {:>7} {:>7}",
            format!("{} ({})", program.label(), fetches(program)),
            timing(&mine.wall),
            ms(mine.own_us),
            ms(mine.cpu_us),
            ms(mine.own_cpu_us),
            other(|side| timing(&side.wall)),
            other(|side| ms(side.own_us)),
            other(|side| ms(side.cpu_us)),
            other(|side| ms(side.own_cpu_us)),
        );
    }
    let floor = |label: &str, mine: &Measured, theirs: Option<Timed>| {
        println!(
            "{label:<34} {:>16} {:>7} {:>7} {:>7}   {:>16} {:>7} {:>7}",
            timing(&mine.figures),
            "",
            ms(mine.cpu.median_us),
            "",
            theirs.map_or_else(|| "-".to_owned(), |theirs| timing(&theirs.wall)),
            "",
            theirs.map_or_else(|| "-".to_owned(), |theirs| ms(theirs.cpu.median_us)),
        );
    };
    floor("floor: bare fetch", &results.bare, lg.map(|lg| lg.bare));
    floor(
        "floor: eight bare fetches at once",
        &results.bare_eight,
        lg.map(|lg| lg.bare_eight),
    );
    for (program, why) in &results.skipped {
        println!(
            "{:<34} skipped: {why}",
            format!("{} ({})", program.label(), fetches(*program))
        );
    }
    println!();
    let median = |program| results.tenx.get(&program).copied();
    if let (Some(one), Some(parallel)) = (median(Program::One), median(Program::Parallel)) {
        let parallel_ratio = parallel.figures.median_us / one.figures.median_us;
        ratios.parallel_over_one = Some(parallel_ratio);
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
        .chain(std::iter::once(format!(
            "eight bare fetches: {}",
            results.bare_eight.most_at_once
        )))
        .collect();
    println!("most fetches the stand-in held at once: {}", at_once.join(", "));
    for program in [Program::One, Program::Parallel] {
        let (Some(lg), Some(tenx)) = (lg, median(program)) else {
            println!("LangGraph / tenx, {}: not measured", program.label());
            continue;
        };
        let mine = Side::tenx(program, &tenx, results);
        let Some(theirs) = Side::langgraph(program, lg) else {
            continue;
        };
        let own = |theirs: f64, mine: f64| {
            if mine > 0.0 {
                ratio(theirs / mine)
            } else {
                "- (tenx's is within the noise)".to_owned()
            }
        };
        let own_cpu = (mine.own_cpu_us > 0.0).then(|| theirs.own_cpu_us / mine.own_cpu_us);
        if let Some(single) = ratios.single.slot(program) {
            *single = own_cpu;
        }
        println!(
            "LangGraph / tenx, {}: wall {}, CPU {}; own wall {}, own CPU {}   target ≥ {LANGGRAPH_RATIO}× (the engine benchmark's margin) on own CPU: {}",
            program.label(),
            ratio(theirs.wall.median_us / mine.wall.median_us),
            ratio(theirs.cpu_us / mine.cpu_us),
            own(theirs.own_us, mine.own_us),
            own(theirs.own_cpu_us, mine.own_cpu_us),
            verdict(own_cpu.is_some_and(|own_cpu| own_cpu >= LANGGRAPH_RATIO))
        );
    }
    if let Some(lg) = lg {
        println!(
            "LangGraph parallel 8 / its one branch: {}",
            ratio(lg.parallel.wall.median_us / lg.one.wall.median_us)
        );
    }
    ratios.loaded = print_loaded(results, lg);
    println!(
        "\nMedians (p90 in brackets) in ms of one full run. \"CPU\" is the median CPU time of the process during a run (tenx: less the stand-in's thread). \"own\" and \"own CPU\" are those medians less the same medians of the run's floor on the same side (tenx's http client; urllib for LangGraph): one bare fetch for one branch, eight in turn for sequential 8, eight at once for parallel 8. Differences of medians, so noisy where they are small."
    );
    ratios
}

/// The figures under load: CPU per run and its own part (less the same floor, measured under
/// the same load), each side's, and the ratios: against LangGraph under the same load, and
/// against the lower of LangGraph's own CPU under load and in single runs (its threads contend
/// for the GIL under load, which costs it CPU a single run does not spend), the figure the
/// target is judged on.
/// Returns the judged ratios.
fn print_loaded(results: &Results, lg: Option<&LangGraph>) -> Pair {
    let mut judged_ratios = Pair::default();
    let theirs = lg.and_then(|lg| lg.loaded);
    println!(
        "\nunder load: {CONCURRENCY} runs in flight at once (tenx: tasks on its two tokio workers; LangGraph: threads), {BATCHES} batches of each, interleaved; CPU ms per run, the median over the batches"
    );
    println!(
        "{:<34} {:>7} {:>7} {:>8}   {:>7} {:>7} {:>8}",
        "", "tenx CPU", "own CPU", "runs/s", "LG CPU", "own CPU", "runs/s"
    );
    let floor_of = |program: Program| match program {
        Program::Parallel => (&results.loaded.bare_eight, theirs.map(|lg| lg.bare_eight)),
        Program::One | Program::Sequential => (&results.loaded.bare, theirs.map(|lg| lg.bare)),
    };
    let pick = |lg: &LoadedLangGraph, program: Program| match program {
        Program::Parallel => lg.parallel,
        Program::One | Program::Sequential => lg.one,
    };
    for (program, mine) in &results.loaded.programs {
        let (floor, their_floor) = floor_of(*program);
        let their = theirs.map(|lg| pick(&lg, *program));
        let own = |run: &Loaded, floor: &Loaded| run.cpu.median_us - floor.cpu.median_us;
        let their_own = their.zip(their_floor).map(|(run, floor)| own(&run, &floor));
        println!(
            "{:<34} {:>7} {:>7} {:>8.0}   {:>7} {:>7} {:>8}",
            format!("{} ({})", program.label(), fetches(*program)),
            ms(mine.cpu.median_us),
            ms(own(mine, floor)),
            mine.per_second,
            their.map_or_else(|| "-".to_owned(), |run| ms(run.cpu.median_us)),
            their_own.map_or_else(|| "-".to_owned(), ms),
            their.map_or_else(|| "-".to_owned(), |run| format!("{:.0}", run.per_second)),
        );
    }
    for (label, mine, their) in [
        ("floor: bare fetch", &results.loaded.bare, theirs.map(|lg| lg.bare)),
        (
            "floor: eight bare fetches at once",
            &results.loaded.bare_eight,
            theirs.map(|lg| lg.bare_eight),
        ),
    ] {
        println!(
            "{label:<34} {:>7} {:>7} {:>8.0}   {:>7} {:>7} {:>8}",
            ms(mine.cpu.median_us),
            "",
            mine.per_second,
            their.map_or_else(|| "-".to_owned(), |run| ms(run.cpu.median_us)),
            "",
            their.map_or_else(|| "-".to_owned(), |run| format!("{:.0}", run.per_second)),
        );
    }
    for (program, mine) in &results.loaded.programs {
        let (floor, their_floor) = floor_of(*program);
        let mine_own = mine.cpu.median_us - floor.cpu.median_us;
        let (Some(lg), Some(their), Some(their_floor)) = (lg, theirs.map(|lg| pick(&lg, *program)), their_floor) else {
            println!("LangGraph / tenx under load, {}: not measured", program.label());
            continue;
        };
        let their_loaded = their.cpu.median_us - their_floor.cpu.median_us;
        let their_single = Side::langgraph(*program, lg).map_or(f64::NAN, |side| side.own_cpu_us);
        let lower = their_loaded.min(their_single);
        let judged = (mine_own > 0.0).then(|| lower / mine_own);
        if let Some(ratio) = judged_ratios.slot(*program) {
            *ratio = judged;
        }
        println!(
            "LangGraph / tenx under load, {}: own CPU {} (LangGraph under the same load), {} (LangGraph's lower own CPU, loaded or single runs)   target ≥ {LANGGRAPH_RATIO}× on the latter: {}",
            program.label(),
            ratio(their_loaded / mine_own),
            judged.map_or_else(|| "- (tenx's is within the noise)".to_owned(), ratio),
            verdict(judged.is_some_and(|judged| judged >= LANGGRAPH_RATIO))
        );
    }
    judged_ratios
}

/// The verdicts over every round: each round's ratios and their median (for an even count, both
/// middle ratios), on which the targets are judged (one full run's ratio moves with the machine: LangGraph's own CPU by up to 1.8× between
/// runs minutes apart on this shared machine).
pub(crate) fn print_rounds(rounds: &[Ratios]) {
    println!(
        "\nover {} rounds (the sides' order alternating), each round's ratio and their median; the targets are judged on the median",
        rounds.len()
    );
    let line = |label: &str, pick: &dyn Fn(&Ratios) -> Option<f64>, target: &str, met: &dyn Fn(f64) -> bool| {
        let each: Vec<Option<f64>> = rounds.iter().map(pick).collect();
        let shown: Vec<String> = each
            .iter()
            .map(|measured| measured.map_or_else(|| "-".to_owned(), ratio))
            .collect();
        // An even count of rounds has two middle ratios: both must meet the target.
        let mut measured: Vec<f64> = each.iter().flatten().copied().collect();
        measured.sort_by(f64::total_cmp);
        let middle = (
            measured.get(measured.len().saturating_sub(1) / 2).copied(),
            measured.get(measured.len() / 2).copied(),
        );
        let (shown_median, judged) = match middle {
            (Some(low), Some(high)) if low < high => {
                (format!("{}–{}", ratio(low), ratio(high)), Some(met(low) && met(high)))
            }
            (Some(low), Some(_)) => (ratio(low), Some(met(low))),
            _ => ("-".to_owned(), None),
        };
        println!(
            "{label:<44} {}   median {shown_median}   target {target}: {}",
            shown.join(" / "),
            judged.map_or("not checked", verdict)
        );
    };
    let beats = |ratio: f64| ratio >= LANGGRAPH_RATIO;
    line(
        "parallel 8 / one branch, wall",
        &|round| round.parallel_over_one,
        &format!("≤ {PARALLEL_RATIO}×"),
        &|ratio| ratio <= PARALLEL_RATIO,
    );
    let margin = format!("≥ {LANGGRAPH_RATIO}×");
    line(
        "LangGraph / tenx own CPU, one branch",
        &|round| round.single.one,
        &margin,
        &beats,
    );
    line(
        "LangGraph / tenx own CPU, parallel 8",
        &|round| round.single.parallel,
        &margin,
        &beats,
    );
    line("  under load, one branch", &|round| round.loaded.one, &margin, &beats);
    line(
        "  under load, parallel 8",
        &|round| round.loaded.parallel,
        &margin,
        &beats,
    );
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
