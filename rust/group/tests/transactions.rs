//! Transactional offset commits: TxnOffsetCommit, the offsets it leaves pending until the
//! transaction's marker (`Coordinator::end_transaction`), OffsetFetch's `require_stable`, and
//! the same read back from the log. Named after Kafka's OffsetMetadataManagerTest cases
//! (`group-coordinator/src/test/java/.../OffsetMetadataManagerTest.java`, 4.1).

use std::sync::Arc;

use super::*;
use crate::coordinator::appends::{batch, transactional_batch, Producer};
use crate::group::records::{offset_commit_key, offset_commit_value, read_offset_commit_value};
use crate::group::responses;
use crate::protocol::records::{decode_batches, DecodeOptions, EndTransactionMarker};
use crate::protocol::typed::txn_offset_commit::TxnOffsetCommitResponse;
use ErrorCode::*;

const PID: i64 = 4000;

/// stable is the error of one partition fetched with `require_stable`, and its offset.
fn stable(h: &mut H, topic: &str, partition: i32) -> (i64, ErrorCode) {
    let g = h.fetch_in(GROUP, Some(&[(topic, &[partition])]), true);
    let p = &g.topics[0].partitions[0];
    (p.committed_offset, p.error())
}

// testGenericGroupTransactionalOffsetCommit: a member of a classic group commits at its
// generation; the offset commit record goes out in one transactional batch of the producer,
// and the offset waits for the transaction's end.
#[test]
fn test_generic_group_transactional_offset_commit() {
    let mut h = H::new();
    h.now = 1_000;
    let (member, generation) = h.stable_group();
    let now = h.now;
    let before = h.written.len();
    let t = h.txn_commit_full(
        3,
        GROUP,
        PID,
        &member,
        Option::None,
        generation,
        &[("bar", 0, 100, Some("metadata"))],
    );
    assert_eq!(h.txn_errors(t), [None]);
    let (partition, bytes) = &h.written[before];
    assert_eq!(*partition, h.c.partition_for(GROUP));
    let batches = decode_batches(bytes, &DecodeOptions::default()).unwrap();
    let b = &batches[0];
    assert!(b.is_transactional && !b.is_control);
    assert_eq!(
        (b.producer_id, b.producer_epoch, b.base_sequence),
        (PID, 0, -1)
    );
    assert_eq!(b.records.len(), 1);
    let r = &b.records[0];
    assert_eq!(
        r.key.as_deref(),
        Some(&offset_commit_key(GROUP, "bar", 0).unwrap()[..])
    );
    let v = read_offset_commit_value(r.value.as_deref().unwrap()).unwrap();
    assert_eq!(
        (
            v.offset,
            &*v.metadata,
            v.commit_timestamp,
            v.expire_timestamp
        ),
        (100, "metadata", now, Option::None)
    );
    assert_eq!(h.c.transactional_offset(GROUP, PID, "bar", 0), Some(100));
    // Invisible until the marker.
    assert_eq!(h.offset("bar", 0), (-1, None));
}

// testGenericGroupTransactionalOffsetCommitWithUnknownGroupId: an unknown group with a
// generation is ILLEGAL_GENERATION; with generation -1 a simple group is made (Kafka's
// validateTransactionalOffsetCommit).
#[test]
fn test_generic_group_transactional_offset_commit_with_unknown_group_id() {
    let mut h = H::new();
    let t = h.txn_commit_full(
        3,
        GROUP,
        PID,
        "member",
        Option::None,
        10,
        &[("bar", 0, 100, Option::None)],
    );
    assert_eq!(h.txn_errors(t), [IllegalGeneration]);
    assert_eq!(h.c.group_count(), 0);
    assert_eq!(h.txn_commit(PID, &[("bar", 0, 100)]), [None]);
    assert_eq!(h.state(), Some(GroupState::Empty));
}

