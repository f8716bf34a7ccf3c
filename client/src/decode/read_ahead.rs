//! Reading a watch body on its own task, ahead of the decoding.
//!
//! Why: a body is read by hyper's connection task only when its reader asks for more, one
//! chunk at a time, and a task woken from a tokio worker waits in that worker's LIFO slot,
//! which the other workers do not take from. The reflector's task asks for the next chunk
//! and then decodes the batch it has on the same worker, so the connection task, woken
//! there, only read the next chunk after the batch was decoded: reading and decoding took
//! turns, and the API server waited on a full socket meanwhile. A task of its own reads
//! the body into a queue whenever data arrives, on whichever worker is free, so the next
//! batch is waiting when the decoding ends (and is larger, which the two decoding threads
//! share better).
//!
//! Every watch body is read so, not only a streaming list's initial events: with the decoder
//! reusing its tape, a burst of 200k watch events goes through about 12% faster read ahead;
//! before the tape was reused, the extra hand-off cost more CPU per event than it saved
//! (BENCHMARKS.md, "Why each trick"). For events that arrive a few at a time it costs one
//! task wake-up per chunk, which nothing waits on.
//!
//! What is read ahead is bounded by bytes, not chunks: `Config::read_ahead_bytes` (4 MiB by
//! default). Each chunk takes its length from a byte budget (a semaphore) before it is
//! queued, and gives it back only when the last slice of it is dropped, i.e. once the
//! decoder has decoded every line it holds (a line that is not finished in the chunk is
//! copied out of it, so a chunk never waits on later ones). When the budget is spent the
//! task stops reading the body, so hyper stops reading the socket and the server's writes
//! wait on TCP's (HTTP/2's) flow control: a slow consumer holds at most the budget, one
//! chunk in the task's hands and hyper's read buffer, not a growing queue. A chunk larger
//! than the whole budget takes all of it. A bound by count (64 chunks, before) held
//! anywhere from 64 small events to 25 MiB depending on how the server wrote its chunks.
//! Errors and the end of the body come through the queue in their place; dropping the
//! stream stops the task.
//!
//! Considered: `tokio_util`'s and `futures`' stream buffers bound by items, not bytes; the
//! semaphore and `Bytes::from_owner` (which keeps the permit with the chunk's bytes, zero
//! copy) are the whole of it.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::{BoxStream, Stream};
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

use crate::Error;

type Body = BoxStream<'static, Result<Bytes, Error>>;

/// A chunk read ahead, with the part of the byte budget it holds until it is dropped.
struct Held {
    chunk: Bytes,
    _permit: OwnedSemaphorePermit,
}

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        &self.chunk
    }
}

/// `src` read by a task of its own into a queue holding at most `budget` bytes not yet
/// dropped by the consumer (see the module docs); the same items in the same order.
pub(crate) fn read_ahead(mut src: Body, budget: usize) -> Body {
    // `acquire_many` counts in u32, and a semaphore holds at most `MAX_PERMITS`.
    let budget = budget.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let room = Arc::new(Semaphore::new(budget));
    // Unbounded as a channel: the byte budget bounds it.
    let (tx, rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        while let Some(item) = src.next().await {
            let item = match item {
                Ok(chunk) => {
                    let take = u32::try_from(chunk.len().min(budget)).unwrap_or(u32::MAX);
                    // The semaphore is never closed: acquiring fails only if it were.
                    let Ok(permit) = Arc::clone(&room).acquire_many_owned(take).await else {
                        return;
                    };
                    Ok(Bytes::from_owner(Held {
                        chunk,
                        _permit: permit,
                    }))
                }
                Err(e) => Err(e),
            };
            let failed = item.is_err();
            if tx.send(item).is_err() || failed {
                return;
            }
        }
    });
    ReadAhead {
        rx,
        task: Some(task),
    }
    .boxed()
}

/// The queue's end; the task that fills it is aborted when the stream is dropped. Fused.
struct ReadAhead {
    rx: mpsc::UnboundedReceiver<Result<Bytes, Error>>,
    /// `None` once it has ended.
    task: Option<JoinHandle<()>>,
}

impl Stream for ReadAhead {
    type Item = Result<Bytes, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(item) = ready!(self.rx.poll_recv(cx)) {
            return Poll::Ready(Some(item));
        }
        // The queue is closed: the body ended or failed, or the task panicked (the panic
        // is the reader's) or was cancelled (the runtime is shutting down).
        if let Some(task) = &mut self.task {
            let ended = ready!(Pin::new(task).poll(cx));
            self.task = None;
            if let Err(e) = ended
                && e.is_panic()
            {
                std::panic::resume_unwind(e.into_panic());
            }
        }
        Poll::Ready(None)
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    fn chunk(s: &'static str) -> Result<Bytes, Error> {
        Ok(Bytes::from_static(s.as_bytes()))
    }

