//! KIP-848 consumer groups through the coordinator: ConsumerGroupHeartbeat and
//! ConsumerGroupDescribe, the records they write, their timers, the other apis on a consumer
//! group, and a restart. Named after Kafka's GroupMetadataManagerTest where one pins the
//! behaviour (reference §11).

use std::borrow::Cow;

use super::*;
use crate::group::assignors::{Assignment, TopicId};
use crate::group::consumer::records::{ConsumerGroupRecord as R, CurrentAssignment};
use crate::group::consumer::MemberState;
use crate::protocol::records::{decode_batches, DecodeOptions};

#[path = "group_configs.rs"]
mod group_configs;
#[path = "inspect_consumer.rs"]
mod inspect_consumer;
#[path = "migration.rs"]
mod migration;

const FOO: TopicId = [1; 16];
const BAR: TopicId = [2; 16];
const G: &str = "cg";

fn h() -> H {
    let mut h = H::new();
    h.c.set_topic_metadata([("foo", FOO, 6), ("bar", BAR, 3)]);
    h
}

/// Hb builds a ConsumerGroupHeartbeat request.
#[derive(Clone, Default)]
struct Hb {
    member: String,
    epoch: i32,
    instance: Option<String>,
    rebalance: i32,
    topics: Option<Vec<String>>,
    assignor: Option<String>,
    regex: Option<String>,
    owned: Option<Vec<(TopicId, Vec<i32>)>>,
}

/// join is a full first heartbeat: epoch 0, a rebalance timeout, the topics, owning nothing.
fn join(member: &str, topics: &[&str]) -> Hb {
    Hb {
        member: member.into(),
        epoch: 0,
        rebalance: 30_000,
        topics: Some(topics.iter().map(|t| t.to_string()).collect()),
        owned: Some(vec![]),
        ..Default::default()
    }
}

/// beat is a plain heartbeat at `epoch`, reporting `owned` (None: not sent).
fn beat(member: &str, epoch: i32, owned: Option<&Assignment>) -> Hb {
    Hb {
        member: member.into(),
        epoch,
        rebalance: -1,
        owned: owned.map(|a| a.iter().map(|(t, p)| (*t, p.to_vec())).collect()),
        ..Default::default()
    }
}

fn send(h: &mut H, hb: &Hb) -> Token {
    let owned = hb.owned.as_ref().map(|o| {
        o.iter()
            .map(|(t, p)| ConsumerGroupHeartbeatRequestTopicPartition {
                topic_id: *t,
                partitions: p.clone(),
                ..Default::default()
            })
            .collect()
    });
    h.send(&GroupRequest::ConsumerGroupHeartbeat(Req {
        version: 1,
        client_id: "client",
        client_host: "/127.0.0.1",
        body: ConsumerGroupHeartbeatRequest {
            group_id: G.into(),
            member_id: hb.member.as_str().into(),
            member_epoch: hb.epoch,
            instance_id: hb.instance.as_deref().map(Into::into),
            rebalance_timeout_ms: hb.rebalance,
            subscribed_topic_names: hb
                .topics
                .as_ref()
                .map(|t| t.iter().map(|n| Cow::Owned(n.clone())).collect()),
            server_assignor: hb.assignor.as_deref().map(Into::into),
            subscribed_topic_regex: hb.regex.as_deref().map(Into::into),
            topic_partitions: owned,
            ..Default::default()
        },
    }))
}

fn response(h: &H, t: Token) -> ConsumerGroupHeartbeatResponse<'static> {
    match h.answers.get(&t) {
        Some(GroupResponse::ConsumerGroupHeartbeat(r)) => r.clone(),
        other => panic!("token {t}: no ConsumerGroupHeartbeat response: {other:?}"),
    }
}

fn hb(h: &mut H, hb: &Hb) -> ConsumerGroupHeartbeatResponse<'static> {
    let t = send(h, hb);
    response(h, t)
}

fn error(r: &ConsumerGroupHeartbeatResponse<'_>) -> ErrorCode {
    ErrorCode::for_code(r.error_code)
}

/// assigned is the response's assignment as an [`Assignment`] (None when not sent).
fn assigned(r: &ConsumerGroupHeartbeatResponse<'_>) -> Option<Assignment> {
    r.assignment.as_ref().map(|a| {
        a.topic_partitions
            .iter()
            .map(|tp| (tp.topic_id, tp.partitions.clone()))
            .collect()
    })
}

fn parts(items: &[(TopicId, &[i32])]) -> Assignment {
    items.iter().map(|(t, p)| (*t, p.to_vec())).collect()
}

/// records are the consumer group records written from the `from`-th append on.
fn records(h: &H, from: usize) -> Vec<R> {
    let mut out = Vec::new();
    for (_, batch) in &h.written[from..] {
        for b in decode_batches(batch, &DecodeOptions::default()).unwrap() {
            for r in b.records {
                if let Some(rec) = R::read(r.key.as_deref().unwrap(), r.value.as_deref()).unwrap() {
                    out.push(rec);
                }
            }
        }
    }
    out
}