// testGenericGroupTransactionalOffsetCommitWithUnknownMemberId and ...WithIllegalGenerationId,
// and ClassicGroup.validateOffsetCommit's static member check (FENCED_INSTANCE_ID).
#[test]
fn test_generic_group_transactional_offset_commit_member_checks() {
    let mut h = H::new();
    let (member, generation) = h.stable_group();
    let commit = |h: &mut H, m: &str, i: Option<&str>, g: i32| {
        let t = h.txn_commit_full(3, GROUP, PID, m, i, g, &[("bar", 0, 1, Option::None)]);
        h.txn_errors(t)[0]
    };
    assert_eq!(
        commit(&mut h, "member", Option::None, generation),
        UnknownMemberId
    );
    assert_eq!(
        commit(&mut h, &member, Option::None, generation + 1),
        IllegalGeneration
    );
    assert_eq!(commit(&mut h, &member, Option::None, generation), None);
    // A commit naming no member is a member's all the same when it gives a generation.
    assert_eq!(
        commit(&mut h, "", Option::None, generation),
        UnknownMemberId
    );

    let mut s = H::new();
    let ((leader, leader_instance), (follower, _), generation) = s.static_stable_group();
    assert_eq!(
        commit(&mut s, &follower, Some(&leader_instance), generation),
        FencedInstanceId
    );
    assert_eq!(
        commit(&mut s, &leader, Some("unknown-instance"), generation),
        UnknownMemberId
    );
    assert_eq!(
        commit(&mut s, &leader, Some(&leader_instance), generation),
        None
    );
}

// ClassicGroup.validateOffsetCommit with isTransactional: a commit without generation, member
// and instance (TxnOffsetCommit before v3, sendOffsetsToTransaction(offsets, groupId)) is
// accepted by a group with members, and no state is checked: a member commits during
// CompletingRebalance, where OffsetCommit answers REBALANCE_IN_PROGRESS.
#[test]
fn transactional_commits_are_not_held_to_offset_commits_rules() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new(""));
    assert_eq!(h.state(), Some(GroupState::CompletingRebalance));
    assert_eq!(
        h.commit(&r.member_id, r.generation_id, &[("t", 0, 1)]),
        [RebalanceInProgress]
    );
    let t = h.txn_commit_full(
        3,
        GROUP,
        PID,
        &r.member_id,
        Option::None,
        r.generation_id,
        &[("t", 0, 1, Option::None)],
    );
    assert_eq!(h.txn_errors(t), [None]);
    // v0 carries no member: accepted by a group with members.
    let t = h.txn_commit_full(
        0,
        GROUP,
        PID + 1,
        "",
        Option::None,
        -1,
        &[("t", 1, 1, Option::None)],
    );
    assert_eq!(h.txn_errors(t), [None]);
    assert_eq!(h.commit("", -1, &[("t", 1, 1)]), [UnknownMemberId]);
}

// KafkaApis.handleTxnOffsetCommitRequest: unknown topics and partitions are answered per
// partition before the group is looked at; OffsetMetadataManager: metadata over
// offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE for its partition alone; an empty
// group id is INVALID_GROUP_ID (GroupCoordinatorService.commitTransactionalOffsets).
#[test]
fn partition_errors_and_the_rest_committed() {
    let mut h = H::with({
        let mut c = config();
        c.set("offset.metadata.max.bytes", 4).unwrap();
        c
    });
    h.c.set_topics(Some([("bar", 2)]));
    let t = h.txn_commit_full(
        3,
        GROUP,
        PID,
        "",
        Option::None,
        -1,
        &[
            ("bar", 0, 1, Some("1234")),
            ("bar", 1, 1, Some("12345")),
            ("bar", 2, 1, Option::None),
            ("nope", 0, 1, Option::None),
        ],
    );
    assert_eq!(
        h.txn_errors(t),
        [
            None,
            OffsetMetadataTooLarge,
            UnknownTopicOrPartition,
            UnknownTopicOrPartition
        ]
    );
    assert_eq!(h.c.transactional_offset(GROUP, PID, "bar", 0), Some(1));
    assert_eq!(h.c.transactional_offset(GROUP, PID, "bar", 1), Option::None);
    let t = h.txn_commit_full(
        3,
        "",
        PID,
        "",
        Option::None,
        -1,
        &[("bar", 0, 1, Option::None)],
    );
    assert_eq!(h.txn_errors(t), [InvalidGroupId]);
}

/// frame_errors writes a TxnOffsetCommit response at `version` and reads its partitions'
/// errors back.
fn frame_errors(r: &GroupResponse, version: i16) -> Vec<ErrorCode> {
    let frame = responses::encode_response(r, version, 7).unwrap();
    // Size and correlation id; a tagged section in a flexible version's header.
    let body = if version >= 3 {
        &frame[9..]
    } else {
        &frame[8..]
    };
    let m = TxnOffsetCommitResponse::decode(body, version).unwrap();
    m.topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| ErrorCode::for_code(p.error_code))
        })
        .collect()
}

