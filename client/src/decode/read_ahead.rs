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
//! The queue holds at most [`AHEAD_CHUNKS`] chunks: a reader that stops reading (a slow
//! consumer) still stops the server's writes, as before. Errors and the end of the body
//! come through the queue in their place; dropping the stream stops the task.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::{BoxStream, Stream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::Error;

type Body = BoxStream<'static, Result<Bytes, Error>>;

/// Chunks read ahead at most (hyper's chunks are at most its read buffer, about 400 KiB).
const AHEAD_CHUNKS: usize = 64;

/// `src` read by a task of its own into a queue; the same items in the same order.
pub(crate) fn read_ahead(mut src: Body) -> Body {
    let (tx, rx) = mpsc::channel(AHEAD_CHUNKS);
    let task = tokio::spawn(async move {
        while let Some(item) = src.next().await {
            let failed = item.is_err();
            if tx.send(item).await.is_err() || failed {
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
    rx: mpsc::Receiver<Result<Bytes, Error>>,
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
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
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
        let mut s = read_ahead(body);
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
        let mut s = read_ahead(body);
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_the_stream_stops_reading() {
        let (_tx, body, dropped) = fed();
        let s = read_ahead(body);
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
