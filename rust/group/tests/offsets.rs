//! Offsets: commits, fetches and expiry (checklist items 31-33, GroupMetadataManagerTest's
//! expiry tests), and commits visible only once appended.

use super::*;
use crate::group::records::{read_key, RecordKey};
use crate::protocol::records::{decode_batches, DecodeOptions};
use ErrorCode::*;

fn simple_commit(h: &mut H, offsets: &[(&str, i32, i64)]) -> Vec<ErrorCode> {
    let o: Vec<_> = offsets
        .iter()
        .map(|(t, p, o)| (*t, *p, *o, Option::None))
        .collect();
    let t = h.commit_full(2, GROUP, "", Option::None, -1, &o);
    h.commit_errors(t)
}

/// tombstoned are the offset keys (group, topic, partition) and group keys written with a null
/// value since the `from`th append.
fn tombstoned(h: &H, from: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (_, batch) in &h.written[from..] {
        for b in decode_batches(batch, &DecodeOptions::default()).unwrap() {
            for r in b.records {
                if r.value.is_some() {
                    continue;
                }
                match read_key(r.key.as_deref().unwrap()).unwrap() {
                    RecordKey::OffsetCommit {
                        group,
                        topic,
                        partition,
                    } => out.push(format!("{group}/{topic}/{partition}")),
                    RecordKey::GroupMetadata { group } => out.push(group.to_string()),
                    RecordKey::Unknown { .. } => {}
                }
            }
        }
    }
    out
}

// testCommitOffsetFromUnknownGroup: a commit with a generation to a group that does not exist;
// v9+ answers GROUP_ID_NOT_FOUND (Kafka's new coordinator).
#[test]
fn test_commit_offset_from_unknown_group() {
    let mut h = H::new();
    let t = h.commit_full(
        8,
        GROUP,
        "memberId",
        Option::None,
        1,
        &[("t", 0, 0, Option::None)],
    );
    assert_eq!(h.commit_errors(t), [IllegalGeneration]);
    let t = h.commit_full(
        9,
        GROUP,
        "memberId",
        Option::None,
        1,
        &[("t", 0, 0, Option::None)],
    );
    assert_eq!(h.commit_errors(t), [GroupIdNotFound]);
    assert_eq!(h.state(), Option::None);
}

// testCommitOffsetWithDefaultGeneration / testFetchOffsets: generation -1 creates a simple group
// (Empty, no protocol type).
#[test]
fn test_commit_offset_with_default_generation() {
    let mut h = H::new();
    let o = [("topic", 0, 97, Some("some metadata"))];
    let t = h.commit_full(2, GROUP, "", Option::None, -1, &o);
    assert_eq!(h.commit_errors(t), [None]);
    assert_eq!(h.state(), Some(GroupState::Empty));
    assert_eq!(h.describe(GROUP).protocol_type.as_ref(), "");
    let g = h.fetch_in(GROUP, Some(&[("topic", &[0])]), false);
    let p = &g.topics[0].partitions[0];
    assert_eq!(
        (
            p.committed_offset,
            p.metadata.as_deref().unwrap(),
            p.error()
        ),
        (97, "some metadata", None)
    );
}

// testCommitOffsetsAfterGroupIsEmpty / testManualCommitOffsetShouldNotValidateMemberIdAndInstanceId
#[test]
fn test_commit_offsets_after_group_is_empty() {
    let mut h = H::new();
    let (m, _) = h.stable_group();
    h.leave(&[(&m, Option::None)]);
    assert_eq!(simple_commit(&mut h, &[("topic", 0, 0)]), [None]);
    assert_eq!(h.offset("topic", 0), (0, None));
    // Generation -1 in an Empty group does not check member or instance ids.
    let t = h.commit_full(
        7,
        GROUP,
        "",
        Some("instance-id"),
        -1,
        &[("topic", 0, 1, Option::None)],
    );
    assert_eq!(h.commit_errors(t), [None]);
    let t = h.commit_full(
        7,
        GROUP,
        "unknown",
        Option::None,
        -1,
        &[("topic", 0, 2, Option::None)],
    );
    assert_eq!(h.commit_errors(t), [None]);
    assert_eq!(h.offset("topic", 0), (2, None));
}

// testOffsetCommitDeadGroup
#[test]
fn test_offset_commit_dead_group() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    h.c.force_state(GROUP, GroupState::Dead);
    assert_eq!(h.commit(&m, gen, &[("t", 0, 1)]), [CoordinatorNotAvailable]);
}

