//! Share groups (KIP-932) through the coordinator: ShareGroupHeartbeat and ShareGroupDescribe,
//! the records they write, the share-state effects and reports, the session timer, the other
//! apis on a share group's id, and a reload. Named after Kafka 4.2's GroupMetadataManagerTest
//! (`testShareGroup...`) where one pins the behaviour; Kafka's tests use a mock assignor and
//! state already initialized where kgroup runs `simple` and the initialization round trip.

use std::borrow::Cow;

use super::records::{ShareGroupRecord as R, TopicPartitions};
use crate::errors::ErrorCode;
use crate::group::api::*;
use crate::group::assignors::{Assignment, TopicId};
use crate::group::tests::{Errors, H};
use crate::group::{Config, Coordinator, GroupConfig};
use crate::protocol::records::{decode_batches, DecodeOptions};

const FOO: TopicId = [1; 16];
const BAR: TopicId = [2; 16];
const G: &str = "fooup";
const M1: &str = "AAAAAAAAAAAAAAAAAAAAAA";
const M2: &str = "BBBBBBBBBBBBBBBBBBBBBB";

fn config() -> Config {
    crate::group::tests::config()
}

fn h() -> H {
    let mut h = H::with(config());
    h.c.set_topic_metadata([("foo", FOO, 6), ("bar", BAR, 3)]);
    h
}

fn hb_req<'a>(
    group: &'a str,
    member: &'a str,
    epoch: i32,
    topics: Option<&[&'a str]>,
) -> GroupRequest<'a> {
    GroupRequest::ShareGroupHeartbeat(Req {
        version: 1,
        client_id: "client",
        client_host: "/127.0.0.1",
        body: ShareGroupHeartbeatRequest {
            group_id: group.into(),
            member_id: member.into(),
            member_epoch: epoch,
            subscribed_topic_names: topics.map(|t| t.iter().map(|n| Cow::Borrowed(*n)).collect()),
            ..Default::default()
        },
    })
}

/// hb sends a ShareGroupHeartbeat and returns its answer (appends succeed at once).
fn hb(
    h: &mut H,
    member: &str,
    epoch: i32,
    topics: Option<&[&str]>,
) -> ShareGroupHeartbeatResponse<'static> {
    let t = h.send(&hb_req(G, member, epoch, topics));
    answer(h, t)
}

fn answer(h: &mut H, t: Token) -> ShareGroupHeartbeatResponse<'static> {
    match h.answers.remove(&t) {
        Some(GroupResponse::ShareGroupHeartbeat(r)) => r,
        other => panic!("token {t}: no ShareGroupHeartbeat response: {other:?}"),
    }
}

fn assigned(r: &ShareGroupHeartbeatResponse<'_>) -> Option<Assignment> {
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

/// records are the share group records written from the `from`-th append on.
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

fn kinds(recs: &[R]) -> Vec<String> {
    recs.iter()
        .map(|r| {
            let name = match r {
                R::MemberMetadata { .. } => "MemberMetadata",
                R::Metadata { .. } => "GroupEpoch",
                R::TargetAssignmentMetadata { .. } => "TargetAssignmentEpoch",
                R::TargetAssignmentMember { .. } => "TargetAssignment",
                R::CurrentMemberAssignment { .. } => "CurrentAssignment",
                R::StatePartitionMetadata { .. } => "StatePartitionMetadata",
            };
            if r.is_tombstone() {
                format!("{name}-")
            } else {
                name.to_string()
            }
        })
        .collect()
}

/// initialize reports every requested share state as initialized.
fn initialize(h: &mut H) {
    let effects = std::mem::take(&mut h.share_effects);
    for e in effects {
        if let ShareEffect::InitializeShareState {
            group_id,
            topic_id,
            partitions,
            ..
        } = e
        {
            let out =
                h.c.share_state_initialized(h.now, &group_id, topic_id, &partitions);
            h.apply(out);
        }
    }
}

fn part(h: &H) -> &super::part::SharePart {
    let g = h.c.slot_of(G).expect("the group");
    h.c.group(g).share.as_deref().expect("a share group")
}

// Kafka's testShareGroupMemberJoinsEmptyGroupWithAssignments, with `simple` and the real
// initialization (reference §2.4): the join writes Kafka's records in Kafka's order and asks
// for the subscribed partitions' share state; the partitions come with the next heartbeat.
#[test]
fn join_initializes_then_assigns_one_heartbeat_later() {
    let mut h = h();
    let r = hb(&mut h, M1, 0, Some(&["foo", "bar"]));
    assert_eq!(r.error(), ErrorCode::None);
    assert_eq!(r.member_id.as_deref(), Some(M1));
    assert_eq!(r.member_epoch, 1);
    assert_eq!(r.heartbeat_interval_ms, 5000);
    assert_eq!(assigned(&r), Some(Assignment::new()));
    let recs = records(&h, 0);
    assert_eq!(
        kinds(&recs),
        [
            "MemberMetadata",
            "GroupEpoch",
            "TargetAssignment",
            "TargetAssignmentEpoch",
            "CurrentAssignment",
            "StatePartitionMetadata"
        ]
    );
    let R::CurrentMemberAssignment { value: Some(c), .. } = &recs[4] else {
        panic!("{:?}", recs[4]);
    };
    assert_eq!(
        (c.member_epoch, c.previous_member_epoch, c.state),
        (1, 0, 0)
    );
    let R::StatePartitionMetadata { value: Some(s), .. } = &recs[5] else {
        panic!("{:?}", recs[5]);
    };
    assert_eq!(s.initializing[&FOO].partitions, (0..6).collect());
    assert_eq!(s.initializing[&BAR].partitions, (0..3).collect());
    assert_eq!(s.initializing[&FOO].name, "foo");
    assert!(s.initialized.is_empty());
    assert_eq!(
        h.share_effects,
        [
            ShareEffect::InitializeShareState {
                group_id: G.into(),
                topic_id: FOO,
                partitions: (0..6).collect(),
                state_epoch: 1,
            },
            ShareEffect::InitializeShareState {
                group_id: G.into(),
                topic_id: BAR,
                partitions: (0..3).collect(),
                state_epoch: 1,
            },
        ]
    );

    // Nothing changed yet: no assignment in the answer, nothing asked again.
    let at = h.written.len();
    let effects = std::mem::take(&mut h.share_effects);
    let r = hb(&mut h, M1, 1, None);
    assert_eq!((r.member_epoch, assigned(&r)), (1, None));
    assert!(h.share_effects.is_empty());
    assert_eq!(h.written.len(), at);

    // One report per topic, each a record 15 (Kafka reports them together, in one).
    h.share_effects = effects;
    initialize(&mut h);
    let recs = records(&h, at);
    assert_eq!(
        kinds(&recs),
        ["StatePartitionMetadata", "StatePartitionMetadata"]
    );
    let R::StatePartitionMetadata { value: Some(s), .. } = &recs[1] else {
        unreachable!()
    };
    assert!(s.initializing.is_empty());
    assert_eq!(s.initialized[&FOO].partitions, (0..6).collect());
    assert_eq!(s.initialized[&BAR].name, "bar");

    // initializedAssignmentPending: the next heartbeat bumps the epoch and assigns.
    let r = hb(&mut h, M1, 1, None);
    assert_eq!(r.member_epoch, 2);
    assert_eq!(
        assigned(&r),
        Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5]), (BAR, &[0, 1, 2])]))
    );
    let r = hb(&mut h, M1, 2, None);
    assert_eq!((r.member_epoch, assigned(&r)), (2, None));
}

