//! Key columns: batches of keys laid out the way Arrow and numpy hold them, and the loop that
//! partitions a whole batch at once.
//!
//! Nothing here copies the keys: every variant borrows the caller's buffers. Buffers may come
//! from outside (an Arrow producer), so every offset is bounds-checked and a bad one is an
//! error, never a panic.

use crate::errors::{Error, Result};
use crate::partitioners::hash::{FastMod, KeyHash};

/// Bitmap is an Arrow validity bitmap (LSB first), starting `offset` bits into `bits`.
#[derive(Debug, Clone, Copy)]
pub struct Bitmap<'a> {
    pub bits: &'a [u8],
    pub offset: usize,
}

impl Bitmap<'_> {
    #[inline]
    fn is_valid(&self, i: usize) -> bool {
        let j = self.offset + i;
        self.bits[j >> 3] & (1 << (j & 7)) != 0
    }
}

/// KeyColumn is one contiguous batch of keys; `None` validity means no key is null.
#[derive(Debug, Clone)]
pub enum KeyColumn<'a> {
    /// Arrow `binary` / `utf8`: `offsets` has `len + 1` entries (already sliced to the array).
    Offsets32 {
        offsets: &'a [i32],
        data: &'a [u8],
        validity: Option<Bitmap<'a>>,
    },
    /// Arrow `large_binary` / `large_utf8`.
    Offsets64 {
        offsets: &'a [i64],
        data: &'a [u8],
        validity: Option<Bitmap<'a>>,
    },
    /// Arrow `binary_view` / `utf8_view`: 16-byte views, inline up to 12 bytes.
    Views {
        views: &'a [[u8; 16]],
        buffers: Vec<&'a [u8]>,
        validity: Option<Bitmap<'a>>,
    },
    /// numpy `S<width>`: fixed-width bytes, trailing NUL bytes are not part of the key.
    FixedBytes { data: &'a [u8], width: usize },
    /// numpy `U<width>`: fixed-width UCS-4 code points, trailing NULs stripped, encoded to
    /// UTF-8 the way Java's `String.getBytes(UTF_8)` does.
    FixedUcs4 { data: &'a [u32], width: usize },
}

impl KeyColumn<'_> {
    /// len is the number of keys in the column.
    pub fn len(&self) -> usize {
        match self {
            KeyColumn::Offsets32 { offsets, .. } => offsets.len().saturating_sub(1),
            KeyColumn::Offsets64 { offsets, .. } => offsets.len().saturating_sub(1),
            KeyColumn::Views { views, .. } => views.len(),
            KeyColumn::FixedBytes { data, width } => {
                if *width == 0 {
                    0
                } else {
                    data.len() / width
                }
            }
            KeyColumn::FixedUcs4 { data, width } => {
                if *width == 0 {
                    0
                } else {
                    data.len() / width
                }
            }
        }
    }

    /// is_empty is true when the column holds no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> KeyColumn<'a> {
    /// get is item `i` of an Arrow column (`None` for a null), every offset checked: a bad
    /// one is an error, never a panic. Fixed-width numpy columns are not items of bytes here.
    pub fn get(&self, i: usize) -> Result<Option<&'a [u8]>> {
        let validity = match self {
            KeyColumn::Offsets32 { validity, .. }
            | KeyColumn::Offsets64 { validity, .. }
            | KeyColumn::Views { validity, .. } => *validity,
            _ => {
                return Err(Error::InvalidType(
                    "a fixed-width column has no byte items".into(),
                ))
            }
        };
        if let Some(v) = validity {
            let j = v.offset + i;
            let byte = v.bits.get(j >> 3).ok_or_else(|| bad_offsets(i))?;
            if byte & (1 << (j & 7)) == 0 {
                return Ok(None);
            }
        }
        let range = |s: Option<usize>, e: Option<usize>, data: &'a [u8]| match (s, e) {
            (Some(s), Some(e)) if s <= e => data.get(s..e).ok_or_else(|| bad_offsets(i)),
            _ => Err(bad_offsets(i)),
        };
        Ok(Some(match self {
            KeyColumn::Offsets32 { offsets, data, .. } => {
                let s = offsets.get(i).and_then(|o| o.to_usize());
                let e = offsets.get(i + 1).and_then(|o| o.to_usize());
                range(s, e, data)?
            }
            KeyColumn::Offsets64 { offsets, data, .. } => {
                let s = offsets.get(i).and_then(|o| o.to_usize());
                let e = offsets.get(i + 1).and_then(|o| o.to_usize());
                range(s, e, data)?
            }
            KeyColumn::Views { views, buffers, .. } => {
                let v: &'a [u8; 16] = views.get(i).ok_or_else(|| bad_offsets(i))?;
                let len = i32::from_le_bytes([v[0], v[1], v[2], v[3]]).max(0) as usize;
                if len <= 12 {
                    &v[4..4 + len]
                } else {
                    let b = u32::from_le_bytes([v[8], v[9], v[10], v[11]]) as usize;
                    let o = u32::from_le_bytes([v[12], v[13], v[14], v[15]]) as usize;
                    let buf: &'a [u8] = buffers.get(b).ok_or_else(|| bad_offsets(i))?;
                    buf.get(o..o + len).ok_or_else(|| bad_offsets(i))?
                }
            }
            _ => unreachable!("checked above"),
        }))
    }
}

