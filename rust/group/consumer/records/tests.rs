use super::*;
use crate::rng::Rng;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const T: TopicId = *b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10";

/// A record as Kafka writes it: the key's type (or the value's version 0) before the struct
/// bytes of Kafka 4.4's generated classes (`ConsumerGroup*Key/Value.write`).
fn kafkas(record_type: &str, key: &str, value: &str) -> (Vec<u8>, Vec<u8>) {
    (
        hex(&format!("{record_type}{key}")),
        hex(&format!("0000{value}")),
    )
}

fn same_bytes(r: &ConsumerGroupRecord, key: &[u8], value: &[u8]) {
    assert_eq!(r.key().unwrap(), key);
    assert_eq!(r.value().unwrap().as_deref(), Some(value));
}

#[test]
fn current_member_assignment_bytes_are_kafkas() {
    // Member "m" of group "g": epoch 5 (previous 4), unrevoked partitions; owns 0 and 1 of the
    // topic, assigned at epochs 3 and 5, gives back 2, assigned at 4: each topic's
    // AssignmentEpochs as Kafka 4.3+ writes them, a tagged field (tag 0, 9 and 5 bytes).
    let (key, value) = kafkas(
        "0008",
        "00016700016d",
        "000000050000000401020102030405060708090a0b0c0d0e0f10030000000000000001010009030000000300000005020102030405060708090a0b0c0d0e0f100200000002010005020000000400",
    );
    let r = ConsumerGroupRecord::read(&key, Some(&value))
        .unwrap()
        .unwrap();
    let ConsumerGroupRecord::CurrentMemberAssignment {
        group,
        member,
        value: Some(c),
    } = &r
    else {
        panic!("{r:?}")
    };
    assert_eq!((group.as_str(), member.as_str()), ("g", "m"));
    assert_eq!(
        (c.member_epoch, c.previous_member_epoch, c.state),
        (5, 4, MemberState::UnrevokedPartitions)
    );
    assert_eq!(c.assigned_partitions.get(&T), &[0, 1]);
    assert_eq!(c.partitions_pending_revocation.get(&T), &[2]);
    assert_eq!(
        [0, 1, 2].map(|p| c.assignment_epochs.get(&(T, p)).copied()),
        [Some(3), Some(5), Some(4)]
    );
    same_bytes(&r, &key, &value);
}

// A record of Kafka before 4.3 has no assignment epochs: its partitions are read as assigned at
// the member epoch (Kafka's assignmentFromTopicPartitions), and written back with them.
#[test]
fn a_current_assignment_without_epochs_reads_them_as_the_member_epoch() {
    let (key, value) = kafkas(
        "0008",
        "00016700016d",
        "000000050000000401020102030405060708090a0b0c0d0e0f1003000000000000000100020102030405060708090a0b0c0d0e0f1002000000020000",
    );
    let r = ConsumerGroupRecord::read(&key, Some(&value))
        .unwrap()
        .unwrap();
    let ConsumerGroupRecord::CurrentMemberAssignment { value: Some(c), .. } = &r else {
        panic!("{r:?}")
    };
    assert_eq!(
        [0, 1, 2].map(|p| c.assignment_epochs.get(&(T, p)).copied()),
        [Some(5), Some(5), Some(5)]
    );
    // A static member away (-2): as 0, never below.
    let mut away = value.clone();
    away[2..6].copy_from_slice(&(-2i32).to_be_bytes());
    let r = ConsumerGroupRecord::read(&key, Some(&away))
        .unwrap()
        .unwrap();
    let ConsumerGroupRecord::CurrentMemberAssignment { value: Some(c), .. } = &r else {
        panic!("{r:?}")
    };
    assert_eq!(c.member_epoch, -2);
    assert_eq!(c.assignment_epochs.get(&(T, 0)), Some(&0));
}

#[test]
fn group_metadata_bytes_are_kafkas() {
    // Epoch 7 with a metadata hash: a tagged field (tag 0, 8 bytes).
    let (key, value) = kafkas("0003", "000167", "000000070100081122334455667788");
    let r = ConsumerGroupRecord::read(&key, Some(&value))
        .unwrap()
        .unwrap();
    assert_eq!(
        r,
        ConsumerGroupRecord::Metadata {
            group: "g".into(),
            value: Some((7, 0x1122_3344_5566_7788)),
        }
    );
    same_bytes(&r, &key, &value);
}

