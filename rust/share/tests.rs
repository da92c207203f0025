//! Tests of the share partition. Each scenario follows a case of Kafka 4.2's
//! `core/src/test/java/kafka/server/share/SharePartitionTest.java` (named above it); the
//! property tests drive random acquire / acknowledge / expire / leave sequences with the seeded
//! [`crate::rng::Rng`] and check the invariants after every step.

use super::*;
use crate::rng::Rng;

const M1: &str = "member-1";
const M2: &str = "member-2";
const BATCH_SIZE: i32 = 500;
const MAX_FETCH: i32 = i32::MAX;
const LOCK_MS: i64 = 100;

fn config() -> ShareConfig {
    ShareConfig {
        record_lock_duration_ms: LOCK_MS,
        ..ShareConfig::default()
    }
}

fn fresh() -> SharePartition {
    SharePartition::new(config(), 0, 0, 0)
}

fn batch(base: i64, count: i64) -> FetchedBatch {
    FetchedBatch {
        base_offset: base,
        last_offset: base + count - 1,
    }
}

fn ranges(list: &[(i64, i64, i16)]) -> Vec<AcquiredRecords> {
    list.iter()
        .map(|&(f, l, c)| AcquiredRecords {
            first_offset: f,
            last_offset: l,
            delivery_count: c,
        })
        .collect()
}

/// fetch is Kafka's test helper `fetchAcquiredRecords(sharePartition, records, n)`: member-1,
/// batch-optimized, batch size 500, no record limit, read from the first batch's base offset.
fn fetch(sp: &mut SharePartition, member: &str, batches: &[FetchedBatch]) -> Acquired {
    sp.acquire(
        member,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        MAX_FETCH,
        batches[0].base_offset,
        batches,
        0,
    )
}

fn ack(first: i64, last: i64, types: &[AcknowledgeType]) -> AcknowledgementBatch {
    AcknowledgementBatch {
        first_offset: first,
        last_offset: last,
        acknowledge_types: types.iter().map(|t| *t as i8).collect(),
    }
}

fn code(r: Result<Option<ShareUpdate>, crate::Error>) -> Option<crate::errors::ErrorCode> {
    r.err().and_then(|e| e.error_code())
}

fn state(sp: &SharePartition, offset: i64) -> (RecordState, i16, Option<String>) {
    let r = sp.record(offset).expect("offset in the window");
    (r.state, r.delivery_count, r.member.map(str::to_owned))
}

use crate::errors::ErrorCode;
use AcknowledgeType::{Accept, Gap, Reject, Release, Renew};
use RecordState::{Acknowledged, Acquired as Held, Archived, Available};

// SharePartitionTest.testAcquireSingleRecord / testAcquireMultipleRecords
#[test]
fn acquire_new_records_whole_batch() {
    let mut sp = fresh();
    let got = fetch(&mut sp, M1, &[batch(10, 5)]);
    assert_eq!(got.records, ranges(&[(10, 14, 1)]));
    assert_eq!(got.count, 5);
    assert_eq!(sp.next_fetch_offset(), 15);
    assert_eq!(sp.start_offset(), 10);
    assert_eq!(sp.end_offset(), 14);
    assert_eq!(state(&sp, 12), (Held, 1, Some(M1.into())));
    assert_eq!(sp.record(12).unwrap().lock_deadline_ms, Some(LOCK_MS));
}

// SharePartitionTest.testAcquireWithBatchSizeAndMultipleBatches
#[test]
fn acquire_splits_at_log_batches_every_batch_size_records() {
    let mut sp = fresh();
    let batches = [batch(2, 5), batch(10, 5), batch(15, 7), batch(22, 6)];
    let got = sp.acquire(M1, AcquireMode::BatchOptimized, 5, 100, 0, &batches, 0);
    // The gap 7..=9 between the first two log batches goes with the first range.
    assert_eq!(
        got.records,
        ranges(&[(2, 9, 1), (10, 14, 1), (15, 21, 1), (22, 27, 1)])
    );
    assert_eq!(got.count, 26);
    assert_eq!(sp.next_fetch_offset(), 28);
}

// SharePartitionTest.testAcquireWithBatchSizeAndMaxFetchRecords
#[test]
fn max_fetch_records_is_soft_to_the_end_of_a_log_batch() {
    let mut sp = fresh();
    let batches = [batch(0, 5), batch(5, 15), batch(20, 15)];
    let got = sp.acquire(M1, AcquireMode::BatchOptimized, 2, 10, 0, &batches, 0);
    assert_eq!(got.records, ranges(&[(0, 4, 1), (5, 19, 1)]));
    assert_eq!(got.count, 20);
    assert_eq!(sp.next_fetch_offset(), 20);
}

// SharePartitionTest.testAcquireWithMaxInFlightRecordsAndTryAcquireNewBatch
#[test]
fn in_flight_limit_stops_new_acquisition() {
    let mut sp = SharePartition::new(
        ShareConfig {
            max_in_flight_records: 20,
            ..config()
        },
        0,
        0,
        0,
    );
    assert_eq!(
        fetch(&mut sp, M1, &[batch(0, 10)]).records,
        ranges(&[(0, 9, 1)])
    );
    let batches = [batch(10, 5), batch(15, 10), batch(25, 5), batch(30, 2)];
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        500,
        0,
        &batches,
        0,
    );
    assert_eq!(got.records, ranges(&[(10, 24, 1)]));
    assert_eq!(sp.next_fetch_offset(), 25);
    assert!(!sp.can_acquire_records());
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        500,
        25,
        &[batch(25, 10)],
        0,
    );
    assert_eq!(got, Acquired::default());
    assert_eq!(sp.next_fetch_offset(), 25);
}

// SharePartitionTest.testAcquireWithMaxInFlightRecordsAndReleaseLastOffset
#[test]
fn in_flight_limit_still_redelivers_inside_the_window() {
    let mut sp = SharePartition::new(
        ShareConfig {
            max_in_flight_records: 20,
            ..config()
        },
        0,
        0,
        0,
    );
    let batches = [batch(10, 5), batch(15, 10), batch(25, 5), batch(30, 3)];
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        500,
        0,
        &batches,
        0,
    );
    assert_eq!(got.records, ranges(&[(10, 29, 1)]));
    assert_eq!(sp.next_fetch_offset(), 30);
    assert!(sp
        .acknowledge(M1, &[ack(15, 19, &[Release])], 0)
        .unwrap()
        .is_some());
    assert_eq!(sp.next_fetch_offset(), 15);
    assert!(sp.can_acquire_records());
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        500,
        15,
        &batches,
        0,
    );
    assert_eq!(got.records, ranges(&[(15, 19, 2)]));
    assert_eq!(sp.next_fetch_offset(), 30);
    sp.acknowledge(M1, &[ack(29, 29, &[Release])], 0).unwrap();
    assert_eq!(sp.next_fetch_offset(), 29);
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        500,
        29,
        &batches,
        0,
    );
    assert_eq!(got.records, ranges(&[(29, 29, 2)]));
    assert_eq!(sp.next_fetch_offset(), 30);
}