/// kinds names each record by type and tombstone, for order checks.
fn kinds(recs: &[R]) -> Vec<String> {
    recs.iter()
        .map(|r| {
            let name = match r {
                R::Metadata { .. } => "GroupMetadata",
                R::PartitionMetadata { .. } => "PartitionMetadata",
                R::MemberMetadata { .. } => "MemberMetadata",
                R::TargetAssignmentMetadata { .. } => "TargetMetadata",
                R::TargetAssignmentMember { .. } => "TargetMember",
                R::CurrentMemberAssignment { .. } => "CurrentAssignment",
                R::RegularExpression { .. } => "Regex",
            };
            if r.is_tombstone() {
                format!("{name}-")
            } else {
                name.to_string()
            }
        })
        .collect()
}

fn describe(h: &mut H) -> ConsumerGroupDescribeResponseGroup<'static> {
    let t = h.send(&GroupRequest::ConsumerGroupDescribe(Req::new(
        1,
        ConsumerGroupDescribeRequest {
            group_ids: vec![G.into()],
            include_authorized_operations: false,
            ..Default::default()
        },
    )));
    match h.answers.get(&t) {
        Some(GroupResponse::ConsumerGroupDescribe(r)) => r.groups[0].clone(),
        other => panic!("no ConsumerGroupDescribe response: {other:?}"),
    }
}

/// owners checks that no partition is held (assigned or pending revocation) by two members,
/// as ConsumerGroupDescribe shows them.
fn assert_single_owners(h: &mut H) {
    let d = describe(h);
    let mut seen = std::collections::BTreeSet::new();
    for m in &d.members {
        for tp in &m.assignment.topic_partitions {
            for p in &tp.partitions {
                assert!(
                    seen.insert((tp.topic_id, *p)),
                    "{:?}-{p} is held twice: {d:?}",
                    tp.topic_id
                );
            }
        }
    }
}

// testMemberJoinsEmptyConsumerGroup: the first member gets everything at epoch 1, with the
// records in Kafka 4.1+'s order.
#[test]
fn a_member_joins_an_empty_group() {
    let mut h = h();
    let r = hb(&mut h, &join("m1", &["foo", "bar"]));
    assert_eq!(error(&r), ErrorCode::None);
    assert_eq!(r.member_id.as_deref(), Some("m1"));
    assert_eq!(r.member_epoch, 2);
    assert_eq!(r.heartbeat_interval_ms, 5000);
    let all = parts(&[(FOO, &[0, 1, 2, 3, 4, 5]), (BAR, &[0, 1, 2])]);
    assert_eq!(assigned(&r), Some(all.clone()));
    let recs = records(&h, 0);
    assert_eq!(
        kinds(&recs),
        [
            "MemberMetadata",
            "GroupMetadata",
            "TargetMember",
            "TargetMetadata",
            "CurrentAssignment"
        ]
    );
    match &recs[4] {
        R::CurrentMemberAssignment { value: Some(v), .. } => assert_eq!(
            v,
            &CurrentAssignment {
                member_epoch: 2,
                previous_member_epoch: 0,
                state: MemberState::Stable,
                assignment_epochs: all
                    .iter()
                    .flat_map(|(t, ps)| ps.iter().map(|p| ((*t, *p), 2)))
                    .collect(),
                assigned_partitions: all,
                partitions_pending_revocation: Assignment::new(),
            }
        ),
        other => panic!("{other:?}"),
    }
    let d = describe(&mut h);
    assert_eq!(
        (d.group_state.as_ref(), d.group_epoch, d.assignment_epoch),
        ("Stable", 2, 2)
    );
    assert_eq!(d.assignor_name.as_ref(), "uniform");
    assert_eq!(d.members[0].client_id.as_ref(), "client");
    assert_eq!(d.members[0].client_host.as_ref(), "/127.0.0.1");
    assert_eq!(d.members[0].member_type, 1);
    // A heartbeat that changes nothing writes nothing and carries no assignment.
    let n = h.written.len();
    let r = hb(&mut h, &beat("m1", 2, None));
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, 2));
    assert!(r.assignment.is_none());
    assert_eq!(h.written.len(), n);
}

// The reconciliation of testReconciliationProcess: revoke first, then assign, never a
// partition held by two members.
#[test]
fn a_second_member_takes_half_after_the_first_revokes() {
    let mut h = h();
    let r1 = hb(&mut h, &join("m1", &["foo"]));
    let all = assigned(&r1).unwrap();
    assert_eq!(all, parts(&[(FOO, &[0, 1, 2, 3, 4, 5])]));

    let r2 = hb(&mut h, &join("m2", &["foo"]));
    assert_eq!(r2.member_epoch, 3);
    // Its partitions are still m1's: it waits for them at the new epoch.
    assert_eq!(assigned(&r2), Some(Assignment::new()));
    let d = describe(&mut h);
    assert_eq!((d.group_state.as_ref(), d.group_epoch), ("Reconciling", 3));
    assert_single_owners(&mut h);

    // m1 learns it must give three up: it stays at epoch 1 with the rest.
    let r = hb(&mut h, &beat("m1", 2, Some(&all)));
    assert_eq!(r.member_epoch, 2);
    let kept = assigned(&r).unwrap();
    assert_eq!(kept.len(), 3);
    assert_single_owners(&mut h);
    // Still reporting them: nothing moves.
    let r = hb(&mut h, &beat("m1", 2, Some(&all)));
    assert_eq!(r.member_epoch, 2);
    assert!(r.assignment.is_none());
    let r = hb(&mut h, &beat("m2", 3, Some(&Assignment::new())));
    assert!(r.assignment.is_none(), "nothing released yet");
    // m1 reports the smaller set: it moves to epoch 2.
    let r = hb(&mut h, &beat("m1", 2, Some(&kept)));
    assert_eq!(r.member_epoch, 3);
    // m2 gets the released partitions now.
    let r = hb(&mut h, &beat("m2", 3, Some(&Assignment::new())));
    let got = assigned(&r).unwrap();
    assert_eq!(got.len(), 3);
    for (t, ps) in got.iter() {
        for p in ps {
            assert!(!kept.contains(t, *p));
        }
    }
    let d = describe(&mut h);
    assert_eq!(d.group_state.as_ref(), "Stable");
    assert_single_owners(&mut h);
}

