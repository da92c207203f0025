//! Round trips over seeded random batches, Kafka's own test anchors, and hostile input.

use super::*;
use crate::errors::Corruption;
use crate::rng::Rng;

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn bytes(rng: &mut Rng, max: usize) -> Option<Vec<u8>> {
    match rng.next_u64() % 8 {
        0 => None,
        1 => Some(Vec::new()),
        _ => {
            let n = (rng.next_u64() % (max as u64 + 1)) as usize;
            // Mostly repetitive so that compression has something to do.
            let a = rng.next_u64() as u8;
            Some(
                (0..n)
                    .map(|i| if i % 7 == 0 { rng.next_u64() as u8 } else { a })
                    .collect(),
            )
        }
    }
}

fn random_batch(rng: &mut Rng, compression: Compression) -> RecordBatch {
    let n = (rng.next_u64() % 40) as usize;
    let base_offset = (rng.next_u64() % (1 << 40)) as i64;
    let base_ts = 1_700_000_000_000 + (rng.next_u64() % 1_000_000) as i64;
    let mut offset = base_offset;
    let records = (0..n)
        .map(|i| {
            // Gaps, as compaction leaves them.
            offset += if i == 0 {
                (rng.next_u64() % 3) as i64
            } else {
                1 + (rng.next_u64() % 3) as i64
            };
            let n_headers = (rng.next_u64() % 4) as usize;
            Record {
                offset,
                timestamp: base_ts + (rng.next_u64() % 100_000) as i64 - 50_000,
                key: bytes(rng, 40),
                value: bytes(rng, 3000),
                headers: (0..n_headers)
                    .map(|h| Header {
                        key: format!("h{h}-é"),
                        value: bytes(rng, 20),
                    })
                    .collect(),
            }
        })
        .collect();
    let transactional = rng.next_u64() % 3 == 0;
    let mut b = RecordBatch {
        fields: BatchFields {
            base_offset,
            partition_leader_epoch: (rng.next_u64() % 100) as i32 - 1,
            compression,
            is_transactional: transactional,
            producer_id: if transactional {
                (rng.next_u64() % 1000) as i64
            } else {
                -1
            },
            producer_epoch: if transactional {
                (rng.next_u64() % 10) as i16
            } else {
                -1
            },
            base_sequence: if transactional {
                (rng.next_u64() % 1000) as i32
            } else {
                -1
            },
            ..BatchFields::default()
        },
        records,
    };
    b.derive_from_records().unwrap();
    if rng.next_u64() % 4 == 0 {
        b.timestamp_type = TimestampType::LogAppendTime;
        b.max_timestamp = base_ts + 99;
        for r in &mut b.records {
            r.timestamp = b.fields.max_timestamp;
        }
    }
    b
}

fn decode_one(buf: &[u8]) -> Result<RecordBatch> {
    let mut v = decode_batches(buf, &DecodeOptions::default())?;
    assert_eq!(v.len(), 1);
    Ok(v.remove(0))
}

#[test]
fn v2_round_trips_with_exact_sizes() {
    let mut rng = Rng::new(Some(42));
    for i in 0..300 {
        let codec = CODECS[i % CODECS.len()];
        let b = random_batch(&mut rng, codec);
        let enc = b.encode(None).unwrap();
        if codec == Compression::None {
            assert_eq!(
                enc.len(),
                b.uncompressed_size(),
                "computed size == encoded length"
            );
        }
        let h = BatchHeader::parse(&enc).unwrap();
        assert_eq!(h.size(), enc.len());
        assert_eq!(h.records_count as usize, b.records.len());
        assert_eq!(h.base_offset, b.base_offset);
        assert_eq!(h.last_offset(), b.last_offset());
        assert_eq!(decode_one(&enc).unwrap(), b, "batch {i} ({codec:?})");
    }
}