    /// A body fed by hand, and a flag set when the body is dropped.
    fn fed() -> (
        mpsc::UnboundedSender<Result<Bytes, Error>>,
        Body,
        Arc<AtomicBool>,
    ) {
        struct SetOnDrop(Arc<AtomicBool>);
        impl Drop for SetOnDrop {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let dropped = Arc::new(AtomicBool::new(false));
        let guard = SetOnDrop(Arc::clone(&dropped));
        let body = futures_util::stream::unfold((rx, guard), |(mut rx, guard)| async move {
            rx.recv().await.map(|c| (c, (rx, guard)))
        })
        .boxed();
        (tx, body, dropped)
    }

    fn text(item: Option<Result<Bytes, Error>>) -> String {
        match item {
            Some(Ok(b)) => String::from_utf8(b.to_vec()).unwrap(),
            Some(Err(e)) => format!("err: {e}"),
            None => "end".into(),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn chunks_keep_their_order_and_the_end_comes_last() {
        let (tx, body, dropped) = fed();
        let mut s = read_ahead(body, 1 << 20);
        tx.send(chunk("a")).unwrap();
        tx.send(chunk("b")).unwrap();
        assert_eq!(text(s.next().await), "a");
        tx.send(chunk("c")).unwrap();
        assert_eq!(text(s.next().await), "b");
        assert_eq!(text(s.next().await), "c");
        assert!(!dropped.load(Ordering::SeqCst), "the body is still read");
        drop(tx);
        assert_eq!(text(s.next().await), "end");
        assert_eq!(text(s.next().await), "end");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_error_comes_in_its_place_and_ends_the_stream() {
        let (tx, body, _) = fed();
        let mut s = read_ahead(body, 1 << 20);
        tx.send(chunk("a")).unwrap();
        tx.send(Err(Error::Transport {
            request: "GET /api/v1/pods?watch=true".into(),
            message: "connection reset".into(),
            source: None,
        }))
        .unwrap();
        tx.send(chunk("never")).unwrap();
        assert_eq!(text(s.next().await), "a");
        assert!(text(s.next().await).contains("connection reset"));
        assert_eq!(text(s.next().await), "end");
    }

    /// Waits (a hang guard, not a timing assertion) until `f` holds.
    async fn until(what: &str, f: impl Fn() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !f() {
            assert!(tokio::time::Instant::now() < deadline, "{what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits until `n` chunks have been pulled from the body, then checks that no more are
    /// (the task waits for room).
    async fn stops_at(pulled: &AtomicUsize, n: usize, what: &str) {
        until(what, || pulled.load(Ordering::SeqCst) >= n).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(pulled.load(Ordering::SeqCst), n, "{what}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reading_stops_at_the_byte_budget_until_chunks_are_dropped() {
        // A body of 10-byte chunks that counts how many were pulled from it.
        let pulled = Arc::new(AtomicUsize::new(0));
        let p = Arc::clone(&pulled);
        let body = futures_util::stream::iter(0..100)
            .map(move |_| {
                p.fetch_add(1, Ordering::SeqCst);
                chunk("0123456789")
            })
            .boxed();
        let mut s = read_ahead(body, 35);
        // Three chunks fit in 35 bytes; the fourth is pulled and waits for room.
        stops_at(&pulled, 4, "three chunks queued, a fourth waiting").await;

        // Taking chunks without dropping them frees nothing: the consumer still holds them.
        let held: Vec<Bytes> = vec![
            s.next().await.unwrap().unwrap(),
            s.next().await.unwrap().unwrap(),
        ];
        stops_at(&pulled, 4, "held chunks count").await;
        // A slice of a chunk holds its room as the chunk does.
        let line = held[0].slice(0..3);
        drop(held);
        stops_at(&pulled, 5, "the slice still holds its chunk's room").await;
        drop(line);
        stops_at(&pulled, 6, "room for the next chunk").await;

        // Everything comes through, in order, when the consumer keeps up.
        let mut rest = 2;
        while let Some(item) = s.next().await {
            assert_eq!(&item.unwrap()[..], b"0123456789");
            rest += 1;
        }
        assert_eq!(rest, 100);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_chunk_larger_than_the_budget_takes_all_of_it() {
        let (tx, body, _) = fed();
        let mut s = read_ahead(body, 4);
        tx.send(chunk("larger than four")).unwrap();
        tx.send(chunk("next")).unwrap();
        let big = s.next().await.unwrap().unwrap();
        assert_eq!(&big[..], b"larger than four");
        drop(big);
        assert_eq!(text(s.next().await), "next");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_the_stream_stops_reading() {
        let (_tx, body, dropped) = fed();
        let s = read_ahead(body, 1 << 20);
        drop(s);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !dropped.load(Ordering::SeqCst) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the body was not dropped"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}
