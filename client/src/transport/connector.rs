//! The connector hyper-util's pooled client dials with: TCP, an optional HTTP CONNECT proxy
//! tunnel (kubeconfig `proxy-url`), then TLS for `https://` servers.
//!
//! The whole dial (TCP + proxy + TLS handshake) is bounded by the connect timeout. When the
//! TLS handshake negotiates `h2` through ALPN the connection is marked HTTP/2 so hyper speaks
//! it, as Go's `net/http` does with a server that offers HTTP/2.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use base64::Engine as _;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use rustls_pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// Dials API server connections.
#[derive(Clone)]
pub(crate) struct Connector {
    pub(crate) tls: Option<TlsConnector>,
    /// Overrides the name checked against the certificate (`tls-server-name`).
    pub(crate) server_name: Option<ServerName<'static>>,
    pub(crate) proxy: Option<Arc<Proxy>>,
    pub(crate) connect_timeout: Option<Duration>,
}

/// An `http://` proxy reached with CONNECT.
pub(crate) struct Proxy {
    pub(crate) host: String,
    pub(crate) port: u16,
    /// `Proxy-Authorization` value from the URL's user info.
    pub(crate) authorization: Option<String>,
}

impl Proxy {
    pub(crate) fn from_uri(uri: &http::Uri) -> io::Result<Self> {
        if uri.scheme_str() != Some("http") {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "proxy-url scheme {:?} is not supported (only http:// CONNECT proxies)",
                    uri.scheme_str().unwrap_or("")
                ),
            ));
        }
        let authority = uri
            .authority()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "proxy-url has no host"))?;
        let (userinfo, hostport) = match authority.as_str().rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority.as_str()),
        };
        let authorization = userinfo.map(|u| {
            let decoded = percent_encoding::percent_decode_str(u).decode_utf8_lossy();
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(decoded.as_bytes())
            )
        });
        let hostport: http::uri::Authority = hostport
            .parse()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("proxy-url: {e}")))?;
        Ok(Self {
            host: hostport.host().to_owned(),
            port: hostport.port_u16().unwrap_or(80),
            authorization,
        })
    }
}

impl tower::Service<http::Uri> for Connector {
    type Response = Conn;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Conn>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            match this.connect_timeout {
                Some(limit) => tokio::time::timeout(limit, this.dial(uri))
                    .await
                    .map_err(|_| {
                        io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("connect timed out after {limit:?}"),
                        )
                    })?,
                None => this.dial(uri).await,
            }
        })
    }
}

impl Connector {
    async fn dial(self, uri: http::Uri) -> io::Result<Conn> {
        let https = uri.scheme_str() == Some("https");
        let host = uri
            .host()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "URL has no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let tcp = match &self.proxy {
            Some(proxy) => tunnel(proxy, &host, port).await?,
            None => TcpStream::connect((host.as_str(), port)).await?,
        };
        let _ = tcp.set_nodelay(true);
        if !https {
            return Ok(Conn {
                io: TokioIo::new(Stream::Plain(tcp)),
                h2: false,
            });
        }
        let tls = self.tls.as_ref().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "https URL without TLS config")
        })?;
        let name = match &self.server_name {
            Some(n) => n.clone(),
            None => ServerName::try_from(host.clone())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?,
        };
        let stream = tls.connect(name, tcp).await?;
        let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
        Ok(Conn {
            io: TokioIo::new(Stream::Tls(Box::new(stream))),
            h2,
        })
    }
}

/// Opens a CONNECT tunnel through `proxy` to `host:port`.
async fn tunnel(proxy: &Proxy, host: &str, port: u16) -> io::Result<TcpStream> {
    let mut tcp = TcpStream::connect((proxy.host.as_str(), proxy.port)).await?;
    let target = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(auth) = &proxy.authorization {
        head.push_str("Proxy-Authorization: ");
        head.push_str(auth);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    tcp.write_all(head.as_bytes()).await?;
    // Read the proxy's answer head byte by byte: the tunnel's first bytes must stay unread.
    let mut answer = Vec::with_capacity(128);
    while !answer.ends_with(b"\r\n\r\n") {
        if answer.len() > 8192 {
            return Err(io::Error::other("proxy answer head too long"));
        }
        let b = tcp.read_u8().await?;
        answer.push(b);
    }
    let status_line = String::from_utf8_lossy(&answer);
    let status_line = status_line.lines().next().unwrap_or("");
    let ok = status_line
        .split_whitespace()
        .nth(1)
        .is_some_and(|code| code.starts_with('2'));
    if !ok {
        return Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            format!("proxy refused CONNECT {target}: {status_line}"),
        ));
    }
    Ok(tcp)
}

enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }
}

/// One dialled connection, plain or TLS.
pub(crate) struct Conn {
    io: TokioIo<Stream>,
    h2: bool,
}

impl Connection for Conn {
    fn connected(&self) -> Connected {
        let c = Connected::new();
        if self.h2 { c.negotiated_h2() } else { c }
    }
}

impl hyper::rt::Read for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }
}