fn bad_offsets(i: usize) -> Error {
    Error::malformed(format!(
        "key column: offsets of key {i} are out of the data buffer"
    ))
}

/// NULL_PARTITION is what a null key gives: Kafka does not hash a null key.
pub const NULL_PARTITION: i32 = -1;

/// partition_column writes the partition of every key of `col` into `out` (same length):
/// `hash`'s partition for a key, [`NULL_PARTITION`] for a null. Deterministic; runs on the
/// calling thread only.
pub fn partition_column(
    col: &KeyColumn<'_>,
    hash: KeyHash,
    num_partitions: u32,
    out: &mut [i32],
) -> Result<()> {
    if out.len() != col.len() {
        return Err(Error::InvalidArgument(format!(
            "output has {} slots for {} keys",
            out.len(),
            col.len()
        )));
    }
    let validity = match col {
        KeyColumn::Offsets32 { validity, .. }
        | KeyColumn::Offsets64 { validity, .. }
        | KeyColumn::Views { validity, .. } => *validity,
        _ => None,
    };
    if let Some(v) = validity {
        if v.bits.len() * 8 < v.offset + out.len() {
            return Err(Error::malformed(
                "key column: validity bitmap is shorter than the column",
            ));
        }
    }
    // One monomorphised loop per hash keeps the per-key dispatch out of the hot path.
    let n = FastMod::new(num_partitions);
    match hash {
        KeyHash::Murmur2 => run(col, out, |k| KeyHash::Murmur2.partition_fast(k, n)),
        KeyHash::Crc32 => run(col, out, |k| KeyHash::Crc32.partition_fast(k, n)),
        KeyHash::Fnv1a => run(col, out, |k| KeyHash::Fnv1a.partition_fast(k, n)),
    }
}

#[inline(always)]
fn run<F: Fn(&[u8]) -> i32>(col: &KeyColumn<'_>, out: &mut [i32], f: F) -> Result<()> {
    match col {
        KeyColumn::Offsets32 {
            offsets,
            data,
            validity,
        } => {
            let offsets = check_offsets(offsets, data.len())?;
            by_offsets(offsets, data, *validity, out, &f);
        }
        KeyColumn::Offsets64 {
            offsets,
            data,
            validity,
        } => {
            let offsets = check_offsets(offsets, data.len())?;
            by_offsets(offsets, data, *validity, out, &f);
        }
        KeyColumn::Views {
            views,
            buffers,
            validity,
        } => {
            for (i, slot) in out.iter_mut().enumerate() {
                if let Some(v) = validity {
                    if !v.is_valid(i) {
                        *slot = NULL_PARTITION;
                        continue;
                    }
                }
                let view = &views[i];
                let len = i32::from_le_bytes([view[0], view[1], view[2], view[3]]);
                if len < 0 {
                    return Err(bad_offsets(i));
                }
                let len = len as usize;
                let key = if len <= 12 {
                    &view[4..4 + len]
                } else {
                    let buf = i32::from_le_bytes([view[8], view[9], view[10], view[11]]);
                    let off = i32::from_le_bytes([view[12], view[13], view[14], view[15]]);
                    if buf < 0 || off < 0 {
                        return Err(bad_offsets(i));
                    }
                    let b = buffers.get(buf as usize).ok_or_else(|| bad_offsets(i))?;
                    b.get(off as usize..off as usize + len)
                        .ok_or_else(|| bad_offsets(i))?
                };
                *slot = f(key);
            }
        }
        KeyColumn::FixedBytes { data, width } => {
            for (slot, chunk) in out.iter_mut().zip(data.chunks_exact(*width)) {
                let end = chunk.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                *slot = f(&chunk[..end]);
            }
        }
        KeyColumn::FixedUcs4 { data, width } => {
            let mut buf = Vec::with_capacity(*width * 4);
            for (slot, chunk) in out.iter_mut().zip(data.chunks_exact(*width)) {
                let end = chunk.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
                buf.clear();
                java_utf8_from_code_points(&chunk[..end], &mut buf);
                *slot = f(&buf);
            }
        }
    }
    Ok(())
}

