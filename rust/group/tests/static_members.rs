//! Static membership (KIP-345): GroupCoordinatorTest's static member tests (checklist items
//! 18-24).

use super::*;
use ErrorCode::*;

// staticMemberJoinAsFirstMember: a static member's id is its instance id and a UUID.
#[test]
fn static_member_join_as_first_member() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new("").instance("leader-instance"));
    assert_eq!(r.error(), None);
    assert!(r.member_id.starts_with("leader-instance-"));
    assert_eq!(
        r.members[0].group_instance_id.as_deref(),
        Some("leader-instance")
    );
}

// staticMemberReJoinWithExplicitUnknownMemberId / shouldGetDifferentStaticMemberIdAfterEachRejoin:
// static members never get MEMBER_ID_REQUIRED, and each rejoin without a member id gets a new id.
#[test]
fn should_get_different_static_member_id_after_each_rejoin() {
    let mut h = H::new();
    let ((leader, li), _, _) = h.static_stable_group();
    let mut seen = vec![leader];
    for _ in 0..3 {
        let t = h.join(&Join::new("").instance(&li).v(5));
        let r = h.join_response(t).clone();
        assert_eq!(r.error(), None);
        assert!(!seen.contains(&r.member_id.to_string()));
        seen.push(r.member_id.to_string());
    }
}

// staticMemberFenceDuplicateRejoinedFollower: a duplicate follower taking the instance fences the
// old id's parked JoinGroup at once.
#[test]
fn static_member_fence_duplicate_rejoined_follower() {
    let mut h = H::new();
    let (_, (follower, fi), _) = h.static_stable_group();
    // A third member triggers a rebalance.
    h.join(&Join::new(""));
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    let old = h.join(&Join::new(&follower).instance(&fi));
    assert!(!h.answered(old));
    let dup = h.join(&Join::new("").instance(&fi));
    let r = h.join_response(old).clone();
    assert_eq!((r.error(), r.generation_id), (FencedInstanceId, -1));
    assert_eq!(r.protocol_type, Option::None);
    assert!(!h.answered(dup));
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
}

// staticMemberFenceDuplicateRejoiningFollowerAfterMemberIdChanged: once a duplicate has taken the
// instance, the old id is fenced.
#[test]
fn static_member_fence_duplicate_rejoining_follower_after_member_id_changed() {
    let mut h = H::new();
    let ((leader, li), (follower, fi), gen) = h.static_stable_group();
    let l = h.join(&Join::new(&leader).instance(&li));
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    let dup = h.join(&Join::new("").instance(&fi));
    // Both instances are in: the join completed.
    let old = h.join(&Join::new(&follower).instance(&fi));
    let lr = h.join_response(l).clone();
    assert_eq!(
        (lr.error(), lr.generation_id, lr.members.len()),
        (None, gen + 1, 2)
    );
    let d = h.join_response(dup).clone();
    assert_eq!((d.error(), d.generation_id), (None, gen + 1));
    assert!(d.members.is_empty());
    assert_ne!(d.member_id.as_ref(), follower.as_str());
    let o = h.join_response(old).clone();
    assert_eq!((o.error(), o.generation_id), (FencedInstanceId, -1));
    assert_eq!(h.state(), Some(GroupState::CompletingRebalance));
}

// staticMemberFenceDuplicateSyncingFollowerAfterMemberIdChanged: the old id's parked SyncGroup is
// fenced, and a CompletingRebalance group rebalances (KAFKA-9801).
#[test]
fn static_member_fence_duplicate_syncing_follower_after_member_id_changed() {
    let mut h = H::new();
    let ((leader, li), (follower, fi), gen) = h.static_stable_group();
    let l = h.join(&Join::new(&leader).instance(&li));
    let f = h.join(&Join::new(&follower).instance(&fi));
    assert_eq!((h.join_error(l), h.join_error(f)), (None, None));
    let gen2 = h.join_response(f).generation_id;
    assert_eq!(gen2, gen + 1);
    assert_eq!(h.join_response(f).leader.as_ref(), leader.as_str());
    let old_sync = h.sync_static(gen2, &follower, &fi, &[]);
    assert!(!h.answered(old_sync));
    let dup = h.join(&Join::new("").instance(&fi));
    assert_eq!(h.sync_error(old_sync), FencedInstanceId);
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    // The leader never rejoins; its session ends and the duplicate leads generation + 2.
    h.advance(REBALANCE as i64);
    let r = h.join_response(dup).clone();
    assert_eq!(r.error(), None);
    assert_eq!(r.generation_id, gen + 2);
    assert_eq!(r.leader, r.member_id);
    assert_eq!(h.state(), Some(GroupState::CompletingRebalance));
}

