//! Counters of what the server answered and what went wrong, for a metrics endpoint or a
//! test to read ([`WebhookServer::metrics`](super::WebhookServer::metrics)).

use std::sync::atomic::{AtomicU64, Ordering};

/// The server's counters (monotonic, from its start).
#[derive(Debug, Default)]
pub struct ServerMetrics {
    requests: AtomicU64,
    too_large: AtomicU64,
    bad_requests: AtomicU64,
    timeouts: AtomicU64,
    handler_panics: AtomicU64,
    tls_handshake_failures: AtomicU64,
    cert_reloads: AtomicU64,
    cert_reload_failures: AtomicU64,
}

/// The counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MetricsSnapshot {
    /// HTTP requests received.
    pub requests: u64,
    /// Requests refused with 413 (body over the limit).
    pub too_large: u64,
    /// Requests answered 400 (not a review), 404, 405 or 415.
    pub bad_requests: u64,
    /// Requests not answered within the request timeout (504).
    pub timeouts: u64,
    /// Handlers that panicked (answered 500).
    pub handler_panics: u64,
    /// TLS handshakes that failed or timed out.
    pub tls_handshake_failures: u64,
    /// Certificates read again after their files changed.
    pub cert_reloads: u64,
    /// Changed certificate files that could not be used (the previous one stays).
    pub cert_reload_failures: u64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl ServerMetrics {
    pub(crate) fn count_request(&self) {
        bump(&self.requests);
    }
    pub(crate) fn count_too_large(&self) {
        bump(&self.too_large);
    }
    pub(crate) fn count_bad_request(&self) {
        bump(&self.bad_requests);
    }
    pub(crate) fn count_timeout(&self) {
        bump(&self.timeouts);
    }
    pub(crate) fn count_handler_panic(&self) {
        bump(&self.handler_panics);
    }
    pub(crate) fn count_tls_handshake_failure(&self) {
        bump(&self.tls_handshake_failures);
    }
    pub(crate) fn count_cert_reload(&self) {
        bump(&self.cert_reloads);
    }
    pub(crate) fn count_cert_reload_failure(&self) {
        bump(&self.cert_reload_failures);
    }

    /// The counters now.
    pub fn snapshot(&self) -> MetricsSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        MetricsSnapshot {
            requests: get(&self.requests),
            too_large: get(&self.too_large),
            bad_requests: get(&self.bad_requests),
            timeouts: get(&self.timeouts),
            handler_panics: get(&self.handler_panics),
            tls_handshake_failures: get(&self.tls_handshake_failures),
            cert_reloads: get(&self.cert_reloads),
            cert_reload_failures: get(&self.cert_reload_failures),
        }
    }
}