// SharePartitionTest.testAcknowledgeSingleRecordBatch / testAcknowledgeMultipleRecordBatch
#[test]
fn accepting_everything_clears_the_window_and_moves_the_start() {
    let mut sp = fresh();
    fetch(&mut sp, M1, &[batch(5, 10)]);
    let update = sp
        .acknowledge(M1, &[ack(5, 14, &[Accept])], 0)
        .unwrap()
        .unwrap();
    assert_eq!(sp.next_fetch_offset(), 15);
    assert_eq!(
        (sp.start_offset(), sp.end_offset(), sp.in_flight_records()),
        (15, 15, 0)
    );
    assert_eq!(sp.delivery_complete_count(), 0);
    assert_eq!(update.start_offset, 15);
    assert_eq!(
        update.state_batches,
        vec![StateBatch {
            first_offset: 5,
            last_offset: 14,
            delivery_state: Acknowledged,
            delivery_count: 1
        }]
    );
}

// SharePartitionTest.testAcknowledgeOutOfRangeCachedData
#[test]
fn acknowledging_outside_the_window() {
    let mut sp = fresh();
    assert_eq!(
        code(sp.acknowledge(M1, &[ack(0, 15, &[Reject])], 0)),
        Some(ErrorCode::InvalidRecordState)
    );
    fetch(&mut sp, M1, &[batch(5, 5)]);
    assert_eq!(
        code(sp.acknowledge(M1, &[ack(20, 25, &[Reject])], 0)),
        Some(ErrorCode::InvalidRequest)
    );
    // A range that runs past the window's last record.
    assert_eq!(
        code(sp.acknowledge(M1, &[ack(8, 12, &[Accept])], 0)),
        Some(ErrorCode::InvalidRequest)
    );
    assert_eq!(state(&sp, 8), (Held, 1, Some(M1.into())));
}

// SharePartitionTest.testAcknowledgeWithAnotherMember
#[test]
fn acknowledging_another_members_records_is_invalid_record_state() {
    let mut sp = fresh();
    fetch(&mut sp, M1, &[batch(5, 5)]);
    assert_eq!(
        code(sp.acknowledge(M2, &[ack(5, 9, &[Reject])], 0)),
        Some(ErrorCode::InvalidRecordState)
    );
    assert_eq!(
        code(sp.acknowledge(M2, &[ack(6, 7, &[Accept])], 0)),
        Some(ErrorCode::InvalidRecordState)
    );
    assert_eq!(state(&sp, 5), (Held, 1, Some(M1.into())));
}

// SharePartitionTest.testAcknowledgeWithAnotherMemberRollbackBatchError
#[test]
fn a_failed_acknowledgement_changes_nothing() {
    let mut sp = fresh();
    fetch(&mut sp, M2, &[batch(5, 5)]);
    fetch(&mut sp, M1, &[batch(10, 5)]);
    fetch(&mut sp, M2, &[batch(15, 5)]);
    let before = sp.clone();
    let r = sp.acknowledge(
        M1,
        &[
            ack(5, 9, &[Release]),
            ack(10, 14, &[Accept]),
            ack(15, 19, &[Accept]),
        ],
        0,
    );
    assert_eq!(code(r), Some(ErrorCode::InvalidRecordState));
    assert_eq!(sp, before);
    assert_eq!(sp.next_fetch_offset(), 20);
}

// SharePartitionTest.testAcknowledgeInvalidAckType... (an unknown type is INVALID_REQUEST)
#[test]
fn an_unknown_acknowledge_type_is_invalid_request() {
    let mut sp = fresh();
    fetch(&mut sp, M1, &[batch(0, 5)]);
    let bad = AcknowledgementBatch {
        first_offset: 0,
        last_offset: 4,
        acknowledge_types: vec![5],
    };
    assert_eq!(
        code(sp.acknowledge(M1, &[bad], 0)),
        Some(ErrorCode::InvalidRequest)
    );
}

// SharePartitionTest.testAcquireReleasedRecord
#[test]
fn released_records_are_reacquired_per_offset_with_count_two() {
    let mut sp = fresh();
    assert_eq!(
        fetch(&mut sp, M1, &[batch(10, 5)]).records,
        ranges(&[(10, 14, 1)])
    );
    sp.acknowledge(M1, &[ack(12, 13, &[Release])], 0).unwrap();
    assert_eq!(sp.next_fetch_offset(), 12);
    assert_eq!(state(&sp, 11), (Held, 1, Some(M1.into())));
    assert_eq!(state(&sp, 12), (Available, 1, None));
    assert_eq!(state(&sp, 13), (Available, 1, None));
    assert_eq!(state(&sp, 14), (Held, 1, Some(M1.into())));
    let got = fetch(&mut sp, M1, &[batch(10, 5)]);
    assert_eq!(got.records, ranges(&[(12, 13, 2)]));
    assert_eq!(got.count, 2);
    assert_eq!(sp.next_fetch_offset(), 15);
}

// SharePartitionTest.testMaxDeliveryCountLimitExceededForRecordBatch
#[test]
fn release_at_the_delivery_limit_archives() {
    let mut sp = SharePartition::new(
        ShareConfig {
            max_delivery_count: 2,
            ..config()
        },
        0,
        0,
        0,
    );
    fetch(&mut sp, M1, &[batch(5, 10)]);
    sp.acknowledge(M1, &[ack(5, 14, &[Release])], 0).unwrap();
    assert_eq!(
        fetch(&mut sp, M1, &[batch(5, 10)]).records,
        ranges(&[(5, 14, 2)])
    );
    let update = sp
        .acknowledge(M1, &[ack(5, 14, &[Release])], 0)
        .unwrap()
        .unwrap();
    assert_eq!(update.state_batches[0].delivery_state, Archived);
    assert_eq!(
        (sp.next_fetch_offset(), sp.start_offset(), sp.end_offset()),
        (15, 15, 15)
    );
    assert_eq!(sp.in_flight_records(), 0);
}

// SharePartitionTest.testMaxDeliveryCountLimitExceededForRecordsSubset
#[test]
fn per_offset_release_at_the_limit_archives_those_offsets() {
    let mut sp = SharePartition::new(
        ShareConfig {
            max_delivery_count: 2,
            ..config()
        },
        0,
        0,
        0,
    );
    let (records1, records2) = ([batch(10, 5)], [batch(15, 5)]);
    fetch(&mut sp, M1, &records1);
    fetch(&mut sp, M1, &records2);
    sp.acknowledge(
        M1,
        &[
            ack(10, 12, &[Accept]),
            ack(13, 16, &[Release]),
            ack(17, 19, &[Accept]),
        ],
        0,
    )
    .unwrap();
    // Each window batch gives its own range.
    assert_eq!(
        fetch(&mut sp, M1, &records1).records,
        ranges(&[(13, 14, 2)])
    );
    assert_eq!(
        fetch(&mut sp, M1, &records2).records,
        ranges(&[(15, 16, 2)])
    );
    let update = sp
        .acknowledge(M1, &[ack(13, 16, &[Release])], 0)
        .unwrap()
        .unwrap();
    assert!(update
        .state_batches
        .iter()
        .all(|b| b.delivery_state == Archived));
    assert_eq!(sp.next_fetch_offset(), 20);
    assert_eq!(
        (sp.start_offset(), sp.end_offset(), sp.in_flight_records()),
        (20, 20, 0)
    );
}

