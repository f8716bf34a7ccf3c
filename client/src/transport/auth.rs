//! Request authentication at run time: the `Authorization` header of each request.
//!
//! Fixed tokens and basic credentials are computed once. Token files are re-read at most
//! once a minute (client-go's `cachingTokenSource`), so rotated service account tokens are
//! picked up. Exec plugins run on first use and again once their credential expires, or
//! after the server answered 401 (client-go's exec authenticator refreshes on 401); client
//! certificates they return replace the TLS identity of new connections.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use http::HeaderValue;
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::tls::{ClientCertSlot, certified_key};
use crate::config::{AuthConfig, ConfigError, run_exec_plugin};

const TOKEN_FILE_PERIOD: Duration = Duration::from_secs(60);
/// Run the plugin again slightly before its credential expires.
const EXPIRY_SKEW: jiff::SignedDuration = jiff::SignedDuration::from_secs(10);

#[derive(Default)]
struct Cached {
    header: Option<HeaderValue>,
    fetched: Option<Instant>,
    expires: Option<jiff::Timestamp>,
    valid: bool,
}

/// Produces the `Authorization` header of requests.
pub(crate) struct Authenticator {
    kind: AuthConfig,
    cache: Mutex<Cached>,
    cert_slot: Arc<ClientCertSlot>,
}

fn sensitive(value: String) -> Result<HeaderValue, ConfigError> {
    let mut v = HeaderValue::try_from(value).map_err(|_| ConfigError::InvalidField {
        field: "credentials".into(),
        message: "not a valid header value".into(),
    })?;
    v.set_sensitive(true);
    Ok(v)
}

impl Authenticator {
    pub(crate) fn new(kind: AuthConfig, cert_slot: Arc<ClientCertSlot>) -> Self {
        Self {
            kind,
            cache: Mutex::new(Cached::default()),
            cert_slot,
        }
    }

    /// Whether a 401 may be cured by fetching the credential again.
    pub(crate) fn refreshable(&self) -> bool {
        matches!(self.kind, AuthConfig::TokenFile(_) | AuthConfig::Exec(_))
    }

    /// Forgets the cached credential (after a 401).
    pub(crate) async fn invalidate(&self) {
        self.cache.lock().await.valid = false;
    }

    /// The header to send, fetching or refreshing the credential when needed.
    pub(crate) async fn header(&self) -> Result<Option<HeaderValue>, ConfigError> {
        match &self.kind {
            AuthConfig::None => Ok(None),
            AuthConfig::Token(t) => sensitive(format!("Bearer {}", t.expose())).map(Some),
            AuthConfig::Basic { username, password } => {
                let raw = format!("{username}:{}", password.expose());
                sensitive(format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(raw)
                ))
                .map(Some)
            }
            AuthConfig::TokenFile(path) => {
                let mut cache = self.cache.lock().await;
                let fresh = cache.valid
                    && cache
                        .fetched
                        .is_some_and(|t| t.elapsed() < TOKEN_FILE_PERIOD);
                if !fresh {
                    let token = tokio::fs::read_to_string(path).await.map_err(|source| {
                        ConfigError::ReadFile {
                            what: "tokenFile",
                            path: path.clone(),
                            source,
                        }
                    })?;
                    cache.header = Some(sensitive(format!("Bearer {}", token.trim()))?);
                    cache.fetched = Some(Instant::now());
                    cache.valid = true;
                }
                Ok(cache.header.clone())
            }
            AuthConfig::Exec(exec) => {
                let mut cache = self.cache.lock().await;
                let expired = cache
                    .expires
                    .is_some_and(|exp| jiff::Timestamp::now() + EXPIRY_SKEW >= exp);
                if !cache.valid || expired {
                    let cred = run_exec_plugin(exec).await?;
                    cache.header = match &cred.token {
                        Some(t) => Some(sensitive(format!("Bearer {}", t.expose()))?),
                        None => None,
                    };
                    if let (Some(cert), Some(key)) =
                        (&cred.client_certificate_pem, &cred.client_key_pem)
                    {
                        self.cert_slot.set(certified_key(
                            cert,
                            key.expose(),
                            "exec plugin client certificate",
                        )?);
                    }
                    cache.expires = cred.expiration;
                    cache.fetched = Some(Instant::now());
                    cache.valid = true;
                }
                Ok(cache.header.clone())
            }
        }
    }
}