// testCommitOffsetInCompletingRebalance / ...FromUnknownMemberId / ...FromIllegalGeneration
#[test]
fn test_commit_offset_validation() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new(""));
    assert_eq!(
        h.commit(&r.member_id, r.generation_id, &[("t", 0, 1)]),
        [RebalanceInProgress]
    );
    let s = h.sync(r.generation_id, &r.member_id, &[]);
    assert_eq!(h.sync_error(s), None);
    assert_eq!(
        h.commit("unknown", r.generation_id, &[("t", 0, 1)]),
        [UnknownMemberId]
    );
    assert_eq!(
        h.commit(&r.member_id, r.generation_id + 1, &[("t", 0, 1)]),
        [IllegalGeneration]
    );
    // No member identity in a group with members.
    assert_eq!(simple_commit(&mut h, &[("t", 0, 1)]), [UnknownMemberId]);
    assert_eq!(
        h.commit(&r.member_id, r.generation_id, &[("t", 0, 1)]),
        [None]
    );
    // Commits of the previous generation count while the next one is prepared.
    h.join(&Join::new(""));
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    assert_eq!(
        h.commit(&r.member_id, r.generation_id, &[("t", 0, 2)]),
        [None]
    );
    assert_eq!(h.offset("t", 0), (2, None));
}

// testFetchOffsetForUnknownPartition / testFetchAllOffsets
#[test]
fn test_fetch_offsets_unknown_partition_and_all() {
    let mut h = H::new();
    // Unknown group: -1, no error; all offsets of an unknown group: nothing.
    assert_eq!(h.offset("t", 0), (-1, None));
    assert!(h.fetch_in(GROUP, Option::None, false).topics.is_empty());
    assert_eq!(
        simple_commit(&mut h, &[("t", 0, 1), ("t", 1, 2), ("u", 0, 3)]),
        [None, None, None]
    );
    assert_eq!(h.offset("t", 9), (-1, None));
    let all = h.fetch_in(GROUP, Option::None, false);
    let flat: Vec<(String, i32, i64)> = all
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| (t.name.to_string(), p.partition_index, p.committed_offset))
        })
        .collect();
    assert_eq!(
        flat,
        [("t".into(), 0, 1), ("t".into(), 1, 2), ("u".into(), 0, 3)]
    );
}

// testOffsetMetadataTooLarge: metadata above offset.metadata.max.bytes is refused per partition.
#[test]
fn test_offset_metadata_too_large() {
    let mut c = config();
    c.offset_metadata_max_bytes = 5;
    let mut h = H::with(c);
    let t = h.commit_full(
        2,
        GROUP,
        "",
        Option::None,
        -1,
        &[
            ("t", 0, 1, Some("12345")),
            ("t", 1, 1, Some("123456")),
            // 5 UTF-16 code units, 10 bytes: Java counts the former.
            ("t", 2, 1, Some("ééééé")),
        ],
    );
    assert_eq!(h.commit_errors(t), [None, OffsetMetadataTooLarge, None]);
    assert_eq!(h.offset("t", 1), (-1, None));
    let t = h.commit_full(
        2,
        GROUP,
        "",
        Option::None,
        -1,
        &[("t", 1, 1, Some("123456"))],
    );
    assert_eq!(h.commit_errors(t), [OffsetMetadataTooLarge]);
}

// Commits are visible only once appended; `require_stable` sees the commit in flight.
#[test]
fn commits_are_visible_only_once_appended() {
    let mut h = H::new();
    assert_eq!(simple_commit(&mut h, &[("t", 0, 1)]), [None]);
    h.hold_appends = true;
    let o = [("t", 0, 2, Option::None), ("t", 1, 5, Option::None)];
    let t = h.commit_full(7, GROUP, "", Option::None, -1, &o);
    assert!(!h.answered(t));
    assert_eq!(h.offset("t", 0), (1, None));
    let g = h.fetch_in(GROUP, Some(&[("t", &[0, 1])]), true);
    let errs: Vec<ErrorCode> = g.topics[0].partitions.iter().map(|p| p.error()).collect();
    assert_eq!(errs, [UnstableOffsetCommit, UnstableOffsetCommit]);
    h.finish_appends(None);
    assert_eq!(h.commit_errors(t), [None, None]);
    assert_eq!(h.offset("t", 0), (2, None));
    let g = h.fetch_in(GROUP, Some(&[("t", &[0, 1])]), true);
    assert_eq!(g.topics[0].partitions[1].committed_offset, 5);
}