fn stable_group(h: &mut H, members: &[&str]) {
    for m in members {
        hb(h, m, 0, Some(&["foo", "bar"]));
    }
    initialize(h);
    for m in members {
        let e = part(h).members[*m].member_epoch;
        hb(h, m, e, None);
    }
}

// GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid (reference §1.1).
#[test]
fn invalid_requests_are_refused_with_kafkas_messages() {
    let mut h = h();
    let long = "x".repeat(37);
    let cases: Vec<(GroupRequest<'_>, &str)> = vec![
        (
            hb_req(G, " ", 0, Some(&["foo"])),
            "MemberId can't be empty.",
        ),
        // KafkaApis.handleShareGroupHeartbeat's isMemberIdValid, checked first.
        (
            hb_req(G, "", 0, Some(&["foo"])),
            "Invalid member id in the request.",
        ),
        (
            hb_req(G, &long, 0, Some(&["foo"])),
            "Invalid member id in the request.",
        ),
        (
            hb_req(" ", M1, 0, Some(&["foo"])),
            "GroupId can't be empty.",
        ),
        (
            hb_req(G, M1, 0, None),
            "SubscribedTopicNames must be set in first request.",
        ),
        (
            hb_req(G, M1, 0, Some(&[])),
            "SubscribedTopicNames must be set in first request.",
        ),
        (hb_req(G, M1, -2, None), "MemberEpoch is invalid."),
    ];
    for (req, message) in cases {
        let t = h.send(&req);
        let r = answer(&mut h, t);
        assert_eq!(r.error(), ErrorCode::InvalidRequest);
        assert_eq!(r.error_message.as_deref(), Some(message));
        assert_eq!(r.member_id, None);
    }
    let mut req = hb_req(G, M1, 0, Some(&["foo"]));
    if let GroupRequest::ShareGroupHeartbeat(r) = &mut req {
        r.body.rack_id = Some("".into());
    }
    let t = h.send(&req);
    assert_eq!(
        answer(&mut h, t).error_message.as_deref(),
        Some("RackId can't be empty.")
    );
    assert!(h.c.slot_of(G).is_none());
}

// Kafka's testShareGroupUnknownGroupId and testShareGroupUnknownMemberIdJoins.
#[test]
fn unknown_group_and_unknown_member() {
    let mut h = h();
    let r = hb(&mut h, M1, 1, None);
    assert_eq!(r.error(), ErrorCode::GroupIdNotFound);
    assert_eq!(
        r.error_message.as_deref(),
        Some("Share group fooup not found.")
    );
    let r = hb(&mut h, M1, -1, None);
    assert_eq!(r.error(), ErrorCode::GroupIdNotFound);
    assert!(h.c.slot_of(G).is_none());
    hb(&mut h, M1, 0, Some(&["foo"]));
    let r = hb(&mut h, M2, 1, None);
    assert_eq!(r.error(), ErrorCode::UnknownMemberId);
    assert_eq!(
        r.error_message.as_deref(),
        Some("Member BBBBBBBBBBBBBBBBBBBBBB is not a member of group fooup.")
    );
    assert_eq!(hb(&mut h, M2, -1, None).error(), ErrorCode::UnknownMemberId);
}

// throwIfShareGroupMemberEpochIsInvalid: a greater epoch is fenced; a smaller one only if it
// is not the previous epoch (the answer carrying the bump may have been lost).
#[test]
fn member_epochs_are_fenced_as_kafka_fences_them() {
    let mut h = h();
    stable_group(&mut h, &[M1]);
    assert_eq!(part(&h).members[M1].member_epoch, 2);
    let r = hb(&mut h, M1, 3, None);
    assert_eq!(r.error(), ErrorCode::FencedMemberEpoch);
    assert!(r
        .error_message
        .as_deref()
        .unwrap()
        .starts_with("The share group member has a greater member epoch (3)"));
    let r = hb(&mut h, M1, 1, None);
    assert_eq!(r.error(), ErrorCode::None);
    assert_eq!(r.member_epoch, 2);
    // The previous epoch is still 1; 0 rejoins; anything else below is fenced.
    let mut h2 = self::h();
    stable_group(&mut h2, &[M1]);
    hb(&mut h2, M2, 0, Some(&["foo", "bar"]));
    let r = hb(&mut h2, M1, 2, None);
    assert_eq!(r.member_epoch, 3);
    assert_eq!(
        hb(&mut h2, M1, 1, None).error(),
        ErrorCode::FencedMemberEpoch
    );
}

