//! Fuzz target: record batch decoding (all magics, all codecs), the in-place header rewrites
//! and the codecs on their own. The first input byte picks options; the rest is the buffer.
//! Properties: no panic; every error is `Error::CorruptRecord`; a decoded v2 batch that encodes again
//! decodes back to itself.
#![no_main]

use kgroup::errors::Error;
use kgroup::protocol::records::compression::{decompress, Budget, Compression};
use kgroup::protocol::records::{
    batches, decode_batch_views, decode_batches, set_base_offset, set_max_timestamp,
    set_partition_leader_epoch, BatchHeader, DecodeOptions, TimestampType,
};
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;

fn corrupt_record_only<T: std::fmt::Debug>(r: &Result<T, Error>) {
    if let Err(e) = r {
        assert!(
            matches!(e, Error::CorruptRecord(_)),
            "not a corrupt record: {e:?}"
        );
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, data)) = input.split_first() else {
        return;
    };
    let opts = DecodeOptions {
        max_decompressed_size: LIMIT,
        verify_crc: mode & 1 == 1,
    };

    let views = decode_batch_views(data, &opts);
    corrupt_record_only(&views);
    if let Ok(views) = views {
        let unbounded = DecodeOptions {
            max_decompressed_size: usize::MAX,
            verify_crc: true,
        };
        for v in views.iter().filter(|v| v.batch.magic == 2) {
            let owned = v.clone().into_record_batch();
            // Encoding may refuse what decoding accepted (offsets or timestamps out of range).
            let Ok(again) = owned.encode(None) else {
                continue;
            };
            let back = decode_batches(&again, &unbounded).expect("a re-encoded batch decodes");
            assert_eq!(back.len(), 1);
            assert_eq!(back[0], owned);
            // Encoding the records in place keeps them as they are, header keys byte for byte
            // (the owned copy replaced invalid UTF-8 in them, as Java does).
            let refs: Vec<_> = v.records().collect();
            let mut in_place = Vec::new();
            v.batch
                .encode_with(&refs, &mut in_place, None)
                .expect("encodes as the owned batch did");
            let back = decode_batch_views(&in_place, &unbounded).expect("decodes");
            assert_eq!(back.len(), 1);
            assert_eq!(back[0].batch, v.batch);
            assert_eq!(back[0].spans.len(), refs.len());
            for (a, b) in back[0].records().zip(&refs) {
                assert_eq!(
                    (a.offset, a.timestamp, a.key, a.value),
                    (b.offset, b.timestamp, b.key, b.value)
                );
                assert!(a.headers().eq(b.headers()));
            }
            if refs
                .iter()
                .all(|r| r.headers().all(|(k, _)| std::str::from_utf8(k).is_ok()))
            {
                assert_eq!(in_place, again);
            }
        }
    }

    for raw in batches(data) {
        corrupt_record_only(&raw);
        let Ok(raw) = raw else { break };
        if raw.magic == 2 {
            corrupt_record_only(&BatchHeader::parse(raw.bytes));
        }
    }

    let mut copy = data.to_vec();
    corrupt_record_only(&set_base_offset(&mut copy, 12345));
    corrupt_record_only(&set_partition_leader_epoch(&mut copy, 7));
    let r = set_max_timestamp(&mut copy, TimestampType::LogAppendTime, 99);
    corrupt_record_only(&r);
    if r.is_ok() && BatchHeader::parse_with(data, true).is_ok() {
        // A valid batch stays valid after the rewrites.
        let h = BatchHeader::parse(&copy).expect("rewritten batch keeps a valid CRC");
        assert_eq!(
            (h.base_offset, h.partition_leader_epoch, h.max_timestamp),
            (12345, 7, 99)
        );
    }

    if let Ok(codec) = Compression::from_id((mode >> 1) % 5) {
        let magic = ((mode >> 4) % 3) as i8;
        let mut budget = Budget::new(LIMIT);
        let out = decompress(codec, magic, data, &mut budget);
        corrupt_record_only(&out);
        if let Ok(out) = out {
            assert!(out.len() <= LIMIT);
        }
    }
});
