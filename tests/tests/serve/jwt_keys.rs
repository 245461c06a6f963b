//! JWT auth with public keys over real loopback HTTP (issue 13 item 4): RS256, ES256 and EdDSA
//! with a PEM public key file or a JWKS file (the key picked by `kid`), `exp` required, `iss` and
//! `aud` when configured, the algorithm pinned (an HS256 token signed with the RSA public key as
//! the secret, `alg: none` and another algorithm of the same family are refused), ownership as
//! with a secret, and the start-up refusals of keys that cannot verify the algorithm. The keys
//! are fixed test keys under `tests/testdata/jwt`.

use std::path::{Path, PathBuf};

use base64ct::Encoding as _;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tenx_server::{JwtKey, JwtSettings, ServerSettings};

use super::harness::{Server, now, refund_example, refund_tools, user};

fn testdata(name: &str) -> PathBuf {
    tenx_tests::repo_root().join("tests/testdata/jwt").join(name)
}

fn der(name: &str) -> Vec<u8> {
    let text = std::fs::read(testdata(name)).unwrap();
    pem_rfc7468::decode_vec(&text).unwrap().1
}

/// The signing key of a test key pair (`rsa`, `rsa2`, `ec`, `ed25519`).
fn signer(pair: &str) -> EncodingKey {
    match pair {
        "rsa" | "rsa2" => EncodingKey::from_rsa_der(&der(&format!("{pair}_private_pkcs1.pem"))),
        "ec" => EncodingKey::from_ec_der(&der("ec_private.pem")),
        "ed25519" => EncodingKey::from_ed_der(&der("ed25519_private.pem")),
        other => panic!("no test key `{other}`"),
    }
}

fn sign(algorithm: Algorithm, pair: &str, kid: Option<&str>, claims: &Value) -> String {
    let header = Header {
        kid: kid.map(str::to_owned),
        ..Header::new(algorithm)
    };
    jsonwebtoken::encode(&header, claims, &signer(pair)).unwrap()
}

fn claims(user_id: &str) -> Value {
    json!({"user_id": user_id, "exp": now() + 300})
}

fn settings(algorithm: &str, key: JwtKey) -> ServerSettings {
    ServerSettings {
        jwt: Some(JwtSettings {
            key,
            algorithm: algorithm.to_owned(),
            issuer: None,
            audience: None,
        }),
        ..ServerSettings::default()
    }
}

fn pem(pair: &str) -> JwtKey {
    JwtKey::PublicKeyFile(testdata(&format!("{pair}_public.pem")))
}

async fn serve(settings: ServerSettings) -> Server {
    Server::start(refund_example(), refund_tools(), settings).await
}

/// Invokes a plain turn as the token's user on `thread`: the status and body.
async fn invoke(server: &Server, token: &str, thread: &str) -> (u16, Value) {
    server
        .as_user(token)
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hi")], "config": {"thread_id": thread}}),
        )
        .await
}

async fn refused(server: &Server, token: &str, code: &str, why: &str) {
    let (status, body) = server.as_user(token).get("/v1/threads").await;
    assert_eq!(status, 401, "{why}: {body}");
    assert_eq!(body["error"]["code"], code, "{why}: {body}");
}

/// A JWKS file of `keys` (pair, kid) for `algorithm`, written under `dir`.
fn jwks_file(dir: &Path, algorithm: Algorithm, keys: &[(&str, Option<&str>)]) -> PathBuf {
    let keys = keys
        .iter()
        .map(|(pair, kid)| {
            let mut jwk = Jwk::from_encoding_key(&signer(pair), algorithm).unwrap();
            jwk.common.key_id = kid.map(str::to_owned);
            jwk
        })
        .collect();
    let path = dir.join("jwks.json");
    std::fs::write(&path, serde_json::to_vec(&JwkSet { keys }).unwrap()).unwrap();
    path
}

