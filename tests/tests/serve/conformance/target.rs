//! A server a scenario talks to (tenx's or the reference's, over loopback HTTP), its replies,
//! and the helpers that turn a reply into facts: thread ids made unique per run (a reference
//! that keeps running keeps its threads), interrupt and call ids masked (they are random).

use std::collections::BTreeMap;

use reqwest::header::HeaderMap;
use reqwest::{Client, Method};
use serde_json::{Value, json};

use super::{SECRET, Step};

/// One server under test.
#[derive(Debug, Clone)]
pub struct Target {
    base: String,
    client: Client,
    /// Appended to every thread id, so the scenarios of one run never meet an older run's threads.
    tag: String,
}

/// A reply: status, headers and the JSON body (a non-JSON body as a JSON string).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Target {
    pub fn new(base: &str, tag: &str) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            base: base.trim_end_matches('/').to_owned(),
            client: Client::new(),
            tag: tag.to_owned(),
        }
    }

    /// The run's own id for the scenario's thread `name`.
    pub fn thread(&self, name: &str) -> String {
        format!("{name}-{}", self.tag)
    }

    /// Sends one request, with a JSON body and a bearer token when given.
    pub async fn send(&self, method: Method, path: &str, body: Option<&Value>, token: Option<&str>) -> Reply {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(body);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        self.read(request).await
    }

    /// Sends a prepared request (raw bodies, own headers).
    pub async fn read(&self, request: reqwest::RequestBuilder) -> Reply {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone()));
        Reply {
            status,
            headers,
            body,
            text,
        }
    }

    /// A request builder for `path`, for what [`Target::send`] cannot say.
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, format!("{}{path}", self.base))
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send(Method::POST, path, Some(&body), None).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send(Method::GET, path, None, None).await
    }

    /// Replaces this run's tag in `text` with `<run>`, so ids compare across runs and servers.
    pub fn untag(&self, value: &Value) -> Value {
        let text = value.to_string().replace(&format!("-{}", self.tag), "");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

/// A tag no earlier run used: the time in nanoseconds, in hex.
pub fn run_tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("{nanos:x}")
}

/// A user message.
pub fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

/// A token for `user_id` with `extra` claims, valid for an hour, signed with the shared secret.
pub fn token(user_id: &str, extra: Value) -> String {
    let mut claims = json!({"user_id": user_id, "exp": super::super::harness::now() + 3600});
    if let (Some(claims), Some(extra)) = (claims.as_object_mut(), extra.as_object()) {
        claims.extend(extra.clone());
    }
    sign(&claims)
}

/// Signs `claims` with the shared secret (HS256).
pub fn sign(claims: &Value) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        claims,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// Builds a step from its facts.
pub fn step(name: &'static str, facts: impl IntoIterator<Item = (&'static str, Value)>) -> Step {
    Step {
        name,
        facts: facts.into_iter().collect::<BTreeMap<_, _>>(),
    }
}

/// The facts every reply has: the status, and for an error envelope its code and message.
pub fn outcome(reply: &Reply) -> Vec<(&'static str, Value)> {
    let mut facts = vec![("status", json!(reply.status))];
    if let Some(error) = reply.body.get("error").filter(|error| error.is_object()) {
        facts.push(("code", error["code"].clone()));
        facts.push(("message", mask(&error["message"])));
    }
    facts
}

/// `text` with every interrupt id (`int_` and 32 hex digits) written `int_<id>`.
pub fn mask(value: &Value) -> Value {
    let Some(text) = value.as_str() else {
        return value.clone();
    };
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("int_") {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        let hex = after
            .get(4..)
            .unwrap_or("")
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .count();
        if hex == 32 {
            out.push_str("int_<id>");
            rest = after.get(36..).unwrap_or("");
        } else {
            out.push_str("int_");
            rest = after.get(4..).unwrap_or("");
        }
    }
    out.push_str(rest);
    Value::String(out)
}

/// Whether `value` is an interrupt id: `int_` and 32 lowercase hex digits.
pub fn is_interrupt_id(value: &Value) -> bool {
    value.as_str().is_some_and(|id| {
        id.strip_prefix("int_")
            .is_some_and(|hex| hex.len() == 32 && hex.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)))
    })
}

/// Whether `value` is a uuid (8-4-4-4-12 hex digits).
pub fn is_uuid(value: &Value) -> bool {
    value.as_str().is_some_and(|id| {
        let parts: Vec<&str> = id.split('-').collect();
        parts.iter().map(|part| part.len()).eq([8, 4, 4, 4, 12])
            && parts.iter().all(|part| part.chars().all(|c| c.is_ascii_hexdigit()))
    })
}

/// The roles of a list of messages.
pub fn roles(messages: &Value) -> Value {
    messages
        .as_array()
        .map(|all| all.iter().map(|m| m["role"].clone()).collect())
        .unwrap_or(Value::Null)
}

/// The text of a message's first text block.
pub fn text_of(message: &Value) -> Value {
    message["content"]
        .as_array()
        .and_then(|blocks| blocks.iter().find(|block| block["type"] == "text"))
        .map(|block| block["text"].clone())
        .unwrap_or(Value::Null)
}

/// The block types of a message.
pub fn block_types(message: &Value) -> Value {
    message["content"]
        .as_array()
        .map(|blocks| blocks.iter().map(|block| block["type"].clone()).collect())
        .unwrap_or(Value::Null)
}

/// An interrupt's `key` with a tool call id written `<call>`: `tool:<call>:0`.
pub fn key_shape(key: &Value) -> Value {
    match key.as_str() {
        Some(key) if key.starts_with("tool:") => {
            let index = key.rsplit(':').next().unwrap_or("");
            json!(format!("tool:<call>:{index}"))
        }
        _ => key.clone(),
    }
}
