//! Reading a watch body on its own task, ahead of the decoding ([`watch_body`]), so that the
//! next batch is waiting when the decoding of one ends (why: `docs/performance.md`, "Read
//! ahead").
//!
//! A body is read by hyper's connection task only when its reader asks for more, one chunk
//! at a time, and a task woken from a tokio worker waits in that worker's LIFO slot, which
//! the other workers do not take from: read by the reflector's task, which decodes on the
//! same worker, reading and decoding would take turns while the API server waits on a full
//! socket. Every watch body is read so, not only a streaming list's initial events; for
//! events that arrive a few at a time it costs one task wake-up per chunk, which nothing
//! waits on.
//!
//! 1. **Bounded by bytes.** What is read ahead holds at most `Config::read_ahead_bytes` (4 MiB
//!    by default), not a number of chunks (which would hold anything from a few small events
//!    to many MiB, as the server writes its chunks). Each chunk takes its length from a byte
//!    budget (a semaphore) before it is queued, and gives it back only when the last slice of
//!    it is dropped, i.e. once the decoder has decoded every line it holds (a line that is
//!    not finished in the chunk is copied out of it, so a chunk never waits on later ones).
//!    When the budget is spent the task stops reading the body, so hyper stops reading the
//!    socket and the server's writes wait on TCP's (HTTP/2's) flow control: a slow consumer
//!    holds at most the budget, one chunk in the task's hands and hyper's read buffer. A
//!    chunk larger than the whole budget takes all of it.
//! 2. **In order.** Errors and the end of the body come through the queue in their place;
//!    dropping the stream stops the task.
//! 3. **Copied into blocks.** Each chunk is copied into a block of this watch's own
//!    ([`Blocks`]), and hyper's buffer let go at once. The budget counts the blocks' sizes,
//!    so what is read ahead holds at most the budget in blocks in use, and at most as much
//!    again on the shelves, freed with the watch.
//!
//! The semaphore and `Bytes::from_owner` (which keeps the permit and the block with the
//! chunk's bytes, and gives the block back when the last slice goes) are the whole of it;
//! `tokio_util`'s and `futures`' stream buffers bound by items, not bytes.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::{BoxStream, Stream};
use parking_lot::Mutex;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

use crate::Error;

type Body = BoxStream<'static, Result<Bytes, Error>>;

/// A chunk read ahead, with the part of the byte budget it holds until it is dropped.
struct Held {
    data: Data,
    _permit: OwnedSemaphorePermit,
}

/// A chunk's bytes: copied into a block, or hyper's own when too large for one.
enum Data {
    Copied(Vec<u8>, Arc<Blocks>),
    Passed(Bytes),
}

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        match &self.data {
            Data::Copied(block, _) => block,
            Data::Passed(chunk) => chunk,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Data::Copied(block, blocks) = &mut self.data {
            blocks.put(std::mem::take(block));
        }
    }
}

/// The smallest block: 64 bytes (`1 << 6`).
const SMALLEST_BLOCK_BITS: u32 = 6;
/// Sizes of blocks: 64 B to 1 MiB.
const BLOCK_SIZES: usize = 15;

/// A watch's blocks not in use, by size (see the module docs).
///
/// Why: hyper reads the socket into one growing buffer and hands out slices of it; while any
/// slice is held, its next read needs a new buffer, and when the decoder drops the last
/// slice of a buffer, glibc gives its pages back to the kernel (`munmap`, or the trim of the
/// reading thread's heap), so every byte of a burst would be received into pages faulted in
/// afresh (docs/performance.md, "A/B measurements"). Blocks come in power-of-two sizes (64 B to
/// 1 MiB; a larger chunk is passed on as it is, without a copy) and go back to this watch's
/// shelves when dropped, to carry later chunks; hyper's buffer, no longer shared, is read
/// into again in place.
///
/// hyper's `max_buf_size` (a smaller buffer) does not help: glibc still gives the freed
/// buffers' pages back. glibc's tunables (`mmap_threshold`, `trim_threshold`) would, but are
/// the application's to choose.
struct Blocks {
    shelves: Mutex<Shelves>,
}

struct Shelves {
    /// Free blocks, empty, by size: `shelf[i]` holds blocks of `64 << i` bytes.
    shelf: [Vec<Vec<u8>>; BLOCK_SIZES],
    /// The bytes the shelves hold, at most `limit`.
    bytes: usize,
    limit: usize,
}

impl Blocks {
    fn new(limit: usize) -> Self {
        Self {
            shelves: Mutex::new(Shelves {
                shelf: Default::default(),
                bytes: 0,
                limit,
            }),
        }
    }

    /// The shelf and block size for `len` bytes; `None` when larger than every block.
    fn size_of(len: usize) -> Option<(usize, usize)> {
        let size = len
            .max(1 << SMALLEST_BLOCK_BITS)
            .checked_next_power_of_two()?;
        let i = (size.trailing_zeros() - SMALLEST_BLOCK_BITS) as usize;
        (i < BLOCK_SIZES).then_some((i, size))
    }

    /// An empty block of `size` bytes from shelf `i`, or a new one.
    fn take(&self, i: usize, size: usize) -> Vec<u8> {
        let mut shelves = self.shelves.lock();
        match shelves.shelf[i].pop() {
            Some(block) => {
                shelves.bytes -= size;
                block
            }
            None => {
                drop(shelves);
                Vec::with_capacity(size)
            }
        }
    }