#[tokio::test]
async fn rs256_es256_and_eddsa_public_keys_verify_their_tokens_and_name_the_user() {
    for (algorithm, name, pair, other) in [
        (Algorithm::RS256, "RS256", "rsa", "rsa2"),
        (Algorithm::ES256, "ES256", "ec", "rsa"),
        (Algorithm::EdDSA, "EdDSA", "ed25519", "ec"),
    ] {
        let server = serve(settings(name, pem(pair))).await;
        let token = sign(algorithm, pair, None, &claims("alice"));
        let (status, body) = invoke(&server, &token, "t1").await;
        assert_eq!(status, 200, "{name}: {body}");
        let (status, body) = server.as_user(&token).get("/v1/threads").await;
        assert_eq!(status, 200, "{name}: {body}");
        assert_eq!(body["data"]["threads"][0]["user_id"], "alice", "{name}: {body}");

        let expired = sign(algorithm, pair, None, &json!({"user_id": "alice", "exp": now() - 10}));
        refused(&server, &expired, "EXPIRED_TOKEN", name).await;
        let no_exp = sign(algorithm, pair, None, &json!({"user_id": "alice"}));
        refused(&server, &no_exp, "INVALID_TOKEN", name).await;
        let no_user = sign(algorithm, pair, None, &json!({"exp": now() + 60}));
        let (status, body) = server.as_user(&no_user).get("/v1/threads").await;
        assert_eq!(status, 401, "{name}: {body}");
        assert_eq!(body["error"]["message"], "Invalid token, user_id missing");
        if other == "rsa2" {
            let forged = sign(algorithm, other, None, &claims("alice"));
            refused(&server, &forged, "INVALID_TOKEN", "signed by another RSA key").await;
        }
        let before = server.snapshot("t1").await;
        let wrong_family = sign(
            match other {
                "rsa" | "rsa2" => Algorithm::RS256,
                _ => Algorithm::ES256,
            },
            other,
            None,
            &claims("alice"),
        );
        let (status, body) = invoke(&server, &wrong_family, "t1").await;
        assert_eq!(status, 401, "{name} refuses a token of another algorithm: {body}");
        assert_eq!(server.snapshot("t1").await, before, "a refusal records nothing");
    }
}

#[tokio::test]
async fn issuer_and_audience_are_checked_when_configured() {
    let mut settings = settings("ES256", pem("ec"));
    if let Some(jwt) = settings.jwt.as_mut() {
        jwt.issuer = Some("https://idp.example".to_owned());
        jwt.audience = Some("tenx-api".to_owned());
    }
    let server = serve(settings).await;
    let with = |extra: Value| {
        let mut claims = claims("alice");
        for (key, value) in extra.as_object().unwrap() {
            claims[key] = value.clone();
        }
        sign(Algorithm::ES256, "ec", None, &claims)
    };
    let good = with(json!({"iss": "https://idp.example", "aud": "tenx-api"}));
    let (status, body) = invoke(&server, &good, "t1").await;
    assert_eq!(status, 200, "{body}");
    for (extra, why) in [
        (
            json!({"iss": "https://idp.example", "aud": "another-api"}),
            "wrong audience",
        ),
        (json!({"iss": "https://idp.example"}), "no audience"),
        (
            json!({"iss": "https://evil.example", "aud": "tenx-api"}),
            "wrong issuer",
        ),
        (json!({"aud": "tenx-api"}), "no issuer"),
    ] {
        refused(&server, &with(extra), "INVALID_TOKEN", why).await;
    }
}

fn b64(bytes: &[u8]) -> String {
    base64ct::Base64UrlUnpadded::encode_string(bytes)
}

#[tokio::test]
async fn the_algorithm_is_pinned_so_confusion_none_and_family_swaps_are_refused() {
    let server = serve(settings("RS256", pem("rsa"))).await;
    let (status, body) = invoke(&server, &sign(Algorithm::RS256, "rsa", None, &claims("alice")), "t1").await;
    assert_eq!(status, 200, "{body}");
    let before = server.snapshot("t1").await;

    // The algorithm-confusion attack: HS256 "signed" with the public key, which anyone has, as
    // the HMAC secret (its PEM text and its DER bytes, as a naive verifier might hold either).
    let public_pem = std::fs::read(testdata("rsa_public.pem")).unwrap();
    let public_der = der("rsa_public.pem");
    for secret in [&public_pem, &public_der] {
        let confused = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims("mallory"),
            &EncodingKey::from_secret(secret).unwrap(),
        )
        .unwrap();
        let (status, body) = invoke(&server, &confused, "t1").await;
        assert_eq!(status, 401, "HS256 with the public key as secret: {body}");
        assert_eq!(body["error"]["code"], "INVALID_TOKEN");
    }

    // `alg: none`, unsigned, with and without a trailing signature part.
    let header = b64(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = b64(serde_json::to_string(&claims("mallory")).unwrap().as_bytes());
    for unsigned in [format!("{header}.{payload}."), format!("{header}.{payload}")] {
        let (status, body) = invoke(&server, &unsigned, "t1").await;
        assert_eq!(status, 401, "alg none: {body}");
        assert_eq!(body["error"]["code"], "INVALID_TOKEN");
    }

    // The right key but another RSA algorithm than the pinned one.
    let rs512 = sign(Algorithm::RS512, "rsa", None, &claims("alice"));
    refused(&server, &rs512, "INVALID_TOKEN", "RS512 against an RS256 server").await;
    let ps256 = sign(Algorithm::PS256, "rsa", None, &claims("alice"));
    refused(&server, &ps256, "INVALID_TOKEN", "PS256 against an RS256 server").await;
    assert_eq!(server.snapshot("t1").await, before, "refusals record nothing");
}