#[test]
fn legacy_round_trips() {
    let mut rng = Rng::new(Some(7));
    for i in 0..200 {
        let magic = (i % 2) as i8;
        let codec = CODECS[i % 4];
        let mut b = random_batch(&mut rng, codec);
        b.magic = magic;
        b.partition_leader_epoch = -1;
        b.is_transactional = false;
        (b.producer_id, b.producer_epoch, b.base_sequence) = (-1, -1, -1);
        b.timestamp_type = if magic == 0 {
            TimestampType::NoTimestampType
        } else {
            b.timestamp_type
        };
        for r in &mut b.records {
            r.headers.clear();
            if magic == 0 {
                r.timestamp = NO_TIMESTAMP;
            }
        }
        if b.records.is_empty() {
            continue;
        }
        let enc = b.encode(None).unwrap();
        let got = decode_batches(&enc, &DecodeOptions::default()).unwrap();
        let records: Vec<Record> = got.iter().flat_map(|g| g.records.clone()).collect();
        assert_eq!(records, b.records, "entry {i} magic {magic} {codec:?}");
        if codec == Compression::None {
            assert_eq!(enc.len(), b.uncompressed_size());
            assert_eq!(got.len(), b.records.len());
        } else {
            assert_eq!(got.len(), 1);
            // A legacy entry's base offset is its first record's.
            let (first, last) = (b.records[0].offset, b.records[b.records.len() - 1].offset);
            assert_eq!((got[0].base_offset, got[0].last_offset()), (first, last));
            assert_eq!(got[0].compression, codec);
            assert_eq!(got[0].timestamp_type, b.timestamp_type);
        }
    }
}

// Kafka's Crc32CTest.testValue, and the CRC-32C check value of RFC 3720.
#[test]
fn crc32c_vectors() {
    assert_eq!(crc32c::crc32c(b"Some String"), 608_512_271);
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
}

fn three_records() -> RecordBatch {
    // As in Kafka's DefaultRecordBatchTest: three records at timestamps 1, 2, 3.
    let mut b = RecordBatch {
        records: (0..3)
            .map(|i| Record {
                offset: i,
                timestamp: i + 1,
                key: Some(vec![b'a' + i as u8]),
                value: Some(vec![b'1' + i as u8]),
                headers: vec![],
            })
            .collect(),
        ..RecordBatch::default()
    };
    b.derive_from_records().unwrap();
    b
}

// DefaultRecordBatchTest.testInvalidCrc and testInvalidRecordSize.
#[test]
fn bad_crc_and_bad_length_are_errors() {
    let enc = three_records().encode(None).unwrap();
    let mut bad = enc.clone();
    bad[header::LAST_OFFSET_DELTA_OFFSET..27].copy_from_slice(&23i32.to_be_bytes());
    assert!(
        matches!(BatchHeader::parse(&bad), Err(Error::CorruptRecord(c)) if c.kind == Corruption::Crc && c.reason.contains("crc"))
    );
    assert!(BatchHeader::parse_with(&bad, false).is_ok());
    let mut short = enc.clone();
    short[8..12].copy_from_slice(&10i32.to_be_bytes());
    assert!(BatchHeader::parse(&short).is_err());
    // A length of 10 is above the 14-byte entry minimum, so the walk hands it to the decoder.
    assert!(decode_batches(&short, &DecodeOptions::default()).is_err());
}

// DefaultRecordBatchTest.testInvalidRecordCount{TooMany,TooLittle}{Non,}CompressedV2.
#[test]
fn wrong_record_counts_are_errors() {
    for codec in [Compression::None, Compression::Gzip] {
        let mut b = RecordBatch::default();
        for (i, v) in ["hello", "there", "beautiful"].iter().enumerate() {
            b.records.push(Record {
                offset: i as i64,
                timestamp: 5,
                value: Some(v.as_bytes().to_vec()),
                ..Record::default()
            });
        }
        b.compression = codec;
        b.derive_from_records().unwrap();
        let enc = b.encode(None).unwrap();
        for count in [2i32, 5, -1, i32::MAX] {
            let mut bad = enc.clone();
            bad[57..61].copy_from_slice(&count.to_be_bytes());
            let opts = DecodeOptions {
                verify_crc: false,
                ..DecodeOptions::default()
            };
            let r = decode_batches(&bad, &opts);
            assert!(
                matches!(&r, Err(Error::CorruptRecord(c)) if c.kind == Corruption::RecordCount),
                "{codec:?} count {count}: {r:?}"
            );
        }
    }
}

