//! Migration between classic and consumer groups (reference §8): the online upgrade when a
//! consumer-protocol member joins a classic group, classic members served inside a consumer
//! group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), and the online downgrade when the last
//! consumer-protocol member leaves. Named after Kafka's GroupMetadataManagerTest cases (§11,
//! items 41-44).

use super::*;
use crate::assignors::consumer_protocol::{
    decode_assignment, encode_assignment, encode_subscription,
};
use crate::assignors::{Assignment as Wire, Subscription, TopicPartition};
use crate::group::classic::state::GroupState;

/// subscription is a ConsumerProtocol v3 subscription to `topics`, owning `owned`.
fn subscription(topics: &[&str], owned: &[(&str, i32)]) -> Vec<u8> {
    let mut s = Subscription::new(topics.iter().copied());
    s.owned_partitions = owned
        .iter()
        .map(|(t, p)| TopicPartition::new(*t, *p))
        .collect();
    encode_subscription(&s, 3).unwrap()
}

/// wire_assignment is a ConsumerProtocol v3 assignment of `partitions`.
fn wire_assignment(partitions: &[(&str, i32)], user_data: Option<&[u8]>) -> Vec<u8> {
    encode_assignment(
        &Wire {
            partitions: partitions
                .iter()
                .map(|(t, p)| TopicPartition::new(*t, *p))
                .collect(),
            user_data: user_data.map(<[u8]>::to_vec),
        },
        3,
    )
    .unwrap()
}

/// partitions_of reads a SyncGroup assignment back as (topic, partition) pairs.
fn partitions_of(bytes: &[u8]) -> Vec<(String, i32)> {
    if bytes.is_empty() {
        return Vec::new();
    }
    let (a, _) = decode_assignment(bytes).unwrap();
    let mut out: Vec<(String, i32)> = a
        .partitions
        .iter()
        .map(|tp| (tp.topic.to_string(), tp.partition))
        .collect();
    out.sort();
    out
}

fn classic_join(member: &str, topics: &[&str], owned: &[(&str, i32)]) -> Join {
    Join::new(member)
        .group(G)
        .v(6)
        .protocols(&[("range", subscription(topics, owned).as_slice())])
}

/// classic_group makes a Stable classic group of two consumers on foo, the leader holding
/// foo-0..2 and the follower foo-3..5; returns their ids and the generation.
fn classic_group(h: &mut H) -> (String, String, i32) {
    let a = h.join(&classic_join("", &["foo"], &[]).v(3));
    let b = h.join(&classic_join("", &["foo"], &[]).v(3));
    h.advance(INITIAL_DELAY);
    h.advance(INITIAL_DELAY);
    let (ra, rb) = (h.join_response(a).clone(), h.join_response(b).clone());
    let gen = ra.generation_id;
    let (leader, follower) = if ra.leader == ra.member_id {
        (ra.member_id.to_string(), rb.member_id.to_string())
    } else {
        (rb.member_id.to_string(), ra.member_id.to_string())
    };
    let la = wire_assignment(&[("foo", 0), ("foo", 1), ("foo", 2)], None);
    let fa = wire_assignment(&[("foo", 3), ("foo", 4), ("foo", 5)], None);
    let s1 = csync(
        h,
        gen,
        &leader,
        &[(&leader, la.as_slice()), (&follower, fa.as_slice())],
    );
    let s2 = csync(h, gen, &follower, &[]);
    assert_eq!(
        (h.sync_error(s1), h.sync_error(s2)),
        (ErrorCode::None, ErrorCode::None)
    );
    assert_eq!(h.c.group_state(G), Some(GroupState::Stable));
    (leader, follower, gen)
}

fn csync(h: &mut H, generation: i32, member: &str, assignments: &[(&str, &[u8])]) -> Token {
    h.sync_full(3, G, generation, member, None, (None, None), assignments)
}

