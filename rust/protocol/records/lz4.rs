//! Kafka's LZ4 framing: the LZ4 frame format (magic 0x184D2204) as Kafka's
//! `Lz4BlockOutputStream` writes it and `Lz4BlockInputStream` reads it, over lz4_flex's blocks.
//!
//! Written: FLG 0x60 (version 1, independent blocks), BD 0x40 (64 KiB blocks), no checksums
//! beyond the header's, blocks stored raw when compression does not shrink them, an end mark.
//! Read: independent blocks only (Kafka rejects linked blocks), optional content size (skipped),
//! block checksums verified, content checksum verified (Kafka skips it), no dictionary id.
//! Magic 0 batches carry the header checksum Kafka computed before KAFKA-3160 (over the magic
//! number too), so for them, as in Kafka, the header checksum is not checked.

const MAGIC: u32 = 0x184D_2204;
const FLG_VERSION_1: u8 = 0x40;
const FLG_BLOCK_INDEPENDENT: u8 = 0x20;
const FLG_BLOCK_CHECKSUM: u8 = 0x10;
const FLG_CONTENT_SIZE: u8 = 0x08;
const FLG_CONTENT_CHECKSUM: u8 = 0x04;
const BD_64KB: u8 = 4 << 4;
const UNCOMPRESSED_BIT: u32 = 0x8000_0000;
const BLOCK_64KB: usize = 64 * 1024;

thread_local! {
    // Blocks decompress into this zeroed buffer, kept per thread (as large as the largest block
    // seen, at most 4 MiB), and are copied out: fresh output buffers would be zeroed and faulted
    // in for every block.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// FrameError says why a frame did not decompress.
#[derive(Debug)]
pub enum FrameError {
    /// The output would pass the allowed size.
    TooLarge,
    /// The bytes are not a valid Kafka LZ4 frame.
    Corrupt(String),
}

fn corrupt(m: impl Into<String>) -> FrameError {
    FrameError::Corrupt(m.into())
}

/// xxh32 is xxHash32 (seed `seed`), the checksum of LZ4 frames.
pub fn xxh32(data: &[u8], seed: u32) -> u32 {
    const P1: u32 = 2_654_435_761;
    const P2: u32 = 2_246_822_519;
    const P3: u32 = 3_266_489_917;
    const P4: u32 = 668_265_263;
    const P5: u32 = 374_761_393;
    fn le(b: &[u8]) -> u32 {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    fn round(acc: u32, input: u32) -> u32 {
        acc.wrapping_add(input.wrapping_mul(P2))
            .rotate_left(13)
            .wrapping_mul(P1)
    }
    let mut rest = data;
    let mut h = if data.len() >= 16 {
        let mut v = [
            seed.wrapping_add(P1).wrapping_add(P2),
            seed.wrapping_add(P2),
            seed,
            seed.wrapping_sub(P1),
        ];
        let mut stripes = data.chunks_exact(16);
        for s in &mut stripes {
            for (i, acc) in v.iter_mut().enumerate() {
                *acc = round(*acc, le(&s[i * 4..]));
            }
        }
        rest = stripes.remainder();
        v[0].rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18))
    } else {
        seed.wrapping_add(P5)
    };
    h = h.wrapping_add(data.len() as u32);
    let mut words = rest.chunks_exact(4);
    for w in &mut words {
        h = h
            .wrapping_add(le(w).wrapping_mul(P3))
            .rotate_left(17)
            .wrapping_mul(P4);
    }
    for &b in words.remainder() {
        h = h
            .wrapping_add((b as u32).wrapping_mul(P5))
            .rotate_left(11)
            .wrapping_mul(P1);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(P2);
    h ^= h >> 13;
    h = h.wrapping_mul(P3);
    h ^ (h >> 16)
}

fn header_checksum(descriptor: &[u8]) -> u8 {
    (xxh32(descriptor, 0) >> 8) as u8
}

/// compress_frame appends `data` as one Kafka LZ4 frame to `out`. `broken_checksum` writes the
/// pre-KAFKA-3160 header checksum that magic 0 batches carry.
pub fn compress_frame(data: &[u8], broken_checksum: bool, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.push(FLG_VERSION_1 | FLG_BLOCK_INDEPENDENT);
    out.push(BD_64KB);
    let hc = if broken_checksum {
        header_checksum(&out[start..])
    } else {
        header_checksum(&out[start + 4..])
    };
    out.push(hc);
    for chunk in data.chunks(BLOCK_64KB) {
        let size_at = out.len();
        out.extend_from_slice(&[0; 4]);
        let body = out.len();
        out.resize(
            body + lz4_flex::block::get_maximum_output_size(chunk.len()),
            0,
        );
        let n = lz4_flex::block::compress_into(chunk, &mut out[body..]).unwrap_or(usize::MAX);
        let size = if n >= chunk.len() {
            // Incompressible: stored raw, as Kafka does.
            out.truncate(body);
            out.extend_from_slice(chunk);
            chunk.len() as u32 | UNCOMPRESSED_BIT
        } else {
            out.truncate(body + n);
            n as u32
        };
        out[size_at..body].copy_from_slice(&size.to_le_bytes());
    }
    out.extend_from_slice(&0u32.to_le_bytes());
}

fn take<'a>(input: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8], FrameError> {
    if input.len() - *pos < n {
        return Err(corrupt("frame ended prematurely"));
    }
    let s = &input[*pos..*pos + n];
    *pos += n;
    Ok(s)
}

