//! The JSON Schema in `schema/` describes what `seal` writes, and nothing else.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::{Edit, envelope, sample};
use serde_json::{Value, json};
use tenx_artifact::{JSON_SCHEMA, generate_keypair, seal, sign};

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(JSON_SCHEMA).unwrap();
    jsonschema::draft202012::meta::validate(&schema).unwrap();
    jsonschema::draft202012::new(&schema).unwrap()
}

fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|error| format!("{}: {}", error.instance_path(), error))
        .collect()
}

#[test]
fn sealed_artifacts_match_the_schema() {
    let validator = validator();
    let (secret, _) = generate_keypair().unwrap();
    for bytes in [
        seal(sample()).unwrap().to_bytes(),
        sign(sample(), &secret).unwrap().to_bytes(),
    ] {
        let file = envelope(&bytes);
        assert_eq!(errors(&validator, &file), Vec::<String>::new());
    }
}

#[test]
fn the_schema_refuses_what_the_loader_refuses_by_shape() {
    let validator = validator();
    let good = envelope(&seal(sample()).unwrap().to_bytes());
    let edits: [(&str, Edit); 8] = [
        ("unknown body field", |file| {
            file["artifact"]["tools"]["now"]["colour"] = json!(1)
        }),
        ("missing null field", |file| {
            file["artifact"]["agents"]["triage"]
                .as_object_mut()
                .unwrap()
                .remove("output_schema");
        }),
        ("unknown risk", |file| {
            file["artifact"]["tools"]["now"]["risk"] = json!("harmless")
        }),
        ("newer format", |file| file["format"] = json!("tenx-graph/4")),
        ("older format", |file| file["format"] = json!("tenx-graph/2")),
        ("older format", |file| file["format"] = json!("tenx-graph/1")),
        ("bad id", |file| file["id"] = json!("sha256:ABC")),
        ("bad arm kind", |file| {
            file["artifact"]["graphs"]["support_desk"]["routes"][0]["arms"][0]["kind"] = json!("maybe");
        }),
    ];
    for (what, edit) in edits {
        let mut file = good.clone();
        edit(&mut file);
        assert!(!validator.is_valid(&file), "{what} passed the schema");
    }
}

#[test]
fn the_schema_describes_native_tools_and_headers() {
    let validator = validator();
    let mut artifact = sample();
    artifact.tools.get_mut("weather").unwrap().run = tenx_artifact::Run::Native {
        name: "weather.forecast".into(),
    };
    artifact.native_handlers = vec!["weather.forecast".into()];
    let good = envelope(&seal(artifact).unwrap().to_bytes());
    assert_eq!(errors(&validator, &good), Vec::<String>::new());
    let edits: [(&str, Edit); 5] = [
        ("no native_handlers", |file| {
            file["artifact"].as_object_mut().unwrap().remove("native_handlers");
        }),
        ("bad native name", |file| {
            file["artifact"]["tools"]["weather"]["run"]["name"] = json!("Weather");
        }),
        ("no headers", |file| {
            file["artifact"]["tools"]["issue_refund"]["run"]
                .as_object_mut()
                .unwrap()
                .remove("headers");
        }),
        ("header name not a token", |file| {
            file["artifact"]["tools"]["issue_refund"]["run"]["headers"] = json!({"X Y": "1"});
        }),
        ("header value with a line break", |file| {
            file["artifact"]["tools"]["issue_refund"]["run"]["headers"] = json!({"X": "1\r\nY: 2"});
        }),
    ];
    for (what, edit) in edits {
        let mut file = good.clone();
        edit(&mut file);
        assert!(!validator.is_valid(&file), "{what} passed the schema");
    }
}
