//! JoinGroup: GroupCoordinatorTest's join tests (checklist items 1-17). Timers fire when the
//! clock reaches their deadline (Kafka's MockTimer fires one millisecond later).

use super::*;
use ErrorCode::*;

// testJoinGroupSessionTimeoutTooSmall / TooLarge
#[test]
fn test_join_group_session_timeout_too_small_or_large() {
    let mut h = H::new();
    let t = h.join(&Join::new("").session(9));
    assert_eq!(h.join_error(t), InvalidSessionTimeout);
    let t = h.join(&Join::new("").session(10 * 60 * 1000 + 1));
    assert_eq!(h.join_error(t), InvalidSessionTimeout);
    // Checked before the group is looked up: nothing was created.
    assert_eq!(h.state(), Option::None);
}

// testInvalidGroupId: an empty group id is INVALID_GROUP_ID for JoinGroup.
#[test]
fn test_invalid_group_id() {
    let mut h = H::new();
    let t = h.join(&Join::new("").group(""));
    assert_eq!(h.join_error(t), InvalidGroupId);
}

// testJoinGroupUnknownConsumerNewGroup: a member id on a group that does not exist.
#[test]
fn test_join_group_unknown_consumer_new_group() {
    let mut h = H::new();
    let t = h.join(&Join::new("memberId"));
    assert_eq!(h.join_error(t), UnknownMemberId);
    assert_eq!(h.join_response(t).member_id.as_ref(), "memberId");
    assert_eq!(h.state(), Option::None);
}

// testValidJoinGroup / testJoinGroupReturnsTheProtocolType
#[test]
fn test_valid_join_group() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new(""));
    assert_eq!(r.error(), None);
    assert_eq!(r.generation_id, 1);
    assert_eq!(r.protocol_type.as_deref(), Some(PROTOCOL_TYPE));
    assert_eq!(r.protocol_name.as_deref(), Some("range"));
    assert_eq!(r.leader, r.member_id);
    assert!(r.member_id.starts_with("clientId-"));
    // The leader gets itself in the member list, with its metadata.
    assert_eq!(r.members.len(), 1);
    assert_eq!(&*r.members[0].metadata, b"metadata");
    assert_eq!(h.state(), Some(GroupState::CompletingRebalance));
}

// Member ids are client id, "-", and a random (here seeded) version-4 UUID.
#[test]
fn member_ids_are_client_id_and_uuid() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new(""));
    let uuid = r.member_id.strip_prefix("clientId-").unwrap();
    let parts: Vec<&str> = uuid.split('-').collect();
    assert_eq!(
        parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12]
    );
    assert!(parts[2].starts_with('4'));
    assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"));
    // Seeded: the same inputs give the same id.
    let mut again = H::new();
    assert_eq!(again.join_alone(&Join::new("")).member_id, r.member_id);
}

// testJoinGroupInconsistentProtocolType, testJoinGroupWithEmptyProtocolType,
// testJoinGroupWithEmptyGroupProtocol, testJoinGroupInconsistentGroupProtocol,
// testJoinGroupSecondJoinInconsistentProtocol
#[test]
fn test_join_group_inconsistent_protocols() {
    let mut h = H::new();
    let t = h.join(&Join::new("").protocol_type(""));
    assert_eq!(h.join_error(t), InconsistentGroupProtocol);
    let t = h.join(&Join::new("").protocols(&[]));
    assert_eq!(h.join_error(t), InconsistentGroupProtocol);
    let first = h.join(&Join::new("").protocols(&[("range", b"x")]));
    // Another protocol type, or no protocol in common, while the first waits.
    let t = h.join(&Join::new("").protocol_type("connect"));
    assert_eq!(h.join_error(t), InconsistentGroupProtocol);
    let t = h.join(&Join::new("").protocols(&[("roundrobin", b"x")]));
    assert_eq!(h.join_error(t), InconsistentGroupProtocol);
    assert_eq!(h.join_response(t).member_id.as_ref(), "");
    h.advance(INITIAL_DELAY);
    let r = h.join_response(first).clone();
    assert_eq!(r.error(), None);
    // testJoinGroupSecondJoinInconsistentProtocol: a known member switching to a protocol nobody
    // else has is refused with its own member id.
    let t = h.join(&Join::new(&r.member_id).protocols(&[("roundrobin", b"x")]));
    assert_eq!(h.join_error(t), InconsistentGroupProtocol);
    assert_eq!(h.join_response(t).member_id, r.member_id);
}