// testLeavingMemberBumpsGroupEpoch: a leave writes the member's tombstones and bumps the epoch;
// the next heartbeat gives the rest to the remaining member.
#[test]
fn a_leave_fences_the_member_and_bumps_the_epoch() {
    let mut h = h();
    let r1 = hb(&mut h, &join("m1", &["foo"]));
    let a1 = assigned(&r1).unwrap();
    hb(&mut h, &join("m2", &["foo"]));
    let r = hb(&mut h, &beat("m1", 2, Some(&a1)));
    let kept = assigned(&r).unwrap();
    hb(&mut h, &beat("m1", 2, Some(&kept)));
    let n = h.written.len();
    let r = hb(&mut h, &beat("m1", -1, None));
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, -1));
    assert_eq!(r.member_id.as_deref(), Some("m1"));
    assert_eq!(
        kinds(&records(&h, n)),
        [
            "CurrentAssignment-",
            "TargetMember-",
            "MemberMetadata-",
            "GroupMetadata"
        ]
    );
    let r = hb(&mut h, &beat("m2", 3, Some(&Assignment::new())));
    assert_eq!(r.member_epoch, 4);
    assert_eq!(assigned(&r), Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5])])));
    // The left member is unknown now.
    let r = hb(&mut h, &beat("m1", 3, None));
    assert_eq!(error(&r), ErrorCode::UnknownMemberId);
}

#[test]
fn heartbeats_that_fail() {
    let mut h = h();
    // No group yet: only a join creates one.
    let r = hb(&mut h, &beat("m1", 1, None));
    assert_eq!(error(&r), ErrorCode::GroupIdNotFound);
    assert_eq!(
        r.error_message.as_deref(),
        Some("Consumer group cg not found.")
    );
    hb(&mut h, &join("m1", &["foo"]));
    // An unknown member.
    assert_eq!(
        error(&hb(&mut h, &beat("m9", 1, None))),
        ErrorCode::UnknownMemberId
    );
    // An epoch ahead of the member's, or behind without its previous epoch's conditions.
    assert_eq!(
        error(&hb(&mut h, &beat("m1", 7, None))),
        ErrorCode::FencedMemberEpoch
    );
    // Static validation: INVALID_REQUEST.
    let mut bad = join("m2", &["foo"]);
    bad.rebalance = -1;
    assert_eq!(error(&hb(&mut h, &bad)), ErrorCode::InvalidRequest);
    let mut bad = join("m2", &["foo"]);
    bad.owned = None;
    assert_eq!(error(&hb(&mut h, &bad)), ErrorCode::InvalidRequest);
    let mut bad = join("m2", &["foo"]);
    bad.topics = None;
    assert_eq!(error(&hb(&mut h, &bad)), ErrorCode::InvalidRequest);
    assert_eq!(
        error(&hb(&mut h, &beat("", 1, None))),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        error(&hb(&mut h, &beat("m1", -3, None))),
        ErrorCode::InvalidRequest
    );
    let mut bad = join("m2", &["foo"]);
    bad.assignor = Some("sticky".into());
    assert_eq!(error(&hb(&mut h, &bad)), ErrorCode::UnsupportedAssignor);
}

// A known member that rejoins with epoch 0 (Kafka 4.2, KAFKA-19233) keeps its partitions and
// gets the full assignment back.
#[test]
fn a_known_member_rejoins_with_epoch_zero() {
    let mut h = h();
    let r = hb(&mut h, &join("m1", &["foo"]));
    let all = assigned(&r).unwrap();
    let r = hb(&mut h, &join("m1", &["foo"]));
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, 2));
    assert_eq!(assigned(&r), Some(all));
}

#[test]
fn the_group_max_size_turns_new_members_away() {
    let mut c = config();
    c.consumer_max_size = 1;
    let mut h = H::with(c);
    h.c.set_topic_metadata([("foo", FOO, 6)]);
    hb(&mut h, &join("m1", &["foo"]));
    let r = hb(&mut h, &join("m2", &["foo"]));
    assert_eq!(error(&r), ErrorCode::GroupMaxSizeReached);
    // The member already in may rejoin.
    assert_eq!(error(&hb(&mut h, &join("m1", &["foo"]))), ErrorCode::None);
}

