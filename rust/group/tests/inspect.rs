//! Inspection and expire_member on classic groups: what `inspect_group` and
//! `committed_offsets` read, and a session ended by the host behaving as GroupCoordinatorTest's
//! session timeouts (testSessionTimeout, testSessionTimeoutDuringRebalance,
//! testHeartbeatDuringRebalanceCausesRebalanceInProgress...).

use std::collections::BTreeMap;

use super::*;
use crate::assignors::consumer_protocol::{encode_assignment, encode_subscription};
use crate::assignors::{Assignment, Subscription, TopicPartition};
use ErrorCode::*;

fn subscription(topics: &[&str]) -> Vec<u8> {
    encode_subscription(&Subscription::new(topics.iter().copied()), 3).unwrap()
}

fn assignment(parts: &[(&str, i32)]) -> Vec<u8> {
    let a = Assignment {
        partitions: parts
            .iter()
            .map(|(t, p)| TopicPartition::new(*t, *p))
            .collect(),
        user_data: Option::None,
    };
    encode_assignment(&a, 3).unwrap()
}

/// two_members makes a Stable group of two consumers of `foo` and `bar` with the `range`
/// protocol, the leader holding foo-0 and bar-1, the follower foo-1 and foo-2; returns
/// (leader, follower, generation).
fn two_members(h: &mut H) -> (String, String, i32) {
    let metadata = subscription(&["foo", "bar"]);
    let j = Join::new("").protocols(&[("range", &metadata)]);
    let a = h.join(&j);
    let b = h.join(&j);
    h.advance(INITIAL_DELAY);
    h.advance(INITIAL_DELAY);
    let (ra, rb) = (h.join_response(a).clone(), h.join_response(b).clone());
    assert_eq!((ra.error(), rb.error()), (None, None));
    let gen = ra.generation_id;
    let (leader, follower) = (ra.member_id.to_string(), rb.member_id.to_string());
    assert_eq!(ra.leader.as_ref(), leader);
    let la = assignment(&[("foo", 0), ("bar", 1)]);
    let fa = assignment(&[("foo", 2), ("foo", 1)]);
    let s1 = h.sync(gen, &leader, &[(&leader, &la), (&follower, &fa)]);
    let s2 = h.sync(gen, &follower, &[]);
    assert_eq!((h.sync_error(s1), h.sync_error(s2)), (None, None));
    (leader, follower, gen)
}

fn parts(items: &[(&str, &[i32])]) -> BTreeMap<String, Vec<i32>> {
    items
        .iter()
        .map(|(t, p)| (t.to_string(), p.to_vec()))
        .collect()
}

// What DescribeGroups shows of a Stable group (Kafka's describeGroup), with the consumer
// protocol's subscription and assignment decoded.
#[test]
fn a_stable_group_is_described_with_decoded_assignments() {
    let mut h = H::new();
    assert_eq!(h.c.inspect_group(GROUP), Option::None);
    let (leader, follower, gen) = two_members(&mut h);
    let v = h.c.inspect_group(GROUP).unwrap();
    assert_eq!(v.kind, GroupKind::Classic);
    assert_eq!(v.state, "Stable");
    assert_eq!(v.protocol_type.as_deref(), Some("consumer"));
    assert_eq!(v.protocol.as_deref(), Some("range"));
    assert_eq!(v.generation, gen);
    assert_eq!(v.assignment_epoch, -1);
    let ids: Vec<&str> = v.members.iter().map(|m| m.member_id.as_str()).collect();
    assert_eq!(ids, [leader.as_str(), follower.as_str()]);
    let (l, f) = (&v.members[0], &v.members[1]);
    assert_eq!(l.subscription, ["bar", "foo"]);
    assert_eq!(l.assignment, parts(&[("bar", &[1]), ("foo", &[0])]));
    assert_eq!(f.assignment, parts(&[("foo", &[1, 2])]));
    assert_eq!(
        (l.client_id.as_str(), l.client_host.as_str()),
        ("clientId", "/127.0.0.1")
    );
    assert_eq!(
        (l.group_instance_id.clone(), l.member_epoch),
        (Option::None, -1)
    );
    assert_eq!(h.c.group_ids(), [GROUP]);
}

// A group of another protocol type keeps its bytes opaque: nothing is decoded.
#[test]
fn other_protocol_types_are_not_decoded() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new("").protocol_type("connect"));
    let s = h.sync(r.generation_id, &r.member_id, &[(&r.member_id, b"opaque")]);
    assert_eq!(h.sync_error(s), None);
    let v = h.c.inspect_group(GROUP).unwrap();
    assert_eq!(v.protocol_type.as_deref(), Some("connect"));
    assert!(v.members[0].subscription.is_empty());
    assert!(v.members[0].assignment.is_empty());
}