// testJoinGroupUnknownConsumerExistingGroup: an unknown member id on an existing group.
#[test]
fn test_join_group_unknown_consumer_existing_group() {
    let mut h = H::new();
    h.stable_group();
    let t = h.join(&Join::new("otherMemberId"));
    assert_eq!(h.join_error(t), UnknownMemberId);
}

// testJoinGroupUnknownConsumerNewDeadGroup: a Dead group answers COORDINATOR_NOT_AVAILABLE.
#[test]
fn test_join_group_unknown_consumer_new_dead_group() {
    let mut h = H::new();
    h.stable_group();
    h.c.force_state(GROUP, GroupState::Dead);
    let t = h.join(&Join::new(""));
    assert_eq!(h.join_error(t), CoordinatorNotAvailable);
    let t = h.join(&Join::new("someMember"));
    assert_eq!(h.join_error(t), CoordinatorNotAvailable);
}

fn max_size(n: i64) -> H {
    let mut c = config();
    c.max_size = n;
    H::with(c)
}

// testJoinGroupShouldReceiveErrorIfGroupOverMaxSize / testDynamicMembersJoinGroupWithMaxSize
#[test]
fn test_join_group_should_receive_error_if_group_over_max_size() {
    let mut h = max_size(3);
    let tokens: Vec<Token> = (0..3).map(|_| h.join(&Join::new(""))).collect();
    // During the rebalance the fourth is turned away: 3 members have joined.
    let t = h.join(&Join::new(""));
    assert_eq!(h.join_error(t), GroupMaxSizeReached);
    assert_eq!(h.join_response(t).member_id.as_ref(), "");
    h.advance(INITIAL_DELAY);
    h.advance(INITIAL_DELAY);
    for t in tokens {
        assert_eq!(h.join_error(t), None);
    }
    let t = h.join(&Join::new(""));
    assert_eq!(h.join_error(t), GroupMaxSizeReached);
}

// testDynamicMembersJoinGroupWithMaxSizeAndRequiredKnownMember: the limit counts joined members,
// not pending ones; the pending member that finds the group full is dropped.
#[test]
fn test_dynamic_members_join_group_with_max_size_and_required_known_member() {
    let mut h = max_size(2);
    let ids: Vec<String> = (0..3)
        .map(|_| {
            let t = h.join(&Join::new("").v(4));
            assert_eq!(h.join_error(t), MemberIdRequired);
            h.join_response(t).member_id.to_string()
        })
        .collect();
    let a = h.join(&Join::new(&ids[0]).v(4));
    let b = h.join(&Join::new(&ids[1]).v(4));
    let c = h.join(&Join::new(&ids[2]).v(4));
    assert_eq!(h.join_error(c), GroupMaxSizeReached);
    h.advance(INITIAL_DELAY);
    h.advance(INITIAL_DELAY);
    assert_eq!((h.join_error(a), h.join_error(b)), (None, None));
    assert_eq!(h.describe(GROUP).members.len(), 2);
}

// testStaticMembersJoinGroupWithMaxSize
#[test]
fn test_static_members_join_group_with_max_size() {
    let mut h = max_size(2);
    let a = h.join(&Join::new("").instance("i1"));
    let b = h.join(&Join::new("").instance("i2"));
    let c = h.join(&Join::new("").instance("i3"));
    assert_eq!(h.join_error(c), GroupMaxSizeReached);
    h.advance(INITIAL_DELAY);
    h.advance(INITIAL_DELAY);
    assert_eq!((h.join_error(a), h.join_error(b)), (None, None));
}

