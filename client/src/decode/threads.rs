//! The decoding threads: the two threads of the process on which every object a reflector
//! caches is decoded, and on which the objects it replaces are freed (why threads of their
//! own, and why two: [`THREADS`]).
//!
//! 1. Every informer of the process decodes here, so a process with many informers decodes on
//!    at most [`THREADS`] cores at once.
//! 2. Jobs go to whichever thread is free first, in the order they were given ([`spawn`],
//!    [`run`]).
//! 3. Jobs run outside any tokio runtime, so the code they run (the decoders, an informer's
//!    transform) must not block or need one.
//! 4. A panic in a job reaches the caller of [`run`] and the thread lives on; when no thread
//!    can be started, jobs run on the caller's thread.
//!
//! The pool is its own, not tokio's blocking pool (`spawn_blocking`) nor rayon's: see
//! [`THREADS`].

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::OnceLock;

use parking_lot::{Condvar, Mutex};

/// Threads decoding for the whole process.
///
/// Threads of their own, because glibc's malloc gives each thread an arena of its own, and a
/// block freed by any thread goes back to the arena that made it, where only that arena's
/// threads allocate again. Decoded on threads that mostly stop allocating after the initial
/// list (a blocking thread, or the worker a watch task left), a cache's objects would be
/// spread over arenas that no longer allocate: when a burst of watch events then replaced
/// every object, the new ones would be carved from fresh pages of the watch task's arena
/// while the old ones' memory sat free, and unused, in the others (docs/performance.md,
/// "Replaced objects freed and decoded into on the decoding thread"). Here a cache's objects
/// are made by the same two threads that keep making its new objects, and that free the
/// replaced ones before each decode (`reclaim`), so each arena's freed memory is what it
/// allocates next. A replaced object may be freed by the other decoding thread (two batches
/// of a watch decode at once, one on each): the block still goes back to an arena that keeps
/// allocating.
///
/// Two, because the list decoding shares each page between two threads (`parallel`), which
/// is what the sync time was tuned for on the two-core machine the benches run on; more
/// threads would spread the objects over more arenas. Neither tokio's blocking pool (its
/// threads come and go, so objects outlive their arena's only allocating thread) nor rayon's
/// (a dependency for a job queue, stealing work in an order of its own) keeps a cache's
/// objects on threads that keep allocating, and pinning a watch to one thread would leave the
/// other thread's half of the list freed and unused after a burst.
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
