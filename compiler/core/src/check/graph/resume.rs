//! Where a thread's next run starts (`resume = entry | last_agent`). `entry` is the default:
//! every run starts at an entry. With `last_agent`, a thread whose last run ended by going from
//! an agent node straight to `END` starts its next run at that agent node, so every reachable
//! agent node with a way to `END` is a start too: the topology lists them
//! (`Topology::resumes`) and the approval dominance proof searches from them
//! (`check/policy.rs`). Any other value is refused (`TENX0370`); `last_agent` in a graph where
//! no agent node can end a run changes nothing and is a warning (`TENX0371`).

use super::GraphCheck;
use crate::check::topology::{RESUME_ENTRY, RESUME_LAST_AGENT};
use crate::suggest::did_you_mean;
use tenx_diagnostics::{Code, Diagnostic};

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let Some(resume) = c.g().resume.clone() else { return };
    let graph = c.g().name.name.clone();
    if resume.name == RESUME_LAST_AGENT {
        if c.topology.entry.is_some() && c.topology.agents_ending_runs().is_empty() {
            let d = Diagnostic::new(
                Code::TENX0371,
                format!("graph `{graph}` resumes at the last agent, but no agent node can end a run"),
                c.file,
                resume.span,
            )
            .label("no run ends straight after an agent")
            .note("a run resumes at the agent node whose edge or route arm to `END` ended the thread's last run")
            .help("remove `resume`, or lead an agent node to `END`");
            c.report(d);
        }
        return;
    }
    if resume.name == RESUME_ENTRY {
        return;
    }
    let mut d = Diagnostic::new(
        Code::TENX0370,
        format!("`{}` is not a way to resume a thread", resume.name),
        c.file,
        resume.span,
    )
    .label("expected `entry` or `last_agent`");
    let options = [RESUME_ENTRY, RESUME_LAST_AGENT];
    d = match did_you_mean(&resume.name, &options) {
        Some(name) => d.help(format!("did you mean `{name}`?")),
        None => d.help("write `resume = last_agent` to start a thread's next run at the agent that answered last, or leave `resume` out"),
    };
    c.report(d);
}