// Kafka's testShareGroupMemberCanRejoinWithEpochZero: the member is kept, its assignment is
// sent again, no epoch bump.
#[test]
fn member_rejoins_with_epoch_zero() {
    let mut h = h();
    stable_group(&mut h, &[M1]);
    let before = part(&h).group_epoch;
    let r = hb(&mut h, M1, 0, Some(&["foo", "bar"]));
    assert_eq!(r.member_epoch, before);
    assert_eq!(
        assigned(&r),
        Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5]), (BAR, &[0, 1, 2])]))
    );
    assert_eq!(part(&h).group_epoch, before);
    assert_eq!(part(&h).members.len(), 1);
}

// Kafka's testShareGroupLeavingMemberBumpsGroupEpoch: the leaver's tombstones and a group
// epoch bump; the answer echoes epoch -1 with no interval and no assignment; the partitions go
// to the other member at its next heartbeat.
#[test]
fn leaving_member_bumps_group_epoch() {
    let mut h = h();
    stable_group(&mut h, &[M1, M2]);
    let epoch = part(&h).group_epoch;
    let at = h.written.len();
    let r = hb(&mut h, M2, -1, None);
    assert_eq!(r.error(), ErrorCode::None);
    assert_eq!(r.member_id.as_deref(), Some(M2));
    assert_eq!((r.member_epoch, r.heartbeat_interval_ms), (-1, 0));
    assert!(r.assignment.is_none());
    let recs = records(&h, at);
    assert_eq!(
        kinds(&recs),
        [
            "CurrentAssignment-",
            "TargetAssignment-",
            "MemberMetadata-",
            "GroupEpoch"
        ]
    );
    assert!(matches!(recs[3], R::Metadata { value: Some((e, _)), .. } if e == epoch + 1));
    // The leave left the target at the old assignment epoch, which no longer covers every
    // initialized partition: initializedAssignmentPending bumps the epoch once more, and the
    // new target gives the remaining member everything.
    let e1 = part(&h).members[M1].member_epoch;
    let r = hb(&mut h, M1, e1, None);
    assert_eq!(r.member_epoch, epoch + 2);
    assert_eq!(
        assigned(&r),
        Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5]), (BAR, &[0, 1, 2])]))
    );
}

// Two members share the topics with `simple`: every partition assigned, counts balanced.
#[test]
fn two_members_split_the_initialized_partitions() {
    let mut h = h();
    stable_group(&mut h, &[M1, M2]);
    let e1 = part(&h).members[M1].member_epoch;
    hb(&mut h, M1, e1, None);
    // As a harness inspects it.
    let v = h.c.inspect_group(G).unwrap();
    assert_eq!((v.kind.name(), v.state), ("share", "Stable"));
    assert_eq!(v.protocol.as_deref(), Some("simple"));
    assert_eq!(v.members.len(), 2);
    let total: usize = v
        .members
        .iter()
        .flat_map(|m| m.assignment.values())
        .map(Vec::len)
        .sum();
    assert_eq!(total, 9);
    let p = part(&h);
    let a1 = &p.members[M1].assigned_partitions;
    let a2 = &p.members[M2].assigned_partitions;
    assert_eq!(a1.len() + a2.len(), 9, "{a1:?} {a2:?}");
    assert!(a1.len().abs_diff(a2.len()) <= 1);
    assert_eq!(p.members[M1].member_epoch, p.assignment_epoch);
}

// Kafka's testShareGroupNewMemberIsRejectedWithMaximumMembersIsReached.
#[test]
fn new_member_is_rejected_when_the_group_is_full() {
    let mut c = config();
    c.set("group.share.max.size", 1).unwrap();
    let mut h = H::with(c);
    h.c.set_topic_metadata([("foo", FOO, 6), ("bar", BAR, 3)]);
    hb(&mut h, M1, 0, Some(&["foo"]));
    let r = hb(&mut h, M2, 0, Some(&["foo"]));
    assert_eq!(r.error(), ErrorCode::GroupMaxSizeReached);
    assert_eq!(
        r.error_message.as_deref(),
        Some("The share group has reached its maximum capacity of 1 members.")
    );
    // The member already in may rejoin.
    assert_eq!(hb(&mut h, M1, 0, Some(&["foo"])).error(), ErrorCode::None);
}

// Kafka's testSessionTimeoutExpirationForShareMember: a member silent for the session timeout
// is fenced, with a leave's records.
#[test]
fn session_timeout_fences_the_member() {
    let mut h = h();
    hb(&mut h, M1, 0, Some(&["foo"]));
    h.advance(44_999);
    assert!(part(&h).members.contains_key(M1));
    let at = h.written.len();
    h.advance(1);
    assert!(part(&h).members.is_empty());
    assert_eq!(
        kinds(&records(&h, at)),
        [
            "CurrentAssignment-",
            "TargetAssignment-",
            "MemberMetadata-",
            "GroupEpoch"
        ]
    );
    assert_eq!(hb(&mut h, M1, 1, None).error(), ErrorCode::UnknownMemberId);
}

// Kafka's testShareGroupDynamicConfigs: share.session.timeout.ms and
// share.heartbeat.interval.ms of the group override the broker's.
#[test]
fn group_configs_set_session_and_interval() {
    let mut h = h();
    let mut gc = GroupConfig::default();
    gc.set("share.session.timeout.ms", 50_000).unwrap();
    gc.set("share.heartbeat.interval.ms", 6_000).unwrap();
    h.c.set_group_config(G, gc);
    let r = hb(&mut h, M1, 0, Some(&["foo"]));
    assert_eq!(r.heartbeat_interval_ms, 6_000);
    h.advance(49_999);
    assert!(part(&h).members.contains_key(M1));
    h.advance(1);
    assert!(part(&h).members.is_empty());
}

