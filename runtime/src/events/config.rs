//! [`RecorderConfig`]: who reports, and the limits of the queue, spam filter and series.

use std::time::Duration;

/// Settings of an [`EventRecorder`](super::EventRecorder); defaults are client-go's.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct RecorderConfig {
    /// `reportingController`, e.g. `example.com/sample-controller`.
    pub reporting_controller: String,
    /// `reportingInstance`, e.g. the pod name.
    pub reporting_instance: String,
    /// Events waiting to be sent; when full, new events are dropped and counted
    /// (client-go's `maxQueuedEvents`, 1000).
    pub queue_capacity: usize,
    /// Events per reporting source and object sent in a burst (client-go's
    /// `defaultSpamBurst`, 25).
    pub spam_burst: u32,
    /// One more event per object is allowed every `spam_refill` (client-go's
    /// `defaultSpamQPS`, 1/300: 5 minutes).
    pub spam_refill: Duration,
    /// A series unseen for this long is finished; the next occurrence creates a new Event
    /// (client-go's `finishTime`, 6 minutes).
    pub series_finish: Duration,
    /// Attempts per request when the server cannot be reached (client-go's
    /// `maxTriesPerEvent`, 12). Error answers (a Status) are not retried, as in client-go.
    pub max_tries: u32,
    /// The wait between attempts (client-go sleeps 10 s, with jitter after the first).
    pub retry_interval: Duration,
}

impl RecorderConfig {
    /// Defaults for `reporting_controller` / `reporting_instance`.
    pub fn new(
        reporting_controller: impl Into<String>,
        reporting_instance: impl Into<String>,
    ) -> Self {
        Self {
            reporting_controller: reporting_controller.into(),
            reporting_instance: reporting_instance.into(),
            queue_capacity: 1000,
            spam_burst: 25,
            spam_refill: Duration::from_secs(300),
            series_finish: Duration::from_secs(360),
            max_tries: 12,
            retry_interval: Duration::from_secs(10),
        }
    }

    /// Sets [`queue_capacity`](Self::queue_capacity) (at least 1).
    pub fn queue_capacity(mut self, capacity: usize) -> Self {
        self.queue_capacity = capacity.max(1);
        self
    }

    /// Sets the spam filter's burst and refill period.
    pub fn spam_filter(mut self, burst: u32, refill: Duration) -> Self {
        self.spam_burst = burst;
        self.spam_refill = refill;
        self
    }
}