// A partition loading answers COORDINATOR_LOAD_IN_PROGRESS on every partition (no top-level
// error); before v2 it goes out as COORDINATOR_NOT_AVAILABLE (KafkaApis, KAFKA-7296). A
// partition given up answers NOT_COORDINATOR.
#[test]
fn a_loading_partition_and_the_version_downgrade() {
    let mut h = H::new();
    let p = h.c.partition_for(GROUP);
    h.c.load(p, &[], false).unwrap();
    let t = h.txn_commit_full(
        1,
        GROUP,
        PID,
        "",
        Option::None,
        -1,
        &[("bar", 0, 1, Option::None), ("baz", 3, 1, Option::None)],
    );
    assert_eq!(
        h.txn_errors(t),
        [CoordinatorLoadInProgress, CoordinatorLoadInProgress]
    );
    let r = h.answers[&t].clone();
    assert_eq!(
        frame_errors(&r, 1),
        [CoordinatorNotAvailable, CoordinatorNotAvailable]
    );
    assert_eq!(
        frame_errors(&r, 0),
        [CoordinatorNotAvailable, CoordinatorNotAvailable]
    );
    assert_eq!(
        frame_errors(&r, 2),
        [CoordinatorLoadInProgress, CoordinatorLoadInProgress]
    );
    assert_eq!(
        frame_errors(&r, 4),
        [CoordinatorLoadInProgress, CoordinatorLoadInProgress]
    );
    // KIP-890: a failed transaction check (the host's, reported as the append's error) is
    // TRANSACTION_ABORTABLE from v4, INVALID_TXN_STATE before.
    h.c.load(p, &[], true).unwrap();
    h.hold_appends = true;
    let t = h.txn_commit_full(
        4,
        GROUP,
        PID,
        "",
        Option::None,
        -1,
        &[("bar", 0, 1, Option::None)],
    );
    h.finish_one(TransactionAbortable);
    let r = h.answers[&t].clone();
    assert_eq!(frame_errors(&r, 4), [TransactionAbortable]);
    assert_eq!(frame_errors(&r, 3), [InvalidTxnState]);
    assert_eq!(frame_errors(&r, 0), [InvalidTxnState]);
    h.hold_appends = false;
    h.c.unload(h.now, p);
    // A marker for a partition given up changes nothing.
    assert!(h.c.end_transaction(h.now, p, PID, true).is_empty());
    let t = h.txn_commit_full(
        3,
        GROUP,
        PID,
        "",
        Option::None,
        -1,
        &[("bar", 0, 1, Option::None)],
    );
    assert_eq!(h.txn_errors(t), [NotCoordinator]);
}

// The response waits for the append; a failed append answers the storage error as Kafka's
// handleOperationException maps it, and its offsets leave the transaction.
#[test]
fn the_response_waits_for_the_append_and_a_failure_drops_the_offsets() {
    let mut h = H::new();
    h.hold_appends = true;
    let t = h.txn_commit_full(
        3,
        GROUP,
        PID,
        "",
        Option::None,
        -1,
        &[("bar", 0, 1, Option::None)],
    );
    assert!(!h.answered(t));
    assert_eq!(stable(&mut h, "bar", 0), (-1, UnstableOffsetCommit));
    h.finish_one(NotEnoughReplicas);
    assert_eq!(h.txn_errors(t), [CoordinatorNotAvailable]);
    assert_eq!(stable(&mut h, "bar", 0), (-1, None));
    for (storage, answered) in [
        (MessageTooLarge, UnknownServerError),
        (NetworkException, CoordinatorLoadInProgress),
        (RequestTimedOut, CoordinatorNotAvailable),
        (NotLeaderOrFollower, NotCoordinator),
    ] {
        let t = h.txn_commit_full(
            3,
            GROUP,
            PID,
            "",
            Option::None,
            -1,
            &[("bar", 0, 1, Option::None)],
        );
        h.finish_one(storage);
        assert_eq!(h.txn_errors(t), [answered], "{storage:?}");
    }
    // A failed append drops only its own records: the transaction's later ones stay.
    let first = h.txn_commit_full(
        3,
        GROUP,
        PID,
        "",
        Option::None,
        -1,
        &[("bar", 0, 5, Option::None)],
    );
    let second = h.txn_commit_full(
        3,
        GROUP,
        PID,
        "",
        Option::None,
        -1,
        &[("bar", 1, 6, Option::None)],
    );
    h.finish_one(KafkaStorageError);
    h.finish_one(None);
    assert_eq!(
        (h.txn_errors(first), h.txn_errors(second)),
        (vec![NotCoordinator], vec![None])
    );
    assert_eq!(h.c.transactional_offset(GROUP, PID, "bar", 0), Option::None);
    assert_eq!(h.c.transactional_offset(GROUP, PID, "bar", 1), Some(6));
}

