//! Persistence: what the coordinator writes to `__consumer_offsets`, and loading it back
//! (GroupMetadataManagerTest's load and serialisation tests).

use std::sync::Arc;

use super::*;
use crate::group::records::*;
use crate::protocol::records::{
    decode_batches, DecodeOptions, EndTransactionMarker, Record, RecordBatch,
};
use ErrorCode::*;

fn batch(records: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Vec<u8> {
    let mut b = RecordBatch {
        records: records
            .into_iter()
            .enumerate()
            .map(|(i, (k, v))| Record {
                offset: i as i64,
                timestamp: 1,
                key: Some(k),
                value: v,
                headers: Vec::new(),
            })
            .collect(),
        ..RecordBatch::default()
    };
    b.derive_from_records().unwrap();
    b.encode(Option::None).unwrap()
}

fn offset_record(
    group: &str,
    topic: &str,
    p: i32,
    offset: Option<i64>,
) -> (Vec<u8>, Option<Vec<u8>>) {
    (
        offset_commit_key(group, topic, p).unwrap(),
        offset.map(|o| {
            offset_commit_value(&OffsetAndMetadata {
                offset: o,
                leader_epoch: -1,
                metadata: Arc::from(""),
                commit_timestamp: 1,
                expire_timestamp: Option::None,
            })
            .unwrap()
        }),
    )
}

fn member_record(id: &str, instance: Option<&str>) -> MemberRecord {
    MemberRecord {
        member_id: Arc::from(id),
        group_instance_id: instance.map(Arc::from),
        client_id: Arc::from("clientId"),
        client_host: Arc::from("/127.0.0.1"),
        rebalance_timeout: REBALANCE,
        session_timeout: SESSION,
        subscription: Arc::from(&b"metadata"[..]),
        assignment: Arc::from(&b"assignment"[..]),
    }
}

fn group_record(
    group: &str,
    generation: i32,
    members: Vec<MemberRecord>,
) -> (Vec<u8>, Option<Vec<u8>>) {
    let leader = members.first().map(|m| m.member_id.clone());
    (
        group_metadata_key(group).unwrap(),
        Some(
            group_metadata_value(&GroupMetadataValue {
                protocol_type: Arc::from("consumer"),
                generation,
                protocol: Some(Arc::from("range")),
                leader,
                current_state_timestamp: 0,
                members,
            })
            .unwrap(),
        ),
    )
}

fn load(h: &mut H, group: &str, data: &[u8]) -> LoadStats {
    let p = h.c.partition_for(group);
    h.c.load(p, data, true).unwrap()
}

/// records reads every record the harness has seen written.
/// Written is (partition, key, value).
type Written = (i32, Option<Vec<u8>>, Option<Vec<u8>>);

fn written_records(h: &H) -> Vec<Written> {
    h.written
        .iter()
        .flat_map(|(p, b)| {
            decode_batches(b, &DecodeOptions::default())
                .unwrap()
                .into_iter()
                .flat_map(move |b| b.records.into_iter().map(move |r| (*p, r.key, r.value)))
        })
        .collect()
}

// What a rebalance writes: the group's metadata (v3) with every assignment at the leader's sync,
// in the group's partition; offsets as OffsetCommitKey v1 / OffsetCommitValue v3.
#[test]
fn the_coordinator_writes_kafkas_records() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    assert_eq!(h.commit(&m, gen, &[("topic", 3, 42)]), [None]);
    let records = written_records(&h);
    let p = h.c.partition_for(GROUP);
    assert!(records.iter().all(|(rp, _, _)| *rp == p));
    let (_, k, v) = &records[0];
    assert_eq!(
        read_key(k.as_deref().unwrap()).unwrap(),
        RecordKey::GroupMetadata {
            group: GROUP.into()
        }
    );
    let v = v.as_deref().unwrap();
    assert_eq!(&v[..2], &[0, 3]);
    let g = read_group_metadata_value(v).unwrap();
    assert_eq!(
        (g.generation, g.protocol.as_deref(), g.leader.as_deref()),
        (gen, Some("range"), Some(m.as_str()))
    );
    assert_eq!(&*g.members[0].assignment, b"assignment");
    assert_eq!(&*g.members[0].subscription, b"metadata");
    assert_eq!(
        (g.members[0].session_timeout, g.members[0].rebalance_timeout),
        (SESSION, REBALANCE)
    );
    let (_, k, v) = &records[1];
    assert_eq!(
        read_key(k.as_deref().unwrap()).unwrap(),
        RecordKey::OffsetCommit {
            group: GROUP.into(),
            topic: "topic".into(),
            partition: 3
        }
    );
    let v = v.as_deref().unwrap();
    assert_eq!(&v[..2], &[0, 3]);
    assert_eq!(read_offset_commit_value(v).unwrap().offset, 42);
    // Batches are plain v2 batches a log takes as they are: CRC valid, no producer.
    let b = &decode_batches(&h.written[0].1, &DecodeOptions::default()).unwrap()[0];
    assert_eq!((b.magic, b.producer_id, b.base_offset), (2, -1, 0));
}

