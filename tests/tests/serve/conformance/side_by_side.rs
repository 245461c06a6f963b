//! The opt-in side-by-side run: the same scenario requests against the reference server
//! (10xgraph-api 0.9.0, started with `../shared/reference/run-10xgraph-reference.sh`) and
//! against tenx, fact by fact. Every difference must be one the contract intends
//! (`expected::intended`, each with its reason); any other difference fails, and so does an
//! intended difference that did not show (the table would be wrong).
//!
//! Off unless asked for:
//! - `TENX_REFERENCE=start` starts the reference once per profile with the script (PORT from
//!   `TENX_REFERENCE_PORT`, default 8790; `TENX_REFERENCE_VENV` becomes its `VENV`;
//!   `TENX_REFERENCE_SCRIPT` overrides the script's path) and stops it afterwards;
//! - `TENX_REFERENCE_URL=http://127.0.0.1:8765` uses a reference already running in the
//!   development profile there (the auth, production, rate-limit and size scenarios are then
//!   skipped, since each needs its own start).
//!
//! `TENX_CONFORMANCE_DUMP=1` also prints every fact of both servers.

use std::path::PathBuf;
use std::process::Command;

use super::expected::{self, Why};
use super::target::{Target, run_tag};
use super::{Profile, SCENARIOS, Step, scenarios, tenx};

/// Where the reference comes from.
enum Source {
    /// Started by this test, one process per profile.
    Start { script: PathBuf, port: u16 },
    /// Already running (development profile only).
    Url(String),
}

/// A reference server this test started; stopped when dropped.
struct Started {
    script: PathBuf,
    port: u16,
    workdir: String,
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = Command::new(&self.script)
            .arg("stop")
            .env("PORT", self.port.to_string())
            .env("WORKDIR", &self.workdir)
            .status();
    }
}

/// The script's environment for `profile` (reference-api.md §18).
fn profile_env(profile: Profile) -> Vec<(&'static str, &'static str)> {
    match profile {
        Profile::Dev => vec![],
        Profile::Production => vec![("MODE", "production"), ("ORIGINS", "http://localhost:3000")],
        Profile::Auth => vec![("AUTH", "jwt"), ("AUTHZ", "ownership")],
        Profile::RateLimit => vec![("RATE_LIMIT", "4")],
        Profile::Size => vec![("MAX_REQUEST_SIZE", "2000")],
    }
}

fn source() -> Option<Source> {
    if let Ok(url) = std::env::var("TENX_REFERENCE_URL") {
        return Some(Source::Url(url));
    }
    if std::env::var("TENX_REFERENCE").ok().as_deref() != Some("start") {
        return None;
    }
    let script = std::env::var("TENX_REFERENCE_SCRIPT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| tenx_tests::repo_root().join("../shared/reference/run-10xgraph-reference.sh"));
    let port = std::env::var("TENX_REFERENCE_PORT")
        .ok()
        .and_then(|port| port.parse().ok())
        .unwrap_or(8790);
    Some(Source::Start { script, port })
}

/// Starts (or finds) the reference for `profile`: its base URL, and the guard that stops it.
fn reference(source: &Source, profile: Profile) -> Option<(String, Option<Started>)> {
    match source {
        Source::Url(url) => (profile == Profile::Dev).then(|| (url.clone(), None)),
        Source::Start { script, port } => {
            let workdir = format!("/tmp/tenx-ref-conformance-{profile:?}").to_lowercase();
            let mut command = Command::new(script);
            command
                .arg("start")
                .env("PORT", port.to_string())
                .env("WORKDIR", &workdir);
            if let Ok(venv) = std::env::var("TENX_REFERENCE_VENV") {
                command.env("VENV", venv);
            }
            for (name, value) in profile_env(profile) {
                command.env(name, value);
            }
            let status = command.status().unwrap();
            assert!(status.success(), "the reference did not start for {profile:?}");
            let started = Started {
                script: script.clone(),
                port: *port,
                workdir,
            };
            Some((format!("http://127.0.0.1:{port}"), Some(started)))
        }
    }
}

fn dump(id: &str, server: &str, steps: &[Step]) {
    for step in steps {
        for (fact, value) in &step.facts {
            println!("DUMP {id} {server} {} {fact} = {value}", step.name);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn side_by_side_with_the_reference_server() {
    let Some(source) = source() else {
        println!("skipped: set TENX_REFERENCE=start (or TENX_REFERENCE_URL) to compare with the reference server");
        return;
    };
    let tag = run_tag();
    let dumping = std::env::var("TENX_CONFORMANCE_DUMP").is_ok();
    let mut report = Vec::new();
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    let mut profiles: Vec<Profile> = SCENARIOS.iter().map(|scenario| scenario.profile).collect();
    profiles.sort();
    profiles.dedup();
    for profile in profiles {
        let Some((base, started)) = reference(&source, profile) else {
            skipped.push(format!("{profile:?}: skipped (needs TENX_REFERENCE=start)"));
            continue;
        };
        let reference = Target::new(&base, &tag);
        let server = tenx::start(profile).await;
        let ours = Target::new(&server.base, &tag);
        for scenario in SCENARIOS.iter().filter(|scenario| scenario.profile == profile) {
            let theirs = scenarios::run(scenario.id, &reference).await;
            let mine = scenarios::run(scenario.id, &ours).await;
            if dumping {
                dump(scenario.id, "reference", &theirs);
                dump(scenario.id, "tenx", &mine);
            }
            let judged = expected::judge_pair(scenario.id, &theirs, &mine);
            report.extend(judged.differences);
            failures.extend(judged.failures);
        }
        drop(started);
    }
    println!("differences from the reference ({} in all):", report.len());
    for section in Why::SECTIONS {
        println!("{section}:");
        for (_, line) in report.iter().filter(|(why, _)| why.section() == section) {
            println!("  {line}");
        }
    }
    for line in &skipped {
        println!("{line}");
    }
    assert!(
        failures.is_empty(),
        "differences the contract does not intend:\n{}",
        failures.join("\n")
    );
}