// testStaticMemberGetsBackAssignmentUponRejoin and
// testNoGroupEpochBumpWhenStaticMemberTemporarilyLeaves.
#[test]
fn a_static_member_leaves_for_a_while_and_comes_back() {
    let mut h = h();
    let mut j = join("a1", &["foo"]);
    j.instance = Some("i1".into());
    let r = hb(&mut h, &j);
    let all = assigned(&r).unwrap();
    // Another id for the same instance while it holds it: UNRELEASED_INSTANCE_ID.
    let mut again = join("a2", &["foo"]);
    again.instance = Some("i1".into());
    assert_eq!(error(&hb(&mut h, &again)), ErrorCode::UnreleasedInstanceId);
    // A heartbeat from another member id with the instance: FENCED_INSTANCE_ID.
    let mut other = beat("a2", 2, None);
    other.instance = Some("i1".into());
    assert_eq!(error(&hb(&mut h, &other)), ErrorCode::FencedInstanceId);
    // The temporary leave keeps the partitions and the epoch.
    let n = h.written.len();
    let mut leave = beat("a1", -2, None);
    leave.instance = Some("i1".into());
    let r = hb(&mut h, &leave);
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, -2));
    assert_eq!(kinds(&records(&h, n)), ["CurrentAssignment"]);
    assert_eq!(describe(&mut h).group_epoch, 2);
    // Back under a new member id: the old one's records go, it has the same partitions at the
    // same epoch, and the group epoch does not move.
    let n = h.written.len();
    let r = hb(&mut h, &again);
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, 2));
    assert_eq!(assigned(&r), Some(all));
    assert_eq!(
        kinds(&records(&h, n))[..6],
        [
            "CurrentAssignment-",
            "TargetMember-",
            "MemberMetadata-",
            "MemberMetadata",
            "TargetMember",
            "CurrentAssignment"
        ]
    );
    let d = describe(&mut h);
    assert_eq!(d.group_epoch, 2);
    assert_eq!(d.members.len(), 1);
    assert_eq!(d.members[0].member_id.as_ref(), "a2");
    assert_eq!(d.members[0].instance_id.as_deref(), Some("i1"));
}

// KAFKA-20442 (Kafka 4.4): when the last member leaves, the target assignment epoch follows the
// group epoch, so the Empty group describes both equal (found by the Java client's scenario,
// tests/java/test_java_clients.py::test_consumer_protocol_group).
#[test]
fn the_last_member_to_leave_brings_the_assignment_epoch_along() {
    let mut h = h();
    let a1 = assigned(&hb(&mut h, &join("m1", &["foo"]))).unwrap();
    hb(&mut h, &join("m2", &["foo"]));
    // m1 leaves: m2 is still there to heartbeat the next target, the assignment epoch stays.
    hb(&mut h, &beat("m1", -1, None));
    let d = describe(&mut h);
    assert_eq!((d.group_epoch, d.assignment_epoch), (4, 3));
    let n = h.written.len();
    let r = hb(&mut h, &beat("m2", -1, None));
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, -1));
    assert_eq!(
        kinds(&records(&h, n)),
        [
            "CurrentAssignment-",
            "TargetMember-",
            "MemberMetadata-",
            "GroupMetadata",
            "TargetMetadata"
        ]
    );
    let d = describe(&mut h);
    assert_eq!(
        (d.group_state.as_ref(), d.group_epoch, d.assignment_epoch),
        ("Empty", 5, 5)
    );
    // The next member starts from there: epoch 5, everything.
    let r = hb(&mut h, &join("m3", &["foo"]));
    assert_eq!((r.member_epoch, assigned(&r)), (6, Some(a1)));
}

// The session timeout (45 s by default) fences a member that stops heartbeating.
#[test]
fn a_silent_member_is_fenced_at_its_session_timeout() {
    let mut h = h();
    let r = hb(&mut h, &join("m1", &["foo"]));
    let a1 = assigned(&r).unwrap();
    hb(&mut h, &join("m2", &["foo"]));
    h.advance(40_000);
    // m2 keeps its session; m1 does not.
    hb(&mut h, &beat("m2", 3, Some(&Assignment::new())));
    h.advance(5_001);
    let d = describe(&mut h);
    assert_eq!(d.members.len(), 1);
    assert_eq!(d.group_epoch, 4);
    let r = hb(&mut h, &beat("m2", 3, Some(&Assignment::new())));
    assert_eq!(r.member_epoch, 4);
    assert_eq!(assigned(&r), Some(a1));
}

// A member that does not revoke within its rebalance timeout is fenced.
#[test]
fn a_member_that_does_not_revoke_in_time_is_fenced() {
    let mut h = h();
    let mut j = join("m1", &["foo"]);
    j.rebalance = 1_000;
    let r = hb(&mut h, &j);
    let all = assigned(&r).unwrap();
    hb(&mut h, &join("m2", &["foo"]));
    let r = hb(&mut h, &beat("m1", 2, Some(&all)));
    assert_eq!(r.member_epoch, 2, "must revoke");
    h.advance(999);
    assert_eq!(describe(&mut h).members.len(), 2);
    h.advance(2);
    let d = describe(&mut h);
    assert_eq!(d.members.len(), 1);
    assert_eq!(d.members[0].member_id.as_ref(), "m2");
}