// A failed append puts the group back and answers the mapped error; no share state is asked
// for (Kafka's timeline snapshot reverts the records; the persister call follows the write).
#[test]
fn failed_append_reverts_the_heartbeat() {
    let mut h = h();
    h.hold_appends = true;
    let t = h.send(&hb_req(G, M1, 0, Some(&["foo"])));
    h.finish_appends(ErrorCode::NotLeaderOrFollower);
    let r = answer(&mut h, t);
    assert_eq!(r.error(), ErrorCode::NotCoordinator);
    assert!(h.share_effects.is_empty());
    // The group the join made is gone with it.
    assert!(h.c.slot_of(G).is_none());
    // A member's heartbeat that fails leaves the group as it was.
    h.hold_appends = false;
    hb(&mut h, M1, 0, Some(&["foo"]));
    initialize(&mut h);
    let before = part(&h).clone();
    h.hold_appends = true;
    let t = h.send(&hb_req(G, M1, 1, None));
    h.finish_appends(ErrorCode::RequestTimedOut);
    assert_eq!(
        answer(&mut h, t).error(),
        ErrorCode::CoordinatorNotAvailable
    );
    assert!(part(&h).same_data(&before));
    // Its session still runs: it is fenced a session after its last good heartbeat.
    h.hold_appends = false;
    h.advance(45_000);
    assert!(part(&h).members.is_empty());
}

// GMM.subscribedTopicsChangeMap: partitions initializing for less than
// group.share.initialize.retry.interval.ms are not asked for again; older ones are
// (testShareGroupHeartbeatPersisterRequestWithInitializing). A failed initialization
// (uninitializeShareGroupState) makes the next heartbeat ask again.
#[test]
fn initializing_partitions_are_retried() {
    let mut h = h();
    hb(&mut h, M1, 0, Some(&["foo"]));
    assert_eq!(h.share_effects.len(), 1);
    h.share_effects.clear();
    h.advance(5_000);
    hb(&mut h, M1, 1, None);
    assert!(h.share_effects.is_empty());
    h.advance(25_000);
    hb(&mut h, M1, 1, None);
    assert_eq!(
        h.share_effects,
        [ShareEffect::InitializeShareState {
            group_id: G.into(),
            topic_id: FOO,
            partitions: (0..6).collect(),
            state_epoch: 1,
        }]
    );
    h.share_effects.clear();
    let out = h.c.share_state_initialize_failed(h.now, G, FOO, &[0, 1]);
    h.apply(out);
    assert_eq!(
        part(&h).init.as_ref().unwrap().initializing[&FOO]
            .0
            .partitions,
        (2..6).collect()
    );
    hb(&mut h, M1, 1, None);
    assert!(matches!(
        &h.share_effects[..],
        [ShareEffect::InitializeShareState { partitions, .. }] if partitions == &vec![0, 1]
    ));
    // A report for a group that is not there changes nothing.
    assert!(h
        .c
        .share_state_initialized(h.now, "nope", FOO, &[0])
        .is_empty());
}

// A topic's new partitions are initialized when the group next heartbeats
// (testShareGroupHeartbeatInitializeOnPartitionUpdate).
#[test]
fn new_partitions_are_initialized_and_assigned() {
    let mut h = h();
    stable_group(&mut h, &[M1]);
    h.c.set_topic_metadata([("foo", FOO, 8), ("bar", BAR, 3)]);
    let e = part(&h).members[M1].member_epoch;
    let r = hb(&mut h, M1, e, None);
    // The metadata hash changed: the epoch bumps, the new partitions are initialized.
    assert_eq!(r.member_epoch, e + 1);
    assert_eq!(
        h.share_effects,
        [ShareEffect::InitializeShareState {
            group_id: G.into(),
            topic_id: FOO,
            partitions: vec![6, 7],
            state_epoch: e + 1,
        }]
    );
    initialize(&mut h);
    let r = hb(&mut h, M1, e + 1, None);
    assert_eq!(r.member_epoch, e + 2);
    assert_eq!(
        assigned(&r),
        Some(parts(&[
            (FOO, &[0, 1, 2, 3, 4, 5, 6, 7]),
            (BAR, &[0, 1, 2])
        ]))
    );
}

// A subscribed topic deleted: the group's next heartbeat bumps the epoch (the metadata hash
// changed), takes its partitions away, and drops the topic from record 15 (Kafka's
// maybeCleanupShareGroupState); later heartbeats change nothing. Made again under a new id,
// the topic is initialized afresh.
#[test]
fn deleted_topic_leaves_the_group_state() {
    let mut h = h();
    stable_group(&mut h, &[M1]);
    h.c.set_topic_metadata([("bar", BAR, 3)]);
    let e = part(&h).members[M1].member_epoch;
    let at = h.written.len();
    let r = hb(&mut h, M1, e, None);
    assert_eq!(r.member_epoch, e + 1);
    assert_eq!(assigned(&r), Some(parts(&[(BAR, &[0, 1, 2])])));
    let recs = records(&h, at);
    let Some(R::StatePartitionMetadata { value: Some(s), .. }) = recs.last() else {
        panic!("{recs:?}")
    };
    assert_eq!(s.initialized.keys().collect::<Vec<_>>(), [&BAR]);
    assert!(h.share_effects.is_empty());
    let at = h.written.len();
    let r = hb(&mut h, M1, e + 1, None);
    assert_eq!((r.member_epoch, assigned(&r)), (e + 1, None));
    assert_eq!(h.written.len(), at);
    // "foo" again, under another id.
    const FOO2: TopicId = [9; 16];
    h.c.set_topic_metadata([("foo", FOO2, 2), ("bar", BAR, 3)]);
    hb(&mut h, M1, e + 1, None);
    assert!(matches!(
        &h.share_effects[..],
        [ShareEffect::InitializeShareState { topic_id, partitions, .. }]
            if *topic_id == FOO2 && partitions == &vec![0, 1]
    ));
}