// SharePartitionTest.testAcknowledgeMultipleRecordBatchWithGapOffsets and
// SharePartitionTest.testReleaseAcquiredRecordsWithAnotherMember
#[test]
fn gaps_archive_and_release_member_returns_only_its_records() {
    let mut sp = fresh();
    sp.acquire(
        M2,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        MAX_FETCH,
        5,
        &[batch(5, 1)],
        0,
    );
    sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        MAX_FETCH,
        10,
        &[batch(10, 11)],
        0,
    );
    sp.acknowledge(
        M1,
        &[ack(
            10,
            18,
            &[Accept, Accept, Gap, Gap, Accept, Gap, Accept, Gap, Accept],
        )],
        0,
    )
    .unwrap();
    assert_eq!(sp.delivery_complete_count(), 9);
    let update = sp.release_member(M1).unwrap();
    assert_eq!(
        update.state_batches,
        vec![StateBatch {
            first_offset: 19,
            last_offset: 20,
            delivery_state: Available,
            delivery_count: 1
        }]
    );
    assert_eq!(sp.next_fetch_offset(), 19);
    assert_eq!(state(&sp, 5), (Held, 1, Some(M2.into())));
    assert_eq!(state(&sp, 12), (Archived, 1, None));
    assert_eq!(state(&sp, 14), (Acknowledged, 1, None));
    assert_eq!(state(&sp, 19), (Available, 1, None));
    sp.release_member(M2).unwrap();
    assert_eq!(sp.next_fetch_offset(), 5);
    assert_eq!(state(&sp, 5), (Available, 1, None));
    assert_eq!(sp.delivery_complete_count(), 9);
    assert_eq!(sp.release_member(M2), None);
}

// SharePartitionTest.testReleaseAcquiredRecordsWithAnotherMember... as of Kafka 4.1
// (KAFKA-19972 changed 4.2 to count the delivery): a session close takes the delivery back.
#[test]
fn session_release_in_kafka_4_1_undoes_the_delivery() {
    let mut sp = SharePartition::new(
        ShareConfig {
            session_release: SessionRelease::UndoDelivery,
            ..config()
        },
        0,
        0,
        0,
    );
    fetch(&mut sp, M1, &[batch(0, 3)]);
    sp.release_member(M1).unwrap();
    assert_eq!(state(&sp, 0), (Available, 0, None));
    assert_eq!(
        fetch(&mut sp, M2, &[batch(0, 3)]).records,
        ranges(&[(0, 2, 1)])
    );
}

// SharePartitionTest.testMaxDeliveryCountLimitNotExceededForRecordsSubsetAfterReleaseAcquiredRecords
// as of 4.2: a session release counts as a delivery, and archives at the limit.
#[test]
fn session_release_in_kafka_4_2_counts_the_delivery() {
    let mut sp = SharePartition::new(
        ShareConfig {
            max_delivery_count: 2,
            ..config()
        },
        0,
        0,
        0,
    );
    fetch(&mut sp, M1, &[batch(10, 5)]);
    sp.release_member(M1).unwrap();
    assert_eq!(state(&sp, 10), (Available, 1, None));
    assert_eq!(
        fetch(&mut sp, M1, &[batch(10, 5)]).records,
        ranges(&[(10, 14, 2)])
    );
    sp.release_member(M1).unwrap();
    assert_eq!(
        (sp.start_offset(), sp.end_offset(), sp.in_flight_records()),
        (15, 15, 0)
    );
}

// SharePartitionTest.testAcquisitionLockForAcquiringSingleRecord /
// testAcquisitionLockOnTimeoutForMultipleRecords... (a lock timeout makes the records available)
#[test]
fn lock_expiry_releases_and_persists() {
    let mut sp = fresh();
    sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        MAX_FETCH,
        0,
        &[batch(0, 5)],
        1000,
    );
    assert_eq!(sp.next_deadline(), Some(1000 + LOCK_MS));
    assert_eq!(sp.expire(1000 + LOCK_MS - 1), None);
    let update = sp.expire(1000 + LOCK_MS).unwrap();
    assert_eq!(
        update.state_batches,
        vec![StateBatch {
            first_offset: 0,
            last_offset: 4,
            delivery_state: Available,
            delivery_count: 1
        }]
    );
    assert_eq!(sp.next_deadline(), None);
    assert_eq!(sp.next_fetch_offset(), 0);
    assert_eq!(
        fetch(&mut sp, M2, &[batch(0, 5)]).records,
        ranges(&[(0, 4, 2)])
    );
}

// SharePartitionTest.testAcquisitionLockOnTimeoutForSubsetOfRecords... (per-offset locks)
#[test]
fn per_offset_locks_expire_separately() {
    let mut sp = fresh();
    sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        MAX_FETCH,
        0,
        &[batch(0, 5)],
        0,
    );
    sp.acknowledge(M1, &[ack(1, 1, &[Release])], 50).unwrap();
    sp.acquire(
        M2,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        MAX_FETCH,
        1,
        &[batch(0, 5)],
        50,
    );
    assert_eq!(state(&sp, 1), (Held, 2, Some(M2.into())));
    let update = sp.expire(LOCK_MS).unwrap();
    assert_eq!(state(&sp, 0), (Available, 1, None));
    assert_eq!(state(&sp, 1), (Held, 2, Some(M2.into())));
    assert_eq!(update.state_batches.len(), 2);
    sp.expire(50 + LOCK_MS).unwrap();
    assert_eq!(state(&sp, 1), (Available, 2, None));
}

// SharePartitionTest.testRenewAcknowledgeWithCompleteBatchAck / testRenewAcknowledgeWithPerOffsetAck
#[test]
fn renew_restarts_the_lock_and_writes_nothing() {
    let mut sp = fresh();
    fetch(&mut sp, M1, &[batch(0, 4)]);
    assert_eq!(
        sp.acknowledge(M1, &[ack(0, 3, &[Renew])], 60).unwrap(),
        None
    );
    assert_eq!(sp.record(0).unwrap().lock_deadline_ms, Some(60 + LOCK_MS));
    assert_eq!(sp.expire(LOCK_MS), None);
    let update = sp
        .acknowledge(M1, &[ack(0, 3, &[Accept, Renew, Renew, Release])], 70)
        .unwrap()
        .unwrap();
    assert_eq!(update.state_batches.len(), 2);
    assert_eq!(sp.record(1).unwrap().lock_deadline_ms, Some(70 + LOCK_MS));
    assert_eq!(state(&sp, 3), (Available, 1, None));
    assert_eq!(sp.start_offset(), 1);
    sp.expire(70 + LOCK_MS).unwrap();
    assert_eq!(state(&sp, 2), (Available, 1, None));
}

