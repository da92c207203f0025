//! SyncGroup: GroupCoordinatorTest's sync tests (checklist items 25-28).

use super::*;
use ErrorCode::*;

// testSyncDeadGroup
#[test]
fn test_sync_dead_group() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    h.c.force_state(GROUP, GroupState::Dead);
    let s = h.sync(gen, &m, &[]);
    assert_eq!(h.sync_error(s), CoordinatorNotAvailable);
}

// testSyncGroupFromUnknownGroup / testSyncGroupFromUnknownMember / testSyncGroupFromIllegalGeneration
#[test]
fn test_sync_group_from_unknown_group_member_or_generation() {
    let mut h = H::new();
    let s = h.sync(1, "memberId", &[]);
    assert_eq!(h.sync_error(s), UnknownMemberId);
    let (m, gen) = h.stable_group();
    let s = h.sync(gen, "unknownMemberId", &[]);
    assert_eq!(h.sync_error(s), UnknownMemberId);
    let s = h.sync(gen + 1, &m, &[]);
    assert_eq!(h.sync_error(s), IllegalGeneration);
    let s = h.sync_full(
        3,
        "",
        gen,
        &m,
        Option::None,
        (Option::None, Option::None),
        &[],
    );
    assert_eq!(h.sync_error(s), InvalidGroupId);
}

// testSyncGroupEmptyAssignment: a leader that gives nobody anything still completes the sync.
#[test]
fn test_sync_group_empty_assignment() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new(""));
    let s = h.sync(r.generation_id, &r.member_id, &[]);
    let resp = h.sync_response(s);
    assert_eq!(resp.error(), None);
    assert!(resp.assignment.is_empty());
    assert_eq!(h.heartbeat(&r.member_id, r.generation_id), None);
}

// testSyncGroupReturnsAnErrorWhenProtocolTypeIsInconsistent / ...ProtocolNameIsInconsistent /
// testSyncGroupSucceedWhenProtocolTypeAndNameAreNotProvided / ...AreConsistent
#[test]
fn test_sync_group_protocol_type_and_name() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new(""));
    let (g, m) = (r.generation_id, r.member_id.to_string());
    let s = h.sync_full(
        5,
        GROUP,
        g,
        &m,
        Option::None,
        (Some("connect"), Some("range")),
        &[],
    );
    assert_eq!(h.sync_error(s), InconsistentGroupProtocol);
    let s = h.sync_full(
        5,
        GROUP,
        g,
        &m,
        Option::None,
        (Some("consumer"), Some("roundrobin")),
        &[],
    );
    assert_eq!(h.sync_error(s), InconsistentGroupProtocol);
    // v5 must name both (Kafka's broker checks before its coordinator).
    let s = h.sync_full(
        5,
        GROUP,
        g,
        &m,
        Option::None,
        (Option::None, Some("range")),
        &[],
    );
    assert_eq!(h.sync_error(s), InconsistentGroupProtocol);
    let s = h.sync_full(
        4,
        GROUP,
        g,
        &m,
        Option::None,
        (Option::None, Option::None),
        &[],
    );
    assert_eq!(h.sync_error(s), None);
    let s = h.sync_full(
        5,
        GROUP,
        g,
        &m,
        Option::None,
        (Some("consumer"), Some("range")),
        &[],
    );
    let resp = h.sync_response(s);
    assert_eq!(resp.error(), None);
    assert_eq!(resp.protocol_type.as_deref(), Some("consumer"));
    assert_eq!(resp.protocol_name.as_deref(), Some("range"));
}

// testSyncGroupFollowerAfterLeader: the follower syncing after the leader gets its assignment at
// once.
#[test]
fn test_sync_group_follower_after_leader() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(1);
    let f = h.join(&Join::new(""));
    let l = h.join(&Join::new(&ids[0]));
    let (fr, lr) = (h.join_response(f).clone(), h.join_response(l).clone());
    assert_eq!(lr.generation_id, gen + 1);
    let ls = h.sync(
        lr.generation_id,
        &ids[0],
        &[(&ids[0], b"l"), (&fr.member_id, b"f")],
    );
    assert_eq!(&*h.sync_response(ls).assignment, b"l");
    let fs = h.sync(fr.generation_id, &fr.member_id, &[]);
    assert_eq!(&*h.sync_response(fs).assignment, b"f");
}

// testSyncGroupLeaderAfterFollower: the follower's SyncGroup waits for the leader's.
#[test]
fn test_sync_group_leader_after_follower() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(1);
    let f = h.join(&Join::new(""));
    let l = h.join(&Join::new(&ids[0]));
    let fr = h.join_response(f).clone();
    let fs = h.sync(gen + 1, &fr.member_id, &[]);
    assert!(!h.answered(fs));
    // A follower may heartbeat while it waits (CompletingRebalance: NONE).
    assert_eq!(h.heartbeat(&fr.member_id, gen + 1), None);
    let ls = h.sync(gen + 1, &ids[0], &[(&ids[0], b"l"), (&fr.member_id, b"f")]);
    assert_eq!(&*h.sync_response(fs).assignment, b"f");
    assert_eq!(&*h.sync_response(ls).assignment, b"l");
    let _ = l;
}

