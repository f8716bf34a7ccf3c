//! SPDY/3.1 frames on the wire: the eight control frames and the DATA frame, read from and
//! written to bytes (section 2.2 of the SPDY/3.1 draft, as moby/spdystream's framer reads and
//! writes them for client-go and the kubelet).
//!
//! Header blocks stay compressed here: this module only frames them; `headers` compresses
//! and decompresses them with the session's zlib state. Reading never panics and never
//! trusts a length: a frame is taken only once all of it is buffered, and a frame longer
//! than the caller's limit is refused before it is buffered.

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// The protocol version every control frame carries.
pub(crate) const VERSION: u16 = 3;
/// `FLAG_FIN` of DATA, SYN_STREAM, SYN_REPLY and HEADERS: the sender sends no more.
pub(crate) const FLAG_FIN: u8 = 0x01;
/// The largest payload a frame's 24-bit length can carry.
pub(crate) const MAX_PAYLOAD: usize = (1 << 24) - 1;

/// RST_STREAM status: the stream is refused (too many streams, or its headers are invalid).
pub(crate) const RST_REFUSED_STREAM: u32 = 3;
/// RST_STREAM status: the stream is no longer needed (spdystream's `Reset` sends it).
pub(crate) const RST_CANCEL: u32 = 5;
/// GOAWAY status: the peer broke the protocol.
pub(crate) const GOAWAY_PROTOCOL_ERROR: u32 = 1;

const TYPE_SYN_STREAM: u16 = 1;
const TYPE_SYN_REPLY: u16 = 2;
const TYPE_RST_STREAM: u16 = 3;
const TYPE_SETTINGS: u16 = 4;
const TYPE_PING: u16 = 6;
const TYPE_GOAWAY: u16 = 7;
const TYPE_HEADERS: u16 = 8;
const TYPE_WINDOW_UPDATE: u16 = 9;

/// One SETTINGS entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Setting {
    /// The entry's flags (persist value, persisted).
    pub flags: u8,
    /// The setting's 24-bit id.
    pub id: u32,
    /// Its value.
    pub value: u32,
}

/// A SPDY/3.1 frame. Stream ids are 31-bit; header blocks are compressed bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// Opens a stream (sent by the client for each port-forward stream).
    SynStream {
        stream: u32,
        associated: u32,
        /// 3-bit priority.
        priority: u8,
        slot: u8,
        flags: u8,
        headers: Bytes,
    },
    /// Accepts a stream.
    SynReply {
        stream: u32,
        flags: u8,
        headers: Bytes,
    },
    /// Aborts a stream.
    RstStream { stream: u32, status: u32 },
    /// Session settings.
    Settings { flags: u8, entries: Vec<Setting> },
    /// A ping; the receiver echoes the peer's.
    Ping { id: u32 },
    /// The sender opens no more streams and accepts none above `last_good`.
    GoAway { last_good: u32, status: u32 },
    /// More headers for a stream.
    Headers {
        stream: u32,
        flags: u8,
        headers: Bytes,
    },
    /// Flow-control credit.
    WindowUpdate { stream: u32, delta: u32 },
    /// A control frame of a type SPDY/3.1 does not define: the receiver ignores it.
    Unknown { kind: u16 },
    /// Stream payload.
    Data { stream: u32, flags: u8, data: Bytes },
}

/// Why bytes are not a valid frame.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum FrameError {
    /// A control frame of another SPDY version.
    #[error("unsupported SPDY version {0}")]
    Version(u16),
    /// A frame longer than the reader accepts (or than 24 bits can say, when writing).
    #[error("frame of {0} bytes is too large")]
    TooLarge(usize),
    /// A frame whose length or fields do not fit its type.
    #[error("invalid {0} frame")]
    Invalid(&'static str),
    /// A stream frame for stream 0.
    #[error("stream id zero is disallowed")]
    ZeroStream,
}

/// Takes the next whole frame off the front of `buf`: `Ok(None)` until all of it is there.
/// A frame whose payload is longer than `max_payload` is an error at once.
pub(crate) fn decode(buf: &mut BytesMut, max_payload: usize) -> Result<Option<Frame>, FrameError> {
    let Some(head) = buf.get(..8) else {
        return Ok(None);
    };
    let word = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    let flags = head[4];
    let len = usize::from(head[5]) << 16 | usize::from(head[6]) << 8 | usize::from(head[7]);
    if len > max_payload {
        return Err(FrameError::TooLarge(len));
    }
    if buf.len() < 8 + len {
        buf.reserve(8 + len - buf.len());
        return Ok(None);
    }
    let mut frame = buf.split_to(8 + len).freeze();
    frame.advance(8);
    if word & 0x8000_0000 == 0 {
        let stream = word & 0x7fff_ffff;
        if stream == 0 {
            return Err(FrameError::ZeroStream);
        }
        return Ok(Some(Frame::Data {
            stream,
            flags,
            data: frame,
        }));
    }
    let version = ((word >> 16) & 0x7fff) as u16;
    if version != VERSION {
        return Err(FrameError::Version(version));
    }
    control((word & 0xffff) as u16, flags, frame).map(Some)
}