// SharePartitionTest.testAcquireSingleBatchInRecordLimitMode
#[test]
fn record_limit_mode_takes_exactly_max_records() {
    let mut sp = fresh();
    let got = sp.acquire(M1, AcquireMode::RecordLimit, 2, 5, 0, &[batch(0, 10)], 0);
    assert_eq!(got.records, ranges(&[(0, 4, 1)]));
    assert_eq!(got.count, 5);
    assert_eq!(sp.next_fetch_offset(), 5);
    assert_eq!(sp.end_offset(), 9);
    assert_eq!(state(&sp, 4), (Held, 1, Some(M1.into())));
    assert_eq!(state(&sp, 5), (Available, 0, None));
    let got = sp.acquire(M2, AcquireMode::RecordLimit, 2, 5, 0, &[batch(0, 10)], 0);
    assert_eq!(got.records, ranges(&[(5, 9, 1)]));
    assert_eq!(sp.next_fetch_offset(), 10);
    assert_eq!(state(&sp, 9), (Held, 1, Some(M2.into())));
}

// SharePartitionTest.testMaybeInitialize
#[test]
fn recover_loads_persisted_batches() {
    let persisted = PersistedState {
        state_epoch: 3,
        leader_epoch: 0,
        start_offset: 5,
        state_batches: vec![
            StateBatch {
                first_offset: 5,
                last_offset: 10,
                delivery_state: Available,
                delivery_count: 2,
            },
            StateBatch {
                first_offset: 11,
                last_offset: 15,
                delivery_state: Archived,
                delivery_count: 3,
            },
        ],
    };
    let mut sp = SharePartition::recover(config(), 0, &persisted).unwrap();
    assert_eq!(
        (sp.start_offset(), sp.end_offset(), sp.state_epoch()),
        (5, 15, 3)
    );
    assert_eq!(sp.next_fetch_offset(), 5);
    assert_eq!(state(&sp, 7), (Available, 2, None));
    assert_eq!(sp.delivery_complete_count(), 5);
    assert_eq!(
        fetch(&mut sp, M1, &[batch(5, 11)]).records,
        ranges(&[(5, 10, 3)])
    );
}

// SharePartitionTest.testMaybeInitializeWithInvalidStartOffsetStateBatch and
// testMaybeInitializeWithInvalidOffsetInBatch (corrupt state fails initialization)
#[test]
fn recover_refuses_corrupt_state() {
    let mut persisted = PersistedState::initialized(0, 6);
    persisted.state_batches.push(StateBatch {
        first_offset: 5,
        last_offset: 10,
        delivery_state: Available,
        delivery_count: 1,
    });
    let err = SharePartition::recover(config(), 0, &persisted).unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::UnknownServerError));
    persisted.state_batches[0] = StateBatch {
        first_offset: 12,
        last_offset: 10,
        delivery_state: Available,
        delivery_count: 1,
    };
    assert!(SharePartition::recover(config(), 0, &persisted).is_err());
    let uninit = PersistedState::initialized(0, UNINITIALIZED_START_OFFSET);
    assert_eq!(
        SharePartition::recover(config(), 0, &uninit)
            .unwrap_err()
            .error_code(),
        Some(ErrorCode::InvalidRequest)
    );
}

// SharePartitionTest.testAcquireGapAtBeginningAndRecordsFetchedFromGap
#[test]
fn recovered_gap_is_acquired_as_new_records() {
    let persisted = PersistedState {
        state_epoch: 3,
        leader_epoch: 0,
        start_offset: 11,
        state_batches: vec![
            StateBatch {
                first_offset: 21,
                last_offset: 30,
                delivery_state: Acknowledged,
                delivery_count: 2,
            },
            StateBatch {
                first_offset: 31,
                last_offset: 40,
                delivery_state: Archived,
                delivery_count: 1,
            },
        ],
    };
    let mut sp = SharePartition::recover(config(), 0, &persisted).unwrap();
    assert_eq!(sp.delivery_complete_count(), 20);
    assert_eq!(sp.next_fetch_offset(), 11);
    assert_eq!(
        fetch(&mut sp, M1, &[batch(11, 5)]).records,
        ranges(&[(11, 15, 1)])
    );
    assert_eq!((sp.start_offset(), sp.end_offset()), (11, 40));
    assert_eq!(sp.next_fetch_offset(), 16);
    // Acquiring and accepting the rest of the gap finishes the whole window.
    assert_eq!(
        fetch(&mut sp, M1, &[batch(16, 5)]).records,
        ranges(&[(16, 20, 1)])
    );
    sp.acknowledge(M1, &[ack(11, 20, &[Accept])], 0).unwrap();
    // As in Kafka, the start stops where the recovered gap window last looked (21) while the
    // end offset is still the recovered one; finished batches above it wait for the next write.
    assert_eq!((sp.start_offset(), sp.end_offset()), (21, 40));
    assert_eq!(sp.next_fetch_offset(), 41);
    assert_eq!(
        fetch(&mut sp, M1, &[batch(41, 5)]).records,
        ranges(&[(41, 45, 1)])
    );
    sp.acknowledge(M1, &[ack(41, 45, &[Accept])], 0).unwrap();
    assert_eq!(
        (sp.start_offset(), sp.end_offset(), sp.in_flight_records()),
        (46, 46, 0)
    );
}

// SharePartitionTest.testThrottleRecordsWhenPendingDeliveriesExist
#[test]
fn records_delivered_often_are_throttled() {
    let persisted = PersistedState {
        state_epoch: 3,
        leader_epoch: 0,
        start_offset: 5,
        state_batches: vec![
            StateBatch {
                first_offset: 15,
                last_offset: 19,
                delivery_state: Available,
                delivery_count: 2,
            },
            StateBatch {
                first_offset: 20,
                last_offset: 22,
                delivery_state: Archived,
                delivery_count: 3,
            },
            StateBatch {
                first_offset: 26,
                last_offset: 30,
                delivery_state: Available,
                delivery_count: 3,
            },
        ],
    };
    let mut sp = SharePartition::recover(config(), 0, &persisted).unwrap();
    assert_eq!(
        (sp.start_offset(), sp.end_offset(), sp.next_fetch_offset()),
        (5, 30, 5)
    );
    let batches = [batch(7, 13), batch(20, 8)];
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        500,
        5,
        &batches,
        0,
    );
    assert_eq!(got.records, ranges(&[(7, 14, 1), (15, 19, 3), (23, 25, 1)]));
    assert_eq!(got.count, 16);
    assert_eq!(sp.next_fetch_offset(), 26);
    assert_eq!(state(&sp, 26), (Available, 3, None));
    // Half the batch (5 >> 1) goes out at a time.
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        500,
        26,
        &batches,
        0,
    );
    assert_eq!(got.records, ranges(&[(26, 27, 4)]));
}