// testDynamicMembersCanReJoinGroupWithMaxSizeWhileRebalancing: members already rejoined are
// accepted again; new ones are not.
#[test]
fn test_dynamic_members_can_rejoin_group_with_max_size_while_rebalancing() {
    let mut h = max_size(2);
    let (ids, gen) = h.join_sync_group(2);
    let a = h.join(&Join::new(&ids[0]));
    let b = h.join(&Join::new(&ids[1]));
    assert_eq!(h.state(), Some(GroupState::CompletingRebalance));
    assert_eq!((h.join_error(a), h.join_error(b)), (None, None));
    assert_eq!(h.join_response(a).generation_id, gen + 1);
    let c = h.join(&Join::new(""));
    assert_eq!(h.join_error(c), GroupMaxSizeReached);
}

// testLastJoiningMembersAreKickedOutWhenReJoiningGroupWithMaxSize: a group above the limit (the
// limit was lowered) keeps the first members to rejoin; the last are removed.
#[test]
fn test_last_joining_members_are_kicked_out_when_rejoining_group_with_max_size() {
    let mut h = H::new();
    let (ids, _) = h.join_sync_group(4);
    h.c.config.max_size = 2;
    // A rebalance: the first member rejoins.
    let tokens: Vec<Token> = ids.iter().map(|m| h.join(&Join::new(m))).collect();
    // The last two are turned away, which leaves everyone in: the join completes at once.
    let errors: Vec<ErrorCode> = tokens.iter().map(|t| h.join_error(*t)).collect();
    assert_eq!(
        errors,
        [None, None, GroupMaxSizeReached, GroupMaxSizeReached]
    );
    let left: Vec<String> = h
        .describe(GROUP)
        .members
        .iter()
        .map(|m| m.member_id.to_string())
        .collect();
    assert_eq!(left, ids[..2]);
}

// testNewMemberTimeoutCompletion: the 5-minute new-member timeout ends with the join; the session
// timeout applies after.
#[test]
fn test_new_member_timeout_completion() {
    let mut h = H::new();
    let session = (NEW_MEMBER_JOIN_TIMEOUT_MS + 5000) as i32;
    let r = h.join_alone(&Join::new("").session(session));
    let s = h.sync(r.generation_id, &r.member_id, &[(&r.member_id, b"")]);
    assert_eq!(h.sync_error(s), None);
    h.advance(NEW_MEMBER_JOIN_TIMEOUT_MS + 100);
    assert_eq!(h.describe(GROUP).members.len(), 1);
    h.advance(session as i64);
    assert_eq!(h.describe(GROUP).members.len(), 0);
}

// testNewMemberJoinExpiration: a new member's parked JoinGroup fails after 5 minutes when the
// rebalance hangs on an old member.
#[test]
fn test_new_member_join_expiration() {
    let mut h = H::new();
    let session = (NEW_MEMBER_JOIN_TIMEOUT_MS + 5000) as i32;
    let rebalance = (NEW_MEMBER_JOIN_TIMEOUT_MS * 2) as i32;
    let first = h.join_alone(&Join::new("").session(session).rebalance(rebalance));
    assert_eq!(first.error(), None);
    let t = h.join(&Join::new("").session(session).rebalance(rebalance));
    assert!(!h.answered(t));
    assert_eq!(h.describe(GROUP).members.len(), 2);
    h.advance(NEW_MEMBER_JOIN_TIMEOUT_MS);
    assert_eq!(h.join_error(t), UnknownMemberId);
    let members = h.describe(GROUP).members;
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].member_id, first.member_id);
}