fn member_types(h: &mut H) -> BTreeMap<String, i8> {
    describe(h)
        .members
        .iter()
        .map(|m| (m.member_id.to_string(), m.member_type))
        .collect()
}

fn sync_in(h: &mut H, generation: i32, member: &str) -> Token {
    h.sync_full(
        5,
        G,
        generation,
        member,
        None,
        (Some("consumer"), Some("range")),
        &[],
    )
}

fn heartbeat(h: &mut H, member: &str, generation: i32) -> ErrorCode {
    h.heartbeat_in(G, member, None, generation)
}

// testConsumerGroupHeartbeatWithStableClassicGroup: a consumer-protocol member joining a Stable
// classic group converts it; the classic members keep their partitions at the classic
// generation, and the records are written in Kafka's order after the classic tombstone.
#[test]
fn a_consumer_member_upgrades_a_stable_classic_group() {
    let mut h = h();
    let (leader, follower, gen) = classic_group(&mut h);
    let from = h.written.len();
    let r = hb(&mut h, &join("m3", &["foo"]));
    assert_eq!(error(&r), ErrorCode::None);
    // The new member waits: every partition is still held by a classic member.
    assert_eq!(r.member_epoch, gen + 1);
    assert_eq!(assigned(&r), Some(Assignment::new()));
    let recs = records(&h, from);
    assert_eq!(
        kinds(&recs)[..8],
        [
            "MemberMetadata",
            "MemberMetadata",
            "GroupMetadata",
            "TargetMember",
            "TargetMember",
            "TargetMetadata",
            "CurrentAssignment",
            "CurrentAssignment",
        ]
    );
    assert!(matches!(recs[2], R::Metadata { value: Some((e, _)), .. } if e == gen));
    assert!(matches!(recs[5], R::TargetAssignmentMetadata { value: Some((e, 0)), .. } if e == gen));
    // The classic GroupMetadata (type 2) is tombstoned first, in the same append.
    let key = crate::group::records::group_metadata_key(G).unwrap();
    let mut tombstoned = false;
    for (_, batch) in &h.written[from..] {
        for b in decode_batches(batch, &DecodeOptions::default()).unwrap() {
            for rec in b.records {
                if rec.key.as_deref() == Some(key.as_slice()) {
                    assert!(rec.value.is_none());
                    tombstoned = true;
                }
            }
        }
    }
    assert!(tombstoned);
    assert_eq!(h.list(&[], &["consumer"]).groups.len(), 1);
    assert_eq!(h.list(&[], &["classic"]).groups.len(), 0);
    let d = describe(&mut h);
    assert_eq!(d.group_epoch, gen + 1);
    let types = member_types(&mut h);
    assert_eq!(types[&leader], 0);
    assert_eq!(types[&follower], 0);
    assert_eq!(types["m3"], 1);
    // The classic members are told to rejoin; the follower, rejoining owning foo-3..5, gives
    // up what the new member is to get.
    assert_eq!(
        heartbeat(&mut h, &follower, gen),
        ErrorCode::RebalanceInProgress
    );
    let t = h.join(&classic_join(
        &follower,
        &["foo"],
        &[("foo", 3), ("foo", 4), ("foo", 5)],
    ));
    let jr = h.join_response(t).clone();
    assert_eq!(jr.error(), ErrorCode::None);
    assert_eq!(jr.protocol_type.as_deref(), Some("consumer"));
    assert_eq!(jr.protocol_name.as_deref(), Some("range"));
    assert!(jr.members.is_empty());
    assert_eq!(jr.member_id, follower);
    // Revocation first: the member stays at its epoch with what it keeps.
    let s = sync_in(&mut h, jr.generation_id, &follower);
    let kept = partitions_of(&h.sync_response(s).assignment);
    assert_eq!(h.sync_error(s), ErrorCode::None);
    assert!(kept.len() < 3, "the follower gives partitions up: {kept:?}");
    assert_single_owners(&mut h);
    // The classic members rejoin as told, each reporting what its last SyncGroup gave it, until
    // the new member has its share: no partition ever has two owners.
    let mut owned: BTreeMap<String, Vec<(String, i32)>> = BTreeMap::new();
    owned.insert(
        leader.clone(),
        (0..3).map(|p| ("foo".to_string(), p)).collect(),
    );
    owned.insert(follower.clone(), kept);
    let mut generations: BTreeMap<String, i32> = BTreeMap::new();
    generations.insert(leader.clone(), gen);
    generations.insert(follower.clone(), jr.generation_id);
    for _ in 0..4 {
        for m in [&leader, &follower] {
            if heartbeat(&mut h, m, generations[m]) == ErrorCode::RebalanceInProgress {
                let o: Vec<(&str, i32)> = owned[m].iter().map(|(t, p)| (t.as_str(), *p)).collect();
                let t = h.join(&classic_join(m, &["foo"], &o));
                let jr = h.join_response(t).clone();
                assert_eq!(jr.error(), ErrorCode::None);
                let s = sync_in(&mut h, jr.generation_id, m);
                assert_eq!(h.sync_error(s), ErrorCode::None);
                owned.insert(m.clone(), partitions_of(&h.sync_response(s).assignment));
                generations.insert(m.clone(), jr.generation_id);
            }
            assert_single_owners(&mut h);
        }
        let r = hb(&mut h, &beat("m3", gen + 1, Some(&Assignment::new())));
        assert_eq!(error(&r), ErrorCode::None);
        assert_single_owners(&mut h);
    }
    let d = describe(&mut h);
    let sizes: Vec<usize> = d
        .members
        .iter()
        .map(|m| {
            m.assignment
                .topic_partitions
                .iter()
                .map(|t| t.partitions.len())
                .sum()
        })
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), 6, "{d:?}");
    assert!(sizes.iter().all(|n| *n == 2), "{d:?}");
}