// Committed offsets are OffsetFetch's: a commit still being appended and offsets of an open
// transaction are left out (Kafka's "pending" offsets); a committed transaction's show.
#[test]
fn committed_offsets_are_the_stable_ones() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    assert_eq!(h.commit(&m, gen, &[("foo", 0, 10)]), [None]);
    assert_eq!(h.txn_commit(7, &[("bar", 0, 30)]), [None]);
    h.hold_appends = true;
    let t = h.commit_full(
        8,
        GROUP,
        &m,
        Option::None,
        gen,
        &[("foo", 1, 20, Option::None)],
    );
    let offsets = |h: &H| -> Vec<(String, i32, i64)> {
        h.c.committed_offsets(GROUP)
            .unwrap()
            .into_iter()
            .map(|(t, p, o)| (t, p, o.offset))
            .collect()
    };
    assert_eq!(offsets(&h), [("foo".to_string(), 0, 10)]);
    h.hold_appends = false;
    h.finish_appends(None);
    assert_eq!(h.commit_errors(t), [None]);
    assert_eq!(
        offsets(&h),
        [("foo".to_string(), 0, 10), ("foo".to_string(), 1, 20)]
    );
    h.end_txn(7, true);
    assert_eq!(offsets(&h).len(), 3);
    assert_eq!(h.c.committed_offsets("other"), Option::None);
}

// testSessionTimeout, with the session ended by the host: the member is removed, the group
// rebalances without it and its next heartbeat is UNKNOWN_MEMBER_ID.
#[test]
fn expiring_a_member_removes_it_and_rebalances() {
    let mut h = H::new();
    let (leader, follower, gen) = two_members(&mut h);
    let effects = h.c.expire_member(h.now, GROUP, Some(&follower)).unwrap();
    h.apply(effects);
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
    assert_eq!(h.heartbeat(&follower, gen), UnknownMemberId);
    // The leader learns of the rebalance and rejoins alone: the join completes at once.
    assert_eq!(h.heartbeat(&leader, gen), RebalanceInProgress);
    let t = h.join(&Join::new(&leader).protocols(&[("range", &subscription(&["foo"]))]));
    let r = h.join_response(t).clone();
    assert_eq!((r.error(), r.generation_id), (None, gen + 1));
    assert_eq!(r.members.len(), 1);
    let v = h.c.inspect_group(GROUP).unwrap();
    assert_eq!(v.state, "CompletingRebalance");
    assert_eq!(v.members.len(), 1);
    assert_eq!(v.members[0].member_id, leader);
    h.c.check_invariants();
}

// Every member's session ends: the group empties, as testSessionTimeout leaves it.
#[test]
fn expiring_every_member_empties_the_group() {
    let mut h = H::new();
    let (leader, follower, gen) = two_members(&mut h);
    let effects = h.c.expire_member(h.now, GROUP, Option::None).unwrap();
    h.apply(effects);
    assert_eq!(h.state(), Some(GroupState::Empty));
    assert_eq!(h.heartbeat(&leader, gen), UnknownMemberId);
    assert_eq!(h.heartbeat(&follower, gen), UnknownMemberId);
    // The new generation, written as the group emptied, has no members.
    let v = h.c.inspect_group(GROUP).unwrap();
    assert_eq!(
        (v.state, v.generation, v.members.len()),
        ("Empty", gen + 1, 0)
    );
    h.c.check_invariants();
}

// Kafka's onExpireHeartbeat spares a member whose JoinGroup is parked (its session is held by
// the request): ending the session then removes nothing, as the timer would.
#[test]
fn a_member_with_a_parked_join_survives() {
    let mut h = H::new();
    let (leader, follower, _) = two_members(&mut h);
    let t = h.join(&Join::new(&leader));
    assert!(!h.answered(t), "parked until the follower rejoins");
    let effects = h.c.expire_member(h.now, GROUP, Some(&leader)).unwrap();
    h.apply(effects);
    assert!(!h.answered(t));
    assert_eq!(h.c.inspect_group(GROUP).unwrap().members.len(), 2);
    // The follower's session is not held: it goes, and the join completes with the leader.
    let effects = h.c.expire_member(h.now, GROUP, Some(&follower)).unwrap();
    h.apply(effects);
    assert_eq!(h.join_error(t), None);
    assert_eq!(h.join_response(t).members.len(), 1);
}

// Bad input is a Kafka error, never a panic.
#[test]
fn expire_member_errors() {
    let mut h = H::new();
    let code = |r: crate::errors::Result<Vec<Effect>>| r.unwrap_err().error_code().unwrap();
    assert_eq!(
        code(h.c.expire_member(0, GROUP, Option::None)),
        GroupIdNotFound
    );
    h.stable_group();
    assert_eq!(
        code(h.c.expire_member(0, GROUP, Some("nobody"))),
        UnknownMemberId
    );
    let p = h.c.partition_for(GROUP);
    let effects = h.c.unload(h.now, p);
    h.apply(effects);
    assert_eq!(
        code(h.c.expire_member(0, GROUP, Option::None)),
        NotCoordinator
    );
}
