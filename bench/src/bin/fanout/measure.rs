//! The timed runs: each program's full run on a new thread, the programs interleaved round by
//! round (so a change in the machine's load touches all of them alike), after a warm-up that
//! opens the tool's connections. Every run is checked, and the stand-in must have answered
//! exactly one fetch per worker; the most fetches it held at once is kept per program. Each round
//! also times one bare fetch (`tenx_bench::fetch::Fetcher`): the floor under a run's wait.
//!
//! Beside the wall time, each sample's CPU time (user + system, `getrusage` of the whole
//! process: the engine, its http client and the stand-in's thread): on this shared machine the
//! wall time over the waits is mostly the scheduler's delay in waking each side up, while the CPU
//! time is what the run itself costs.

use std::collections::BTreeMap;
use std::time::Instant;

use nix::sys::resource::{UsageWho, getrusage};
use tenx_bench::fanout::{Program, run_once};
use tenx_bench::fetch::{FetchStandIn, Fetcher};
use tenx_bench::figures::Figures;
use tenx_engine::Engine;

/// Unmeasured runs of each program first.
const WARM_UP: usize = 3;

/// What one program (or the bare fetch) measured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measured {
    /// Wall time of one run.
    pub(crate) figures: Figures,
    /// The process's CPU time during one run.
    pub(crate) cpu: Figures,
    /// The most fetches the stand-in was answering at the same time during its runs.
    pub(crate) most_at_once: u64,
}

/// What the rounds measured.
pub(crate) struct Rounds {
    pub(crate) programs: BTreeMap<Program, Measured>,
    /// One bare fetch, POST and its answer read.
    pub(crate) bare: Measured,
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
fn cpu_us() -> f64 {
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

/// `runs` timed runs of each program and bare fetches, interleaved, after the warm-up.
pub(crate) async fn runs(
    programs: &[(Program, Engine)],
    standin: &FetchStandIn,
    runs: usize,
) -> Result<Rounds, String> {
    let fetcher = Fetcher::new(&standin.url())?;
    let mut samples: BTreeMap<Program, Samples> = BTreeMap::new();
    let mut bare = Samples::default();
    for round in 0..WARM_UP.saturating_add(runs) {
        let measured = round >= WARM_UP;
        let (started, cpu) = (Instant::now(), cpu_us());
        fetcher.fetch("bare").await?;
        if measured {
            bare.wall.push(started.elapsed().as_secs_f64() * 1e6);
            bare.cpu.push(cpu_us() - cpu);
        }
        for (program, engine) in programs {
            let thread = format!("{}-{round}", program.label().replace(' ', "-"));
            let answered = standin.answered();
            standin.reset_most_in_flight();
            let (started, cpu) = (Instant::now(), cpu_us());
            run_once(engine, *program, &thread).await?;
            let (elapsed, used) = (started.elapsed().as_secs_f64() * 1e6, cpu_us() - cpu);
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
                entry.wall.push(elapsed);
                entry.cpu.push(used);
            }
        }
    }
    Ok(Rounds {
        programs: samples
            .into_iter()
            .map(|(program, samples)| (program, samples.into_measured()))
            .collect(),
        bare: bare.into_measured(),
    })
}
