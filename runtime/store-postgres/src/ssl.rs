//! libpq's TLS parameters as tenx reads them: [`SslMode`] (`sslmode=`, libpq's six values),
//! [`RootCert`] (`sslrootcert=PATH` or `system`), and the [`TlsSettings`] they make together,
//! checked the way libpq checks them (`sslrootcert=system` only with `verify-full`).
//!
//! What each mode does (the table in `docs/serve.md`, "TLS to PostgreSQL"):
//!
//! | mode | TLS | the server's certificate |
//! | --- | --- | --- |
//! | `disable` | never | — |
//! | `allow`, `prefer` (default) | asked for; plain if the server refuses TLS | not checked, unless `sslrootcert` names a file (then the chain, as `verify-ca`) |
//! | `require` | always | likewise |
//! | `verify-ca` | always | the chain, against `sslrootcert` (default: the system roots) |
//! | `verify-full` | always | the chain and the host name |
//!
//! Two differences from libpq, both documented: `allow` asks for TLS first like `prefer` (libpq
//! tries a plain connection first), and tenx reads no `~/.postgresql/root.crt`: without
//! `sslrootcert`, `verify-ca` and `verify-full` check against the system roots.

use std::fmt;
use std::path::PathBuf;

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum SslMode {
    /// Plain connections only.
    Disable,
    /// As [`SslMode::Prefer`] (libpq would try a plain connection first).
    Allow,
    /// TLS when the server offers it, plain when it refuses; no certificate check by default.
    #[default]
    Prefer,
    /// TLS or no connection; no certificate check unless `sslrootcert` names a file.
    Require,
    /// TLS with the certificate chain checked, not the host name.
    VerifyCa,
    /// TLS with the chain and the host name checked.
    VerifyFull,
}

impl SslMode {
    /// Every mode, in libpq's order, with its name.
    pub(crate) const ALL: [(SslMode, &'static str); 6] = [
        (SslMode::Disable, "disable"),
        (SslMode::Allow, "allow"),
        (SslMode::Prefer, "prefer"),
        (SslMode::Require, "require"),
        (SslMode::VerifyCa, "verify-ca"),
        (SslMode::VerifyFull, "verify-full"),
    ];

    /// The mode named `value`, or `None`.
    pub(crate) fn parse(value: &str) -> Option<SslMode> {
        Self::ALL.iter().find(|(_, name)| *name == value).map(|(mode, _)| *mode)
    }

    /// The name libpq gives the mode.
    pub(crate) fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(mode, _)| *mode == self)
            .map_or("prefer", |(_, name)| name)
    }

    /// What tokio-postgres does on the wire: never, first, or only TLS.
    pub(crate) fn wire(self) -> tokio_postgres::config::SslMode {
        use tokio_postgres::config::SslMode as Wire;
        match self {
            SslMode::Disable => Wire::Disable,
            SslMode::Allow | SslMode::Prefer => Wire::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => Wire::Require,
        }
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// libpq's `sslrootcert`: the roots a server certificate is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RootCert {
    /// A PEM file of one or more CA certificates.
    File(PathBuf),
    /// `sslrootcert=system`: the system's trusted roots.
    System,
}

/// How the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// Not at all (libpq's `require` without a root certificate): encrypted, not authenticated.
    Nothing,
    /// The chain up to a trusted root, not the host name.
    Chain,
    /// The chain and the host name.
    Full,
}

/// The TLS parameters of one connection string, checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct TlsSettings {
    /// `sslmode` (default `prefer`, or `verify-full` with `sslrootcert=system`, as libpq).
    pub(crate) mode: SslMode,
    /// `sslrootcert`, when given.
    pub(crate) root: Option<RootCert>,
}

impl TlsSettings {
    /// The settings of the raw `sslmode` and `sslrootcert` values (each `None` when absent), or
    /// a message naming the parameter at fault.
    pub(crate) fn new(mode: Option<&str>, root: Option<&str>) -> Result<TlsSettings, String> {
        let root = match root {
            None => None,
            Some("") => return Err("`sslrootcert=` is empty: name a PEM file, or `system`".to_owned()),
            Some("system") => Some(RootCert::System),
            Some(path) => Some(RootCert::File(PathBuf::from(path))),
        };
        let mode = match mode {
            None if root == Some(RootCert::System) => SslMode::VerifyFull,
            None => SslMode::Prefer,
            Some(value) => SslMode::parse(value).ok_or_else(|| {
                let names: Vec<&str> = SslMode::ALL.iter().map(|(_, name)| *name).collect();
                format!("`sslmode={value}` is not one of {}", names.join(", "))
            })?,
        };
        if root == Some(RootCert::System) && mode != SslMode::VerifyFull {
            return Err(format!(
                "`sslmode={mode}` may not be used with `sslrootcert=system` (use `sslmode=verify-full`: the system's \
                 roots vouch for a host name, so only checking it means anything)"
            ));
        }
        Ok(TlsSettings { mode, root })
    }

    /// How the server's certificate is checked in these settings.
    pub(crate) fn check(&self) -> Check {
        match self.mode {
            SslMode::VerifyFull => Check::Full,
            SslMode::VerifyCa => Check::Chain,
            SslMode::Disable | SslMode::Allow | SslMode::Prefer | SslMode::Require => match self.root {
                Some(RootCert::File(_)) => Check::Chain,
                Some(RootCert::System) | None => Check::Nothing,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_roots_combine_as_in_libpq() {
        let settings = |mode, root| TlsSettings::new(mode, root).unwrap();
        assert_eq!(settings(None, None).mode, SslMode::Prefer);
        assert_eq!(settings(None, None).check(), Check::Nothing);
        assert_eq!(settings(Some("require"), None).check(), Check::Nothing);
        assert_eq!(settings(Some("require"), Some("/ca.pem")).check(), Check::Chain);
        assert_eq!(settings(Some("prefer"), Some("/ca.pem")).check(), Check::Chain);
        assert_eq!(settings(Some("verify-ca"), None).check(), Check::Chain);
        assert_eq!(settings(Some("verify-full"), Some("/ca.pem")).check(), Check::Full);
        assert_eq!(settings(None, Some("system")).mode, SslMode::VerifyFull);
        assert_eq!(
            settings(Some("allow"), None).mode.wire(),
            tokio_postgres::config::SslMode::Prefer
        );
        assert_eq!(
            settings(Some("disable"), None).mode.wire(),
            tokio_postgres::config::SslMode::Disable
        );
        assert_eq!(
            settings(Some("verify-ca"), None).mode.wire(),
            tokio_postgres::config::SslMode::Require
        );
        for (mode, name) in SslMode::ALL {
            assert_eq!(mode.to_string(), name);
        }
    }

    #[test]
    fn bad_values_name_the_parameter() {
        assert_eq!(
            TlsSettings::new(Some("verify"), None).unwrap_err(),
            "`sslmode=verify` is not one of disable, allow, prefer, require, verify-ca, verify-full"
        );
        let message = TlsSettings::new(Some("require"), Some("system")).unwrap_err();
        assert!(
            message.starts_with("`sslmode=require` may not be used with `sslrootcert=system`"),
            "{message}"
        );
        let message = TlsSettings::new(Some("verify-ca"), Some("system")).unwrap_err();
        assert!(message.contains("use `sslmode=verify-full`"), "{message}");
        assert!(
            TlsSettings::new(None, Some(""))
                .unwrap_err()
                .contains("`sslrootcert=` is empty")
        );
    }
}
