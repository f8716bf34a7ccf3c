//! SPDY/3 header blocks: the name/value block (section 2.6.10) and its compression, one zlib
//! stream per direction of a session, started with SPDY/3's preset dictionary (section
//! 2.6.10.1) and sync-flushed after each block, as spdystream's framer reads and writes them.
//!
//! The compression state outlives a block: each side keeps one [`Compressor`] and one
//! [`Decompressor`] for the whole session. zlib with a preset dictionary comes from `flate2`
//! on its pure-Rust `zlib-rs` backend (`miniz_oxide`, flate2's default, has no
//! `set_dictionary`). Decompression is bounded ([`MAX_BLOCK`]) so that a small compressed
//! block cannot make the server allocate without end.

use std::sync::LazyLock;

use bytes::{BufMut, Bytes};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The largest decompressed header block accepted (a port-forward stream's is ~60 bytes).
pub(crate) const MAX_BLOCK: usize = 64 * 1024;

/// Why a header block cannot be read or written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum HeaderError {
    /// The zlib stream is broken (or compressed with another dictionary).
    #[error("header block decompression failed: {0}")]
    Zlib(String),
    /// The block decompresses to more than [`MAX_BLOCK`] bytes.
    #[error("header block larger than {MAX_BLOCK} bytes")]
    TooLarge,
    /// The decompressed block is not a name/value block.
    #[error("malformed header block")]
    Malformed,
}

/// A stream's headers: lower-case names, each with its values (a block joins a name's values
/// with NUL).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Headers(Vec<(String, Vec<String>)>);

impl Headers {
    /// Adds `value` to `name` (lower-cased).
    pub(crate) fn add(&mut self, name: &str, value: &str) {
        let name = name.to_ascii_lowercase();
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, values)) => values.push(value.to_owned()),
            None => self.0.push((name, vec![value.to_owned()])),
        }
    }

    /// The first value of `name` (any case), as Go's `http.Header.Get`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.first())
            .map(String::as_str)
    }

    /// The uncompressed name/value block.
    pub(crate) fn to_block(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.put_u32(self.0.len() as u32);
        for (name, values) in &self.0 {
            let value = values.join("\0");
            out.put_u32(name.len() as u32);
            out.put_slice(name.as_bytes());
            out.put_u32(value.len() as u32);
            out.put_slice(value.as_bytes());
        }
        out
    }

    /// Parses an uncompressed name/value block. SPDY requires lower-case names given once;
    /// here a name in another case is lower-cased and a repeated name adds values, where
    /// spdystream's framer fails the frame (and so the session): more lenient, never stricter.
    pub(crate) fn from_block(mut b: &[u8]) -> Result<Self, HeaderError> {
        fn take<'a>(b: &mut &'a [u8], n: usize) -> Result<&'a [u8], HeaderError> {
            if b.len() < n {
                return Err(HeaderError::Malformed);
            }
            let (head, rest) = b.split_at(n);
            *b = rest;
            Ok(head)
        }
        fn len(b: &mut &[u8]) -> Result<usize, HeaderError> {
            let w = take(b, 4)?;
            Ok(u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as usize)
        }
        let count = len(&mut b)?;
        // Every pair takes at least 8 bytes: a count past that is a lie, refused before looping.
        if count > b.len() / 8 {
            return Err(HeaderError::Malformed);
        }
        let mut headers = Headers::default();
        for _ in 0..count {
            let n = len(&mut b)?;
            let name = std::str::from_utf8(take(&mut b, n)?).map_err(|_| HeaderError::Malformed)?;
            let n = len(&mut b)?;
            let value =
                std::str::from_utf8(take(&mut b, n)?).map_err(|_| HeaderError::Malformed)?;
            if name.is_empty() {
                return Err(HeaderError::Malformed);
            }
            for v in value.split('\0') {
                headers.add(name, v);
            }
        }
        if !b.is_empty() {
            return Err(HeaderError::Malformed);
        }
        Ok(headers)
    }
}

