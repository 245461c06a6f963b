//! Run bindings: `native` tools must be listed in `native_handlers` (exactly), and an `http`
//! tool's headers follow the header rules. `seal` refuses an artifact that breaks one, and the
//! loader refuses a hand-edited file that does.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed test"
)]

mod common;

use common::{envelope, reseal, sample, to_bytes};
use serde_json::{Value, json};
use tenx_artifact::{Artifact, LoadError, Run, SealError, TrustPolicy, load, seal};

/// The sample with its `weather` tool run by the host's `weather.forecast` handler.
fn native_sample() -> Artifact {
    let mut artifact = sample();
    artifact.tools.get_mut("weather").unwrap().run = Run::Native {
        name: "weather.forecast".into(),
    };
    artifact.native_handlers = vec!["weather.forecast".into()];
    artifact
}

fn seal_error(artifact: Artifact) -> String {
    match seal(artifact) {
        Err(SealError::Inconsistent(what)) => what,
        other => panic!("expected Inconsistent, got {:?}", other.map(|_| ())),
    }
}

/// Loads the sealed native sample after `edit`, resealed as a forger would.
fn load_edited(edit: impl FnOnce(&mut Value)) -> String {
    let bytes = seal(native_sample()).unwrap().to_bytes();
    let mut edited = envelope(&bytes);
    edit(&mut edited["artifact"]);
    reseal(&mut edited);
    match load(&to_bytes(&edited), &TrustPolicy::signature_optional()) {
        Err(LoadError::Inconsistent(what)) => what,
        Err(other) => panic!("expected Inconsistent, got {other}"),
        Ok(_) => panic!("the edited artifact loaded"),
    }
}

#[test]
fn a_native_tool_listed_in_native_handlers_seals_and_loads() {
    let sealed = seal(native_sample()).unwrap();
    let body: Value = serde_json::from_slice(sealed.body_bytes()).unwrap();
    assert_eq!(body["native_handlers"], json!(["weather.forecast"]));
    assert_eq!(
        body["tools"]["weather"]["run"],
        json!({"kind": "native", "name": "weather.forecast"})
    );
    let loaded = load(&sealed.to_bytes(), &TrustPolicy::signature_optional()).unwrap();
    assert_eq!(loaded.artifact.native_handlers, vec!["weather.forecast".to_owned()]);
}

#[test]
fn seal_sorts_native_handlers_and_drops_repeats() {
    let mut artifact = native_sample();
    artifact.tools.get_mut("now").unwrap().run = Run::Native {
        name: "clock.now".into(),
    };
    artifact.native_handlers = vec!["weather.forecast".into(), "clock.now".into(), "clock.now".into()];
    let sealed = seal(artifact).unwrap();
    assert_eq!(
        sealed.artifact().native_handlers,
        vec!["clock.now".to_owned(), "weather.forecast".to_owned()]
    );
}

#[test]
fn seal_refuses_native_handlers_that_differ_from_the_tools() {
    let mut missing = native_sample();
    missing.native_handlers.clear();
    assert!(seal_error(missing).contains("`native_handlers` lacks `weather.forecast`"));

    let mut extra = native_sample();
    extra.native_handlers.push("crm.lookup".into());
    assert!(seal_error(extra).contains("`native_handlers` lists `crm.lookup`, which no tool runs"));

    let mut bad_name = native_sample();
    bad_name.tools.get_mut("weather").unwrap().run = Run::Native {
        name: "Weather/Forecast".into(),
    };
    bad_name.native_handlers = vec!["Weather/Forecast".into()];
    assert!(seal_error(bad_name).contains("native handler name `Weather/Forecast`"));
}

#[test]
fn load_refuses_edited_native_handlers() {
    let what = load_edited(|body| body["native_handlers"] = json!([]));
    assert!(what.contains("lacks `weather.forecast`"), "{what}");
    let what = load_edited(|body| body["native_handlers"] = json!(["weather.forecast", "x.y"]));
    assert!(what.contains("lists `x.y`"), "{what}");
    let what = load_edited(|body| body["native_handlers"] = json!(["weather.forecast", "weather.forecast"]));
    assert!(
        what.contains("`native_handlers` must be sorted and without repeats"),
        "{what}"
    );
    let what = load_edited(|body| body["tools"]["now"]["run"] = json!({"kind": "native", "name": "clock.now"}));
    assert!(what.contains("lacks `clock.now`"), "{what}");
}

#[test]
fn load_refuses_a_body_without_native_handlers() {
    let bytes = seal(sample()).unwrap().to_bytes();
    let mut edited = envelope(&bytes);
    edited["artifact"].as_object_mut().unwrap().remove("native_handlers");
    reseal(&mut edited);
    assert!(load(&to_bytes(&edited), &TrustPolicy::signature_optional()).is_err());
}

fn with_headers(headers: &[(&str, &str)]) -> Artifact {
    let mut artifact = sample();
    if let Run::Http { headers: map, .. } = &mut artifact.tools.get_mut("issue_refund").unwrap().run {
        *map = headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
    }
    artifact
}

#[test]
fn seal_refuses_bad_headers() {
    for (headers, expected) in [
        (&[("X Api", "1")][..], "header name `X Api` is not an HTTP token"),
        (
            &[("Host", "example.com")][..],
            "header `Host` is written by the runtime",
        ),
        (
            &[("idempotency-key", "k")][..],
            "header `idempotency-key` is written by the runtime",
        ),
        (&[("Proxy-Authorization", "x")][..], "is written by the runtime"),
        (
            &[("Authorization", "a"), ("authorization", "b")][..],
            "header `authorization` is set twice",
        ),
        (
            &[("X-Note", "a\r\nX-Admin: 1")][..],
            "header `X-Note` holds a control character",
        ),
    ] {
        let what = seal_error(with_headers(headers));
        assert!(what.contains(expected), "{what}");
    }
    seal(with_headers(&[
        ("Authorization", "Bearer ${PAY_TOKEN}"),
        ("X-Trace", ""),
    ]))
    .unwrap();
}

#[test]
fn load_refuses_edited_headers() {
    let what = load_edited(|body| {
        body["tools"]["issue_refund"]["run"]["headers"] = json!({"Content-Length": "0"});
    });
    assert!(
        what.contains("header `Content-Length` is written by the runtime"),
        "{what}"
    );
    let what = load_edited(|body| {
        body["tools"]["issue_refund"]["run"]["headers"] = json!({"X-A": "1\n2"});
    });
    assert!(what.contains("holds a control character"), "{what}");
}