// A restart: what the coordinator wrote rebuilds the group in another one, members carry on at
// their epochs, and their sessions start over.
#[test]
fn replaying_the_log_rebuilds_consumer_groups() {
    let mut h = h();
    let r = hb(&mut h, &join("m1", &["foo", "bar"]));
    let a1 = assigned(&r).unwrap();
    hb(&mut h, &join("m2", &["foo"]));
    let r = hb(&mut h, &beat("m1", 2, Some(&a1)));
    let kept = assigned(&r).unwrap();
    let before = describe(&mut h);
    let mut r = restarted(&h);
    assert_eq!(describe(&mut r), before);
    // m1 carries on: it reports the smaller set and moves to epoch 2.
    let x = hb(&mut r, &beat("m1", 2, Some(&kept)));
    assert_eq!((error(&x), x.member_epoch), (ErrorCode::None, 3));
    // Sessions start at load: a member that never comes back is fenced 45 s later.
    r.advance(45_001);
    assert_eq!(describe(&mut r).members.len(), 0);
}

/// restarted is a new coordinator at `h`'s time that has loaded every partition `h` wrote,
/// as a broker restarting on the same log.
fn restarted(h: &H) -> H {
    let mut by_partition: BTreeMap<i32, Vec<u8>> = BTreeMap::new();
    for (p, b) in &h.written {
        by_partition.entry(*p).or_default().extend_from_slice(b);
    }
    let mut r = h_at(h.now);
    for (p, data) in &by_partition {
        r.c.load(*p, data, true).unwrap();
    }
    r
}

fn h_at(now: i64) -> H {
    let mut h = h();
    h.now = now;
    h
}

// A failed append answers the mapped error and leaves the group as it was.
#[test]
fn a_failed_append_undoes_the_heartbeat() {
    let mut h = h();
    hb(&mut h, &join("m1", &["foo"]));
    let before = describe(&mut h);
    h.hold_appends = true;
    let t = send(&mut h, &join("m2", &["foo"]));
    assert!(!h.answered(t));
    h.finish_appends(ErrorCode::NotEnoughReplicas);
    h.hold_appends = false;
    assert_eq!(error(&response(&h, t)), ErrorCode::CoordinatorNotAvailable);
    assert_eq!(describe(&mut h), before);
}

// Found by consumer_props: an append that timed out is COORDINATOR_NOT_AVAILABLE to a
// ConsumerGroupHeartbeat, as Kafka's CoordinatorOperationExceptionHelper maps it (the classic
// REBALANCE_IN_PROGRESS is fatal to Kafka's KIP-848 consumer), and the member retries.
#[test]
fn a_timed_out_append_answers_coordinator_not_available() {
    let mut h = h();
    h.hold_appends = true;
    let t = send(&mut h, &join("m1", &["foo"]));
    h.finish_appends(ErrorCode::RequestTimedOut);
    h.hold_appends = false;
    assert_eq!(error(&response(&h, t)), ErrorCode::CoordinatorNotAvailable);
    let r = hb(&mut h, &join("m1", &["foo"]));
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, 2));
}

// Found by consumer_props: a leave whose append fails puts the member back, and with it its
// session, or the member (its client gone) would hold its partitions until the next load.
#[test]
fn a_member_whose_leave_failed_still_times_out() {
    let mut h = h();
    hb(&mut h, &join("m1", &["foo"]));
    h.hold_appends = true;
    let t = send(&mut h, &beat("m1", -1, None));
    h.finish_appends(ErrorCode::NotLeaderOrFollower);
    h.hold_appends = false;
    assert_eq!(error(&response(&h, t)), ErrorCode::NotCoordinator);
    assert_eq!(describe(&mut h).members.len(), 1);
    h.advance(45_001);
    let d = describe(&mut h);
    assert_eq!((d.members.len(), d.group_state.as_ref()), (0, "Empty"));
}

