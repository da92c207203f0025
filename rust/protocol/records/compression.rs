//! Compression: the codecs of Kafka's record batches (attribute bits 0-2), each written as Kafka's
//! Java client writes it and read as Kafka reads it, with a hard bound on decompressed output.
//!
//! - gzip: RFC 1952 members (several may follow each other, as Java's `GZIPInputStream` reads them).
//! - snappy: the xerial (snappy-java) block stream Kafka writes, or one raw snappy block, which
//!   librdkafka writes and Kafka reads through snappy-java's fallback.
//! - lz4: Kafka's LZ4 frame ([`super::lz4`]), with the broken header checksum of magic 0 accepted.
//! - zstd: zstd frames (several may follow each other).
//!
//! Decompression draws from a byte budget shared by everything one decode call decompresses, so a
//! small input can never make it allocate more than the caller allowed (decompression bombs).

use std::io::Read;

use super::lz4;
use crate::errors::{Corruption, Error, Result};

/// Compression is a record batch codec, with Kafka's ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    #[default]
    None = 0,
    Gzip = 1,
    Snappy = 2,
    Lz4 = 3,
    Zstd = 4,
}

/// COMPRESSION_NAMES are Kafka's `compression.type` names, in id order.
pub const COMPRESSION_NAMES: [&str; 5] = ["none", "gzip", "snappy", "lz4", "zstd"];

impl Compression {
    /// from_id reads the codec of attribute bits 0-2; ids 5-7 are not codecs.
    pub fn from_id(id: u8) -> Result<Self> {
        Ok(match id {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            _ => {
                return Err(Error::corrupt(
                    Corruption::Compression,
                    format!("unknown compression codec id {id}"),
                ))
            }
        })
    }

    /// from_name reads a `compression.type` name ("none", "gzip", "snappy", "lz4", "zstd").
    pub fn from_name(name: &str) -> Result<Self> {
        match COMPRESSION_NAMES.iter().position(|n| *n == name) {
            Some(i) => Compression::from_id(i as u8),
            None => Err(Error::InvalidArgument(format!(
                "unknown compression {name:?}; expected one of {COMPRESSION_NAMES:?}"
            ))),
        }
    }

    /// id is the codec's id in the attributes.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// name is the codec's `compression.type` name.
    pub fn name(self) -> &'static str {
        COMPRESSION_NAMES[self as usize]
    }

    /// check_level says whether `level` is a level this codec accepts, with Kafka's ranges
    /// (KIP-390): gzip 1..=9, zstd -131072..=22, lz4 only its default 9 (Kafka's other lz4 levels
    /// select LZ4-HC, which kgroup does not implement), none and snappy have no levels.
    pub fn check_level(self, level: Option<i32>) -> Result<()> {
        let Some(level) = level else { return Ok(()) };
        let ok = match self {
            Compression::Gzip => (1..=9).contains(&level),
            Compression::Zstd => (-131_072..=22).contains(&level),
            Compression::Lz4 => level == 9,
            Compression::None | Compression::Snappy => false,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "{} does not take compression level {level}",
                self.name()
            )))
        }
    }
}

/// DEFAULT_MAX_DECOMPRESSED_SIZE is the default budget of one decode call: 256 MiB.
pub const DEFAULT_MAX_DECOMPRESSED_SIZE: usize = 256 << 20;

/// Budget is what decompression may still produce in one decode call.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    /// new allows `limit` decompressed bytes in total.
    pub fn new(limit: usize) -> Self {
        Budget { left: limit, limit }
    }

    /// left is how many bytes may still be produced.
    pub fn left(&self) -> usize {
        self.left
    }

    fn spend(&mut self, n: usize, what: &str) -> Result<()> {
        if n > self.left {
            return Err(self.exceeded(what));
        }
        self.left -= n;
        Ok(())
    }

    fn exceeded(&self, what: &str) -> Error {
        Error::corrupt(
            Corruption::Compression,
            format!(
                "{what} data decompresses to more than the {} bytes allowed (max_decompressed_size)",
                self.limit
            ),
        )
    }
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> Error {
    Error::corrupt(Corruption::Compression, format!("corrupt {what} data: {e}"))
}