// testNewMemberFailureAfterJoinGroupCompletion: a new member that never syncs is removed by the
// sync timeout and the group rebalances.
#[test]
fn test_new_member_failure_after_join_group_completion() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(1);
    let leader = &ids[0];
    let new = h.join(&Join::new(""));
    let re = h.join(&Join::new(leader));
    assert_eq!((h.join_error(new), h.join_error(re)), (None, None));
    let gen2 = h.join_response(re).generation_id;
    assert_eq!(gen2, gen + 1);
    let s = h.sync(gen2, leader, &[]);
    assert_eq!(h.sync_error(s), None);
    assert_eq!(h.state(), Some(GroupState::Stable));
    // The leader heartbeats; the new member never syncs: the sync timeout removes it.
    h.advance(REBALANCE as i64 / 2);
    assert_eq!(h.heartbeat(leader, gen2), None);
    h.advance(REBALANCE as i64 / 2);
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    let new_id = h.join_response(new).member_id.to_string();
    assert!(h
        .describe(GROUP)
        .members
        .iter()
        .all(|m| *m.member_id != *new_id));
}

// testNewMemberFailureAfterSyncGroupCompletion: after a completed sync, a member that stops
// heartbeating is removed at its session timeout.
#[test]
fn test_new_member_failure_after_sync_group_completion() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(2);
    h.advance(SESSION as i64 / 2);
    assert_eq!(h.heartbeat(&ids[0], gen), None);
    h.advance(SESSION as i64 / 2);
    // The second member never heartbeat: gone, and the group rebalances.
    assert_eq!(h.heartbeat(&ids[0], gen), RebalanceInProgress);
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    assert_eq!(h.heartbeat(&ids[1], gen), UnknownMemberId);
}

// testJoinGroupFromUnchangedFollowerDoesNotRebalance / testJoinGroupFromUnchangedLeaderShouldRebalance
#[test]
fn test_join_group_from_unchanged_follower_does_not_rebalance() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(2);
    let t = h.join(&Join::new(&ids[1]));
    let r = h.join_response(t).clone();
    assert_eq!((r.error(), r.generation_id), (None, gen));
    assert!(r.members.is_empty());
    assert_eq!(h.state(), Some(GroupState::Stable));
    // The leader, unchanged, forces a rebalance.
    let t = h.join(&Join::new(&ids[0]));
    assert!(!h.answered(t));
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
}

// testSecondMemberPartiallyJoinAndTimeout: a pending member that never comes back expires after
// its session timeout; the group stays Stable.
#[test]
fn test_second_member_partially_join_and_timeout() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(1);
    let t = h.join(&Join::new("").v(4).session(500));
    assert_eq!(h.join_error(t), MemberIdRequired);
    let pending = h.join_response(t).member_id.to_string();
    assert_eq!(h.state(), Some(GroupState::Stable));
    h.advance(300);
    assert_eq!(h.heartbeat(&ids[0], gen), None);
    h.advance(300);
    assert_eq!(h.state(), Some(GroupState::Stable));
    // Gone: its id is unknown now.
    let t = h.join(&Join::new(&pending).v(4));
    assert_eq!(h.join_error(t), UnknownMemberId);
}

// testRebalanceCompletesBeforeMemberJoins: a static member that does not rejoin stays until its
// session timeout; the join completes at the rebalance timeout without it.
#[test]
fn test_rebalance_completes_before_member_joins() {
    let mut h = H::new();
    let first = h.join_alone(
        &Join::new("")
            .instance("leader")
            .session(1000)
            .rebalance(1200),
    );
    let s = h.sync_static(first.generation_id, &first.member_id, "leader", &[]);
    assert_eq!(h.sync_error(s), None);
    let other = h.join(&Join::new(""));
    // Heartbeats keep the static member while the rebalance waits for it.
    for _ in 0..3 {
        h.advance(SESSION as i64);
        if h.answered(other) {
            break;
        }
        assert_eq!(
            h.heartbeat_in(GROUP, &first.member_id, Some("leader"), first.generation_id),
            RebalanceInProgress
        );
    }
    let o = h.join_response(other).clone();
    assert_eq!(o.error(), None);
    // The other member leads now; the static one is still a member.
    assert_eq!(o.leader, o.member_id);
    assert_eq!(o.members.len(), 2);
    let s = h.sync(o.generation_id, &o.member_id, &[(&o.member_id, b"")]);
    assert_eq!(h.sync_error(s), None);
    assert_eq!(
        h.heartbeat_in(GROUP, &first.member_id, Some("leader"), first.generation_id),
        IllegalGeneration
    );
    // The static member's session ends: the group rebalances around the other member.
    let mut seen = Vec::new();
    while seen.last() != Some(&RebalanceInProgress) {
        h.advance(SESSION as i64 - 100);
        seen.push(h.heartbeat(&o.member_id, o.generation_id));
        assert!(seen.len() < 10);
    }
    assert!(seen[..seen.len() - 1].iter().all(|e| *e == None));
    let t = h.join(&Join::new(&o.member_id));
    let r = h.join_response(t).clone();
    assert_eq!((r.error(), r.members.len()), (None, 1));
    let s = h.sync(r.generation_id, &o.member_id, &[(&o.member_id, b"")]);
    assert_eq!(h.sync_error(s), None);
    for _ in 0..20 {
        h.advance(SESSION as i64 - 100);
        assert_eq!(h.heartbeat(&o.member_id, r.generation_id), None);
    }
}