// A group that becomes Empty writes its metadata without members.
#[test]
fn an_empty_group_writes_its_metadata_without_members() {
    let mut h = H::new();
    let (m, _) = h.stable_group();
    h.leave(&[(&m, Option::None)]);
    let (_, _, v) = written_records(&h).pop().unwrap();
    let g = read_group_metadata_value(v.as_deref().unwrap()).unwrap();
    assert_eq!(
        (g.generation, g.protocol.as_deref(), g.members.len()),
        (2, Option::None, 0)
    );
    assert!(g.current_state_timestamp >= 0);
}

// A restart: replaying what one coordinator wrote rebuilds every group, generation, member and
// committed offset in another.
#[test]
fn replaying_the_log_rebuilds_groups_and_offsets() {
    let mut h = H::new();
    let ((leader, li), (follower, fi), gen) = h.static_stable_group();
    assert_eq!(
        h.commit(&leader, gen, &[("t", 0, 7), ("t", 1, 8)]),
        [None, None]
    );
    let t = h.commit_full(
        2,
        "simple",
        "",
        Option::None,
        -1,
        &[("u", 0, 9, Option::None)],
    );
    assert_eq!(h.commit_errors(t), [None]);
    let mut by_partition: BTreeMap<i32, Vec<u8>> = BTreeMap::new();
    for (p, b) in &h.written {
        by_partition.entry(*p).or_default().extend_from_slice(b);
    }
    let mut r = H::new();
    for (p, data) in &by_partition {
        r.c.load(*p, data, true).unwrap();
    }
    r.now = h.now;
    assert_eq!(r.state(), Some(GroupState::Stable));
    let d = r.describe(GROUP);
    assert_eq!(d.members.len(), 2);
    assert_eq!(d.members[0].member_id.as_ref(), leader.as_str());
    assert_eq!(&*d.members[1].member_assignment, b"follower-assignment");
    assert_eq!(r.offset("t", 1), (8, None));
    assert_eq!(
        r.fetch_in("simple", Option::None, false).topics[0].partitions[0].committed_offset,
        9
    );
    assert_eq!(r.c.group_state("simple"), Some(GroupState::Empty));
    // Members carry on where they were: same generation, same ids.
    assert_eq!(r.heartbeat_in(GROUP, &follower, Some(&fi), gen), None);
    assert_eq!(r.heartbeat_in(GROUP, &leader, Some(&li), gen), None);
    // A restarted follower gets its assignment back without a rebalance.
    let j = r.join(&Join::new("").instance(&fi));
    let jr = r.join_response(j).clone();
    assert_eq!((jr.error(), jr.generation_id), (None, gen));
    let s = r.sync_static(gen, &jr.member_id, &fi, &[]);
    assert_eq!(&*r.sync_response(s).assignment, b"follower-assignment");
}

// Loaded members' sessions start at the first clock after the load: a member that never comes
// back is removed a session later (Kafka's onGroupLoaded).
#[test]
fn loaded_members_must_heartbeat() {
    let mut h = H::new();
    let data = batch(vec![group_record(
        GROUP,
        3,
        vec![member_record("m", Option::None)],
    )]);
    load(&mut h, GROUP, &data);
    assert_eq!(h.c.next_deadline(), Some(i64::MIN));
    h.advance(0);
    assert_eq!(h.c.next_deadline(), Some(SESSION as i64));
    h.advance(SESSION as i64);
    assert_eq!(h.state(), Some(GroupState::Empty));
}

