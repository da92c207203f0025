//! Zero-copy decoding: a [`DecodedBatch`] keeps the batch's record bytes (borrowed from the
//! input, or decompressed) and locates each record in them with a [`RecordSpan`]; nothing is
//! copied per record. [`RecordRef`] reads a record through its span. Every record, header
//! included, is fully checked when the batch is decoded, so reading through a span never fails.

use std::borrow::Cow;

use super::batch::{Header, Record, RecordBatch, RecordFields};
use crate::errors::{Corruption, Error, Result};
use crate::protocol::primitives::Reader;

/// RecordSpan is one record's place in its batch's data: absolute offset and timestamp, and
/// `(start, len)` of key, value and header section (the headers after their count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RecordSpan {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<(usize, usize)>,
    pub value: Option<(usize, usize)>,
    pub headers: (usize, usize),
    pub header_count: usize,
}

/// RecordRef is a record read through its span, borrowing the batch's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordRef<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    headers: &'a [u8],
    header_count: usize,
}

fn slice(data: &[u8], r: Option<(usize, usize)>) -> Option<&[u8]> {
    r.map(|(s, n)| &data[s..s + n])
}

impl RecordSpan {
    /// get reads the record this span locates in `data` (the data it was made from).
    pub fn get<'a>(&self, data: &'a [u8]) -> RecordRef<'a> {
        RecordRef {
            offset: self.offset,
            timestamp: self.timestamp,
            key: slice(data, self.key),
            value: slice(data, self.value),
            headers: &data[self.headers.0..self.headers.0 + self.headers.1],
            header_count: self.header_count,
        }
    }
}

impl<'a> RecordRef<'a> {
    /// headers iterates over the (key, value) headers; keys are raw bytes (see [`Header`]).
    pub fn headers(&self) -> HeaderIter<'a> {
        HeaderIter {
            r: Reader::new(self.headers),
            left: self.header_count,
        }
    }

    /// header_count is the number of headers.
    pub fn header_count(&self) -> usize {
        self.header_count
    }

    /// to_record copies the record out.
    pub fn to_record(&self) -> Record {
        Record {
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            headers: self
                .headers()
                .map(|(k, v)| Header {
                    key: String::from_utf8_lossy(k).into_owned(),
                    value: v.map(<[u8]>::to_vec),
                })
                .collect(),
        }
    }
}

/// HeaderIter yields the headers of a [`RecordRef`] as (key, value) byte slices.
#[derive(Debug, Clone)]
pub struct HeaderIter<'a> {
    r: Reader<'a>,
    left: usize,
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = (&'a [u8], Option<&'a [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // The section was checked when the batch was decoded.
        read_header(&mut self.r).ok()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// read_len_bytes reads a varint length and that many bytes; a negative length is null, as
/// Kafka's `Utils.readBytes` reads it.
pub(super) fn read_len_bytes<'a>(r: &mut Reader<'a>, what: &str) -> Result<Option<&'a [u8]>> {
    let n = r.varint()?;
    if n < 0 {
        return Ok(None);
    }
    r.take(n as usize, what).map(Some)
}

/// read_header reads one header: a non-negative key length (Kafka rejects a negative one) and
/// a nullable value.
pub(super) fn read_header<'a>(r: &mut Reader<'a>) -> Result<(&'a [u8], Option<&'a [u8]>)> {
    let klen = r.varint()?;
    if klen < 0 {
        return Err(Error::corrupt(
            Corruption::Record,
            format!("invalid negative header key size {klen}"),
        ));
    }
    let key = r.take(klen as usize, "header key")?;
    Ok((key, read_len_bytes(r, "header value")?))
}

/// DecodedBatch is a decoded batch whose records stay in `data`: `batch` holds the header
/// fields (its `records` is empty) and `spans` locate the records.
#[derive(Debug, Clone)]
pub struct DecodedBatch<'a> {
    pub batch: RecordBatch,
    pub data: Cow<'a, [u8]>,
    pub spans: Vec<RecordSpan>,
}

impl DecodedBatch<'_> {
    /// records reads every record.
    pub fn records(&self) -> impl ExactSizeIterator<Item = RecordRef<'_>> + '_ {
        self.spans.iter().map(|s| s.get(&self.data))
    }

    /// into_record_batch copies the records out into an owned [`RecordBatch`].
    pub fn into_record_batch(self) -> RecordBatch {
        let records = self.records().map(|r| r.to_record()).collect();
        RecordBatch {
            fields: self.batch.fields,
            records,
        }
    }

    /// into_owned makes the data owned.
    pub fn into_owned(self) -> DecodedBatch<'static> {
        DecodedBatch {
            batch: self.batch,
            data: Cow::Owned(self.data.into_owned()),
            spans: self.spans,
        }
    }
}

impl RecordFields for RecordRef<'_> {
    fn offset(&self) -> i64 {
        self.offset
    }
    fn timestamp(&self) -> i64 {
        self.timestamp
    }
    fn key(&self) -> Option<&[u8]> {
        self.key
    }
    fn value(&self) -> Option<&[u8]> {
        self.value
    }
    fn header_count(&self) -> usize {
        self.header_count
    }
    fn headers(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> + '_ {
        RecordRef::headers(self)
    }
}