// staticMemberRejoinWithKnownMemberId: a known static member rejoining with its id in a Stable
// group, as follower with the same metadata, gets the current generation without a rebalance.
#[test]
fn static_member_rejoin_as_follower_with_known_member_id_and_no_protocol_change() {
    let mut h = H::new();
    let ((leader, _), (follower, fi), gen) = h.static_stable_group();
    let t = h.join(&Join::new(&follower).instance(&fi));
    let r = h.join_response(t).clone();
    assert_eq!(
        (r.error(), r.generation_id, r.leader.as_ref()),
        (None, gen, leader.as_str())
    );
    assert_eq!(h.state(), Some(GroupState::Stable));
}

// staticMemberRejoinAsFollowerWithUnknownMemberId: a restarted follower gets a new id and the
// current generation, without a rebalance (the metadata write succeeds); before v9 the leader
// in the answer is the old leader id.
#[test]
fn static_member_rejoin_as_follower_with_unknown_member_id() {
    let mut h = H::new();
    let ((leader, _), (follower, fi), gen) = h.static_stable_group();
    let appends = h.written.len();
    let t = h.join(&Join::new("").instance(&fi));
    let r = h.join_response(t).clone();
    assert_eq!(r.error(), None);
    assert_ne!(r.member_id.as_ref(), follower.as_str());
    assert_eq!((r.generation_id, r.leader.as_ref()), (gen, leader.as_str()));
    assert_eq!(h.state(), Some(GroupState::Stable));
    // The group's metadata was written again, with the new id.
    assert_eq!(h.written.len(), appends + 1);
    // The new id syncs and gets its assignment back; the old one is fenced.
    let s = h.sync_static(gen, &r.member_id, &fi, &[]);
    assert_eq!(&*h.sync_response(s).assignment, b"follower-assignment");
    let s = h.sync_static(gen, &follower, &fi, &[]);
    assert_eq!(h.sync_error(s), FencedInstanceId);
}

// staticMemberRejoinWithLeaderIdAndUnknownMemberId: a restarted static leader, before v9, is
// answered with the old leader id, which its new id does not equal: it does not assign.
#[test]
fn static_member_rejoin_with_leader_id_and_unknown_member_id() {
    let mut h = H::new();
    let ((leader, li), _, gen) = h.static_stable_group();
    let t = h.join(&Join::new("").instance(&li).v(8));
    let r = h.join_response(t).clone();
    assert_eq!(r.error(), None);
    assert_eq!(r.generation_id, gen);
    assert_eq!(r.leader.as_ref(), leader.as_str());
    assert_ne!(r.member_id.as_ref(), leader.as_str());
    assert!(r.members.is_empty() && !r.skip_assignment);
    assert_eq!(h.state(), Some(GroupState::Stable));
    // It leads the group now, under its new id.
    assert_eq!(h.describe(GROUP).members[0].member_id, r.member_id);
}

// The v9 path (KIP-814): the restarted leader learns it leads, gets the members, and is told to
// skip the assignment.
#[test]
fn static_leader_rejoin_with_unknown_member_id_v9_skips_assignment() {
    let mut h = H::new();
    let (_, (_, fi), gen) = h.static_stable_group();
    let (li, _) = ("leader-instance", fi);
    let t = h.join(&Join::new("").instance(li).v(9));
    let r = h.join_response(t).clone();
    assert_eq!(r.error(), None);
    assert_eq!(r.generation_id, gen);
    assert_eq!(r.leader, r.member_id);
    assert!(r.skip_assignment);
    assert_eq!(r.members.len(), 2);
    // A follower restarting on v9 is not told to skip anything.
    let t = h.join(&Join::new("").instance("follower-instance").v(9));
    let f = h.join_response(t).clone();
    assert!(!f.skip_assignment && f.members.is_empty());
    assert_eq!(f.leader, r.member_id);
}

// staticMemberRejoinWithLeaderIdAndKnownMemberId: the leader rejoining with its id rebalances.
#[test]
fn static_member_rejoin_with_leader_id_and_known_member_id() {
    let mut h = H::new();
    let ((leader, li), _, _) = h.static_stable_group();
    let t = h.join(&Join::new(&leader).instance(&li));
    assert!(!h.answered(t));
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
}

// staticMemberRejoinWithFollowerIdAndChangeOfProtocol /
// staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWithSelectedProtocolChanged: a change
// that moves the selected protocol rebalances.
#[test]
fn static_member_rejoin_with_unknown_member_id_and_change_of_protocol_with_selected_protocol_changed(
) {
    let mut h = H::new();
    let l = h.join(
        &Join::new("")
            .instance("a")
            .protocols(&[("range", b"m"), ("roundrobin", b"m")]),
    );
    h.advance(INITIAL_DELAY);
    let r = h.join_response(l).clone();
    assert_eq!(r.protocol_name.as_deref(), Some("range"));
    let s = h.sync_static(r.generation_id, &r.member_id, "a", &[]);
    assert_eq!(h.sync_error(s), None);
    let t = h.join(
        &Join::new("")
            .instance("a")
            .protocols(&[("roundrobin", b"m")]),
    );
    // The one member's protocol changes the selection: rebalance (completes at once, everyone is
    // in).
    let r2 = h.join_response(t).clone();
    assert_eq!(r2.generation_id, r.generation_id + 1);
    assert_eq!(r2.protocol_name.as_deref(), Some("roundrobin"));
}

// staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchanged: new
// protocols that do not change the selection: no rebalance, the metadata is written.
#[test]
fn static_member_rejoin_with_unknown_member_id_and_change_of_protocol_while_select_protocol_unchanged(
) {
    let mut h = H::new();
    let (_, (_, fi), gen) = h.static_stable_group();
    let t = h.join(
        &Join::new("")
            .instance(&fi)
            .protocols(&[("range", b"changed")]),
    );
    let r = h.join_response(t).clone();
    assert_eq!((r.error(), r.generation_id), (None, gen));
    assert_eq!(h.state(), Some(GroupState::Stable));
}

// ...PersistenceFailure and staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsButCannotPersistChange:
// the write fails: the replacement is reverted (the old id still works, the old timeouts stand)
// and the member is answered the mapped error with no member id.
#[test]
fn static_member_rejoin_while_select_protocol_unchanged_persistence_failure() {
    let mut h = H::new();
    let ((leader, _), (follower, fi), gen) = h.static_stable_group();
    h.hold_appends = true;
    let t = h.join(
        &Join::new("")
            .instance(&fi)
            .session(2 * SESSION)
            .rebalance(2 * REBALANCE),
    );
    assert!(!h.answered(t));
    h.finish_one(MessageTooLarge);
    let r = h.join_response(t).clone();
    assert_eq!(r.error(), UnknownServerError);
    assert_eq!((r.member_id.as_ref(), r.generation_id), ("", gen));
    assert_eq!(r.leader.as_ref(), leader.as_str());
    h.hold_appends = false;
    // The old id still works.
    let j = h.join(&Join::new(&follower).instance(&fi));
    assert_eq!(h.join_error(j), None);
    let s = h.sync_static(gen, &follower, &fi, &[]);
    assert_eq!(h.sync_error(s), None);
    assert_eq!(h.state(), Some(GroupState::Stable));
}

// staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsAndPersistChange: the new timeouts are
// kept (and written).
#[test]
fn static_member_rejoin_with_updated_session_and_rebalance_timeouts_and_persist_change() {
    let mut h = H::new();
    let (_, (_, fi), _) = h.static_stable_group();
    let t = h.join(&Join::new("").instance(&fi).session(2 * SESSION));
    let r = h.join_response(t).clone();
    assert_eq!(r.error(), None);
    // The session restarted with the old timeout (Kafka reschedules it before the update); from
    // the next heartbeat on it is twice as long: heartbeats every 900 ms keep it.
    h.advance(SESSION as i64 - 100);
    h.heartbeat_in(GROUP, &r.member_id, Some(&fi), r.generation_id);
    for _ in 0..3 {
        h.advance(900);
        let e = h.heartbeat_in(GROUP, &r.member_id, Some(&fi), r.generation_id);
        assert!(matches!(e, None | RebalanceInProgress), "{e:?}");
    }
    assert!(h
        .describe(GROUP)
        .members
        .iter()
        .any(|m| m.member_id == r.member_id));
}

// staticMemberRejoinWithKnownLeaderIdToTriggerRebalanceAndFollowerWithChangeOfProtocol
#[test]
fn static_member_rejoin_with_known_leader_id_to_trigger_rebalance_and_follower_with_change_of_protocol(
) {
    let mut h = H::new();
    let ((leader, li), (_, fi), gen) = h.static_stable_group();
    let l = h.join(&Join::new(&leader).instance(&li));
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    // The follower restarts with other metadata during the rebalance: it simply joins it.
    let f = h.join(
        &Join::new("")
            .instance(&fi)
            .protocols(&[("range", b"other")]),
    );
    assert_eq!((h.join_error(l), h.join_error(f)), (None, None));
    assert_eq!(h.join_response(f).generation_id, gen + 1);
    assert_eq!(h.join_response(l).members.len(), 2);
}

// staticMemberRejoinAsFollowerWithMismatchedMemberId / staticMemberRejoinAsLeaderWithMismatchedMemberId:
// a known instance id with another member id is fenced.
#[test]
fn static_member_rejoin_with_mismatched_member_id() {
    let mut h = H::new();
    let ((_, li), (_, fi), _) = h.static_stable_group();
    for i in [&li, &fi] {
        let t = h.join(&Join::new("invalid-member-id").instance(i));
        assert_eq!(h.join_error(t), FencedInstanceId);
    }
}