#[test]
fn other_apis_on_a_consumer_group() {
    let mut h = h();
    let r = hb(&mut h, &join("m1", &["foo"]));
    // ListGroups: type consumer, its KIP-848 state; the type filter picks it.
    let l = h.list(&[], &[]);
    assert_eq!(l.groups.len(), 1);
    assert_eq!(
        (
            l.groups[0].group_type.as_ref(),
            l.groups[0].protocol_type.as_ref(),
            l.groups[0].group_state.as_ref()
        ),
        ("consumer", "consumer", "Stable")
    );
    assert!(h.list(&[], &["classic"]).groups.is_empty());
    assert_eq!(h.list(&["stable"], &["Consumer"]).groups.len(), 1);
    assert!(h.list(&["empty"], &[]).groups.is_empty());
    // DescribeGroups: not a classic group.
    let t = h.send(&GroupRequest::DescribeGroups(Req::new(
        6,
        DescribeGroupsRequest {
            groups: vec![G.into()],
            ..Default::default()
        },
    )));
    let d = match h.answers.get(&t) {
        Some(GroupResponse::DescribeGroups(r)) => r.groups[0].clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(d.error(), ErrorCode::GroupIdNotFound);
    assert_eq!(d.group_state.as_ref(), "Dead");
    // A classic JoinGroup is turned away while consumer members are in.
    let j = h.join(&Join::new("").group(G));
    assert_eq!(h.join_error(j), ErrorCode::InconsistentGroupProtocol);
    // DeleteGroups: not while it has members.
    assert_eq!(
        h.delete_groups(&[G]),
        [(G.to_string(), ErrorCode::NonEmptyGroup)]
    );
    // Offsets: a member commits at its epoch with v9; another epoch is stale.
    let t = h.commit_full(9, G, "m1", None, r.member_epoch, &[("foo", 0, 5, None)]);
    assert_eq!(h.commit_errors(t), [ErrorCode::None]);
    let t = h.commit_full(9, G, "m1", None, 7, &[("foo", 0, 6, None)]);
    assert_eq!(h.commit_errors(t), [ErrorCode::StaleMemberEpoch]);
    let t = h.commit_full(8, G, "m1", None, 1, &[("foo", 0, 6, None)]);
    assert_eq!(h.commit_errors(t), [ErrorCode::UnsupportedVersion]);
    let t = h.commit_full(9, G, "nobody", None, 1, &[("foo", 0, 6, None)]);
    assert_eq!(h.commit_errors(t), [ErrorCode::UnknownMemberId]);
    // An admin's LeaveGroup removes the member.
    let l = h.leave_in(G, &[("m1", None)]);
    assert_eq!(l.members[0].error(), ErrorCode::None);
    let d = describe(&mut h);
    assert_eq!((d.group_state.as_ref(), d.members.len()), ("Empty", 0));
    // Empty now: an admin commits with epoch -1, and the group can be deleted.
    let t = h.commit_full(9, G, "", None, -1, &[("foo", 0, 8, None)]);
    assert_eq!(h.commit_errors(t), [ErrorCode::None]);
    let n = h.written.len();
    assert_eq!(h.delete_groups(&[G]), [(G.to_string(), ErrorCode::None)]);
    let recs = records(&h, n);
    assert_eq!(
        kinds(&recs),
        ["TargetMetadata-", "PartitionMetadata-", "GroupMetadata-"]
    );
    let d = describe(&mut h);
    assert_eq!(d.error_code, ErrorCode::GroupIdNotFound.code());
}

// ConsumerGroupTest.testValidateOffsetCommitWithEpochValidation and
// testValidateOffsetCommitWithUnassignedTopicOrPartition (KIP-1251, Kafka 4.3+), through the
// coordinator: a member may commit at an older epoch the partitions it held since then, and
// nothing else; the assignment epochs survive a restart.
#[test]
fn a_commit_at_an_older_epoch_is_checked_against_assignment_epochs() {
    let mut h = h();
    let all = assigned(&hb(&mut h, &join("m1", &["foo"]))).unwrap();
    let r2 = hb(&mut h, &join("m2", &["foo"]));
    assert_eq!(r2.member_epoch, 3);
    let kept = assigned(&hb(&mut h, &beat("m1", 2, Some(&all)))).unwrap();
    let r = hb(&mut h, &beat("m1", 2, Some(&kept)));
    assert_eq!(r.member_epoch, 3);
    let got = assigned(&hb(&mut h, &beat("m2", 3, Some(&Assignment::new())))).unwrap();
    let mine = kept.get(&FOO)[0];
    let given = all
        .get(&FOO)
        .iter()
        .copied()
        .find(|p| !kept.contains(&FOO, *p))
        .unwrap();
    assert!(got.contains(&FOO, given));
    let commit = |h: &mut H, member: &str, epoch: i32, p: i32| {
        let t = h.commit_full(9, G, member, None, epoch, &[("foo", p, 1, None)]);
        h.commit_errors(t)[0]
    };
    let mut r = restarted(&h);
    for h in [&mut h, &mut r] {
        // m1 was given `mine` at epoch 2 and is at 3 now: 2 and 3 commit it.
        assert_eq!(commit(h, "m1", 3, mine), ErrorCode::None);
        assert_eq!(commit(h, "m1", 2, mine), ErrorCode::None);
        // Older than the partition's assignment epoch, or newer than the member's: stale.
        assert_eq!(commit(h, "m1", 1, mine), ErrorCode::StaleMemberEpoch);
        assert_eq!(commit(h, "m1", 4, mine), ErrorCode::StaleMemberEpoch);
        // A partition it gave up, at the epoch it held it: stale, it is m2's now.
        assert_eq!(commit(h, "m1", 2, given), ErrorCode::StaleMemberEpoch);
        // m2 got it at epoch 3: a commit stamped 2 is older than that.
        assert_eq!(commit(h, "m2", 2, given), ErrorCode::StaleMemberEpoch);
        assert_eq!(commit(h, "m2", 3, given), ErrorCode::None);
        // One partition refused refuses the whole commit, as Kafka's validator throws.
        let t = h.commit_full(
            9,
            G,
            "m1",
            None,
            2,
            &[("foo", mine, 1, None), ("foo", given, 1, None)],
        );
        assert_eq!(
            h.commit_errors(t),
            [ErrorCode::StaleMemberEpoch, ErrorCode::StaleMemberEpoch]
        );
    }
}

// An Empty classic group becomes a consumer group when a consumer-protocol member joins, and
// an Empty consumer group a classic one when a classic member joins (offline migration).
#[test]
fn empty_groups_change_type_offline() {
    let mut h = h();
    hb(&mut h, &join("m1", &["foo"]));
    hb(&mut h, &beat("m1", -1, None));
    let r = h.join_alone(&Join::new("").group(G).v(3));
    assert_eq!(r.error(), ErrorCode::None);
    assert_eq!(h.list(&[], &["classic"]).groups.len(), 1);
    assert!(h.list(&[], &["consumer"]).groups.is_empty());
}

#[test]
fn describe_of_groups_that_are_not_consumer_groups() {
    let mut h = h();
    let d = describe(&mut h);
    assert_eq!(d.error_code, ErrorCode::GroupIdNotFound.code());
    assert_eq!(d.error_message.as_deref(), Some("Group cg not found."));
    let t = h.send(&GroupRequest::ConsumerGroupDescribe(Req::new(
        0,
        ConsumerGroupDescribeRequest {
            group_ids: vec!["".into()],
            ..Default::default()
        },
    )));
    match h.answers.get(&t) {
        Some(GroupResponse::ConsumerGroupDescribe(r)) => {
            assert_eq!(r.groups[0].error_code, ErrorCode::InvalidGroupId.code())
        }
        other => panic!("{other:?}"),
    }
}

// A topic that grows bumps the group epoch at the next heartbeat; the new partitions are
// assigned.
#[test]
fn new_partitions_reach_the_group_at_its_next_heartbeat() {
    let mut h = h();
    hb(&mut h, &join("m1", &["foo"]));
    h.c.set_topic_metadata([("foo", FOO, 8), ("bar", BAR, 3)]);
    let r = hb(&mut h, &beat("m1", 2, None));
    assert_eq!(r.member_epoch, 3);
    assert_eq!(
        assigned(&r),
        Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5, 6, 7])]))
    );
    // A topic the group does not subscribe to changes nothing.
    h.c.set_topic_metadata([("foo", FOO, 8), ("bar", BAR, 4)]);
    let r = hb(&mut h, &beat("m1", 3, None));
    assert_eq!(r.member_epoch, 3);
}