// KafkaApis.validateAcknowledgementBatches (Kafka 4.2), and ShareFetch facts 14 of the reference.
#[test]
fn acknowledgement_batch_validation() {
    let ok = [ack(0, 2, &[Accept]), ack(2, 3, &[Accept, Release])];
    assert!(validate_acknowledgement_batches(&ok, false, false).is_ok());
    let bad: Vec<(Vec<AcknowledgementBatch>, bool, bool)> = vec![
        (vec![ack(3, 2, &[Accept])], false, false),
        (
            vec![ack(5, 6, &[Accept]), ack(4, 7, &[Accept])],
            false,
            false,
        ),
        (vec![ack(0, 1, &[])], false, false),
        (vec![ack(0, 3, &[Accept, Accept])], false, false),
        (vec![ack(0, 0, &[Renew])], false, true),
        (vec![ack(0, 0, &[Renew])], true, false),
        (
            vec![AcknowledgementBatch {
                first_offset: 0,
                last_offset: 0,
                acknowledge_types: vec![-1],
            }],
            true,
            true,
        ),
    ];
    for (batches, supports_renew, is_renew) in bad {
        let err = validate_acknowledgement_batches(&batches, supports_renew, is_renew).unwrap_err();
        assert_eq!(
            err.error_code(),
            Some(ErrorCode::InvalidRequest),
            "{batches:?}"
        );
    }
    assert!(validate_acknowledgement_batches(&[ack(0, 0, &[Renew])], true, true).is_ok());
}

// The share coordinator's merge of updates (ShareCoordinatorShard's combining of state batches).
#[test]
fn persisted_updates_overlay_older_ranges() {
    let mut p = PersistedState::initialized(0, 0);
    let sb = |f, l, s, c| StateBatch {
        first_offset: f,
        last_offset: l,
        delivery_state: s,
        delivery_count: c,
    };
    p.apply(&ShareUpdate {
        state_epoch: 0,
        leader_epoch: 1,
        start_offset: 0,
        delivery_complete_count: 0,
        state_batches: vec![sb(0, 9, Available, 1)],
    });
    p.apply(&ShareUpdate {
        state_epoch: 0,
        leader_epoch: 1,
        start_offset: 3,
        delivery_complete_count: 0,
        state_batches: vec![sb(5, 6, Acknowledged, 1), sb(0, 2, Archived, 1)],
    });
    assert_eq!(
        p.state_batches,
        vec![
            sb(3, 4, Available, 1),
            sb(5, 6, Acknowledged, 1),
            sb(7, 9, Available, 1)
        ]
    );
    assert_eq!(p.start_offset, 3);
}

// ---- property tests -------------------------------------------------------------------------

/// Log is a log of contiguous batches from offset 0.
struct Log {
    batches: Vec<FetchedBatch>,
}

impl Log {
    fn new(rng: &mut Rng, records: i64) -> Log {
        let mut batches = Vec::new();
        let mut at = 0;
        while at < records {
            let n = 1 + (rng.next_u64() % 6) as i64;
            batches.push(batch(at, n));
            at += n;
        }
        Log { batches }
    }

    /// read is what a log read from `offset` returns: the batch holding it and up to `n` more.
    fn read(&self, offset: i64, n: usize) -> Vec<FetchedBatch> {
        let Some(i) = self.batches.iter().position(|b| b.last_offset >= offset) else {
            return Vec::new();
        };
        self.batches[i..(i + n).min(self.batches.len())].to_vec()
    }
}

fn pick<T: Copy>(rng: &mut Rng, xs: &[T]) -> T {
    xs[(rng.next_u64() % xs.len() as u64) as usize]
}

/// check_invariants checks what must hold after every step.
fn check_invariants(sp: &SharePartition, max_dc: i16, below_start_finished: bool) {
    let (start, end) = (sp.start_offset(), sp.end_offset());
    for off in start.min(end)..=end {
        if let Some(r) = sp.record(off) {
            assert!(
                r.delivery_count <= max_dc,
                "offset {off}: count {}",
                r.delivery_count
            );
            assert_eq!(r.state == Held, r.member.is_some(), "offset {off}");
            assert_eq!(
                r.state == Held,
                r.lock_deadline_ms.is_some(),
                "offset {off}"
            );
        }
    }
    // Below the start offset, whatever the window still holds is finished.
    let mut off = start - 1;
    while let Some(r) = sp.record(off).filter(|_| below_start_finished) {
        assert!(
            matches!(r.state, Acknowledged | Archived),
            "offset {off} below the start"
        );
        off -= 1;
    }
}

/// durable_equals_recovered: with nothing held, the window equals a recovery from everything
/// written so far.
fn check_recovery(sp: &SharePartition, persisted: &PersistedState) {
    let recovered = SharePartition::recover(*sp.config(), 0, persisted).unwrap();
    assert_eq!(
        recovered.state_batches(),
        sp.state_batches(),
        "state batches"
    );
    assert_eq!(recovered.start_offset(), sp.start_offset(), "start offset");
    // A snapshot of the live window recovers to the same durable state.
    let from_snapshot = SharePartition::recover(*sp.config(), 0, &sp.snapshot()).unwrap();
    assert_eq!(from_snapshot.state_batches(), sp.state_batches());
    assert_eq!(from_snapshot.start_offset(), sp.start_offset());
}

