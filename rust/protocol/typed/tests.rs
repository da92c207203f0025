//! The typed messages against the generic codec: the same bytes in, the same bytes out, at
//! every version of every message, for random bodies and for damaged ones.

use super::generate::modules;
use super::reencode;
use crate::protocol::codec::{decode_message, encode_to_vec};
use crate::protocol::random::Gen;
use crate::protocol::schema::Message;
use crate::rng::Rng;

fn every_message() -> Vec<&'static Message> {
    modules().into_iter().flat_map(|m| m.messages).collect()
}

/// The generic codec's bytes of a random body decode with the typed code and encode back to the
/// same bytes, at every version, tagged fields (known and unknown) included.
#[test]
fn typed_encoding_equals_the_generic_codecs() {
    let mut gen = Gen::new(20);
    let mut checked = 0;
    for msg in every_message() {
        for version in msg.valid.lo..=msg.valid.hi {
            for _ in 0..40 {
                let body = gen.body(msg, version);
                let bytes = encode_to_vec(msg, version, &body).expect("generic encode");
                let typed = reencode(msg.name, version, &bytes)
                    .unwrap_or_else(|| panic!("{} has no typed code", msg.name))
                    .unwrap_or_else(|e| panic!("{} v{version}: {e}", msg.name));
                assert_eq!(typed, bytes, "{} v{version}", msg.name);
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}

/// Damaged bytes (cut short, a byte changed, bytes added) are refused by the typed code exactly
/// when the generic codec refuses them, and what both accept re-encodes to the same bytes.
#[test]
fn typed_decoding_accepts_what_the_generic_codec_accepts() {
    let mut gen = Gen::new(21);
    let mut rng = Rng::new(Some(22));
    let (mut accepted, mut refused) = (0, 0);
    for msg in every_message() {
        for version in msg.valid.lo..=msg.valid.hi {
            for _ in 0..25 {
                let body = gen.body(msg, version);
                let mut bytes = encode_to_vec(msg, version, &body).expect("generic encode");
                match rng.next_u64() % 3 {
                    0 if !bytes.is_empty() => {
                        let n = (rng.next_u64() as usize) % bytes.len();
                        bytes.truncate(n);
                    }
                    1 if !bytes.is_empty() => {
                        let i = (rng.next_u64() as usize) % bytes.len();
                        bytes[i] = rng.next_u64() as u8;
                    }
                    _ => bytes.push(rng.next_u64() as u8),
                }
                let generic = decode_message(msg, version, &bytes)
                    .and_then(|s| encode_to_vec(msg, version, &s));
                let typed = reencode(msg.name, version, &bytes).expect("typed code");
                match (&generic, &typed) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!(a, b, "{} v{version}", msg.name);
                        accepted += 1;
                    }
                    (Err(_), Err(_)) => refused += 1,
                    _ => panic!(
                        "{} v{version} on {bytes:02x?}: generic {:?}, typed {:?}",
                        msg.name,
                        generic.as_ref().map(|_| ()),
                        typed.as_ref().map(|_| ())
                    ),
                }
            }
        }
    }
    assert!(accepted > 1000 && refused > 1000, "{accepted} {refused}");
}

/// Arbitrary bytes never panic the typed decoders.
#[test]
fn typed_decoders_survive_arbitrary_bytes() {
    let mut rng = Rng::new(Some(23));
    for msg in every_message() {
        for version in msg.valid.lo..=msg.valid.hi {
            for _ in 0..30 {
                let n = (rng.next_u64() % 64) as usize;
                let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
                let _ = reencode(msg.name, version, &bytes);
            }
        }
    }
}

/// Errors name the message, the version and the field, as the generic codec's do.
#[test]
fn typed_errors_say_where() {
    use super::join_group::JoinGroupRequest;
    // group_id "ab", then the body stops.
    let e = JoinGroupRequest::decode(&[0, 2, b'a', b'b'], 5).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("JoinGroupRequest v5"), "{text}");
    assert!(text.contains("session_timeout_ms"), "{text}");
    let e = JoinGroupRequest::decode(&[], 10).unwrap_err();
    assert!(e.to_string().contains("10"), "{e}");
}

/// A nullable struct, ConsumerGroupHeartbeatResponse's assignment, as Kafka writes it: a marker
/// byte, -1 for null and 1 before a struct. Bytes from Kafka 4.4's
/// `ConsumerGroupHeartbeatResponseData.write` at v1 (member id "m", epoch 3, interval 5000;
/// then an assignment of topic 0102..10, partitions 0 and 2).
#[test]
fn nullable_struct_bytes_are_kafkas() {
    use super::consumer_group_heartbeat::*;
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let null = hex("00000000000000026d0000000300001388ff00");
    let some = hex(
        "00000000000000026d000000030000138801020102030405060708090a0b0c0d0e0f10030000000000000002000000",
    );
    let msg = ConsumerGroupHeartbeatResponse::MESSAGE;
    let r = ConsumerGroupHeartbeatResponse::decode(&null, 1).unwrap();
    assert_eq!(
        (
            r.member_id.as_deref(),
            r.member_epoch,
            r.heartbeat_interval_ms
        ),
        (Some("m"), 3, 5000)
    );
    assert!(r.assignment.is_none());
    assert_eq!(r.to_vec(1).unwrap(), null);
    let r = ConsumerGroupHeartbeatResponse::decode(&some, 1).unwrap();
    let a = r.assignment.as_ref().unwrap();
    assert_eq!(a.topic_partitions.len(), 1);
    assert_eq!(
        a.topic_partitions[0].topic_id,
        *b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"
    );
    assert_eq!(a.topic_partitions[0].partitions, vec![0, 2]);
    assert_eq!(r.to_vec(1).unwrap(), some);
    // The generic codec agrees, both ways.
    for bytes in [&null, &some] {
        let s = decode_message(msg, 1, bytes).unwrap();
        assert_eq!(&encode_to_vec(msg, 1, &s).unwrap(), bytes);
    }
    // A marker and nothing after it is cut short, not a null.
    assert!(ConsumerGroupHeartbeatResponse::decode(&some[..20], 1).is_err());
}

/// The share group records (KIP-932) Apache Kafka 4.4 wrote to `__consumer_offsets` and
/// `__share_group_state` (`tests/protocol/share_frames/records/<Schema>-<i>.bin`, read from its
/// log segments by `tests/support/share_capture.py`; each starts with its INT16 version) decode
/// with their schema and encode back to the same bytes, with the generic codec and the typed
/// code; every share record schema has such a record.
#[test]
fn kafkas_share_group_records_round_trip() {
    use crate::protocol::messages::coordinator_records::RECORDS;
    use std::collections::BTreeSet;

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/protocol/share_frames/records");
    let mut covered = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("the captured records") {
        let path = entry.expect("a directory entry").path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a file name");
        let (name, _) = stem.rsplit_once('-').expect("<Schema>-<i>");
        let msg = RECORDS
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no record schema {name}"));
        let bytes = std::fs::read(&path).expect("a record");
        let version = i16::from_be_bytes([bytes[0], bytes[1]]);
        let rest = &bytes[2..];
        let value = decode_message(msg, version, rest).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(encode_to_vec(msg, version, &value).unwrap(), rest, "{stem}");
        let typed = reencode(msg.name, version, rest).expect("typed code");
        assert_eq!(typed.unwrap(), rest, "{stem}");
        covered.insert(msg.name);
    }
    let share: BTreeSet<_> = RECORDS
        .iter()
        .map(|m| m.name)
        .filter(|n| n.starts_with("Share"))
        .collect();
    assert_eq!(covered, share);
}