// group.coordinator.rebalance.protocols without `consumer`: UNSUPPORTED_VERSION.
#[test]
fn the_consumer_protocol_can_be_disabled() {
    let mut c = config();
    c.set_text("group.coordinator.rebalance.protocols", "classic")
        .unwrap();
    let mut h = H::with(c);
    let r = hb(&mut h, &join("m1", &["foo"]));
    assert_eq!(error(&r), ErrorCode::UnsupportedVersion);
}

fn join_regex(member: &str, regex: &str) -> Hb {
    Hb {
        member: member.into(),
        epoch: 0,
        rebalance: 30_000,
        regex: Some(regex.into()),
        owned: Some(vec![]),
        ..Default::default()
    }
}

// Regex subscriptions (§4): resolved against the topics with a full match, written as record
// type 16 before the epoch bump, followed as topics appear, tombstoned with their last user,
// and replayed at load. A regex new to the group is resolved at the group's next heartbeat, as
// Kafka resolves it off the heartbeat path: the member joins with nothing from it.
#[test]
fn a_regex_subscription_follows_the_topics() {
    let mut h = h();
    let r = hb(&mut h, &join_regex("m1", "fo.*"));
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, 1));
    assert_eq!(assigned(&r), Some(Assignment::new()));
    assert!(!kinds(&records(&h, 0)).contains(&"Regex".to_string()));
    let n = h.written.len();
    let r = hb(&mut h, &beat("m1", r.member_epoch, None));
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, 2));
    assert_eq!(assigned(&r), Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5])])));
    let recs = records(&h, n);
    assert_eq!(kinds(&recs)[..2], ["Regex", "GroupMetadata"]);
    match &recs[0] {
        R::RegularExpression {
            regex,
            value: Some(v),
            ..
        } => assert_eq!(
            (regex.as_str(), v.topics.clone()),
            ("fo.*", vec!["foo".to_string()])
        ),
        other => panic!("{other:?}"),
    }
    // A full match: "o" alone matches nothing, so a second member with it gets nothing.
    let r2 = hb(&mut h, &join_regex("m2", "o"));
    assert_eq!(
        (error(&r2), assigned(&r2)),
        (ErrorCode::None, Some(Assignment::new()))
    );
    // m1's heartbeat resolves "o" to nothing: no epoch bump.
    let r = hb(&mut h, &beat("m1", r.member_epoch, None));
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, 2));
    assert_eq!(describe(&mut h).group_epoch, 2);
    // A new topic the regex matches reaches the group at the next heartbeat.
    const FOOD: TopicId = [3; 16];
    h.c.set_topic_metadata([("foo", FOO, 6), ("bar", BAR, 3), ("food", FOOD, 2)]);
    let r = hb(&mut h, &beat("m1", r.member_epoch, None));
    assert_eq!(r.member_epoch, 3);
    let got = assigned(&r).unwrap();
    assert!(got.contains(&FOOD, 0) && got.contains(&FOOD, 1), "{got:?}");
    assert_eq!(
        describe(&mut h).members[0]
            .subscribed_topic_regex
            .as_deref(),
        Some("fo.*")
    );
    // A restart brings the resolutions back.
    let before = describe(&mut h);
    let mut by_partition: BTreeMap<i32, Vec<u8>> = BTreeMap::new();
    for (p, b) in &h.written {
        by_partition.entry(*p).or_default().extend_from_slice(b);
    }
    let mut r2 = h_at(h.now);
    r2.c.set_topic_metadata([("foo", FOO, 6), ("bar", BAR, 3), ("food", FOOD, 2)]);
    for (p, data) in &by_partition {
        r2.c.load(*p, data, true).unwrap();
    }
    assert_eq!(describe(&mut r2), before);
    let epoch = before.group_epoch;
    let x = hb(&mut r2, &beat("m1", before.members[0].member_epoch, None));
    assert_eq!(error(&x), ErrorCode::None);
    assert_eq!(
        describe(&mut r2).group_epoch,
        epoch,
        "nothing changed: no bump"
    );
    // The last user of a regex leaves: its tombstone comes before the epoch bump.
    let n = h.written.len();
    hb(&mut h, &beat("m2", -1, None));
    assert_eq!(
        kinds(&records(&h, n)),
        [
            "CurrentAssignment-",
            "TargetMember-",
            "MemberMetadata-",
            "Regex-",
            "GroupMetadata"
        ]
    );
}