// testLoadOffsetsWithTombstones / testLoadGroupWithTombstone / testLoadOffsetsAndGroup: the last
// record per key wins; a tombstone removes.
#[test]
fn test_load_offsets_and_group_with_tombstones() {
    let mut h = H::new();
    let data = [
        batch(vec![
            offset_record(GROUP, "t", 0, Some(1)),
            offset_record(GROUP, "t", 1, Some(1)),
            group_record(GROUP, 1, vec![member_record("m1", Option::None)]),
        ]),
        batch(vec![
            offset_record(GROUP, "t", 0, Some(2)),
            offset_record(GROUP, "t", 1, Option::None),
            group_record(GROUP, 2, vec![member_record("m2", Option::None)]),
            group_record("gone", 1, vec![]),
        ]),
        batch(vec![(group_metadata_key("gone").unwrap(), Option::None)]),
    ]
    .concat();
    let stats = load(&mut h, GROUP, &data);
    assert_eq!((stats.batches, stats.records), (3, 8));
    assert_eq!(h.offset("t", 0), (2, None));
    assert_eq!(h.offset("t", 1), (-1, None));
    let d = h.describe(GROUP);
    assert_eq!(d.members.len(), 1);
    assert_eq!(d.members[0].member_id.as_ref(), "m2");
    if h.c.partition_for("gone") == h.c.partition_for(GROUP) {
        assert_eq!(h.c.group_state("gone"), Option::None);
    }
    assert_eq!(h.heartbeat("m2", 2), None);
}

// A group whose metadata was tombstoned but that still has offsets loads as a simple group.
#[test]
fn a_tombstoned_group_with_offsets_loads_as_a_simple_group() {
    let mut h = H::new();
    let data = batch(vec![
        group_record(GROUP, 1, vec![member_record("m", Option::None)]),
        offset_record(GROUP, "t", 0, Some(5)),
        (group_metadata_key(GROUP).unwrap(), Option::None),
    ]);
    load(&mut h, GROUP, &data);
    assert_eq!(h.state(), Some(GroupState::Empty));
    assert_eq!(h.describe(GROUP).protocol_type.as_ref(), "");
    assert_eq!(h.offset("t", 0), (5, None));
}

// testLoadGroupsAndOffsetsWillIgnoreUnknownMessage: records of other types (streams groups,
// anything newer) are skipped. (Consumer groups' types 3-8 and 16 are read: see consumer.rs;
// share groups' 10-15: share/tests.rs.)
#[test]
fn test_load_groups_and_offsets_will_ignore_unknown_message() {
    let mut h = H::new();
    let data = batch(vec![
        (vec![0, 17, 0, 1, b'x'], Some(vec![0, 0, 1, 2, 3])),
        offset_record(GROUP, "t", 0, Some(1)),
        (vec![0, 42], Option::None),
    ]);
    let stats = load(&mut h, GROUP, &data);
    assert_eq!((stats.records, stats.unknown), (3, 2));
    assert_eq!(h.offset("t", 0), (1, None));
}

// testLoadGroupWithLargeGroupMetadataRecord: a group of many members with large metadata loads.
#[test]
fn test_load_group_with_large_group_metadata_record() {
    let mut h = H::new();
    let members: Vec<MemberRecord> = (0..50)
        .map(|i| {
            let mut m = member_record(&format!("member-{i}"), Option::None);
            m.subscription = Arc::from(vec![7u8; 20_000]);
            m
        })
        .collect();
    let data = batch(vec![group_record(GROUP, 7, members)]);
    assert!(data.len() > 1_000_000);
    load(&mut h, GROUP, &data);
    assert_eq!(h.describe(GROUP).members.len(), 50);
}

