//! What the reflector reports to its watch error hook.

use std::time::Duration;

use kinform_client::Error;

/// An error the reflector met and recovered from (by retrying, re-watching or relisting).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReflectorError {
    /// A LIST request (one page, or the whole list) failed.
    #[error("{name}: list failed: {source}")]
    List {
        /// The reflector's name.
        name: String,
        /// The client error, with the server's Status when there was one.
        #[source]
        source: Error,
    },
    /// Opening a watch, or reading one, failed; or the server sent an ERROR event.
    #[error("{name}: watch failed: {source}")]
    Watch {
        /// The reflector's name.
        name: String,
        /// The client error, with the server's Status when there was one.
        #[source]
        source: Error,
    },
    /// A streaming list (watch with `sendInitialEvents`) failed or ended before its
    /// initial-events-end bookmark.
    #[error("{name}: streaming list failed: {reason}")]
    StreamingList {
        /// The reflector's name.
        name: String,
        /// What happened.
        reason: String,
        /// The client error, if one caused it.
        #[source]
        source: Option<Error>,
    },
    /// A watch ended after less than a second without any event (client-go's "very short
    /// watch").
    #[error("{name}: very short watch: ended after {elapsed:?} with no event")]
    ShortWatch {
        /// The reflector's name.
        name: String,
        /// How long the watch lasted.
        elapsed: Duration,
    },
}

impl ReflectorError {
    /// The client error behind this one, if any.
    pub fn client_error(&self) -> Option<&Error> {
        match self {
            Self::List { source, .. } | Self::Watch { source, .. } => Some(source),
            Self::StreamingList { source, .. } => source.as_ref(),
            Self::ShortWatch { .. } => None,
        }
    }

    /// Whether the error is a 410 Gone / Expired (the reflector relists).
    pub fn is_gone(&self) -> bool {
        self.client_error().is_some_and(Error::is_gone)
    }
}