// testConsumerGroupHeartbeatWithCustomAssignorClassicGroup and the policy: groups that cannot
// be upgraded answer GROUP_ID_NOT_FOUND and stay classic.
#[test]
fn groups_that_cannot_upgrade_stay_classic() {
    // A custom assignor's user data would be lost.
    let mut h = h();
    let a = h.join(&classic_join("", &["foo"], &[]).v(3));
    h.advance(INITIAL_DELAY);
    let r = h.join_response(a).clone();
    let with_data = wire_assignment(&[("foo", 0)], Some(b"custom"));
    let s = csync(
        &mut h,
        r.generation_id,
        &r.member_id,
        &[(&r.member_id, with_data.as_slice())],
    );
    assert_eq!(h.sync_error(s), ErrorCode::None);
    let x = hb(&mut h, &join("m1", &["foo"]));
    assert_eq!(error(&x), ErrorCode::GroupIdNotFound);
    assert_eq!(
        x.error_message.as_deref(),
        Some(
            "Cannot upgrade classic group cg to consumer group because an unsupported custom \
             assignor is in use."
        )
    );
    assert_eq!(h.c.group_state(G), Some(GroupState::Stable));
    assert_eq!(
        heartbeat(&mut h, &r.member_id, r.generation_id),
        ErrorCode::None
    );

    // The policy forbids it.
    for policy in ["downgrade", "disabled"] {
        let mut config = config();
        config
            .set_text("group.consumer.migration.policy", policy)
            .unwrap();
        let mut h = H::with(config);
        h.c.set_topic_metadata([("foo", FOO, 6), ("bar", BAR, 3)]);
        classic_group(&mut h);
        let x = hb(&mut h, &join("m1", &["foo"]));
        assert_eq!(error(&x), ErrorCode::GroupIdNotFound, "{policy}");
        assert_eq!(
            x.error_message.as_deref(),
            Some(
                "Cannot upgrade classic group cg to consumer group because online upgrade is \
                 disabled."
            )
        );
    }

    // A group of another protocol type.
    let mut h = super::h();
    let a = h.join(&Join::new("").group(G).protocol_type("connect"));
    h.advance(INITIAL_DELAY);
    assert_eq!(h.join_response(a).error(), ErrorCode::None);
    let x = hb(&mut h, &join("m1", &["foo"]));
    assert_eq!(error(&x), ErrorCode::GroupIdNotFound);
}

