//! The lock the elector competes for: the [`ResourceLock`] trait (client-go's
//! `resourcelock.Interface`) and its Lease implementation [`LeaseLock`]
//! (`resourcelock/leaselock.go`).
//!
//! A lock remembers the object it last read or wrote; [`update`](ResourceLock::update) sends
//! that object back with its `resourceVersion`, so a write based on a stale read fails with
//! 409 Conflict instead of overwriting a newer holder (optimistic concurrency).

use std::future::Future;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use parking_lot::Mutex;

use super::record::LeaderElectionRecord;
use kinform_client::{Api, Error as ClientError, PostParams};

/// Why a lock operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// The API request failed (a 409 Conflict among others); the server's Status is kept.
    #[error("lock {lock}: {source}")]
    Client {
        /// The lock, e.g. `Lease kube-system/my-controller`.
        lock: String,
        /// The client error.
        #[source]
        source: ClientError,
    },
    /// `update` was called before any `get` or `create` succeeded.
    #[error("lock {lock}: not initialized, get or create it first")]
    NotInitialized {
        /// The lock.
        lock: String,
    },
    /// A test double's failure (unreachable server, injected conflict).
    #[error("lock {lock}: {message}")]
    Other {
        /// The lock.
        lock: String,
        /// What failed.
        message: String,
    },
}

impl LockError {
    /// Whether the write lost an optimistic-concurrency race (409 Conflict).
    pub fn is_conflict(&self) -> bool {
        matches!(self, LockError::Client { source, .. } if source.is_conflict() || source.is_already_exists())
    }
}

/// A lock object holding a [`LeaderElectionRecord`] (client-go's `resourcelock.Interface`).
pub trait ResourceLock: Send + Sync + 'static {
    /// Reads the record; `Ok(None)` when the lock object does not exist.
    fn get(&self) -> impl Future<Output = Result<Option<LeaderElectionRecord>, LockError>> + Send;
    /// Creates the lock object with `record`; fails if it exists.
    fn create(
        &self,
        record: &LeaderElectionRecord,
    ) -> impl Future<Output = Result<(), LockError>> + Send;
    /// Replaces the record of the object last read or written, at its resourceVersion.
    fn update(
        &self,
        record: &LeaderElectionRecord,
    ) -> impl Future<Output = Result<(), LockError>> + Send;
    /// This candidate's identity (the `holderIdentity` it writes).
    fn identity(&self) -> &str;
    /// The lock for logs and errors, e.g. `Lease kube-system/my-controller`.
    fn describe(&self) -> String;
}

/// A lock on a `coordination.k8s.io/v1` Lease.
pub struct LeaseLock {
    api: Api<Lease>,
    name: String,
    identity: String,
    lease: Mutex<Option<Lease>>,
}

impl std::fmt::Debug for LeaseLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseLock")
            .field("lease", &self.describe())
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl LeaseLock {
    /// The Lease `name` in the namespace of `api`, competed for as `identity`.
    pub fn new(api: Api<Lease>, name: impl Into<String>, identity: impl Into<String>) -> Self {
        Self {
            api,
            name: name.into(),
            identity: identity.into(),
            lease: Mutex::new(None),
        }
    }

    /// The Lease as last read or written.
    pub fn cached(&self) -> Option<Lease> {
        self.lease.lock().clone()
    }

    fn err(&self, source: ClientError) -> LockError {
        LockError::Client {
            lock: self.describe(),
            source,
        }
    }
}

impl ResourceLock for LeaseLock {
    async fn get(&self) -> Result<Option<LeaderElectionRecord>, LockError> {
        match self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| self.err(e))?
        {
            None => Ok(None),
            Some(lease) => {
                let record =
                    LeaderElectionRecord::from_lease_spec(&lease.spec.clone().unwrap_or_default());
                *self.lease.lock() = Some(lease);
                Ok(Some(record))
            }
        }
    }

    async fn create(&self, record: &LeaderElectionRecord) -> Result<(), LockError> {
        let mut spec = LeaseSpec::default();
        record.apply_to(&mut spec);
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: self.api.namespace().map(str::to_owned),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        };
        let created = self
            .api
            .create(&PostParams::default(), &lease)
            .await
            .map_err(|e| self.err(e))?;
        *self.lease.lock() = Some(created);
        Ok(())
    }

    async fn update(&self, record: &LeaderElectionRecord) -> Result<(), LockError> {
        let mut lease = self
            .lease
            .lock()
            .clone()
            .ok_or_else(|| LockError::NotInitialized {
                lock: self.describe(),
            })?;
        record.apply_to(lease.spec.get_or_insert_with(LeaseSpec::default));
        let updated = self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
            .map_err(|e| self.err(e))?;
        *self.lease.lock() = Some(updated);
        Ok(())
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    fn describe(&self) -> String {
        match self.api.namespace() {
            Some(ns) => format!("Lease {ns}/{}", self.name),
            None => format!("Lease {}", self.name),
        }
    }
}