// Offsets committed in a transaction count once its commit marker is read; an abort drops them.
#[test]
fn transactional_offsets_count_once_committed() {
    let txn = |pid: i64, records: Vec<(Vec<u8>, Option<Vec<u8>>)>| {
        let mut b = RecordBatch {
            records: records
                .into_iter()
                .enumerate()
                .map(|(i, (k, v))| Record {
                    offset: i as i64,
                    timestamp: 1,
                    key: Some(k),
                    value: v,
                    headers: vec![],
                })
                .collect(),
            ..RecordBatch::default()
        };
        b.fields.producer_id = pid;
        b.fields.producer_epoch = 0;
        b.fields.base_sequence = 0;
        b.fields.is_transactional = true;
        b.derive_from_records().unwrap();
        b.encode(Option::None).unwrap()
    };
    let marker = |pid: i64, commit: bool| {
        EndTransactionMarker {
            commit,
            coordinator_epoch: 0,
        }
        .batch(10, 1, 0, pid, 0)
        .encode(Option::None)
        .unwrap()
    };
    let mut h = H::new();
    let data = [
        txn(1, vec![offset_record(GROUP, "t", 0, Some(11))]),
        txn(2, vec![offset_record(GROUP, "t", 1, Some(22))]),
        marker(1, true),
        marker(2, false),
    ]
    .concat();
    load(&mut h, GROUP, &data);
    assert_eq!(h.offset("t", 0), (11, None));
    assert_eq!(h.offset("t", 1), (-1, None));
}

// A partition loads in chunks; until the last one its groups answer COORDINATOR_LOAD_IN_PROGRESS.
#[test]
fn a_partition_loads_in_chunks() {
    let mut h = H::new();
    let p = h.c.partition_for(GROUP);
    h.c.load(
        p,
        &batch(vec![offset_record(GROUP, "t", 0, Some(1))]),
        false,
    )
    .unwrap();
    assert_eq!(
        h.fetch_in(GROUP, Option::None, false).error(),
        CoordinatorLoadInProgress
    );
    h.c.load(p, &batch(vec![offset_record(GROUP, "t", 0, Some(2))]), true)
        .unwrap();
    assert_eq!(h.offset("t", 0), (2, None));
}

// Bytes that are not record batches fail the load; nothing of it stays.
#[test]
fn a_corrupt_log_fails_the_load() {
    let mut h = H::new();
    let mut data = batch(vec![offset_record(GROUP, "t", 0, Some(1))]);
    let n = data.len();
    data[n - 1] ^= 0xff;
    let p = h.c.partition_for(GROUP);
    assert!(h.c.load(p, &data, true).is_err());
    assert_eq!(h.state(), Option::None);
    // A record whose value does not decode.
    let bad = batch(vec![(
        offset_commit_key(GROUP, "t", 0).unwrap(),
        Some(vec![0, 3, 1]),
    )]);
    assert!(h.c.load(p, &bad, true).is_err());
    // The partition is served afterwards.
    assert_eq!(h.offset("t", 0), (-1, None));
}

// Loading a group above group.max.size rebalances it (Kafka's onGroupLoaded).
#[test]
fn a_loaded_group_above_max_size_rebalances() {
    let mut c = config();
    c.max_size = 1;
    let mut h = H::with(c);
    let data = batch(vec![group_record(
        GROUP,
        1,
        vec![
            member_record("a", Option::None),
            member_record("b", Option::None),
        ],
    )]);
    load(&mut h, GROUP, &data);
    h.advance(0);
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
}

// Offsets expire by the retention of the loaded records too, with tombstones.
#[test]
fn loaded_offsets_expire() {
    let mut c = config();
    c.offsets_retention_ms = 60_000;
    c.offsets_retention_check_interval_ms = 1_000;
    let mut h = H::with(c);
    load(
        &mut h,
        GROUP,
        &batch(vec![offset_record(GROUP, "t", 0, Some(1))]),
    );
    // The retention check runs every second from the first clock.
    h.advance(0);
    h.advance(59_000);
    assert_eq!(h.offset("t", 0), (1, None));
    h.advance(2_000);
    assert_eq!(h.offset("t", 0), (-1, None));
    assert_eq!(h.state(), Option::None);
}
