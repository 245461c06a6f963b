//! [`Connector`]: the TLS connector of one store, made from its [`TlsSettings`] once at open
//! and shared by the pool and the listening connection ([`crate::wake`]). rustls with the ring
//! provider (the workspace's one crypto provider, given explicitly so no process default is
//! needed), through `tokio-postgres-rustls`; the roots come from the `sslrootcert` file or the
//! system (`rustls-native-certs`), read here, so an unreadable file fails the start.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::chain_only::ChainOnly;
use crate::ssl::{Check, RootCert, TlsSettings};
use crate::unchecked::Unchecked;

/// The connector every connection of a store is made with.
#[derive(Clone)]
pub(crate) struct Connector {
    make: MakeRustlsConnect,
    settings: TlsSettings,
}

impl fmt::Debug for Connector {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Connector")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Connector {
    /// The connector of `settings`, its roots loaded; or a message naming the parameter at
    /// fault (`sslrootcert=…` unreadable, holding no certificate, or no system roots).
    pub(crate) fn new(settings: TlsSettings) -> Result<Connector, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match settings.check() {
            Check::Nothing => Arc::new(Unchecked {
                algorithms: provider.signature_verification_algorithms,
            }),
            Check::Chain => Arc::new(ChainOnly {
                full: full_check(&settings, &provider)?,
            }),
            Check::Full => full_check(&settings, &provider)?,
        };
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| format!("setting up TLS: {error}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(Connector {
            make: MakeRustlsConnect::new(config),
            settings,
        })
    }

    /// What tokio-postgres connects with.
    pub(crate) fn make(&self) -> MakeRustlsConnect {
        self.make.clone()
    }

    /// The settings the connector was made from.
    #[cfg(test)]
    pub(crate) fn settings(&self) -> &TlsSettings {
        &self.settings
    }
}

/// rustls's check of the chain and the host name against the settings' roots.
fn full_check(settings: &TlsSettings, provider: &Arc<CryptoProvider>) -> Result<Arc<WebPkiServerVerifier>, String> {
    let roots = match &settings.root {
        Some(RootCert::File(path)) => file_roots(path)?,
        Some(RootCert::System) => system_roots("`sslrootcert=system`")?,
        None => system_roots(&format!(
            "`sslmode={}` without `sslrootcert` (checked against the system's roots)",
            settings.mode
        ))?,
    };
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(provider))
        .build()
        .map_err(|error| format!("setting up the certificate check: {error}"))
}

/// The CA certificates of the PEM file at `path`.
fn file_roots(path: &Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let fail = |why: String| format!("`sslrootcert={shown}` {why}");
    let mut roots = RootCertStore::empty();
    let certificates = CertificateDer::pem_file_iter(path).map_err(|error| match error {
        rustls::pki_types::pem::Error::Io(error) => fail(format!("cannot be read: {error}")),
        other => fail(format!("cannot be read: {other}")),
    })?;
    for certificate in certificates {
        let certificate = certificate.map_err(|error| fail(format!("is not a PEM file of certificates: {error}")))?;
        roots.add(certificate).map_err(|error| {
            fail(format!(
                "holds a certificate that is not a CA certificate rustls accepts: {error}"
            ))
        })?;
    }
    if roots.is_empty() {
        return Err(fail(
            "holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)".to_owned(),
        ));
    }
    Ok(roots)
}

/// The system's trusted roots, for `asked` (which names the parameters that asked for them).
fn system_roots(asked: &str) -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (_added, _ignored) = roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        let errors: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
        let why = if errors.is_empty() {
            "none were found".to_owned()
        } else {
            errors.join("; ")
        };
        return Err(format!(
            "{asked}: the system's trusted root certificates could not be loaded ({why}); name a CA file with \
             `sslrootcert=PATH`"
        ));
    }
    Ok(roots)
}