// staticMemberSyncAsLeaderWithInvalidMemberId / staticMemberHeartbeatLeaderWithInvalidMemberId /
// staticMemberCommitOffsetWithInvalidMemberId
#[test]
fn static_member_requests_with_invalid_member_id_are_fenced() {
    let mut h = H::new();
    let ((_, li), _, gen) = h.static_stable_group();
    let s = h.sync_static(gen, "invalid", &li, &[]);
    assert_eq!(h.sync_error(s), FencedInstanceId);
    assert_eq!(
        h.heartbeat_in(GROUP, "invalid", Some(&li), gen),
        FencedInstanceId
    );
    let t = h.commit_full(
        7,
        GROUP,
        "invalid",
        Some(&li),
        gen,
        &[("t", 0, 1, Option::None)],
    );
    assert_eq!(h.commit_errors(t), [FencedInstanceId]);
}

// staticMemberJoinWithUnknownInstanceIdAndKnownMemberId: an unknown instance id with a known
// member id is UNKNOWN_MEMBER_ID.
#[test]
fn static_member_join_with_unknown_instance_id_and_known_member_id() {
    let mut h = H::new();
    let ((leader, _), _, _) = h.static_stable_group();
    let t = h.join(&Join::new(&leader).instance("unknown-instance"));
    assert_eq!(h.join_error(t), UnknownMemberId);
}

// staticMemberReJoinWithIllegalStateAsUnknownMember: a known member rejoining an Empty group (the
// group lost its members) is told UNKNOWN_MEMBER_ID.
#[test]
fn static_member_rejoin_with_illegal_state_as_unknown_member() {
    let mut h = H::new();
    let ((leader, li), _, _) = h.static_stable_group();
    h.c.force_state(GROUP, GroupState::Empty);
    let t = h.join(&Join::new(&leader).instance(&li));
    assert_eq!(h.join_error(t), UnknownMemberId);
}

// testStaticMemberFollowerFailToRejoinBeforeRebalanceTimeout: a static follower that does not
// rejoin is kept through the join and leaves only at its session timeout.
#[test]
fn test_static_member_follower_fail_to_rejoin_before_rebalance_timeout() {
    let mut h = H::new();
    let l = h.join(&Join::new("").instance("leader").session(2000));
    let f = h.join(&Join::new("").instance("follower").session(2000));
    h.advance(INITIAL_DELAY);
    h.advance(INITIAL_DELAY);
    let (lr, fr) = (h.join_response(l).clone(), h.join_response(f).clone());
    let gen = lr.generation_id;
    let s = h.sync_static(gen, &lr.member_id, "leader", &[]);
    assert_eq!(h.sync_error(s), None);
    let l2 = h.join(&Join::new(&lr.member_id).instance("leader").session(2000));
    h.advance(REBALANCE as i64);
    let r = h.join_response(l2).clone();
    assert_eq!((r.error(), r.generation_id), (None, gen + 1));
    // Both are in the leader's member list: the static follower was kept.
    assert_eq!(r.members.len(), 2);
    assert!(h
        .describe(GROUP)
        .members
        .iter()
        .any(|m| m.member_id == fr.member_id));
    // Its session ends later: then it goes.
    h.advance(2000);
    assert!(h
        .describe(GROUP)
        .members
        .iter()
        .all(|m| m.member_id != fr.member_id));
}

// testStaticMemberLeaderFailToRejoinBeforeRebalanceTimeout: the leader does not rejoin; the
// follower that did leads.
#[test]
fn test_static_member_leader_fail_to_rejoin_before_rebalance_timeout() {
    let mut h = H::new();
    let ((leader, _), (follower, fi), gen) = h.static_stable_group();
    let f = h.join(
        &Join::new(&follower)
            .instance(&fi)
            .protocols(&[("range", b"other")]),
    );
    h.advance(REBALANCE as i64);
    let r = h.join_response(f).clone();
    assert_eq!((r.error(), r.generation_id), (None, gen + 1));
    assert_eq!(r.leader.as_ref(), follower.as_str());
    assert_ne!(r.leader.as_ref(), leader.as_str());
}

// Static members leave by instance id (admin removal, testStaticMembersValidBatchLeaveGroup).
#[test]
fn static_members_leave_by_instance_id() {
    let mut h = H::new();
    let ((_, li), (_, fi), _) = h.static_stable_group();
    let r = h.leave(&[("", Some(&li)), ("", Some(&fi))]);
    assert_eq!(r.error(), None);
    assert!(r.members.iter().all(|m| m.error() == None));
    assert_eq!(h.state(), Some(GroupState::Empty));
}
