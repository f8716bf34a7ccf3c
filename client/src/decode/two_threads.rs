//! Sharing one piece of decoding work (a LIST page's items, a large batch of watch lines)
//! between the current thread and a blocking thread.
//!
//! Why not two halves: a half on each thread finishes together only when both threads run
//! undisturbed, and on a busy machine they do not (the other runtime worker receives the next
//! page meanwhile, the API server may share the cores); the thread that finishes first then
//! waits. Here both threads take small chunks from a shared counter until none is left, so
//! they finish within one chunk of each other whoever is slowed. Results come back in chunk
//! order, so the caller's order (items, events) is kept. Each thread makes one scratch
//! state (a decoder with its buffers) when it takes its first chunk, on that thread (so
//! that it can prepare the thread's heap, see `heap_ahead`), and keeps it for all the
//! chunks it takes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::fast_decode::Decoder;

/// Chunks the work is cut into (fewer when it has fewer elements).
const CHUNKS: usize = 32;

struct Shared<I, N, F> {
    work: Vec<I>,
    chunk: usize,
    next: AtomicUsize,
    new_state: N,
    f: F,
}

impl<I, N, F> Shared<I, N, F> {
    /// Runs `f` on chunks taken from the counter until none is left, with one scratch state
    /// for all of them, made before the first; each result with the chunk's number.
    fn take_chunks<S, R>(&self) -> Vec<(usize, R)>
    where
        N: Fn() -> S,
        F: Fn(&mut S, &[I], usize) -> R,
    {
        let mut scratch: Option<S> = None;
        let mut done = Vec::new();
        loop {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            let start = c.saturating_mul(self.chunk);
            if start >= self.work.len() {
                return done;
            }
            let end = (start + self.chunk).min(self.work.len());
            let scratch = scratch.get_or_insert_with(&self.new_state);
            done.push((c, (self.f)(scratch, &self.work[start..end], start)));
        }
    }
}

/// Runs `f` over `work`, cut into chunks, on this thread and on a blocking thread at once;
/// `f` gets its thread's scratch state (made by `new_state` on that thread, once, before
/// its first chunk), a chunk and the index of the chunk's first element. Returns the
/// results in chunk order.
///
/// A panic in `f` on the blocking thread is resumed here. When the runtime is shutting down,
/// the blocking task may never start: this thread then takes every chunk itself (a started
/// blocking task always runs to its end, so no chunk is left half taken).
pub(crate) async fn share<I, S, R, N, F>(work: Vec<I>, new_state: N, f: F) -> Vec<R>
where
    I: Send + Sync + 'static,
    R: Send + 'static,
    N: Fn() -> S + Send + Sync + 'static,
    F: Fn(&mut S, &[I], usize) -> R + Send + Sync + 'static,
{
    let chunk = work.len().div_ceil(CHUNKS).max(1);
    let shared = Arc::new(Shared {
        work,
        chunk,
        next: AtomicUsize::new(0),
        new_state,
        f,
    });
    let other = Arc::clone(&shared);
    let handle = tokio::task::spawn_blocking(move || other.take_chunks::<S, R>());
    let mut done = shared.take_chunks::<S, R>();
    match handle.await {
        Ok(theirs) => done.extend(theirs),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => {}
    }
    done.sort_unstable_by_key(|(c, _)| *c);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Decodes `work` (`json_bytes` of JSON in all) with `f`: on this thread alone when it is
/// under `parallel_min_bytes` or a single element, else on this thread and a blocking
/// thread ([`share`]). Each thread's decoder has its heap grown ahead for its expected share
/// ([`Decoder::for_objects`]). Returns the results in order, one per chunk.
pub(crate) async fn decode<I, R, F>(
    work: Vec<I>,
    json_bytes: usize,
    parallel_min_bytes: usize,
    f: F,
) -> Vec<R>
where
    I: Send + Sync + 'static,
    R: Send + 'static,
    F: Fn(&mut Decoder, &[I], usize) -> R + Send + Sync + 'static,
{
    if json_bytes < parallel_min_bytes || work.len() < 2 {
        vec![f(&mut Decoder::for_objects(json_bytes), &work, 0)]
    } else {
        share(work, move || Decoder::for_objects(json_bytes / 2), f).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_element_once_in_order() {
        for n in [1usize, 2, 31, 32, 33, 1000] {
            let work: Vec<usize> = (0..n).collect();
            let parts = share(
                work,
                usize::default,
                |taken: &mut usize, part: &[usize], at| {
                    assert_eq!(part.first(), Some(&at));
                    *taken += 1;
                    (*taken, part.to_vec())
                },
            )
            .await;
            // One scratch state per thread: each thread counts its own chunks from 1.
            let firsts = parts.iter().filter(|(taken, _)| *taken == 1).count();
            assert!((1..=2).contains(&firsts), "{firsts} scratch states");
            let parts: Vec<Vec<usize>> = parts.into_iter().map(|(_, p)| p).collect();
            assert!(parts.len() <= CHUNKS);
            assert_eq!(parts.concat(), (0..n).collect::<Vec<_>>());
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[should_panic(expected = "chunk 3")]
    async fn a_panic_on_either_thread_reaches_the_caller() {
        let work: Vec<usize> = (0..64).collect();
        share(
            work,
            || (),
            |_: &mut (), part: &[usize], at| {
                if at / part.len() == 3 {
                    panic!("chunk 3");
                }
            },
        )
        .await;
    }
}