// A classic group rebalancing when the upgrade comes: the parked JoinGroups are answered
// REBALANCE_IN_PROGRESS and the members rejoin through the bridge.
#[test]
fn parked_joins_learn_of_the_upgrade() {
    let mut h = h();
    let (leader, follower, gen) = classic_group(&mut h);
    // The leader rejoins (a new rebalance) and parks.
    let t = h.join(&classic_join(&leader, &["foo", "bar"], &[]));
    assert!(!h.answered(t));
    let r = hb(&mut h, &join("m3", &["foo"]));
    assert_eq!(error(&r), ErrorCode::None);
    assert_eq!(h.join_error(t), ErrorCode::RebalanceInProgress);
    assert_eq!(
        heartbeat(&mut h, &follower, gen),
        ErrorCode::RebalanceInProgress
    );
}

// testJoiningConsumerGroupWithNewDynamicMember and the SyncGroup / Heartbeat checks
// (testClassicGroupSyncToConsumerGroup*, testClassicGroupHeartbeatToConsumerGroup*).
#[test]
fn a_classic_member_joins_a_consumer_group() {
    let mut h = h();
    let r = hb(&mut h, &join("m1", &["foo"]));
    let all = assigned(&r).unwrap();
    // JoinGroup v4+ without a member id asks for one, as Kafka does.
    let t = h.join(&classic_join("", &["foo"], &[]));
    assert_eq!(h.join_error(t), ErrorCode::MemberIdRequired);
    let id = h.join_response(t).member_id.to_string();
    assert_eq!(id.len(), 22, "a UUID");
    // Protocols the group's classic members cannot all speak are refused (none yet here), and
    // a protocol type other than consumer always is.
    let t = h.join(&classic_join(&id, &["foo"], &[]).protocol_type("connect"));
    assert_eq!(h.join_error(t), ErrorCode::InconsistentGroupProtocol);
    let t = h.join(&classic_join(&id, &["foo"], &[]));
    let jr = h.join_response(t).clone();
    assert_eq!(jr.error(), ErrorCode::None);
    assert_eq!(jr.generation_id, 3);
    assert_eq!(jr.leader, "");
    // Nothing yet: m1 must revoke first.
    let s = sync_in(&mut h, 3, &id);
    assert_eq!(h.sync_error(s), ErrorCode::None);
    assert_eq!(partitions_of(&h.sync_response(s).assignment), vec![]);
    assert_eq!(member_types(&mut h)[&id], 0);
    // SyncGroup checks.
    let s = sync_in(&mut h, 2, &id);
    assert_eq!(h.sync_error(s), ErrorCode::IllegalGeneration);
    let s = sync_in(&mut h, 3, "nobody");
    assert_eq!(h.sync_error(s), ErrorCode::UnknownMemberId);
    let s = sync_in(&mut h, 2, "m1");
    assert_eq!(
        h.sync_error(s),
        ErrorCode::UnknownMemberId,
        "m1 is not classic"
    );
    let s = h.sync_full(
        5,
        G,
        3,
        &id,
        None,
        (Some("consumer"), Some("roundrobin")),
        &[],
    );
    assert_eq!(h.sync_error(s), ErrorCode::InconsistentGroupProtocol);
    // Heartbeat: nothing new until m1 releases.
    assert_eq!(heartbeat(&mut h, &id, 2), ErrorCode::IllegalGeneration);
    assert_eq!(heartbeat(&mut h, &id, 3), ErrorCode::None);
    // m1 revokes; now the classic member's partitions are free: it is told to rejoin.
    let r = hb(&mut h, &beat("m1", 2, Some(&all)));
    let kept = assigned(&r).unwrap();
    hb(&mut h, &beat("m1", 2, Some(&kept)));
    assert_eq!(heartbeat(&mut h, &id, 3), ErrorCode::RebalanceInProgress);
    let t = h.join(&classic_join(&id, &["foo"], &[]));
    let jr = h.join_response(t).clone();
    let s = sync_in(&mut h, jr.generation_id, &id);
    assert_eq!(partitions_of(&h.sync_response(s).assignment).len(), 3);
    assert_single_owners(&mut h);
    assert_eq!(heartbeat(&mut h, &id, jr.generation_id), ErrorCode::None);
    // A classic member's commits are checked against its epoch as a generation.
    let c = h.commit_full(8, G, &id, None, jr.generation_id, &[("foo", 0, 10, None)]);
    assert_eq!(h.commit_errors(c), vec![ErrorCode::None]);
    let c = h.commit_full(
        8,
        G,
        &id,
        None,
        jr.generation_id - 1,
        &[("foo", 0, 10, None)],
    );
    assert_eq!(h.commit_errors(c), vec![ErrorCode::IllegalGeneration]);
}

