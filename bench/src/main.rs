//! `cargo run --release -p tenx-bench`: measures `tenxc check` and `tenxc build` on generated
//! programs, and loading their artifacts.
//!
//! It writes a 100,000-line program and a 50-line program under `target/bench/`, runs the
//! release `tenxc` (build it first: `cargo build --release -p tenxc`) several times on each,
//! and prints the median wall time, lines per second and the peak RSS of the `tenxc` processes,
//! next to two baselines measured in the same run: `tenxc --version` (process start-up) and
//! reading the file with `cat`. Then it times `tenxc build` of each program (target for the large
//! one: under 1 s) and reading plus verifying the built artifact in-process with
//! `tenx_artifact::load` (target: under 50 ms), and the same cold: a fresh process that reads and
//! verifies it and exits (`tenx-bench --load-once FILE`). Figures are medians because the
//! machine is shared and noisy.

use tenx_bench::generate;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 11;
/// `tenxc build` of the 100,000-line program must take less than this.
const BUILD_TARGET: Duration = Duration::from_secs(1);
/// Loading and verifying its artifact must take less than this.
const LOAD_TARGET: Duration = Duration::from_millis(50);

/// `tenx-bench --load-once FILE`: read and verify one artifact, then exit (0 if it loads).
const LOAD_ONCE: &str = "--load-once";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, file] = args.as_slice()
        && flag == LOAD_ONCE
    {
        return load_once(Path::new(file));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let tenxc = root.join("target/release/tenxc");
    if !tenxc.is_file() {
        eprintln!("build the release compiler first: cargo build --release -p tenxc");
        return ExitCode::from(2);
    }
    let dir = root.join("target/bench");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("cannot create {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let mut ok = true;
    println!("tenxc check benchmark ({RUNS} runs each, medians)\n");
    let startup = measure(&tenxc, &["--version"], None);
    println!("baseline: `tenxc --version`        {:>9.2} ms", ms(startup.wall));
    for (label, lines) in [("50-line program", 50usize), ("100,000-line program", 100_000)] {
        let text = generate::program(lines);
        let path = dir.join(format!("generated_{lines}.tenx"));
        if let Err(e) = std::fs::write(&path, &text) {
            eprintln!("cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
        let actual_lines = text.lines().count();
        let cat = measure(Path::new("cat"), &[path.to_string_lossy().as_ref()], None);
        let check = measure(&tenxc, &["check", path.to_string_lossy().as_ref()], Some(&path));
        ok &= check.clean;
        let per_second = actual_lines as f64 / check.wall.as_secs_f64();
        println!("\n{label}: {actual_lines} lines, {} bytes", text.len());
        println!("  baseline: cat                   {:>9.2} ms", ms(cat.wall));
        println!(
            "  tenxc check                     {:>9.2} ms   ({:.1}x start-up, {:.0}x cat)",
            ms(check.wall),
            ratio(check.wall, startup.wall),
            ratio(check.wall, cat.wall)
        );
        println!("  throughput                      {:>9.0} lines/s", per_second);
        println!(
            "  peak RSS                        {:>12}",
            peak_rss(&tenxc, &["check", path.to_string_lossy().as_ref()], &dir)
        );
        if !check.clean {
            println!(
                "  (the generated program did not check clean: see `tenxc check {}`)",
                path.display()
            );
        }
        let artifact = dir.join(format!("generated_{lines}.tenxg"));
        let build = measure(
            &tenxc,
            &[
                "build",
                path.to_string_lossy().as_ref(),
                "-o",
                artifact.to_string_lossy().as_ref(),
            ],
            Some(&path),
        );
        ok &= build.clean;
        println!(
            "  tenxc build                     {:>9.2} ms   (cpu {:.2} ms){}",
            ms(build.wall),
            ms(build.cpu),
            target(lines, build.wall, BUILD_TARGET)
        );
        println!(
            "  peak RSS of build               {:>12}",
            peak_rss(
                &tenxc,
                &[
                    "build",
                    path.to_string_lossy().as_ref(),
                    "-o",
                    artifact.to_string_lossy().as_ref()
                ],
                &dir
            )
        );
        match measure_load(&artifact) {
            Ok((wall, cpu, bytes)) => {
                println!("  artifact                        {:>9.1} KB", bytes as f64 / 1024.0);
                println!(
                    "  load + verify (in-process)      {:>9.2} ms   (cpu {:.2} ms){}",
                    ms(wall),
                    ms(cpu),
                    target(lines, wall, LOAD_TARGET)
                );
                // The same work cold, as a host does it once at start-up: a fresh process (this
                // program again) that reads and verifies the file and exits.
                let cold = std::env::current_exe()
                    .map(|me| measure(&me, &[LOAD_ONCE, artifact.to_string_lossy().as_ref()], None));
                match cold {
                    Ok(cold) => {
                        ok &= cold.clean;
                        println!(
                            "  load + verify (fresh process)   {:>9.2} ms   (cpu {:.2} ms; start-up included)",
                            ms(cold.wall),
                            ms(cold.cpu)
                        );
                    }
                    Err(e) => println!("  load + verify (fresh process)   failed: {e}"),
                }
                ok &= lines < 100_000 || (build.wall < BUILD_TARGET && wall < LOAD_TARGET);
            }
            Err(e) => {
                println!("  load + verify                   failed: {e}");
                ok = false;
            }
        }
    }
    if ok { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

struct Measurement {
    wall: Duration,
    /// Median user + system CPU time of the child processes: less sensitive than the wall time
    /// to other work on a shared machine.
    cpu: Duration,
    clean: bool,
}

fn measure(program: &Path, args: &[&str], _input: Option<&PathBuf>) -> Measurement {
    let mut times = Vec::with_capacity(RUNS);
    let mut cpu_times = Vec::with_capacity(RUNS);
    let mut clean = true;
    for _ in 0..RUNS {
        let cpu_before = cpu_time(nix::sys::resource::UsageWho::RUSAGE_CHILDREN);
        let start = Instant::now();
        let status = Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        times.push(start.elapsed());
        cpu_times.push(cpu_time(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).saturating_sub(cpu_before));
        clean &= status.is_ok_and(|s| s.success());
    }
    times.sort();
    cpu_times.sort();
    Measurement {
        wall: times.get(RUNS / 2).copied().unwrap_or_default(),
        cpu: cpu_times.get(RUNS / 2).copied().unwrap_or_default(),
        clean,
    }
}

/// The peak resident memory of one run, as GNU time (`/usr/bin/time -f %M`) reports it for that
/// process alone, or `n/a` where GNU time is not installed.
fn peak_rss(program: &Path, args: &[&str], dir: &Path) -> String {
    let out = dir.join("peak_rss.txt");
    let status = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(&out)
        .arg(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let kb = status
        .ok()
        .and_then(|_| std::fs::read_to_string(&out).ok())
        .and_then(|text| text.lines().last().and_then(|l| l.trim().parse::<f64>().ok()));
    match kb {
        Some(kb) => format!("{:.1} MB", kb / 1024.0),
        None => "n/a".to_string(),
    }
}

/// User + system CPU time used so far by `who`.
fn cpu_time(who: nix::sys::resource::UsageWho) -> Duration {
    let Ok(usage) = nix::sys::resource::getrusage(who) else {
        return Duration::ZERO;
    };
    let as_duration = |t: nix::sys::time::TimeVal| {
        let micros = t.tv_sec().max(0) as u64 * 1_000_000 + t.tv_usec().max(0) as u64;
        Duration::from_micros(micros)
    };
    as_duration(usage.user_time()) + as_duration(usage.system_time())
}

fn load_once(path: &Path) -> ExitCode {
    let policy = tenx_artifact::TrustPolicy::signature_optional();
    let loaded = std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|bytes| tenx_artifact::load(&bytes, &policy).map_err(|e| e.to_string()));
    match loaded {
        Ok(loaded) => {
            // Exit without tearing the artifact down, as a host that keeps it would.
            std::mem::forget(loaded);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

/// Reads and verifies the artifact at `path` in-process, `RUNS` times: the median wall and CPU
/// time of `std::fs::read` plus `tenx_artifact::load`, and the file's size.
fn measure_load(path: &Path) -> Result<(Duration, Duration, usize), String> {
    let mut times = Vec::with_capacity(RUNS);
    let mut cpu_times = Vec::with_capacity(RUNS);
    let mut size = 0;
    let policy = tenx_artifact::TrustPolicy::signature_optional();
    for _ in 0..RUNS {
        let cpu_before = cpu_time(nix::sys::resource::UsageWho::RUSAGE_SELF);
        let start = Instant::now();
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let loaded = tenx_artifact::load(&bytes, &policy).map_err(|e| e.to_string())?;
        times.push(start.elapsed());
        cpu_times.push(cpu_time(nix::sys::resource::UsageWho::RUSAGE_SELF).saturating_sub(cpu_before));
        size = bytes.len();
        drop(loaded);
    }
    times.sort();
    cpu_times.sort();
    let median = |list: &[Duration]| list.get(RUNS / 2).copied().unwrap_or_default();
    Ok((median(&times), median(&cpu_times), size))
}

/// `   (target < 1000 ms: met)` for the large program, nothing for the small one.
fn target(lines: usize, wall: Duration, target: Duration) -> String {
    if lines < 100_000 {
        return String::new();
    }
    let verdict = if wall < target { "met" } else { "MISSED" };
    format!("   (target < {:.0} ms: {verdict})", ms(target))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}