#[test]
fn member_metadata_bytes_are_kafkas() {
    // No instance id, rack "r", client "c" at "/127.0.0.1", topics a and b, no regex, a
    // rebalance timeout of 300 s, the range assignor.
    let (key, value) = kafkas(
        "0005",
        "00016700016d",
        "00027202630b2f3132372e302e302e31030261026200000493e00672616e676500",
    );
    let r = ConsumerGroupRecord::read(&key, Some(&value))
        .unwrap()
        .unwrap();
    let expected = MemberMetadata {
        instance_id: None,
        rack_id: Some("r".into()),
        client_id: "c".into(),
        client_host: "/127.0.0.1".into(),
        subscribed_topic_names: vec!["a".into(), "b".into()],
        subscribed_topic_regex: None,
        rebalance_timeout_ms: 300_000,
        server_assignor: Some("range".into()),
        classic_member_metadata: None,
    };
    assert_eq!(
        r,
        ConsumerGroupRecord::MemberMetadata {
            group: "g".into(),
            member: "m".into(),
            value: Some(expected),
        }
    );
    same_bytes(&r, &key, &value);
}

#[test]
fn classic_member_metadata_bytes_are_kafkas() {
    // A classic-protocol member: the tagged, nullable struct with its marker byte (1), session
    // timeout 45 s and the protocol "range" with metadata [9]. From Kafka 4.4's
    // ConsumerGroupMemberMetadataValue (client "c", host "h", topic "t").
    let value = hex("000001010263026802027401ffffffff01010010010000afc8020672616e676502090000");
    let key = hex("000500016700016d");
    let r = ConsumerGroupRecord::read(&key, Some(&value))
        .unwrap()
        .unwrap();
    let ConsumerGroupRecord::MemberMetadata { value: Some(m), .. } = &r else {
        panic!("{r:?}")
    };
    let c = m.classic_member_metadata.as_ref().unwrap();
    assert_eq!(c.session_timeout_ms, 45_000);
    assert_eq!(c.supported_protocols[0].name, "range");
    assert_eq!(c.supported_protocols[0].metadata, vec![9]);
    same_bytes(&r, &key, &value);
}

#[test]
fn regular_expression_bytes_are_kafkas() {
    // The value from Kafka 4.4's ConsumerGroupRegularExpressionValue; the key is two INT16
    // strings, "g" and ".*".
    let (key, value) = kafkas(
        "0010",
        "00016700022e2a",
        "02037431000000000000000a000000000000001400",
    );
    let r = ConsumerGroupRecord::read(&key, Some(&value))
        .unwrap()
        .unwrap();
    assert_eq!(
        r,
        ConsumerGroupRecord::RegularExpression {
            group: "g".into(),
            regex: ".*".into(),
            value: Some(ResolvedRegex {
                topics: vec!["t1".into()],
                version: 10,
                timestamp: 20,
            }),
        }
    );
    same_bytes(&r, &key, &value);
}

fn every_kind() -> Vec<ConsumerGroupRecord> {
    let mut m = ConsumerMember::new("member-1");
    m.instance_id = Some("instance".into());
    m.client_id = "client".into();
    m.client_host = "/10.0.0.1".into();
    m.subscribed_topic_names = ["b".to_string(), "a".to_string()].into_iter().collect();
    m.subscribed_topic_regex = "t.*".into();
    m.rebalance_timeout_ms = 1_000;
    m.member_epoch = 3;
    m.previous_member_epoch = 2;
    m.state = MemberState::UnreleasedPartitions;
    m.hold(
        [(T, vec![3, 1])].into_iter().collect(),
        Assignment::new(),
        2,
    );
    m.classic_member_metadata = Some(ClassicMemberMetadata {
        session_timeout_ms: 10_000,
        supported_protocols: vec![ClassicProtocol {
            name: "cooperative-sticky".into(),
            metadata: vec![0, 1, 2],
        }],
    });
    let (g, id) = ("group".to_string(), m.member_id.clone());
    vec![
        ConsumerGroupRecord::Metadata {
            group: g.clone(),
            value: Some((4, -9)),
        },
        ConsumerGroupRecord::PartitionMetadata {
            group: g.clone(),
            present: true,
        },
        ConsumerGroupRecord::MemberMetadata {
            group: g.clone(),
            member: id.clone(),
            value: Some(MemberMetadata::of(&m)),
        },
        ConsumerGroupRecord::TargetAssignmentMetadata {
            group: g.clone(),
            value: Some((4, 1_700_000_000_123)),
        },
        ConsumerGroupRecord::TargetAssignmentMember {
            group: g.clone(),
            member: id.clone(),
            value: Some(m.assigned_partitions.clone()),
        },
        ConsumerGroupRecord::CurrentMemberAssignment {
            group: g.clone(),
            member: id.clone(),
            value: Some(CurrentAssignment::of(&m)),
        },
        ConsumerGroupRecord::RegularExpression {
            group: g,
            regex: "t.*".into(),
            value: Some(ResolvedRegex {
                topics: vec!["t1".into(), "t2".into()],
                version: 1,
                timestamp: 2,
            }),
        },
    ]
}

