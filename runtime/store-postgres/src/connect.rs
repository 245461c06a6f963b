//! From a URL to a pool: tenx's own query parameters (`schema`, `pool_size`, `lease_ttl_ms`)
//! taken out of the URL and over the options, libpq's TLS parameters (`sslmode`,
//! `sslrootcert`, in a URL or a `key=value` string) made into the store's one TLS
//! [`Connector`], the schema set as each connection's `search_path`, timeouts bounded so an
//! unreachable database fails an operation (and `/health/ready`) instead of hanging it.
//! [`redact_url`] prints a URL without its password.

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tenx_engine::ports::StoreError;

use crate::PostgresOptions;
use crate::ssl::TlsSettings;
use crate::tls::Connector;

/// A URL made ready to connect: the parsed configuration and the schema.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The connection settings, `search_path` included.
    pub(crate) config: tokio_postgres::Config,
    /// The schema every table lives in.
    pub(crate) schema: String,
    /// The options, with the URL's parameters applied.
    pub(crate) options: PostgresOptions,
    /// The URL without its password, for messages.
    pub(crate) shown: String,
    /// The TLS connector of every connection (pooled or listening).
    pub(crate) tls: Connector,
}

/// Reads `url` (a `postgres://` or `postgresql://` URL, or libpq's `key=value` form) with
/// `options`: takes tenx's parameters out of a URL's query (they override `options`), reads
/// `sslmode` and `sslrootcert` (loading the root certificates), refuses bad schema names.
pub(crate) fn target(url: &str, options: &PostgresOptions) -> Result<Target, StoreError> {
    let shown = redact_url(url);
    let (url, params) = take_params(url);
    let mut options = options.clone();
    let (mut sslmode, mut sslrootcert) = (None, None);
    for (name, value) in params {
        let number = || {
            value.parse::<u64>().ok().filter(|number| *number > 0).ok_or_else(|| {
                StoreError::Failed(format!(
                    "the PostgreSQL URL '{shown}': `{name}={value}` is not a whole number above 0"
                ))
            })
        };
        match name {
            "sslmode" => sslmode = Some(value.clone()),
            "sslrootcert" => sslrootcert = Some(value.clone()),
            "schema" => options.schema = value.clone(),
            "pool_size" => options.pool_size = usize::try_from(number()?).unwrap_or(usize::MAX),
            _ => options.lease_ttl = std::time::Duration::from_millis(number()?),
        }
    }
    let schema = options.schema.clone();
    check_schema(&schema)?;
    let settings = TlsSettings::new(sslmode.as_deref(), sslrootcert.as_deref())
        .map_err(|message| StoreError::Failed(format!("the PostgreSQL URL '{shown}': {message}")))?;
    let mut config: tokio_postgres::Config = url.parse().map_err(|error: tokio_postgres::Error| {
        StoreError::Failed(format!(
            "the PostgreSQL URL '{shown}' is not valid: {}",
            crate::error::chain(&error)
        ))
    })?;
    config.ssl_mode(settings.mode.wire());
    let tls = Connector::new(settings)
        .map_err(|message| StoreError::Failed(format!("the PostgreSQL URL '{shown}': {message}")))?;
    let search_path = format!("-c search_path={schema}");
    let joined = match config.get_options() {
        Some(existing) if !existing.trim().is_empty() => format!("{existing} {search_path}"),
        _ => search_path,
    };
    config.options(&joined);
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(options.connect_timeout);
    }
    if config.get_application_name().is_none() {
        config.application_name("tenx");
    }
    Ok(Target {
        config,
        schema,
        options,
        shown,
        tls,
    })
}

/// A pool over `target`, with `size` connections at most (at least 1), each wait bounded.
pub(crate) fn pool(target: &Target, size: usize, options: &PostgresOptions) -> Result<Pool, StoreError> {
    let manager = Manager::from_config(
        target.config.clone(),
        target.tls.make(),
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(size.max(1))
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(options.connect_timeout))
        .create_timeout(Some(options.connect_timeout))
        .recycle_timeout(Some(options.connect_timeout))
        .build()
        .map_err(|error| StoreError::Failed(format!("building the PostgreSQL pool for '{}': {error}", target.shown)))
}