// A classic member that does not sync within its rebalance timeout, or stops heartbeating for
// its own session timeout, is fenced.
#[test]
fn classic_members_are_fenced_by_their_own_timeouts() {
    let mut h = h();
    hb(&mut h, &join("m1", &["foo"]));
    let t = h.join(
        &classic_join("c1", &["foo"], &[])
            .rebalance(20_000)
            .session(10_000),
    );
    assert_eq!(h.join_error(t), ErrorCode::None);
    // No SyncGroup within the rebalance timeout (20 s), though it heartbeats.
    for _ in 0..3 {
        h.advance(6_000);
        heartbeat(&mut h, "c1", 3);
        hb(&mut h, &beat("m1", 2, None));
    }
    h.advance(3_000);
    assert!(!member_types(&mut h).contains_key("c1"));

    // The session: 10 s of silence after a sync.
    let t = h.join(&classic_join("c2", &["foo"], &[]).session(10_000));
    let jr = h.join_response(t).clone();
    let s = sync_in(&mut h, jr.generation_id, "c2");
    assert_eq!(h.sync_error(s), ErrorCode::None);
    h.advance(9_000);
    hb(&mut h, &beat("m1", 2, None));
    assert!(member_types(&mut h).contains_key("c2"));
    h.advance(1_001);
    assert!(!member_types(&mut h).contains_key("c2"));
}