fn describe(h: &mut H, ids: &[&str]) -> ShareGroupDescribeResponse<'static> {
    let req = GroupRequest::ShareGroupDescribe(Req::new(
        1,
        ShareGroupDescribeRequest {
            group_ids: ids.iter().map(|i| Cow::Borrowed(*i)).collect(),
            include_authorized_operations: false,
            ..Default::default()
        },
    ));
    let t = h.send(&req);
    match h.answers.remove(&t) {
        Some(GroupResponse::ShareGroupDescribe(r)) => r,
        other => panic!("{other:?}"),
    }
}

// Kafka's testShareGroupDescribeNoErrors and testShareGroupDescribeOnConsumerGroup.
#[test]
fn share_group_describe() {
    let mut h = h();
    stable_group(&mut h, &[M1]);
    let d = describe(&mut h, &[G, "missing"]);
    let g = &d.groups[0];
    assert_eq!(g.error_code, 0);
    assert_eq!(
        (&*g.group_state, g.group_epoch, g.assignment_epoch),
        ("Stable", 2, 2)
    );
    assert_eq!(g.assignor_name, "simple");
    assert_eq!(g.authorized_operations, i32::MIN);
    let m = &g.members[0];
    assert_eq!((&*m.member_id, m.member_epoch), (M1, 2));
    assert_eq!((&*m.client_id, &*m.client_host), ("client", "/127.0.0.1"));
    assert_eq!(m.subscribed_topic_names, ["bar", "foo"]);
    assert_eq!(m.assignment.topic_partitions.len(), 2);
    assert_eq!(m.assignment.topic_partitions[0].topic_name, "foo");
    let missing = &d.groups[1];
    assert_eq!(missing.error_code, ErrorCode::GroupIdNotFound.code());
    assert_eq!(
        missing.error_message.as_deref(),
        Some("Group missing not found.")
    );
    // A consumer group's id.
    let t = h.send(&GroupRequest::ConsumerGroupHeartbeat(Req::new(
        1,
        ConsumerGroupHeartbeatRequest {
            group_id: "cg".into(),
            member_id: "m".into(),
            member_epoch: 0,
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(vec!["foo".into()]),
            topic_partitions: Some(vec![]),
            ..Default::default()
        },
    )));
    assert!(h.answered(t));
    let d = describe(&mut h, &["cg"]);
    assert_eq!(d.groups[0].error_code, ErrorCode::GroupIdNotFound.code());
    assert_eq!(
        d.groups[0].error_message.as_deref(),
        Some("Group cg is not a share group.")
    );
    // Kafka's testShareGroupHeartbeatOnConsumerGroup.
    let t = h.send(&hb_req("cg", M1, 0, Some(&["foo"])));
    let r = answer(&mut h, t);
    assert_eq!(r.error(), ErrorCode::GroupIdNotFound);
    assert_eq!(
        r.error_message.as_deref(),
        Some("Group cg is not a share group.")
    );
}