fn le32(input: &[u8], pos: &mut usize) -> Result<u32, FrameError> {
    let b = take(input, pos, 4)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// decompress_frame appends the content of the Kafka LZ4 frame at the start of `input` to `out`,
/// producing at most `limit` bytes. `skip_header_checksum` is for magic 0 batches.
pub fn decompress_frame(
    input: &[u8],
    skip_header_checksum: bool,
    limit: usize,
    out: &mut Vec<u8>,
) -> Result<(), FrameError> {
    let mut pos = 0;
    if le32(input, &mut pos)? != MAGIC {
        return Err(corrupt("not an LZ4 frame (bad magic)"));
    }
    let desc = pos;
    let d = take(input, &mut pos, 2)?;
    let (flg, bd) = (d[0], d[1]);
    if flg & 0x03 != 0 {
        return Err(corrupt("reserved FLG bits or a dictionary id are set"));
    }
    if flg & 0xc0 != FLG_VERSION_1 {
        return Err(corrupt(format!(
            "frame version {} is unsupported",
            flg >> 6
        )));
    }
    if flg & FLG_BLOCK_INDEPENDENT == 0 {
        return Err(corrupt("linked blocks are unsupported, as in Kafka"));
    }
    if bd & 0x8f != 0 {
        return Err(corrupt("reserved BD bits are set"));
    }
    let size_id = (bd >> 4) & 7;
    if !(4..=7).contains(&size_id) {
        return Err(corrupt(format!("block size id {size_id} is not 4..7")));
    }
    let max_block = 1usize << (2 * size_id as usize + 8);
    if flg & FLG_CONTENT_SIZE != 0 {
        take(input, &mut pos, 8)?;
    }
    let descriptor = &input[desc..pos];
    let hc = take(input, &mut pos, 1)?[0];
    if !skip_header_checksum && hc != header_checksum(descriptor) {
        return Err(corrupt("frame descriptor checksum mismatch"));
    }
    let start = out.len();
    loop {
        let word = le32(input, &mut pos)?;
        if word == 0 {
            break;
        }
        let raw = word & UNCOMPRESSED_BIT != 0;
        let size = (word & !UNCOMPRESSED_BIT) as usize;
        if size > max_block {
            return Err(corrupt(format!(
                "block size {size} exceeds the frame's maximum {max_block}"
            )));
        }
        let block = take(input, &mut pos, size)?;
        if flg & FLG_BLOCK_CHECKSUM != 0 && le32(input, &mut pos)? != xxh32(block, 0) {
            return Err(corrupt("block checksum mismatch"));
        }
        let room = limit - (out.len() - start);
        if raw {
            if size > room {
                return Err(FrameError::TooLarge);
            }
            out.extend_from_slice(block);
        } else {
            let cap = max_block.min(room);
            SCRATCH.with_borrow_mut(|scratch| {
                if scratch.len() < cap {
                    scratch.resize(cap, 0);
                }
                match lz4_flex::block::decompress_into(block, &mut scratch[..cap]) {
                    Ok(n) => {
                        out.extend_from_slice(&scratch[..n]);
                        Ok(())
                    }
                    Err(lz4_flex::block::DecompressError::OutputTooSmall { .. })
                        if cap < max_block =>
                    {
                        Err(FrameError::TooLarge)
                    }
                    Err(e) => Err(corrupt(format!("bad block: {e}"))),
                }
            })?;
        }
    }
    if flg & FLG_CONTENT_CHECKSUM != 0 && le32(input, &mut pos)? != xxh32(&out[start..], 0) {
        return Err(corrupt("content checksum mismatch"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values of xxHash32 (seed 0) from the xxHash project's sanity checks and the
    // python-xxhash documentation.
    #[test]
    fn xxh32_vectors() {
        assert_eq!(xxh32(b"", 0), 0x02CC_5D05);
        assert_eq!(xxh32(b"a", 0), 0x550D_7456);
        assert_eq!(xxh32(b"abc", 0), 0x32D1_53FF);
        assert_eq!(
            xxh32(b"Nobody inspects the spammish repetition", 0),
            0xE229_3B2F
        );
    }

    // Every frame Kafka's producer writes starts 04 22 4D 18 60 40 82.
    #[test]
    fn header_matches_kafka() {
        let mut out = Vec::new();
        compress_frame(b"", false, &mut out);
        assert_eq!(out, [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82, 0, 0, 0, 0]);
        let mut old = Vec::new();
        compress_frame(b"", true, &mut old);
        assert_ne!(old[6], 0x82);
        let mut back = Vec::new();
        assert!(decompress_frame(&old, false, 100, &mut back).is_err());
        assert!(decompress_frame(&old, true, 100, &mut back).is_ok());
    }

    #[test]
    fn round_trips_and_limits() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 97) as u8).collect();
        let mut f = Vec::new();
        compress_frame(&data, false, &mut f);
        let mut out = Vec::new();
        decompress_frame(&f, false, data.len(), &mut out).unwrap();
        assert_eq!(out, data);
        let mut out = Vec::new();
        assert!(matches!(
            decompress_frame(&f, false, data.len() - 1, &mut out),
            Err(FrameError::TooLarge)
        ));
        // Incompressible data is stored raw.
        let mut rng = crate::rng::Rng::new(Some(1));
        let noise: Vec<u8> = (0..1000).map(|_| rng.next_u64() as u8).collect();
        let mut f = Vec::new();
        compress_frame(&noise, false, &mut f);
        assert_eq!(
            u32::from_le_bytes([f[7], f[8], f[9], f[10]]),
            1000 | UNCOMPRESSED_BIT
        );
        let mut out = Vec::new();
        decompress_frame(&f, false, 1000, &mut out).unwrap();
        assert_eq!(out, noise);
    }
}
