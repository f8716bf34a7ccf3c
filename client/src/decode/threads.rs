//! The decoding threads: the two threads of the process on which every object a reflector
//! caches is decoded, and on which the objects it replaces are freed.
//!
//! Why threads of their own: glibc's malloc gives each thread an arena of its own, and a
//! block freed by any thread goes back to the arena that made it, where only that arena's
//! threads allocate again. Decoded on the runtime's workers and on blocking threads, as
//! they were, a cache's objects were spread over arenas that mostly stopped allocating
//! after the initial list (a blocking thread, or the worker the watch task left): when a
//! burst of watch events then replaced every object, the new ones were carved from fresh
//! pages of the watch task's arena while the old ones' memory sat free, and unused, in the
//! others. The comparison bench measured it (BENCHMARKS.md, "Where a burst's memory
//! goes"): a burst over 10,000 cached pods took RSS to 1.5-1.6x the steady RSS with a live
//! heap of 1.08x, and cost 1.8-2.2 page faults per event; the same run under one arena
//! (`MALLOC_ARENA_MAX=1`) peaked at 1.07-1.09x with 0.3-0.4 faults per event. Here a
//! cache's objects are made by the same two threads that keep making its new objects, and
//! that free the replaced ones before each decode (`reclaim`), so each arena's freed
//! memory is what it allocates next: the same bench's bursts now peak at 1.09-1.16x the
//! steady RSS at 10,000 pods and 1.01-1.03x at 100,000, with 0.4-1.0 faults per event. A
//! replaced object may be freed by the other decoding thread (two batches of a watch
//! decode at once, one on each): the block still goes back to an arena that keeps
//! allocating.
//!
//! Jobs run outside any tokio runtime, so the code they run (the decoders, an informer's
//! transform) must not block or need one.
//!
//! Why two: the list decoding shares each page between two threads (`parallel`), which
//! is what the sync time was tuned for on the two-core machine the benches run on; more
//! threads would spread the objects over more arenas. Every informer of the process
//! decodes here, so a process with many informers decodes on at most two cores at once.
//! Jobs go to whichever thread is free first, in the order they were given.
//!
//! Considered: tokio's blocking pool (`spawn_blocking`, the earlier design: its threads
//! come and go, so objects outlive the arena's only allocating thread), rayon's pool (a
//! dependency for a job queue; it steals work in an order of its own), and pinning a
//! watch to one thread (the other thread's half of the list then sits freed and unused
//! after a burst, as above).

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::OnceLock;

use parking_lot::{Condvar, Mutex};

/// Threads decoding for the whole process.
pub(crate) const THREADS: usize = 2;

type Job = Box<dyn FnOnce() + Send>;

/// The jobs waiting for a thread.
struct Pool {
    jobs: Mutex<VecDeque<Job>>,
    ready: Condvar,
}

impl Pool {
    fn work(&self) {
        loop {
            let job = {
                let mut jobs = self.jobs.lock();
                loop {
                    if let Some(job) = jobs.pop_front() {
                        break job;
                    }
                    self.ready.wait(&mut jobs);
                }
            };
            // A job reports its own panic (see `run`); one that does not must not end the
            // thread.
            let _ = catch_unwind(AssertUnwindSafe(job));
        }
    }
}

/// The pool, with its threads started on first use; `None` when no thread could be.
fn pool() -> Option<&'static Pool> {
    static POOL: OnceLock<Pool> = OnceLock::new();
    static STARTED: OnceLock<usize> = OnceLock::new();
    let pool = POOL.get_or_init(|| Pool {
        jobs: Mutex::new(VecDeque::new()),
        ready: Condvar::new(),
    });
    let started = *STARTED.get_or_init(|| {
        let started = (0..THREADS)
            .filter(|i| {
                std::thread::Builder::new()
                    .name(format!("kinform-decode-{i}"))
                    .spawn(|| pool.work())
                    .is_ok()
            })
            .count();
        if started == 0 {
            tracing::warn!("no decoding thread could be started; decoding on the callers' threads");
        }
        started
    });
    (started > 0).then_some(pool)
}

/// Runs `job` on a decoding thread, or on this one when none could be started.
pub(crate) fn spawn(job: impl FnOnce() + Send + 'static) {
    let Some(pool) = pool() else {
        job();
        return;
    };
    pool.jobs.lock().push_back(Box::new(job));
    pool.ready.notify_one();
}

/// Runs `f` on a decoding thread and resolves to its result; a panic in `f` is resumed in
/// the caller.
pub(crate) async fn run<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = tokio::sync::oneshot::channel();
    spawn(move || {
        let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
    });
    match rx.await {
        Ok(Ok(r)) => r,
        Ok(Err(panic)) => resume_unwind(panic),
        // The pool's threads run every job they are given, to its end.
        Err(_) => unreachable!("a decoding job was dropped unrun"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_name() -> String {
        std::thread::current().name().unwrap_or_default().to_owned()
    }

    #[tokio::test]
    async fn a_job_runs_on_a_decoding_thread_and_returns_its_result() {
        let name = run(thread_name).await;
        assert!(name.starts_with("kinform-decode-"), "ran on {name:?}");
    }

    #[tokio::test]
    async fn a_panic_reaches_the_caller_and_the_threads_live_on() {
        let panicked = tokio::spawn(run(|| -> usize { panic!("in a job") })).await;
        assert!(panicked.is_err_and(|e| e.is_panic()));
        for i in 0..4 * THREADS {
            assert_eq!(run(move || i * 2).await, i * 2);
        }
    }
}