#[tokio::test]
async fn a_jwks_picks_the_key_by_kid_and_refuses_unknown_or_missing_kids() {
    let dir = tempfile::tempdir().unwrap();
    let path = jwks_file(
        dir.path(),
        Algorithm::RS256,
        &[("rsa", Some("one")), ("rsa2", Some("two"))],
    );
    let server = serve(settings("RS256", JwtKey::JwksFile(path))).await;
    for (pair, kid) in [("rsa", "one"), ("rsa2", "two")] {
        let token = sign(Algorithm::RS256, pair, Some(kid), &claims("alice"));
        let (status, body) = invoke(&server, &token, "t1").await;
        assert_eq!(status, 200, "kid {kid}: {body}");
    }
    let cases = [
        (
            sign(Algorithm::RS256, "rsa", Some("two"), &claims("alice")),
            "kid of another key",
        ),
        (
            sign(Algorithm::RS256, "rsa", None, &claims("alice")),
            "no kid with two keys",
        ),
        (
            sign(Algorithm::RS256, "rsa", Some("three"), &claims("alice")),
            "unknown kid",
        ),
    ];
    for (token, why) in cases {
        refused(&server, &token, "INVALID_TOKEN", why).await;
    }

    let path = jwks_file(dir.path(), Algorithm::EdDSA, &[("ed25519", None)]);
    let server = serve(settings("EdDSA", JwtKey::JwksFile(path))).await;
    let token = sign(Algorithm::EdDSA, "ed25519", None, &claims("bob"));
    let (status, body) = invoke(&server, &token, "t1").await;
    assert_eq!(status, 200, "one key and no kid: {body}");
    let token = sign(Algorithm::EdDSA, "ed25519", Some("surprise"), &claims("bob"));
    refused(&server, &token, "INVALID_TOKEN", "a kid the only key does not have").await;
}

#[tokio::test]
async fn another_users_thread_is_403_to_run_and_404_to_read_under_a_public_key() {
    let server = serve(settings("EdDSA", pem("ed25519"))).await;
    let alice = sign(Algorithm::EdDSA, "ed25519", None, &claims("alice"));
    let bob = sign(Algorithm::EdDSA, "ed25519", None, &claims("bob"));
    let (status, body) = invoke(&server, &alice, "hers").await;
    assert_eq!(status, 200, "{body}");
    let before = server.snapshot("hers").await;
    let (status, body) = invoke(&server, &bob, "hers").await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["message"], "Not authorized to invoke graph");
    let (status, body) = server.as_user(&bob).get("/v1/threads/hers/state").await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(server.snapshot("hers").await, before);
}

/// Why `settings` cannot serve, as `AppState::new` and `tenx serve` say.
fn refusal(settings: &ServerSettings) -> String {
    settings.validate().unwrap_err().to_string()
}

#[test]
fn keys_that_cannot_verify_the_algorithm_refuse_the_start_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let text = refusal(&settings(
        "RS256",
        JwtKey::PublicKeyFile(dir.path().join("missing.pem")),
    ));
    assert!(
        text.contains("JWT_PUBLIC_KEY_FILE") && text.contains("cannot be read"),
        "{text}"
    );
    let text = refusal(&settings("RS256", pem("ec")));
    assert!(
        text.contains("holds an EC P-256 public key, but the algorithm needs an RSA public key"),
        "{text}"
    );
    let text = refusal(&settings("ES256", pem("ed25519")));
    assert!(text.contains("needs an EC P-256 public key"), "{text}");
    let text = refusal(&settings(
        "EdDSA",
        JwtKey::PublicKeyFile(testdata("ed25519_private.pem")),
    ));
    assert!(text.contains("holds a private key"), "{text}");
    let text = refusal(&settings("HS256", pem("rsa")));
    assert!(text.contains("not a public key"), "{text}");
    let text = refusal(&settings(
        "RS256",
        JwtKey::Secret(b"0123456789abcdef0123456789abcdef".to_vec()),
    ));
    assert!(text.contains("not JWT_SECRET_KEY"), "{text}");
    let text = refusal(&settings("none", pem("rsa")));
    assert!(text.contains("JWT_ALGORITHM `none` is not supported"), "{text}");

    let path = jwks_file(dir.path(), Algorithm::ES256, &[("ec", Some("one"))]);
    let text = refusal(&settings("RS256", JwtKey::JwksFile(path)));
    assert!(text.contains("has no key usable for RS256"), "{text}");
    let path = dir.path().join("garbage.json");
    std::fs::write(&path, "{\"keys\": 3}").unwrap();
    let text = refusal(&settings("RS256", JwtKey::JwksFile(path)));
    assert!(text.contains("not a JWKS"), "{text}");
    let path = jwks_file(
        dir.path(),
        Algorithm::RS256,
        &[("rsa", Some("one")), ("rsa2", Some("one"))],
    );
    let text = refusal(&settings("RS256", JwtKey::JwksFile(path)));
    assert!(text.contains("key `one` appears twice"), "{text}");

    assert!(settings("EdDSA", pem("ed25519")).validate().is_ok());
}