/// SPDY/3's preset zlib dictionary: common header names, each after its 32-bit length, then
/// status lines, dates and content types as one run of text.
static DICTIONARY: LazyLock<Vec<u8>> = LazyLock::new(|| {
    const WORDS: &[&str] = &[
        "options",
        "head",
        "post",
        "put",
        "delete",
        "trace",
        "accept",
        "accept-charset",
        "accept-encoding",
        "accept-language",
        "accept-ranges",
        "age",
        "allow",
        "authorization",
        "cache-control",
        "connection",
        "content-base",
        "content-encoding",
        "content-language",
        "content-length",
        "content-location",
        "content-md5",
        "content-range",
        "content-type",
        "date",
        "etag",
        "expect",
        "expires",
        "from",
        "host",
        "if-match",
        "if-modified-since",
        "if-none-match",
        "if-range",
        "if-unmodified-since",
        "last-modified",
        "location",
        "max-forwards",
        "pragma",
        "proxy-authenticate",
        "proxy-authorization",
        "range",
        "referer",
        "retry-after",
        "server",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "user-agent",
        "vary",
        "via",
        "warning",
        "www-authenticate",
        "method",
        "get",
        "status",
        "200 OK",
        "version",
        "HTTP/1.1",
        "url",
        "public",
        "set-cookie",
        "keep-alive",
        "origin",
    ];
    const TAIL: &str = concat!(
        "100101201202205206300302303304305306307402405406407408409410411412413414415416417",
        "502504505",
        "203 Non-Authoritative Information",
        "204 No Content",
        "301 Moved Permanently",
        "400 Bad Request",
        "401 Unauthorized",
        "403 Forbidden",
        "404 Not Found",
        "500 Internal Server Error",
        "501 Not Implemented",
        "503 Service Unavailable",
        "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec",
        " 00:00:00",
        " Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT",
        "chunked,text/html,image/png,image/jpg,image/gif,application/xml,",
        "application/xhtml+xml,text/plain,text/javascript,",
        "publicprivatemax-age=gzip,deflate,sdch",
        "charset=utf-8charset=iso-8859-1,utf-,*,enq=0.",
    );
    let mut d = Vec::with_capacity(1423);
    for w in WORDS {
        d.put_u32(w.len() as u32);
        d.put_slice(w.as_bytes());
    }
    d.put_slice(TAIL.as_bytes());
    d
});

fn zlib_error(e: impl std::fmt::Display) -> HeaderError {
    HeaderError::Zlib(e.to_string())
}

/// The sending side's zlib stream.
pub(crate) struct Compressor(Compress);

impl Compressor {
    /// A new stream with the dictionary set, as every SPDY/3 session starts.
    pub(crate) fn new() -> Self {
        let mut z = Compress::new(Compression::best(), true);
        // Setting a dictionary on a fresh stream cannot fail; should it, the block still
        // decompresses, the peer then rejecting it for the missing dictionary.
        let _ = z.set_dictionary(&DICTIONARY);
        Compressor(z)
    }

    /// Compresses `headers` into one sync-flushed block.
    pub(crate) fn compress(&mut self, headers: &Headers) -> Result<Bytes, HeaderError> {
        let block = headers.to_block();
        let mut input: &[u8] = &block;
        let mut out = Vec::with_capacity(block.len() + 64);
        let mut chunk = [0u8; 1024];
        loop {
            let (in_before, out_before) = (self.0.total_in(), self.0.total_out());
            self.0
                .compress(input, &mut chunk, FlushCompress::Sync)
                .map_err(zlib_error)?;
            let used = (self.0.total_in() - in_before) as usize;
            let made = (self.0.total_out() - out_before) as usize;
            out.extend_from_slice(chunk.get(..made).ok_or(HeaderError::Malformed)?);
            input = input.get(used..).ok_or(HeaderError::Malformed)?;
            if input.is_empty() && made < chunk.len() {
                return Ok(Bytes::from(out));
            }
        }
    }
}

/// The receiving side's zlib stream.
pub(crate) struct Decompressor(Decompress);

impl Decompressor {
    /// A new stream; the dictionary is given when the peer's stream asks for it.
    pub(crate) fn new() -> Self {
        Decompressor(Decompress::new(true))
    }

