//! HeaderColumn: the producer's records' headers laid out as Arrow's
//! `list<struct<key: string, value: binary>>` (Spark's sink type
//! `array<struct<key:string,value:binary>>`), borrowed from the caller's buffers.
//!
//! Nothing is copied: a row's headers are slices of the key and value columns. The buffers may
//! come from outside (an Arrow producer), so every offset and bitmap access is checked and a bad
//! one is an error, never a panic.

use crate::errors::{Error, Result};
use crate::partitioners::keys::{Bitmap, KeyColumn};

/// ListOffsets are a list array's offsets (`len + 1` entries, already sliced to the array's
/// offset): 32-bit for `list`, 64-bit for `large_list`.
#[derive(Debug, Clone, Copy)]
pub enum ListOffsets<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl ListOffsets<'_> {
    fn range(&self, i: usize) -> Option<(usize, usize)> {
        let (s, e) = match self {
            ListOffsets::I32(o) => (
                usize::try_from(*o.get(i)?).ok()?,
                usize::try_from(*o.get(i + 1)?).ok()?,
            ),
            ListOffsets::I64(o) => (
                usize::try_from(*o.get(i)?).ok()?,
                usize::try_from(*o.get(i + 1)?).ok()?,
            ),
        };
        (s <= e).then_some((s, e))
    }
}

/// HeaderColumn is one column of headers: row `i` is list `i`; a null list is a record without
/// headers; each entry is a struct of a key (never null: Kafka's `RecordHeader` needs one) and a
/// value (null allowed, as Kafka allows). Entry `e` of the struct array is item
/// `entry_offset + e` of the key and value columns (Arrow applies a struct's offset to its
/// children).
#[derive(Debug, Clone)]
pub struct HeaderColumn<'a> {
    pub offsets: ListOffsets<'a>,
    /// validity of the lists; `None`: no list is null.
    pub validity: Option<Bitmap<'a>>,
    /// entry_offset is the struct array's own offset.
    pub entry_offset: usize,
    /// entry_validity is the struct array's bitmap, indexed by `entry_offset + e`.
    pub entry_validity: Option<Bitmap<'a>>,
    pub keys: KeyColumn<'a>,
    /// values: `None` when the value column is of Arrow's null type (every value null).
    pub values: Option<KeyColumn<'a>>,
}

fn bit(b: &Bitmap<'_>, i: usize) -> Option<bool> {
    let j = b.offset + i;
    b.bits.get(j >> 3).map(|byte| byte & (1 << (j & 7)) != 0)
}

impl<'a> HeaderColumn<'a> {
    /// may_refuse is false when no entry and no key can be null (neither has a bitmap): then
    /// [`get_into`](Self::get_into) fails only on malformed offsets.
    pub fn may_refuse(&self) -> bool {
        let keys_nullable = match &self.keys {
            KeyColumn::Offsets32 { validity, .. }
            | KeyColumn::Offsets64 { validity, .. }
            | KeyColumn::Views { validity, .. } => validity.is_some(),
            _ => false,
        };
        self.entry_validity.is_some() || keys_nullable
    }

