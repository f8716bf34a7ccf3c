//! A network partition of one client: a TCP proxy in front of a server that a test cuts and
//! heals. Cut, it closes every connection through it and closes each new one at once (the
//! client sees its requests fail and its watches end, as behind a broken network), while
//! the server and every other client carry on; healed, it forwards again.
//!
//! TestApiServer's own faults (`server.faults()`) apply to every client at once; this is
//! the per-client fault. A few lines over tokio's `copy_bidirectional` (fault-injecting
//! proxies such as Toxiproxy are separate servers to install, which the tests avoid).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A cuttable TCP proxy to one address.
pub struct Partition {
    addr: SocketAddr,
    cut: Arc<AtomicBool>,
    /// Bumped at every cut: each connection ends when it changes.
    generation: watch::Sender<u64>,
    accept: JoinHandle<()>,
}

impl Partition {
    /// Starts a proxy on a free loopback port that forwards to `target`.
    pub async fn start(target: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let cut = Arc::new(AtomicBool::new(false));
        let generation = watch::Sender::new(0);
        let (c, g) = (cut.clone(), generation.clone());
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if c.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let mut ended = g.subscribe();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = ended.changed() => {}
                    }
                });
            }
        });
        Ok(Self {
            addr,
            cut,
            generation,
            accept,
        })
    }

    /// `http://127.0.0.1:PORT` of the proxy.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Cuts the link: open connections close, new ones are closed at once.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    /// Heals the link: new connections are forwarded again.
    pub fn heal(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for Partition {
    fn drop(&mut self) {
        self.accept.abort();
    }
}
