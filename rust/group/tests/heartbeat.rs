//! Heartbeat and sessions: GroupCoordinatorTest's heartbeat tests (checklist items 29-30).

use super::*;
use ErrorCode::*;

// testHeartbeatUnknownGroup / testHeartbeatUnknownConsumerExistingGroup
#[test]
fn test_heartbeat_unknown_group_or_member() {
    let mut h = H::new();
    assert_eq!(h.heartbeat("memberId", 1), UnknownMemberId);
    let (_, gen) = h.stable_group();
    assert_eq!(h.heartbeat("otherMember", gen), UnknownMemberId);
    assert_eq!(h.heartbeat_in("", "m", Option::None, 1), InvalidGroupId);
}

// testHeartbeatDeadGroup
#[test]
fn test_heartbeat_dead_group() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    h.c.force_state(GROUP, GroupState::Dead);
    assert_eq!(h.heartbeat(&m, gen), CoordinatorNotAvailable);
}

// testHeartbeatEmptyGroup: a member id that an Empty group does not know.
#[test]
fn test_heartbeat_empty_group() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    h.leave(&[(&m, Option::None)]);
    assert_eq!(h.state(), Some(GroupState::Empty));
    assert_eq!(h.heartbeat(&m, gen), UnknownMemberId);
}

// testHeartbeatRebalanceInProgress / testHeartbeatDuringRebalanceCausesRebalanceInProgress
#[test]
fn test_heartbeat_rebalance_in_progress() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(2);
    h.join(&Join::new(""));
    assert_eq!(h.heartbeat(&ids[1], gen), RebalanceInProgress);
}

// testHeartbeatIllegalGeneration / testValidHeartbeat
#[test]
fn test_heartbeat_illegal_generation_and_valid() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    assert_eq!(h.heartbeat(&m, gen + 1), IllegalGeneration);
    assert_eq!(h.heartbeat(&m, gen), None);
}

// testSessionTimeout: a member that stops heartbeating is removed and the group rebalances (here
// to Empty).
#[test]
fn test_session_timeout() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    h.advance(SESSION as i64 - 1);
    assert_eq!(h.heartbeat(&m, gen), None);
    h.advance(SESSION as i64);
    assert_eq!(h.heartbeat(&m, gen), UnknownMemberId);
    assert_eq!(h.state(), Some(GroupState::Empty));
}

// testHeartbeatMaintainsSession
#[test]
fn test_heartbeat_maintains_session() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    for _ in 0..10 {
        h.advance(SESSION as i64 - 1);
        assert_eq!(h.heartbeat(&m, gen), None);
    }
    assert_eq!(h.state(), Some(GroupState::Stable));
}

// testCommitMaintainsSession
#[test]
fn test_commit_maintains_session() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    for i in 0..5 {
        h.advance(SESSION as i64 - 1);
        assert_eq!(h.commit(&m, gen, &[("t", 0, i)]), [None]);
    }
    assert_eq!(h.heartbeat(&m, gen), None);
}

// testSessionTimeoutDuringRebalance: a member that does not rejoin within the rebalance is
// dropped at the join completion; its heartbeats then fail.
#[test]
fn test_session_timeout_during_rebalance() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(2);
    let t = h.join(&Join::new(&ids[0]));
    assert_eq!(h.heartbeat(&ids[1], gen), RebalanceInProgress);
    h.advance(REBALANCE as i64);
    assert_eq!(h.join_error(t), None);
    assert_eq!(h.heartbeat(&ids[1], gen), UnknownMemberId);
}

// testCompleteHeartbeatWithGroupDead / testCompleteHeartbeatWithMemberAlreadyRemoved: a session
// timer whose group or member is gone fires without effect.
#[test]
fn test_complete_heartbeat_with_group_dead_or_member_removed() {
    let mut h = H::new();
    let (m, _) = h.stable_group();
    h.leave(&[(&m, Option::None)]);
    assert_eq!(h.delete_groups(&[GROUP]), [(GROUP.to_string(), None)]);
    h.advance(SESSION as i64 * 4);
    assert_eq!(h.state(), Option::None);
}

// A member's session is satisfied while its JoinGroup or SyncGroup is parked (Kafka's
// hasSatisfiedHeartbeat), except for a new member.
#[test]
fn parked_requests_keep_an_old_member_alive() {
    let mut h = H::new();
    let (ids, _) = h.join_sync_group(2);
    let t = h.join(&Join::new(&ids[0]).rebalance(SESSION * 10));
    // ids[0] waits in its JoinGroup well past its session timeout.
    h.advance(SESSION as i64 * 2);
    assert!(!h.answered(t) || h.join_error(t) == None);
    assert!(h
        .describe(GROUP)
        .members
        .iter()
        .any(|m| *m.member_id == *ids[0]));
}