/// run_random drives one partition through `steps` random calls. With `lso_moves` the log
/// start offset also jumps now and then; records held below it then stay held (as in Kafka),
/// so the checks that need every record below the start to be finished, and a recovery right
/// after a jump, are left out.
fn run_random(seed: u64, steps: usize, lso_moves: bool) {
    let mut rng = Rng::new(Some(seed));
    let max_dc = 2 + (rng.next_u64() % 4) as i16;
    let cfg = ShareConfig {
        max_delivery_count: max_dc,
        max_in_flight_records: 10 + (rng.next_u64() % 30) as i32,
        record_lock_duration_ms: 100,
        session_release: if rng.next_u64() % 4 == 0 {
            SessionRelease::UndoDelivery
        } else {
            SessionRelease::CountDelivery
        },
    };
    let log = Log::new(&mut rng, 300);
    let mut sp = SharePartition::new(cfg, 0, 0, 0);
    let mut persisted = PersistedState::initialized(0, 0);
    let members = ["a", "b", "c"];
    let mut now = 0i64;
    // Offsets each member was handed and has not given back (by the test's own bookkeeping).
    let mut prev_start = sp.start_offset();
    let mut ever_acquired = vec![false; 400];
    // The test's own record of who holds what, and until when.
    let mut owner: std::collections::BTreeMap<i64, (&str, i64)> = Default::default();
    for step in 0..steps {
        let op = rng.next_u64() % 10;
        let m = pick(&mut rng, &members);
        let mut write = None;
        match op {
            0..=3 => {
                let fetch_offset = sp.next_fetch_offset();
                let read = log.read(fetch_offset, 1 + (rng.next_u64() % 4) as usize);
                let held_before: Vec<i64> = (sp.start_offset()..=sp.end_offset())
                    .filter(|o| sp.record(*o).is_some_and(|r| r.state == Held))
                    .collect();
                let mode = if rng.next_u64() % 3 == 0 {
                    AcquireMode::RecordLimit
                } else {
                    AcquireMode::BatchOptimized
                };
                let max = (rng.next_u64() % 12) as i32;
                let size = 1 + (rng.next_u64() % 8) as i32;
                let start_before = sp.start_offset();
                let got = sp.acquire(m, mode, size, max, fetch_offset, &read, now);
                let mut counted = 0i64;
                for r in &got.records {
                    assert!(r.first_offset <= r.last_offset);
                    assert!(
                        r.first_offset >= start_before.min(sp.start_offset()),
                        "acquired below the start"
                    );
                    assert!(r.delivery_count >= 1 && r.delivery_count <= max_dc, "{r:?}");
                    for o in r.first_offset..=r.last_offset {
                        assert!(
                            !held_before.contains(&o),
                            "offset {o} acquired while held (step {step})"
                        );
                        assert!(
                            owner
                                .insert(o, (m, now + cfg.record_lock_duration_ms))
                                .is_none(),
                            "offset {o} held twice"
                        );
                        assert_eq!(sp.record(o).unwrap().member, Some(m));
                        ever_acquired[o as usize] = true;
                        counted += 1;
                    }
                }
                if mode == AcquireMode::RecordLimit {
                    assert!(counted <= max as i64, "record limit: {counted} > {max}");
                }
            }
            4..=6 => {
                // Acknowledge a random slice of what m holds, with random types.
                let mut held: Vec<i64> = (sp.start_offset()..=sp.end_offset())
                    .filter(|o| sp.record(*o).is_some_and(|r| r.member == Some(m)))
                    .collect();
                if rng.next_u64() % 4 == 0 {
                    // Sometimes anywhere near the window, held by m or not.
                    held = vec![(sp.start_offset() - 3).max(0), sp.end_offset() + 2];
                }
                if let (Some(&lo), Some(&hi)) = (held.first(), held.last()) {
                    let a = lo + (rng.next_u64() % (hi - lo + 1) as u64) as i64;
                    let b = a + (rng.next_u64() % (hi - a + 1) as u64) as i64;
                    let types = [Gap, Accept, Release, Reject, Renew];
                    // One batch, or two split at a random offset, each with one type or a
                    // type per offset: what a request validated by Kafka's rules may carry.
                    let mut cuts = vec![(a, b)];
                    if b > a && rng.next_u64() % 3 == 0 {
                        let mid = a + (rng.next_u64() % (b - a) as u64) as i64;
                        cuts = vec![(a, mid), (mid + 1, b)];
                    }
                    let batches: Vec<AcknowledgementBatch> = cuts
                        .iter()
                        .map(|&(f, l)| {
                            if rng.next_u64() % 2 == 0 {
                                ack(f, l, &[pick(&mut rng, &types)])
                            } else {
                                let t: Vec<AcknowledgeType> =
                                    (f..=l).map(|_| pick(&mut rng, &types)).collect();
                                ack(f, l, &t)
                            }
                        })
                        .collect();
                    validate_acknowledgement_batches(&batches, true, true).unwrap();
                    let before = sp.clone();
                    let start = sp.start_offset();
                    let all_held = (a.max(start)..=b)
                        .all(|o| sp.record(o).is_none_or(|r| r.member == Some(m)));
                    match sp.acknowledge(m, &batches, now) {
                        Ok(w) => {
                            assert!(all_held, "acknowledged records not all held");
                            for batch in &batches {
                                let first = batch.first_offset;
                                for o in first.max(start)..=batch.last_offset {
                                    let i = if batch.acknowledge_types.len() > 1 {
                                        (o - first) as usize
                                    } else {
                                        0
                                    };
                                    if batch.acknowledge_types[i] == Renew as i8 {
                                        if let Some(h) = owner.get_mut(&o) {
                                            h.1 = now + cfg.record_lock_duration_ms;
                                        }
                                    } else {
                                        owner.remove(&o);
                                    }
                                }
                            }
                            write = w;
                        }
                        Err(e) => {
                            assert_eq!(sp, before, "a failed acknowledgement changed the window");
                            assert!(matches!(
                                e.error_code(),
                                Some(ErrorCode::InvalidRecordState | ErrorCode::InvalidRequest)
                            ));
                        }
                    }
                } else {
                    // Nothing held: any acknowledgement is refused and changes nothing.
                    let before = sp.clone();
                    let o = sp.start_offset() + (rng.next_u64() % 5) as i64;
                    assert!(sp.acknowledge(m, &[ack(o, o, &[Accept])], now).is_err());
                    assert_eq!(sp, before);
                }
            }
            7 => {
                now += (rng.next_u64() % 150) as i64;
                if let Some(d) = sp.next_deadline() {
                    assert!(d > now - 150 - 100);
                }
                write = sp.expire(now);
                owner.retain(|_, h| h.1 > now);
                assert!(sp.next_deadline().is_none_or(|d| d > now));
            }
            8 => {
                write = sp.release_member(m);
                owner.retain(|_, h| h.0 != m);
            }
            _ if lso_moves => {
                let to = sp.start_offset() + (rng.next_u64() % 8) as i64;
                sp.update_log_start_offset(to);
                assert!(sp.start_offset() >= to);
            }
            _ => {
                // Everyone leaves: nothing is held, and the window equals its recovery.
                for m in members {
                    if let Some(w) = sp.release_member(m) {
                        persisted.apply(&w);
                    }
                }
                owner.clear();
                check_recovery(&sp, &persisted);
            }
        }
        if let Some(w) = &write {
            assert!(w.state_batches.iter().all(|b| b.delivery_state != Held));
            assert_eq!(w.start_offset, sp.start_offset());
            persisted.apply(w);
        }
        assert!(
            sp.start_offset() >= prev_start,
            "start offset moved back (step {step})"
        );
        prev_start = sp.start_offset();
        // Every record below the start offset was delivered before it was finished.
        assert!(
            lso_moves
                || ever_acquired[..sp.start_offset() as usize]
                    .iter()
                    .all(|a| *a),
            "a record below the start was never delivered"
        );
        check_invariants(&sp, max_dc, !lso_moves);
        // Exactly the records the test handed out and that were not given back are held, by
        // their member, until their deadline.
        for (o, (m, deadline)) in &owner {
            let r = sp.record(*o).expect("a held record in the window");
            assert_eq!(
                (r.state, r.member, r.lock_deadline_ms),
                (Held, Some(*m), Some(*deadline)),
                "offset {o}"
            );
        }
        for o in sp.start_offset()..=sp.end_offset() {
            if sp.record(o).is_some_and(|r| r.state == Held) {
                assert!(
                    owner.contains_key(&o),
                    "offset {o} held but never handed out"
                );
            }
        }
        // Memory stays within the window: the limit plus what one read can add.
        assert!(sp.in_flight_records() <= cfg.max_in_flight_records as i64 + 4 * 6 + 12);
        if lso_moves {
            continue;
        }
        // A recovery at any time never redelivers a finished record and never loses the start.
        let recovered = SharePartition::recover(cfg, 0, &persisted).unwrap();
        assert!(recovered.start_offset() <= sp.start_offset());
        for b in recovered.state_batches() {
            if matches!(b.delivery_state, Acknowledged | Archived) {
                for o in b.first_offset..=b.last_offset {
                    if let Some(r) = sp.record(o) {
                        assert_eq!(r.state, b.delivery_state, "offset {o}");
                    } else {
                        assert!(o < sp.start_offset());
                    }
                }
            }
        }
    }
    // Finally everyone leaves: the window equals its recovery.
    for m in members {
        if let Some(w) = sp.release_member(m) {
            persisted.apply(&w);
        }
    }
    if !lso_moves {
        check_recovery(&sp, &persisted);
    }
}