    /// Keeps `block` for a later chunk, unless the shelves are full.
    fn put(&self, mut block: Vec<u8>) {
        let Some((i, size)) = Self::size_of(block.capacity()) else {
            return;
        };
        let mut shelves = self.shelves.lock();
        if size == block.capacity() && shelves.bytes + size <= shelves.limit {
            block.clear();
            shelves.bytes += size;
            shelves.shelf[i].push(block);
        }
    }
}

/// `src` read by a task of its own into a queue holding at most `budget` bytes not yet
/// dropped by the consumer (see the module docs); the same items in the same order.
pub(crate) fn watch_body(mut src: Body, budget: usize) -> Body {
    // `acquire_many` counts in u32, and a semaphore holds at most `MAX_PERMITS`.
    let budget = budget.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let room = Arc::new(Semaphore::new(budget));
    let blocks = Arc::new(Blocks::new(budget));
    // Unbounded as a channel: the byte budget bounds it.
    let (tx, rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        while let Some(item) = src.next().await {
            let item = match item {
                Ok(chunk) => {
                    let size = Blocks::size_of(chunk.len());
                    let held = size.map_or(chunk.len(), |(_, size)| size);
                    let take = u32::try_from(held.min(budget)).unwrap_or(u32::MAX);
                    // The semaphore is never closed: acquiring fails only if it were.
                    let Ok(permit) = Arc::clone(&room).acquire_many_owned(take).await else {
                        return;
                    };
                    let data = match size {
                        Some((i, size)) => {
                            let mut block = blocks.take(i, size);
                            block.extend_from_slice(&chunk);
                            Data::Copied(block, Arc::clone(&blocks))
                        }
                        None => Data::Passed(chunk),
                    };
                    Ok(Bytes::from_owner(Held {
                        data,
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
        let mut s = watch_body(body, 1 << 20);
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
        let mut s = watch_body(body, 1 << 20);
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
        // A body of 64-byte chunks (the smallest block) that counts how many were pulled.
        const CHUNK: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let pulled = Arc::new(AtomicUsize::new(0));
        let p = Arc::clone(&pulled);
        let body = futures_util::stream::iter(0..100)
            .map(move |_| {
                p.fetch_add(1, Ordering::SeqCst);
                chunk(CHUNK)
            })
            .boxed();
        let mut s = watch_body(body, 3 * CHUNK.len() + 35);
        // Three chunks fit; the fourth is pulled and waits for room.
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
            assert_eq!(&item.unwrap()[..], CHUNK.as_bytes());
            rest += 1;
        }
        assert_eq!(rest, 100);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_chunks_block_carries_a_later_chunk_and_hypers_buffer_is_let_go() {
        let (tx, body, _) = fed();
        let mut s = watch_body(body, 1 << 20);
        let first = Bytes::from(vec![b'a'; 100]);
        tx.send(Ok(first.clone())).unwrap();
        let got = s.next().await.unwrap().unwrap();
        assert_eq!(got, first);
        assert_ne!(got.as_ptr(), first.as_ptr(), "copied into a block");
        until("the source's buffer is let go", || first.is_unique()).await;
        let block = got.as_ptr();
        drop(got);
        // The next chunk of the same block size (128 bytes) is copied into that block.
        tx.send(Ok(Bytes::from(vec![b'b'; 120]))).unwrap();
        let got = s.next().await.unwrap().unwrap();
        assert_eq!(&got[..], &[b'b'; 120][..]);
        assert_eq!(got.as_ptr(), block, "the block is reused");
        drop(got);
        // A chunk larger than the largest block (1 MiB) is passed on as it is.
        // (It takes the whole budget, so it waits for the chunks before it to be dropped.)
        let large = Bytes::from(vec![b'c'; (1 << 20) + 1]);
        tx.send(Ok(large.clone())).unwrap();
        let got = s.next().await.unwrap().unwrap();
        assert_eq!(got.as_ptr(), large.as_ptr(), "not copied");
    }

    #[test]
    fn block_sizes_are_powers_of_two_from_64_bytes_to_1_mib() {
        assert_eq!(Blocks::size_of(0), Some((0, 64)));
        assert_eq!(Blocks::size_of(64), Some((0, 64)));
        assert_eq!(Blocks::size_of(65), Some((1, 128)));
        assert_eq!(Blocks::size_of(1 << 20), Some((14, 1 << 20)));
        assert_eq!(Blocks::size_of((1 << 20) + 1), None);
        assert_eq!(Blocks::size_of(usize::MAX), None);
        // The shelves keep at most their limit, and only blocks of a shelf's size.
        let blocks = Blocks::new(200);
        blocks.put(Vec::with_capacity(128));
        blocks.put(Vec::with_capacity(128));
        blocks.put(Vec::with_capacity(100));
        assert_eq!(blocks.shelves.lock().bytes, 128);
        assert_eq!(blocks.take(1, 128).capacity(), 128);
        assert_eq!(blocks.shelves.lock().bytes, 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_chunk_larger_than_the_budget_takes_all_of_it() {
        let (tx, body, _) = fed();
        let mut s = watch_body(body, 4);
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
        let s = watch_body(body, 1 << 20);
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