// DefaultRecordBatchTest.testSetLastOffset / testSetPartitionLeaderEpoch / testSetLogAppendTime.
#[test]
fn header_rewrites_in_place() {
    let mut enc = three_records().encode(None).unwrap();
    set_last_offset(&mut enc, 500).unwrap();
    let h = BatchHeader::parse(&enc).unwrap();
    assert_eq!((h.base_offset, h.last_offset()), (498, 500));
    let offsets: Vec<i64> = decode_one(&enc)
        .unwrap()
        .records
        .iter()
        .map(|r| r.offset)
        .collect();
    assert_eq!(offsets, [498, 499, 500]);

    set_partition_leader_epoch(&mut enc, 15).unwrap();
    assert_eq!(BatchHeader::parse(&enc).unwrap().partition_leader_epoch, 15);

    set_base_offset(&mut enc, 1 << 40).unwrap();
    let crc_before = BatchHeader::parse(&enc).unwrap().crc;
    set_max_timestamp(&mut enc, TimestampType::LogAppendTime, 1_234_567).unwrap();
    let h = BatchHeader::parse(&enc).unwrap();
    assert_ne!(h.crc, crc_before);
    assert_eq!(
        (h.timestamp_type(), h.max_timestamp, h.base_offset),
        (TimestampType::LogAppendTime, 1_234_567, 1 << 40)
    );
    let b = decode_one(&enc).unwrap();
    assert!(b.records.iter().all(|r| r.timestamp == 1_234_567));
    assert_eq!(b.records[0].offset, 1 << 40);
    // testSetNoTimestampTypeNotAllowed
    assert!(set_max_timestamp(&mut enc, TimestampType::NoTimestampType, 1).is_err());
    // A legacy entry or a cut batch is refused.
    assert!(set_base_offset(&mut enc[..60], 0).is_err());
}

// DefaultRecordBatchTest.testIncrementSequence and the lastSequence wrap-around.
#[test]
fn sequences_wrap_as_in_kafka() {
    assert_eq!(increment_sequence(5, 5), 10);
    assert_eq!(increment_sequence(i32::MAX, 1), 0);
    assert_eq!(increment_sequence(i32::MAX - 5, 10), 4);
    let mut b = three_records();
    b.base_sequence = i32::MAX - 1;
    b.producer_id = 9;
    b.producer_epoch = 0;
    let h = BatchHeader::parse(&b.encode(None).unwrap()).unwrap();
    assert_eq!(h.last_sequence(), 0);
}

// DefaultRecordBatchTest.testReadAndWriteControlBatch.
#[test]
fn control_batches_round_trip() {
    for commit in [true, false] {
        let marker = EndTransactionMarker {
            commit,
            coordinator_epoch: 15,
        };
        let b = marker.batch(42, 1_600_000_000_000, 3, 7, 2);
        let got = decode_one(&b.encode(None).unwrap()).unwrap();
        assert!(got.is_control && got.is_transactional);
        assert_eq!(
            (got.producer_id, got.producer_epoch, got.base_sequence),
            (7, 2, -1)
        );
        let rec = &got.records[0];
        assert_eq!(rec.key.as_deref().unwrap(), &[0, 0, 0, commit as u8]);
        assert_eq!(EndTransactionMarker::parse(rec).unwrap(), marker);
        let key = ControlRecordKey::parse(rec.key.as_deref()).unwrap();
        assert_eq!(
            key.kind,
            if commit {
                ControlRecordType::Commit
            } else {
                ControlRecordType::Abort
            }
        );
    }
    assert!(ControlRecordKey::parse(Some(&[0, 0, 1])).is_err());
    assert!(ControlRecordKey::parse(Some(&[0xff, 0xff, 0, 1])).is_err());
    assert_eq!(
        ControlRecordKey::parse(Some(&[0, 1, 0, 9])).unwrap().kind,
        ControlRecordType::Unknown(9)
    );
    let leader = Record {
        key: Some(vec![0, 0, 0, 2]),
        value: Some(vec![0; 6]),
        ..Record::default()
    };
    assert!(EndTransactionMarker::parse(&leader).is_err());
}