/// The parameters tenx reads itself: its own (which libpq does not know) and libpq's TLS
/// parameters (which tokio-postgres knows in part, `sslmode`, or not at all, `sslrootcert`).
const PARAMS: [&str; 5] = ["schema", "pool_size", "lease_ttl_ms", "sslmode", "sslrootcert"];

/// libpq's TLS parameters, the only ones tenx reads from a `key=value` string.
const TLS_PARAMS: [&str; 2] = ["sslmode", "sslrootcert"];

/// Splits tenx's parameters off a URL's query (percent-decoded), or the TLS parameters off a
/// `key=value` string (unquoted): the string left for tokio-postgres, and each parameter
/// found, in order.
fn take_params(url: &str) -> (String, Vec<(&'static str, String)>) {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        let (rest, found) = crate::conninfo::take(url, &TLS_PARAMS);
        let found = found
            .into_iter()
            .filter_map(|(name, value)| Some((*TLS_PARAMS.iter().find(|known| **known == name)?, value)))
            .collect();
        return (rest, found);
    }
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_owned(), Vec::new());
    };
    let mut found = Vec::new();
    let rest: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            match PARAMS.iter().find(|known| **known == name) {
                Some(known) => {
                    let value = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
                    found.push((*known, value.into_owned()));
                    false
                }
                None => !pair.is_empty(),
            }
        })
        .collect();
    let url = if rest.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    (url, found)
}

/// A schema name is a plain lower-case identifier, so it needs no quoting anywhere.
fn check_schema(schema: &str) -> Result<(), StoreError> {
    let mut chars = schema.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if first_ok && rest_ok && schema.len() <= 63 {
        Ok(())
    } else {
        Err(StoreError::Failed(format!(
            "the PostgreSQL schema name '{schema}' is not a plain identifier: use lower-case letters, digits and _, \
             not starting with a digit, at most 63 characters"
        )))
    }
}

