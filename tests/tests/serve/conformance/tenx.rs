//! The scenarios against tenx alone, one test each: a tenx server for the scenario's profile
//! serves `reference_graph.tenx`, and every fact the scenario observes must be what the
//! reference does (reference-api.md §17, `expected::reference`) or, where the contract decides
//! otherwise, what the intended difference says (`expected::intended`).

use std::sync::Arc;

use serde_json::json;
use tenx_engine::testing::FakeTools;
use tenx_server::{JwtSettings, Mode, ServerSettings};

use super::super::harness::{Server, compile_named};
use super::expected;
use super::model::ReferenceModel;
use super::target::{Target, run_tag};
use super::{PROGRAM, Profile, SCENARIOS, SECRET, scenarios};

/// The probe graph's local tools: `add` adds, `confirm` runs once approved.
fn tools() -> FakeTools {
    FakeTools::new()
        .responds("add", |call| {
            let sum = call.arguments["a"].as_i64().unwrap_or(0) + call.arguments["b"].as_i64().unwrap_or(0);
            Ok(json!(sum.to_string()))
        })
        .returns("confirm", json!("confirmed"))
        .returns("confirm_first", json!("confirmed"))
        .returns("confirm_second", json!("confirmed"))
}

/// The settings of a profile.
fn settings(profile: Profile) -> ServerSettings {
    let jwt = || {
        Some(JwtSettings {
            key: tenx_server::JwtKey::Secret(SECRET.as_bytes().to_vec()),
            algorithm: "HS256".to_owned(),
            issuer: None,
            audience: None,
        })
    };
    match profile {
        Profile::Dev => ServerSettings::default(),
        Profile::Production => ServerSettings {
            mode: Mode::Production,
            origins: vec!["http://localhost:3000".to_owned()],
            jwt: jwt(),
            ..ServerSettings::default()
        },
        Profile::Auth => ServerSettings {
            jwt: jwt(),
            ..ServerSettings::default()
        },
        Profile::RateLimit => {
            use tenx_server::rate_limit::{LimitBy, RateLimitSettings};
            ServerSettings {
                rate_limit: Some(RateLimitSettings {
                    requests: std::num::NonZeroU32::new(4).unwrap(),
                    window: std::time::Duration::from_secs(60),
                    by: LimitBy::Ip,
                }),
                ..ServerSettings::default()
            }
        }
        Profile::Size => ServerSettings {
            max_request_size: 2000,
            ..ServerSettings::default()
        },
    }
}

/// A tenx server serving the probe graph with `profile`'s settings.
pub async fn start(profile: Profile) -> Server {
    Server::start_with_model(
        compile_named("tests/tests/serve/conformance/reference_graph.tenx", PROGRAM),
        tools(),
        settings(profile),
        Arc::new(ReferenceModel::default()),
    )
    .await
}

/// Runs scenario `id` against a fresh tenx server and checks every fact it observes.
async fn check(id: &str) {
    let scenario = SCENARIOS.iter().find(|scenario| scenario.id == id).unwrap();
    let server = start(scenario.profile).await;
    let target = Target::new(&server.base, &run_tag());
    let steps = scenarios::run(id, &target).await;
    let failures = expected::judge_tenx(id, &steps);
    assert!(failures.is_empty(), "scenario {id}:\n{}", failures.join("\n"));
}

#[tokio::test]
async fn scenario_01_ping_answers_pong_with_the_request_id() {
    check("1").await;
}

#[tokio::test]
async fn scenario_02_invoke_echoes_and_names_the_thread() {
    check("2").await;
}

#[tokio::test]
async fn scenario_03_full_granularity_shows_the_completed_state() {
    check("3").await;
}

#[tokio::test]
async fn scenario_04_invoke_without_config_makes_a_listed_thread() {
    check("4").await;
}

#[tokio::test]
async fn scenario_05_malformed_bodies_are_validation_errors() {
    check("5").await;
}

/// Beyond §17: scenario 5's malformed body in production (reference-api.md §2).
#[tokio::test]
async fn scenario_05_production_hides_what_was_malformed() {
    check("5p").await;
}

#[tokio::test]
async fn scenario_06_a_client_tool_call_is_refused() {
    check("6").await;
}

#[tokio::test]
async fn scenario_07_an_interrupt_pauses_and_the_state_shows_it() {
    check("7").await;
}

#[tokio::test]
async fn scenario_08_a_message_to_a_paused_thread_is_refused() {
    check("8").await;
}

#[tokio::test]
async fn scenario_09_a_resume_answers_and_a_second_is_nothing_to_resume() {
    check("9").await;
}

#[tokio::test]
async fn scenario_10_a_null_resume_cancels() {
    check("10").await;
}

#[tokio::test]
async fn scenario_11_two_interrupts_in_one_node_take_two_resumes() {
    check("11").await;
}

#[tokio::test]
async fn scenario_12_a_resume_without_a_thread_is_nothing_to_resume() {
    check("12").await;
}

#[tokio::test]
async fn scenario_13_a_tool_round_and_an_unknown_tool() {
    check("13").await;
}

#[tokio::test]
async fn scenario_14_a_remote_tool_waits_for_its_own_result() {
    check("14").await;
}

#[tokio::test]
async fn scenario_15_stream_lines_and_the_full_summary() {
    check("15").await;
}

#[tokio::test]
async fn scenario_16_a_node_error_in_the_stream_and_in_invoke() {
    check("16").await;
}

#[tokio::test]
async fn scenario_16_production_hides_the_node_error() {
    check("16p").await;
}

#[tokio::test]
async fn scenario_17_the_recursion_limit_in_production() {
    check("17").await;
}

#[tokio::test]
async fn scenario_18_thread_routes_and_missing_threads() {
    check("18").await;
}

#[tokio::test]
async fn scenario_19_stop_cancels_a_running_invoke() {
    check("19").await;
}

#[tokio::test]
async fn scenario_20_auth_tokens_ownership_and_scopes() {
    check("20").await;
}

#[tokio::test]
async fn scenario_21_the_rate_limit() {
    check("21").await;
}

#[tokio::test]
async fn scenario_22_the_request_size_limit() {
    check("22").await;
}
