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
//! It is used for the initial events of a streaming list (a LIST's worth of objects in a
//! burst) and stopped at their end bookmark: the task hands the body back after the chunk
//! it is reading, and the ordinary watch events that follow, a few at a time, are read
//! without the hand-off, which costs more than it saves for them (BENCHMARKS.md, sessions
//! 4 and 5).
//!
//! The queue holds at most [`AHEAD_CHUNKS`] chunks: a reader that stops reading (a slow
//! consumer) still stops the server's writes, as before. Errors and the end of the body
//! come through the queue in their place; dropping the stream stops the task.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::{BoxStream, Stream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::client::Error;

type Body = BoxStream<'static, Result<Bytes, Error>>;

/// Chunks read ahead at most (hyper's chunks are at most its read buffer, about 400 KiB).
const AHEAD_CHUNKS: usize = 64;

/// Ends the reading ahead of a [`read_ahead`] stream: after the chunk the task is reading,
/// the stream reads the body itself again.
pub(crate) struct StopReadingAhead(Arc<AtomicBool>);

impl StopReadingAhead {
    /// Stops the reading ahead (see the type's docs).
    pub(crate) fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `src` read by a task of its own into a queue until stopped; the same items in the same
/// order.
pub(crate) fn read_ahead(mut src: Body) -> (Body, StopReadingAhead) {
    let (tx, rx) = mpsc::channel(AHEAD_CHUNKS);
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let task = tokio::spawn(async move {
        while !stopped.load(Ordering::Relaxed) {
            let item = src.next().await?;
            let failed = item.is_err();
            if tx.send(item).await.is_err() || failed {
                return None;
            }
        }
        // Stopped: the body goes back to the stream, after the queue.
        Some(src)
    });
    let stream = ReadAhead::Queue { rx, task }.boxed();
    (stream, StopReadingAhead(stop))
}

/// The queue's end, then (once stopped) the body itself.
enum ReadAhead {
    Queue {
        rx: mpsc::Receiver<Result<Bytes, Error>>,
        task: JoinHandle<Option<Body>>,
    },
    Direct(Body),
    Ended,
}

impl Stream for ReadAhead {
    type Item = Result<Bytes, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match &mut *self {
                ReadAhead::Queue { rx, task } => {
                    if let Some(item) = ready!(rx.poll_recv(cx)) {
                        return Poll::Ready(Some(item));
                    }
                    // The queue is closed: the task ended (the body ended or failed) or was
                    // stopped and gives the body back.
                    let next = match ready!(Pin::new(task).poll(cx)) {
                        Ok(Some(body)) => ReadAhead::Direct(body),
                        Ok(None) => ReadAhead::Ended,
                        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                        // Cancelled: the runtime is shutting down.
                        Err(_) => ReadAhead::Ended,
                    };
                    *self = next;
                }
                ReadAhead::Direct(body) => return body.poll_next_unpin(cx),
                ReadAhead::Ended => return Poll::Ready(None),
            }
        }
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        if let ReadAhead::Queue { task, .. } = self {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
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
    async fn chunks_keep_their_order_before_and_after_the_stop() {
        let (tx, body, dropped) = fed();
        let (mut s, stop) = read_ahead(body);
        tx.send(chunk("a")).unwrap();
        tx.send(chunk("b")).unwrap();
        assert_eq!(text(s.next().await), "a");
        stop.stop();
        // The task was waiting for a chunk when stopped: it forwards "c", then gives the
        // body back; "d" is read directly.
        tx.send(chunk("c")).unwrap();
        assert_eq!(text(s.next().await), "b");
        assert_eq!(text(s.next().await), "c");
        tx.send(chunk("d")).unwrap();
        assert_eq!(text(s.next().await), "d");
        assert!(!dropped.load(Ordering::SeqCst), "the body came back");
        drop(tx);
        assert_eq!(text(s.next().await), "end");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_error_comes_in_its_place_and_ends_the_stream() {
        let (tx, body, _) = fed();
        let (mut s, _stop) = read_ahead(body);
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
        let (s, _stop) = read_ahead(body);
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