fn tombstone(r: &ConsumerGroupRecord) -> ConsumerGroupRecord {
    let mut r = r.clone();
    match &mut r {
        ConsumerGroupRecord::Metadata { value, .. } => *value = None,
        ConsumerGroupRecord::PartitionMetadata { present, .. } => *present = false,
        ConsumerGroupRecord::MemberMetadata { value, .. } => *value = None,
        ConsumerGroupRecord::TargetAssignmentMetadata { value, .. } => *value = None,
        ConsumerGroupRecord::TargetAssignmentMember { value, .. } => *value = None,
        ConsumerGroupRecord::CurrentMemberAssignment { value, .. } => *value = None,
        ConsumerGroupRecord::RegularExpression { value, .. } => *value = None,
    }
    r
}

#[test]
fn every_kind_round_trips_and_so_does_its_tombstone() {
    for r in every_kind() {
        for r in [tombstone(&r), r] {
            let (key, value) = (r.key().unwrap(), r.value().unwrap());
            assert_eq!(value.is_none(), r.is_tombstone());
            let back = ConsumerGroupRecord::read(&key, value.as_deref())
                .unwrap()
                .unwrap();
            assert_eq!(back, r);
            assert_eq!(back.group(), "group");
        }
    }
}

#[test]
fn the_member_survives_its_two_records() {
    let ConsumerGroupRecord::MemberMetadata {
        value: Some(meta), ..
    } = &every_kind()[2]
    else {
        unreachable!()
    };
    let ConsumerGroupRecord::CurrentMemberAssignment {
        value: Some(current),
        ..
    } = &every_kind()[5]
    else {
        unreachable!()
    };
    let mut m = ConsumerMember::new("member-1");
    meta.apply(&mut m);
    current.apply(&mut m);
    assert_eq!(MemberMetadata::of(&m), *meta);
    assert_eq!(CurrentAssignment::of(&m), *current);
    assert_eq!(m.subscribed_topic_regex, "t.*");
    assert_eq!(m.assigned_partitions.get(&T), &[1, 3]);
}

#[test]
fn other_record_types_are_not_a_consumer_groups() {
    // Offset commits (0, 1), classic group metadata (2), share groups (9-15), streams (17+).
    for t in [0i16, 1, 2, 9, 10, 15, 17, 23] {
        let key = [t.to_be_bytes().as_slice(), &[0, 1, b'g']].concat();
        assert_eq!(ConsumerGroupRecord::read(&key, None).unwrap(), None, "{t}");
    }
}

#[test]
fn bad_records_are_errors_not_panics() {
    let r = &every_kind()[5];
    let (key, value) = (r.key().unwrap(), r.value().unwrap().unwrap());
    assert!(ConsumerGroupRecord::read(&key[..1], None).is_err());
    assert!(ConsumerGroupRecord::read(&key[..key.len() - 1], None).is_err());
    assert!(ConsumerGroupRecord::read(&key, Some(&value[..1])).is_err());
    assert!(ConsumerGroupRecord::read(&key, Some(&value[..value.len() - 1])).is_err());
    let negative = [&[0xff, 0xff][..], &value[2..]].concat();
    assert!(ConsumerGroupRecord::read(&key, Some(&negative)).is_err());
    // Arbitrary bytes after a consumer group type: an answer or an error, never a panic.
    let mut rng = Rng::new(Some(7));
    for _ in 0..20_000 {
        let t = [3i16, 4, 5, 6, 7, 8, 16][(rng.next_u64() % 7) as usize];
        let n = (rng.next_u64() % 40) as usize;
        let mut key = t.to_be_bytes().to_vec();
        key.extend((0..n).map(|_| rng.next_u64() as u8));
        let m = (rng.next_u64() % 60) as usize;
        let value: Vec<u8> = (0..m).map(|_| rng.next_u64() as u8).collect();
        let _ = ConsumerGroupRecord::read(&key, Some(&value));
        let _ = ConsumerGroupRecord::read(&key, None);
    }
}