// testLastConsumerProtocolMemberLeavingConsumerGroup: when the last consumer-protocol member
// leaves, the group becomes a classic group again at the group epoch, with each classic member
// holding its target, and rebalances.
#[test]
fn the_last_consumer_member_leaving_downgrades_the_group() {
    let mut h = h();
    let (leader, follower, gen) = classic_group(&mut h);
    let r = hb(&mut h, &join("m3", &["foo"]));
    let epoch = r.member_epoch;
    let from = h.written.len();
    let x = hb(&mut h, &beat("m3", -1, None));
    assert_eq!(error(&x), ErrorCode::None);
    let recs = records(&h, from);
    let k = kinds(&recs);
    // Every consumer record tombstoned, the group's epoch last.
    assert!(k.iter().all(|k| k.ends_with('-')), "{k:?}");
    assert_eq!(k.last().map(String::as_str), Some("GroupMetadata-"));
    assert_eq!(h.list(&[], &["classic"]).groups.len(), 1);
    assert_eq!(h.c.group_state(G), Some(GroupState::PreparingRebalance));
    let d = h.describe(G);
    assert_eq!(d.protocol_type, "consumer");
    assert_eq!(d.members.len(), 2);
    // The classic group's generation is the group epoch; the members, still at the classic
    // generation they had before the upgrade, rejoin (Kafka answers the same).
    assert_eq!(
        heartbeat(&mut h, &leader, gen),
        ErrorCode::IllegalGeneration
    );
    assert_eq!(
        heartbeat(&mut h, &leader, epoch),
        ErrorCode::RebalanceInProgress
    );
    let generation = epoch + 1;
    let tl = h.join(&classic_join(&leader, &["foo"], &[]));
    let tf = h.join(&classic_join(&follower, &["foo"], &[]));
    let (jl, jf) = (h.join_response(tl).clone(), h.join_response(tf).clone());
    assert_eq!(jl.generation_id, generation);
    assert!(jl.generation_id > gen);
    let leader_id = jl.leader.to_string();
    assert!(leader_id == leader || leader_id == follower);
    assert_eq!(jf.error(), ErrorCode::None);
    let a = wire_assignment(&[("foo", 0)], None);
    let s = csync(
        &mut h,
        jl.generation_id,
        &leader_id,
        &[(&leader, a.as_slice()), (&follower, a.as_slice())],
    );
    assert_eq!(h.sync_error(s), ErrorCode::None);
}

// testLastStaticConsumerProtocolMemberReplacedByClassicProtocolMember: a classic static member
// replacing the last consumer-protocol member turns the group classic. Same subscription: the
// joining member takes the replaced one's partitions at the group epoch and the classic group
// is Stable; a changed subscription bumps the epoch, and the classic group rebalances.
#[test]
fn a_classic_static_member_replacing_the_last_consumer_member_downgrades_the_group() {
    for changed in [false, true] {
        let mut h = h();
        let mut j = join("s1", &["foo"]);
        j.instance = Some("i1".into());
        let r = hb(&mut h, &j);
        let all = assigned(&r).unwrap();
        let epoch = r.member_epoch;
        hb(&mut h, &beat("s1", epoch, Some(&all)));
        let from = h.written.len();
        let topics: &[&str] = if changed { &["foo", "bar"] } else { &["foo"] };
        let t = h.join(&classic_join("", topics, &[]).instance("i1"));
        let jr = h.join_response(t).clone();
        assert_eq!(jr.error(), ErrorCode::None);
        assert_eq!(jr.leader, "");
        let k = kinds(&records(&h, from));
        assert_eq!(
            k[..6],
            [
                "CurrentAssignment-",
                "TargetMember-",
                "MemberMetadata-",
                "MemberMetadata",
                "TargetMember",
                "CurrentAssignment"
            ]
        );
        // The consumer group's records end tombstoned, its epoch last; the classic group's
        // record follows.
        assert_eq!(k.last().map(String::as_str), Some("GroupMetadata-"));
        assert_eq!(h.list(&[], &["classic"]).groups.len(), 1, "{changed}");
        let d = h.describe(G);
        assert_eq!(d.members.len(), 1);
        assert_eq!(d.members[0].member_id, jr.member_id);
        if changed {
            // The epoch bump and no target: the classic group rebalances.
            assert!(k.contains(&"GroupMetadata".to_string()));
            assert!(!k[6..].contains(&"TargetMember".to_string()), "{k:?}");
            assert_eq!(h.c.group_state(G), Some(GroupState::PreparingRebalance));
            assert_eq!(jr.generation_id, 0);
        } else {
            assert_eq!(h.c.group_state(G), Some(GroupState::Stable));
            assert_eq!(jr.generation_id, epoch);
            let s = sync_in(&mut h, jr.generation_id, &jr.member_id);
            assert_eq!(h.sync_error(s), ErrorCode::None);
            let got = partitions_of(&h.sync_response(s).assignment);
            assert_eq!(got.len(), all.len());
            assert_eq!(heartbeat(&mut h, &jr.member_id, epoch), ErrorCode::None);
        }
        // The group survives a restart as the classic group it became, with its member.
        let mut r = restarted(&h);
        assert_eq!(r.list(&[], &["classic"]).groups.len(), 1);
        assert_eq!(r.describe(G).members[0].member_id, jr.member_id);
    }
}