// testReplayTransactionEndMarkerWithCommit (and ...WithAbort): a commit marker makes the
// producer's offsets the committed ones; an abort drops them; another producer's wait.
#[test]
fn test_replay_transaction_end_marker_with_commit_and_abort() {
    let mut h = H::new();
    assert_eq!(
        h.txn_commit(PID, &[("bar", 0, 100), ("bar", 1, 101)]),
        [None, None]
    );
    assert_eq!(h.txn_commit(PID + 1, &[("bar", 2, 102)]), [None]);
    // A marker in another partition of __consumer_offsets is not this group's.
    let other = (h.c.partition_for(GROUP) + 1) % 50;
    let e = h.c.end_transaction(h.now, other, PID, true);
    assert!(e.is_empty());
    assert_eq!(h.offset("bar", 0), (-1, None));
    h.end_txn(PID, true);
    assert_eq!(h.offset("bar", 0), (100, None));
    assert_eq!(h.offset("bar", 1), (101, None));
    assert_eq!(stable(&mut h, "bar", 0), (100, None));
    assert_eq!(stable(&mut h, "bar", 2), (-1, UnstableOffsetCommit));
    h.end_txn(PID + 1, false);
    assert_eq!(stable(&mut h, "bar", 2), (-1, None));
    assert_eq!(
        h.c.transactional_offset(GROUP, PID + 1, "bar", 2),
        Option::None
    );
    // A marker of a producer with nothing open changes nothing.
    h.end_txn(PID + 2, true);
    assert_eq!(h.offset("bar", 0), (100, None));
}

// testReplayTransactionEndMarkerKeepsTheMostRecentCommittedOffset: a transactional offset
// replaces the committed one only if its record was written after it.
#[test]
fn test_replay_transaction_end_marker_keeps_the_most_recent_committed_offset() {
    let mut h = H::new();
    // Transactional first, then a plain commit: the plain one stays.
    assert_eq!(h.txn_commit(PID, &[("bar", 0, 100)]), [None]);
    assert_eq!(h.commit("", -1, &[("bar", 0, 200)]), [None]);
    h.end_txn(PID, true);
    assert_eq!(h.offset("bar", 0), (200, None));
    // A plain commit, then a transactional one: the transactional one wins.
    assert_eq!(h.txn_commit(PID, &[("bar", 0, 300)]), [None]);
    h.end_txn(PID, true);
    assert_eq!(h.offset("bar", 0), (300, None));
    // The append order decides, not the order the appends complete in.
    h.hold_appends = true;
    let txn = h.txn_commit_full(
        3,
        GROUP,
        PID,
        "",
        Option::None,
        -1,
        &[("bar", 0, 400, Option::None)],
    );
    let plain = h.commit_full(
        8,
        GROUP,
        "",
        Option::None,
        -1,
        &[("bar", 0, 500, Option::None)],
    );
    h.finish_one(None);
    h.end_txn(PID, true);
    assert_eq!(h.offset("bar", 0), (400, None));
    // The plain commit, appended after the transaction's, lands over it.
    h.finish_one(None);
    assert!(h.answered(txn) && h.answered(plain));
    assert_eq!(h.offset("bar", 0), (500, None));
}

// testFetchOffsetsWithPendingTransactionalOffsets / testFetchAllOffsetsWithPendingTransactional
// Offsets: with require_stable a partition with an open transactional commit answers
// UNSTABLE_OFFSET_COMMIT (-1, ""), the others their offsets; without it the last committed.
#[test]
fn test_fetch_offsets_with_pending_transactional_offsets() {
    let mut h = H::new();
    assert_eq!(
        h.commit("", -1, &[("foo", 0, 1), ("foo", 1, 2), ("bar", 0, 3)]),
        [None, None, None]
    );
    assert_eq!(
        h.txn_commit(PID, &[("foo", 1, 10), ("bar", 1, 11)]),
        [None, None]
    );
    let g = h.fetch_in(GROUP, Some(&[("foo", &[0, 1]), ("bar", &[0, 1])]), true);
    let got: Vec<(i32, i64, ErrorCode, String)> = g
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter())
        .map(|p| {
            (
                p.partition_index,
                p.committed_offset,
                p.error(),
                p.metadata.as_deref().unwrap_or("?").to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 1, None, String::new()),
            (1, -1, UnstableOffsetCommit, String::new()),
            (0, 3, None, String::new()),
            (1, -1, UnstableOffsetCommit, String::new()),
        ]
    );
    assert_eq!(h.offset("foo", 1), (2, None));
    assert_eq!(h.offset("bar", 1), (-1, None));
    // All offsets: the committed ones, the partitions in a transaction unstable.
    let all = h.fetch_in(GROUP, Option::None, true);
    let got: Vec<(String, i32, i64, ErrorCode)> = all
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(move |p| {
                (
                    t.name.to_string(),
                    p.partition_index,
                    p.committed_offset,
                    p.error(),
                )
            })
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("bar".into(), 0, 3, None),
            ("foo".into(), 0, 1, None),
            ("foo".into(), 1, -1, UnstableOffsetCommit),
        ]
    );
}