/// raw_murmur2_loop is the benchmark baseline for the one-core limit: the plainest loop over
/// contiguous keys, `toPositive(murmur2(key)) % n` with a hardware division, no null handling.
/// Offsets must be valid (it panics otherwise); not for production use, and only built with the
/// `bench` feature.
#[cfg(feature = "bench")]
pub fn raw_murmur2_loop(offsets: &[i32], data: &[u8], num_partitions: i32, out: &mut [i32]) {
    for (i, slot) in out.iter_mut().enumerate() {
        let key = &data[offsets[i] as usize..offsets[i + 1] as usize];
        *slot = crate::partitioners::hash::to_positive(crate::partitioners::hash::murmur2(key))
            % num_partitions;
    }
}

/// Offset is an Arrow offset width (i32 or i64).
trait Offset: Copy {
    fn to_usize(self) -> Option<usize>;
}

impl Offset for i32 {
    #[inline(always)]
    fn to_usize(self) -> Option<usize> {
        usize::try_from(self).ok()
    }
}

impl Offset for i64 {
    #[inline(always)]
    fn to_usize(self) -> Option<usize> {
        usize::try_from(self).ok()
    }
}

/// check_offsets validates once that the offsets are non-negative, non-decreasing and end
/// inside the data, so that the hot loop can slice without checks.
fn check_offsets<O: Offset>(offsets: &[O], data_len: usize) -> Result<&[O]> {
    let mut prev = 0usize;
    for (i, o) in offsets.iter().enumerate() {
        let v = o
            .to_usize()
            .ok_or_else(|| bad_offsets(i.saturating_sub(1)))?;
        if (i > 0 && v < prev) || v > data_len {
            return Err(bad_offsets(i.saturating_sub(1)));
        }
        prev = v;
    }
    Ok(offsets)
}

#[inline(always)]
fn by_offsets<O: Offset, F: Fn(&[u8]) -> i32>(
    offsets: &[O],
    data: &[u8],
    validity: Option<Bitmap<'_>>,
    out: &mut [i32],
    f: &F,
) {
    let key = |i: usize| {
        // SAFETY: check_offsets proved every offset is in 0..=data.len() and non-decreasing.
        unsafe {
            let s = offsets.get_unchecked(i).to_usize().unwrap_unchecked();
            let e = offsets.get_unchecked(i + 1).to_usize().unwrap_unchecked();
            data.get_unchecked(s..e)
        }
    };
    match validity {
        None => {
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = f(key(i));
            }
        }
        Some(v) => {
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = if v.is_valid(i) {
                    f(key(i))
                } else {
                    NULL_PARTITION
                };
            }
        }
    }
}

fn push_utf8(c: u32, out: &mut Vec<u8>) {
    match char::from_u32(c) {
        Some(ch) => {
            let mut tmp = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
        }
        None => out.push(b'?'),
    }
}

/// java_utf8_from_utf16 encodes UTF-16 code units to UTF-8 as Java's `String.getBytes(UTF_8)`
/// (and so Kafka's StringSerializer) does: a surrogate pair becomes one 4-byte sequence and an
/// unpaired surrogate becomes `?`.
pub fn java_utf8_from_utf16(units: &[u16], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < units.len() {
        let u = units[i] as u32;
        if (0xD800..0xDC00).contains(&u) && i + 1 < units.len() {
            let lo = units[i + 1] as u32;
            if (0xDC00..0xE000).contains(&lo) {
                push_utf8(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00), out);
                i += 2;
                continue;
            }
        }
        push_utf8(u, out);
        i += 1;
    }
}

