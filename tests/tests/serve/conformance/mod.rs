//! The 22 black-box scenarios of reference-api.md §17, run as the contract adapts them: the
//! probe graph of the reference (`../shared/reference/ref_graph.py`) as a sealed tenx program
//! (`reference_graph.tenx`), the servers each scenario needs ([`Profile`]), what a scenario
//! observes ([`Step`]s of named facts), and the two ways the scenarios run: against tenx alone
//! ([`tenx`], always) and side by side with the reference server ([`side_by_side`], opt-in).

mod expected;
mod model;
mod reference_facts;
mod scenarios;
mod side_by_side;
mod target;
mod tenx;

use std::collections::BTreeMap;

use serde_json::Value;

/// The probe graph, as a tenx program.
pub const PROGRAM: &str = include_str!("reference_graph.tenx");

/// The JWT secret the reference's script configures (reference-api.md §18); tenx's servers
/// with auth use it too, so one token is good for both.
pub const SECRET: &str = "reference-secret-key-0123456789abcdef";

/// Which server a scenario needs: the reference starts one process per profile
/// (reference-api.md §18), tenx one router.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Profile {
    /// Development mode, no auth.
    Dev,
    /// `MODE=production` (tenx also needs auth there: it refuses to start without).
    Production,
    /// `AUTH=jwt AUTHZ=ownership`.
    Auth,
    /// `RATE_LIMIT=4` (4 requests per 60 s, by IP).
    RateLimit,
    /// `MAX_REQUEST_SIZE=2000`.
    Size,
}

/// What one request of a scenario showed: named facts (status, error code, message, the parts
/// of the body the scenario is about), compared fact by fact.
#[derive(Debug, Clone)]
pub struct Step {
    /// The step's name, unique within its scenario.
    pub name: &'static str,
    /// The facts, by name.
    pub facts: BTreeMap<&'static str, Value>,
}

/// One scenario: its id (`"16p"` is scenario 16's production half) and the profile it needs.
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    pub id: &'static str,
    pub profile: Profile,
}

/// Every scenario, in §17's order.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        id: "1",
        profile: Profile::Dev,
    },
    Scenario {
        id: "2",
        profile: Profile::Dev,
    },
    Scenario {
        id: "3",
        profile: Profile::Dev,
    },
    Scenario {
        id: "4",
        profile: Profile::Dev,
    },
    Scenario {
        id: "5",
        profile: Profile::Dev,
    },
    Scenario {
        id: "5p",
        profile: Profile::Production,
    },
    Scenario {
        id: "6",
        profile: Profile::Dev,
    },
    Scenario {
        id: "7",
        profile: Profile::Dev,
    },
    Scenario {
        id: "8",
        profile: Profile::Dev,
    },
    Scenario {
        id: "9",
        profile: Profile::Dev,
    },
    Scenario {
        id: "10",
        profile: Profile::Dev,
    },
    Scenario {
        id: "11",
        profile: Profile::Dev,
    },
    Scenario {
        id: "12",
        profile: Profile::Dev,
    },
    Scenario {
        id: "13",
        profile: Profile::Dev,
    },
    Scenario {
        id: "14",
        profile: Profile::Dev,
    },
    Scenario {
        id: "15",
        profile: Profile::Dev,
    },
    Scenario {
        id: "16",
        profile: Profile::Dev,
    },
    Scenario {
        id: "16p",
        profile: Profile::Production,
    },
    Scenario {
        id: "17",
        profile: Profile::Production,
    },
    Scenario {
        id: "18",
        profile: Profile::Dev,
    },
    Scenario {
        id: "19",
        profile: Profile::Dev,
    },
    Scenario {
        id: "20",
        profile: Profile::Auth,
    },
    Scenario {
        id: "21",
        profile: Profile::RateLimit,
    },
    Scenario {
        id: "22",
        profile: Profile::Size,
    },
];
