//! TLS to PostgreSQL (rustls). The URL's `sslmode` decides whether it is used, as with
//! tokio-postgres: `disable` never, `prefer` (the default) when the server offers it, `require`
//! always. The server's certificate is verified, chain and host name, when
//! `BOARDSMITH_DATABASE_CA` names the CA certificates (PEM) to trust; without it the
//! connection is encrypted but the certificate is not checked, which is what `sslmode=require`
//! means to libpq and psql, and a warning says so at start.
//!
//! Knows nothing of what is stored.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::StoreError;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The TLS connector for every connection of the store: verifying against the CA
/// certificates in `ca` (PEM), or encrypting only.
pub(super) fn connector(ca: Option<&Path>) -> Result<MakeRustlsConnect, StoreError> {
    let tls_err = |e: rustls::Error| StoreError::Storage(format!("TLS setup: {e}"));
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(tls_err)?;
    let config = match ca {
        Some(path) => {
            let read = |e: rustls::pki_types::pem::Error| {
                StoreError::Storage(format!(
                    "BOARDSMITH_DATABASE_CA: cannot read CA certificates from {}: {e}",
                    path.display()
                ))
            };
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(path).map_err(read)? {
                roots.add(cert.map_err(read)?).map_err(tls_err)?;
            }
            if roots.is_empty() {
                return Err(StoreError::Storage(format!(
                    "BOARDSMITH_DATABASE_CA: {} holds no certificate",
                    path.display()
                )));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(EncryptOnly(provider())))
            .with_no_client_auth(),
    };
    Ok(MakeRustlsConnect::new(config))
}

/// Accepts any server certificate but still checks the handshake's signatures: encryption
/// without authentication, libpq's `sslmode=require`.
#[derive(Debug)]
struct EncryptOnly(Arc<CryptoProvider>);

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
