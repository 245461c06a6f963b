//! The reference server (10xgraph-api with its no-LLM test graph), started with the shared
//! script `run-10xgraph-reference.sh` on a port, work directory and virtualenv of the bench's
//! own, so it does not collide with another copy on the default port. `TENX_BENCH_REFERENCE=skip`
//! leaves it out; `TENX_BENCH_REFERENCE_SCRIPT`, `_PORT`, `_WORKDIR` and `_VENV` override where
//! it comes from. When it cannot start the bench says why and goes on without it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;

const SCRIPT: &str = "/work/shared/reference/run-10xgraph-reference.sh";
const PORT: u16 = 8790;
const WORKDIR: &str = "/tmp/tenx-ref-bench";
const VENV: &str = "/tmp/tenx-venv-bench";

/// The running reference server; dropping it stops it.
pub(crate) struct Reference {
    script: PathBuf,
    vars: Vec<(&'static str, String)>,
    pub(crate) addr: SocketAddr,
}

impl Reference {
    /// Starts it (making its virtualenv first when needed). `Err` says why it was skipped.
    pub(crate) fn start() -> Result<Self, String> {
        if std::env::var("TENX_BENCH_REFERENCE").is_ok_and(|value| value == "skip") {
            return Err("TENX_BENCH_REFERENCE=skip".to_owned());
        }
        let setting = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.to_owned());
        let script = PathBuf::from(setting("TENX_BENCH_REFERENCE_SCRIPT", SCRIPT));
        if !script.is_file() {
            return Err(format!("{} is not there", script.display()));
        }
        let port: u16 = setting("TENX_BENCH_REFERENCE_PORT", &PORT.to_string())
            .parse()
            .map_err(|_| "TENX_BENCH_REFERENCE_PORT is not a port".to_owned())?;
        let vars = vec![
            ("PORT", port.to_string()),
            ("WORKDIR", setting("TENX_BENCH_REFERENCE_WORKDIR", WORKDIR)),
            ("VENV", setting("TENX_BENCH_REFERENCE_VENV", VENV)),
            ("MODE", "development".to_owned()),
            ("AUTH", "none".to_owned()),
        ];
        let reference = Self {
            script,
            vars,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        };
        let output = reference
            .command("start")
            .output()
            .map_err(|error| format!("running {}: {error}", reference.script.display()))?;
        if output.status.success() {
            Ok(reference)
        } else {
            let said = String::from_utf8_lossy(&output.stderr);
            let last: Vec<&str> = said.lines().rev().take(3).collect();
            Err(format!(
                "{} start failed: {}",
                reference.script.display(),
                last.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ))
        }
    }

    fn command(&self, action: &str) -> Command {
        let mut command = Command::new("bash");
        command
            .arg(&self.script)
            .arg(action)
            .env_remove("AUTHZ")
            .env_remove("RATE_LIMIT")
            .env_remove("REF_INTERRUPT_BEFORE")
            .env_remove("REF_INTERRUPT_AFTER");
        for (name, value) in &self.vars {
            command.env(name, value);
        }
        command
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        let _ = self.command("stop").output();
    }
}