// A failed append fails the commit with maybeConvertOffsetCommitError's mapping and leaves the
// committed offset as it was.
#[test]
fn a_failed_commit_append_maps_the_error() {
    for (storage, answered) in [
        (UnknownTopicOrPartition, CoordinatorNotAvailable),
        (NotEnoughReplicas, CoordinatorNotAvailable),
        (NotEnoughReplicasAfterAppend, CoordinatorNotAvailable),
        (NotLeaderOrFollower, NotCoordinator),
        (KafkaStorageError, NotCoordinator),
        (MessageTooLarge, InvalidCommitOffsetSize),
        (RecordListTooLarge, InvalidCommitOffsetSize),
        (InvalidFetchSize, InvalidCommitOffsetSize),
        (NetworkException, CoordinatorLoadInProgress),
        (CorruptMessage, CorruptMessage),
    ] {
        let mut h = H::new();
        assert_eq!(simple_commit(&mut h, &[("t", 0, 1)]), [None]);
        h.hold_appends = true;
        let t = h.commit_full(2, GROUP, "", Option::None, -1, &[("t", 0, 2, Option::None)]);
        h.finish_one(storage);
        assert_eq!(h.commit_errors(t), [answered], "{storage:?}");
        assert_eq!(h.offset("t", 0), (1, None));
        assert!(
            h.fetch_in(GROUP, Some(&[("t", &[0])]), true).topics[0].partitions[0].error() == None
        );
    }
}

// Commits to topics or partitions the broker does not have are UNKNOWN_TOPIC_OR_PARTITION, when
// the host gave its topics (Kafka's KafkaApis.handleOffsetCommitRequest).
#[test]
fn commits_to_unknown_topics_are_refused_when_topics_are_known() {
    let mut h = H::new();
    h.c.set_topics(Some([("t", 2)]));
    let t = h.commit_full(
        2,
        GROUP,
        "",
        Option::None,
        -1,
        &[
            ("t", 0, 1, Option::None),
            ("t", 2, 1, Option::None),
            ("x", 0, 1, Option::None),
        ],
    );
    assert_eq!(
        h.commit_errors(t),
        [None, UnknownTopicOrPartition, UnknownTopicOrPartition]
    );
    h.c.set_topics(Option::<Vec<(&str, i32)>>::None);
    assert_eq!(simple_commit(&mut h, &[("x", 0, 1)]), [None]);
}

fn retention_config(minutes: i64) -> Config {
    let mut c = config();
    c.offsets_retention_ms = minutes * 60_000;
    c.offsets_retention_check_interval_ms = 1000;
    c
}

// testExpireOffset / testOffsetExpirationOfSimpleConsumer: a simple group's offsets expire a
// retention after their commit, with tombstones; the group goes with its last offset.
#[test]
fn test_offset_expiration_of_simple_consumer() {
    let mut h = H::with(retention_config(1));
    assert_eq!(simple_commit(&mut h, &[("t", 0, 1)]), [None]);
    h.advance(30_000);
    assert_eq!(simple_commit(&mut h, &[("t", 1, 1)]), [None]);
    let from = h.written.len();
    h.advance(30_000);
    // t-0 is a minute old: gone; t-1 stays.
    assert_eq!(tombstoned(&h, from), [format!("{GROUP}/t/0")]);
    assert_eq!(h.offset("t", 0), (-1, None));
    assert_eq!(h.offset("t", 1), (1, None));
    let from = h.written.len();
    h.advance(30_000);
    // The last offset went: so did the group (no group tombstone: it never had a generation).
    assert_eq!(tombstoned(&h, from), [format!("{GROUP}/t/1")]);
    assert_eq!(h.state(), Option::None);
}

// testOffsetExpirationSemantics (KIP-211): an Empty consumer group's offsets expire a retention
// after the group became Empty, however old their commits are; the group's metadata is
// tombstoned with them.
#[test]
fn test_offset_expiration_semantics() {
    let mut h = H::with(retention_config(1));
    let (m, gen) = h.stable_group();
    assert_eq!(h.commit(&m, gen, &[("t", 0, 1)]), [None]);
    // 30 s of heartbeats: a Stable group whose topics are unknown (its subscriptions do not
    // parse) keeps its offsets.
    for _ in 0..120 {
        h.advance(SESSION as i64 / 2);
        assert_eq!(h.heartbeat(&m, gen), None);
    }
    h.leave(&[(&m, Option::None)]);
    assert_eq!(h.state(), Some(GroupState::Empty));
    let from = h.written.len();
    // The commit is now 89 s old, but the group has been Empty for 59 s only.
    h.advance(59_000);
    assert_eq!(h.offset("t", 0), (1, None));
    // The check runs every second.
    h.advance(2_000);
    assert_eq!(
        tombstoned(&h, from),
        [format!("{GROUP}/t/0"), GROUP.to_string()]
    );
    assert_eq!(h.state(), Option::None);
}