#[test]
fn an_invalid_regex_is_refused() {
    let mut h = h();
    let r = hb(&mut h, &join_regex("m1", "(foo"));
    assert_eq!(error(&r), ErrorCode::InvalidRegularExpression);
    assert!(h.written.is_empty());
    // Names and a regex together (librdkafka sends both): the names' topics at once, the
    // regex's at the next heartbeat (librdkafka's 0045 resubscribe_with_regex counts on it).
    let mut j = join_regex("m1", "ba.*");
    j.topics = Some(vec!["foo".into()]);
    let r = hb(&mut h, &j);
    assert_eq!(assigned(&r), Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5])])));
    let r = hb(&mut h, &beat("m1", r.member_epoch, assigned(&r).as_ref()));
    assert_eq!(
        (r.member_epoch, assigned(&r)),
        (
            3,
            Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5]), (BAR, &[0, 1, 2])]))
        )
    );
    // Dropping the regex bumps the epoch and revokes its topics (KAFKA-19891, KAFKA-19431).
    let mut b = beat("m1", r.member_epoch, Some(&assigned(&r).unwrap()));
    b.regex = Some(String::new());
    let x = hb(&mut h, &b);
    assert_eq!(x.member_epoch, r.member_epoch, "must revoke first");
    assert_eq!(assigned(&x), Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5])])));
    assert_eq!(describe(&mut h).group_epoch, 4);
}

// testConsumerGroupTransactionalOffsetCommit, ...WithUnknownMemberId and ...WithStaleMemberEpoch
// (Kafka's ConsumerGroup.validateOffsetCommit, transactional): a member commits at its epoch
// in its producer's transaction; an unknown member is UNKNOWN_MEMBER_ID; a stale epoch is
// ILLEGAL_GENERATION before TxnOffsetCommit v6 (Kafka maps STALE_MEMBER_EPOCH). A commit
// naming no member is accepted; older epochs are checked against the partitions' assignment
// epochs as OffsetCommit's are (KIP-1251).
#[test]
fn consumer_group_transactional_offset_commit() {
    let mut h = h();
    let r = hb(&mut h, &join("m1", &["foo"]));
    let (epoch, all) = (r.member_epoch, assigned(&r).unwrap());
    let p = all.get(&FOO)[0];
    let commit = |h: &mut H, member: &str, epoch: i32| {
        let t = h.txn_commit_full(3, G, 9, member, None, epoch, &[("foo", p, 100, None)]);
        h.txn_errors(t)[0]
    };
    assert_eq!(commit(&mut h, "m1", epoch), ErrorCode::None);
    assert_eq!(commit(&mut h, "nobody", epoch), ErrorCode::UnknownMemberId);
    assert_eq!(
        commit(&mut h, "m1", epoch + 100),
        ErrorCode::IllegalGeneration
    );
    assert_eq!(commit(&mut h, "m1", 0), ErrorCode::IllegalGeneration);
    assert_eq!(commit(&mut h, "", -1), ErrorCode::None);
    // Pending until the marker of producer 9, as in a classic group.
    let fetch = |h: &mut H| {
        let g = h.fetch_in(G, Some(&[("foo", &[p])]), true);
        let x = &g.topics[0].partitions[0];
        (x.committed_offset, x.error())
    };
    assert_eq!(fetch(&mut h), (-1, ErrorCode::UnstableOffsetCommit));
    let effects = h.c.end_transaction(h.now, h.c.partition_for(G), 9, true);
    h.apply(effects);
    assert_eq!(fetch(&mut h), (100, ErrorCode::None));
    // testConsumerGroupTransactionalOffsetCommitWithUnknownGroupId: a generation for a group
    // that does not exist is ILLEGAL_GENERATION.
    let t = h.txn_commit_full(3, "nope", 9, "m1", None, 10, &[("foo", 0, 1, None)]);
    assert_eq!(h.txn_errors(t), [ErrorCode::IllegalGeneration]);
}
