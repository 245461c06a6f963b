//! What an `http` call sends besides the declared headers: the arguments (a JSON body, or a
//! query string for `GET` and `DELETE`), the idempotency key and the verified identity.

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tenx_engine::Identity;

/// The header that carries the verified user id (absent without auth).
pub const USER_ID_HEADER: &str = "X-Tenx-User-Id";
/// The header that carries the verified roles, comma-separated (empty when none).
pub const ROLES_HEADER: &str = "X-Tenx-Roles";
/// The header that carries the verified scopes, comma-separated (empty when none).
pub const SCOPES_HEADER: &str = "X-Tenx-Scopes";
/// The prefix of every header the runtime writes for identity; a tool may not declare one.
pub const IDENTITY_HEADER_PREFIX: &str = "X-Tenx-";

/// Bytes percent-encoded in header values the runtime writes: controls, space, `%` (so the
/// encoding is one-to-one) and every non-ASCII byte (always encoded by `percent-encoding`).
const HEADER_ENCODE: &AsciiSet = &CONTROLS.add(b' ').add(b'%');
/// The same, plus `,`, for the items of a list header.
const LIST_ITEM_ENCODE: &AsciiSet = &HEADER_ENCODE.add(b',');

/// `text` made safe for a header value: visible ASCII other than `%` is kept, every other
/// byte is `%XX` (uppercase hex). One-to-one, so two keys never become one.
pub fn header_text(text: &str) -> String {
    utf8_percent_encode(text, HEADER_ENCODE).to_string()
}

/// A list as one header value: each item encoded like [`header_text`] with `,` encoded too, then
/// joined by `,`.
fn header_list(items: &[String]) -> String {
    items
        .iter()
        .map(|item| utf8_percent_encode(item, LIST_ITEM_ENCODE).to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The runtime's headers, checked when compiled (`from_static` in a `const` refuses an invalid
/// name at compile time).
const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
const USER_ID: HeaderName = HeaderName::from_static("x-tenx-user-id");
const ROLES: HeaderName = HeaderName::from_static("x-tenx-roles");
const SCOPES: HeaderName = HeaderName::from_static("x-tenx-scopes");

/// Adds `Idempotency-Key` and the identity headers to `headers`.
pub fn add_runtime_headers(headers: &mut HeaderMap, idempotency_key: &str, identity: &Identity) {
    let mut put = |name: HeaderName, text: String| {
        // Encoded text is visible ASCII only, so it is always a valid header value.
        if let Ok(value) = HeaderValue::from_str(&text) {
            headers.insert(name, value);
        }
    };
    put(IDEMPOTENCY_KEY, header_text(idempotency_key));
    if let Some(user_id) = &identity.user_id {
        put(USER_ID, header_text(user_id));
    }
    put(ROLES, header_list(&identity.roles));
    put(SCOPES, header_list(&identity.scopes));
}

/// The query-string text of one argument, or `None` to leave it out: a string as is, a number
/// or boolean as its JSON text, `null` left out, an array or object as its canonical JSON text.
pub fn query_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        Value::Bool(_) | Value::Number(_) => Some(value.to_string()),
        Value::Array(_) | Value::Object(_) => tenx_artifact::canonical_json(value)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
    }
}

/// `url` with the arguments appended as `application/x-www-form-urlencoded` pairs, in key order,
/// after any query the URL already has. Arguments that are not an object add nothing.
pub fn with_query(mut url: Url, arguments: &Value) -> Url {
    let Value::Object(object) = arguments else {
        return url;
    };
    let pairs: Vec<(&String, String)> = object
        .iter()
        .filter_map(|(key, value)| query_text(value).map(|text| (key, text)))
        .collect();
    if !pairs.is_empty() {
        let mut query = url.query_pairs_mut();
        for (key, text) in pairs {
            query.append_pair(key, &text);
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn query_strings_encode_every_kind_of_value() {
        let url = Url::parse("http://127.0.0.1/orders?v=1").unwrap();
        let url = with_query(
            url,
            &json!({
                "id": "A 10&x=1",
                "n": 5,
                "f": 1.5,
                "ok": true,
                "none": null,
                "tags": ["b", "a"],
                "filter": {"z": 1, "a": "é"},
            }),
        );
        assert_eq!(
            url.query(),
            Some(
                "v=1&f=1.5&filter=%7B%22a%22%3A%22%C3%A9%22%2C%22z%22%3A1%7D&id=A+10%26x%3D1&n=5&ok=true&tags=%5B%22b%22%2C%22a%22%5D"
            )
        );
        let plain = with_query(Url::parse("http://127.0.0.1/x").unwrap(), &json!({"none": null}));
        assert_eq!(plain.as_str(), "http://127.0.0.1/x");
        let plain = with_query(Url::parse("http://127.0.0.1/x").unwrap(), &json!([1]));
        assert_eq!(plain.as_str(), "http://127.0.0.1/x");
    }

    #[test]
    fn header_text_is_one_to_one_and_always_valid() {
        assert_eq!(header_text("refund-1042-5950"), "refund-1042-5950");
        assert_eq!(header_text("a b\r\nX-Evil: 1"), "a%20b%0D%0AX-Evil:%201");
        assert_eq!(header_text("50%"), "50%25");
        assert_eq!(header_text("ü"), "%C3%BC");
        assert_ne!(header_text("a\n"), header_text("a%0A"));
        assert_eq!(
            header_list(&["admin".into(), "a,b".into(), "x y".into()]),
            "admin,a%2Cb,x%20y"
        );
        assert_eq!(header_list(&[]), "");
    }

    #[test]
    fn identity_goes_as_claims() {
        let mut headers = HeaderMap::new();
        let identity = Identity {
            user_id: Some("user 7".into()),
            roles: vec!["support".into(), "admin".into()],
            scopes: vec!["orders:read".into()],
            claims: serde_json::Map::new(),
        };
        add_runtime_headers(&mut headers, "key-1", &identity);
        assert_eq!(headers["idempotency-key"], "key-1");
        assert_eq!(headers[USER_ID_HEADER], "user%207");
        assert_eq!(headers[ROLES_HEADER], "support,admin");
        assert_eq!(headers[SCOPES_HEADER], "orders:read");
        let mut headers = HeaderMap::new();
        add_runtime_headers(&mut headers, "k", &Identity::anonymous());
        assert!(headers.get(USER_ID_HEADER).is_none());
        assert_eq!(headers[ROLES_HEADER], "");
        assert_eq!(headers.len(), 3);
    }
}