// testGenericGroupOffsetDeleteWithPendingTransactionalOffsets: OffsetDelete tombstones a
// partition that only has a pending transactional offset, and drops it: the commit marker
// that follows finds nothing.
#[test]
fn test_generic_group_offset_delete_with_pending_transactional_offsets() {
    let mut h = H::new();
    assert_eq!(h.commit("", -1, &[("foo", 0, 1)]), [None]);
    assert_eq!(h.txn_commit(PID, &[("bar", 0, 10)]), [None]);
    let before = h.written.len();
    let r = h.delete_offsets(GROUP, &[("bar", &[0])]);
    assert_eq!(r.topics[0].partitions[0].error(), None);
    let tombstones: Vec<_> = h.written[before..]
        .iter()
        .flat_map(|(_, b)| decode_batches(b, &DecodeOptions::default()).unwrap())
        .flat_map(|b| b.records)
        .map(|r| (r.key.unwrap(), r.value))
        .collect();
    assert_eq!(
        tombstones,
        vec![(offset_commit_key(GROUP, "bar", 0).unwrap(), Option::None)]
    );
    h.end_txn(PID, true);
    assert_eq!(h.offset("bar", 0), (-1, None));
    assert_eq!(stable(&mut h, "bar", 0), (-1, None));
}

// testDeleteGroupAllOffsetsWithPendingTransactionalOffsets: deleting a group tombstones its
// committed offsets and those only pending in a transaction (once per partition).
#[test]
fn test_delete_group_all_offsets_with_pending_transactional_offsets() {
    let mut h = H::new();
    assert_eq!(
        h.commit("", -1, &[("foo", 0, 1), ("foo", 1, 2)]),
        [None, None]
    );
    assert_eq!(
        h.txn_commit(PID, &[("foo", 1, 20), ("bar", 0, 10)]),
        [None, None]
    );
    let before = h.written.len();
    assert_eq!(h.delete_groups(&[GROUP]), [(GROUP.to_string(), None)]);
    let mut keys: Vec<_> = h.written[before..]
        .iter()
        .flat_map(|(_, b)| decode_batches(b, &DecodeOptions::default()).unwrap())
        .flat_map(|b| b.records)
        .map(|r| (r.key.unwrap(), r.value.is_none()))
        .collect();
    keys.sort();
    let mut want = vec![
        (offset_commit_key(GROUP, "foo", 0).unwrap(), true),
        (offset_commit_key(GROUP, "foo", 1).unwrap(), true),
        (offset_commit_key(GROUP, "bar", 0).unwrap(), true),
    ];
    want.sort();
    assert_eq!(keys, want);
    assert_eq!(h.c.group_count(), 0);
    // The marker that follows finds no group.
    h.end_txn(PID, true);
    assert_eq!(h.c.group_count(), 0);
}

// testCleanupExpiredOffsetsWithPendingTransactionalOffsetsOnly: a group whose only offsets wait
// in a transaction is not deleted by the retention check; once aborted, it is.
#[test]
fn test_cleanup_expired_offsets_with_pending_transactional_offsets_only() {
    let mut h = H::with({
        let mut c = config();
        c.set("offsets.retention.minutes", 1).unwrap();
        c.set("offsets.retention.check.interval.ms", 1_000).unwrap();
        c
    });
    assert_eq!(h.txn_commit(PID, &[("foo", 0, 1)]), [None]);
    h.advance(120_000);
    assert_eq!(h.state(), Some(GroupState::Empty));
    h.end_txn(PID, false);
    h.advance(1_000);
    assert_eq!(h.state(), Option::None);
}