// After a restart the upgraded group, its classic members and their protocols are back.
#[test]
fn an_upgraded_group_survives_a_restart() {
    let mut h = h();
    let (leader, _, gen) = classic_group(&mut h);
    hb(&mut h, &join("m3", &["foo"]));
    let before = describe(&mut h);
    let mut r = restarted(&h);
    assert_eq!(describe(&mut r), before);
    assert_eq!(r.list(&[], &["classic"]).groups.len(), 0);
    // The classic member carries on through the bridge.
    assert_eq!(
        heartbeat(&mut r, &leader, gen),
        ErrorCode::RebalanceInProgress
    );
    let t = r.join(&classic_join(
        &leader,
        &["foo"],
        &[("foo", 0), ("foo", 1), ("foo", 2)],
    ));
    assert_eq!(r.join_error(t), ErrorCode::None);
}

// expire_member on a classic member inside a consumer group: fenced as by its own session
// timeout (classic_members_are_fenced_by_their_own_timeouts); its heartbeat is then
// UNKNOWN_MEMBER_ID.
#[test]
fn expiring_a_classic_member_of_a_consumer_group_fences_it() {
    let mut h = h();
    hb(&mut h, &join("m1", &["foo"]));
    let t = h.join(&classic_join("c2", &["foo"], &[]).session(10_000));
    let jr = h.join_response(t).clone();
    let s = sync_in(&mut h, jr.generation_id, "c2");
    assert_eq!(h.sync_error(s), ErrorCode::None);
    let v = h.c.inspect_group(G).unwrap();
    assert_eq!(v.kind, crate::group::GroupKind::Consumer);
    let ids: Vec<&str> = v.members.iter().map(|m| m.member_id.as_str()).collect();
    assert_eq!(ids, ["c2", "m1"]);
    assert_eq!(v.members[0].subscription, ["foo"]);
    let effects = h.c.expire_member(h.now, G, Some("c2")).unwrap();
    h.apply(effects);
    assert!(!member_types(&mut h).contains_key("c2"));
    assert_eq!(
        heartbeat(&mut h, "c2", jr.generation_id),
        ErrorCode::UnknownMemberId
    );
}

// expire_member on the last consumer-protocol member of an upgraded group: the group turns
// classic again as when that member leaves
// (the_last_consumer_member_leaving_downgrades_the_group); expiring every member then empties
// it, whatever type each expiry leaves it.
#[test]
fn expiring_the_last_consumer_member_downgrades_the_group() {
    let mut h = h();
    let (leader, follower, _) = classic_group(&mut h);
    hb(&mut h, &join("m3", &["foo"]));
    assert_eq!(
        h.c.inspect_group(G).unwrap().kind,
        crate::group::GroupKind::Consumer
    );
    let effects = h.c.expire_member(h.now, G, Some("m3")).unwrap();
    h.apply(effects);
    let v = h.c.inspect_group(G).unwrap();
    assert_eq!(v.kind, crate::group::GroupKind::Classic);
    assert_eq!(v.state, "PreparingRebalance");
    let mut ids: Vec<String> = v.members.iter().map(|m| m.member_id.clone()).collect();
    ids.sort();
    let mut want = vec![leader, follower];
    want.sort();
    assert_eq!(ids, want);

    let mut h2 = self::h();
    classic_group(&mut h2);
    hb(&mut h2, &join("m3", &["foo"]));
    let effects = h2.c.expire_member(h2.now, G, Option::None).unwrap();
    h2.apply(effects);
    let v = h2.c.inspect_group(G).unwrap();
    assert_eq!((v.state, v.members.len()), ("Empty", 0));
}
