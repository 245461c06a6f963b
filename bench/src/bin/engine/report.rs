//! The side-by-side table: tenx and LangGraph per measurement, the ratio, and the target.

use crate::langgraph::LangGraph;
use crate::measure::Figures;
use crate::paused::Resident;

/// Everything one run measured.
pub(crate) struct Results {
    pub(crate) turn: Figures,
    pub(crate) provider_turn: crate::provider::ProviderFigures,
    pub(crate) pause_resume: Figures,
    pub(crate) memory: Resident,
    pub(crate) sqlite: Resident,
    pub(crate) sqlite_more: Resident,
    pub(crate) langgraph: Result<LangGraph, String>,
}

/// Targets of issue 11's "Speed" section.
const TURN_US: f64 = 50.0;
const TURN_RATIO: f64 = 50.0;
const RESUME_US: f64 = 2000.0;
const RESUME_RATIO: f64 = 5.0;
const PAUSED_MB: f64 = 100.0;
/// SQLite's RSS counts as flat when three times the threads add less than this share.
const FLAT_SHARE: f64 = 0.10;

pub(crate) fn print(results: &Results) {
    let lg = results.langgraph.as_ref().ok();
    println!("tenx engine benchmark: release, in process, scripted model, zero-latency fake tools");
    match &results.langgraph {
        Ok(_) => println!(
            "LangGraph beside it: bench/langgraph/refund.py, same graph (see its docstring for what differs)\n"
        ),
        Err(why) => println!("LangGraph skipped: {why}\n"),
    }
    println!("{:<44} {:>22} {:>26} {:>9}   target", "", "tenx", "LangGraph", "ratio");
    let turn_ratio = lg.map(|lg| lg.turn.median_us / results.turn.median_us);
    println!(
        "{:<44} {:>22} {:>26} {:>9}   < {TURN_US} µs{}: {}",
        format!("(a) user → agent → tool → agent, memory ({})", results.turn.samples),
        timing(&results.turn),
        lg.map_or_else(|| "-".to_owned(), |lg| timing(&lg.turn)),
        ratio(turn_ratio),
        if lg.is_some() {
            format!(", ≥ {TURN_RATIO}×")
        } else {
            String::new()
        },
        verdict(results.turn.median_us < TURN_US && turn_ratio.is_none_or(|ratio| ratio >= TURN_RATIO)),
    );
    print_provider(&results.turn, &results.provider_turn);
    let resume_ratio = lg.map(|lg| lg.pause_resume.median_us / results.pause_resume.median_us);
    println!(
        "{:<44} {:>22} {:>26} {:>9}   < {} ms{}: {}",
        format!("(b) pause + resume, SQLite ({})", results.pause_resume.samples),
        timing(&results.pause_resume),
        lg.map_or_else(|| "-".to_owned(), |lg| timing(&lg.pause_resume)),
        ratio(resume_ratio),
        RESUME_US / 1000.0,
        if lg.is_some() {
            format!(", ≥ {RESUME_RATIO}×")
        } else {
            String::new()
        },
        verdict(results.pause_resume.median_us < RESUME_US && resume_ratio.is_none_or(|ratio| ratio >= RESUME_RATIO)),
    );
    let lg_paused = lg.and_then(|lg| lg.paused);
    println!(
        "{:<44} {:>22} {:>26} {:>9}   < {PAUSED_MB} MB: {}",
        format!("(c) RSS, {} threads paused, memory", results.memory.threads),
        resident(&results.memory),
        lg_paused.map_or_else(|| "-".to_owned(), |lg| format!("{} ({})", resident(&lg), lg.threads)),
        ratio(
            lg_paused
                .filter(|lg| lg.threads == results.memory.threads)
                .map(|lg| lg.total_mb() / results.memory.total_mb())
        ),
        verdict(results.memory.total_mb() < PAUSED_MB),
    );
    let (few, many) = (&results.sqlite, &results.sqlite_more);
    let flat = many.total_mb() <= few.total_mb() * (1.0 + FLAT_SHARE);
    println!(
        "{:<44} {:>22}",
        format!("    RSS, {} threads paused, SQLite", few.threads),
        resident(few),
    );
    println!(
        "{:<44} {:>22} {:>26} {:>9}   flat (< +{:.0}%): {}",
        format!("    RSS, {} threads paused, SQLite", many.threads),
        resident(many),
        "",
        "",
        FLAT_SHARE * 100.0,
        verdict(flat),
    );
    println!(
        "\nTimes are medians (p90 in brackets) in µs; RSS is the whole process (growth while pausing in brackets)."
    );
}

fn timing(figures: &Figures) -> String {
    format!("{:.1} ({:.1})", figures.median_us, figures.p90_us)
}

fn resident(resident: &Resident) -> String {
    format!("{:.1} MB (+{:.1})", resident.total_mb(), resident.grown_mb())
}

fn ratio(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "-".to_owned(), |ratio| format!("{ratio:.1}×"))
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

/// The (a′) lines: the turn against the fake, and the overhead per model call split into the
/// bare loopback exchange and the adapter's own share.
pub(crate) fn print_provider(turn: &Figures, provider: &crate::provider::ProviderFigures) {
    // Two model calls per turn (the tool call, then the answer).
    let overhead_us = (provider.turn.median_us - turn.median_us) / 2.0;
    let bare_us = provider.round_trips.median_us / 2.0;
    println!(
        "{:<44} {:>22} {:>26} {:>9}   no measurable cost over the network",
        format!("(a′) same, openai vs local fake ({})", provider.turn.samples),
        timing(&provider.turn),
        "-",
        "",
    );
    println!(
        "{:<44} {:>22}",
        "     overhead per model call ((a′ − a) / 2)",
        format!("{overhead_us:.1}"),
    );
    println!(
        "{:<44} {:>22}",
        "     of which the bare loopback exchange",
        format!("{bare_us:.1}"),
    );
    println!(
        "{:<44} {:>22}",
        "     the adapter's own share per call",
        format!("{:.1}", overhead_us - bare_us),
    );
}
