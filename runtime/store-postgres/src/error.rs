//! How PostgreSQL's errors become [`StoreError`]s: a lost or refused connection, a pool that
//! found no connection in time, a serialization failure or a deadlock are
//! [`StoreError::Transient`] (the operation may be retried); everything else is
//! [`StoreError::Failed`]. Messages name what failed, never a stored value or a password, and
//! carry the causes ([`chain`]): a failed TLS handshake says why ("certificate verify failed:
//! …"), a refused connection gives the server's reason.

use tenx_engine::ports::StoreError;
use tokio_postgres::error::SqlState;

/// Converts a PostgreSQL error, saying what the store was doing.
pub(crate) fn sql(doing: &str, error: &tokio_postgres::Error) -> StoreError {
    let transient = match error.code() {
        // No server error at all: the connection failed, closed or timed out.
        None => true,
        Some(code) => {
            code.code().starts_with("08")
                || [
                    SqlState::T_R_SERIALIZATION_FAILURE,
                    SqlState::T_R_DEADLOCK_DETECTED,
                    SqlState::ADMIN_SHUTDOWN,
                    SqlState::CRASH_SHUTDOWN,
                    SqlState::CANNOT_CONNECT_NOW,
                    SqlState::TOO_MANY_CONNECTIONS,
                ]
                .contains(code)
        }
    };
    let text = match error.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => chain(error),
    };
    if transient {
        StoreError::Transient(format!("{doing}: {text}"))
    } else {
        StoreError::Failed(format!("{doing}: {text}"))
    }
}

/// Whether the error is a unique violation (two writers created one row at once).
pub(crate) fn is_unique_violation(error: &tokio_postgres::Error) -> bool {
    error.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

/// No connection could be had from the pool in time (the database is down or saturated).
pub(crate) fn pool(doing: &str, error: &deadpool_postgres::PoolError) -> StoreError {
    let text = match error {
        deadpool_postgres::PoolError::Backend(error) => chain(error),
        other => other.to_string(),
    };
    StoreError::Transient(format!("{doing}: no connection to PostgreSQL: {text}"))
}

/// `error` and its causes, joined by `: ` (a cause already at the end of the text is not
/// repeated). A certificate rustls rejected reads "certificate verify failed: …", with a hint.
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(tls @ rustls::Error::InvalidCertificate(why)) = tls_cause(error) {
            push(&mut text, &format!("certificate verify failed: {tls}{}", hint(why)));
            break;
        }
        push(&mut text, &error.to_string());
        current = error.source();
    }
    text
}

/// The rustls error `error` is, or wraps as an I/O error (whose `source` skips it).
fn tls_cause<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    error.downcast_ref::<rustls::Error>().or_else(|| {
        error
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    })
}

/// What to do about a rejected certificate, for the common cases.
fn hint(why: &rustls::CertificateError) -> &'static str {
    match why {
        rustls::CertificateError::UnknownIssuer => {
            " (the certificate is not signed by a CA in `sslrootcert`, or by the system's roots without it)"
        }
        rustls::CertificateError::NotValidForName | rustls::CertificateError::NotValidForNameContext { .. } => {
            " (`sslmode=verify-full` checks the host name: connect by a name the certificate lists, or use \
             `sslmode=verify-ca` to check the chain alone)"
        }
        _ => "",
    }
}

/// Appends `part` to `text` after `: `, unless `text` ends with it already.
fn push(text: &mut String, part: &str) {
    if part.is_empty() || text.ends_with(part) {
        return;
    }
    if !text.is_empty() {
        text.push_str(": ");
    }
    text.push_str(part);
}

/// A stored value that does not read back (a damaged or tampered row).
pub(crate) fn damaged(what: &str, why: impl std::fmt::Display) -> StoreError {
    StoreError::Failed(format!("{what} is damaged: {why}"))
}

/// A value the store cannot write (a number beyond PostgreSQL's `bigint`).
pub(crate) fn too_large(what: &str, value: u64) -> StoreError {
    StoreError::Failed(format!("{what}: {value} does not fit PostgreSQL's bigint"))
}