/// The 31-bit stream id at the front of `b`, refusing stream 0.
fn stream_id(b: &mut Bytes) -> Result<u32, FrameError> {
    match b.get_u32() & 0x7fff_ffff {
        0 => Err(FrameError::ZeroStream),
        id => Ok(id),
    }
}

fn control(kind: u16, flags: u8, mut b: Bytes) -> Result<Frame, FrameError> {
    let exact = |b: &Bytes, n: usize, name| {
        if b.len() == n {
            Ok(())
        } else {
            Err(FrameError::Invalid(name))
        }
    };
    Ok(match kind {
        TYPE_SYN_STREAM => {
            if b.len() < 10 {
                return Err(FrameError::Invalid("SYN_STREAM"));
            }
            let stream = stream_id(&mut b)?;
            let associated = b.get_u32() & 0x7fff_ffff;
            let priority = b.get_u8() >> 5;
            let slot = b.get_u8();
            Frame::SynStream {
                stream,
                associated,
                priority,
                slot,
                flags,
                headers: b,
            }
        }
        TYPE_SYN_REPLY | TYPE_HEADERS => {
            if b.len() < 4 {
                return Err(FrameError::Invalid("SYN_REPLY/HEADERS"));
            }
            let stream = stream_id(&mut b)?;
            if kind == TYPE_SYN_REPLY {
                Frame::SynReply {
                    stream,
                    flags,
                    headers: b,
                }
            } else {
                Frame::Headers {
                    stream,
                    flags,
                    headers: b,
                }
            }
        }
        TYPE_RST_STREAM => {
            exact(&b, 8, "RST_STREAM")?;
            let stream = stream_id(&mut b)?;
            let status = b.get_u32();
            if status == 0 {
                return Err(FrameError::Invalid("RST_STREAM"));
            }
            Frame::RstStream { stream, status }
        }
        TYPE_SETTINGS => {
            if b.len() < 4 {
                return Err(FrameError::Invalid("SETTINGS"));
            }
            let count = b.get_u32() as usize;
            if count.checked_mul(8) != Some(b.len()) {
                return Err(FrameError::Invalid("SETTINGS"));
            }
            let entries = (0..count)
                .map(|_| {
                    let word = b.get_u32();
                    Setting {
                        flags: (word >> 24) as u8,
                        id: word & 0x00ff_ffff,
                        value: b.get_u32(),
                    }
                })
                .collect();
            Frame::Settings { flags, entries }
        }
        TYPE_PING => {
            exact(&b, 4, "PING")?;
            Frame::Ping { id: b.get_u32() }
        }
        TYPE_GOAWAY => {
            exact(&b, 8, "GOAWAY")?;
            Frame::GoAway {
                last_good: b.get_u32() & 0x7fff_ffff,
                status: b.get_u32(),
            }
        }
        TYPE_WINDOW_UPDATE => {
            exact(&b, 8, "WINDOW_UPDATE")?;
            Frame::WindowUpdate {
                stream: b.get_u32() & 0x7fff_ffff,
                delta: b.get_u32() & 0x7fff_ffff,
            }
        }
        kind => Frame::Unknown { kind },
    })
}