fn group_with_pending_member(h: &mut H) -> (Vec<String>, String) {
    let (ids, _) = h.join_sync_group(2);
    // A rebalance, and a pending member.
    let a = h.join(&Join::new(&ids[0]).v(4));
    assert!(!h.answered(a));
    let t = h.join(&Join::new("").v(4).session(100));
    assert_eq!(h.join_error(t), MemberIdRequired);
    let b = h.join(&Join::new(&ids[1]).v(4));
    assert!(!h.answered(b), "a pending member blocks the join phase");
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    (ids, h.join_response(t).member_id.to_string())
}

// testJoinGroupCompletionWhenPendingMemberJoins
#[test]
fn test_join_group_completion_when_pending_member_joins() {
    let mut h = H::new();
    let (_, pending) = group_with_pending_member(&mut h);
    let t = h.join(&Join::new(&pending).v(4));
    assert_eq!(h.join_error(t), None);
    assert_eq!(h.state(), Some(GroupState::CompletingRebalance));
    assert_eq!(h.describe(GROUP).members.len(), 3);
}

// testJoinGroupCompletionWhenPendingMemberTimesOut
#[test]
fn test_join_group_completion_when_pending_member_times_out() {
    let mut h = H::new();
    group_with_pending_member(&mut h);
    h.advance(100);
    assert_eq!(h.state(), Some(GroupState::CompletingRebalance));
    assert_eq!(h.describe(GROUP).members.len(), 2);
}

// testPendingMembersLeavesGroup / testPendingMemberBatchLeaveGroup
#[test]
fn test_pending_members_leaves_group() {
    let mut h = H::new();
    let (_, pending) = group_with_pending_member(&mut h);
    let r = h.leave(&[(&pending, Option::None)]);
    assert_eq!(r.error(), None);
    assert_eq!(r.members[0].error(), None);
    assert_eq!(h.state(), Some(GroupState::CompletingRebalance));
    assert_eq!(h.describe(GROUP).members.len(), 2);
}

// testGenerationIdIncrementsOnRebalance
#[test]
fn test_generation_id_increments_on_rebalance() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(1);
    assert_eq!(gen, 1);
    let t = h.join(&Join::new(&ids[0]));
    assert_eq!(h.join_response(t).generation_id, 2);
}

// shouldDelayInitialRebalanceByGroupInitialRebalanceDelayOnEmptyGroup
#[test]
fn should_delay_initial_rebalance_by_group_initial_rebalance_delay_on_empty_group() {
    let mut h = H::new();
    let t = h.join(&Join::new(""));
    h.advance(INITIAL_DELAY - 1);
    assert!(!h.answered(t));
    h.advance(1);
    assert_eq!(h.join_error(t), None);
}

