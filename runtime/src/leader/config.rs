//! [`LeaderElectionConfig`]: the timing knobs and their validation, as client-go's
//! `NewLeaderElector` checks them.

use std::time::Duration;

/// client-go's `JitterFactor`: the acquire loop waits between `retry_period` and
/// `(1 + JITTER_FACTOR) * retry_period`, and `renew_deadline` must exceed
/// `JITTER_FACTOR * retry_period`.
pub const JITTER_FACTOR: f64 = 1.2;

/// Timing and identity of one candidate (client-go's `LeaderElectionConfig`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct LeaderElectionConfig {
    /// How long non-leaders wait, from the moment they last saw the record change, before
    /// they try to take the lease over (client-go's `LeaseDuration`, default 15 s). Written
    /// into the Lease as whole seconds, rounded up.
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a failed renewal before it steps down
    /// (`RenewDeadline`, default 10 s).
    pub renew_deadline: Duration,
    /// The wait between attempts (`RetryPeriod`, default 2 s).
    pub retry_period: Duration,
    /// Clear the holder from the Lease when the elector is cancelled while leading, so a
    /// successor need not wait for the lease to expire (`ReleaseOnCancel`, default false).
    pub release_on_cancel: bool,
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: false,
        }
    }
}

/// A [`LeaderElectionConfig`] that client-go would refuse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `lease_duration` is not greater than `renew_deadline`.
    #[error(
        "leaseDuration {lease_duration:?} must be greater than renewDeadline {renew_deadline:?}"
    )]
    LeaseNotAboveDeadline {
        /// The lease duration.
        lease_duration: Duration,
        /// The renew deadline.
        renew_deadline: Duration,
    },
    /// `renew_deadline` is not greater than `JITTER_FACTOR * retry_period`.
    #[error(
        "renewDeadline {renew_deadline:?} must be greater than retryPeriod*JitterFactor ({retry_period:?} * {JITTER_FACTOR})"
    )]
    DeadlineNotAboveRetry {
        /// The renew deadline.
        renew_deadline: Duration,
        /// The retry period.
        retry_period: Duration,
    },
    /// A duration is zero.
    #[error("{field} must be greater than zero")]
    Zero {
        /// `lease_duration`, `renew_deadline` or `retry_period`.
        field: &'static str,
    },
    /// The identity is empty.
    #[error("lock identity is empty")]
    EmptyIdentity,
    /// A [leader-elected](crate::controller::ControllerBuilder::leader_election)
    /// controller's Lease name is empty.
    #[error("the Lease name is empty")]
    EmptyLeaseName,
    /// A controller was made both [sharded](crate::controller::ControllerBuilder::sharded)
    /// and [leader-elected](crate::controller::ControllerBuilder::leader_election): a
    /// sharded replica reconciles its share whoever leads, so the two exclude each other.
    #[error("a controller is either sharded or leader-elected, not both")]
    ShardedAndLeaderElected,
    /// A shard replica's identity is not a label value short enough to carry a rejoin
    /// suffix ([`ShardingConfig::validate`](crate::controller::shard::ShardingConfig::validate)).
    #[error("shard identity {identity:?}: {reason}")]
    InvalidShardIdentity {
        /// The identity given.
        identity: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A sharded controller's name cannot name its shard labels or Leases
    /// ([`validate_controller_name`](crate::controller::shard::validate_controller_name)).
    #[error("controller name {name:?} cannot name a sharded controller: {reason}")]
    InvalidControllerName {
        /// The name given.
        name: String,
        /// The rule it breaks.
        reason: String,
    },
}

impl LeaderElectionConfig {
    /// Sets the three durations.
    pub fn with_durations(
        mut self,
        lease_duration: Duration,
        renew_deadline: Duration,
        retry_period: Duration,
    ) -> Self {
        self.lease_duration = lease_duration;
        self.renew_deadline = renew_deadline;
        self.retry_period = retry_period;
        self
    }

    /// Sets [`release_on_cancel`](Self::release_on_cancel).
    pub fn release_on_cancel(mut self, release: bool) -> Self {
        self.release_on_cancel = release;
        self
    }

    /// Checks the durations as client-go's `NewLeaderElector` does.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.lease_duration <= self.renew_deadline {
            return Err(ConfigError::LeaseNotAboveDeadline {
                lease_duration: self.lease_duration,
                renew_deadline: self.renew_deadline,
            });
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return Err(ConfigError::DeadlineNotAboveRetry {
                renew_deadline: self.renew_deadline,
                retry_period: self.retry_period,
            });
        }
        for (field, d) in [
            ("lease_duration", self.lease_duration),
            ("renew_deadline", self.renew_deadline),
            ("retry_period", self.retry_period),
        ] {
            if d.is_zero() {
                return Err(ConfigError::Zero { field });
            }
        }
        Ok(())
    }

    /// The lease duration as the whole seconds written into the Lease (rounded up, at least 1).
    pub fn lease_duration_seconds(&self) -> i32 {
        let secs =
            self.lease_duration.as_secs() + u64::from(self.lease_duration.subsec_nanos() > 0);
        i32::try_from(secs.max(1)).unwrap_or(i32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(l: u64, d: u64, r: u64) -> LeaderElectionConfig {
        LeaderElectionConfig::default().with_durations(
            Duration::from_millis(l),
            Duration::from_millis(d),
            Duration::from_millis(r),
        )
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(LeaderElectionConfig::default().validate(), Ok(()));
        assert_eq!(cfg(1000, 600, 200).validate(), Ok(()));
    }

    #[test]
    fn validation_matches_client_go() {
        assert!(matches!(
            cfg(10_000, 10_000, 2000).validate(),
            Err(ConfigError::LeaseNotAboveDeadline { .. })
        ));
        // 1.2 * 2 s = 2.4 s: a 2.4 s deadline is refused, 2.5 s accepted.
        assert!(matches!(
            cfg(15_000, 2400, 2000).validate(),
            Err(ConfigError::DeadlineNotAboveRetry { .. })
        ));
        assert_eq!(cfg(15_000, 2500, 2000).validate(), Ok(()));
        assert_eq!(
            cfg(15_000, 10_000, 0).validate(),
            Err(ConfigError::Zero {
                field: "retry_period"
            })
        );
    }

    #[test]
    fn lease_seconds_round_up() {
        assert_eq!(cfg(1000, 600, 200).lease_duration_seconds(), 1);
        assert_eq!(cfg(1500, 600, 200).lease_duration_seconds(), 2);
        assert_eq!(cfg(15_000, 600, 200).lease_duration_seconds(), 15);
    }
}