/// read_bounded reads `r` to its end, failing once it yields more than the budget allows.
fn read_bounded(r: impl Read, budget: &mut Budget, what: &str) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    // One byte past the budget tells "too large" from "exactly the budget".
    let cap = (budget.left() as u64).saturating_add(1);
    r.take(cap)
        .read_to_end(&mut out)
        .map_err(|e| corrupt(what, e))?;
    budget.spend(out.len(), what)?;
    Ok(out)
}

/// decompress inflates the records of a batch compressed with `codec`. `magic` selects Kafka's
/// per-format quirks (magic 0 lz4 frames carry a wrong header checksum).
pub fn decompress(
    codec: Compression,
    magic: i8,
    input: &[u8],
    budget: &mut Budget,
) -> Result<Vec<u8>> {
    match codec {
        Compression::None => {
            budget.spend(input.len(), "uncompressed")?;
            Ok(input.to_vec())
        }
        Compression::Gzip => read_bounded(flate2::read::MultiGzDecoder::new(input), budget, "gzip"),
        Compression::Snappy => snappy_decompress(input, budget),
        Compression::Lz4 => {
            let mut out = Vec::new();
            let left = budget.left();
            match lz4::decompress_frame(input, magic == 0, left, &mut out) {
                Ok(()) => {}
                Err(lz4::FrameError::TooLarge) => return Err(budget.exceeded("lz4")),
                Err(lz4::FrameError::Corrupt(m)) => return Err(corrupt("lz4", m)),
            }
            budget.spend(out.len(), "lz4")?;
            Ok(out)
        }
        Compression::Zstd => zstd_decompress(input, budget),
    }
}

/// compress appends `data` compressed with `codec` at `level` (the codec's default if `None`;
/// see [`Compression::check_level`]) to `out`.
pub fn compress(
    codec: Compression,
    level: Option<i32>,
    magic: i8,
    data: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    codec.check_level(level)?;
    match codec {
        Compression::None => out.extend_from_slice(data),
        Compression::Gzip => {
            use std::io::Write;
            // Kafka's default gzip level is zlib's default, 6.
            let level = flate2::Compression::new(level.unwrap_or(6) as u32);
            let mut enc = flate2::write::GzEncoder::new(std::mem::take(out), level);
            enc.write_all(data)
                .map_err(|e| Error::InvalidArgument(format!("gzip: {e}")))?;
            *out = enc
                .finish()
                .map_err(|e| Error::InvalidArgument(format!("gzip: {e}")))?;
        }
        Compression::Snappy => snappy_compress(data, out),
        Compression::Lz4 => lz4::compress_frame(data, magic == 0, out),
        Compression::Zstd => {
            let level = level.unwrap_or(3);
            let c = zstd::bulk::compress(data, level)
                .map_err(|e| Error::InvalidArgument(format!("zstd: {e}")))?;
            out.extend_from_slice(&c);
        }
    }
    Ok(())
}

// snappy-java's stream header: a magic, then version 1 and compatible version 1 (big-endian).
const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const XERIAL_HEADER_LEN: usize = 16;
// SnappyOutputStream's default block size, which Kafka's producer uses.
const XERIAL_BLOCK: usize = 32 * 1024;

fn snappy_block(chunk: &[u8], budget: &mut Budget, out: &mut Vec<u8>) -> Result<()> {
    let n = snap::raw::decompress_len(chunk).map_err(|e| corrupt("snappy", e))?;
    budget.spend(n, "snappy")?;
    let start = out.len();
    out.resize(start + n, 0);
    let got = snap::raw::Decoder::new()
        .decompress(chunk, &mut out[start..])
        .map_err(|e| corrupt("snappy", e))?;
    if got != n {
        return Err(corrupt(
            "snappy",
            "block is shorter than its declared length",
        ));
    }
    Ok(())
}

