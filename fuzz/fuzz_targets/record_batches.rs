//! Fuzz target: record batch decoding (all magics, all codecs), the in-place header rewrites
//! and the codecs on their own. The first input byte picks options; the rest is the buffer.
//! Properties: no panic; every error is `Error::Decode`; a decoded v2 batch that encodes again
//! decodes back to itself.
#![no_main]

use kgroup::error::Error;
use kgroup::protocol::records::compression::{decompress, Budget, Compression};
use kgroup::protocol::records::{
    batches, decode_batches, set_base_offset, set_max_timestamp, set_partition_leader_epoch, BatchHeader,
    DecodeOptions, TimestampType,
};
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;

fn decode_error_only<T: std::fmt::Debug>(r: &Result<T, Error>) {
    if let Err(e) = r {
        assert!(matches!(e, Error::Decode(_)), "not a decode error: {e:?}");
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, data)) = input.split_first() else { return };
    let opts = DecodeOptions { max_decompressed_size: LIMIT, verify_crc: mode & 1 == 1 };

    let decoded = decode_batches(data, &opts);
    decode_error_only(&decoded);
    if let Ok(batches) = decoded {
        for b in batches.iter().filter(|b| b.magic == 2) {
            // Encoding may refuse what decoding accepted (offsets or timestamps out of range).
            let Ok(again) = b.encode(None) else { continue };
            let back = decode_batches(&again, &DecodeOptions { max_decompressed_size: usize::MAX, verify_crc: true })
                .expect("a re-encoded batch decodes");
            assert_eq!(back.len(), 1);
            assert_eq!(&back[0], b);
        }
    }

    for raw in batches(data) {
        decode_error_only(&raw);
        let Ok(raw) = raw else { break };
        if raw.magic == 2 {
            decode_error_only(&BatchHeader::parse(raw.bytes));
        }
    }

    let mut copy = data.to_vec();
    decode_error_only(&set_base_offset(&mut copy, 12345));
    decode_error_only(&set_partition_leader_epoch(&mut copy, 7));
    let r = set_max_timestamp(&mut copy, TimestampType::LogAppendTime, 99);
    decode_error_only(&r);
    if r.is_ok() && BatchHeader::parse_with(data, true).is_ok() {
        // A valid batch stays valid after the rewrites.
        let h = BatchHeader::parse(&copy).expect("rewritten batch keeps a valid CRC");
        assert_eq!((h.base_offset, h.partition_leader_epoch, h.max_timestamp), (12345, 7, 99));
    }

    if let Ok(codec) = Compression::from_id((mode >> 1) % 5) {
        let magic = ((mode >> 4) % 3) as i8;
        let mut budget = Budget::new(LIMIT);
        let out = decompress(codec, magic, data, &mut budget);
        decode_error_only(&out);
        if let Ok(out) = out {
            assert!(out.len() <= LIMIT);
        }
    }
});