// testOffsetExpirationOfActiveGroupSemantics (KIP-496): a Stable consumer group keeps offsets of
// topics it consumes, and loses others a retention after their commit.
#[test]
fn test_offset_expiration_of_active_group_semantics() {
    use crate::assignors::consumer_protocol::encode_subscription;
    use crate::assignors::Subscription;
    let sub = encode_subscription(&Subscription::new(["foo"]), 0).unwrap();
    let mut h = H::with(retention_config(1));
    let r = h.join_alone(&Join::new("").protocols(&[("range", &sub)]));
    let s = h.sync(r.generation_id, &r.member_id, &[]);
    assert_eq!(h.sync_error(s), None);
    let m = r.member_id.to_string();
    assert_eq!(
        h.commit(&m, r.generation_id, &[("foo", 0, 1), ("bar", 0, 1)]),
        [None, None]
    );
    let from = h.written.len();
    for _ in 0..4 {
        h.advance(SESSION as i64 / 2);
        assert_eq!(h.heartbeat(&m, r.generation_id), None);
    }
    for _ in 0..260 {
        h.advance(SESSION as i64 / 2);
        assert_eq!(h.heartbeat(&m, r.generation_id), None);
    }
    assert_eq!(tombstoned(&h, from), [format!("{GROUP}/bar/0")]);
    assert_eq!(h.offset("foo", 0), (1, None));
    // The member leaves: the Empty group's offsets expire a retention later (KIP-211), and the
    // group goes, with a tombstone for its metadata.
    h.leave(&[(&m, Option::None)]);
    let from = h.written.len();
    h.advance(59_000);
    assert_eq!(h.offset("foo", 0), (1, None));
    h.advance(2_000);
    assert_eq!(
        tombstoned(&h, from),
        [format!("{GROUP}/foo/0"), GROUP.to_string()]
    );
    assert_eq!(h.state(), Option::None);
}

// An explicit retention time (OffsetCommit v2-4) overrides offsets.retention.minutes, and is
// written as an OffsetCommitValue v1 with its expire timestamp.
#[test]
fn an_explicit_retention_time_overrides_the_broker_retention() {
    use crate::group::records::read_offset_commit_value;
    let mut h = H::with(retention_config(60));
    let t = h.send(&GroupRequest::OffsetCommit(Req::new(
        2,
        OffsetCommitRequest {
            group_id: GROUP.into(),
            generation_id_or_member_epoch: -1,
            retention_time_ms: 5_000,
            topics: vec![OffsetCommitRequestTopic {
                name: "t".into(),
                partitions: vec![OffsetCommitRequestPartition {
                    partition_index: 0,
                    committed_offset: 3,
                    committed_leader_epoch: -1,
                    commit_timestamp: -1,
                    committed_metadata: Option::None,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        },
    )));
    assert_eq!(h.commit_errors(t), [None]);
    let (_, batch) = h.written.last().unwrap();
    let b = &decode_batches(batch, &DecodeOptions::default()).unwrap()[0];
    let v = b.records[0].value.as_deref().unwrap();
    assert_eq!(&v[..2], &[0, 1]);
    assert_eq!(
        read_offset_commit_value(v).unwrap().expire_timestamp,
        Some(5_000)
    );
    h.advance(6_000);
    assert_eq!(h.offset("t", 0), (-1, None));
}

// testExpireGroupWithOffsetsOnly: a commit in flight is not expired.
#[test]
fn test_pending_commits_never_expire() {
    let mut h = H::with(retention_config(1));
    assert_eq!(simple_commit(&mut h, &[("t", 0, 1)]), [None]);
    h.advance(59_000);
    h.hold_appends = true;
    let t = h.commit_full(2, GROUP, "", Option::None, -1, &[("t", 0, 2, Option::None)]);
    h.advance(10_000);
    h.finish_appends(None);
    assert_eq!(h.commit_errors(t), [None]);
    assert_eq!(h.offset("t", 0), (2, None));
}

// Deleted topics lose their offsets in every group (Kafka's handleDeletedPartitions).
#[test]
fn deleted_topics_lose_their_offsets() {
    let mut h = H::new();
    assert_eq!(
        simple_commit(&mut h, &[("t", 0, 1), ("u", 0, 1)]),
        [None, None]
    );
    let from = h.written.len();
    let effects = h.c.topics_deleted(h.now, ["t"]);
    h.apply(effects);
    assert_eq!(tombstoned(&h, from), [format!("{GROUP}/t/0")]);
    assert_eq!(h.offset("t", 0), (-1, None));
    assert_eq!(h.offset("u", 0), (1, None));
}
