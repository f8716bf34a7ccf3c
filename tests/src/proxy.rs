//! A TCP proxy in front of a test server, for the faults and measurements that concern one
//! client rather than the server (TestApiServer's own faults apply to every client at once):
//!
//! - it counts the bytes it has delivered to the client, for tests of what a client reads
//!   (and, by its absence, of backpressure: a client that stops reading stops the proxy's
//!   writes once the sockets' buffers are full);
//! - it can be cut and healed, a network partition of that client alone: cut, it closes every
//!   connection through it and each new one at once (the client's requests fail and its
//!   watches end, as behind a broken network); healed, it forwards again.
//!
//! A few lines over tokio's sockets: fault-injecting proxies such as Toxiproxy are separate
//! servers to install, which the tests avoid.
//!
//! The client-facing listener has a small send buffer (accepted sockets inherit it), so
//! what the proxy has written and the client not yet read is at most that buffer plus the
//! client's own receive buffer, which Linux grows up to the third value of
//! `net.ipv4.tcp_rmem` ([`receive_buffer_max`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::watch;

/// The proxy's send buffer towards the client.
pub const SEND_BUFFER: u32 = 16 * 1024;

/// A running proxy; it stops when dropped.
pub struct Proxy {
    /// The address clients connect to.
    pub addr: SocketAddr,
    delivered: Arc<AtomicU64>,
    cut: Arc<AtomicBool>,
    /// Bumped at every cut: each open connection ends when it changes.
    generation: watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Forwards every connection made to [`addr`](Self::addr) to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Self {
        let socket = TcpSocket::new_v4().expect("socket");
        socket.set_send_buffer_size(SEND_BUFFER).expect("SO_SNDBUF");
        socket.bind("127.0.0.1:0".parse().unwrap()).expect("bind");
        let listener = socket.listen(64).expect("listen");
        let addr = listener.local_addr().expect("address");
        let delivered = Arc::new(AtomicU64::new(0));
        let cut = Arc::new(AtomicBool::new(false));
        let generation = watch::Sender::new(0);
        let (count, is_cut, ends) = (Arc::clone(&delivered), Arc::clone(&cut), generation.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if is_cut.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let count = Arc::clone(&count);
                let mut ended = ends.subscribe();
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(upstream).await {
                        tokio::select! {
                            () = forward(client, server, count) => {}
                            _ = ended.changed() => {}
                        }
                    }
                });
            }
        });
        Self {
            addr,
            delivered,
            cut,
            generation,
            task,
        }
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

    /// The URL clients use (`http://ADDR`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Bytes written to clients so far (responses: headers and bodies).
    pub fn delivered(&self) -> u64 {
        self.delivered.load(Ordering::SeqCst)
    }

    /// Waits until no byte has been delivered for `quiet` (at most 30 s: a hang guard) and
    /// answers the bytes delivered then.
    pub async fn settled(&self, quiet: Duration) -> u64 {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let mut last = self.delivered();
        loop {
            tokio::time::sleep(quiet).await;
            let now = self.delivered();
            if now == last || tokio::time::Instant::now() > deadline {
                return now;
            }
            last = now;
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Ends the client-to-server copy when the connection's forwarding ends or is dropped (a
/// cut drops it mid-way).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Copies both ways; server-to-client bytes are counted once written.
async fn forward(client: TcpStream, server: TcpStream, delivered: Arc<AtomicU64>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let _up = AbortOnDrop(tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
        let _ = server_write.shutdown().await;
    }));
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match server_read.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if client_write.write_all(&buf[..n]).await.is_err() {
            break;
        }
        delivered.fetch_add(n as u64, Ordering::SeqCst);
    }
    let _ = client_write.shutdown().await;
}

/// The most a Linux TCP receive buffer grows to (`net.ipv4.tcp_rmem`'s third value; 6 MiB,
/// the kernel's default, when it cannot be read).
pub fn receive_buffer_max() -> u64 {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem")
        .ok()
        .and_then(|s| s.split_whitespace().nth(2)?.parse().ok())
        .unwrap_or(6 << 20)
}
