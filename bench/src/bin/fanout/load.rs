//! Under load: many runs in flight at once, as a server holds them, instead of one run on an
//! idle process. Each of `concurrency` tasks (spawned on the runtime's two workers, started a
//! little apart so their waits do not line up) makes `rounds` full runs one after another, each
//! on a new thread; the figure is the process's CPU time (the stand-in's thread taken off, as in
//! [`crate::measure`]) over the whole batch, divided by the runs it made. The floors are made the
//! same way: bare fetches, or eight bare fetches at once, from as many tasks.
//!
//! Why it is measured beside the single runs: a single run waits 20 ms on an idle process, and
//! each run then starts with cold caches, so its own CPU time is mostly the cost of warming them
//! (a run's own instructions take about four times as long as when warm). Under load the runs'
//! work keeps the engine's code and data warm, the condition the engine benchmark's turn is
//! measured in (turns back to back). Both figures are printed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tenx_bench::fanout::{Program, run_once};
use tenx_bench::fetch::{FetchStandIn, Fetcher};
use tenx_bench::figures::Figures;
use tenx_engine::Engine;

use crate::measure::{TOPICS, own_cpu_us};

/// Runs in flight at once.
pub(crate) const CONCURRENCY: usize = 16;
/// Runs each task makes in one batch.
const ROUNDS: usize = 10;
/// Batches of each program and floor, interleaved (the figure is their median).
pub(crate) const BATCHES: usize = 7;

/// What one program (or floor) cost per run under load, over the batches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Loaded {
    /// CPU time per run, in µs (median and p90 over the batches).
    pub(crate) cpu: Figures,
    /// Runs finished per second of wall time (median over the batches).
    pub(crate) per_second: f64,
}

/// What a batch makes: a program's runs, or bare fetches.
#[derive(Clone)]
enum Work {
    Run(Program, Engine),
    Bare,
    BareEight,
}

/// The loaded figures of each program and of both floors.
pub(crate) struct LoadedRounds {
    pub(crate) programs: Vec<(Program, Loaded)>,
    pub(crate) bare: Loaded,
    pub(crate) bare_eight: Loaded,
}

/// `BATCHES` batches of each program in `programs` (one branch and parallel 8 only: the
/// sequential program's runs are eight of one branch's) and of both floors, interleaved, after
/// one unmeasured batch of each.
pub(crate) async fn rounds(programs: &[(Program, Engine)], standin: &FetchStandIn) -> Result<LoadedRounds, String> {
    let fetcher = Arc::new(Fetcher::new(&standin.url())?);
    let mut works = vec![("bare", Work::Bare), ("bare8", Work::BareEight)];
    for (program, engine) in programs {
        if *program != Program::Sequential {
            works.push((program.label(), Work::Run(*program, engine.clone())));
        }
    }
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); works.len()];
    let mut per_second: Vec<Vec<f64>> = vec![Vec::new(); works.len()];
    for batch in 0..=BATCHES {
        for (index, (label, work)) in works.iter().enumerate() {
            let (batch_cpu, batch_rate) = one_batch(work, &fetcher, standin, &format!("{label}-{batch}")).await?;
            if batch > 0
                && let (Some(cpu), Some(rate)) = (cpu.get_mut(index), per_second.get_mut(index))
            {
                cpu.push(batch_cpu);
                rate.push(batch_rate);
            }
        }
    }
    let mut loaded = works
        .iter()
        .zip(cpu.into_iter().zip(per_second))
        .map(|((_, work), (cpu, rate))| {
            (
                work.clone(),
                Loaded {
                    cpu: Figures::of(cpu),
                    per_second: median(rate),
                },
            )
        });
    let (Some((_, bare)), Some((_, bare_eight))) = (loaded.next(), loaded.next()) else {
        return Err("the loaded floors were not measured".to_owned());
    };
    let programs = loaded
        .filter_map(|(work, loaded)| match work {
            Work::Run(program, _) => Some((program, loaded)),
            Work::Bare | Work::BareEight => None,
        })
        .collect();
    Ok(LoadedRounds {
        programs,
        bare,
        bare_eight,
    })
}

/// One batch of `work`: its CPU time per run (µs) and its runs per second.
async fn one_batch(
    work: &Work,
    fetcher: &Arc<Fetcher>,
    standin: &FetchStandIn,
    name: &str,
) -> Result<(f64, f64), String> {
    let apart = Duration::from_millis(20) / u32::try_from(CONCURRENCY).unwrap_or(1);
    let started = Instant::now();
    let cpu = own_cpu_us(standin);
    let mut tasks = Vec::with_capacity(CONCURRENCY);
    for task in 0..CONCURRENCY {
        let work = work.clone();
        let fetcher = Arc::clone(fetcher);
        let name = format!("{name}-{task}");
        let delay = apart * u32::try_from(task).unwrap_or(0);
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            for round in 0..ROUNDS {
                match &work {
                    Work::Run(program, engine) => run_once(engine, *program, &format!("{name}-{round}")).await?,
                    Work::Bare => drop(fetcher.fetch("bare").await?),
                    Work::BareEight => drop(fetcher.fetch_all(&TOPICS).await?),
                }
            }
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|error| format!("a loaded task failed: {error}"))??;
    }
    let used = own_cpu_us(standin) - cpu;
    let wall = started.elapsed().as_secs_f64();
    #[expect(clippy::cast_precision_loss, reason = "a count to divide by")]
    let runs = CONCURRENCY.saturating_mul(ROUNDS) as f64;
    Ok((used / runs, runs / wall))
}

/// The median of `values` (`NaN` when there are none).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