/// `url` with its password replaced by `***`: `postgres://user:***@host/db`, and a
/// `password=` parameter (in the query or libpq's `key=value` form) likewise.
pub fn redact_url(url: &str) -> String {
    let mut shown = url.to_owned();
    if let Some(start) = shown.find("://").map(|at| at.saturating_add(3)) {
        let rest = shown.get(start..).unwrap_or_default();
        let query = rest.find('?').unwrap_or(rest.len());
        if let Some(at) = rest.get(..query).and_then(|authority| authority.rfind('@'))
            && let Some(colon) = rest.get(..at).and_then(|userinfo| userinfo.find(':'))
        {
            let (from, to) = (start.saturating_add(colon).saturating_add(1), start.saturating_add(at));
            shown.replace_range(from..to, "***");
        }
    }
    let mut out = String::with_capacity(shown.len());
    let mut rest = shown.as_str();
    while let Some(found) = rest.find("password=") {
        let (before, after) = rest.split_at(found.saturating_add("password=".len()));
        out.push_str(before);
        out.push_str("***");
        let end = after.find(['&', ' ']).unwrap_or(after.len());
        rest = after.get(end..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_postgres::config::SslMode;

    #[test]
    fn passwords_are_never_shown() {
        assert_eq!(
            redact_url("postgres://ann:s3cr:et@db.example:5432/tenx?sslmode=disable"),
            "postgres://ann:***@db.example:5432/tenx?sslmode=disable"
        );
        assert_eq!(redact_url("postgres://ann@db/tenx"), "postgres://ann@db/tenx");
        assert_eq!(redact_url("postgres://db/tenx"), "postgres://db/tenx");
        assert_eq!(
            redact_url("postgresql://a:p%40ss@h/d?user=x&password=hunter2&schema=s"),
            "postgresql://a:***@h/d?user=x&password=***&schema=s"
        );
        assert_eq!(
            redact_url("host=h password=hunter2 user=u"),
            "host=h password=*** user=u"
        );
    }

    #[test]
    fn the_schema_comes_from_the_url_or_the_options() {
        let options = PostgresOptions::default();
        let target = target("postgres://u@h/d?schema=mine&connect_timeout=3", &options).unwrap();
        assert_eq!(target.schema, "mine");
        assert_eq!(target.config.get_options(), Some("-c search_path=mine"));
        assert_eq!(
            target.config.get_connect_timeout(),
            Some(&std::time::Duration::from_secs(3))
        );
        assert_eq!(target.options.pool_size, 16);
        let target = super::target(
            "postgres://u@h/d?pool_size=3&sslmode=disable&lease_ttl_ms=1500",
            &options,
        )
        .unwrap();
        assert_eq!(target.options.pool_size, 3);
        assert_eq!(target.options.lease_ttl, std::time::Duration::from_millis(1500));
        assert_eq!(target.config.get_ssl_mode(), SslMode::Disable);
        let error = super::target("postgres://u:pw@h/d?lease_ttl_ms=soon", &options).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the store failed: the PostgreSQL URL 'postgres://u:***@h/d?lease_ttl_ms=soon': `lease_ttl_ms=soon` is not a whole number above 0"
        );
        let target = target_of("postgres://u@h/d");
        assert_eq!(target.schema, "tenx");
        assert_eq!(target.config.get_connect_timeout(), Some(&options.connect_timeout));
        for bad in [
            "postgres://u@h/d?schema=Bad",
            "postgres://u@h/d?schema=a;drop",
            "postgres://u@h/d?schema=1a",
        ] {
            let error = super::target(bad, &options).unwrap_err();
            assert!(error.to_string().contains("not a plain identifier"), "{error}");
        }
    }

    fn target_of(url: &str) -> Target {
        target(url, &PostgresOptions::default()).unwrap()
    }

    #[test]
    fn tls_parameters_are_read_from_urls_and_key_value_strings() {
        use crate::ssl::{RootCert, SslMode};
        use tokio_postgres::config::SslMode as Wire;
        let target = target_of("postgres://u@h/d?sslmode=require&schema=s");
        assert_eq!(target.config.get_ssl_mode(), Wire::Require);
        assert_eq!(target.tls.settings().mode, SslMode::Require);
        assert_eq!(target.schema, "s");
        // libpq: with the system's roots the mode defaults to verify-full (a weaker one is refused).
        let target = target_of("host=h user=u sslrootcert=system dbname=d");
        assert_eq!(target.tls.settings().mode, SslMode::VerifyFull);
        assert_eq!(target.tls.settings().root, Some(RootCert::System));
        assert_eq!(target.config.get_ssl_mode(), Wire::Require);
        assert_eq!(target.config.get_dbname(), Some("d"));
        assert_eq!(
            target_of("postgres://u@h/d?sslmode=allow").config.get_ssl_mode(),
            Wire::Prefer
        );
        assert_eq!(target_of("postgres://u@h/d").tls.settings().mode, SslMode::Prefer);
        assert_eq!(
            target_of("postgres://u@h/d?sslmode=disable").config.get_ssl_mode(),
            Wire::Disable
        );
    }

    #[test]
    fn bad_tls_parameters_name_the_parameter_and_hide_the_password() {
        let message = |url: &str| target(url, &PostgresOptions::default()).unwrap_err().to_string();
        let shown = message("postgres://u:pass-word_9@h/d?sslmode=verify");
        assert_eq!(
            shown,
            "the store failed: the PostgreSQL URL 'postgres://u:***@h/d?sslmode=verify': `sslmode=verify` is not one \
             of disable, allow, prefer, require, verify-ca, verify-full"
        );
        let shown = message("host=h password=pass-word_9 sslmode=verify-ca sslrootcert=system");
        assert!(
            shown.contains("`sslmode=verify-ca` may not be used with `sslrootcert=system`"),
            "{shown}"
        );
        assert!(!shown.contains("pass-word_9"), "{shown}");
        let missing = tempfile::tempdir().unwrap().path().join("no such ca.pem");
        let url = format!(
            "postgres://u:pass-word_9@h/d?sslmode=verify-full&sslrootcert={}",
            missing.display().to_string().replace(' ', "%20")
        );
        let shown = message(&url);
        assert!(
            shown.contains(&format!(
                "`sslrootcert={}` cannot be read: No such file or directory",
                missing.display()
            )),
            "{shown}"
        );
        assert!(!shown.contains("pass-word_9"), "{shown}");
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let shown = message(&format!("host=h sslmode=require sslrootcert='{}'", empty.display()));
        assert!(shown.contains("holds no PEM certificate"), "{shown}");
        let shown = message("postgres://u:pass-word_9@h/d?nonsense=1");
        assert!(
            shown.starts_with(
                "the store failed: the PostgreSQL URL 'postgres://u:***@h/d?nonsense=1' is not valid: invalid connection \
                 string: unknown option"
            ),
            "{shown}"
        );
    }
}
