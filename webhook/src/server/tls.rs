//! The server's certificate, read from PEM files and read again when they change.
//!
//! cert-manager renews a certificate by rewriting the Secret a pod mounts; the kubelet swaps
//! the files (atomically, through a symlinked directory) some time later. So the server polls:
//! every `interval` a task reads both files, and when their bytes differ from the last read
//! it parses them and, if they make a certificate whose key matches, serves it from the next
//! handshake on. Connections already open keep the certificate they were made with, as with
//! controller-runtime's `CertWatcher`. A pair that does not parse or match (a rotation caught
//! half-written, a wrong file) keeps the previous certificate and is reported once per
//! content as a warning and in [`ServerMetrics`](super::ServerMetrics); the next change is
//! tried again.
//!
//! Polling the contents rather than watching the files (controller-runtime uses fsnotify plus
//! a 10 s poll) needs no file-watching crate (`notify` was considered) and sees symlink swaps
//! and in-place rewrites alike; reading two small files each interval costs nothing.
//! `resolve` only clones an `Arc` under a read lock, so handshakes never wait on the disk.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::metrics::ServerMetrics;

/// A certificate and key pair that is reloaded from its files.
pub(crate) struct ReloadingCert {
    cert_path: PathBuf,
    key_path: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
    /// The bytes last read (served or refused), to notice the next change.
    last: Mutex<(Vec<u8>, Vec<u8>)>,
    metrics: Arc<ServerMetrics>,
}

impl std::fmt::Debug for ReloadingCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReloadingCert")
            .field("cert_path", &self.cert_path)
            .field("key_path", &self.key_path)
            .finish()
    }
}

/// The certificate of `cert_pem` and `key_pem`, checked to match.
fn certified_key(
    cert_pem: &[u8],
    key_pem: &[u8],
    provider: &CryptoProvider,
) -> Result<CertifiedKey, String> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("reading the certificate PEM: {e}"))?;
    if chain.is_empty() {
        return Err("the certificate file holds no certificate".into());
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| format!("reading the private key PEM: {e}"))?;
    CertifiedKey::from_der(chain, key, provider).map_err(|e| format!("the key pair: {e}"))
}

impl ReloadingCert {
    /// Reads the pair once; failing here fails the server's start.
    pub(crate) fn load(
        cert_path: &Path,
        key_path: &Path,
        provider: Arc<CryptoProvider>,
        metrics: Arc<ServerMetrics>,
    ) -> Result<Self, String> {
        let cert = std::fs::read(cert_path).map_err(|e| format!("reading the certificate: {e}"))?;
        let key = std::fs::read(key_path).map_err(|e| format!("reading the key: {e}"))?;
        let certified = certified_key(&cert, &key, &provider)?;
        Ok(Self {
            cert_path: cert_path.to_owned(),
            key_path: key_path.to_owned(),
            provider,
            current: RwLock::new(Arc::new(certified)),
            last: Mutex::new((cert, key)),
            metrics,
        })
    }

    /// Reads the files and serves what they hold now if it changed and is usable.
    pub(crate) async fn reload_if_changed(&self) {
        let (cert, key) = match (
            tokio::fs::read(&self.cert_path).await,
            tokio::fs::read(&self.key_path).await,
        ) {
            (Ok(cert), Ok(key)) => (cert, key),
            (Err(e), _) | (_, Err(e)) => {
                // Between a Secret's update and the kubelet's swap a file may be missing
                // for a moment; a lasting absence shows as the same warning every time.
                self.metrics.count_cert_reload_failure();
                tracing::warn!(
                    cert = %self.cert_path.display(),
                    key = %self.key_path.display(),
                    "webhook server: cannot read the TLS files, still serving the previous certificate: {e}"
                );
                return;
            }
        };
        {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if last.0 == cert && last.1 == key {
                return;
            }
            *last = (cert.clone(), key.clone());
        }
        match certified_key(&cert, &key, &self.provider) {
            Ok(certified) => {
                *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(certified);
                self.metrics.count_cert_reload();
                tracing::info!(cert = %self.cert_path.display(), "webhook server: serving the renewed TLS certificate");
            }
            Err(e) => {
                self.metrics.count_cert_reload_failure();
                tracing::warn!(
                    cert = %self.cert_path.display(),
                    key = %self.key_path.display(),
                    "webhook server: the changed TLS files are unusable, still serving the previous certificate: {e}"
                );
            }
        }
    }

    /// Polls every `interval` until `stop` is cancelled.
    pub(crate) async fn watch(
        self: Arc<Self>,
        interval: Duration,
        stop: tokio_util::sync::CancellationToken,
    ) {
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            tokio::select! {
                _ = ticks.tick() => self.reload_if_changed().await,
                _ = stop.cancelled() => return,
            }
        }
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        )
    }
}