#[test]
fn random_sequences_keep_the_invariants() {
    for seed in 0..200 {
        run_random(seed, 300, false);
    }
}

#[test]
fn random_sequences_with_log_start_moves_keep_ownership_and_limits() {
    for seed in 1000..1200 {
        run_random(seed, 300, true);
    }
}

// SharePartitionTest.testLsoMovementForArchivingBatches
#[test]
fn log_start_offset_movement_archives_available_records() {
    let mut sp = fresh();
    for base in [2, 7, 12, 17, 22, 27, 32] {
        fetch(&mut sp, M1, &[batch(base, 5)]);
    }
    sp.acknowledge(
        M1,
        &[
            ack(2, 6, &[Accept]),
            ack(12, 16, &[Release]),
            ack(22, 26, &[Release]),
            ack(27, 31, &[Reject]),
        ],
        0,
    )
    .unwrap();
    assert_eq!(sp.delivery_complete_count(), 5);
    sp.update_log_start_offset(20);
    assert_eq!(sp.next_fetch_offset(), 22);
    assert_eq!((sp.start_offset(), sp.end_offset()), (20, 36));
    assert_eq!(state(&sp, 7), (Held, 1, Some(M1.into())));
    assert_eq!(state(&sp, 12), (Archived, 1, None));
    assert_eq!(state(&sp, 17), (Held, 1, Some(M1.into())));
    assert_eq!(state(&sp, 22), (Available, 1, None));
    assert_eq!(state(&sp, 27), (Archived, 1, None));
    assert_eq!(state(&sp, 32), (Held, 1, Some(M1.into())));
    assert!(sp.record(2).is_none());
    assert_eq!(sp.delivery_complete_count(), 5);
    // A log start offset at or below the start offset changes nothing.
    let before = sp.clone();
    sp.update_log_start_offset(20);
    assert_eq!(sp, before);
}

// SharePartitionTest.testLsoMovementThenAcquisitionLockTimeoutThenAcknowledge
#[test]
fn held_records_below_the_log_start_archive_when_their_lock_ends() {
    let mut sp = fresh();
    fetch(&mut sp, M1, &[batch(2, 5)]);
    sp.update_log_start_offset(7);
    assert_eq!(
        (sp.next_fetch_offset(), sp.start_offset(), sp.end_offset()),
        (7, 7, 7)
    );
    assert_eq!(state(&sp, 2), (Held, 1, Some(M1.into())));
    let update = sp.expire(LOCK_MS).unwrap();
    assert_eq!(update.state_batches[0].delivery_state, Archived);
    assert_eq!(
        (sp.start_offset(), sp.end_offset(), sp.in_flight_records()),
        (7, 7, 0)
    );
    fetch(&mut sp, M1, &[batch(10, 5)]);
    assert_eq!(
        (sp.next_fetch_offset(), sp.start_offset(), sp.end_offset()),
        (15, 10, 14)
    );
    // An acknowledgement reaching below the window's first batch starts from the start offset.
    sp.acknowledge(M1, &[ack(2, 14, &[Release])], 0).unwrap();
    assert_eq!(
        (sp.next_fetch_offset(), sp.start_offset(), sp.end_offset()),
        (10, 10, 14)
    );
    assert_eq!(state(&sp, 10), (Available, 1, None));
}

// SharePartitionTest.testAcquireMultipleBatchesInRecordLimitMode
#[test]
fn record_limit_mode_stops_inside_a_log_batch() {
    let mut sp = fresh();
    let batches = [batch(10, 5), batch(15, 15), batch(30, 15)];
    let got = sp.acquire(M1, AcquireMode::RecordLimit, BATCH_SIZE, 10, 0, &batches, 0);
    assert_eq!(got.records, ranges(&[(10, 19, 1)]));
    assert_eq!(sp.next_fetch_offset(), 20);
    assert_eq!(sp.end_offset(), 29);
    assert_eq!(state(&sp, 19), (Held, 1, Some(M1.into())));
    assert_eq!(state(&sp, 20), (Available, 0, None));
    // Records never delivered are not persisted when the others are released.
    let update = sp.release_member(M1).unwrap();
    assert_eq!(
        update.state_batches,
        vec![StateBatch {
            first_offset: 10,
            last_offset: 19,
            delivery_state: Available,
            delivery_count: 1
        }]
    );
}

// SharePartitionTest.testAcquireWithBatchSizeAndEndOffsetLargerThanBatchFirstOffset
#[test]
fn acquisition_starts_at_the_end_offset_of_an_empty_window() {
    let mut sp = fresh();
    sp.update_log_start_offset(4);
    assert_eq!((sp.start_offset(), sp.end_offset()), (4, 4));
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        5,
        100,
        0,
        &[batch(2, 8), batch(10, 7)],
        0,
    );
    assert_eq!(got.records, ranges(&[(4, 9, 1), (10, 16, 1)]));
    assert_eq!(got.count, 13);
    assert_eq!(sp.next_fetch_offset(), 17);
}

