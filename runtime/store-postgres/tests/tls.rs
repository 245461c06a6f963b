//! TLS to PostgreSQL, against a private cluster that accepts only TLS connections
//! ([`tls_server`]; one without TLS for the fallback): what each `sslmode` connects to and
//! refuses, the causes a refusal names, and the store (migrations, a commit, the listening
//! connection) over TLS.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;
mod tls_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{save, thread};
use tenx_engine::ports::Store;
use tenx_store_postgres::{PostgresOptions, PostgresStore, migrate};

/// Takes a private TLS cluster or returns from the test (which then passes, having said it skips).
macro_rules! server_or_skip {
    () => {
        match tls_server::start() {
            Some(server) => server,
            None => return,
        }
    };
}

/// Connects to `url` (by bringing the schema `probe` to the current version); the error's
/// text when that fails.
async fn connect(url: &str) -> Result<(), String> {
    connect_in(url, "probe").await
}

/// [`connect`], with the schema `schema`.
async fn connect_in(url: &str, schema: &str) -> Result<(), String> {
    let options = PostgresOptions {
        schema: schema.to_owned(),
        ..PostgresOptions::default()
    };
    migrate(url, &options)
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_sslmode_connects_or_refuses_as_libpq_does() {
    let server = server_or_skip!();
    let ca = server.ca.display().to_string();
    let other = server.other_ca.display().to_string();

    // Encrypted, nothing checked: any certificate will do, by either name.
    for host in ["localhost", "127.0.0.1"] {
        connect(&server.url(host, "sslmode=require")).await.unwrap();
        connect(&server.url(host, "sslmode=prefer")).await.unwrap();
        connect(&server.url(host, "sslmode=allow")).await.unwrap();
        connect(&server.url(host, "")).await.unwrap();
    }

    // The right CA and the name the certificate lists.
    connect(&server.url("localhost", &format!("sslmode=verify-full&sslrootcert={ca}")))
        .await
        .unwrap();
    connect(&server.url("localhost", &format!("sslmode=verify-ca&sslrootcert={ca}")))
        .await
        .unwrap();

    // Another CA: the chain does not verify, whatever checks it.
    for query in [
        format!("sslmode=verify-full&sslrootcert={other}"),
        format!("sslmode=verify-ca&sslrootcert={other}"),
        // libpq: `require` with a root certificate file checks the chain, as verify-ca.
        format!("sslmode=require&sslrootcert={other}"),
    ] {
        let error = connect(&server.url("localhost", &query)).await.unwrap_err();
        eprintln!("{query}: {error}");
        assert!(
            error.contains(
                "error performing TLS handshake: certificate verify failed: invalid peer certificate: UnknownIssuer"
            ),
            "{query}: {error}"
        );
        assert!(error.contains("not signed by a CA in `sslrootcert`"), "{error}");
    }

    // By 127.0.0.1, against a certificate for `localhost` alone: verify-full checks the name,
    // verify-ca (and require with the CA) only the chain.
    let error = connect(&server.url("127.0.0.1", &format!("sslmode=verify-full&sslrootcert={ca}")))
        .await
        .unwrap_err();
    eprintln!("verify-full by 127.0.0.1: {error}");
    assert!(
        error.contains("certificate verify failed: invalid peer certificate: certificate not valid for name"),
        "{error}"
    );
    assert!(error.contains("127.0.0.1") && error.contains("localhost"), "{error}");
    assert!(
        error.contains("use `sslmode=verify-ca` to check the chain alone"),
        "{error}"
    );
    connect(&server.url("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={ca}")))
        .await
        .unwrap();
    connect(&server.url("127.0.0.1", &format!("sslmode=require&sslrootcert={ca}")))
        .await
        .unwrap();

    // Without `sslrootcert`, verify-* checks against the system's roots, which do not hold
    // the test CA (or, on a machine with none, the start says so).
    let error = connect(&server.url("localhost", "sslmode=verify-full"))
        .await
        .unwrap_err();
    assert!(
        error.contains("UnknownIssuer") || error.contains("the system's trusted root certificates could not be loaded"),
        "{error}"
    );

    // A plain connection: the server's pg_hba.conf has only `hostssl` lines.
    let error = connect(&server.url("127.0.0.1", "sslmode=disable")).await.unwrap_err();
    eprintln!("sslmode=disable: {error}");
    assert!(
        error.contains("db error: FATAL: no pg_hba.conf entry for host \"127.0.0.1\"")
            && error.contains("no encryption"),
        "{error}"
    );

    // libpq's key=value form, with a quoted path.
    let conninfo = format!(
        "host=localhost port={} user=postgres dbname=postgres sslmode=verify-full sslrootcert='{ca}'",
        server.port
    );
    connect(&conninfo).await.unwrap();
    let conninfo = format!(
        "host=127.0.0.1 port={} user=postgres sslmode = verify-full sslrootcert={ca}",
        server.port
    );
    assert!(
        connect(&conninfo)
            .await
            .unwrap_err()
            .contains("certificate not valid for name")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_tls_is_refused_by_require_and_used_plain_by_prefer_and_allow() {
    let server = match tls_server::start_plain() {
        Some(server) => server,
        None => return,
    };
    let error = connect(&server.url("127.0.0.1", "sslmode=require")).await.unwrap_err();
    eprintln!("sslmode=require against a server without TLS: {error}");
    assert!(
        error.contains("error performing TLS handshake: server does not support TLS"),
        "{error}"
    );
    for mode in ["prefer", "allow", "disable"] {
        connect(&server.url("127.0.0.1", &format!("sslmode={mode}")))
            .await
            .unwrap();
    }
    // The default is prefer.
    connect(&server.url("127.0.0.1", "")).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_migrates_commits_and_listens_over_tls() {
    let server = server_or_skip!();
    let url = server.url(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}&schema=tls", server.ca.display()),
    );
    let migrated = migrate(&url, &PostgresOptions::default()).await.unwrap();
    assert_eq!(migrated.to, tenx_store_postgres::schema_version());
    // Polling so slow that only a NOTIFY heard on the listening connection wakes a waiter.
    let options = PostgresOptions {
        lease_poll: Duration::from_secs(30),
        ..PostgresOptions::default()
    };
    let first = Arc::new(PostgresStore::open(&url, options.clone()).await.unwrap());
    let second = Arc::new(PostgresStore::open(&url, options).await.unwrap());
    first.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    assert_eq!(second.load("t").await.unwrap().unwrap(), thread("t", None, 1, 1));

    let lease = first.lock("t").await.unwrap();
    let waiter = {
        let second = Arc::clone(&second);
        tokio::spawn(async move {
            let lease = second.lock("t").await.unwrap();
            (Instant::now(), lease.thread_id().to_owned())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiter.is_finished(), "the second store took a held lock");
    let released = Instant::now();
    drop(lease);
    let (woken, locked) = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(locked, "t");
    let waited = woken.duration_since(released);
    assert!(
        waited < Duration::from_secs(5),
        "the waiter was not woken by a NOTIFY: {waited:?}"
    );
    eprintln!("a lock released over TLS woke the other store's waiter after {waited:?}");
}