#[test]
fn concatenated_batches_and_a_truncated_tail() {
    let mut rng = Rng::new(Some(3));
    let mut buf = Vec::new();
    let mut want = Vec::new();
    for codec in CODECS {
        let b = random_batch(&mut rng, codec);
        b.encode_into(&mut buf, None).unwrap();
        want.push(b);
    }
    let full = buf.len();
    let extra = random_batch(&mut rng, Compression::None)
        .encode(None)
        .unwrap();
    for cut in [0, 1, 11, 12, 16, 17, 60, extra.len() - 1] {
        let mut data = buf.clone();
        data.extend_from_slice(&extra[..cut]);
        assert_eq!(
            decode_batches(&data, &DecodeOptions::default()).unwrap(),
            want,
            "tail of {cut} bytes"
        );
        let mut it = batches(&data);
        assert_eq!(it.by_ref().count(), 5);
        assert_eq!(it.rest().len(), data.len() - full);
    }
    // Kafka's ByteBufferLogInputStream: a size below 14 or an unknown magic is corrupt.
    let mut bad = buf.clone();
    bad.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 13]);
    assert!(decode_batches(&bad, &DecodeOptions::default()).is_err());
    let mut bad = extra.clone();
    bad[16] = 3;
    assert!(decode_batches(&bad, &DecodeOptions::default()).is_err());
}

#[test]
fn decompression_budget_spans_the_call() {
    let mut b = RecordBatch {
        fields: BatchFields {
            compression: Compression::Zstd,
            ..BatchFields::default()
        },
        records: Vec::new(),
    };
    b.records.push(Record {
        value: Some(vec![7; 600_000]),
        ..Record::default()
    });
    b.derive_from_records().unwrap();
    let one = b.encode(None).unwrap();
    let mut two = one.clone();
    two.extend_from_slice(&one);
    let opts = DecodeOptions {
        max_decompressed_size: 1_000_000,
        verify_crc: true,
    };
    assert!(decode_batches(&one, &opts).is_ok());
    assert!(
        matches!(decode_batches(&two, &opts), Err(Error::CorruptRecord(c)) if c.kind == Corruption::Compression && c.reason.contains("max_decompressed_size"))
    );
}

#[test]
fn record_level_corruption() {
    // Negative header key size, a header count past the record, a record size that disagrees.
    let mut b = three_records();
    b.records[0].headers.push(Header {
        key: "k".into(),
        value: None,
    });
    let enc = b.encode(None).unwrap();
    let opts = DecodeOptions {
        verify_crc: false,
        ..DecodeOptions::default()
    };
    // First record starts at 61: length, attributes, ts delta, offset delta, key(2), value(2).
    let hcount_at = 61 + 1 + 1 + 1 + 1 + 2 + 2;
    assert_eq!(enc[hcount_at], 2); // zigzag(1)
    for (at, v) in [
        (hcount_at, 0x7fu8),
        (hcount_at + 1, 0x01),
        (61, 0x7f),
        (61, 0x01),
    ] {
        let mut bad = enc.clone();
        bad[at] = v;
        assert!(
            matches!(decode_batches(&bad, &opts), Err(Error::CorruptRecord(c)) if c.kind == Corruption::Record),
            "byte {at} = {v:#x}"
        );
    }
    // An invalid varint (continuation bits forever).
    let mut bad = enc.clone();
    for byte in &mut bad[62..67] {
        *byte = 0xff;
    }
    assert!(matches!(
        decode_batches(&bad, &opts),
        Err(Error::CorruptRecord(c)) if c.kind == Corruption::Record
    ));
}