// Kafka's testConsumerGroupHeartbeatOnShareGroup, testConsumerGroupDescribeOnShareGroup and
// testClassicGroupJoinOnShareGroup; an OffsetCommit to a share group (ShareGroup's
// validateOffsetCommit).
#[test]
fn other_group_types_apis_on_a_share_group() {
    let mut h = h();
    hb(&mut h, M1, 0, Some(&["foo"]));
    let t = h.send(&GroupRequest::ConsumerGroupHeartbeat(Req::new(
        1,
        ConsumerGroupHeartbeatRequest {
            group_id: G.into(),
            member_id: "m".into(),
            member_epoch: 0,
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(vec!["foo".into()]),
            topic_partitions: Some(vec![]),
            ..Default::default()
        },
    )));
    let Some(GroupResponse::ConsumerGroupHeartbeat(r)) = h.answers.remove(&t) else {
        panic!()
    };
    assert_eq!(r.error_code, ErrorCode::GroupIdNotFound.code());
    assert_eq!(
        r.error_message.as_deref(),
        Some("Group fooup is not a consumer group.")
    );
    let t = h.send(&GroupRequest::ConsumerGroupDescribe(Req::new(
        0,
        ConsumerGroupDescribeRequest {
            group_ids: vec![G.into()],
            ..Default::default()
        },
    )));
    let Some(GroupResponse::ConsumerGroupDescribe(r)) = h.answers.remove(&t) else {
        panic!()
    };
    assert_eq!(r.groups[0].error_code, ErrorCode::GroupIdNotFound.code());
    let t = h.send(&GroupRequest::JoinGroup(Req::new(
        9,
        JoinGroupRequest {
            group_id: G.into(),
            member_id: "".into(),
            session_timeout_ms: 30_000,
            rebalance_timeout_ms: 30_000,
            protocol_type: "consumer".into(),
            protocols: vec![JoinGroupRequestProtocol {
                name: "range".into(),
                metadata: Cow::Borrowed(b""),
                ..Default::default()
            }],
            ..Default::default()
        },
    )));
    let j = h.join_response(t);
    assert_eq!(j.error(), ErrorCode::InconsistentGroupProtocol);
    assert_eq!(j.member_id, "");
    let t = h.send(&GroupRequest::OffsetCommit(Req::new(
        9,
        OffsetCommitRequest {
            group_id: G.into(),
            generation_id_or_member_epoch: -1,
            topics: vec![OffsetCommitRequestTopic {
                name: "foo".into(),
                partitions: vec![OffsetCommitRequestPartition {
                    partition_index: 0,
                    committed_offset: 1,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        },
    )));
    let Some(GroupResponse::OffsetCommit(r)) = h.answers.remove(&t) else {
        panic!()
    };
    assert_eq!(
        r.topics[0].partitions[0].error(),
        ErrorCode::GroupIdNotFound
    );
    // OffsetFetch and OffsetDelete: ShareGroup.validateOffsetFetch / validateOffsetDelete.
    let t = h.send(&GroupRequest::OffsetFetch(Req::new(
        9,
        OffsetFetchRequest {
            groups: vec![crate::group::tests::fetch_group(G, None)],
            ..Default::default()
        },
    )));
    let Some(GroupResponse::OffsetFetch(r)) = h.answers.remove(&t) else {
        panic!()
    };
    assert_eq!(r.groups[0].error(), ErrorCode::GroupIdNotFound);
    let t = h.send(&GroupRequest::OffsetDelete(Req::new(
        0,
        OffsetDeleteRequest {
            group_id: G.into(),
            topics: vec![crate::group::tests::offset_delete_topic("foo", &[0])],
        },
    )));
    let Some(GroupResponse::OffsetDelete(r)) = h.answers.remove(&t) else {
        panic!()
    };
    assert_eq!(r.error(), ErrorCode::GroupIdNotFound);
    // Kafka's testClassicGroupSyncOnShareGroup and testClassicGroupLeaveOnShareGroup: the
    // member is not a classic member, UNKNOWN_MEMBER_ID (Kafka throws it for the whole
    // LeaveGroup; kgroup answers it per member, as for a group it does not know).
    let t = h.send(&GroupRequest::SyncGroup(Req::new(
        5,
        SyncGroupRequest {
            group_id: G.into(),
            generation_id: 1,
            member_id: M1.into(),
            protocol_type: Some("consumer".into()),
            protocol_name: Some("range".into()),
            ..Default::default()
        },
    )));
    let Some(GroupResponse::SyncGroup(r)) = h.answers.remove(&t) else {
        panic!()
    };
    assert_eq!(r.error(), ErrorCode::UnknownMemberId);
    let t = h.send(&GroupRequest::LeaveGroup(Req::new(
        5,
        LeaveGroupRequest {
            group_id: G.into(),
            members: vec![LeaveGroupRequestMember {
                member_id: M1.into(),
                ..Default::default()
            }],
            ..Default::default()
        },
    )));
    let Some(GroupResponse::LeaveGroup(r)) = h.answers.remove(&t) else {
        panic!()
    };
    assert_eq!(r.members[0].error(), ErrorCode::UnknownMemberId);
    // GMM.classicGroupHeartbeat: a group of neither classic nor consumer type.
    let t = h.send(&GroupRequest::Heartbeat(Req::new(
        4,
        HeartbeatRequest {
            group_id: G.into(),
            generation_id: 1,
            member_id: M1.into(),
            ..Default::default()
        },
    )));
    let Some(GroupResponse::Heartbeat(r)) = h.answers.remove(&t) else {
        panic!()
    };
    assert_eq!(r.error(), ErrorCode::UnknownMemberId);
    assert!(part(&h).members.contains_key(M1));
    h.c.check_invariants();
}

fn list(h: &mut H, types: &[&str], states: &[&str]) -> Vec<(String, String, String, String)> {
    let t = h.send(&GroupRequest::ListGroups(Req::new(
        5,
        ListGroupsRequest {
            states_filter: states.iter().map(|s| Cow::Borrowed(*s)).collect(),
            types_filter: types.iter().map(|s| Cow::Borrowed(*s)).collect(),
            ..Default::default()
        },
    )));
    let Some(GroupResponse::ListGroups(r)) = h.answers.remove(&t) else {
        panic!()
    };
    r.groups
        .iter()
        .map(|g| {
            (
                g.group_id.to_string(),
                g.protocol_type.to_string(),
                g.group_state.to_string(),
                g.group_type.to_string(),
            )
        })
        .collect()
}

fn describe_groups(h: &mut H, version: i16) -> DescribeGroupsResponseGroup<'static> {
    let t = h.send(&GroupRequest::DescribeGroups(Req::new(
        version,
        DescribeGroupsRequest {
            groups: vec![G.into()],
            ..Default::default()
        },
    )));
    let Some(GroupResponse::DescribeGroups(mut r)) = h.answers.remove(&t) else {
        panic!()
    };
    r.groups.remove(0)
}

fn delete(h: &mut H) -> ErrorCode {
    let t = h.send(&GroupRequest::DeleteGroups(Req::new(
        2,
        DeleteGroupsRequest {
            groups_names: vec![G.into()],
            ..Default::default()
        },
    )));
    let Some(GroupResponse::DeleteGroups(r)) = h.answers.remove(&t) else {
        panic!()
    };
    r.results[0].error()
}

// Kafka's testShareGroupStates (Empty / Stable), GMM.listGroups and describeGroups on a share
// group, testShareGroupDeleteTombstones (reference §2.6).
#[test]
fn list_describe_and_delete_a_share_group() {
    let mut h = h();
    stable_group(&mut h, &[M1]);
    let row = |state: &str| {
        vec![(
            G.to_string(),
            "share".to_string(),
            state.to_string(),
            "share".to_string(),
        )]
    };
    assert_eq!(list(&mut h, &[], &[]), row("Stable"));
    assert_eq!(list(&mut h, &["Share"], &["stable"]), row("Stable"));
    assert!(list(&mut h, &["consumer", "classic"], &[]).is_empty());
    assert!(list(&mut h, &["share"], &["empty"]).is_empty());
    let d = describe_groups(&mut h, 6);
    assert_eq!(d.group_state, "Dead");
    assert_eq!(d.error(), ErrorCode::GroupIdNotFound);
    assert_eq!(
        d.error_message.as_deref(),
        Some("Group fooup is not a classic group.")
    );
    let d = describe_groups(&mut h, 5);
    assert_eq!((&*d.group_state, d.error()), ("Dead", ErrorCode::None));

    assert_eq!(delete(&mut h), ErrorCode::NonEmptyGroup);
    hb(&mut h, M1, -1, None);
    assert_eq!(list(&mut h, &["share"], &[]), row("Empty"));
    let at = h.written.len();
    h.share_effects.clear();
    assert_eq!(delete(&mut h), ErrorCode::None);
    assert_eq!(
        h.share_effects,
        [
            ShareEffect::DeleteShareState {
                group_id: G.into(),
                topic_id: FOO,
                partitions: (0..6).collect(),
            },
            ShareEffect::DeleteShareState {
                group_id: G.into(),
                topic_id: BAR,
                partitions: (0..3).collect(),
            },
        ]
    );
    assert_eq!(
        kinds(&records(&h, at)),
        [
            "TargetAssignmentEpoch-",
            "StatePartitionMetadata-",
            "GroupEpoch-"
        ]
    );
    assert!(h.c.slot_of(G).is_none());
    assert_eq!(delete(&mut h), ErrorCode::GroupIdNotFound);
}

// An Empty share group never expires with the offsets' retention (Kafka's ShareGroup has no
// offsetExpirationCondition): it goes only when deleted.
#[test]
fn an_empty_share_group_survives_the_retention_check() {
    let mut h = h();
    hb(&mut h, M1, 0, Some(&["foo"]));
    hb(&mut h, M1, -1, None);
    h.advance(30 * 24 * 3600 * 1000);
    assert!(part(&h).members.is_empty());
    assert_eq!(part(&h).group_epoch, 2);
}

/// reload replays everything `h` wrote into a fresh coordinator with the same topics.
fn reload(h: &H) -> Coordinator {
    let mut c = Coordinator::with_seed(config(), 7);
    c.set_topic_metadata([("foo", FOO, 6), ("bar", BAR, 3)]);
    let mut log: std::collections::BTreeMap<i32, Vec<u8>> = Default::default();
    for (p, batch) in &h.written {
        log.entry(*p).or_default().extend(batch);
    }
    for (p, data) in &log {
        c.load(*p, data, true).unwrap();
    }
    c
}

// Kafka's testOnLoadedWithShareGroup and testShareGroupRecordsNoExceptionOnReplay: the records
// a run wrote, replayed into a fresh coordinator, give the same groups; the loaded members'
// sessions start at the next call (testOnLoadedSessionTimeoutExpirationForShareMember).
#[test]
fn records_replay_into_the_same_groups() {
    let mut h = h();
    stable_group(&mut h, &[M1, M2]);
    let e = part(&h).members[M1].member_epoch;
    hb(&mut h, M1, e, None);
    // A second group, left Empty, and a third with share state still initializing.
    for (g, m) in [("left", M1), ("pending", M2)] {
        let t = h.send(&hb_req(g, m, 0, Some(&["bar"])));
        answer(&mut h, t);
    }
    let t = h.send(&hb_req("left", M1, -1, None));
    answer(&mut h, t);
    let mut c = reload(&h);
    assert_eq!(c.group_ids(), h.c.group_ids());
    for id in h.c.group_ids() {
        let a =
            h.c.group(h.c.slot_of(&id).unwrap())
                .share
                .as_deref()
                .unwrap();
        let b = c.group(c.slot_of(&id).unwrap()).share.as_deref().unwrap();
        assert!(a.same_data(b), "{id}: {a:#?}\n{b:#?}");
    }
    let pending = c
        .group(c.slot_of("pending").unwrap())
        .share
        .as_deref()
        .unwrap();
    let init = pending.init.as_ref().unwrap();
    assert_eq!(
        init.initializing[&BAR].0,
        TopicPartitions {
            name: "bar".into(),
            partitions: (0..3).collect()
        }
    );
    // Sessions start at the next call; silent members are fenced a session later.
    c.tick(1_000_000);
    c.check_invariants();
    let effects = c.tick(1_000_000 + 45_000);
    assert!(effects.iter().any(|e| matches!(e, Effect::Append { .. })));
    let g = c.group(c.slot_of(G).unwrap()).share.as_deref().unwrap();
    assert!(g.members.is_empty());
}

/// frame reads a captured frame of `tests/protocol/share_frames/`.
fn frame(path: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/protocol/share_frames");
    std::fs::read(dir.join(path)).expect("a captured frame")
}

// librdkafka's share consumer against Apache Kafka 4.4 (`share_frames/librdkafka`, recorded by
// tests/support/share_capture.py): its three ShareGroupHeartbeats, decoded from their frames,
// answered by kgroup's coordinator, written as frames, are Kafka's answers byte for byte. The
// group stood at epoch 1 with nothing initialized and a heartbeat interval of 1000 ms, as the
// answers show: the join gets epoch 2 and an empty assignment, the next (full) heartbeat epoch 3
// and the topic's one partition once its state is initialized, the last nothing new.
#[test]
fn librdkafkas_heartbeats_get_kafkas_answers() {
    const TOPIC: TopicId = [
        0x0c, 0xaa, 0xe3, 0x51, 0xe8, 0x7b, 0x41, 0xfd, 0xab, 0x14, 0x37, 0x05, 0x25, 0xa4, 0x54,
        0xad,
    ];
    let group = "share-rdk-group";
    let mut c = Coordinator::with_seed(config(), 1);
    c.set_topic_metadata([("share-java", TOPIC, 1)]);
    let mut gc = GroupConfig::default();
    gc.set("share.heartbeat.interval.ms", 1000).unwrap();
    c.set_group_config(group, gc);
    let existing = [
        R::Metadata {
            group: group.into(),
            value: Some((1, 0)),
        },
        R::TargetAssignmentMetadata {
            group: group.into(),
            value: Some((1, 0)),
        },
    ];
    let records = existing
        .iter()
        .map(|r| (r.key().unwrap(), r.value().unwrap()))
        .collect();
    let p = c.partition_for(group);
    c.load(p, &crate::coordinator::appends::batch(0, records), true)
        .unwrap();

    let mut now = 1_000;
    for i in 1..=3 {
        let request = frame(&format!(
            "librdkafka/ShareGroupHeartbeat-v1-{i}.request.bin"
        ));
        let kafka = frame(&format!(
            "librdkafka/ShareGroupHeartbeat-v1-{i}.response.bin"
        ));
        let (header, req) = crate::group::requests::decode(&request, "/127.0.0.1").unwrap();
        let mut effects = c.handle(now, 1, &req);
        let mut response = None;
        while let Some(e) = effects.pop() {
            match e {
                Effect::Respond { response: r, .. } => response = Some(r),
                Effect::Append { token, .. } => {
                    effects.extend(c.appended(now, token, ErrorCode::None).unwrap())
                }
                Effect::Other(ShareEffect::InitializeShareState {
                    group_id,
                    topic_id,
                    partitions,
                    ..
                }) => {
                    effects.extend(c.share_state_initialized(now, &group_id, topic_id, &partitions))
                }
                Effect::Other(other) => panic!("{other:?}"),
            }
        }
        let mut ours = Vec::new();
        crate::group::responses::write_frame(
            &response.expect("an answer"),
            header.version,
            header.correlation_id,
            &mut ours,
        )
        .unwrap();
        // Ours has the size prefix; the captured frame does not.
        assert_eq!(ours[4..], kafka[..], "heartbeat {i}");
        now += 1_000;
    }
}

// Random runs of joins, heartbeats (some with the previous epoch, as when an answer is lost),
// leaves, silences, share-state reports and failed appends: after every step the group holds
// together (epochs ordered, members reconciled to the target epoch own initialized
// partitions of their topics only), and the records written rebuild the same group.
#[test]
fn random_runs_hold_together_and_replay() {
    let members = [
        "m0000000000000000000aa",
        "m1111111111111111111bb",
        "m2222222222222222222cc",
    ];
    for seed in 0..40u64 {
        let mut rng = crate::rng::Rng::new(Some(seed));
        let mut below = |n: u64| rng.next_u64() % n;
        let mut h = h();
        let mut epochs: std::collections::BTreeMap<&str, i32> = Default::default();
        for _ in 0..60 {
            let m = members[below(3) as usize];
            match below(7) {
                0 => {
                    let topics: &[&str] = if below(2) == 0 {
                        &["foo"]
                    } else {
                        &["foo", "bar"]
                    };
                    let r = hb(&mut h, m, 0, Some(topics));
                    if r.error_code == 0 {
                        epochs.insert(m, r.member_epoch);
                    }
                }
                1 | 2 => {
                    if let Some(e) = epochs.get(m).copied() {
                        let r = hb(&mut h, m, e, None);
                        match r.error() {
                            ErrorCode::None => {
                                epochs.insert(m, r.member_epoch);
                            }
                            ErrorCode::UnknownMemberId => {
                                epochs.remove(m);
                            }
                            other => panic!("seed {seed}: {other:?}"),
                        }
                    }
                }
                3 => {
                    if epochs.remove(m).is_some() {
                        let r = hb(&mut h, m, -1, None);
                        assert!(matches!(
                            r.error(),
                            ErrorCode::None | ErrorCode::UnknownMemberId
                        ));
                    }
                }
                4 => initialize(&mut h),
                5 => h.advance(below(30_000) as i64),
                _ => {
                    // One heartbeat whose append fails.
                    h.hold_appends = true;
                    let e = epochs.get(m).copied().unwrap_or(0);
                    let written = h.written.len();
                    let t = h.send(&hb_req(G, m, e, Some(&["foo"])));
                    h.finish_appends(ErrorCode::NotEnoughReplicas);
                    h.hold_appends = false;
                    // Its records never reached the log.
                    h.written.truncate(written);
                    let _ = answer(&mut h, t);
                }
            }
            h.c.check_invariants();
            let Some(g) = h.c.slot_of(G) else { continue };
            let p = h.c.group(g).share.as_deref().unwrap();
            assert!(p.assignment_epoch <= p.group_epoch, "seed {seed}");
            for m in p.members.values() {
                assert!(m.member_epoch <= p.group_epoch, "seed {seed}");
                let init = p.init.clone().unwrap_or_default();
                for (t, ps) in m.assigned_partitions.iter() {
                    for q in ps {
                        assert!(init.is_initialized(t, *q), "seed {seed}: {m:?}");
                    }
                }
                if m.member_epoch == p.assignment_epoch {
                    let target = p.targets.get(&m.member_id).cloned().unwrap_or_default();
                    for (t, ps) in m.assigned_partitions.iter() {
                        assert_eq!(ps, target.get(t), "seed {seed}");
                    }
                }
            }
        }
        let mut c = reload(&h);
        c.tick(h.now);
        c.check_invariants();
        assert_eq!(c.group_ids(), h.c.group_ids(), "seed {seed}");
        if let Some(g) = h.c.slot_of(G) {
            let a = h.c.group(g).share.as_deref().unwrap();
            let b = c.group(c.slot_of(G).unwrap()).share.as_deref().unwrap();
            assert!(
                a.same_data(b),
                "seed {seed}: {:?}\n{:?}",
                (
                    a.group_epoch,
                    a.metadata_hash,
                    a.assignment_epoch,
                    &a.members,
                    &a.targets
                ),
                (
                    b.group_epoch,
                    b.metadata_hash,
                    b.assignment_epoch,
                    &b.members,
                    &b.targets
                )
            );
        }
    }
}