    /// get_into replaces `out` with the headers of row `row`, in their order. Deterministic; reads
    /// only.
    pub fn get_into(&self, row: usize, out: &mut Vec<(&'a [u8], Option<&'a [u8]>)>) -> Result<()> {
        out.clear();
        let bad = |what: &str| Error::malformed(format!("headers of row {row}: {what}"));
        if let Some(v) = &self.validity {
            if !bit(v, row).ok_or_else(|| bad("the list bitmap is too short"))? {
                return Ok(());
            }
        }
        let (start, end) = self
            .offsets
            .range(row)
            .ok_or_else(|| bad("list offsets are out of order or out of the buffer"))?;
        for e in start..end {
            let i = self.entry_offset + e;
            if let Some(v) = &self.entry_validity {
                if !bit(v, i).ok_or_else(|| bad("the entry bitmap is too short"))? {
                    return Err(Error::InvalidArgument(format!(
                        "headers of row {row}: header {} is null (a header is a key and a value)",
                        e - start
                    )));
                }
            }
            let key = self.keys.get(i)?.ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "headers of row {row}: the key of header {} is null (Kafka headers need a key)",
                    e - start
                ))
            })?;
            let value = match &self.values {
                Some(c) => c.get(i)?,
                None => None,
            };
            out.push((key, value));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf8<'a>(offsets: &'a [i32], data: &'a [u8]) -> KeyColumn<'a> {
        KeyColumn::Offsets32 {
            offsets,
            data,
            validity: None,
        }
    }

    #[test]
    fn rows_read_their_slice_of_the_entries_nulls_and_offsets_included() {
        // Three rows: [("a", "1"), ("b", null)], null, []; the entries sliced at offset 1 of a
        // struct array whose first entry is padding.
        let key_offsets = [0, 1, 2, 3];
        let keys = utf8(&key_offsets, b"xab");
        let value_offsets = [0, 1, 2, 2];
        let value_bits = [0b011u8];
        let values = KeyColumn::Offsets32 {
            offsets: &value_offsets,
            data: b"p1",
            validity: Some(Bitmap {
                bits: &value_bits,
                offset: 0,
            }),
        };
        let list_bits = [0b101u8];
        let offsets = [0, 2, 2, 2];
        let col = HeaderColumn {
            offsets: ListOffsets::I32(&offsets),
            validity: Some(Bitmap {
                bits: &list_bits,
                offset: 0,
            }),
            entry_offset: 1,
            entry_validity: None,
            keys,
            values: Some(values),
        };
        let mut out = Vec::new();
        col.get_into(0, &mut out).unwrap();
        assert_eq!(out, vec![(&b"a"[..], Some(&b"1"[..])), (&b"b"[..], None)]);
        col.get_into(1, &mut out).unwrap();
        assert!(out.is_empty());
        col.get_into(2, &mut out).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn bad_offsets_null_entries_and_null_keys_are_errors() {
        let key_offsets = [0, 1];
        let col = |offsets: ListOffsets<'static>| HeaderColumn {
            offsets,
            validity: None,
            entry_offset: 0,
            entry_validity: None,
            keys: utf8(&[0, 1], b"k"),
            values: None,
        };
        let mut out = Vec::new();
        assert!(col(ListOffsets::I64(&[0, 5]))
            .get_into(0, &mut out)
            .is_err());
        assert!(col(ListOffsets::I64(&[1, 0]))
            .get_into(0, &mut out)
            .is_err());
        assert!(col(ListOffsets::I32(&[0])).get_into(0, &mut out).is_err());
        assert!(col(ListOffsets::I32(&[-1, 1]))
            .get_into(0, &mut out)
            .is_err());
        let ok = col(ListOffsets::I32(&[0, 1]));
        ok.get_into(0, &mut out).unwrap();
        assert_eq!(out, vec![(&b"k"[..], None)]);
        assert!(!ok.may_refuse());

        let null_entry = [0u8];
        let mut c = ok.clone();
        c.entry_validity = Some(Bitmap {
            bits: &null_entry,
            offset: 0,
        });
        assert!(c.may_refuse());
        let e = c.get_into(0, &mut out).unwrap_err();
        assert!(e.to_string().contains("header 0 is null"), "{e}");

        let null_key = [0u8];
        let mut c = ok.clone();
        c.keys = KeyColumn::Offsets32 {
            offsets: &key_offsets,
            data: b"k",
            validity: Some(Bitmap {
                bits: &null_key,
                offset: 0,
            }),
        };
        assert!(c.may_refuse());
        let e = c.get_into(0, &mut out).unwrap_err();
        assert!(e.to_string().contains("key of header 0 is null"), "{e}");
    }
}