/// Appends `frame` to `out`; a payload longer than 24 bits can say is refused.
pub(crate) fn encode(frame: &Frame, out: &mut BytesMut) -> Result<(), FrameError> {
    let control = |out: &mut BytesMut, kind: u16, flags: u8, len: usize| {
        if len > MAX_PAYLOAD {
            return Err(FrameError::TooLarge(len));
        }
        out.reserve(8 + len);
        out.put_u16(0x8000 | VERSION);
        out.put_u16(kind);
        out.put_u32(u32::from(flags) << 24 | len as u32);
        Ok(())
    };
    match frame {
        Frame::SynStream {
            stream,
            associated,
            priority,
            slot,
            flags,
            headers,
        } => {
            control(out, TYPE_SYN_STREAM, *flags, 10 + headers.len())?;
            out.put_u32(stream & 0x7fff_ffff);
            out.put_u32(associated & 0x7fff_ffff);
            out.put_u8((priority & 0x07) << 5);
            out.put_u8(*slot);
            out.put_slice(headers);
        }
        Frame::SynReply {
            stream,
            flags,
            headers,
        } => {
            control(out, TYPE_SYN_REPLY, *flags, 4 + headers.len())?;
            out.put_u32(stream & 0x7fff_ffff);
            out.put_slice(headers);
        }
        Frame::Headers {
            stream,
            flags,
            headers,
        } => {
            control(out, TYPE_HEADERS, *flags, 4 + headers.len())?;
            out.put_u32(stream & 0x7fff_ffff);
            out.put_slice(headers);
        }
        Frame::RstStream { stream, status } => {
            control(out, TYPE_RST_STREAM, 0, 8)?;
            out.put_u32(stream & 0x7fff_ffff);
            out.put_u32(*status);
        }
        Frame::Settings { flags, entries } => {
            control(out, TYPE_SETTINGS, *flags, 4 + 8 * entries.len())?;
            out.put_u32(entries.len() as u32);
            for e in entries {
                out.put_u32(u32::from(e.flags) << 24 | (e.id & 0x00ff_ffff));
                out.put_u32(e.value);
            }
        }
        Frame::Ping { id } => {
            control(out, TYPE_PING, 0, 4)?;
            out.put_u32(*id);
        }
        Frame::GoAway { last_good, status } => {
            control(out, TYPE_GOAWAY, 0, 8)?;
            out.put_u32(last_good & 0x7fff_ffff);
            out.put_u32(*status);
        }
        Frame::WindowUpdate { stream, delta } => {
            control(out, TYPE_WINDOW_UPDATE, 0, 8)?;
            out.put_u32(stream & 0x7fff_ffff);
            out.put_u32(delta & 0x7fff_ffff);
        }
        Frame::Unknown { kind } => control(out, *kind, 0, 0)?,
        Frame::Data {
            stream,
            flags,
            data,
        } => {
            if data.len() > MAX_PAYLOAD {
                return Err(FrameError::TooLarge(data.len()));
            }
            out.reserve(8 + data.len());
            out.put_u32(stream & 0x7fff_ffff);
            out.put_u32(u32::from(*flags) << 24 | data.len() as u32);
            out.put_slice(data);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(frame: Frame) {
        let mut buf = BytesMut::new();
        encode(&frame, &mut buf).unwrap();
        let wire = buf.clone();
        // Fed one byte at a time, the frame comes out whole once its last byte arrives.
        let mut partial = BytesMut::new();
        for (i, byte) in wire.iter().enumerate() {
            partial.put_u8(*byte);
            let got = decode(&mut partial, MAX_PAYLOAD).unwrap();
            if i + 1 < wire.len() {
                assert_eq!(got, None, "{frame:?} taken after {} bytes", i + 1);
            } else {
                assert_eq!(got.as_ref(), Some(&frame));
            }
        }
        assert!(partial.is_empty());
    }

    #[test]
    fn every_frame_round_trips() {
        let block = Bytes::from_static(b"\x78\xbb compressed");
        for frame in [
            Frame::SynStream {
                stream: 1,
                associated: 0,
                priority: 7,
                slot: 0,
                flags: FLAG_FIN,
                headers: block.clone(),
            },
            Frame::SynReply {
                stream: 3,
                flags: 0,
                headers: block.clone(),
            },
            Frame::Headers {
                stream: 0x7fff_ffff,
                flags: FLAG_FIN,
                headers: block,
            },
            Frame::RstStream {
                stream: 5,
                status: RST_CANCEL,
            },
            Frame::Settings {
                flags: 1,
                entries: vec![
                    Setting {
                        flags: 1,
                        id: 7,
                        value: 65536,
                    },
                    Setting {
                        flags: 0,
                        id: 4,
                        value: 100,
                    },
                ],
            },
            Frame::Ping { id: 1 },
            Frame::GoAway {
                last_good: 9,
                status: GOAWAY_PROTOCOL_ERROR,
            },
            Frame::WindowUpdate {
                stream: 1,
                delta: 4096,
            },
            Frame::Data {
                stream: 1,
                flags: 0,
                data: Bytes::from_static(b"hello\0world"),
            },
            Frame::Data {
                stream: 1,
                flags: FLAG_FIN,
                data: Bytes::new(),
            },
        ] {
            round_trip(frame);
        }
    }

    #[test]
    fn wire_layout_is_spdy3() {
        let mut buf = BytesMut::new();
        encode(&Frame::Ping { id: 7 }, &mut buf).unwrap();
        assert_eq!(
            &buf[..],
            b"\x80\x03\x00\x06\x00\x00\x00\x04\x00\x00\x00\x07"
        );
        buf.clear();
        encode(
            &Frame::Data {
                stream: 3,
                flags: FLAG_FIN,
                data: Bytes::from_static(b"ab"),
            },
            &mut buf,
        )
        .unwrap();
        assert_eq!(&buf[..], b"\x00\x00\x00\x03\x01\x00\x00\x02ab");
    }

    #[test]
    fn several_frames_in_one_buffer() {
        let mut buf = BytesMut::new();
        encode(&Frame::Ping { id: 1 }, &mut buf).unwrap();
        encode(
            &Frame::RstStream {
                stream: 1,
                status: RST_CANCEL,
            },
            &mut buf,
        )
        .unwrap();
        assert_eq!(decode(&mut buf, 64).unwrap(), Some(Frame::Ping { id: 1 }));
        assert!(matches!(
            decode(&mut buf, 64).unwrap(),
            Some(Frame::RstStream { stream: 1, .. })
        ));
        assert_eq!(decode(&mut buf, 64).unwrap(), None);
    }

    fn decode_bytes(b: &[u8]) -> Result<Option<Frame>, FrameError> {
        decode(&mut BytesMut::from(b), 1024)
    }

    #[test]
    fn malformed_frames_are_refused() {
        // another version
        assert_eq!(
            decode_bytes(b"\x80\x02\x00\x06\x00\x00\x00\x04\x00\x00\x00\x01"),
            Err(FrameError::Version(2))
        );
        // PING of the wrong length
        assert_eq!(
            decode_bytes(b"\x80\x03\x00\x06\x00\x00\x00\x02\x00\x01"),
            Err(FrameError::Invalid("PING"))
        );
        // SYN_STREAM shorter than its fixed fields
        assert_eq!(
            decode_bytes(b"\x80\x03\x00\x01\x00\x00\x00\x04\x00\x00\x00\x01"),
            Err(FrameError::Invalid("SYN_STREAM"))
        );
        // SYN_STREAM and DATA for stream 0
        assert_eq!(
            decode_bytes(
                b"\x80\x03\x00\x01\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
            ),
            Err(FrameError::ZeroStream)
        );
        assert_eq!(
            decode_bytes(b"\x00\x00\x00\x00\x00\x00\x00\x00"),
            Err(FrameError::ZeroStream)
        );
        // RST_STREAM with status 0
        assert_eq!(
            decode_bytes(b"\x80\x03\x00\x03\x00\x00\x00\x08\x00\x00\x00\x01\x00\x00\x00\x00"),
            Err(FrameError::Invalid("RST_STREAM"))
        );
        // SETTINGS whose count does not match its length (a huge count allocates nothing)
        assert_eq!(
            decode_bytes(
                b"\x80\x03\x00\x04\x00\x00\x00\x0c\xff\xff\xff\xff\x00\x00\x00\x01\x00\x00\x00\x02"
            ),
            Err(FrameError::Invalid("SETTINGS"))
        );
        // longer than the reader's limit: refused from its 8-byte head alone
        assert_eq!(
            decode_bytes(b"\x00\x00\x00\x01\x00\xff\xff\xff"),
            Err(FrameError::TooLarge(MAX_PAYLOAD))
        );
        // an unknown control type is ignored, not an error
        assert_eq!(
            decode_bytes(b"\x80\x03\x00\x0a\x00\x00\x00\x00"),
            Ok(Some(Frame::Unknown { kind: 10 }))
        );
        // writing a payload longer than 24 bits is refused
        let big = Frame::Data {
            stream: 1,
            flags: 0,
            data: Bytes::from(vec![0; MAX_PAYLOAD + 1]),
        };
        assert_eq!(
            encode(&big, &mut BytesMut::new()),
            Err(FrameError::TooLarge(MAX_PAYLOAD + 1))
        );
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..20_000 {
            let len = (seed % 40) as usize;
            let mut b = BytesMut::new();
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                b.put_u8(seed as u8);
            }
            // bias towards control frames of version 3 with small lengths
            if b.len() >= 8 && seed.is_multiple_of(2) {
                b[0] = 0x80;
                b[1] = 0x03;
                b[5] = 0;
                b[6] = 0;
                b[7] %= 32;
            }
            while let Ok(Some(_)) = decode(&mut b, 64) {}
        }
    }
}
