//! The timed runs: each program's full run on a new thread, the programs interleaved round by
//! round (so a change in the machine's load touches all of them alike), after a warm-up that
//! opens the tool's connections. Every run is checked, and the stand-in must have answered
//! exactly one fetch per worker; the most fetches it held at once is kept per program. Each round
//! also times one bare fetch (`tenx_bench::fetch::Fetcher`): the floor under a run's wait.

use std::collections::BTreeMap;
use std::time::Instant;

use tenx_bench::fanout::{Program, run_once};
use tenx_bench::fetch::{FetchStandIn, Fetcher};
use tenx_bench::figures::Figures;
use tenx_engine::Engine;

/// Unmeasured runs of each program first.
const WARM_UP: usize = 3;

/// What one program measured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measured {
    pub(crate) figures: Figures,
    /// The most fetches the stand-in was answering at the same time during its runs.
    pub(crate) most_at_once: u64,
}

/// What the rounds measured.
pub(crate) struct Rounds {
    pub(crate) programs: BTreeMap<Program, Measured>,
    /// One bare fetch, POST and its answer read.
    pub(crate) bare: Figures,
}

/// `runs` timed runs of each program and bare fetches, interleaved, after the warm-up.
pub(crate) async fn runs(
    programs: &[(Program, Engine)],
    standin: &FetchStandIn,
    runs: usize,
) -> Result<Rounds, String> {
    let fetcher = Fetcher::new(&standin.url())?;
    let mut samples: BTreeMap<Program, Vec<f64>> = BTreeMap::new();
    let mut bare = Vec::with_capacity(runs);
    let mut most: BTreeMap<Program, u64> = BTreeMap::new();
    for round in 0..WARM_UP.saturating_add(runs) {
        let started = Instant::now();
        fetcher.fetch("bare").await?;
        if round >= WARM_UP {
            bare.push(started.elapsed().as_secs_f64() * 1e6);
        }
        for (program, engine) in programs {
            let thread = format!("{}-{round}", program.label().replace(' ', "-"));
            let answered = standin.answered();
            standin.reset_most_in_flight();
            let started = Instant::now();
            run_once(engine, *program, &thread).await?;
            let elapsed = started.elapsed().as_secs_f64() * 1e6;
            let fetched = standin.answered().saturating_sub(answered);
            if usize::try_from(fetched).ok() != Some(program.workers()) {
                return Err(format!(
                    "thread {thread} made {fetched} fetches, not {}",
                    program.workers()
                ));
            }
            let at_once = most.entry(*program).or_default();
            *at_once = (*at_once).max(standin.most_in_flight());
            if round >= WARM_UP {
                samples.entry(*program).or_default().push(elapsed);
            }
        }
    }
    let programs = samples
        .into_iter()
        .map(|(program, samples)| {
            let measured = Measured {
                figures: Figures::of(samples),
                most_at_once: most.get(&program).copied().unwrap_or(0),
            };
            (program, measured)
        })
        .collect();
    Ok(Rounds {
        programs,
        bare: Figures::of(bare),
    })
}