// testLeaderFailureInSyncGroup: the leader leaves while the follower waits for its assignment:
// the follower is told REBALANCE_IN_PROGRESS.
#[test]
fn test_leader_failure_in_sync_group() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(1);
    let f = h.join(&Join::new(""));
    h.join(&Join::new(&ids[0]));
    let fr = h.join_response(f).clone();
    let fs = h.sync(gen + 1, &fr.member_id, &[]);
    assert!(!h.answered(fs));
    // The leader's session ends (it never syncs, so nothing keeps it).
    let r = h.leave(&[(&ids[0], Option::None)]);
    assert_eq!(r.members[0].error(), None);
    assert_eq!(h.sync_error(fs), RebalanceInProgress);
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
}

// testRebalanceTimesOutWhenSyncRequestIsNotReceived (and ...FromFollowers, ...FromLeaders): the
// members that never sync are removed at the rebalance timeout (their heartbeats keep their
// sessions) and the group rebalances; with nobody left it is Empty.
#[test]
fn test_rebalance_times_out_when_sync_request_is_not_received() {
    for who in ["leader", "followers", "all"] {
        let mut h = H::new();
        let (ids, gen) = h.join_sync_group(3);
        let tokens: Vec<Token> = ids.iter().map(|m| h.join(&Join::new(m))).collect();
        let gen2 = h.join_response(tokens[0]).generation_id;
        assert_eq!(gen2, gen + 1);
        let syncing: Vec<&String> = match who {
            "leader" => ids[1..].iter().collect(), // the leader never syncs
            "followers" => ids[..1].iter().collect(), // the followers never sync
            _ => Vec::new(),
        };
        let parked: Vec<Token> = syncing.iter().map(|m| h.sync(gen2, m, &[])).collect();
        h.advance(REBALANCE as i64 / 2);
        for m in &ids {
            assert_eq!(h.heartbeat(m, gen2), None, "{who}");
        }
        h.advance(REBALANCE as i64 / 2 - 1);
        // The leader's sync makes the group Stable; the followers still owe theirs.
        let before = if who == "followers" {
            GroupState::Stable
        } else {
            GroupState::CompletingRebalance
        };
        assert_eq!(h.state(), Some(before), "{who}");
        h.advance(1);
        let after = if who == "all" {
            GroupState::Empty
        } else {
            GroupState::PreparingRebalance
        };
        assert_eq!(h.state(), Some(after), "{who}");
        let want = if who == "followers" {
            None
        } else {
            RebalanceInProgress
        };
        for p in parked {
            assert_eq!(h.sync_error(p), want, "{who}");
        }
        let left = h.describe(GROUP).members.len();
        assert_eq!(left, syncing.len(), "{who}");
    }
}

// testRebalanceDoesNotTimeOutWhenAllSyncAreReceived
#[test]
fn test_rebalance_does_not_time_out_when_all_sync_are_received() {
    let mut h = H::new();
    let (ids2, gen2) = h.join_sync_group(3);
    for _ in 0..6 {
        h.advance(SESSION as i64 / 2);
        for m in &ids2 {
            assert_eq!(h.heartbeat(m, gen2), None);
        }
    }
    assert_eq!(h.state(), Some(GroupState::Stable));
}

// A failed write of the leader's assignment: every parked SyncGroup gets the mapped error and the
// group rebalances (Kafka's doSyncGroup storeGroup callback).
#[test]
fn a_failed_assignment_write_fails_every_sync_and_rebalances() {
    for (storage, answered) in [
        (NotLeaderOrFollower, NotCoordinator),
        (KafkaStorageError, NotCoordinator),
        (UnknownTopicOrPartition, CoordinatorNotAvailable),
        (NotEnoughReplicas, CoordinatorNotAvailable),
        (RequestTimedOut, RebalanceInProgress),
        (MessageTooLarge, UnknownServerError),
        (RecordListTooLarge, UnknownServerError),
        (InvalidFetchSize, UnknownServerError),
        (CorruptMessage, CorruptMessage),
    ] {
        let mut h = H::new();
        let (ids, gen) = h.join_sync_group(1);
        let f = h.join(&Join::new(""));
        h.join(&Join::new(&ids[0]));
        let fr = h.join_response(f).clone();
        let fs = h.sync(gen + 1, &fr.member_id, &[]);
        h.hold_appends = true;
        let ls = h.sync(gen + 1, &ids[0], &[]);
        assert!(!h.answered(ls));
        h.finish_one(storage);
        assert_eq!(h.sync_error(ls), answered, "{storage:?}");
        assert_eq!(h.sync_error(fs), answered, "{storage:?}");
        assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    }
}

// An assignment whose write completes after the group moved on is ignored.
#[test]
fn an_assignment_written_after_the_group_moved_on_is_ignored() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new(""));
    h.hold_appends = true;
    let ls = h.sync(r.generation_id, &r.member_id, &[(&r.member_id, b"a")]);
    // A new member arrives before the write completes: a rebalance; the parked sync is told so.
    let n = h.join(&Join::new(""));
    assert_eq!(h.sync_error(ls), RebalanceInProgress);
    h.finish_appends(None);
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    assert!(!h.answered(n));
}
