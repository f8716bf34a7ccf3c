//! A TCP proxy in front of a test server that counts the bytes it has delivered to the
//! client, for tests of what a client reads (and, by its absence, of backpressure: a client
//! that stops reading stops the proxy's writes once the sockets' buffers are full).
//!
//! The client-facing listener has a small send buffer (accepted sockets inherit it), so
//! what the proxy has written and the client not yet read is at most that buffer plus the
//! client's own receive buffer, which Linux grows up to the third value of
//! `net.ipv4.tcp_rmem` ([`receive_buffer_max`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// The proxy's send buffer towards the client.
pub const SEND_BUFFER: u32 = 16 * 1024;

/// A running proxy; it stops when dropped.
pub struct CountingProxy {
    /// The address clients connect to.
    pub addr: SocketAddr,
    delivered: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl CountingProxy {
    /// Forwards every connection made to [`addr`](Self::addr) to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Self {
        let socket = TcpSocket::new_v4().expect("socket");
        socket.set_send_buffer_size(SEND_BUFFER).expect("SO_SNDBUF");
        socket.bind("127.0.0.1:0".parse().unwrap()).expect("bind");
        let listener = socket.listen(64).expect("listen");
        let addr = listener.local_addr().expect("address");
        let delivered = Arc::new(AtomicU64::new(0));
        let count = Arc::clone(&delivered);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let count = Arc::clone(&count);
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(upstream).await {
                        forward(client, server, count).await;
                    }
                });
            }
        });
        Self {
            addr,
            delivered,
            task,
        }
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

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Copies both ways; server-to-client bytes are counted once written.
async fn forward(client: TcpStream, server: TcpStream, delivered: Arc<AtomicU64>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let up = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
        let _ = server_write.shutdown().await;
    });
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
    up.abort();
}

/// The most a Linux TCP receive buffer grows to (`net.ipv4.tcp_rmem`'s third value; 6 MiB,
/// the kernel's default, when it cannot be read).
pub fn receive_buffer_max() -> u64 {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem")
        .ok()
        .and_then(|s| s.split_whitespace().nth(2)?.parse().ok())
        .unwrap_or(6 << 20)
}