fn snappy_decompress(input: &[u8], budget: &mut Budget) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    if input.len() < XERIAL_HEADER_LEN || input[..8] != XERIAL_MAGIC {
        // Not a snappy-java stream: one raw block, as snappy-java's fallback reads it.
        snappy_block(input, budget, &mut out)?;
        return Ok(out);
    }
    let mut pos = XERIAL_HEADER_LEN;
    while pos < input.len() {
        // snappy-java skips the header of a stream concatenated to this one.
        if input.len() - pos >= XERIAL_HEADER_LEN && input[pos..pos + 8] == XERIAL_MAGIC {
            pos += XERIAL_HEADER_LEN;
            continue;
        }
        let Some(len) = input.get(pos..pos + 4) else {
            return Err(corrupt("snappy", "truncated block length"));
        };
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        pos += 4;
        if len < 0 || len as usize > input.len() - pos {
            return Err(corrupt(
                "snappy",
                format!("block length {len} is past the end"),
            ));
        }
        snappy_block(&input[pos..pos + len as usize], budget, &mut out)?;
        pos += len as usize;
    }
    Ok(out)
}

fn snappy_compress(data: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&XERIAL_MAGIC);
    out.extend_from_slice(&1i32.to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    let mut enc = snap::raw::Encoder::new();
    for chunk in data.chunks(XERIAL_BLOCK) {
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        let start = out.len();
        out.resize(start + snap::raw::max_compress_len(chunk.len()), 0);
        // A chunk of at most 32 KiB always fits in max_compress_len bytes.
        let n = enc.compress(chunk, &mut out[start..]).unwrap_or(0);
        out.truncate(start + n);
        out[len_at..start].copy_from_slice(&(n as i32).to_be_bytes());
    }
}

thread_local! {
    // One decompression context per thread, reused: creating one per batch costs more than
    // decompressing a small batch.
    static ZSTD: std::cell::RefCell<Option<zstd::zstd_safe::DCtx<'static>>> =
        const { std::cell::RefCell::new(None) };
}

