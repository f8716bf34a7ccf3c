//! [`LeaderElectionRecord`]: the lock's content, client-go's `resourcelock.LeaderElectionRecord`,
//! and its mapping to a Lease's spec (`LeaseSpecToLeaderElectionRecord` and back).

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

/// Who holds the lock, since when, for how long.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaderElectionRecord {
    /// The holder's identity; empty when nobody holds it (after a release).
    pub holder_identity: String,
    /// How long the holder's claim lasts after `renew_time`, in seconds.
    pub lease_duration_seconds: i32,
    /// When the current holder acquired it.
    pub acquire_time: Option<Timestamp>,
    /// When the current holder last renewed it.
    pub renew_time: Option<Timestamp>,
    /// How many times the holder changed.
    pub leader_transitions: i32,
}

impl LeaderElectionRecord {
    /// Reads a Lease's spec.
    pub fn from_lease_spec(spec: &LeaseSpec) -> Self {
        Self {
            holder_identity: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
            acquire_time: spec.acquire_time.as_ref().map(|t| t.0),
            renew_time: spec.renew_time.as_ref().map(|t| t.0),
            leader_transitions: spec.lease_transitions.unwrap_or_default(),
        }
    }

    /// Writes the record into a Lease's spec, keeping the fields the record does not own
    /// (`strategy`, `preferredHolder`).
    pub fn apply_to(&self, spec: &mut LeaseSpec) {
        spec.holder_identity = Some(self.holder_identity.clone());
        spec.lease_duration_seconds = Some(self.lease_duration_seconds);
        spec.acquire_time = self.acquire_time.map(MicroTime);
        spec.renew_time = self.renew_time.map(MicroTime);
        spec.lease_transitions = Some(self.leader_transitions);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_a_lease_spec() {
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let r = LeaderElectionRecord {
            holder_identity: "a".into(),
            lease_duration_seconds: 15,
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: 3,
        };
        let mut spec = LeaseSpec {
            strategy: Some("OldestEmulationVersion".into()),
            ..LeaseSpec::default()
        };
        r.apply_to(&mut spec);
        assert_eq!(spec.strategy.as_deref(), Some("OldestEmulationVersion"));
        assert_eq!(LeaderElectionRecord::from_lease_spec(&spec), r);
        assert_eq!(
            LeaderElectionRecord::from_lease_spec(&LeaseSpec::default()),
            LeaderElectionRecord::default()
        );
    }
}