// shouldResetRebalanceDelayWhenNewMemberJoinsGroupInInitialRebalance
#[test]
fn should_reset_rebalance_delay_when_new_member_joins_group_in_initial_rebalance() {
    let mut h = H::new();
    let rebalance = (INITIAL_DELAY * 3) as i32;
    let a = h.join(&Join::new("").rebalance(rebalance));
    h.advance(INITIAL_DELAY - 1);
    let b = h.join(&Join::new("").rebalance(rebalance));
    h.advance(1);
    // The first delay ended with a new member in: wait another delay.
    assert!(!h.answered(a) && !h.answered(b));
    h.advance(INITIAL_DELAY - 1);
    assert!(!h.answered(a));
    h.advance(1);
    assert_eq!((h.join_error(a), h.join_error(b)), (None, None));
}

// shouldDelayRebalanceUptoRebalanceTimeout: members keep arriving, but the delays stop at the
// rebalance timeout.
#[test]
fn should_delay_rebalance_upto_rebalance_timeout() {
    let mut h = H::new();
    let rebalance = (INITIAL_DELAY * 2) as i32;
    let a = h.join(&Join::new("").rebalance(rebalance));
    let b = h.join(&Join::new("").rebalance(rebalance));
    h.advance(INITIAL_DELAY);
    let c = h.join(&Join::new("").rebalance(rebalance));
    h.advance(INITIAL_DELAY - 1);
    assert!(!h.answered(a) && !h.answered(b) && !h.answered(c));
    h.advance(1);
    assert_eq!(
        (h.join_error(a), h.join_error(b), h.join_error(c)),
        (None, None, None)
    );
}

/// A Stable group of a static leader and a static follower where only the follower rejoins a
/// rebalance (GroupCoordinatorTest's groupStuckInRebalanceTimeoutDueToNonjoinedStaticMember):
/// long session timeouts keep the leader in past the rebalance timeout.
fn group_stuck_with_non_joined_static_leader(h: &mut H) -> (String, String) {
    let l = h.join(&Join::new("").instance("leader").session(10_000));
    let f = h.join(&Join::new("").instance("follower").session(10_000));
    h.advance(INITIAL_DELAY);
    h.advance(INITIAL_DELAY);
    let (lr, fr) = (h.join_response(l).clone(), h.join_response(f).clone());
    let s = h.sync_static(lr.generation_id, &lr.member_id, "leader", &[]);
    assert_eq!(h.sync_error(s), None);
    let fs = h.sync_static(fr.generation_id, &fr.member_id, "follower", &[]);
    assert_eq!(h.sync_error(fs), None);
    // A new dynamic member triggers a rebalance; the follower rejoins, the leader does not.
    let n = h.join(&Join::new("").session(10_000));
    let fj = h.join(
        &Join::new(&fr.member_id)
            .instance("follower")
            .session(10_000),
    );
    assert!(!h.answered(n) && !h.answered(fj));
    (lr.member_id.to_string(), fr.member_id.to_string())
}

// testLeaderFailToRejoinBeforeFinalRebalanceTimeoutWithLongSessionTimeout: the join completes at
// the rebalance timeout with a member that rejoined as the new leader.
#[test]
fn test_leader_fail_to_rejoin_before_final_rebalance_timeout_with_long_session_timeout() {
    let mut h = H::new();
    let (leader, follower) = group_stuck_with_non_joined_static_leader(&mut h);
    h.advance(REBALANCE as i64);
    assert_eq!(h.state(), Some(GroupState::CompletingRebalance));
    let d = h.describe(GROUP);
    // The static leader stays (its session has not ended); a rejoined member leads.
    assert_eq!(d.members.len(), 3);
    let t = h.join(&Join::new(&follower).instance("follower").session(10_000));
    let r = h.join_response(t).clone();
    assert_ne!(r.leader.as_ref(), leader.as_str());
}

