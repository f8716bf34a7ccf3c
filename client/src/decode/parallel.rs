//! Sharing one piece of decoding work (a LIST page's items, a large batch of watch lines)
//! between the two decoding threads (`threads`).
//!
//! Why not two halves: a half on each thread finishes together only when both threads run
//! undisturbed, and on a busy machine they do not (the other runtime worker receives the next
//! page meanwhile, the API server may share the cores); the thread that finishes first then
//! waits. Here both threads take small chunks from a shared counter until none is left, so
//! they finish within one chunk of each other whoever is slowed. Results come back in chunk
//! order, so the caller's order (items, events) is kept. Each thread makes one scratch
//! state (a decoder with its buffers) when it takes its first chunk, on that thread (so
//! that it can prepare the thread's heap, see `heap`), and keeps it for all the
//! chunks it takes.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::object::Decoder;
use super::threads::{self, THREADS};

/// Chunks the work is cut into (fewer when it has fewer elements).
const CHUNKS: usize = 32;

/// The chunks' results as they come in, and who to tell when the last one is in.
struct Done<R> {
    parts: Vec<Option<R>>,
    left: usize,
    panic: Option<Box<dyn Any + Send>>,
    tell: Option<oneshot::Sender<()>>,
}

struct Shared<I, N, F, R> {
    work: Vec<I>,
    chunk: usize,
    chunks: usize,
    next: AtomicUsize,
    new_state: N,
    f: F,
    done: Mutex<Done<R>>,
}

impl<I, N, F, R> Shared<I, N, F, R> {
    /// Runs `f` on chunks taken from the counter until none is left, with one scratch state
    /// for all of them, made before the first; the last chunk to finish (or the first to
    /// panic) tells the caller.
    fn take_chunks<S>(&self)
    where
        N: Fn() -> S,
        F: Fn(&mut S, &[I], usize) -> R,
    {
        let mut scratch: Option<S> = None;
        loop {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= self.chunks {
                return;
            }
            let start = c * self.chunk;
            let end = (start + self.chunk).min(self.work.len());
            let result = catch_unwind(AssertUnwindSafe(|| {
                let scratch = scratch.get_or_insert_with(&self.new_state);
                (self.f)(scratch, &self.work[start..end], start)
            }));
            let mut done = self.done.lock();
            let panicked = result.is_err();
            match result {
                Ok(r) => done.parts[c] = Some(r),
                Err(panic) => done.panic = Some(panic),
            }
            done.left -= 1;
            if done.left == 0 || panicked {
                if let Some(tell) = done.tell.take() {
                    let _ = tell.send(());
                }
                return;
            }
        }
    }
}

/// Runs `f` over `work`, cut into chunks, on both decoding threads at once
/// ([`threads`]); `f` gets its thread's scratch state (made by `new_state` on that
/// thread, once, before its first chunk), a chunk and the index of the chunk's first
/// element. Returns the results in chunk order. A panic in `f` is resumed here.
pub(crate) async fn share<I, S, R, N, F>(work: Vec<I>, new_state: N, f: F) -> Vec<R>
where
    I: Send + Sync + 'static,
    R: Send + 'static,
    N: Fn() -> S + Send + Sync + 'static,
    F: Fn(&mut S, &[I], usize) -> R + Send + Sync + 'static,
{
    let chunk = work.len().div_ceil(CHUNKS).max(1);
    let chunks = work.len().div_ceil(chunk);
    if chunks == 0 {
        return Vec::new();
    }
    let (tell, told) = oneshot::channel();
    let shared = Arc::new(Shared {
        work,
        chunk,
        chunks,
        next: AtomicUsize::new(0),
        new_state,
        f,
        done: Mutex::new(Done {
            parts: (0..chunks).map(|_| None).collect(),
            left: chunks,
            panic: None,
            tell: Some(tell),
        }),
    });
    // A thread busy with other work when the job reaches it finds no chunk left, and its
    // job ends at once; the caller does not wait for it.
    for _ in 0..THREADS {
        let shared = Arc::clone(&shared);
        threads::spawn(move || shared.take_chunks::<S>());
    }
    // The sender is dropped unsent only with the shared state, which this holds.
    let _ = told.await;
    let mut done = shared.done.lock();
    if let Some(panic) = done.panic.take() {
        drop(done);
        resume_unwind(panic);
    }
    std::mem::take(&mut done.parts)
        .into_iter()
        .map(|part| part.expect("every chunk finished before the caller was told"))
        .collect()
}

/// Decodes `work` (`json_bytes` of JSON in all) with `f` on the decoding threads
/// ([`threads`]): on one of them when it is under `parallel_min_bytes` or a single
/// element, else on both ([`share`]). Each thread's decoder has its heap grown ahead for
/// its expected share ([`Decoder::for_objects`]). Returns the results in order, one per
/// chunk.
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
        threads::run(move || vec![f(&mut Decoder::for_objects(json_bytes), &work, 0)]).await
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
