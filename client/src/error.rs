//! Typed client errors that keep the server's `Status`.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;

/// Result with the client [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong talking to the API server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error Status (or a watch ERROR event).
    #[error("{request}: {code} {reason}: {message}", code = status.code.unwrap_or_default(),
        reason = status.reason.as_deref().unwrap_or(""), message = status.message.as_deref().unwrap_or(""))]
    Api {
        /// The request, e.g. `GET /api/v1/namespaces/default/pods/web`.
        request: String,
        /// The server's Status.
        status: Box<Status>,
        /// The `Retry-After` header, when the server sent one.
        retry_after: Option<Duration>,
    },
    /// The request could not be sent or its response not read.
    #[error("{request}: {message}")]
    Transport {
        /// The request.
        request: String,
        /// What failed.
        message: String,
        /// The underlying error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A response body could not be decoded.
    #[error("{request}: cannot decode {what}: {source}")]
    Decode {
        /// The request.
        request: String,
        /// What was being decoded, e.g. `a pods watch event`.
        what: String,
        /// The decode error.
        #[source]
        source: serde_json::Error,
    },
    /// A request body could not be encoded.
    #[error("{request}: cannot encode {what}: {source}")]
    Encode {
        /// The request.
        request: String,
        /// What was being encoded.
        what: String,
        /// The encode error.
        #[source]
        source: serde_json::Error,
    },
    /// A response body, or one watch event, is larger than the client's bound
    /// ([`Config::max_body_bytes`](crate::Config::max_body_bytes),
    /// [`Config::max_watch_event_bytes`](crate::Config::max_watch_event_bytes)); what was read
    /// of it is dropped and the request (or the watch) fails.
    #[error("{request}: {what} is larger than {limit} bytes ({setting})")]
    TooLarge {
        /// The request.
        request: String,
        /// What was too large, e.g. `the response body`, `a watch event`.
        what: String,
        /// The bound, in bytes.
        limit: usize,
        /// The `Config` field that sets the bound.
        setting: &'static str,
    },
    /// The configuration (kubeconfig, in-cluster files, exec plugin, TLS material) is unusable.
    #[error(transparent)]
    Config(#[from] super::config::ConfigError),
}

impl Error {
    /// The server's Status, for API errors.
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Api { status, .. } => Some(status),
            _ => None,
        }
    }

    /// The HTTP status code of an API error.
    pub fn code(&self) -> Option<u16> {
        self.status()
            .and_then(|s| s.code)
            .and_then(|c| u16::try_from(c).ok())
    }

    fn reason(&self) -> Option<&str> {
        self.status().and_then(|s| s.reason.as_deref())
    }

    /// 404 NotFound.
    pub fn is_not_found(&self) -> bool {
        self.code() == Some(404) || self.reason() == Some("NotFound")
    }

    /// 409 Conflict (a stale resourceVersion on update).
    pub fn is_conflict(&self) -> bool {
        self.reason() == Some("Conflict")
            || (self.code() == Some(409) && self.reason() != Some("AlreadyExists"))
    }

    /// 409 AlreadyExists.
    pub fn is_already_exists(&self) -> bool {
        self.reason() == Some("AlreadyExists")
    }

    /// 410 Gone / Expired: the requested resourceVersion is no longer available.
    pub fn is_gone(&self) -> bool {
        self.code() == Some(410) || matches!(self.reason(), Some("Expired" | "Gone"))
    }

    /// 504 Timeout.
    pub fn is_timeout(&self) -> bool {
        self.code() == Some(504) || self.reason() == Some("Timeout")
    }

    /// The "too large resource version" error: a list or watch asked for a resourceVersion
    /// newer than the server has (it lost its history, e.g. it restarted), and its watch
    /// cache did not catch up within its wait. The Status has the `ResourceVersionTooLarge`
    /// cause; servers before 1.18.6 sent a 504 Timeout saying "Too large resource version"
    /// in a cause's message or in its own, which is matched too, as client-go's reflector
    /// does.
    ///
    /// Retrying at the same resourceVersion cannot succeed soon, so the client returns this
    /// error at once, unretried; a reflector answers it as client-go's does, with a relist
    /// at resourceVersion `""` (a consistent read).
    pub fn is_too_large_resource_version(&self) -> bool {
        const MESSAGE: &str = "Too large resource version";
        let Some(s) = self.status() else {
            return false;
        };
        let causes = s
            .details
            .as_ref()
            .and_then(|d| d.causes.as_deref())
            .unwrap_or_default();
        causes
            .iter()
            .any(|c| c.reason.as_deref() == Some("ResourceVersionTooLarge"))
            || (self.is_timeout()
                && (causes.iter().any(|c| c.message.as_deref() == Some(MESSAGE))
                    || s.message.as_deref().is_some_and(|m| m.contains(MESSAGE))))
    }

    /// 429 TooManyRequests.
    pub fn is_too_many_requests(&self) -> bool {
        self.code() == Some(429) || self.reason() == Some("TooManyRequests")
    }

    /// The server's requested wait before a retry: `Retry-After`, or
    /// `details.retryAfterSeconds` of the Status.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api {
                retry_after: Some(d),
                ..
            } => Some(*d),
            Error::Api { status, .. } => status
                .details
                .as_ref()
                .and_then(|d| d.retry_after_seconds)
                .and_then(|s| u64::try_from(s).ok())
                .map(Duration::from_secs),
            _ => None,
        }
    }

    /// Whether the error came from the connection, not from the server's answer.
    pub fn is_transport(&self) -> bool {
        matches!(self, Error::Transport { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(status: serde_json::Value) -> Error {
        Error::Api {
            request: "GET /api/v1/pods?resourceVersion=99&watch=true".into(),
            status: Box::new(serde_json::from_value(status).unwrap()),
            retry_after: None,
        }
    }

    #[test]
    fn too_large_resource_version_by_cause_or_legacy_message() {
        // kube-apiserver's cacher (storage.NewTooLargeResourceVersionError).
        let current = api(serde_json::json!({
            "kind": "Status", "status": "Failure", "code": 504, "reason": "Timeout",
            "message": "Timeout: Too large resource version: 99, current: 3",
            "details": {"retryAfterSeconds": 1, "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ]}
        }));
        assert!(current.is_too_large_resource_version() && current.is_timeout());
        assert!(!current.is_gone());
        // 1.17.0-1.18.5: the message in a cause without its reason.
        let cause_message = api(serde_json::json!({
            "code": 504, "reason": "Timeout", "message": "Timeout",
            "details": {"causes": [{"message": "Too large resource version"}]}
        }));
        assert!(cause_message.is_too_large_resource_version());
        // Before 1.17: only the Status message.
        let message = api(serde_json::json!({
            "code": 504, "reason": "Timeout",
            "message": "Too large resource version: 99, current: 3"
        }));
        assert!(message.is_too_large_resource_version());
    }

    #[test]
    fn other_errors_are_not_too_large_resource_version() {
        let plain_timeout = api(serde_json::json!({
            "code": 504, "reason": "Timeout", "message": "request did not complete within 60s"
        }));
        assert!(plain_timeout.is_timeout() && !plain_timeout.is_too_large_resource_version());
        let expired = api(serde_json::json!({
            "code": 410, "reason": "Expired", "message": "too old resource version: 1 (3)"
        }));
        assert!(expired.is_gone() && !expired.is_too_large_resource_version());
        // The legacy message counts only on a Timeout.
        let invalid = api(serde_json::json!({
            "code": 422, "reason": "Invalid", "message": "Too large resource version in a label"
        }));
        assert!(!invalid.is_too_large_resource_version());
        let transport = Error::Transport {
            request: "GET /".into(),
            message: "cannot connect".into(),
            source: None,
        };
        assert!(!transport.is_too_large_resource_version() && !transport.is_timeout());
    }
}
