//! How a reconcile fails: [`ReconcileFailure`], the bound of the reconcile's error, and
//! [`ReconcileError`], which marks an error terminal (controller-runtime's
//! `reconcile.TerminalError`); the rules are on the types.

use std::fmt::Display;

/// What [`Controller::run`](super::Controller::run) accepts as the error of a reconcile:
/// every `Display` type (retried) and [`ReconcileError`] (retried or terminal).
///
/// A type of one's own that is not `Display` may implement it to decide terminality itself.
pub trait ReconcileFailure: Send + 'static {
    /// Whether the failure must not be retried.
    fn is_terminal(&self) -> bool;
    /// The error, for the log.
    fn error(&self) -> &dyn Display;
}

impl<E: Display + Send + 'static> ReconcileFailure for E {
    fn is_terminal(&self) -> bool {
        false
    }
    fn error(&self) -> &dyn Display {
        self
    }
}

/// A reconcile's error that says whether to retry.
///
/// Any error that implements `Display` is a failure that is retried with the key's backoff,
/// so reconciles written as `Result<Action, E>` with their own `E` keep compiling. A
/// reconcile that knows that retrying cannot help (a spec that cannot be valid, a reference
/// that the user must fix) answers `Err(ReconcileError::Terminal(e))`: the controller logs a
/// warning, counts it ([`ReconcileStats::terminal`](super::ReconcileStats::terminal),
/// `controller_runtime_terminal_reconcile_errors_total`, `result="error"`), forgets the
/// key's failure history and does not requeue it; the key's next change reconciles it again.
/// Upstream does not forget a terminal key's rate-limiter history; here it is forgotten so
/// that the limiter holds no entry for a key that is out of the retry cycle (bounded memory
/// when such objects are deleted without ever succeeding).
///
/// `?` turns any `E` into [`Retry`](Self::Retry) (`From<E>`); a terminal error is built
/// explicitly:
///
/// ```
/// use kinform_runtime::controller::{Action, ReconcileError};
///
/// #[derive(Debug, thiserror::Error)]
/// enum SyncError {
///     #[error("spec.replicas {0} is negative")]
///     NegativeReplicas(i64),
///     #[error("the API server: {0}")]
///     Api(String),
/// }
///
/// fn check(replicas: i64, api: Result<(), SyncError>) -> Result<Action, ReconcileError<SyncError>> {
///     if replicas < 0 {
///         // Retrying cannot fix the spec: reported once, retried on the next change.
///         return Err(ReconcileError::Terminal(SyncError::NegativeReplicas(replicas)));
///     }
///     api?; // retried with backoff
///     Ok(Action::done())
/// }
/// assert!(check(-1, Ok(())).unwrap_err().is_terminal());
/// assert!(!check(1, Err(SyncError::Api("503".into()))).unwrap_err().is_terminal());
/// ```
///
/// It does not implement `Display` itself (that would make it one of the "every `Display`
/// type" of [`ReconcileFailure`]); [`inner`](Self::inner) gives the error.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReconcileError<E> {
    /// Retried through the rate limiter, as any other error.
    Retry(E),
    /// Not retried: warned about, counted, and the key's failure history forgotten.
    Terminal(E),
}

impl<E> ReconcileError<E> {
    /// A terminal error.
    pub fn terminal(error: E) -> Self {
        Self::Terminal(error)
    }

    /// Whether it is [`Terminal`](Self::Terminal).
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Terminal(_))
    }

    /// The error.
    pub fn inner(&self) -> &E {
        match self {
            Self::Retry(e) | Self::Terminal(e) => e,
        }
    }

    /// The error, by value.
    pub fn into_inner(self) -> E {
        match self {
            Self::Retry(e) | Self::Terminal(e) => e,
        }
    }
}

impl<E> From<E> for ReconcileError<E> {
    fn from(error: E) -> Self {
        Self::Retry(error)
    }
}

impl<E: Display + Send + 'static> ReconcileFailure for ReconcileError<E> {
    fn is_terminal(&self) -> bool {
        ReconcileError::is_terminal(self)
    }
    fn error(&self) -> &dyn Display {
        self.inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terminal<E: ReconcileFailure>(e: E) -> bool {
        e.is_terminal()
    }

    #[test]
    fn display_errors_are_retried_and_terminal_ones_are_not() {
        assert!(!terminal("plain".to_owned()));
        assert!(!terminal(ReconcileError::from(3)));
        assert!(terminal(ReconcileError::terminal(3)));
        let e = ReconcileError::Terminal("bad spec");
        assert_eq!(ReconcileFailure::error(&e).to_string(), "bad spec");
        assert_eq!(e.into_inner(), "bad spec");
    }
}