// testCleanupExpiredOffsetsWithPendingTransactionalOffsets: an expired offset whose partition
// has a pending transactional offset is kept; the others expire.
#[test]
fn test_cleanup_expired_offsets_with_pending_transactional_offsets() {
    let mut h = H::with({
        let mut c = config();
        c.set("offsets.retention.minutes", 1).unwrap();
        c.set("offsets.retention.check.interval.ms", 1_000).unwrap();
        c
    });
    assert_eq!(
        h.commit("", -1, &[("foo", 0, 1), ("foo", 1, 2)]),
        [None, None]
    );
    assert_eq!(h.txn_commit(PID, &[("foo", 0, 10)]), [None]);
    h.advance(120_000);
    assert_eq!(h.offset("foo", 0), (1, None));
    assert_eq!(h.offset("foo", 1), (-1, None));
    h.end_txn(PID, true);
    assert_eq!(h.offset("foo", 0), (10, None));
}

/// log builds a partition of `__consumer_offsets`: plain and transactional commit batches and
/// markers, in order.
enum Entry {
    Plain(&'static str, i32, Option<i64>),
    Txn(i64, &'static str, i32, Option<i64>),
    Marker(i64, bool),
}

fn log(entries: &[Entry]) -> Vec<u8> {
    let record = |t: &str, p: i32, o: Option<i64>| {
        (
            offset_commit_key(GROUP, t, p).unwrap(),
            o.map(|o| {
                offset_commit_value(&crate::group::records::OffsetAndMetadata {
                    offset: o,
                    leader_epoch: -1,
                    metadata: Arc::from(""),
                    commit_timestamp: 1,
                    expire_timestamp: Option::None,
                })
                .unwrap()
            }),
        )
    };
    let mut data = Vec::new();
    for e in entries {
        match e {
            Entry::Plain(t, p, o) => data.extend(batch(1, vec![record(t, *p, *o)])),
            Entry::Txn(pid, t, p, o) => data.extend(transactional_batch(
                1,
                Producer { id: *pid, epoch: 0 },
                vec![record(t, *p, *o)],
            )),
            Entry::Marker(pid, commit) => data.extend(
                EndTransactionMarker {
                    commit: *commit,
                    coordinator_epoch: 0,
                }
                .batch(0, 1, 0, *pid, 0)
                .encode(Option::None)
                .unwrap(),
            ),
        }
    }
    data
}

fn loaded(entries: &[Entry]) -> H {
    let mut h = H::new();
    let p = h.c.partition_for(GROUP);
    h.c.load(p, &log(entries), true).unwrap();
    h
}

// testReplayTransactionEndMarkerKeepsTheMostRecentCommittedOffset, from the log (3.9's
// GroupMetadataManagerTest.testGroupLoadWithConsumerAndTransactionalOffsetCommitsConsumerWins /
// ...TransactionWins, testDoNotLoadAbortedTransactionalOffsetCommits): a transaction's offset
// replaces the committed one at its marker only if its record comes after it; an abort drops
// it.
#[test]
fn loading_orders_commits_by_their_place_in_the_log() {
    use Entry::*;
    let mut h = loaded(&[
        Txn(PID, "t", 0, Some(100)),
        Plain("t", 0, Some(200)),
        Marker(PID, true),
    ]);
    assert_eq!(h.offset("t", 0), (200, None));
    let mut h2 = loaded(&[
        Plain("t", 0, Some(200)),
        Txn(PID, "t", 0, Some(300)),
        Marker(PID, true),
    ]);
    assert_eq!(h2.offset("t", 0), (300, None));
    let mut h3 = loaded(&[
        Plain("t", 0, Some(200)),
        Txn(PID, "t", 0, Some(300)),
        Marker(PID, false),
    ]);
    assert_eq!(stable(&mut h3, "t", 0), (200, None));
    assert_eq!(h.c.group_count(), 1);
}

// 3.9's GroupMetadataManagerTest.testLoadWithCommittedAndAbortedAndPendingTransactionalOffset
// Commits and testLoadTransactionalOffsetCommitsFromMultipleProducers: each producer's marker
// ends its own offsets, interleaved in the log; the one without a marker stays pending.
#[test]
fn test_load_with_committed_aborted_and_pending_transactional_offset_commits() {
    use Entry::*;
    let mut h = loaded(&[
        Plain("t", 0, Some(1)),
        Txn(PID, "t", 1, Some(10)),
        Txn(PID + 1, "t", 2, Some(20)),
        Txn(PID + 2, "t", 3, Some(30)),
        Marker(PID + 1, false),
        Txn(PID, "t", 0, Some(11)),
        Marker(PID, true),
        // The same producer's next transaction, left open.
        Txn(PID, "t", 4, Some(40)),
    ]);
    let got: Vec<(i64, ErrorCode)> = (0..5).map(|p| stable(&mut h, "t", p)).collect();
    assert_eq!(
        got,
        vec![
            (11, None),
            (10, None),
            (-1, None),
            (-1, UnstableOffsetCommit),
            (-1, UnstableOffsetCommit),
        ]
    );
    h.end_txn(PID + 2, true);
    h.end_txn(PID, false);
    assert_eq!(stable(&mut h, "t", 3), (30, None));
    assert_eq!(stable(&mut h, "t", 4), (-1, None));
}

// testReplayWithTombstoneAndPendingTransactionalOffsets: a tombstone removes the committed
// offset and what every open transaction wrote for the partition.
#[test]
fn test_replay_with_tombstone_and_pending_transactional_offsets() {
    use Entry::*;
    let mut h = loaded(&[
        Plain("t", 0, Some(1)),
        Txn(PID, "t", 0, Some(10)),
        Txn(PID + 1, "t", 0, Some(11)),
        Txn(PID, "t", 1, Some(12)),
        Plain("t", 0, Option::None),
        Marker(PID, true),
    ]);
    assert_eq!(h.offset("t", 0), (-1, None));
    assert_eq!(h.offset("t", 1), (12, None));
    assert_eq!(
        h.c.transactional_offset(GROUP, PID + 1, "t", 0),
        Option::None
    );
    h.end_txn(PID + 1, true);
    assert_eq!(h.offset("t", 0), (-1, None));
}

// 3.9's GroupMetadataManagerTest.testGroupLoadedWithPendingCommits and
// testLoadTransactionalOffsetsWithoutGroup: a transaction without its marker in the log stays
// open after the load: its offsets are pending (a group with only those loads as an Empty
// simple group) until the transaction coordinator's marker ends it. Its place in the log still
// orders it against later commits.
#[test]
fn an_open_transaction_stays_pending_across_a_load() {
    use Entry::*;
    let mut h = loaded(&[
        Plain("t", 0, Some(1)),
        Txn(PID, "t", 0, Some(10)),
        Txn(PID, "u", 0, Some(20)),
    ]);
    assert_eq!(h.offset("t", 0), (1, None));
    assert_eq!(stable(&mut h, "t", 0), (-1, UnstableOffsetCommit));
    assert_eq!(stable(&mut h, "u", 0), (-1, UnstableOffsetCommit));
    // A plain commit appended after the load comes after the transaction's records.
    assert_eq!(h.commit("", -1, &[("u", 0, 30)]), [None]);
    h.end_txn(PID, true);
    assert_eq!(h.offset("t", 0), (10, None));
    assert_eq!(h.offset("u", 0), (30, None));

    // A group known only from an open transaction.
    let mut h = loaded(&[Txn(PID, "t", 0, Some(10))]);
    assert_eq!(h.state(), Some(GroupState::Empty));
    assert_eq!(stable(&mut h, "t", 0), (-1, UnstableOffsetCommit));
    h.end_txn(PID, false);
    assert_eq!(stable(&mut h, "t", 0), (-1, None));
}

// What the coordinator writes reads back the same: commits, an open transaction, then its
// marker appended by the host.
#[test]
fn what_is_written_loads_back() {
    let mut h = H::new();
    assert_eq!(h.commit("", -1, &[("t", 0, 1)]), [None]);
    assert_eq!(
        h.txn_commit(PID, &[("t", 0, 10), ("t", 1, 11)]),
        [None, None]
    );
    assert_eq!(h.txn_commit(PID + 1, &[("t", 2, 12)]), [None]);
    let p = h.c.partition_for(GROUP);
    let data: Vec<u8> = h
        .written
        .iter()
        .filter(|(q, _)| *q == p)
        .flat_map(|(_, b)| b.clone())
        .collect();
    let mut r = H::new();
    r.c.load(p, &data, true).unwrap();
    assert_eq!(stable(&mut r, "t", 0), (-1, UnstableOffsetCommit));
    assert_eq!(r.offset("t", 0), (1, None));
    let mut marked = data.clone();
    marked.extend(log(&[Entry::Marker(PID, true)]));
    let mut m = H::new();
    m.c.load(p, &marked, true).unwrap();
    assert_eq!(stable(&mut m, "t", 0), (10, None));
    assert_eq!(stable(&mut m, "t", 1), (11, None));
    assert_eq!(stable(&mut m, "t", 2), (-1, UnstableOffsetCommit));
}

/// Written is what a run put in the group's partition, in log order: the append of a token
/// (in the log if it succeeded) or a marker the host appended.
enum Written {
    Append(AppendToken, Vec<u8>),
    Marker(Vec<u8>),
}

/// Run drives random plain and transactional commits, append outcomes (in append order, as
/// one log reports them; any may fail) and markers, keeping the log a host would have written.
struct Run {
    h: H,
    rng: crate::rng::Rng,
    log: Vec<Written>,
    recorded: AppendToken,
    ok: Vec<AppendToken>,
}

impl Run {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n
    }

    /// record notes the appends the last call asked for, in order.
    fn record(&mut self) {
        for (t, _, b) in &self.h.appends {
            if *t > self.recorded {
                self.recorded = *t;
                self.log.push(Written::Append(*t, b.clone()));
            }
        }
    }

    fn in_flight(&self, pid: i64) -> bool {
        self.h.appends.iter().any(|(_, _, b)| {
            decode_batches(b, &DecodeOptions::default()).unwrap()[0].producer_id == pid
        })
    }

    fn complete(&mut self) {
        let (t, _, _) = self.h.appends.pop_front().unwrap();
        let error = if self.below(5) == 0 {
            NotEnoughReplicas
        } else {
            None
        };
        if error == None {
            self.ok.push(t);
        }
        let effects = self.h.c.appended(self.h.now, t, error).unwrap();
        self.h.apply(effects);
    }

    fn marker(&mut self, pid: i64, commit: bool) {
        self.log
            .push(Written::Marker(log(&[Entry::Marker(pid, commit)])));
        self.h.end_txn(pid, commit);
    }

    fn step(&mut self) {
        let p = self.below(3) as i32;
        let value = self.below(1_000) as i64;
        match self.below(4) {
            0 => {
                let t = self.h.commit_full(
                    8,
                    GROUP,
                    "",
                    Option::None,
                    -1,
                    &[("t", p, value, Option::None)],
                );
                let _ = t;
            }
            1 => {
                let pid = 1 + self.below(3) as i64;
                self.h.txn_commit_full(
                    3,
                    GROUP,
                    pid,
                    "",
                    Option::None,
                    -1,
                    &[("t", p, value, Option::None)],
                );
            }
            // The log reports its appends in order, each a success or a failure.
            2 if !self.h.appends.is_empty() => self.complete(),
            _ => {
                let pid = 1 + self.below(3) as i64;
                // A commit marker follows the transaction's answered commits (EndTxn comes
                // after them); an abort may come at any time (a timeout).
                let commit = self.below(2) == 0 && !self.in_flight(pid);
                self.marker(pid, commit);
            }
        }
        self.record();
    }

    /// fetched is every partition's (offset, error) with and without require_stable.
    fn fetched(h: &mut H) -> Vec<(i64, ErrorCode, i64, ErrorCode)> {
        (0..3)
            .map(|p| {
                let (o, e) = h.offset("t", p);
                let (so, se) = stable(h, "t", p);
                (o, e, so, se)
            })
            .collect()
    }

    /// reloaded is the group as a coordinator loading the log reads it back.
    fn check_reload(&mut self) {
        let data: Vec<u8> = self
            .log
            .iter()
            .flat_map(|w| match w {
                Written::Append(t, b) if self.ok.contains(t) => b.clone(),
                Written::Append(..) => Vec::new(),
                Written::Marker(b) => b.clone(),
            })
            .collect();
        let mut r = H::new();
        let p = r.c.partition_for(GROUP);
        r.c.load(p, &data, true).unwrap();
        assert_eq!(Run::fetched(&mut self.h), Run::fetched(&mut r));
    }
}

// Whatever appends fail and whenever markers come, the live offsets are what the log reads
// back as (Kafka keeps one state machine, replayed at write and at load: plain and
// transactional commits ordered by record offset, a marker ending its producer's offsets).
#[test]
fn live_offsets_match_the_log_they_wrote() {
    for seed in 0..60 {
        let mut h = H::new();
        h.hold_appends = true;
        let mut run = Run {
            h,
            rng: crate::rng::Rng::new(Some(seed)),
            log: Vec::new(),
            recorded: 0,
            ok: Vec::new(),
        };
        for _ in 0..40 {
            run.step();
        }
        while !run.h.appends.is_empty() {
            run.complete();
        }
        run.check_reload();
        for pid in 1..=3 {
            let commit = run.below(2) == 0;
            run.marker(pid, commit);
        }
        run.check_reload();
    }
}
