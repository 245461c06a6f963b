//! The timed runs: each program's full run on a new thread, the programs interleaved round by
//! round (so a change in the machine's load touches all of them alike), after a warm-up that
//! opens the tool's connections. Every run is checked, and the stand-in must have answered
//! exactly one fetch per worker; the most fetches it held at once is kept per program. Each round
//! also times the floors under a run's waits (`tenx_bench::fetch::Fetcher`): one bare fetch, and
//! eight bare fetches at once on one task (the floor under the parallel program's).
//!
//! Beside the wall time, each sample's CPU time: user + system of the whole process
//! (`getrusage`: the engine, its http client, tokio's threads) less the stand-in's thread
//! (`FetchStandIn::cpu_us`), as LangGraph's Python process does not serve its fetches either.
//! On this shared machine the wall time over the waits is mostly the scheduler's delay in waking
//! each side up, while the CPU time is what the run itself costs.

use std::collections::BTreeMap;
use std::time::Instant;

use nix::sys::resource::{UsageWho, getrusage};
use tenx_bench::fanout::{Program, run_once};
use tenx_bench::fetch::{FetchStandIn, Fetcher};
use tenx_bench::figures::Figures;
use tenx_engine::Engine;

/// Unmeasured runs of each program first.
const WARM_UP: usize = 3;

/// The topics of the eight bare fetches at once (the parallel program's).
pub(crate) const TOPICS: [&str; 8] = ["rust", "tokio", "sqlite", "postgres", "axum", "serde", "regex", "pest"];

/// What one program (or a floor) measured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measured {
    /// Wall time of one run.
    pub(crate) figures: Figures,
    /// The process's CPU time during one run, the stand-in's thread taken off.
    pub(crate) cpu: Figures,
    /// The most fetches the stand-in was answering at the same time during its runs.
    pub(crate) most_at_once: u64,
}

/// What the rounds measured.
pub(crate) struct Rounds {
    pub(crate) programs: BTreeMap<Program, Measured>,
    /// One bare fetch, POST and its answer read.
    pub(crate) bare: Measured,
    /// Eight bare fetches at once.
    pub(crate) bare_eight: Measured,
    /// Whether the stand-in's CPU time could be read (and was taken off).
    pub(crate) standin_cpu: bool,
}

#[derive(Default)]
struct Samples {
    wall: Vec<f64>,
    cpu: Vec<f64>,
    most_at_once: u64,
}

impl Samples {
    fn into_measured(self) -> Measured {
        Measured {
            figures: Figures::of(self.wall),
            cpu: Figures::of(self.cpu),
            most_at_once: self.most_at_once,
        }
    }
}

/// The process's CPU time so far (user + system), in µs.
fn process_cpu_us() -> f64 {
    getrusage(UsageWho::RUSAGE_SELF).map_or(f64::NAN, |usage| {
        let micros = |time: nix::sys::time::TimeVal| {
            #[expect(clippy::cast_precision_loss, reason = "a figure to print")]
            let seconds = time.tv_sec() as f64;
            #[expect(clippy::cast_precision_loss, reason = "a figure to print")]
            let micros = time.tv_usec() as f64;
            seconds * 1e6 + micros
        };
        micros(usage.user_time()) + micros(usage.system_time())
    })
}

/// A sample's start: when, and the CPU time so far less the stand-in's.
struct Start<'s> {
    standin: &'s FetchStandIn,
    at: Instant,
    cpu: f64,
}

impl<'s> Start<'s> {
    fn now(standin: &'s FetchStandIn) -> Self {
        Self {
            standin,
            at: Instant::now(),
            cpu: own_cpu_us(standin),
        }
    }

    /// The wall time and CPU time since, in µs.
    fn elapsed(&self) -> (f64, f64) {
        let wall = self.at.elapsed().as_secs_f64() * 1e6;
        (wall, own_cpu_us(self.standin) - self.cpu)
    }
}

/// The process's CPU time less the stand-in thread's.
pub(crate) fn own_cpu_us(standin: &FetchStandIn) -> f64 {
    process_cpu_us() - standin.cpu_us().unwrap_or(0.0)
}

/// `runs` timed runs of each program and of the floors, interleaved, after the warm-up.
pub(crate) async fn runs(
    programs: &[(Program, Engine)],
    standin: &FetchStandIn,
    runs: usize,
) -> Result<Rounds, String> {
    let fetcher = Fetcher::new(&standin.url())?;
    let mut samples: BTreeMap<Program, Samples> = BTreeMap::new();
    let mut bare = Samples::default();
    let mut bare_eight = Samples::default();
    for round in 0..WARM_UP.saturating_add(runs) {
        let measured = round >= WARM_UP;
        let start = Start::now(standin);
        fetcher.fetch("bare").await?;
        let (wall, cpu) = start.elapsed();
        if measured {
            bare.wall.push(wall);
            bare.cpu.push(cpu);
        }
        standin.reset_most_in_flight();
        let start = Start::now(standin);
        fetcher.fetch_all(&TOPICS).await?;
        let (wall, cpu) = start.elapsed();
        bare_eight.most_at_once = bare_eight.most_at_once.max(standin.most_in_flight());
        if measured {
            bare_eight.wall.push(wall);
            bare_eight.cpu.push(cpu);
        }
        for (program, engine) in programs {
            let thread = format!("{}-{round}", program.label().replace(' ', "-"));
            let answered = standin.answered();
            standin.reset_most_in_flight();
            let start = Start::now(standin);
            run_once(engine, *program, &thread).await?;
            let (wall, cpu) = start.elapsed();
            let fetched = standin.answered().saturating_sub(answered);
            if usize::try_from(fetched).ok() != Some(program.workers()) {
                return Err(format!(
                    "thread {thread} made {fetched} fetches, not {}",
                    program.workers()
                ));
            }
            let entry = samples.entry(*program).or_default();
            entry.most_at_once = entry.most_at_once.max(standin.most_in_flight());
            if measured {
                entry.wall.push(wall);
                entry.cpu.push(cpu);
            }
        }
    }
    Ok(Rounds {
        programs: samples
            .into_iter()
            .map(|(program, samples)| (program, samples.into_measured()))
            .collect(),
        bare: bare.into_measured(),
        bare_eight: bare_eight.into_measured(),
        standin_cpu: standin.cpu_us().is_some(),
    })
}

/// What `fanout profile` runs: `program` (or, for `None`, bare fetches: eight at once when
/// `eight`) `runs` times after the warm-up, untimed, for `valgrind --tool=callgrind` (a run's
/// instructions are those of `runs` less those of 0).
pub(crate) async fn profile(
    program: Option<(Program, Engine)>,
    standin: &FetchStandIn,
    eight: bool,
    runs: usize,
) -> Result<(), String> {
    let fetcher = Fetcher::new(&standin.url())?;
    for round in 0..WARM_UP.saturating_add(runs) {
        match &program {
            Some((program, engine)) => run_once(engine, *program, &format!("profile-{round}")).await?,
            None if eight => {
                fetcher.fetch_all(&TOPICS).await?;
            }
            None => {
                fetcher.fetch("bare").await?;
            }
        }
    }
    Ok(())
}