#[test]
fn invalid_utf8_header_keys_are_replaced_like_java() {
    let mut b = three_records();
    b.records[0].headers.push(Header {
        key: "ab".into(),
        value: Some(vec![1]),
    });
    let mut enc = b.encode(None).unwrap();
    let at = enc.windows(2).position(|w| w == b"ab").unwrap();
    enc[at] = 0xff;
    let got = decode_batches(
        &enc,
        &DecodeOptions {
            verify_crc: false,
            ..DecodeOptions::default()
        },
    )
    .unwrap();
    assert_eq!(got[0].records[0].headers[0].key, "\u{fffd}b");
}

#[test]
fn encode_rejects_what_kafka_rejects() {
    let mut b = three_records();
    b.records[2].offset = b.base_offset + (1 << 31);
    assert!(matches!(b.encode(None), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        b.derive_from_records(),
        Err(Error::InvalidArgument(_))
    ));
    let mut b = three_records();
    b.base_timestamp = -5;
    assert!(b.encode(None).is_err());
    let mut b = three_records();
    b.compression = Compression::Lz4;
    assert!(b.encode(Some(3)).is_err());
    b.magic = 1;
    b.records[0].headers.push(Header::default());
    assert!(b.encode(None).is_err());
    b.magic = 3;
    assert!(b.encode(None).is_err());
}

/// A short seeded corruption run: every mutation of valid batches decodes or fails with Decode.
#[test]
fn random_corruption_never_panics() {
    let mut rng = Rng::new(Some(99));
    let mut seeds = Vec::new();
    for (i, codec) in CODECS.iter().enumerate() {
        let mut b = random_batch(&mut rng, *codec);
        if i % 2 == 0 {
            b.magic = (i % 4 / 2) as i8;
            for r in &mut b.records {
                r.headers.clear();
            }
            if b.compression == Compression::Zstd || b.records.is_empty() {
                b.magic = 2;
            }
        }
        seeds.push(b.encode(None).unwrap());
    }
    for i in 0..20_000 {
        let mut data = seeds[i % seeds.len()].clone();
        for _ in 0..1 + rng.next_u64() % 4 {
            let at = (rng.next_u64() as usize) % data.len().max(1);
            match rng.next_u64() % 4 {
                0 => data[at] ^= 1 << (rng.next_u64() % 8),
                1 => data[at] = rng.next_u64() as u8,
                2 => data.truncate(at),
                _ => data.insert(at.min(data.len()), rng.next_u64() as u8),
            }
            if data.is_empty() {
                break;
            }
        }
        let opts = DecodeOptions {
            max_decompressed_size: 1 << 20,
            verify_crc: i % 2 == 0,
        };
        if let Err(e) = decode_batches(&data, &opts) {
            assert!(matches!(e, Error::CorruptRecord(_)), "{e:?}");
        }
        let _ = BatchHeader::parse_with(&data, false);
    }
}

#[test]
fn views_point_into_the_batch_without_copies() {
    let mut rng = Rng::new(Some(11));
    for codec in CODECS {
        let b = random_batch(&mut rng, codec);
        let enc = b.encode(None).unwrap();
        let views = decode_batch_views(&enc, &DecodeOptions::default()).unwrap();
        let v = &views[0];
        assert_eq!(v.spans.len(), b.records.len());
        // Uncompressed records are read in place, from the input itself.
        assert_eq!(
            matches!(v.data, std::borrow::Cow::Borrowed(_)),
            codec == Compression::None
        );
        for (r, want) in v.records().zip(&b.records) {
            assert_eq!(r.header_count(), want.headers.len());
            let headers: Vec<(&[u8], Option<&[u8]>)> = r.headers().collect();
            let want_headers: Vec<(&[u8], Option<&[u8]>)> = want
                .headers
                .iter()
                .map(|h| (h.key.as_bytes(), h.value.as_deref()))
                .collect();
            assert_eq!(headers, want_headers);
            assert_eq!(&r.to_record(), want);
        }
    }
}
