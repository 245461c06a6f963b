//! Reading the host's MCP configuration: every problem at once, no value in any message.

use std::collections::BTreeMap;

use super::*;

fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |name| map.get(name).cloned()
}

fn parse(json: serde_json::Value) -> McpConfig {
    serde_json::from_value(json).unwrap()
}

#[test]
fn stdio_and_http_servers_resolve() {
    let config = parse(serde_json::json!({"servers": {
        "files": {"transport": "stdio", "command": "node", "args": ["server.js"], "env": ["FILES_ROOT"]},
        "search": {"transport": "http", "url": "${SEARCH_URL}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "timeout_ms": 500},
    }}));
    let resolved = config
        .resolve(lookup(&[
            ("FILES_ROOT", "/srv"),
            ("SEARCH_URL", "http://127.0.0.1:9"),
            ("TOKEN", "s3cret"),
        ]))
        .unwrap();
    assert_eq!(resolved.names().collect::<Vec<_>>(), ["files", "search"]);
    let debug = format!("{resolved:?}");
    assert!(!debug.contains("s3cret") && !debug.contains("/srv"), "{debug}");
    assert!(
        debug.contains("FILES_ROOT") && debug.contains("authorization"),
        "{debug}"
    );
    assert_eq!(resolved.servers["search"].timeout, Duration::from_millis(500));
    assert_eq!(
        resolved.servers["files"].timeout,
        Duration::from_millis(DEFAULT_TIMEOUT_MS)
    );
}

#[test]
fn every_problem_is_reported_and_no_value_is() {
    let config = parse(serde_json::json!({"servers": {
        "a": {"transport": "stdio", "command": "", "env": ["MISSING", "bad-name", "EMPTY"], "timeout_ms": 0},
        "b": {"transport": "http", "url": "${NOPE}", "headers": {"Accept": "x", "X-Key": "${KEY}", "X-Bad": "${SECRET_WITH_NEWLINE}"}},
        "c": {"transport": "http", "url": "ftp://${HOST}/"},
    }}));
    let error = config
        .resolve(lookup(&[("EMPTY", ""), ("SECRET_WITH_NEWLINE", "a\nb"), ("HOST", "h")]))
        .unwrap_err();
    assert_eq!(
        error.problems,
        [
            "server `a`: `timeout_ms` must be at least 1",
            "server `a`: `command` is empty",
            "server `a`: `bad-name` is not a variable name",
            "server `a`: environment variables not set: `MISSING`, `EMPTY`",
            "server `b`, its URL: the environment variable `NOPE` is not set",
            "server `b`, header `X-Key`: the environment variable `KEY` is not set",
            "server `b`: header `Accept` is written by the MCP transport itself",
            "server `b`: header `X-Bad`, once filled in, holds a character a header cannot",
            "server `c`: its URL, once filled in, is not an absolute http or https URL",
        ]
    );
}

#[test]
fn unknown_settings_are_refused() {
    let error = serde_json::from_value::<McpConfig>(serde_json::json!({"servers": {
        "a": {"transport": "stdio", "command": "x", "enviroment": []}}}))
    .unwrap_err();
    assert!(error.to_string().contains("enviroment"), "{error}");
    let error = serde_json::from_value::<McpConfig>(serde_json::json!({"servers": {
        "a": {"transport": "sse", "url": "x"}}}))
    .unwrap_err();
    assert!(error.to_string().contains("sse"), "{error}");
}