// SharePartitionTest.testAcquireWhenBatchesRemovedForFetchOffsetWithinBatch
#[test]
fn records_a_read_skips_over_are_archived_as_compacted() {
    let mut sp = fresh();
    fetch(&mut sp, M1, &[batch(5, 5)]);
    fetch(&mut sp, M1, &[batch(10, 15)]);
    sp.acknowledge(M1, &[ack(5, 7, &[Accept])], 0).unwrap();
    assert_eq!(sp.start_offset(), 8);
    sp.release_member(M1).unwrap();
    assert_eq!(sp.next_fetch_offset(), 8);
    // The read from 8 starts at 10: 8 and 9 were compacted away.
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        MAX_FETCH,
        8,
        &[batch(10, 15)],
        0,
    );
    assert_eq!(got.records, ranges(&[(10, 24, 2)]));
    assert_eq!(sp.next_fetch_offset(), 25);
    assert_eq!(sp.start_offset(), 8);
    assert_eq!(state(&sp, 8), (Archived, 1, None));
    assert_eq!(sp.delivery_complete_count(), 2);
    sp.release_member(M1).unwrap();
    assert_eq!((sp.start_offset(), sp.next_fetch_offset()), (10, 10));
    assert!(sp.record(9).is_none());
    assert_eq!(state(&sp, 10), (Available, 2, None));
    assert_eq!(sp.delivery_complete_count(), 0);
}

// Not Kafka's: after the log start offset passed the whole window, Kafka moves the start back to
// the window's end + 1 once the held records there finish, and acquires the records below the
// start of a log batch that straddles it. Here the start never moves back and nothing below it
// is acquired (found by random_sequences_with_log_start_moves_keep_ownership_and_limits).
#[test]
fn the_start_offset_stays_past_a_log_start_jump() {
    let mut sp = fresh();
    fetch(&mut sp, M1, &[batch(0, 5)]);
    fetch(&mut sp, M2, &[batch(5, 5)]);
    sp.acknowledge(M1, &[ack(0, 4, &[Release])], 0).unwrap();
    sp.update_log_start_offset(12);
    assert_eq!(
        (sp.start_offset(), sp.end_offset(), sp.next_fetch_offset()),
        (12, 12, 12)
    );
    assert_eq!(state(&sp, 0), (Archived, 1, None));
    assert_eq!(state(&sp, 7), (Held, 1, Some(M2.into())));
    // A read from 12 starts with the log batch 10..=14 that holds it.
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        MAX_FETCH,
        12,
        &[batch(10, 5)],
        0,
    );
    assert_eq!(got.records, ranges(&[(12, 14, 1)]));
    assert_eq!(sp.start_offset(), 12);
    sp.release_member(M2).unwrap();
    assert_eq!(sp.start_offset(), 12);
    // Archived below the start; it leaves the window with the next finished prefix.
    assert_eq!(state(&sp, 7), (Archived, 1, None));
    sp.acknowledge(M1, &[ack(12, 14, &[Accept])], 0).unwrap();
    assert!(sp.record(7).is_none());
    assert_eq!(
        (sp.start_offset(), sp.end_offset(), sp.in_flight_records()),
        (15, 15, 0)
    );
}

// SharePartitionTest.testAcknowledgeInRecordLimitMode
#[test]
fn record_limit_mode_acknowledgements_move_the_start_inside_a_batch() {
    let mut sp = fresh();
    let log = [batch(0, 10)];
    let got = sp.acquire(M1, AcquireMode::RecordLimit, 2, 1, 0, &log, 0);
    assert_eq!(got.records, ranges(&[(0, 0, 1)]));
    assert_eq!(sp.next_fetch_offset(), 1);
    sp.acknowledge(M1, &[ack(0, 0, &[Accept])], 0).unwrap();
    assert_eq!(
        (sp.next_fetch_offset(), sp.start_offset(), sp.end_offset()),
        (1, 1, 9)
    );
    assert_eq!(state(&sp, 1), (Available, 0, None));
    let got = sp.acquire(M1, AcquireMode::RecordLimit, 2, 2, 0, &log, 0);
    assert_eq!(got.records, ranges(&[(1, 2, 1)]));
    sp.acknowledge(M1, &[ack(1, 1, &[Accept])], 0).unwrap();
    assert_eq!(
        (sp.next_fetch_offset(), sp.start_offset(), sp.end_offset()),
        (3, 2, 9)
    );
    assert_eq!(state(&sp, 2), (Held, 1, Some(M1.into())));
    assert_eq!(state(&sp, 3), (Available, 0, None));
}

// SharePartitionTest.testAcquireWhenInsufficientRecordsInRecordLimitMode
#[test]
fn record_limit_mode_with_fewer_records_than_the_limit_takes_them_whole() {
    let mut sp = fresh();
    let got = sp.acquire(
        M1,
        AcquireMode::RecordLimit,
        2,
        20,
        0,
        &[batch(10, 5), batch(15, 5), batch(20, 5)],
        0,
    );
    assert_eq!(got.records, ranges(&[(10, 24, 1)]));
    assert_eq!(got.count, 15);
    assert_eq!(sp.next_fetch_offset(), 25);
}

// The reference's restart facts (kip932 §3.7, §6 fact 23): after a restart, finished records
// stay finished, records released or timed out come back with their persisted count, and
// records whose only delivery was never written are delivered again as new (count 1).
#[test]
fn a_restart_redelivers_only_unfinished_records() {
    let mut sp = fresh();
    let mut persisted = PersistedState::initialized(0, 0);
    let log = [batch(0, 5), batch(5, 5), batch(10, 5)];
    fetch(&mut sp, M1, &log);
    let w = sp
        .acknowledge(M1, &[ack(0, 4, &[Accept]), ack(5, 9, &[Release])], 0)
        .unwrap()
        .unwrap();
    persisted.apply(&w);
    assert_eq!(persisted.start_offset, 5);
    // 5..=9 are taken again (count 2), 10..=14 are still held from the first delivery.
    let got = sp.acquire(
        M2,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        MAX_FETCH,
        5,
        &log[1..],
        0,
    );
    assert_eq!(got.records, ranges(&[(5, 9, 2)]));
    // The broker restarts: what was held is lost, the persisted state is what remains.
    let mut sp = SharePartition::recover(config(), 1, &persisted).unwrap();
    assert_eq!(
        (sp.start_offset(), sp.end_offset(), sp.next_fetch_offset()),
        (5, 9, 5)
    );
    let got = sp.acquire(
        M1,
        AcquireMode::BatchOptimized,
        BATCH_SIZE,
        MAX_FETCH,
        5,
        &log[1..],
        0,
    );
    assert_eq!(got.records, ranges(&[(5, 9, 2), (10, 14, 1)]));
}

// Kafka's SharePartition reads the group's share.record.lock.duration.ms each time it starts a
// lock (recordLockDurationMsOrDefault in acquire): a change applies to the next acquisition,
// and locks already running keep their deadline.
#[test]
fn a_changed_lock_duration_applies_to_new_locks_only() {
    let mut sp = fresh();
    fetch(&mut sp, M1, &[batch(0, 1)]);
    sp.set_record_lock_duration_ms(5_000);
    assert_eq!(sp.config().record_lock_duration_ms, 5_000);
    fetch(&mut sp, M1, &[batch(1, 1)]);
    assert_eq!(sp.record(0).unwrap().lock_deadline_ms, Some(LOCK_MS));
    assert_eq!(sp.record(1).unwrap().lock_deadline_ms, Some(5_000));
    assert_eq!(sp.next_deadline(), Some(LOCK_MS));
}