fn zstd_decompress(input: &[u8], budget: &mut Budget) -> Result<Vec<u8>> {
    use zstd::zstd_safe::{get_error_name, DCtx, DParameter, ResetDirective};
    // The window a frame may ask for bounds what the decoder allocates before it writes anything;
    // keep it within the budget (zstd's own default cap is 2^27), but never below 2^23 so frames
    // from Kafka's producers (windows of at most 2^23 at levels up to 19) always decode.
    let want = (budget.left().max(1) as u64)
        .checked_next_power_of_two()
        .map_or(64, u64::trailing_zeros);
    let window_log = want.clamp(23, 27);
    ZSTD.with_borrow_mut(|slot| {
        let ctx = slot.get_or_insert_with(DCtx::create);
        ctx.reset(ResetDirective::SessionOnly)
            .map_err(|c| corrupt("zstd", get_error_name(c)))?;
        ctx.set_parameter(DParameter::WindowLogMax(window_log))
            .map_err(|c| corrupt("zstd", get_error_name(c)))?;
        let mut out = Vec::new();
        // A frame that states its size (zstd's one-shot API writes it) is read into one buffer.
        if let Ok(Some(n)) = zstd::zstd_safe::get_frame_content_size(input) {
            out.reserve((n.min(budget.left() as u64) as usize).min(1 << 26));
        }
        let dec = zstd::stream::read::Decoder::with_context(input, ctx);
        let cap = (budget.left() as u64).saturating_add(1);
        dec.take(cap)
            .read_to_end(&mut out)
            .map_err(|e| corrupt("zstd", e))?;
        budget.spend(out.len(), "zstd")?;
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i % 251) as u8 ^ (i / 1000) as u8).collect()
    }

    #[test]
    fn every_codec_round_trips() {
        for codec in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            for magic in [0i8, 1, 2] {
                for n in [0usize, 1, 100, 70_000, 200_000] {
                    let data = sample(n);
                    let mut out = Vec::new();
                    compress(codec, None, magic, &data, &mut out).unwrap();
                    let mut budget = Budget::new(1 << 20);
                    let back = decompress(codec, magic, &out, &mut budget).unwrap();
                    assert_eq!(back, data, "{codec:?} magic {magic} n {n}");
                    assert_eq!(budget.left(), (1 << 20) - n);
                }
            }
        }
    }

    #[test]
    fn names_ids_and_levels() {
        for (i, name) in COMPRESSION_NAMES.iter().enumerate() {
            let c = Compression::from_name(name).unwrap();
            assert_eq!(c.id() as usize, i);
            assert_eq!(c.name(), *name);
        }
        assert!(Compression::from_name("brotli").is_err());
        assert!(Compression::from_id(5).is_err());
        assert!(Compression::Gzip.check_level(Some(9)).is_ok());
        assert!(Compression::Gzip.check_level(Some(0)).is_err());
        assert!(Compression::Zstd.check_level(Some(-5)).is_ok());
        assert!(Compression::Zstd.check_level(Some(23)).is_err());
        assert!(Compression::Lz4.check_level(Some(9)).is_ok());
        assert!(Compression::Lz4.check_level(Some(12)).is_err());
        assert!(Compression::Snappy.check_level(Some(1)).is_err());
    }

    #[test]
    fn bombs_stop_at_the_budget() {
        let zeros = vec![0u8; 4 << 20];
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let mut out = Vec::new();
            compress(codec, None, 2, &zeros, &mut out).unwrap();
            assert!(out.len() < zeros.len() / 20, "{codec:?} compresses zeros");
            let mut budget = Budget::new(1 << 20);
            let err = decompress(codec, 2, &out, &mut budget).unwrap_err();
            assert!(
                err.to_string().contains("max_decompressed_size"),
                "{codec:?}: {err}"
            );
            // Exactly the budget is allowed.
            let mut budget = Budget::new(4 << 20);
            assert_eq!(
                decompress(codec, 2, &out, &mut budget).unwrap().len(),
                4 << 20
            );
            // So is no limit at all.
            let mut budget = Budget::new(usize::MAX);
            assert_eq!(
                decompress(codec, 2, &out, &mut budget).unwrap().len(),
                4 << 20
            );
        }
    }

    #[test]
    fn snappy_reads_raw_blocks_and_concatenated_streams() {
        let data = sample(10_000);
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(
            decompress(Compression::Snappy, 2, &raw, &mut Budget::new(1 << 20)).unwrap(),
            data
        );
        let mut two = Vec::new();
        snappy_compress(&data[..5000], &mut two);
        snappy_compress(&data[5000..], &mut two);
        assert_eq!(
            decompress(Compression::Snappy, 2, &two, &mut Budget::new(1 << 20)).unwrap(),
            data
        );
    }

    #[test]
    fn corrupt_inputs_are_decode_errors() {
        let data = sample(50_000);
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let mut out = Vec::new();
            compress(codec, None, 2, &data, &mut out).unwrap();
            for cut in [1, 5, out.len() / 2, out.len() - 1] {
                let r = decompress(codec, 2, &out[..cut], &mut Budget::new(1 << 20));
                assert!(
                    matches!(r, Err(Error::CorruptRecord(_))),
                    "{codec:?} cut at {cut}: {r:?}"
                );
            }
            // Flipped bytes: an error, or (rarely, where no checksum covers them) other data.
            for at in [out.len() / 3, out.len() / 2] {
                let mut bad = out.clone();
                bad[at] ^= 0x55;
                match decompress(codec, 2, &bad, &mut Budget::new(1 << 20)) {
                    Err(Error::CorruptRecord(_)) => {}
                    Ok(v) => assert_ne!(v, data, "{codec:?} flip at {at}"),
                    Err(e) => panic!("{codec:?}: {e:?}"),
                }
            }
        }
    }
}