// testLeaderRejoinBeforeFinalRebalanceTimeoutWithLongSessionTimeout: the leader rejoining in
// time completes the join as leader.
#[test]
fn test_leader_rejoin_before_final_rebalance_timeout_with_long_session_timeout() {
    let mut h = H::new();
    let (leader, _) = group_stuck_with_non_joined_static_leader(&mut h);
    let t = h.join(&Join::new(&leader).instance("leader").session(10_000));
    let r = h.join_response(t).clone();
    assert_eq!((r.error(), r.leader.as_ref()), (None, leader.as_str()));
    assert_eq!(r.members.len(), 3);
}

// A group whose only members are static and none rejoins waits (rebalance timeout after
// rebalance timeout) until their sessions end, then becomes Empty (Kafka's onCompleteJoin
// "could not complete rebalance because no members rejoined").
#[test]
fn a_rebalance_nobody_rejoins_waits_for_static_sessions() {
    let mut h = H::new();
    let a = h.join(&Join::new("").instance("a").session(2000));
    let b = h.join(&Join::new("").instance("b").session(2000));
    h.advance(INITIAL_DELAY);
    h.advance(INITIAL_DELAY);
    let (ar, br) = (h.join_response(a).clone(), h.join_response(b).clone());
    let s = h.sync_static(ar.generation_id, &ar.member_id, "a", &[]);
    assert_eq!(h.sync_error(s), None);
    let s = h.sync_static(br.generation_id, &br.member_id, "b", &[]);
    assert_eq!(h.sync_error(s), None);
    // "a" leaves (by instance id); "b" never rejoins.
    h.leave(&[("", Some("a"))]);
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    h.advance(REBALANCE as i64);
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    assert_eq!(h.describe(GROUP).members.len(), 1);
    h.advance(2000);
    assert_eq!(h.state(), Some(GroupState::Empty));
    assert_eq!(h.describe(GROUP).members.len(), 0);
}

// A member sending a second JoinGroup while its first is parked: Kafka drops the first; here it
// is answered REBALANCE_IN_PROGRESS so that its connection does not wait forever.
#[test]
fn a_superseded_parked_join_is_answered() {
    let mut h = H::new();
    let (ids, _) = h.join_sync_group(2);
    let first = h.join(&Join::new(&ids[0]));
    assert!(!h.answered(first));
    let second = h.join(&Join::new(&ids[0]));
    assert_eq!(h.join_error(first), RebalanceInProgress);
    assert!(!h.answered(second));
    let f = h.join(&Join::new(&ids[1]));
    assert_eq!((h.join_error(second), h.join_error(f)), (None, None));
}

// JoinGroup v0 has no rebalance timeout: the session timeout stands in (the wire adapter reads
// it so); a v3 join (before KIP-394) gets its member id at once.
#[test]
fn join_before_v4_gets_a_member_id_at_once() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new("").v(0));
    assert_eq!(r.error(), None);
    assert!(!r.member_id.is_empty());
}

/// With group.initial.rebalance.delay.ms=0 the initial delayed join still expires as an event
/// of its own, after the requests already in (Kafka's coordinator timer): members joining at the
/// same moment make one generation, rather than the first alone and the rest a rebalance later
/// (which its members learn of only at their next heartbeat). A member joining meanwhile
/// re-arms it once more, again for the next tick.
#[test]
fn an_initial_join_without_delay_takes_every_member_in_before_the_next_tick() {
    let mut cfg = config();
    cfg.initial_rebalance_delay_ms = 0;
    let mut h = H::with(cfg);
    let a = h.join(&Join::new(""));
    let b = h.join(&Join::new(""));
    assert!(!h.answered(a) && !h.answered(b));
    // The first tick finds b added since the join was armed: once more, at the next tick.
    h.advance(0);
    let c = h.join(&Join::new(""));
    assert!(!h.answered(a) && !h.answered(c));
    h.advance(0);
    assert!(!h.answered(a));
    h.advance(0);
    let (ra, rb, rc) = (
        h.join_response(a).clone(),
        h.join_response(b).clone(),
        h.join_response(c).clone(),
    );
    assert_eq!(ra.generation_id, 1);
    assert_eq!((rb.generation_id, rc.generation_id), (1, 1));
    assert_eq!(ra.members.len(), 3);
}