    /// Decompresses and parses one block.
    pub(crate) fn decompress(&mut self, block: &[u8]) -> Result<Headers, HeaderError> {
        let mut input = block;
        let mut out = Vec::new();
        let mut chunk = [0u8; 1024];
        loop {
            let (in_before, out_before) = (self.0.total_in(), self.0.total_out());
            let status = match self.0.decompress(input, &mut chunk, FlushDecompress::Sync) {
                Ok(status) => Some(status),
                Err(e) if e.needs_dictionary().is_some() => {
                    self.0.set_dictionary(&DICTIONARY).map_err(zlib_error)?;
                    None
                }
                Err(e) => return Err(zlib_error(e)),
            };
            let used = (self.0.total_in() - in_before) as usize;
            let made = (self.0.total_out() - out_before) as usize;
            out.extend_from_slice(chunk.get(..made).ok_or(HeaderError::Malformed)?);
            if out.len() > MAX_BLOCK {
                return Err(HeaderError::TooLarge);
            }
            input = input.get(used..).ok_or(HeaderError::Malformed)?;
            match status {
                // The dictionary was just set: go on with the rest of the input.
                None => {}
                Some(Status::StreamEnd) => break,
                Some(_) if input.is_empty() && made < chunk.len() => break,
                // No progress with input left: the stream is stuck (truncated or corrupt).
                Some(_) if used == 0 && made == 0 => {
                    return Err(HeaderError::Zlib("truncated header block".into()));
                }
                Some(_) => {}
            }
        }
        Headers::from_block(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port_forward_headers(request: &str, kind: &str) -> Headers {
        let mut h = Headers::default();
        h.add("streamType", kind);
        h.add("port", "80");
        h.add("requestID", request);
        h
    }

    #[test]
    fn dictionary_is_spdy3s() {
        assert_eq!(DICTIONARY.len(), 1423);
        // A zlib stream names its preset dictionary by Adler-32 (RFC 1950): SPDY/3's is
        // 0xe3c6a7c2, which peers check before decompressing.
        let block = Compressor::new().compress(&Headers::default()).unwrap();
        assert_eq!(block[0] & 0x0f, 8, "deflate");
        assert_ne!(block[1] & 0x20, 0, "FDICT set");
        assert_eq!(&block[2..6], &0xe3c6_a7c2_u32.to_be_bytes());
    }

    #[test]
    fn blocks_round_trip_through_one_stream_per_direction() {
        let mut c = Compressor::new();
        let mut d = Decompressor::new();
        for i in 0..50 {
            let mut h = port_forward_headers(&i.to_string(), "data");
            h.add("multi", "a");
            h.add("multi", "b");
            let block = c.compress(&h).unwrap();
            // sync-flushed: every block ends on the empty stored block
            assert!(block.ends_with(&[0, 0, 0xff, 0xff]));
            let back = d.decompress(&block).unwrap();
            assert_eq!(back, h);
            assert_eq!(back.get("STREAMTYPE"), Some("data"));
            assert_eq!(back.get("requestid"), Some(i.to_string().as_str()));
        }
        // later blocks reuse the window: the same headers cost far less than the first time
        let first = Compressor::new()
            .compress(&port_forward_headers("0", "error"))
            .unwrap();
        let again = c.compress(&port_forward_headers("0", "error")).unwrap();
        assert!(
            again.len() < first.len(),
            "{} < {}",
            again.len(),
            first.len()
        );
    }

    #[test]
    fn a_standard_zlib_reader_with_the_dictionary_reads_our_blocks() {
        let h = port_forward_headers("7", "error");
        let block = Compressor::new().compress(&h).unwrap();
        let mut z = Decompress::new(true);
        let mut out = vec![0u8; 512];
        let err = z
            .decompress(&block, &mut out, FlushDecompress::Sync)
            .unwrap_err();
        assert_eq!(err.needs_dictionary(), Some(0xe3c6_a7c2));
        z.set_dictionary(&DICTIONARY).unwrap();
        let used = z.total_in() as usize;
        z.decompress(&block[used..], &mut out, FlushDecompress::Sync)
            .unwrap();
        let n = z.total_out() as usize;
        assert_eq!(Headers::from_block(&out[..n]).unwrap(), h);
    }

    #[test]
    fn malformed_blocks_are_refused() {
        let mut d = Decompressor::new();
        assert!(matches!(
            d.decompress(b"not zlib at all"),
            Err(HeaderError::Zlib(_))
        ));
        // a zlib stream with another dictionary
        let mut other = Compress::new(Compression::best(), true);
        other.set_dictionary(b"another dictionary").unwrap();
        let mut out = vec![0u8; 256];
        other
            .compress(b"\0\0\0\0", &mut out, FlushCompress::Sync)
            .unwrap();
        let n = other.total_out() as usize;
        assert!(Decompressor::new().decompress(&out[..n]).is_err());
        // truncated
        let block = Compressor::new()
            .compress(&port_forward_headers("1", "data"))
            .unwrap();
        assert!(Decompressor::new().decompress(&block[..8]).is_err());
        // a bomb: a small block that inflates past the limit
        let mut h = Headers::default();
        h.add("x", &"a".repeat(MAX_BLOCK));
        let bomb = Compressor::new().compress(&h).unwrap();
        assert!(bomb.len() < 1024);
        assert_eq!(
            Decompressor::new().decompress(&bomb),
            Err(HeaderError::TooLarge)
        );
        // name/value blocks that lie about their lengths
        assert_eq!(
            Headers::from_block(b"\xff\xff\xff\xff"),
            Err(HeaderError::Malformed)
        );
        assert_eq!(
            Headers::from_block(b"\0\0\0\x01\0\0\0\x09ab\0\0\0\0"),
            Err(HeaderError::Malformed)
        );
        assert_eq!(
            Headers::from_block(b"\0\0\0\x01\0\0\0\x00\0\0\0\0"),
            Err(HeaderError::Malformed)
        );
        assert_eq!(Headers::from_block(b""), Err(HeaderError::Malformed));
        assert_eq!(
            Headers::from_block(b"\0\0\0\0extra"),
            Err(HeaderError::Malformed)
        );
    }
}