/// java_utf8_from_code_points encodes code points (numpy's UCS-4) to UTF-8 as Java would encode
/// the same characters: surrogate code points pair up as UTF-16 units would, unpaired ones and
/// values past U+10FFFF become `?`.
pub fn java_utf8_from_code_points(cps: &[u32], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < cps.len() {
        let c = cps[i];
        if (0xD800..0xDC00).contains(&c)
            && i + 1 < cps.len()
            && (0xDC00..0xE000).contains(&cps[i + 1])
        {
            push_utf8(0x10000 + ((c - 0xD800) << 10) + (cps[i + 1] - 0xDC00), out);
            i += 2;
            continue;
        }
        push_utf8(c, out);
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partitioners::hash::murmur2;

    fn arrow_like(keys: &[Option<&[u8]>]) -> (Vec<i32>, Vec<u8>, Vec<u8>) {
        let mut offsets = vec![0i32];
        let mut data = Vec::new();
        let mut bits = vec![0u8; keys.len().div_ceil(8)];
        for (i, k) in keys.iter().enumerate() {
            if let Some(k) = k {
                data.extend_from_slice(k);
                bits[i >> 3] |= 1 << (i & 7);
            }
            offsets.push(data.len() as i32);
        }
        (offsets, data, bits)
    }

    #[test]
    fn offsets_with_nulls_and_empty_keys() {
        let keys: [Option<&[u8]>; 4] = [Some(b"a"), None, Some(b""), Some(b"abc")];
        let (offsets, data, bits) = arrow_like(&keys);
        let col = KeyColumn::Offsets32 {
            offsets: &offsets,
            data: &data,
            validity: Some(Bitmap {
                bits: &bits,
                offset: 0,
            }),
        };
        let mut out = vec![0; 4];
        partition_column(&col, KeyHash::Murmur2, 1000, &mut out).unwrap();
        // kafka-python's Java-compatibility vectors: a -> 524, "" -> 681, abc -> 107.
        assert_eq!(out, vec![524, NULL_PARTITION, 681, 107]);
    }

    #[test]
    fn bad_offsets_are_errors_not_panics() {
        let offsets = [0i32, 5];
        let col = KeyColumn::Offsets32 {
            offsets: &offsets,
            data: b"abc",
            validity: None,
        };
        let mut out = vec![0; 1];
        assert!(partition_column(&col, KeyHash::Murmur2, 3, &mut out).is_err());
        let offsets = [3i32, 1];
        let col = KeyColumn::Offsets32 {
            offsets: &offsets,
            data: b"abc",
            validity: None,
        };
        assert!(partition_column(&col, KeyHash::Murmur2, 3, &mut out).is_err());
        let mut view = [0u8; 16];
        view[0] = 20; // 20 bytes, buffer 0, offset 0: the buffer is too short
        let col = KeyColumn::Views {
            views: &[view],
            buffers: vec![b"short"],
            validity: None,
        };
        assert!(partition_column(&col, KeyHash::Murmur2, 3, &mut out).is_err());
    }

    #[test]
    fn views_inline_and_out_of_line() {
        let long = b"a-little-bit-long-string";
        let mut inline = [0u8; 16];
        inline[0] = 3;
        inline[4..7].copy_from_slice(b"abc");
        let mut outline = [0u8; 16];
        outline[0] = long.len() as u8;
        outline[4..8].copy_from_slice(&long[..4]);
        outline[8..12].copy_from_slice(&0i32.to_le_bytes());
        outline[12..16].copy_from_slice(&2i32.to_le_bytes());
        let mut buf = b"xx".to_vec();
        buf.extend_from_slice(long);
        let col = KeyColumn::Views {
            views: &[inline, outline],
            buffers: vec![&buf],
            validity: None,
        };
        let mut out = vec![0; 2];
        partition_column(&col, KeyHash::Murmur2, i32::MAX as u32, &mut out).unwrap();
        assert_eq!(out[0], 479470107); // murmur2("abc"), positive
        assert_eq!(
            out[1],
            crate::partitioners::hash::to_positive(murmur2(long))
        );
    }

    #[test]
    fn fixed_width_strips_trailing_nuls_like_numpy() {
        let data = b"ab\0\0abc\0\0\0\0\0";
        let col = KeyColumn::FixedBytes { data, width: 4 };
        let mut out = vec![0; 3];
        partition_column(&col, KeyHash::Murmur2, 1000, &mut out).unwrap();
        assert_eq!(out, vec![434, 107, 681]);
    }

    #[test]
    fn java_utf8_rules() {
        let mut out = Vec::new();
        java_utf8_from_utf16(&[0x61, 0xD83D, 0xDE00, 0xD800, 0x62, 0xDC00], &mut out);
        assert_eq!(out, "a😀?b?".as_bytes());
        out.clear();
        java_utf8_from_code_points(&[0xE9, 0xD83D, 0xDE00, 0x110000, 0xDFFF], &mut out);
        assert_eq!(out, "é😀??".as_bytes());
    }
}
